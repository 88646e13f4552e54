/*
 * LoomRecoveryDialog: "Recover Unsaved Changes?" after a crash. Lists the
 * copies LoomRecovery found (title, original file, time) with Recover and
 * Discard; Later keeps them for the next start. A recovered network opens
 * as a dirty document, in the window that asked when it shows an untouched
 * new network, else in a new window.
 *
 * Actions (for each row's buttons, and tests): recovery.recover(s) and
 * recovery.discard(s), the parameter being a LoomRecoveryItem's id.
 * Responses: "later", "discard" (all), "recover" (all).
 */
#pragma once

#include <adwaita.h>

#include "loom-application.h"
#include "loom-recovery.h"

G_BEGIN_DECLS

#define LOOM_TYPE_RECOVERY_DIALOG (loom_recovery_dialog_get_type())
G_DECLARE_FINAL_TYPE(LoomRecoveryDialog, loom_recovery_dialog, LOOM, RECOVERY_DIALOG, AdwMessageDialog)

/* @items: LoomRecoveryItems (a reference is taken); @parent may be NULL. */
LoomRecoveryDialog *loom_recovery_dialog_new(LoomApplication *app, GtkWindow *parent, GPtrArray *items);

/*
 * Scans @app's recovery directory (without blocking) and, when a crash left
 * copies, presents the dialog over the active window; damaged files are
 * reported in a message that names them.
 */
void loom_recovery_dialog_check(LoomApplication *app);

G_END_DECLS
