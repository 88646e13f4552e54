/*
 * The training worker: a thread that owns a network, its data and a
 * trainer, runs commands between steps and publishes snapshots.
 *
 * Rates: step points are collected every step and published at most every
 * PUBLISH_INTERVAL. The costly extras (a copy of the weights with the
 * trainer state, the decision field, the watched activations) are made at
 * most every EXTRAS_INTERVAL and never more often than keeps them under
 * EXTRAS_SHARE of the worker's time, so watching does not slow training
 * down much; they are always made when training pauses or stops.
 */
#include "loom-training-worker-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PUBLISH_INTERVAL_US (G_USEC_PER_SEC / 30)
#define EXTRAS_INTERVAL_US (G_USEC_PER_SEC / 10)
#define EXTRAS_SHARE 0.05


WorkerCommand *worker_command_new(WorkerCommandKind kind) {
  WorkerCommand *cmd = g_new0(WorkerCommand, 1);
  cmd->kind = kind;
  return cmd;
}

void worker_command_free(WorkerCommand *cmd) {
  if (!cmd) return;
  if (cmd->net) loom_net_free(cmd->net);
  if (cmd->settings) loom_train_settings_free(cmd->settings);
  g_clear_pointer(&cmd->state, g_bytes_unref);
  g_free(cmd);
}

/* ---- events and snapshots ----------------------------------------------- */

static void add_event(Worker *w, gint64 step, LoomTrainingEventKind kind, char *label) {
  LoomTrainingEvent e = {.step = step, .kind = kind, .label = label};
  g_array_append_val(w->pending->events, e);
}


/* Publishes what happened since the last publication: at most every
 * PUBLISH_INTERVAL unless @force (a pause, a stop, a command's result). */
static void publish(Worker *w, gboolean force) {
  gint64 now = g_get_monotonic_time();
  if (!force && now - w->last_publish < PUBLISH_INTERVAL_US) return;
  w->last_publish = now;
  LoomTrainingSnapshot *snap = g_steal_pointer(&w->pending);
  w->pending = loom_training_snapshot_new();
  snap->serial = ++w->serial;
  snap->command_seq = w->command_seq;
  snap->state = w->state;
  snap->message = g_strdup(w->message);
  snap->has_alert = w->has_alert;
  snap->alert_at = w->alert_at;
  snap->step = total_steps(w);
  snap->elapsed = w->elapsed;
  if (w->trainer) {
    const loom_step_stats *st = loom_trainer_last_step(w->trainer);
    snap->trainer_step = loom_trainer_steps(w->trainer);
    snap->epoch = loom_trainer_epoch(w->trainer);
    snap->batches_per_epoch = loom_trainer_batches_per_epoch(w->trainer);
    snap->epochs = loom_trainer_config(w->trainer)->epochs;
    snap->batch_index = st && snap->trainer_step > 0 ? (st->batch_index + 1) % snap->batches_per_epoch : 0;
    if (st && snap->trainer_step > 0) {
      snap->samples_per_second = st->samples_per_second;
      snap->lr = st->lr;
      snap->explosions = st->explosions;
      snap->recoveries = st->recoveries;
      snap->layers_skipped = st->layers_skipped;
      snap->n_layers = st->n_layers;
      snap->layers = g_memdup2(st->layers, sizeof(loom_layer_stats) * (gsize)st->n_layers);
    }
  }
  if (w->data && !w->data_published) {
    snap->data = loom_training_data_ref(w->data);
    w->data_published = TRUE;
  }
  if (force || now >= w->next_extras) {
    gint64 t0 = g_get_monotonic_time();
    worker_make_extras(w, snap);
    gint64 cost = g_get_monotonic_time() - t0;
    /* The next extras wait until they are at most EXTRAS_SHARE of the time. */
    w->next_extras = now + MAX(EXTRAS_INTERVAL_US, (gint64)(cost / EXTRAS_SHARE));
  }
  w->publish(snap, w->publish_data);
}

