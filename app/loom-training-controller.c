/*
 * LoomTrainingController (docs/workbench.md, "Training"). The rules: while
 * training runs, the network cannot be edited (the window refuses every
 * command but new settings and turns the editing actions off); settings
 * changed while it runs reach the worker at the next step. When training
 * pauses, finishes or stops, its weights and trainer state come back into
 * the document as one undoable command; Save while it runs first takes the
 * newest weights the worker published. Any edit while paused reloads the
 * worker from the document.
 *
 * Signals: "snapshot" after the document has what the snapshot brought,
 * "stopped" once per stop with a message (the window shows it), "failed"
 * when the weights could not go into the document (a message).
 */
#include <glib/gi18n.h>

#include "loom-commands.h"
#include "loom-training-controller.h"

struct _LoomTrainingController {
  GObject parent_instance;

  GtkWidget *clock; /* not referenced: its owner shuts us down first */
  LoomDocument *document;
  LoomTrainingSession *session;
  guint tick;                           /* polls the session while it is busy */
  guint poll_idle;                      /* the poll, right after the frame */
  gboolean weights_pending;             /* the worker's weights differ from the document's */
  gboolean reset_pending;               /* ... because Reset drew them anew */
  gboolean run_played;                  /* ... and Play ran since (not only Step) */
  gboolean pushing_result;              /* the document changes by the worker's weights */
  guint64 alerted_serial;               /* the stop last announced */
  guint64 loaded_revision;              /* the document's revision the worker has */
  LoomTrainingSnapshot *newest_weights; /* the newest snapshot that carried weights */
};

G_DEFINE_FINAL_TYPE(LoomTrainingController, loom_training_controller, G_TYPE_OBJECT)

enum { SIGNAL_SNAPSHOT, SIGNAL_STOPPED, SIGNAL_FAILED, N_SIGNALS };
static guint signals[N_SIGNALS];

static gboolean poll_now(gpointer data) {
  LoomTrainingController *self = data;
  self->poll_idle = 0;
  loom_training_session_poll(self->session);
  return G_SOURCE_REMOVE;
}

static gboolean on_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
  LoomTrainingController *self = data;
  /* The snapshot is taken apart in a dispatch of its own right after this
   * frame's paint (above GTK's redraw priority, below events and timers),
   * so a frame's paint and a snapshot's handling never add up to one stall;
   * what it changes is drawn in the next frame. */
  if (!self->poll_idle) self->poll_idle = g_idle_add_full(G_PRIORITY_HIGH_IDLE + 10, poll_now, self, NULL);
  if (loom_training_session_get_busy(self->session)) return G_SOURCE_CONTINUE;
  self->tick = 0;
  return G_SOURCE_REMOVE;
}

/* The UI never waits on the worker: it looks into the mailbox each frame,
 * and only while the worker may have something to say. */
static void watch_session(LoomTrainingController *self) {
  if (!self->tick && self->clock) self->tick = gtk_widget_add_tick_callback(self->clock, on_tick, self, NULL);
}

static guint64 document_revision(LoomTrainingController *self) {
  return loom_command_stack_get_revision(loom_document_get_commands(self->document));
}

static void load_session(LoomTrainingController *self) {
  const LoomTrainingExtras *t = loom_document_get_training(self->document);
  loom_document_clear_live_training(self->document);
  self->loaded_revision = document_revision(self);
  loom_training_session_load(self->session, loom_document_get_net(self->document), t->settings, t->state, t->steps);
  self->weights_pending = FALSE;
  watch_session(self);
}

gboolean loom_training_controller_get_locked(LoomTrainingController *self) {
  g_return_val_if_fail(LOOM_IS_TRAINING_CONTROLLER(self), FALSE);
  return self->session && loom_training_session_get_running(self->session);
}

