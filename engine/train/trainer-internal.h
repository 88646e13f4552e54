/*
 * Internal to the trainer files (trainer.c, trainer-data.c, trainer-check.c,
 * tween.c, tween-rules.c): the trainer object and the helpers they share.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "gpu/gpu-train.h"
#include "loom/train.h"
#include "loom/systolic.h"
#include "net/net-plan.h"

/* How a batch's targets reach the loss: class labels as they are, or
 * converted to float vectors (one-hot, or one 0/1 value). */
typedef struct train_data_view {
  const loom_dataset *ds;
  loom_loss_spec spec;
  int64_t width;  /* network outputs per sample */
  bool convert;   /* labels → float targets */
  bool one_hot;   /* convert to width values (else one value = the label) */
  float *conv;    /* batch × width converted targets */
  int64_t conv_cap;
} train_data_view;

int train_view_init(train_data_view *v, const loom_dataset *ds, const loom_loss_spec *spec, int64_t width,
                    loom_error *err);
void train_view_clear(train_data_view *v);
/* Loss (and dy if not NULL), accuracy counts added to *correct / *counted.
 * *targets_out (may be NULL) receives the float targets used (NULL for labels). */
/* The batch's float targets as the loss sees them (labels converted when
 * the view converts; b->targets otherwise, NULL for label losses). */
int train_view_targets(train_data_view *v, const loom_batch *b, const float **out, loom_error *err);
int train_view_loss(train_data_view *v, const loom_batch *b, const float *y, double *loss, float *dy,
                    int64_t *correct, int64_t *counted, const float **targets_out, loom_error *err);

/* One trainable tensor of a top-level layer. */
typedef struct train_tensor {
  loom_weights *w;
  float *grad;
  int64_t n;
  int node;  /* index of the top-level layer (plan node) */
  int index; /* the tensor's index within that layer */
  /* per step */
  int64_t offset;     /* of its master copy in loom_trainer.before */
  bool backed_up;     /* before holds its master: this step updates it */
  double grad_sq;     /* Σ g² of the gradient the update used */
  double weight_sq;   /* Σ w² of the master after the update */
  double update_sq;   /* Σ (w − w_before)², 0 when not backed up */
  double quant_abs;   /* Σ |w − deq(q(w))| at the store's dtype, as of its last morph */
} train_tensor;

typedef struct tween_state tween_state;

struct loom_trainer {
  loom_net *net;
  const loom_dataset *train, *test;
  loom_train_config cfg;
  loom_pool *pool;
  loom_ctx ctx;
  loom_batcher *batcher;
  train_data_view view;
  int64_t in_numel, out_width, n_batches;
  int64_t epoch, batch_index, steps;
  bool finished;

  float *y, *dy;
  int64_t y_cap;

  int n_nodes;
  loom_layer_stats *lstats;
  int n_tensors;
  train_tensor *tensors;
  float **masters;       /* per tensor, refreshed each step */
  const float **grads;
  int64_t *sizes;
  float *before;         /* masters of the updated tensors before the update
                            (update norms, and put back when the update is not finite) */
  int64_t total_params;
  loom_optim *opt;
  tween_state *tween;

  /* dead-unit scan: per unit of a layer output */
  int64_t *dead_units;
  int64_t unit_cap;
  /* throughput window (loom_step_stats.samples_per_second), a ring */
  double tp_seconds[LOOM_TRAIN_THROUGHPUT_WINDOW];
  int64_t tp_samples[LOOM_TRAIN_THROUGHPUT_WINDOW];
  int tp_count, tp_next;
  /* stopped by early stopping or a NaN/inf (not by the epoch count) */
  bool halted;

  /* Training on a Vulkan device (trainer-device.c): the step runs there, and
   * the statistics read the device's buffers of the last step. */
  gpu_train *dev;
  int64_t dev_batch;

  loom_step_stats last;
  loom_epoch_stats last_epoch;
  bool has_epoch;
  double ep_loss_sum, ep_seconds;
  int64_t ep_samples, ep_correct, ep_counted;

