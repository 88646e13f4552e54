/*
 * Translation inside the engine. Error messages reach users (GUI dialogs, CLI),
 * so they are marked like every other visible string. The engine uses libc's
 * gettext directly (no GLib); the application binds the text domain.
 */
#pragma once
#include <libintl.h>

#define _(s) dgettext(GETTEXT_PACKAGE, s)
#define N_(s) (s)
/* Messages with a count: call dngettext(GETTEXT_PACKAGE, "%lld row", "%lld rows",
 * n) directly. xgettext knows dngettext by default; a wrapper macro would need
 * its own --keyword in po/meson.build and tests/i18n/check-translation. */