/* ---- preparing ------------------------------------------------------------ */

static void set_state(Worker *w, LoomTrainingState state, const char *message) {
  w->state = state;
  g_free(w->message);
  w->message = g_strdup(message);
  if (state != LOOM_TRAINING_STOPPED) w->has_alert = FALSE;
}

static int ensure_pool(Worker *w, loom_error *err) {
  int threads = w->settings->threads > 0 ? w->settings->threads : 1;
  if (w->pool && w->pool_threads == threads) return LOOM_OK;
  if (w->pool) loom_pool_free(w->pool);
  w->pool = threads > 1 ? loom_pool_new(threads, err) : NULL;
  w->pool_threads = threads;
  return threads > 1 && !w->pool ? LOOM_ERR_NOMEM : LOOM_OK;
}

static void drop_trainer(Worker *w) {
  if (w->trainer) {
    w->step_offset += loom_trainer_steps(w->trainer);
    loom_trainer_free(w->trainer);
    w->trainer = NULL;
  }
}

/* The trainer onto the chosen device, carrying its optimizer's state (a
 * checkpoint's, imported before). A network or configuration the device
 * cannot train is refused with the slot or field named; it is never
 * trained on the CPU instead. */
static gboolean to_device(Worker *w, loom_error *err) {
  if (!w->gpu || w->gpu_index != w->device) {
    loom_gpu_free(w->gpu);
    w->gpu_index = w->device;
    if (!(w->gpu = loom_gpu_new(w->device, err))) return FALSE;
  }
  return loom_trainer_set_device(w->trainer, w->gpu, err) == LOOM_OK;
}

/* A new trainer on the current weights; with @state, the checkpoint's. */
static gboolean make_trainer(Worker *w, GBytes *state, loom_error *err) {
  drop_trainer(w);
  if (ensure_pool(w, err)) return FALSE;
  loom_train_config cfg;
  if (loom_train_settings_make_config(w->settings, w->net, w->data->train, &cfg, err)) return FALSE;
  w->trainer = loom_trainer_new(w->net, w->data->train, w->data->test, &cfg, w->pool, err);
  if (!w->trainer) return FALSE;
  if (state) {
    gsize len;
    const void *bytes = g_bytes_get_data(state, &len);
    loom_error serr = {0};
    if (loom_trainer_import_state(w->trainer, bytes, len, &serr)) {
      /* Settings changed since the checkpoint: train on from its weights. */
      add_event(w, total_steps(w), LOOM_TRAINING_EVENT_RESTART,
                g_strdup_printf(_("Restarted: %s"), serr.message));
    } else {
      w->step_offset -= loom_trainer_steps(w->trainer);
      /* The checkpoint brings its own configuration back; the document's
       * settings win where the trainer takes them live (more epochs go on
       * from a run that ended by its count). */
      loom_error cerr = {0};
      loom_trainer_set_config(w->trainer, &cfg, &cerr);
    }
  }
  /* the optimizer's state goes with it (docs/gpu.md) */
  if (w->device >= 0 && !to_device(w, err)) return FALSE;
  w->prev_lr = NAN;
  w->prev_explosions = 0;
  if (w->adapt) loom_adapt_tracker_reset(w->adapt);
  return TRUE;
}

static gboolean make_data(Worker *w, loom_error *err) {
  loom_dataset *train = NULL, *test = NULL;
  if (loom_train_settings_make_data(w->settings, w->net, w->datasets_dir, &train, &test, err)) return FALSE;
  loom_training_data_unref(w->data);
  w->data = g_atomic_rc_box_new0(LoomTrainingData);
  w->data->train = train;
  w->data->test = test;
  w->data_published = FALSE;
  return TRUE;
}

