#include "loom-training-session.h"

#include "loom-training-worker.h"

struct _LoomTrainingSession {
  GObject parent_instance;

  Worker *worker;
  /* The mailbox: the newest snapshot the UI has not taken. The lock is held
   * only to swap a pointer (and, on the worker's side, to absorb the older
   * snapshot's points), never across a frame. */
  GMutex lock;
  LoomTrainingSnapshot *mailbox;

  LoomTrainingSnapshot *latest;
  LoomTrainingState state;
  guint64 posted; /* commands posted so far */
};

G_DEFINE_FINAL_TYPE(LoomTrainingSession, loom_training_session, G_TYPE_OBJECT)

enum { PROP_0, PROP_STATE, PROP_RUNNING, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_SNAPSHOT, N_SIGNALS };
static guint signals[N_SIGNALS];

/* Worker thread. */
static void deliver(LoomTrainingSnapshot *snap, gpointer user_data) {
  LoomTrainingSession *self = user_data;
  g_mutex_lock(&self->lock);
  LoomTrainingSnapshot *older = g_steal_pointer(&self->mailbox);
  if (older) loom_training_snapshot_absorb(snap, older);
  self->mailbox = snap;
  g_mutex_unlock(&self->lock);
  loom_training_snapshot_unref(older);
}

static void set_state(LoomTrainingSession *self, LoomTrainingState state) {
  if (self->state == state) return;
  gboolean was_running = self->state == LOOM_TRAINING_RUNNING;
  self->state = state;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_STATE]);
  if (was_running != (state == LOOM_TRAINING_RUNNING))
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_RUNNING]);
}

/* Where the digits file is: the source tree during development (as `loom
 * train` looks), else the installed data directory. */
static char *find_datasets_dir(void) {
  const char *roots[] = {g_getenv("LOOM_SOURCE_DIR"), LOOM_SOURCE_ROOT};
  for (gsize i = 0; i < G_N_ELEMENTS(roots); i++) {
    if (!roots[i]) continue;
    char *dir = g_build_filename(roots[i], "data", "datasets", NULL);
    g_autofree char *file = g_build_filename(dir, "optdigits-8x8.csv.gz", NULL);
    if (g_file_test(file, G_FILE_TEST_IS_REGULAR)) return dir;
    g_free(dir);
  }
  return g_build_filename(LOOM_DATADIR, "loom", "datasets", NULL);
}

LoomTrainingSession *loom_training_session_new(const char *datasets_dir) {
  LoomTrainingSession *self = g_object_new(LOOM_TYPE_TRAINING_SESSION, NULL);
  g_autofree char *found = datasets_dir ? NULL : find_datasets_dir();
  self->worker = worker_start(datasets_dir ? datasets_dir : found, deliver, self);
  return self;
}

static void post(LoomTrainingSession *self, WorkerCommand *cmd) {
  cmd->seq = ++self->posted;
  if (self->worker) worker_post(self->worker, cmd);
  else worker_command_free(cmd);
}

void loom_training_session_load(LoomTrainingSession *self, const loom_net *net, const loom_train_settings *settings,
                                GBytes *state, gint64 steps) {
  g_return_if_fail(LOOM_IS_TRAINING_SESSION(self));
  WorkerCommand *cmd = worker_command_new(WORKER_LOAD);
  cmd->net = loom_net_clone(net, NULL);
  cmd->settings = loom_train_settings_copy(settings);
  cmd->state = state ? g_bytes_ref(state) : NULL;
  cmd->steps = steps;
  if (!cmd->net || !cmd->settings) {
    worker_command_free(cmd);
    return;
  }
  set_state(self, LOOM_TRAINING_IDLE);
  post(self, cmd);
}

void loom_training_session_set_settings(LoomTrainingSession *self, const loom_train_settings *settings) {
  g_return_if_fail(LOOM_IS_TRAINING_SESSION(self));
  WorkerCommand *cmd = worker_command_new(WORKER_SETTINGS);
  cmd->settings = loom_train_settings_copy(settings);
  post(self, cmd);
}

void loom_training_session_play(LoomTrainingSession *self) {
  g_return_if_fail(LOOM_IS_TRAINING_SESSION(self));
  post(self, worker_command_new(WORKER_PLAY));
  if (self->state == LOOM_TRAINING_PAUSED || self->state == LOOM_TRAINING_FINISHED ||
      self->state == LOOM_TRAINING_STOPPED)
    set_state(self, LOOM_TRAINING_RUNNING);
}

void loom_training_session_pause(LoomTrainingSession *self) {
  g_return_if_fail(LOOM_IS_TRAINING_SESSION(self));
  post(self, worker_command_new(WORKER_PAUSE));
}

void loom_training_session_step(LoomTrainingSession *self) {
  g_return_if_fail(LOOM_IS_TRAINING_SESSION(self));
  post(self, worker_command_new(WORKER_STEP));
}

