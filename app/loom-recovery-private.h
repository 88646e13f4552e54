/* LoomRecovery internals shared by loom-recovery.c (autosave) and
 * loom-recovery-files.c (the sidecar format, scan, restore). */
#pragma once

#include "loom-recovery.h"

G_BEGIN_DECLS

char *loom_recovery_copy_path(const char *directory, const char *id);
char *loom_recovery_sidecar_path(const char *directory, const char *id);
/* The sidecar's JSON text for a copy written now by this process. */
char *loom_recovery_sidecar_new(const char *title, const char *original_path, GDateTime *modified);
/* Any thread. */
void loom_recovery_delete_files(const char *sidecar_path, const char *copy_path);
/* Once @document is watched it keeps writing to the copy named @id. */
void loom_recovery_adopt(LoomDocument *document, const char *id);

G_END_DECLS