static void load(Worker *w, WorkerCommand *cmd) {
  drop_trainer(w);
  if (w->net) loom_net_free(w->net);
  if (w->settings) loom_train_settings_free(w->settings);
  w->net = g_steal_pointer(&cmd->net);
  w->settings = g_steal_pointer(&cmd->settings);
  w->step_offset = cmd->steps;
  w->stop_at_epoch = -1;
  w->elapsed = 0;
  loom_error err = {0};
  /* A copy has no plan yet; inference keeps the weights it finds. */
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(w->net, loom_net_seed(w->net), &diags) > 0) {
    set_state(w, LOOM_TRAINING_INVALID, diags[0].message);
    free(diags);
    publish(w, TRUE);
    return;
  }
  if (!make_data(w, &err) || !make_trainer(w, cmd->state, &err)) {
    set_state(w, LOOM_TRAINING_INVALID, err.message);
  } else {
    set_state(w, loom_trainer_finished(w->trainer) ? LOOM_TRAINING_FINISHED : LOOM_TRAINING_PAUSED, NULL);
  }
  publish(w, TRUE);
}

/* Whether @a and @b make the same data: @b's other fields with @a's data
 * part compare equal to @b (the data part is borrowed, never freed here). */
static gboolean data_equal(const loom_train_settings *a, const loom_train_settings *b) {
  loom_train_settings *probe = loom_train_settings_copy(b);
  loom_data_settings own = probe->data;
  probe->data = a->data;
  gboolean equal = loom_train_settings_equal(probe, b);
  probe->data = own;
  loom_train_settings_free(probe);
  return equal;
}

static void apply_settings(Worker *w, loom_train_settings *settings) {
  loom_train_settings *old = w->settings;
  w->settings = settings;
  loom_error err = {0};
  if (!w->net) {
    if (old) loom_train_settings_free(old);
    return;
  }
  gboolean data_changed = !old || !data_equal(old, settings);
  if (old) loom_train_settings_free(old);
  if (!data_changed && w->trainer && w->state != LOOM_TRAINING_INVALID) {
    loom_train_config cfg;
    if (loom_train_settings_make_config(w->settings, w->net, w->data->train, &cfg, &err) == LOOM_OK &&
        ensure_pool(w, &err) == LOOM_OK && loom_trainer_set_config(w->trainer, &cfg, &err) == LOOM_OK) {
      if (w->state == LOOM_TRAINING_FINISHED && !loom_trainer_finished(w->trainer))
        set_state(w, LOOM_TRAINING_PAUSED, NULL);
      publish(w, TRUE);
      return;
    }
  }
  gboolean was_running = w->state == LOOM_TRAINING_RUNNING;
  err = (loom_error){0};
  if ((data_changed || !w->data) && !make_data(w, &err)) {
    set_state(w, LOOM_TRAINING_INVALID, err.message);
  } else if (!make_trainer(w, NULL, &err)) {
    set_state(w, LOOM_TRAINING_INVALID, err.message);
  } else {
    add_event(w, total_steps(w), LOOM_TRAINING_EVENT_RESTART, g_strdup(_("Settings changed")));
    set_state(w, was_running ? LOOM_TRAINING_RUNNING : LOOM_TRAINING_PAUSED, NULL);
  }
  publish(w, TRUE);
}

/* ---- stepping --------------------------------------------------------------- */

/* The watched slot's statistics of this step, if the trainer made them
 * (its layer statistics keep their order from step to step: one search
 * when the watch or the network changes). */
static void record_watch(Worker *w, const loom_step_stats *st, gint64 step) {
  if (!w->has_watch || st->n_layers <= 0) return;
  int i = w->watch_index;
  if (i < 0 || i >= st->n_layers || !loom_coord_equal(st->layers[i].at, w->watch)) {
    for (i = 0; i < st->n_layers && !loom_coord_equal(st->layers[i].at, w->watch); i++) {
    }
    if (i == st->n_layers) return;
    w->watch_index = i;
  }
  const loom_layer_stats *s = &st->layers[i];
  LoomWatchPoint p = {.step = step,
                      .at = s->at,
                      .act_mean = s->act_mean,
                      .act_std = s->act_std,
                      .has_weights_stats = s->has_weights_stats,
                      .grad_norm = s->grad_norm,
                      .update_ratio = s->update_ratio};
  g_array_append_val(w->pending->watch_points, p);
}