  double best_loss;
  int64_t best_epoch;
  int bad_epochs;
  loom_net *best_net;

  /* Systolic networks (trainer-systolic.c): a runner for the batch size in
   * use, and per tick the loss gradient (only the last tick has one). */
  bool systolic;
  loom_systolic *sys;
  const float **tick_dy;
  int64_t tick_dy_cap;
  /* This step's per-node outputs and output gradients, from the network's
   * plan (feed-forward) or from the runner (systolic), for the statistics and
   * the NaN watchdog; act_batch samples each. */
  const float **acts, **out_grads;
  int64_t act_batch;
};

/* The last step's samples, a node's output and the gradient at it: from the
 * device's copies when it trained the step, else from acts / out_grads (the
 * network's plan, or the systolic runner's last tick). */
static inline int64_t trainer_batch(const loom_trainer *tr) {
  return tr->dev ? tr->dev_batch : tr->act_batch;
}
static inline const float *trainer_node_out(const loom_trainer *tr, int k) {
  return tr->dev ? gpu_train_node_output(tr->dev, k) : tr->acts[k];
}
static inline const float *trainer_node_grad_out(const loom_trainer *tr, int k) {
  return tr->dev ? gpu_train_node_grad(tr->dev, k) : tr->out_grads[k];
}
/* The step on the device: batch, loss, statistics, checks and the update,
 * leaving the host's masters updated and re-morphed (trainer-device.c). */
int trainer_device_step(loom_trainer *tr, const loom_batch *b, loom_error *err);
/* The optimizer's state between the host's optimizer (tr->opt) and the
 * device: the device's into tr->opt (no device: nothing), and tr->opt's
 * onto dev. Plain copies; they cannot fail. */
void trainer_device_state_to_host(loom_trainer *tr);
void trainer_device_state_from_host(loom_trainer *tr, gpu_train *dev);

/* Re-reads masters and gradient pointers of every tensor (layers may
 * reallocate when the net is re-inferred). */
void trainer_refresh_tensors(loom_trainer *tr);
/* Per-layer grad, weight and update norms from the tensors' sums of the step. */
void trainer_layer_norms(loom_trainer *tr);
/* Activation statistics of every layer after the forward (trainer-stats.c):
 * RMS, mean, std, min, max and dead units. */
void trainer_activation_stats(loom_trainer *tr);
/* Recomputes the cached Σ|w − deq(q(w))| of tensor t (after a re-morph). */
int trainer_quant_refresh(loom_trainer *tr, int t, loom_error *err);
/* Per-layer quant_error and has_weights_stats from the tensors' caches. */
void trainer_weight_stats(loom_trainer *tr);
/* Adds a finished step to the throughput window; fills s->seconds and
 * s->samples_per_second. */
void trainer_throughput(loom_trainer *tr, loom_step_stats *s, double seconds);
/* Scratch for the dead-unit scan: units of the widest layer output. */
int trainer_stats_setup(loom_trainer *tr, loom_error *err);

/* Sum, sum of squares, min and max of n floats, in blocks like
 * train_sum_squares (sum_sq is bit-identical to it); min/max 0 for n = 0. */
typedef struct train_moments {
  double sum, sum_sq;
  float min, max;
} train_moments;
void train_moments_of(const float *v, int64_t n, train_moments *m);

/*
 * Σ v² for the statistics: float32 lanes within blocks of fixed size, blocks
 * added in order in double, so the result depends on the data only, never
 * on the vector width, the alignment or the thread count. A block whose float sum leaves the safe range is summed in
 * double instead, so the result is non-finite exactly when an element is.
 */
double train_sum_squares(const float *v, int64_t n);
/* Σ w² and Σ (w − b)², the same way. */
void train_sum_squares_diff(const float *w, const float *b, int64_t n, double *ww, double *dd);
/* Forward floating-point operations a step (loom_net_flops · batch) below
 * which a trainer leaves its pool unused (trainer.c), and a setter for tests
 * that compare thread counts on small networks (0: always the pool); set it
 * before creating the trainer. train_step_pool: the pool its steps use. */
