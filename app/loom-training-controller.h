/*
 * LoomTrainingController: keeps a document and its training worker in step
 * (docs/workbench.md, "Training"). It owns the LoomTrainingSession, polls
 * it at frame time while it is busy, loads the document into the worker,
 * brings trained weights back as undoable commands and keeps the newest
 * weights for Save and autosave. The window installs the actions and shows
 * what it reports.
 */
#pragma once

#include <gtk/gtk.h>

#include "loom-document.h"
#include "loom-training-session.h"

G_BEGIN_DECLS

#define LOOM_TYPE_TRAINING_CONTROLLER (loom_training_controller_get_type())
G_DECLARE_FINAL_TYPE(LoomTrainingController, loom_training_controller, LOOM, TRAINING_CONTROLLER, GObject)

/* @clock: the widget whose frame clock paces the polling; not referenced,
 * so its owner calls loom_training_controller_shutdown() before it goes. */
LoomTrainingController *loom_training_controller_new(GtkWidget *clock);
/* Stops polling, takes the live weights off the document and joins the
 * worker (closing the window cancels training cleanly). */
void loom_training_controller_shutdown(LoomTrainingController *self);

LoomTrainingSession *loom_training_controller_get_session(LoomTrainingController *self);
/* Another document (NULL: none): the worker loads it. */
void loom_training_controller_set_document(LoomTrainingController *self, LoomDocument *document);
/* The document changed: settings reach a running worker at its next step,
 * anything else reloads a paused one (the worker's own weights coming back
 * and saving reload nothing). */
void loom_training_controller_document_changed(LoomTrainingController *self);
/* While training runs the network is not edited. */
gboolean loom_training_controller_get_locked(LoomTrainingController *self);
/* The newest weights the worker published into the document (Save). */
void loom_training_controller_flush(LoomTrainingController *self);
/* The newest snapshot that carried weights, or NULL. */
LoomTrainingSnapshot *loom_training_controller_get_newest_weights(LoomTrainingController *self);

void loom_training_controller_play(LoomTrainingController *self);
void loom_training_controller_pause(LoomTrainingController *self);
void loom_training_controller_step(LoomTrainingController *self);
void loom_training_controller_step_epoch(LoomTrainingController *self);
/* Draws the weights anew from the document's training seed. */
void loom_training_controller_reset(LoomTrainingController *self);
/* -1: the CPU, else a Vulkan device index. */
void loom_training_controller_set_device(LoomTrainingController *self, int device);
/* The slot whose activations the snapshots carry (NULL: none). */
void loom_training_controller_watch(LoomTrainingController *self, const loom_coord *at);

G_END_DECLS
