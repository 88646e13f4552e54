/*
 * Training a network (DESIGN.md §4, docs/trainer.md): a
 * step-based trainer, one mini-batch per call, so a UI can pause and step.
 * Two methods:
 *  - backprop: loss gradient through loom_net_backward, an optimizer
 *    (loom/optim.h) and a learning-rate schedule (loom/schedule.h);
 *  - tween (target propagation): every layer gets a target for its output,
 *    gap = target − actual, link budget = cos(activation, target), layers
 *    below the threshold skip, local update Δw = η·x·gap scaled by the
 *    budget with momentum, explosion detection with rate damping and
 *    recovery; `chain_rule` derives the targets from gradients instead.
 * Weights at low dtypes train through a straight-through estimator on the
 * float32 master; every updated store is re-morphed after the update.
 *
 * The trainer borrows the network, the datasets and the pool; it trains the
 * network in place. Everything is deterministic: the same seed gives
 * bit-identical results for any thread count.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "dataset.h"
#include "error.h"
#include "export.h"
#include "gpu.h"
#include "loss.h"
#include "net.h"
#include "optim.h"
#include "pool.h"
#include "schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum loom_train_method {
  LOOM_TRAIN_BACKPROP = 0,
  LOOM_TRAIN_TWEEN = 1,
} loom_train_method;

LOOM_API const char *loom_train_method_name(loom_train_method m); /* "backprop", "tween" */
LOOM_API int loom_train_method_from_name(const char *name, loom_train_method *out, loom_error *err);

typedef struct loom_tween_config {
  double threshold;        /* layers whose budget is below it skip the update (0.2) */
  double momentum;         /* μ of the per-tensor velocity (0.9) */
  double target_step;      /* β: how far the output target moves from the output (0.3) */
  double max_input_step;   /* bound of the least-squares step α of the generic input rule (4.0) */
  double explosion_factor; /* gap RMS above factor × baseline is an explosion (4.0) */
  double baseline_decay;   /* running baseline: b ← d·b + (1 − d)·rms (0.9) */
  int warmup_steps;        /* steps that only feed the baseline (5) */
  double damping;          /* rate scale × damping on an explosion (0.5) */
  double recovery;         /* rate scale × recovery on a calm step, up to 1 (1.1) */
  double min_rate_scale;   /* floor of the rate scale (1/1024) */
  bool chain_rule;         /* targets from gradients: t = a − β·B·∂L/∂a */
} loom_tween_config;

LOOM_API loom_tween_config loom_tween_config_default(void);

/* The most ticks loom_train_config.ticks may ask for (every tick's slot
 * inputs are kept for backpropagation). */
#define LOOM_TRAIN_MAX_TICKS 100000

typedef struct loom_train_config {
  loom_train_method method;
  loom_loss_spec loss;
  loom_optim_config optim; /* backprop */
  loom_schedule schedule;  /* the learning rate of both methods (tween: η) */
  int64_t batch_size;      /* >= 1 */
  int64_t epochs;          /* >= 1: the trainer finishes after that many epochs */
  bool shuffle;            /* a new permutation of the training set every epoch */
  bool drop_last;
  uint64_t seed;           /* shuffling and stochastic layers */
  double clip_norm;        /* backprop: global L2 gradient clipping; 0 = off */
  int patience;            /* early stopping: epochs without improvement; 0 = off */
  double min_delta;        /* improvement of the monitored loss that counts */
  bool restore_best;       /* on early stopping, put back the best epoch's weights */
  loom_tween_config tween;
  /* Systolic networks (loom/systolic.h; backprop only): each batch's input is
   * held for this many ticks from zero outputs, the loss is taken on the
   * output after the last tick, and backpropagation runs through all of them
   * (BPTT). 0 = one tick per slot, enough for any feed-forward path; a
   * feedback loop needs more to matter. Feed-forward networks ignore it. */
  int64_t ticks;
} loom_train_config;

/* Backprop, cross-entropy, Adam (torch defaults) at a constant 1e-3,
 * batch 32, 10 epochs, shuffled, seed 0, no clipping, no early stopping. */
LOOM_API loom_train_config loom_train_config_default(void);
/* Checks every field the method uses, naming the bad one. */
LOOM_API int loom_train_config_validate(const loom_train_config *cfg, loom_error *err);