#define TRAIN_SERIAL_STEP_FLOPS 4e6
void train_set_serial_step_flops(double flops);
loom_pool *train_step_pool(const loom_trainer *tr);

/* The same sums, bit for bit, with the blocks of a long vector shared out
 * over the pool (NULL: the calling thread). */
double train_sum_squares_on(loom_pool *pool, const float *v, int64_t n);
void train_sum_squares_diff_on(loom_pool *pool, const float *w, const float *b, int64_t n, double *ww, double *dd);
/* Σ |a − b| in double, blocks and lanes in a fixed order, the same sum for
 * any pool (trainer-check.c). */
double train_sum_abs_diff_on(loom_pool *pool, const float *a, const float *b, int64_t n);

/* The float32 lanes of those sums (trainer-lanes.c), at the kernel level in
 * use and the same bits at every level: n16 (a multiple of 16) values, value
 * i into lane i % 16, added to the lanes given (min/max: x < lo ? x : lo). */
void train_lanes_sq(const float *v, int64_t n16, float a[16]);
void train_lanes_sq_diff(const float *w, const float *b, int64_t n16, float aw[16], float ad[16]);
void train_lanes_moments(const float *v, int64_t n16, float s[16], float q[16], float lo[16], float hi[16]);
/* The double fallback's lanes: n8 (a multiple of 8) values, value i into
 * lane i % 8: Σ v² and Σ (w − b)², each square in double. */
void train_lanes_sq_exact(const float *v, int64_t n8, double a[8]);
void train_lanes_sq_diff_exact(const float *w, const float *b, int64_t n8, double a[8]);

/* Forgets the backups of the previous step (at the start of a step). */
void trainer_backup_reset(loom_trainer *tr);
/* Copies tensor t's master into tr->before: the step is about to update it. */
void trainer_backup(loom_trainer *tr, int t);

/* NaN/inf scans, each filling tr->last's nonfinite fields and err (the step
 * number and the coordinates) on the first hit in computation order. */
int trainer_check_activations(loom_trainer *tr, double loss, loom_error *err);
/* The gradient pass after a backward: one sum of squares per output gradient
 * and parameter gradient, in backward order (last layer first), which gives
 * out_grad_norm and each tensor's grad_sq; a non-finite sum is a NaN/inf,
 * located then. */
int trainer_gradient_pass(loom_trainer *tr, loom_error *err);
/* The weight pass after the update: weight_sq and update_sq of every tensor,
 * and the NaN/inf check of the updated masters. */
int trainer_weight_pass(loom_trainer *tr, loom_error *err);
/* Scans n floats; the index of the first non-finite one or -1. */
int64_t trainer_first_nonfinite(const float *v, int64_t n);
/* Where in a layer a step found its first NaN/inf. Each has a whole message
 * of its own (translators need the sentence, not a fragment to insert). */
typedef enum {
  TRAINER_BAD_LOSS,            /* the loss, while every layer's output is finite (node -1) */
  TRAINER_BAD_OUTPUT,          /* the layer's output; index counts batch × per_sample */
  TRAINER_BAD_OUTPUT_GRADIENT, /* the gradient at the layer's output; the same */
  TRAINER_BAD_TARGET_GAP,      /* tween: the layer's target gap; the same */
  TRAINER_BAD_GRADIENT,        /* the gradient of weight tensor `tensor`; index within it */
  TRAINER_BAD_LOCAL_UPDATE,    /* tween: the local update of weight tensor `tensor`; the same */
  TRAINER_BAD_UPDATED,         /* weight tensor `tensor` after the update; the same */
} trainer_bad_value;

/* Reports a non-finite value found in `what` of the top-level layer `node`
 * (for the tensor kinds: in tr->tensors[tensor], else tensor is -1), and puts
 * back the masters this step has backed up (the update is not kept). */
int trainer_report_nonfinite(loom_trainer *tr, loom_nonfinite_where where, trainer_bad_value what, int node,
                             int tensor, int64_t index, int64_t per_sample, loom_error *err);

