/*
 * Translation inside the engine. Error messages reach users (GUI dialogs, CLI),
 * so they are marked like every other visible string. The engine uses libc's
 * gettext directly (no GLib); the application binds the text domain.
 */
#pragma once
#include <libintl.h>

#define _(s) dgettext(GETTEXT_PACKAGE, s)
#define N_(s) (s)
