/*
 * The training worker thread behind LoomTrainingSession (internal). Only
 * loom-training-session.c talks to it: commands go in through a queue, and
 * snapshots come out through the publish callback, called on the worker
 * thread (the session puts them in its mailbox).
 */
#pragma once

#include <glib.h>
#include <loom/loom.h>

#include "loom-training-snapshot.h"

G_BEGIN_DECLS

typedef enum {
  WORKER_LOAD,
  WORKER_SETTINGS,
  WORKER_PLAY,
  WORKER_PAUSE,
  WORKER_STEP,
  WORKER_STEP_EPOCH,
  WORKER_RESET,
  WORKER_WATCH,
  WORKER_DEVICE,
  WORKER_QUIT,
} WorkerCommandKind;

typedef struct {
  WorkerCommandKind kind;
  guint64 seq;                    /* set by the session: snapshots report the last one run */
  loom_net *net;                  /* LOAD: owned */
  loom_train_settings *settings;  /* LOAD, SETTINGS: owned */
  GBytes *state;                  /* LOAD: owned, may be NULL */
  gint64 steps;                   /* LOAD: steps the state counts */
  guint64 seed;                   /* RESET */
  gboolean has_watch;             /* WATCH */
  loom_coord watch;
  int device;                     /* DEVICE: -1 the CPU, else a Vulkan device index */
} WorkerCommand;

WorkerCommand *worker_command_new(WorkerCommandKind kind);
void worker_command_free(WorkerCommand *cmd);

/* Called on the worker thread with a new snapshot (transfer full). */
typedef void (*WorkerPublishFunc)(LoomTrainingSnapshot *snap, gpointer user_data);

typedef struct _Worker Worker;

Worker *worker_start(const char *datasets_dir, WorkerPublishFunc publish, gpointer user_data);
/* Takes @cmd; it runs between two steps. */
void worker_post(Worker *worker, WorkerCommand *cmd);
/* Cancels what runs, joins the thread and frees the worker. */
void worker_stop(Worker *worker);

G_END_DECLS