void loom_training_session_step_epoch(LoomTrainingSession *self) {
  g_return_if_fail(LOOM_IS_TRAINING_SESSION(self));
  post(self, worker_command_new(WORKER_STEP_EPOCH));
}

void loom_training_session_reset(LoomTrainingSession *self, guint64 seed) {
  g_return_if_fail(LOOM_IS_TRAINING_SESSION(self));
  WorkerCommand *cmd = worker_command_new(WORKER_RESET);
  cmd->seed = seed;
  post(self, cmd);
}

void loom_training_session_set_device(LoomTrainingSession *self, int device) {
  g_return_if_fail(LOOM_IS_TRAINING_SESSION(self));
  WorkerCommand *cmd = worker_command_new(WORKER_DEVICE);
  cmd->device = device < 0 ? -1 : device;
  post(self, cmd);
}

void loom_training_session_watch(LoomTrainingSession *self, const loom_coord *at) {
  g_return_if_fail(LOOM_IS_TRAINING_SESSION(self));
  WorkerCommand *cmd = worker_command_new(WORKER_WATCH);
  cmd->has_watch = at != NULL;
  if (at) cmd->watch = *at;
  post(self, cmd);
}

gboolean loom_training_session_poll(LoomTrainingSession *self) {
  g_return_val_if_fail(LOOM_IS_TRAINING_SESSION(self), FALSE);
  g_mutex_lock(&self->lock);
  LoomTrainingSnapshot *snap = g_steal_pointer(&self->mailbox);
  g_mutex_unlock(&self->lock);
  if (!snap) return FALSE;
  loom_training_snapshot_unref(self->latest);
  self->latest = snap;
  /* While commands are on their way, the state they will lead to (set when
   * they were posted) stays: an older snapshot must not flicker it back. */
  if (snap->command_seq == self->posted) set_state(self, snap->state);
  g_signal_emit(self, signals[SIGNAL_SNAPSHOT], 0, snap);
  return TRUE;
}

LoomTrainingSnapshot *loom_training_session_get_latest(LoomTrainingSession *self) {
  g_return_val_if_fail(LOOM_IS_TRAINING_SESSION(self), NULL);
  return self->latest;
}

LoomTrainingState loom_training_session_get_state(LoomTrainingSession *self) {
  g_return_val_if_fail(LOOM_IS_TRAINING_SESSION(self), LOOM_TRAINING_IDLE);
  return self->state;
}

gboolean loom_training_session_get_busy(LoomTrainingSession *self) {
  g_return_val_if_fail(LOOM_IS_TRAINING_SESSION(self), FALSE);
  if (self->posted == 0) return FALSE;
  if (self->state == LOOM_TRAINING_RUNNING || !self->latest || self->latest->command_seq != self->posted) return TRUE;
  g_mutex_lock(&self->lock);
  gboolean unread = self->mailbox != NULL;
  g_mutex_unlock(&self->lock);
  return unread;
}

gboolean loom_training_session_get_running(LoomTrainingSession *self) {
  return loom_training_session_get_state(self) == LOOM_TRAINING_RUNNING;
}

static void loom_training_session_dispose(GObject *object) {
  LoomTrainingSession *self = LOOM_TRAINING_SESSION(object);
  g_clear_pointer(&self->worker, worker_stop);
  G_OBJECT_CLASS(loom_training_session_parent_class)->dispose(object);
}

static void loom_training_session_finalize(GObject *object) {
  LoomTrainingSession *self = LOOM_TRAINING_SESSION(object);
  loom_training_snapshot_unref(self->mailbox);
  loom_training_snapshot_unref(self->latest);
  g_mutex_clear(&self->lock);
  G_OBJECT_CLASS(loom_training_session_parent_class)->finalize(object);
}

static void loom_training_session_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomTrainingSession *self = LOOM_TRAINING_SESSION(object);
  switch (prop_id) {
  case PROP_STATE:
    g_value_set_int(value, self->state);
    break;
  case PROP_RUNNING:
    g_value_set_boolean(value, self->state == LOOM_TRAINING_RUNNING);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_training_session_class_init(LoomTrainingSessionClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = loom_training_session_dispose;
  object_class->finalize = loom_training_session_finalize;
  object_class->get_property = loom_training_session_get_property;

  properties[PROP_STATE] = g_param_spec_int("state", NULL, NULL, LOOM_TRAINING_IDLE, LOOM_TRAINING_INVALID,
                                            LOOM_TRAINING_IDLE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_RUNNING] =
      g_param_spec_boolean("running", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  /* Emitted on the main thread, from loom_training_session_poll(). */
  signals[SIGNAL_SNAPSHOT] = g_signal_new("snapshot", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                          NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
}

static void loom_training_session_init(LoomTrainingSession *self) {
  g_mutex_init(&self->lock);
  self->state = LOOM_TRAINING_IDLE;
}
