/*
 * The undo model: every edit of a loom_net is a LoomCommand executed through
 * a LoomCommandStack. Commands know the net only through the engine's public
 * API; they know nothing of widgets.
 *
 *   LoomCommandStack *stack = loom_command_stack_new(net);   // net is borrowed
 *   g_signal_connect(stack, "changed", G_CALLBACK(on_changed), win);
 *   if (!loom_command_stack_push(stack, loom_command_new_place_layer(c, layer), &error))
 *     show_error(error);                 // nothing changed; the command is freed
 *   loom_command_stack_undo(stack, &error);
 *   loom_command_stack_mark_clean(stack); // after a save; "dirty" follows
 *
 * A command holds exactly what it needs to undo and redo: the layer it took
 * out of a slot, the layer as it was before a parameter edit (commands swap
 * whole layers, so weights come back bit-identical), the removed links and
 * the positions they had in the net's link list.
 *
 * Layer pointers in the net change when a command runs: views must re-read
 * the net on "changed" instead of keeping loom_layer pointers.
 */
#pragma once

#include <glib-object.h>
#include <loom/layer.h>
#include <loom/net.h>
#include <loom/settings.h>

G_BEGIN_DECLS

/* Engine failures surface in this domain; the code is the loom_status. */
#define LOOM_COMMAND_ERROR (loom_command_error_quark())
GQuark loom_command_error_quark(void);

typedef struct _LoomCommand LoomCommand;

/* Each constructor copies its arguments; NULL only for NULL/invalid input. */
/* Takes ownership of @layer (which must not be in a net). */
LoomCommand *loom_command_new_place_layer(loom_coord at, loom_layer *layer);
LoomCommand *loom_command_new_clear_slot(loom_coord at);
LoomCommand *loom_command_new_move_layer(loom_coord from, loom_coord to);
LoomCommand *loom_command_new_set_param(loom_coord at, int param_index, const loom_param_value *value);
/* A LOOM_PARAM_FLOATS parameter (a mask): @n floats, copied. */
LoomCommand *loom_command_new_set_floats(loom_coord at, int param_index, const float *values, int64_t n);
LoomCommand *loom_command_new_set_dtype(loom_coord at, loom_dtype dtype);
LoomCommand *loom_command_new_set_enabled(loom_coord at, gboolean enabled);
LoomCommand *loom_command_new_add_link(const loom_link *link);
LoomCommand *loom_command_new_remove_link(int link_index);
LoomCommand *loom_command_new_set_link_merge(int link_index, loom_merge merge);
/* Feed-forward or systolic execution (DESIGN.md §2); back to feed-forward is
 * refused while a feedback link exists, naming it. */
LoomCommand *loom_command_new_set_execution(loom_execution mode);
LoomCommand *loom_command_new_resize_grid(int depth, int rows, int cols, int layers_per_cell);
LoomCommand *loom_command_new_set_input_shape(const loom_shape *shape);

/*
 * What a document keeps for training beside its network (saved in the model
 * file's "training" section): the settings, and the state of the trainer
 * that made the current weights, so training resumes exactly where it was.
 */
typedef struct {
  loom_train_settings *settings; /* never NULL once a document has it */
  GBytes *state;                 /* loom_trainer_export_state bytes, or NULL */
  gint64 steps;                  /* updates that made the current weights */
} LoomTrainingExtras;

/*
 * The weights a training run produced (@trained has the document's layout),
 * with the trainer's @state after @steps updates, as one step: applying and
 * undoing both swap the float32 masters and the state with the document's.
 * The label counts @steps_run, the updates since the weights came from the
 * document ("Training: 1,200 steps"), unless @label (translated) is given.
 */
LoomCommand *loom_command_new_training_result(const loom_net *trained, GBytes *state, gint64 steps,
                                              gint64 steps_run, const char *label);
/* Marks a training result as a continuation. Pushed right after another
 * continuation — nothing in between, no redo history, and the state between
 * them not the saved one — the two become one undo step whose label counts
 * both runs: ten clicks on Step are one "Training: 10 steps". */
void loom_command_set_continues(LoomCommand *cmd);
/* New training settings (copied). */
LoomCommand *loom_command_new_set_training_settings(const loom_train_settings *settings);

void loom_command_free(LoomCommand *cmd);
/* Translated, for "Undo %s": "Place Layer", "Remove Link", ... */
const char *loom_command_get_label(const LoomCommand *cmd);

#define LOOM_TYPE_COMMAND_STACK (loom_command_stack_get_type())
G_DECLARE_FINAL_TYPE(LoomCommandStack, loom_command_stack, LOOM, COMMAND_STACK, GObject)

/* @net is borrowed and must outlive the stack (or be replaced with _reset). */
LoomCommandStack *loom_command_stack_new(loom_net *net);
loom_net *loom_command_stack_get_net(LoomCommandStack *self);
/* The training extras the training commands act on (borrowed; NULL: those
 * commands fail). */
void loom_command_stack_set_extras(LoomCommandStack *self, LoomTrainingExtras *extras);
/* Forgets all history, adopts @net and marks the new state clean. */
void loom_command_stack_reset(LoomCommandStack *self, loom_net *net);

/* Executes @cmd (always consumed) and, on success, makes it the newest undo
 * step, dropping the redo history. On failure the net is unchanged. */
gboolean loom_command_stack_push(LoomCommandStack *self, LoomCommand *cmd, GError **error);
gboolean loom_command_stack_undo(LoomCommandStack *self, GError **error);
gboolean loom_command_stack_redo(LoomCommandStack *self, GError **error);

gboolean loom_command_stack_get_can_undo(LoomCommandStack *self);
gboolean loom_command_stack_get_can_redo(LoomCommandStack *self);
/* The labels of the next undo / redo step, or NULL. */
const char *loom_command_stack_get_undo_label(LoomCommandStack *self);
const char *loom_command_stack_get_redo_label(LoomCommandStack *self);

/* The saved state is the current one: dirty = (index != clean index). */
void loom_command_stack_mark_clean(LoomCommandStack *self);
/* Changes with every push, undo, redo and reset (what the document holds),
 * not with marking it saved. */
guint64 loom_command_stack_get_revision(LoomCommandStack *self);
/* No state on the stack is the saved one (a recovered document): dirty
 * until the next mark_clean. */
void loom_command_stack_mark_unsaved(LoomCommandStack *self);
gboolean loom_command_stack_get_dirty(LoomCommandStack *self);

G_END_DECLS