/* The worker's weights into the document: one undoable step. */
static gboolean push_result(LoomTrainingController *self, LoomTrainingSnapshot *snap, const char *label) {
  const LoomTrainingExtras *t = loom_document_get_training(self->document);
  if (!snap || !snap->net || (snap->net_step == t->steps && !label && !self->weights_pending)) return TRUE;
  g_autoptr(GError) error = NULL;
  gint64 run = snap->net_step - t->steps;
  LoomCommand *cmd =
      loom_command_new_training_result(snap->net, snap->train_state, snap->net_step, MAX(run, 0), label);
  /* Steps add up to one undo step; a played run is one of its own. */
  if (cmd && !label && !self->run_played) loom_command_set_continues(cmd);
  /* The document is about to hold these weights itself. */
  loom_document_clear_live_training(self->document);
  self->pushing_result = TRUE;
  gboolean ok = loom_document_execute(self->document, cmd, &error);
  self->pushing_result = FALSE;
  if (!ok) g_signal_emit(self, signals[SIGNAL_FAILED], 0, error->message);
  return ok;
}

static void on_snapshot(LoomTrainingController *self, LoomTrainingSnapshot *snap) {
  if (!self->document) return;
  if (snap->net) {
    g_clear_pointer(&self->newest_weights, loom_training_snapshot_unref);
    self->newest_weights = loom_training_snapshot_ref(snap);
    /* Autosave keeps what the worker has learnt while it runs. */
    if (loom_training_controller_get_locked(self))
      loom_document_set_live_training(self->document, snap->net, snap->train_state, snap->net_step,
                                      loom_training_snapshot_ref(snap), (GDestroyNotify)loom_training_snapshot_unref);
  }
  LoomTrainingState state = loom_training_session_get_state(self->session);
  gboolean answered = !loom_training_session_get_busy(self->session);
  if (answered && self->weights_pending && snap->net &&
      (state == LOOM_TRAINING_PAUSED || state == LOOM_TRAINING_FINISHED || state == LOOM_TRAINING_STOPPED)) {
    const char *label = self->reset_pending ? _("Reset Weights") : NULL;
    if (push_result(self, snap, label)) self->weights_pending = self->reset_pending = self->run_played = FALSE;
  }
  if (state == LOOM_TRAINING_STOPPED && answered && snap->serial != self->alerted_serial) {
    self->alerted_serial = snap->serial;
    if (snap->message) g_signal_emit(self, signals[SIGNAL_STOPPED], 0, snap);
  }
  g_signal_emit(self, signals[SIGNAL_SNAPSHOT], 0, snap);
}

LoomTrainingController *loom_training_controller_new(GtkWidget *clock) {
  g_return_val_if_fail(GTK_IS_WIDGET(clock), NULL);
  LoomTrainingController *self = g_object_new(LOOM_TYPE_TRAINING_CONTROLLER, NULL);
  self->clock = clock;
  return self;
}

void loom_training_controller_shutdown(LoomTrainingController *self) {
  g_return_if_fail(LOOM_IS_TRAINING_CONTROLLER(self));
  if (self->tick && self->clock) gtk_widget_remove_tick_callback(self->clock, self->tick);
  self->tick = 0;
  g_clear_handle_id(&self->poll_idle, g_source_remove);
  self->clock = NULL;
  if (self->document) loom_document_clear_live_training(self->document);
  g_clear_object(&self->document);
  if (self->session) g_signal_handlers_disconnect_by_data(self->session, self);
  /* Joins the worker. */
  g_clear_object(&self->session);
  g_clear_pointer(&self->newest_weights, loom_training_snapshot_unref);
}

LoomTrainingSession *loom_training_controller_get_session(LoomTrainingController *self) {
  g_return_val_if_fail(LOOM_IS_TRAINING_CONTROLLER(self), NULL);
  return self->session;
}

LoomTrainingSnapshot *loom_training_controller_get_newest_weights(LoomTrainingController *self) {
  g_return_val_if_fail(LOOM_IS_TRAINING_CONTROLLER(self), NULL);
  return self->newest_weights;
}

void loom_training_controller_set_document(LoomTrainingController *self, LoomDocument *document) {
  g_return_if_fail(LOOM_IS_TRAINING_CONTROLLER(self));
  g_set_object(&self->document, document);
  g_clear_pointer(&self->newest_weights, loom_training_snapshot_unref);
  self->loaded_revision = G_MAXUINT64;
  loom_training_controller_document_changed(self);
}