static void record_step(Worker *w, const loom_step_stats *st) {
  gint64 step = w->step_offset + st->step;
  double acc = st->counted > 0 ? (double)st->correct / (double)st->counted : NAN;
  gint64 batches = loom_trainer_batches_per_epoch(w->trainer);
  LoomTrainingPoint p = {.step = step,
                         .epoch = (double)st->epoch + (double)(st->batch_index + 1) / (double)MAX(batches, 1),
                         .loss = st->loss,
                         .accuracy = acc,
                         .lr = st->lr};
  g_array_append_val(w->pending->points, p);
  record_watch(w, st, step);

  const loom_train_config *cfg = loom_trainer_config(w->trainer);
  if (cfg->schedule.kind == LOOM_SCHEDULE_COSINE_RESTARTS && st->step > cfg->schedule.warmup_steps + 1 &&
      isfinite(w->prev_lr) && st->lr > w->prev_lr)
    add_event(w, step, LOOM_TRAINING_EVENT_RESTART, g_strdup(_("Warm restart")));
  w->prev_lr = st->lr;
  if (st->explosions > w->prev_explosions)
    add_event(w, step, LOOM_TRAINING_EVENT_EXPLOSION,
              g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%lld explosion", "%lld explosions",
                                          (gulong)(st->explosions - w->prev_explosions)),
                              (long long)(st->explosions - w->prev_explosions)));
  w->prev_explosions = st->explosions;

  if (st->epoch_end) {
    const loom_epoch_stats *e = loom_trainer_last_epoch(w->trainer);
    /* The adaptation tracker watches epochs: a batch's loss and accuracy
     * are too noisy for its windows (per batch it flagged a task change
     * every few dozen steps; tests/bench/bench-responsive). */
    if (e && w->adapt) {
      loom_adapt_event ev =
          loom_adapt_tracker_push(w->adapt, step, e->train.loss, e->train.accuracy, e->samples_per_second);
      if (ev == LOOM_ADAPT_TASK_CHANGE)
        add_event(w, step, LOOM_TRAINING_EVENT_TASK_CHANGE, g_strdup(_("Task change")));
      else if (ev == LOOM_ADAPT_RECOVERED)
        add_event(w, step, LOOM_TRAINING_EVENT_RECOVERED, g_strdup(_("Recovered")));
    }
    if (e) {
      LoomTrainingEpoch row = {.epoch = e->epoch + 1,
                               .step = step,
                               .train_loss = e->train.loss,
                               .train_accuracy = e->train.accuracy,
                               .has_test = e->has_test,
                               .test_loss = e->has_test ? e->test.loss : NAN,
                               .test_accuracy = e->has_test ? e->test.accuracy : NAN,
                               .samples_per_second = e->samples_per_second};
      g_array_append_val(w->pending->epoch_rows, row);
    }
  }
}

