/*
 * LoomTrainingSnapshot: what the training worker publishes (DESIGN.md §6).
 * Immutable once published and reference counted, so the UI can keep one
 * as long as it likes while the worker goes on. The worker fills a new one
 * for every publication; when the UI has not picked up the previous one,
 * the new one takes over its step points, watch points, epochs and events (they are never
 * lost, only coalesced) and, when it has none of its own, its weights,
 * decision field and watched activations.
 */
#pragma once

#include <glib.h>
#include <loom/loom.h>

G_BEGIN_DECLS

typedef enum {
  LOOM_TRAINING_IDLE,     /* nothing to train (no network, or preparing) */
  LOOM_TRAINING_PAUSED,   /* ready: a trainer exists and waits for a command */
  LOOM_TRAINING_RUNNING,
  LOOM_TRAINING_FINISHED, /* the configured epochs are done (or early stopping) */
  LOOM_TRAINING_STOPPED,  /* a NaN/inf stopped it: message and alert say where */
  LOOM_TRAINING_INVALID,  /* the network cannot train on the data: message says why */
} LoomTrainingState;

/* One training step, as the plots draw it. */
typedef struct {
  gint64 step;     /* updates done, this one included, since the document's first */
  double epoch;    /* fractional epoch: epoch + (batch + 1) / batches */
  double loss;     /* the batch loss before the update */
  double accuracy; /* the batch accuracy before the update, NaN without accuracy */
  double lr;
} LoomTrainingPoint;

/* The watched slot's statistics after one step, for the inspector's
 * sparklines: every step, not only the last of each snapshot, so a short
 * run (a few hundred steps in a tenth of a second, one or two snapshots)
 * still draws its history. */
typedef struct {
  gint64 step;
  loom_coord at;
  double act_mean, act_std;
  gboolean has_weights_stats; /* grad_norm and update_ratio below are set */
  double grad_norm, update_ratio;
} LoomWatchPoint;

typedef struct {
  gint64 epoch; /* 1-based, as `loom train` prints it */
  gint64 step;
  double train_loss, train_accuracy;
  gboolean has_test;
  double test_loss, test_accuracy;
  double samples_per_second;
} LoomTrainingEpoch;

typedef enum {
  LOOM_TRAINING_EVENT_RESTART,     /* the schedule restarted (a warm restart), or training restarted */
  LOOM_TRAINING_EVENT_EXPLOSION,   /* target propagation detected an explosion */
  LOOM_TRAINING_EVENT_TASK_CHANGE, /* the adaptation tracker saw an accuracy drop */
  LOOM_TRAINING_EVENT_RECOVERED,   /* ... and its recovery */
  LOOM_TRAINING_EVENT_NONFINITE,   /* a NaN/inf stopped training */
  LOOM_TRAINING_EVENT_RESET,       /* weights were drawn anew: the curves start over */
} LoomTrainingEventKind;

typedef struct {
  gint64 step;
  LoomTrainingEventKind kind;
  char *label; /* translated, for the plot's marker */
} LoomTrainingEvent;

/* A DNA snapshot shared between training snapshots and the DNA view's
 * timeline (immutable, reference counted). */
typedef struct _LoomSharedDna LoomSharedDna;
/* Takes @snap. */
LoomSharedDna *loom_shared_dna_new(loom_dna_snapshot *snap);
LoomSharedDna *loom_shared_dna_ref(LoomSharedDna *dna);
void loom_shared_dna_unref(LoomSharedDna *dna);
const loom_dna_snapshot *loom_shared_dna_get(LoomSharedDna *dna);

/* The data the trainer uses (immutable, shared between snapshots). */
typedef struct _LoomTrainingData LoomTrainingData;
struct _LoomTrainingData {
  loom_dataset *train, *test;
};
LoomTrainingData *loom_training_data_ref(LoomTrainingData *data);
void loom_training_data_unref(LoomTrainingData *data);

typedef struct {
  guint64 serial; /* increases with every publication */
  guint64 command_seq; /* the last command the worker had run */
  LoomTrainingState state;
  gint64 step;               /* updates done in total */
  gint64 trainer_step;       /* of those, by the current trainer (what its checkpoint counts) */
  gint64 epoch;              /* the epoch the next step belongs to (0-based) */
  gint64 batch_index;
  gint64 batches_per_epoch;
  gint64 epochs;             /* configured */
  double elapsed;            /* seconds spent stepping */
  double samples_per_second; /* recent throughput */
  double lr;
  gint64 explosions, recoveries, layers_skipped;

  GArray *points; /* LoomTrainingPoint since the previous snapshot the UI took */
  GArray *watch_points; /* LoomWatchPoint since then, while a slot is watched */
  GArray *epoch_rows; /* LoomTrainingEpoch */
  GArray *events; /* LoomTrainingEvent */

  int n_layers;
  loom_layer_stats *layers; /* the last step's per-layer statistics */

  char *message;        /* STOPPED / INVALID: why (translated) */
  gboolean has_alert;   /* the slot a NaN/inf appeared in */
  loom_coord alert_at;

  /* Optional parts, at a lower rate (each bounded to a small share of the
   * worker's time) and always when training pauses or stops. */
  loom_net *net;   /* the weights */
  gint64 net_step; /* the updates that made them (a coalesced snapshot may be newer) */
  LoomSharedDna *dna; /* their DNA signatures (engine/dna), for the DNA view */
  GBytes *train_state; /* the trainer's state blob (loom_trainer_export_state) */
  float *field;    /* decision field: res × res × channels, row 0 = y_min */
  int field_res, field_channels;
  double field_bounds[4]; /* x_min, x_max, y_min, y_max */
  gboolean field_regression;
  float *watch;    /* the watched slot's activations of the last batch */
  gint64 n_watch;
  loom_coord watch_at;

  LoomTrainingData *data; /* set from the first snapshot after the data were made */
} LoomTrainingSnapshot;

LoomTrainingSnapshot *loom_training_snapshot_new(void);
LoomTrainingSnapshot *loom_training_snapshot_ref(LoomTrainingSnapshot *snap);
void loom_training_snapshot_unref(LoomTrainingSnapshot *snap);
/* Moves @older's coalescible parts into @newer (see the top of this file). */
void loom_training_snapshot_absorb(LoomTrainingSnapshot *newer, LoomTrainingSnapshot *older);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(LoomTrainingSnapshot, loom_training_snapshot_unref)

G_END_DECLS
