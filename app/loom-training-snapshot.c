#include "loom-training-snapshot.h"

#include <string.h>

LoomTrainingData *loom_training_data_ref(LoomTrainingData *data) {
  return data ? g_atomic_rc_box_acquire(data) : NULL;
}

static void data_clear(LoomTrainingData *data) {
  loom_dataset_free(data->train);
  loom_dataset_free(data->test);
}

void loom_training_data_unref(LoomTrainingData *data) {
  if (data) g_atomic_rc_box_release_full(data, (GDestroyNotify)data_clear);
}

static void event_clear(gpointer p) {
  LoomTrainingEvent *e = p;
  g_free(e->label);
}

LoomTrainingSnapshot *loom_training_snapshot_new(void) {
  LoomTrainingSnapshot *snap = g_atomic_rc_box_new0(LoomTrainingSnapshot);
  snap->points = g_array_new(FALSE, FALSE, sizeof(LoomTrainingPoint));
  snap->watch_points = g_array_new(FALSE, FALSE, sizeof(LoomWatchPoint));
  snap->epoch_rows = g_array_new(FALSE, FALSE, sizeof(LoomTrainingEpoch));
  snap->events = g_array_new(FALSE, FALSE, sizeof(LoomTrainingEvent));
  g_array_set_clear_func(snap->events, event_clear);
  return snap;
}

LoomTrainingSnapshot *loom_training_snapshot_ref(LoomTrainingSnapshot *snap) {
  return snap ? g_atomic_rc_box_acquire(snap) : NULL;
}

static void snapshot_clear(LoomTrainingSnapshot *snap) {
  g_array_unref(snap->points);
  g_array_unref(snap->watch_points);
  g_array_unref(snap->epoch_rows);
  g_array_unref(snap->events);
  g_free(snap->layers);
  g_free(snap->message);
  if (snap->net) loom_net_free(snap->net);
  g_clear_pointer(&snap->dna, loom_shared_dna_unref);
  g_clear_pointer(&snap->train_state, g_bytes_unref);
  g_free(snap->field);
  g_free(snap->watch);
  loom_training_data_unref(snap->data);
}

void loom_training_snapshot_unref(LoomTrainingSnapshot *snap) {
  if (snap) g_atomic_rc_box_release_full(snap, (GDestroyNotify)snapshot_clear);
}

/* Puts @older's elements in front of @newer's: the order of steps is kept. */
static void prepend_array(GArray *newer, GArray *older) {
  if (older->len == 0) return;
  g_array_prepend_vals(newer, older->data, older->len);
  /* The elements moved: @older must not clear them (events own labels). */
  g_array_set_clear_func(older, NULL);
  g_array_set_size(older, 0);
}

void loom_training_snapshot_absorb(LoomTrainingSnapshot *newer, LoomTrainingSnapshot *older) {
  prepend_array(newer->points, older->points);
  prepend_array(newer->watch_points, older->watch_points);
  prepend_array(newer->epoch_rows, older->epoch_rows);
  prepend_array(newer->events, older->events);
  if (!newer->net && older->net) {
    newer->net = g_steal_pointer(&older->net);
    newer->net_step = older->net_step;
    newer->train_state = g_steal_pointer(&older->train_state);
    g_clear_pointer(&newer->dna, loom_shared_dna_unref);
    newer->dna = g_steal_pointer(&older->dna);
  }
  if (!newer->field && older->field) {
    newer->field = g_steal_pointer(&older->field);
    newer->field_res = older->field_res;
    newer->field_channels = older->field_channels;
    newer->field_regression = older->field_regression;
    memcpy(newer->field_bounds, older->field_bounds, sizeof newer->field_bounds);
  }
  if (!newer->watch && older->watch) {
    newer->watch = g_steal_pointer(&older->watch);
    newer->n_watch = older->n_watch;
    newer->watch_at = older->watch_at;
  }
  if (!newer->data && older->data) newer->data = g_steal_pointer(&older->data);
  if (!newer->has_alert && older->has_alert) {
    newer->has_alert = TRUE;
    newer->alert_at = older->alert_at;
  }
}

struct _LoomSharedDna {
  loom_dna_snapshot *snap;
};

LoomSharedDna *loom_shared_dna_new(loom_dna_snapshot *snap) {
  if (!snap) return NULL;
  LoomSharedDna *dna = g_atomic_rc_box_new0(LoomSharedDna);
  dna->snap = snap;
  return dna;
}

LoomSharedDna *loom_shared_dna_ref(LoomSharedDna *dna) { return dna ? g_atomic_rc_box_acquire(dna) : NULL; }

static void shared_dna_clear(gpointer data) {
  LoomSharedDna *dna = data;
  loom_dna_snapshot_free(dna->snap);
}

void loom_shared_dna_unref(LoomSharedDna *dna) {
  if (dna) g_atomic_rc_box_release_full(dna, shared_dna_clear);
}

const loom_dna_snapshot *loom_shared_dna_get(LoomSharedDna *dna) { return dna ? dna->snap : NULL; }
