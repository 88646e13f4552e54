/*
 * The training worker's state (internal to loom-training-worker*.c): the
 * thread's command loop is in loom-training-worker.c, the costly extras of a
 * snapshot (weights, decision field, watched activations, DNA) in
 * loom-training-worker-views.c.
 */
#pragma once

#include "loom-training-worker.h"

G_BEGIN_DECLS

struct _Worker {
  GThread *thread;
  GAsyncQueue *queue;
  WorkerPublishFunc publish;
  gpointer publish_data;
  char *datasets_dir;

  /* Everything below belongs to the worker thread. */
  loom_net *net;
  loom_train_settings *settings;
  LoomTrainingData *data;
  gboolean data_published;
  loom_trainer *trainer;
  loom_pool *pool;
  int pool_threads;
  loom_adapt_tracker *adapt;
  LoomTrainingState state;
  char *message;
  gboolean has_alert;
  loom_coord alert_at;
  gint64 step_offset; /* steps of earlier trainers (restarts) */
  gint64 stop_at_epoch; /* step-epoch: run until this epoch begins; -1 none */
  double elapsed;
  double prev_lr;
  gint64 prev_explosions;
  gboolean has_watch;
  loom_coord watch;
  int watch_index; /* where the watched slot was in the last step's layer statistics */
  int device;    /* -1: the CPU; else the Vulkan device every step runs on */
  loom_gpu *gpu; /* open while device >= 0 */
  int gpu_index;

  LoomTrainingSnapshot *pending; /* being filled: points, epochs, events */
  guint64 serial;
  guint64 command_seq;
  gint64 last_publish, next_extras;
};

/* Steps of earlier trainers (restarts) and of the current one. */
static inline gint64 total_steps(Worker *w) {
  return w->step_offset + (w->trainer ? loom_trainer_steps(w->trainer) : 0);
}

/* Fills @snap's extras from the worker's network and trainer: a copy of the
 * weights with the trainer state, the watched activations, the DNA and, for
 * two-feature data, the decision field. Runs on the worker thread. */
void worker_make_extras(Worker *w, LoomTrainingSnapshot *snap);

G_END_DECLS