/*
 * The loss that fits a network output of `out_width` floats per sample and a
 * dataset, written to *spec (label_smoothing 0):
 *  - class labels, one head: width = classes (>= 2) → cross_entropy, unless
 *    the network ends in a softmax-family layer or a sigmoid (outputs are
 *    probabilities) → mse on one-hot vectors; width 1 with 2 classes →
 *    bce_logits, or mse when the network ends in a sigmoid;
 *  - class labels, h > 1 heads: width = h × classes → multi_head_ce, or
 *    multi_head_nll when the network ends in a layer that outputs
 *    probabilities (a grid softmax with one row per head);
 *  - vector targets: width = target width → mse.
 * Any other combination is an error that names both sizes.
 */
LOOM_API int loom_train_pick_loss(const loom_net *net, const loom_dataset *ds, loom_loss_spec *spec,
                                  loom_error *err);
/* Whether `spec` can train `net` on `ds` (sizes and target kinds), with a
 * message naming the sizes when not. The net must have been inferred. */
LOOM_API int loom_train_check_data(const loom_net *net, const loom_dataset *ds, const loom_loss_spec *spec,
                                   loom_error *err);

/* ---- statistics (plain structs: copy them into a snapshot) -------------- */

typedef struct loom_layer_stats {
  loom_coord at;            /* the slot (top-level layer; a container counts as one) */
  const char *type_name;    /* static registry name: "dense" */
  loom_dtype dtype;
  bool enabled;
  bool weighted;            /* the layer (or its children) has trainable tensors */
  double act_rms;           /* RMS of the layer's output over the batch */
  /* The layer's output over the batch (every sample, every element): */
  double act_mean, act_std; /* mean and population standard deviation */
  double act_min, act_max;
  /* Output units (elements of one sample's output) that are ±0 for every
   * sample of the batch, as a fraction of the units: dead ReLUs, a layer
   * cut off by a zero weight row. 0 for a layer without outputs. */
  double dead_fraction;
  /* weight_norm, update_norm, update_ratio and quant_error describe this
   * step's weights (false for a layer without trainable tensors). */
  bool has_weights_stats;
  /* Mean |w − deq(q(w))| over every element of the layer's trainable
   * tensors, each at its store's dtype: what quantization costs the weights
   * the layer computes with. 0 for float32 and float64 (exact). Recomputed
   * only when a store is re-morphed (its weights changed), cached otherwise. */
  double quant_error;
  double grad_norm;         /* L2 of the step's parameter gradient (tween: of x·gap) */
  double out_grad_norm;     /* backprop: L2 of ∂L/∂output over the batch */
  double weight_norm;       /* L2 of the float32 masters after the step */
  double update_norm;       /* L2 of the change of the masters at this step */
  double update_ratio;      /* update_norm / weight_norm (0 when the weights are 0) */
  /* tween (zero under backprop) */
  bool has_target;
  double gap_rms;           /* RMS of target − actual */
  double budget;            /* cos(activation, target) */
  bool skipped;             /* budget below the threshold, or damped after an explosion */
  bool exploded;            /* an explosion was detected at this step */
  double baseline;          /* running baseline of gap_rms */
  double rate_scale;        /* damping factor in (0, 1] applied to η */
  int64_t explosions;       /* explosions of this layer so far */
} loom_layer_stats;

typedef enum loom_nonfinite_where {
  LOOM_NONFINITE_NONE = 0,
  LOOM_NONFINITE_ACTIVATION = 1, /* a layer's output */
  LOOM_NONFINITE_LOSS = 2,       /* the loss itself (every output finite) */
  LOOM_NONFINITE_GRADIENT = 3,   /* a layer's output gradient, parameter gradient or gap */
  LOOM_NONFINITE_WEIGHTS = 4,    /* a master after the update */
} loom_nonfinite_where;

/* Steps in the moving window of loom_step_stats.samples_per_second. */
#define LOOM_TRAIN_THROUGHPUT_WINDOW 16