void loom_training_controller_document_changed(LoomTrainingController *self) {
  g_return_if_fail(LOOM_IS_TRAINING_CONTROLLER(self));
  if (!self->document || !self->session) return;
  guint64 revision = document_revision(self);
  /* Saving changes nothing the worker has; the worker's own weights coming
   * back need no reload either. */
  if (revision == self->loaded_revision) return;
  if (self->pushing_result) {
    self->loaded_revision = revision;
    return;
  }
  if (loom_training_controller_get_locked(self)) {
    /* Only settings can change while training runs. */
    self->loaded_revision = revision;
    loom_training_session_set_settings(self->session, loom_document_get_training(self->document)->settings);
    watch_session(self);
    return;
  }
  load_session(self);
}

void loom_training_controller_flush(LoomTrainingController *self) {
  g_return_if_fail(LOOM_IS_TRAINING_CONTROLLER(self));
  if (self->newest_weights && self->document && loom_training_controller_get_locked(self))
    push_result(self, self->newest_weights, NULL);
}

void loom_training_controller_play(LoomTrainingController *self) {
  g_return_if_fail(LOOM_IS_TRAINING_CONTROLLER(self));
  self->weights_pending = self->run_played = TRUE;
  loom_training_session_play(self->session);
  watch_session(self);
}

void loom_training_controller_pause(LoomTrainingController *self) {
  g_return_if_fail(LOOM_IS_TRAINING_CONTROLLER(self));
  loom_training_session_pause(self->session);
  watch_session(self);
}

void loom_training_controller_step(LoomTrainingController *self) {
  g_return_if_fail(LOOM_IS_TRAINING_CONTROLLER(self));
  self->weights_pending = TRUE;
  loom_training_session_step(self->session);
  watch_session(self);
}

void loom_training_controller_step_epoch(LoomTrainingController *self) {
  g_return_if_fail(LOOM_IS_TRAINING_CONTROLLER(self));
  self->weights_pending = TRUE;
  loom_training_session_step_epoch(self->session);
  watch_session(self);
}

void loom_training_controller_reset(LoomTrainingController *self) {
  g_return_if_fail(LOOM_IS_TRAINING_CONTROLLER(self));
  const LoomTrainingExtras *t = self->document ? loom_document_get_training(self->document) : NULL;
  self->weights_pending = self->reset_pending = TRUE;
  loom_training_session_reset(self->session, t && t->settings ? t->settings->seed : 1);
  watch_session(self);
}

void loom_training_controller_set_device(LoomTrainingController *self, int device) {
  g_return_if_fail(LOOM_IS_TRAINING_CONTROLLER(self));
  loom_training_session_set_device(self->session, device);
  watch_session(self);
}

void loom_training_controller_watch(LoomTrainingController *self, const loom_coord *at) {
  g_return_if_fail(LOOM_IS_TRAINING_CONTROLLER(self));
  loom_training_session_watch(self->session, at);
  watch_session(self);
}

static void loom_training_controller_dispose(GObject *object) {
  LoomTrainingController *self = LOOM_TRAINING_CONTROLLER(object);
  loom_training_controller_shutdown(self);
  G_OBJECT_CLASS(loom_training_controller_parent_class)->dispose(object);
}

static void loom_training_controller_class_init(LoomTrainingControllerClass *klass) {
  G_OBJECT_CLASS(klass)->dispose = loom_training_controller_dispose;
  signals[SIGNAL_SNAPSHOT] = g_signal_new("snapshot", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                          NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  signals[SIGNAL_STOPPED] = g_signal_new("stopped", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                         NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  signals[SIGNAL_FAILED] = g_signal_new("failed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                        G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void loom_training_controller_init(LoomTrainingController *self) {
  self->session = loom_training_session_new(NULL);
  self->loaded_revision = G_MAXUINT64;
  /* After the handlers connected later (the training pane's): the pane
   * shows a snapshot before the document changes by it. */
  g_signal_connect_data(self->session, "snapshot", G_CALLBACK(on_snapshot), self, NULL,
                        G_CONNECT_SWAPPED | G_CONNECT_AFTER);
}
