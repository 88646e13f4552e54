/*
 * LoomTrainingSession: trains a copy of a document's network on a worker
 * thread (DESIGN.md §6, docs/workbench.md "Training").
 *
 * The worker owns its copy of the network, the data and the trainer. The UI
 * posts commands (play, pause, step, reset, new settings); they take effect
 * between two steps. The worker publishes LoomTrainingSnapshots into a
 * one-slot mailbox (newest wins, at most 30 a second, and always when
 * training pauses or stops); loom_training_session_poll(), called at frame
 * time, takes the newest and emits "snapshot" on the main thread. No call
 * here waits for the worker, and the worker never touches a widget.
 * Disposing the session cancels the worker and joins it.
 */
#pragma once

#include <glib-object.h>
#include <loom/loom.h>

#include "loom-training-snapshot.h"

G_BEGIN_DECLS

#define LOOM_TYPE_TRAINING_SESSION (loom_training_session_get_type())
G_DECLARE_FINAL_TYPE(LoomTrainingSession, loom_training_session, LOOM, TRAINING_SESSION, GObject)

/* @datasets_dir: where the digits file lives (NULL: looked up). */
LoomTrainingSession *loom_training_session_new(const char *datasets_dir);

/*
 * Hands the worker a network to train (copied), its settings (copied) and
 * optionally the trainer state a checkpoint carried (@state, the steps it
 * counts in @steps): the worker makes the data, builds the trainer, imports
 * the state and publishes a PAUSED (or INVALID) snapshot. Training stops if
 * it ran.
 */
void loom_training_session_load(LoomTrainingSession *self, const loom_net *net, const loom_train_settings *settings,
                                GBytes *state, gint64 steps);
/* New hyperparameters: applied at the next step when the trainer can take
 * them live (learning rate, schedule, optimizer knobs, epochs, tween knobs);
 * otherwise training restarts from the current weights with a fresh
 * optimizer, and a RESTART event marks it. */
void loom_training_session_set_settings(LoomTrainingSession *self, const loom_train_settings *settings);

void loom_training_session_play(LoomTrainingSession *self);
void loom_training_session_pause(LoomTrainingSession *self);
void loom_training_session_step(LoomTrainingSession *self);       /* one mini-batch */
void loom_training_session_step_epoch(LoomTrainingSession *self); /* to the end of the epoch */
/* Draws the weights anew from @seed and starts the trainer over. */
void loom_training_session_reset(LoomTrainingSession *self, guint64 seed);
/* Asks for the activations of @at (NULL: none) in the snapshots. */
void loom_training_session_watch(LoomTrainingSession *self, const loom_coord *at);
/* Where the steps run: -1 the CPU (the default), else the Vulkan device of
 * that index (loom_gpu_list_devices). The trainer starts over there from the
 * current weights; what the device cannot train makes the state INVALID
 * with the slot or setting named (docs/gpu.md). */
void loom_training_session_set_device(LoomTrainingSession *self, int device);

/* Takes the newest snapshot, if any, and emits "snapshot" with it. Returns
 * TRUE when there was one. Never blocks on the worker. */
gboolean loom_training_session_poll(LoomTrainingSession *self);
/* The last snapshot "snapshot" was emitted with (NULL before the first). */
LoomTrainingSnapshot *loom_training_session_get_latest(LoomTrainingSession *self);
/* Property "state": from the latest snapshot, or RUNNING from the moment
 * play was posted (so the UI reacts at once). */
LoomTrainingState loom_training_session_get_state(LoomTrainingSession *self);
/* Whether the worker may still publish without a new command: training
 * runs, or a command posted has not been answered yet. The UI polls at
 * frame time only while busy. */
gboolean loom_training_session_get_busy(LoomTrainingSession *self);
/* Property "running": state == RUNNING. */
gboolean loom_training_session_get_running(LoomTrainingSession *self);

G_END_DECLS