typedef struct loom_step_stats {
  int64_t step;        /* updates done so far, this one included (1 after the first step) */
  int64_t epoch;       /* the epoch this step belonged to (0-based) */
  int64_t batch_index; /* the batch within the epoch */
  int64_t batch_size;
  double lr;
  double loss;         /* the batch loss before the update */
  int64_t correct;     /* batch samples (or heads) right before the update */
  int64_t counted;     /* 0 when the loss has no accuracy (regression) */
  double grad_norm;    /* backprop: global gradient norm before clipping */
  /* Timing (the only fields that differ between identical runs): the wall
   * time of this step (batch, forward, loss, update, statistics; not the
   * evaluation of the test set at an epoch's end), and the throughput of the
   * last LOOM_TRAIN_THROUGHPUT_WINDOW steps of this trainer (fewer at the
   * start): their samples over their seconds. */
  double seconds;
  double samples_per_second;
  bool epoch_end;      /* the last batch of the epoch: epoch stats are fresh */
  /* tween totals */
  int64_t layers_skipped;
  int64_t explosions;  /* all explosions so far */
  int64_t recoveries;  /* damped layers whose rate scale returned to 1 */
  /* the stop report: set when a NaN/inf stopped training */
  loom_nonfinite_where nonfinite;
  loom_coord nonfinite_at;
  bool nonfinite_has_coord;
  int n_layers;
  const loom_layer_stats *layers; /* n_layers entries owned by the trainer, valid until the next step */
} loom_step_stats;

typedef struct loom_eval_result {
  int64_t samples;
  double loss;     /* mean over samples (weighted by batch size) */
  int64_t correct;
  int64_t counted; /* 0: no accuracy for this loss */
  double accuracy; /* correct / counted, or NaN */
} loom_eval_result;

typedef struct loom_epoch_stats {
  int64_t epoch;       /* 0-based */
  int64_t steps;       /* updates so far */
  loom_eval_result train; /* accumulated over the epoch's steps (before each update) */
  bool has_test;
  loom_eval_result test;  /* after the epoch, in evaluation mode */
  double seconds;      /* wall time of the epoch's steps */
  double samples_per_second;
  bool improved;       /* the monitored loss improved by more than min_delta */
  bool stop;           /* early stopping triggered (or the last epoch) */
} loom_epoch_stats;

/* ---- the trainer --------------------------------------------------------- */

typedef struct loom_trainer loom_trainer;

/*
 * Prepares training of `net` (inferred if needed) on `train` (and optionally
 * `test`, evaluated after every epoch) with `cfg`. The data are checked
 * against the network and the loss (sizes, target kinds, label ranges),
 * with errors naming both sizes. `pool` may be NULL.
 */
LOOM_API loom_trainer *loom_trainer_new(loom_net *net, const loom_dataset *train, const loom_dataset *test,
                                        const loom_train_config *cfg, loom_pool *pool, loom_error *err);
LOOM_API void loom_trainer_free(loom_trainer *tr);
LOOM_API const loom_train_config *loom_trainer_config(const loom_trainer *tr);

/*
 * One mini-batch: forward, loss, update (backprop or tween), per-layer
 * statistics. After the last batch of an epoch the test set is evaluated,
 * early stopping is decided, stats->epoch_end is set and
 * loom_trainer_last_epoch() holds the epoch's summary.
 * A NaN or infinity in the loss, an activation, a gradient, a gap or an
 * updated weight stops training: LOOM_ERR_NONFINITE with a message naming
 * the step and the first layer (coordinates) where it appeared, and the
 * same in stats->nonfinite*. The update of that step is not applied.
 * After a stop or the last epoch, further steps fail with LOOM_ERR_CANCELLED.
 */
LOOM_API int loom_trainer_step(loom_trainer *tr, loom_step_stats *stats, loom_error *err);
/* Steps to the end of the current epoch; *out (may be NULL) gets its summary. */
LOOM_API int loom_trainer_run_epoch(loom_trainer *tr, loom_epoch_stats *out, loom_error *err);
LOOM_API const loom_step_stats *loom_trainer_last_step(const loom_trainer *tr);
/* The output of the top-level slot at `c` in the last step, over its
 * *batch samples (the layer's output shape each): from the network's plan,
 * from the systolic runner's last tick, or from the device's copy when the
 * step ran there. NULL before the first step or when no layer is at `c`.
 * Valid until the next step or evaluation. */
