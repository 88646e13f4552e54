/* Internal to the command files: the training commands (loom-commands-training.c). */
#pragma once

#include "loom-commands.h"

G_BEGIN_DECLS

typedef struct _TrainingEdit TrainingEdit;

/* NULL when @trained cannot be copied. */
TrainingEdit *training_edit_new_result(const loom_net *trained, GBytes *state, gint64 steps);
TrainingEdit *training_edit_new_settings(const loom_train_settings *settings);
void training_edit_free(TrainingEdit *edit);
/* Swaps what the edit holds with the document's: applying and undoing are
 * the same operation. On failure nothing changed. */
int training_edit_swap(TrainingEdit *edit, loom_net *net, LoomTrainingExtras *extras, loom_error *err);

G_END_DECLS