/* One mini-batch. Returns FALSE when training cannot go on. */
static gboolean step_once(Worker *w) {
  if (!w->trainer || loom_trainer_finished(w->trainer)) {
    set_state(w, w->trainer ? LOOM_TRAINING_FINISHED : w->state, w->message);
    return FALSE;
  }
  loom_step_stats st;
  loom_error err = {0};
  gint64 t0 = g_get_monotonic_time();
  int rc = loom_trainer_step(w->trainer, &st, &err);
  w->elapsed += (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
  if (rc == LOOM_ERR_NONFINITE) {
    const loom_step_stats *last = loom_trainer_last_step(w->trainer);
    set_state(w, LOOM_TRAINING_STOPPED, err.message);
    if (last && last->nonfinite_has_coord) {
      w->has_alert = TRUE;
      w->alert_at = last->nonfinite_at;
    }
    add_event(w, total_steps(w) + 1, LOOM_TRAINING_EVENT_NONFINITE, g_strdup(_("NaN")));
    return FALSE;
  }
  if (rc) {
    set_state(w, rc == LOOM_ERR_CANCELLED ? LOOM_TRAINING_FINISHED : LOOM_TRAINING_STOPPED, err.message);
    return FALSE;
  }
  record_step(w, &st);
  if (loom_trainer_finished(w->trainer)) {
    set_state(w, LOOM_TRAINING_FINISHED, NULL);
    return FALSE;
  }
  return TRUE;
}

/* Play after a stop or the end: a new trainer goes on from these weights. */
static gboolean restart_if_done(Worker *w) {
  if (w->state != LOOM_TRAINING_FINISHED && w->state != LOOM_TRAINING_STOPPED) return w->trainer != NULL;
  loom_error err = {0};
  if (!w->data || !make_trainer(w, NULL, &err)) {
    set_state(w, LOOM_TRAINING_INVALID, err.message);
    return FALSE;
  }
  add_event(w, total_steps(w), LOOM_TRAINING_EVENT_RESTART, g_strdup(_("Training restarted")));
  set_state(w, LOOM_TRAINING_PAUSED, NULL);
  return TRUE;
}

static void reset_weights(Worker *w, guint64 seed) {
  if (!w->net) return;
  loom_error err = {0};
  drop_trainer(w);
  w->step_offset = 0;
  w->elapsed = 0;
  if (loom_net_reinit_weights(w->net, seed, &err) || !w->data || !make_trainer(w, NULL, &err)) {
    set_state(w, LOOM_TRAINING_INVALID, err.message);
  } else {
    set_state(w, LOOM_TRAINING_PAUSED, NULL);
    add_event(w, 0, LOOM_TRAINING_EVENT_RESET, g_strdup(_("Reset")));
  }
  publish(w, TRUE);
}

/* A new device: the trainer starts over on it from the current weights. */
static void set_device(Worker *w, int device) {
  /* Every command is answered with a snapshot: the session counts on it. */
  if (w->device == device) {
    publish(w, TRUE);
    return;
  }
  w->device = device;
  if (w->state == LOOM_TRAINING_RUNNING) w->stop_at_epoch = -1;
  /* No trainer: nothing loaded, or the network or data are refused anyway. A
   * trainer the device refused is still there, where it was. The trainer
   * moves with its optimizer's state (loom_trainer_set_device), so the run
   * goes on where it stood instead of starting its moments afresh. */
  if (w->net && w->data && w->trainer) {
    loom_error err = {0};
    gboolean moved = device < 0 ? loom_trainer_set_device(w->trainer, NULL, &err) == LOOM_OK : to_device(w, &err);
    if (!moved) {
      set_state(w, LOOM_TRAINING_INVALID, err.message);
    } else {
      if (w->state != LOOM_TRAINING_RUNNING) set_state(w, LOOM_TRAINING_PAUSED, NULL);
      add_event(w, total_steps(w), LOOM_TRAINING_EVENT_RESTART,
                device < 0 ? g_strdup(_("On the CPU"))
                           : g_strdup_printf(_("On Vulkan device %d"), device));
    }
  }
  publish(w, TRUE);
}

/* Runs one command; returns FALSE on QUIT. */
static gboolean handle(Worker *w, WorkerCommand *cmd) {
  w->command_seq = cmd->seq;
  switch (cmd->kind) {
  case WORKER_LOAD:
    load(w, cmd);
    break;
  case WORKER_SETTINGS:
    apply_settings(w, g_steal_pointer(&cmd->settings));
    break;
  case WORKER_PLAY:
    if (w->state == LOOM_TRAINING_INVALID || w->state == LOOM_TRAINING_IDLE) break;
    if (restart_if_done(w)) set_state(w, LOOM_TRAINING_RUNNING, NULL);
    w->stop_at_epoch = -1;
    publish(w, TRUE);
    break;
  case WORKER_PAUSE:
    if (w->state == LOOM_TRAINING_RUNNING) set_state(w, LOOM_TRAINING_PAUSED, NULL);
    w->stop_at_epoch = -1;
    publish(w, TRUE);
    break;
  case WORKER_STEP:
    if (w->state == LOOM_TRAINING_RUNNING || !restart_if_done(w)) break;
    if (step_once(w)) set_state(w, LOOM_TRAINING_PAUSED, NULL);
    publish(w, TRUE);
    break;
  case WORKER_STEP_EPOCH:
    if (w->state == LOOM_TRAINING_RUNNING || !restart_if_done(w)) break;
    /* Runs like Play until the next epoch begins, so commands still get in. */
    w->stop_at_epoch = loom_trainer_epoch(w->trainer) + 1;
    set_state(w, LOOM_TRAINING_RUNNING, NULL);
    publish(w, TRUE);
    break;
  case WORKER_RESET:
    reset_weights(w, cmd->seed);
    break;
  case WORKER_WATCH:
    w->has_watch = cmd->has_watch;
    w->watch = cmd->watch;
    publish(w, TRUE);
    break;
  case WORKER_DEVICE:
    set_device(w, cmd->device);
    break;
  case WORKER_QUIT:
    return FALSE;
  }
  return TRUE;
}

static gpointer worker_main(gpointer data) {
  Worker *w = data;
  for (;;) {
    WorkerCommand *cmd = w->state == LOOM_TRAINING_RUNNING ? g_async_queue_try_pop(w->queue)
                                                             : g_async_queue_pop(w->queue);
    if (cmd) {
      gboolean go_on = handle(w, cmd);
      worker_command_free(cmd);
      if (!go_on) break;
      continue;
    }
    if (!step_once(w)) {
      publish(w, TRUE);
      continue;
    }
    if (w->stop_at_epoch >= 0 && loom_trainer_epoch(w->trainer) >= w->stop_at_epoch) {
      w->stop_at_epoch = -1;
      set_state(w, LOOM_TRAINING_PAUSED, NULL);
      publish(w, TRUE);
      continue;
    }
    publish(w, FALSE);
  }
  return NULL;
}

Worker *worker_start(const char *datasets_dir, WorkerPublishFunc publish_func, gpointer user_data) {
  Worker *w = g_new0(Worker, 1);
  w->queue = g_async_queue_new_full((GDestroyNotify)worker_command_free);
  w->publish = publish_func;
  w->publish_data = user_data;
  w->datasets_dir = g_strdup(datasets_dir);
  w->state = LOOM_TRAINING_IDLE;
  w->stop_at_epoch = -1;
  w->device = -1;
  w->pending = loom_training_snapshot_new();
  loom_adapt_config acfg = loom_adapt_config_default();
  w->adapt = loom_adapt_tracker_new(&acfg, NULL);
  w->thread = g_thread_new("loom-training", worker_main, w);
  return w;
}

void worker_post(Worker *worker, WorkerCommand *cmd) { g_async_queue_push(worker->queue, cmd); }

void worker_stop(Worker *w) {
  if (!w) return;
  /* QUIT goes first: whatever else is queued is dropped unrun. */
  g_async_queue_push_front(w->queue, worker_command_new(WORKER_QUIT));
  g_thread_join(w->thread);
  g_async_queue_unref(w->queue);
  if (w->trainer) loom_trainer_free(w->trainer);
  loom_gpu_free(w->gpu); /* after the trainer, which used it */
  if (w->pool) loom_pool_free(w->pool);
  if (w->adapt) loom_adapt_tracker_free(w->adapt);
  if (w->net) loom_net_free(w->net);
  if (w->settings) loom_train_settings_free(w->settings);
  loom_training_data_unref(w->data);
  loom_training_snapshot_unref(w->pending);
  g_free(w->message);
  g_free(w->datasets_dir);
  g_free(w);
}
