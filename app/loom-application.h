/* LoomApplication: app-wide actions (about, quit) and window creation. */
#pragma once

#include <adwaita.h>

#include "loom-recovery.h"

G_BEGIN_DECLS

#define LOOM_TYPE_APPLICATION (loom_application_get_type())
G_DECLARE_FINAL_TYPE(LoomApplication, loom_application, LOOM, APPLICATION, AdwApplication)

LoomApplication *loom_application_new(void);

/* The application's settings (window state, recent files). */
GSettings *loom_application_get_settings(LoomApplication *self);

/* Autosave and crash recovery for every window's document. */
LoomRecovery *loom_application_get_recovery(LoomApplication *self);

/* Adds @uri to the front of the recent-files setting (at most ten kept). */
void loom_application_add_recent(LoomApplication *self, const char *uri);

G_END_DECLS