/* Touches the stores this step updated (backed up) and re-morphs every store
 * whose cache is stale (QAT: the packed copy follows the master). */
int trainer_morph_updated(loom_trainer *tr, loom_error *err);
/* Touches and re-morphs every store (setup, restoring the best weights). */
int trainer_morph_all(loom_trainer *tr, loom_error *err);

/* Target propagation (tween.c). */
tween_state *tween_new(loom_trainer *tr, loom_error *err);
void tween_free(tween_state *s);
/* One tween update after a forward pass whose loss gradient is in tr->dy;
 * `targets` are the float targets of the batch (or NULL with labels). */
int tween_step(loom_trainer *tr, const loom_batch *b, const float *targets, double lr, loom_error *err);

/* The input-target rule of one layer (tween-rules.c): from the layer's
 * input x, output a, and output delta (gap), writes the input delta dx.
 * `d` is Jᵀ·gap from the layer's backward (used by the generic rule);
 * probe is scratch of batch × numel(out). */
int tween_input_delta(loom_layer *l, const loom_ctx *ctx, const float *x, const float *a, const float *gap,
                      const float *d, float *dx, float *probe, int64_t batch, double max_step, loom_error *err);

/* The tween state a checkpoint saves (train-state.c): pointers into it. */
typedef struct tween_view {
  float **vel;     /* per tensor: the velocity (the tensor's size) */
  int64_t *seen;   /* per node: steps with a target */
  int64_t *explosions, *recoveries;
} tween_view;
void tween_get_view(tween_state *s, tween_view *out);

/* The fields of loom_train_config, one row each, in the checkpoint's order
 * (trainer-config.c): name, how it is stored, and whether it may change
 * between steps (loom_trainer_set_config) or is fixed for a trainer's life. */
typedef enum { TRAIN_FIELD_INT, TRAIN_FIELD_INT64, TRAIN_FIELD_U64, TRAIN_FIELD_BOOL, TRAIN_FIELD_DOUBLE } train_field_kind;
typedef struct train_field {
  const char *name; /* "optim.beta1" */
  train_field_kind kind;
  size_t offset;
  bool live;
} train_field;
extern const train_field train_fields[];
extern const int train_n_fields;
/* Fields of the first version-1 states (before `ticks`). */
#define TRAIN_FIELDS_V1 45
/* The field as 64 bits (a double's bits, an int sign-extended), for the
 * checkpoint and for comparing. */
uint64_t train_field_get(const loom_train_config *c, const train_field *f);
/* Sets it from those bits; false when the value does not fit the field. */
bool train_field_set(loom_train_config *c, const train_field *f, uint64_t bits);
/* The value, formatted for a message. */
void train_field_format(const loom_train_config *c, const train_field *f, char *buf, size_t size);
/* The first field that differs between a and b and may not change live; NULL if none. */
const train_field *train_fixed_difference(const loom_train_config *a, const loom_train_config *b);

double train_now_seconds(void);

/* Forward and backward passes of one step, feed-forward or systolic
 * (trainer-systolic.c): forward writes tr->y and fills tr->acts; backward
 * takes tr->dy, adds the parameter gradients and fills tr->out_grads. */
int trainer_setup_passes(loom_trainer *tr, loom_error *err);
void trainer_free_passes(loom_trainer *tr);
int trainer_forward(loom_trainer *tr, const loom_batch *b, loom_error *err);
int trainer_backward(loom_trainer *tr, loom_error *err);
/* The ticks a systolic network runs for a setting of `ticks` (0: one per slot). */
int64_t train_ticks_for(const loom_net *net, int64_t ticks);
/* Holds x (batch samples) for `ticks` ticks on the runner *s (made anew
 * when missing or of another batch size) from zero outputs, recording when
 * asked, and copies the output after the last tick into y. */
int train_systolic_run(loom_net *net, loom_systolic **s, const loom_ctx *ctx, const float *x, int64_t batch,
                       int64_t ticks, bool record, float *y, loom_error *err);