LOOM_API const float *loom_trainer_activation(const loom_trainer *tr, loom_coord c, int64_t *batch);
LOOM_API const loom_epoch_stats *loom_trainer_last_epoch(const loom_trainer *tr); /* NULL before the first */
LOOM_API int64_t loom_trainer_epoch(const loom_trainer *tr);  /* the epoch the next step belongs to */
LOOM_API int64_t loom_trainer_steps(const loom_trainer *tr);  /* updates done */
LOOM_API int64_t loom_trainer_batches_per_epoch(const loom_trainer *tr);
/* True after the last epoch, early stopping or a NaN stop. */
LOOM_API bool loom_trainer_finished(const loom_trainer *tr);
/* The best epoch by the monitored loss (test loss, else train loss); -1 if none. */
LOOM_API int64_t loom_trainer_best_epoch(const loom_trainer *tr);
/* Puts the weights of the best epoch back into the network. */
LOOM_API int loom_trainer_restore_best(loom_trainer *tr, loom_error *err);
/* Writes the network as a model file (atomic; see loom/model.h). */
LOOM_API int loom_trainer_save_checkpoint(const loom_trainer *tr, const char *path, loom_error *err);

/*
 * Changes the hyperparameters between steps without losing optimizer or tween
 * state: the learning rate and its schedule, the optimizer's knobs (weight
 * decay, momentum, betas, eps, …), clip_norm, epochs, early stopping and the
 * tween knobs. The method, optimizer kind, loss, batch_size, shuffle,
 * drop_last and seed are fixed for a trainer's life: a change is refused
 * with a message naming the field, and nothing changes. Raising epochs
 * continues a run that finished by its epoch count (not one stopped early
 * or by a NaN); lowering it to the epochs done finishes it.
 */
LOOM_API int loom_trainer_set_config(loom_trainer *tr, const loom_train_config *cfg, loom_error *err);

/*
 * Checkpoints of the training state (docs/file-format.md "Training state").
 * Everything beyond the weights that the next step depends on: optimizer
 * moments and step counts, epoch, batch index, steps, the epoch's running
 * sums, tween state (velocities, baselines, rate scales, explosion counts),
 * early-stopping bookkeeping with the best epoch's weights, and the training
 * configuration. Stochastic layers and shuffling draw from (seed, step,
 * epoch), so there is no RNG state to keep. A versioned little-endian blob
 * with a magic and a checksum, validated completely on import.
 * Not kept: the last step's and epoch's statistics (they describe the past)
 * and the throughput window.
 */
LOOM_API int loom_trainer_export_state(const loom_trainer *tr, void **bytes, size_t *len, loom_error *err); /* malloc'd */
/*
 * Import right after loom_trainer_new on a network holding the checkpoint's
 * weights and with the same data: the next step is then bit-identical to
 * the one the exporting trainer would have taken. Sizes are checked against
 * the trainer's tensors before use and errors name what disagrees. The
 * fixed fields of the configuration (see loom_trainer_set_config) must match;
 * the live ones are taken from the blob, as the run had them. On error the
 * trainer is unchanged.
 */
LOOM_API int loom_trainer_import_state(loom_trainer *tr, const void *bytes, size_t len, loom_error *err);

/*
 * Runs the steps on a Vulkan device (docs/gpu.md "Training on the device"),
 * or back on the CPU with gpu NULL, between any two steps: the optimizer's
 * state moves with the trainer. The device runs forward, loss gradient,
 * backward and update as one submission; after each step the host's masters
 * hold the updated weights, so statistics, checkpoints and evaluation (on
 * the CPU) work as ever, and loom_trainer_export_state / import_state read
 * and write the device's optimizer state in the same blob. Refused, with
 * the slot or the configuration field named, changing nothing: a slot the
 * device cannot run, a method other than backprop.
 */
LOOM_API int loom_trainer_set_device(loom_trainer *tr, loom_gpu *gpu, loom_error *err);
LOOM_API bool loom_trainer_on_device(const loom_trainer *tr);

/* Evaluates `net` on `ds` (inference mode, batches of batch_size, in order).
 * A systolic network runs one tick per slot per batch (loom_evaluate_ticks). */
LOOM_API int loom_evaluate(loom_net *net, loom_pool *pool, const loom_dataset *ds, const loom_loss_spec *spec,
                           int64_t batch_size, loom_eval_result *out, loom_error *err);
/* The same; a systolic network holds each batch's input for `ticks` ticks
 * (0 = one per slot) and is scored on its output after the last, as the
 * trainer does with loom_train_config.ticks. */
LOOM_API int loom_evaluate_ticks(loom_net *net, loom_pool *pool, const loom_dataset *ds, const loom_loss_spec *spec,
                                 int64_t batch_size, int64_t ticks, loom_eval_result *out, loom_error *err);

#ifdef __cplusplus
}
#endif
