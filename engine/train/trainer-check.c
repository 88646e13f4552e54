/*
 * The trainer's watchdogs and per-layer statistics: NaN/inf scans in the
 * order values are computed (activations forward, gradients backward, then
 * the updated masters), norms for the live views, and re-morphing after an
 * update (quantization-aware training).
 *
 * The checks ride on the norms: one pass over every gradient gives its sum of
 * squares, which is non-finite exactly when an element is, and only then is
 * the first bad element searched for the report; one pass over every updated
 * master gives the weight and update sums and the check. So the bookkeeping
 * costs two vectorized passes over the parameters, not seven scalar ones.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/i18n.h"
#include "core/weights-internal.h"
#include "kernels/scratch.h"
#include "train/optim-internal.h"
#include "train/trainer-internal.h"

double train_now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t trainer_first_nonfinite(const float *v, int64_t n) {
  for (int64_t i = 0; v && i < n; i++)
    if (!isfinite(v[i])) return i;
  return -1;
}

/* Elements per block of the sums of squares. Within a block, 16 float32
 * lanes (trainer-lanes.c: element i into lane i % 16) each add at most 64
 * squares, relative error well below 1e-5;
 * the lanes and then the blocks are added in double in a fixed order, so a
 * sum depends on the data only, never on the vector width or thread count. */
#define SQ_BLOCK 1024
/* A block sum below this may have lost squares to float underflow (or is
 * zero): it is summed again in double, like one above FLT_MAX or non-finite. */
#define SQ_SAFE_MIN 1e-30

static bool sq_safe(double s) { return s >= SQ_SAFE_MIN && s <= FLT_MAX; }

/* The 16 float lanes of a block, widened and added in order. */
static inline double lanes_sum(const float a[16]) {
  double s = 0.0;
  for (int j = 0; j < 16; j++) s += (double)a[j];
  return s;
}

/* The fallbacks sum in double, element i into lane i % 8, the lanes then in
 * order and the tail after them: exact enough (no float underflow, no
 * overflow), and not one chain of dependent adds, which once the gradients
 * of a trained network are all tiny (every block below SQ_SAFE_MIN) cost
 * a twelfth of a small network's step (docs/trainer.md). */
#define SQ_LANES 8

static double sq_block_exact(const float *v, int64_t n) {
  double a[SQ_LANES] = {0};
  int64_t i = n / SQ_LANES * SQ_LANES;
  train_lanes_sq_exact(v, i, a);
  double s = 0.0;
  for (int j = 0; j < SQ_LANES; j++) s += a[j];
  for (; i < n; i++) s += (double)v[i] * (double)v[i];
  return s;
}

static double sq_diff_block_exact(const float *w, const float *b, int64_t n) {
  double a[SQ_LANES] = {0};
  int64_t i = n / SQ_LANES * SQ_LANES;
  train_lanes_sq_diff_exact(w, b, i, a);
  double s = 0.0;
  for (int j = 0; j < SQ_LANES; j++) s += a[j];
  for (; i < n; i++) {
    const double d = (double)w[i] - (double)b[i];
    s += d * d;
  }
  return s;
}

static double sq_block(const float *v, int64_t n) {
  if (n < 16) return sq_block_exact(v, n); /* no float lane would get an element */
  float a[16] = {0};
  int64_t i = n / 16 * 16;
  train_lanes_sq(v, i, a);
  double s = lanes_sum(a);
  for (; i < n; i++) s += (double)v[i] * (double)v[i];
  return sq_safe(s) ? s : sq_block_exact(v, n);
}

static void sq_diff_block(const float *w, const float *b, int64_t n, double *ww, double *dd) {
  if (n < 16) { /* no float lane would get an element */
    *ww += sq_block_exact(w, n);
    *dd += sq_diff_block_exact(w, b, n);
    return;
  }
  float aw[16] = {0}, ad[16] = {0};
  int64_t i = n / 16 * 16;
  train_lanes_sq_diff(w, b, i, aw, ad);
  double sw = lanes_sum(aw), sd = lanes_sum(ad);
  for (; i < n; i++) {
    double x = w[i], d = (double)w[i] - (double)b[i];
    sw += x * x;
    sd += d * d;
  }
  *ww += sq_safe(sw) ? sw : sq_block_exact(w, n);
  *dd += sq_safe(sd) ? sd : sq_diff_block_exact(w, b, n);
}

double train_sum_squares(const float *v, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; v && i < n; i += SQ_BLOCK) s += sq_block(v + i, n - i < SQ_BLOCK ? n - i : SQ_BLOCK);
  return s;
}

void train_sum_squares_diff(const float *w, const float *b, int64_t n, double *ww, double *dd) {
  *ww = *dd = 0.0;
  for (int64_t i = 0; i < n; i += SQ_BLOCK)
    sq_diff_block(w + i, b + i, n - i < SQ_BLOCK ? n - i : SQ_BLOCK, ww, dd);
}

/* Σ |a − b| in double (the quantization error of a store, master against
 * its dequantized values): element i of a block into lane i % SQ_LANES,
 * the lanes then in order and the tail after them, the blocks in order, so
 * the sum depends on the data only. One chain of dependent adds took about
 * 1 ms a step for a 1024 × 1024 store on Zen 3. */
typedef double lanes2 __attribute__((vector_size(16)));
typedef uint64_t lanes2_bits __attribute__((vector_size(16)));
_Static_assert(SQ_LANES == 8, "abs_diff_block keeps the 8 lanes in 4 pairs");

static inline lanes2 abs_diff2(const float *a, const float *b) {
  const lanes2 d = {(double)a[0] - (double)b[0], (double)a[1] - (double)b[1]};
  return (lanes2)((lanes2_bits)d & UINT64_C(0x7fffffffffffffff)); /* |d|: the sign bit cleared */
}

static double abs_diff_block(const float *a, const float *b, int64_t n) {
  /* the lanes in named pairs: as an array GCC kept them in memory, a
   * store and a load on every add's chain */
  lanes2 l01 = {0, 0}, l23 = {0, 0}, l45 = {0, 0}, l67 = {0, 0};
  int64_t i = 0;
  for (; i + SQ_LANES <= n; i += SQ_LANES) {
    l01 += abs_diff2(a + i, b + i);
    l23 += abs_diff2(a + i + 2, b + i + 2);
    l45 += abs_diff2(a + i + 4, b + i + 4);
    l67 += abs_diff2(a + i + 6, b + i + 6);
  }
  double s = 0.0;
  s += l01[0];
  s += l01[1];
  s += l23[0];
  s += l23[1];
  s += l45[0];
  s += l45[1];
  s += l67[0];
  s += l67[1];
  for (; i < n; i++) s += fabs((double)a[i] - (double)b[i]);
  return s;
}

/* On a pool the blocks' sums are taken in pieces of POOL_BLOCKS blocks, the
 * optimizer's pieces (OPTIM_POOL_PIECE), so that the pool gives a thread the
 * elements it updates (pool.c); they are then added in order, which is the
 * serial sum exactly (each block's sum is 0 + its sum). Fewer than
 * POOL_MIN_BLOCKS stay on the calling thread, as does a sum whose list of
 * block sums cannot be had. */
#define POOL_BLOCKS (OPTIM_POOL_PIECE / SQ_BLOCK)
_Static_assert(OPTIM_POOL_PIECE % SQ_BLOCK == 0, "the optimizer's pieces are whole blocks");
#define POOL_MIN_BLOCKS 64

typedef enum {
  SUM_SQ,       /* Σ v² */
  SUM_SQ_DIFF,  /* Σ v² and Σ (v − b)² */
  SUM_ABS_DIFF, /* Σ |v − b| */
} block_sum;

typedef struct {
  block_sum kind;
  const float *v, *b;
  int64_t n;
  double *sums; /* per block: its one or two sums */
} sq_job;

static void sq_range(void *arg, int64_t begin, int64_t end) {
  const sq_job *j = arg;
  for (int64_t k = begin; k < end; k++) {
    int64_t i = k * SQ_BLOCK, len = j->n - i < SQ_BLOCK ? j->n - i : SQ_BLOCK;
    if (j->kind == SUM_SQ_DIFF) {
      double ww = 0.0, dd = 0.0;
      sq_diff_block(j->v + i, j->b + i, len, &ww, &dd);
      j->sums[2 * k] = ww;
      j->sums[2 * k + 1] = dd;
    } else {
      j->sums[k] = j->kind == SUM_SQ ? sq_block(j->v + i, len) : abs_diff_block(j->v + i, j->b + i, len);
    }
  }
}

/* total[0] (and total[1] for SUM_SQ_DIFF) from the blocks on the pool;
 * false where the sum stays on the calling thread. */
static bool sq_pooled(loom_pool *pool, block_sum kind, const float *v, const float *b, int64_t n, double total[2]) {
  const int64_t blocks = (n + SQ_BLOCK - 1) / SQ_BLOCK;
  const int per = kind == SUM_SQ_DIFF ? 2 : 1;
  if (loom_pool_size(pool) < 2 || blocks < POOL_MIN_BLOCKS) return false;
  sq_job j = {.kind = kind, .v = v, .b = b, .n = n,
              .sums = loom_scratch(LOOM_SCRATCH_TRAIN_SUMS, (size_t)blocks * per * sizeof(double))};
  if (!j.sums) return false;
  loom_pool_for(pool, blocks, POOL_BLOCKS, sq_range, &j);
  total[0] = total[1] = 0.0;
  for (int64_t k = 0; k < blocks; k++)
    for (int s = 0; s < per; s++) total[s] += j.sums[per * k + s];
  return true;
}

double train_sum_squares_on(loom_pool *pool, const float *v, int64_t n) {
  double t[2];
  return v && sq_pooled(pool, SUM_SQ, v, NULL, n, t) ? t[0] : train_sum_squares(v, n);
}

void train_sum_squares_diff_on(loom_pool *pool, const float *w, const float *b, int64_t n, double *ww, double *dd) {
  double t[2];
  if (!sq_pooled(pool, SUM_SQ_DIFF, w, b, n, t)) {
    train_sum_squares_diff(w, b, n, ww, dd);
    return;
  }
  *ww = t[0];
  *dd = t[1];
}

double train_sum_abs_diff_on(loom_pool *pool, const float *a, const float *b, int64_t n) {
  double t[2];
  if (sq_pooled(pool, SUM_ABS_DIFF, a, b, n, t)) return t[0];
  double s = 0.0;
  for (int64_t i = 0; i < n; i += SQ_BLOCK) s += abs_diff_block(a + i, b + i, n - i < SQ_BLOCK ? n - i : SQ_BLOCK);
  return s;
}

/* One block of train_moments. The squares take exactly the lanes, order and
 * fallback of sq_block (the same sixteen lanes, trainer-lanes.c, in
 * order), so act_rms stays what train_sum_squares gives. */
static void moments_block(const float *v, int64_t n, train_moments *m) {
  float lo = v[0], hi = v[0];
  double s, q;
  if (n < 16) {
    s = 0.0;
    for (int64_t i = 0; i < n; i++) s += (double)v[i];
    q = sq_block_exact(v, n);
    for (int64_t i = 1; i < n; i++) {
      lo = v[i] < lo ? v[i] : lo;
      hi = v[i] > hi ? v[i] : hi;
    }
  } else {
    float sl[16] = {0}, ql[16] = {0}, lol[16], hil[16];
    for (int j = 0; j < 16; j++) lol[j] = hil[j] = v[0];
    int64_t i = n / 16 * 16;
    train_lanes_moments(v, i, sl, ql, lol, hil);
    s = lanes_sum(sl);
    q = lanes_sum(ql);
    for (int j = 0; j < 16; j++) {
      lo = lol[j] < lo ? lol[j] : lo;
      hi = hil[j] > hi ? hil[j] : hi;
    }
    for (; i < n; i++) {
      s += (double)v[i];
      q += (double)v[i] * (double)v[i];
      lo = v[i] < lo ? v[i] : lo;
      hi = v[i] > hi ? v[i] : hi;
    }
    if (!sq_safe(q)) q = sq_block_exact(v, n);
    if (!isfinite(s) || fabs(s) > FLT_MAX) { /* a float lane overflowed: the exact sum says what is true */
      s = 0.0;
      for (int64_t k = 0; k < n; k++) s += (double)v[k];
    }
  }
  m->sum += s;
  m->sum_sq += q;
  /* NaN never wins a comparison: the first block's NaN seed is replaced */
  if (!(lo >= m->min)) m->min = lo;
  if (!(hi <= m->max)) m->max = hi;
}

void train_moments_of(const float *v, int64_t n, train_moments *m) {
  *m = (train_moments){.sum = 0.0, .sum_sq = 0.0, .min = NAN, .max = NAN};
  for (int64_t i = 0; v && i < n; i += SQ_BLOCK) moments_block(v + i, n - i < SQ_BLOCK ? n - i : SQ_BLOCK, m);
  if (!(n > 0 && v)) m->min = m->max = 0.0f;
}

void trainer_backup_reset(loom_trainer *tr) {
  for (int t = 0; t < tr->n_tensors; t++) tr->tensors[t].backed_up = false;
}

typedef struct {
  float *dst;
  const float *src;
} copy_job;

static void copy_range(void *arg, int64_t begin, int64_t end) {
  const copy_job *j = arg;
  memcpy(j->dst + begin, j->src + begin, (size_t)(end - begin) * sizeof(float));
}

void trainer_backup(loom_trainer *tr, int t) {
  train_tensor *tt = &tr->tensors[t];
  copy_job j = {tr->before + tt->offset, loom_weights_master(tt->w)};
  /* in the optimizer's pieces, as the sums above */
  loom_pool_for(tt->n >= POOL_MIN_BLOCKS * SQ_BLOCK ? tr->pool : NULL, tt->n, OPTIM_POOL_PIECE, copy_range, &j);
  tt->backed_up = true;
}

/* The update of a step that hit a NaN/inf is not kept. */
static void restore_backups(loom_trainer *tr) {
  for (int t = 0; t < tr->n_tensors; t++) {
    train_tensor *tt = &tr->tensors[t];
    if (!tt->backed_up) continue;
    memcpy(loom_weights_master(tt->w), tr->before + tt->offset, (size_t)tt->n * sizeof(float));
    loom_weights_touch(tt->w);
    tt->backed_up = false;
  }
}

int trainer_report_nonfinite(loom_trainer *tr, loom_nonfinite_where where, trainer_bad_value what, int node,
                             int tensor, int64_t index, int64_t per_sample, loom_error *err) {
  restore_backups(tr);
  tr->last.nonfinite = where;
  tr->finished = tr->halted = true;
  long long step = (long long)(tr->steps + 1), epoch = (long long)tr->epoch + 1,
            batch = (long long)tr->batch_index + 1; /* counted from 1, like the CLI's epoch lines */
  if (node < 0 || what == TRAINER_BAD_LOSS) {
    tr->last.nonfinite_has_coord = false;
    return loom_error_set(err, LOOM_ERR_NONFINITE,
                          _("training stopped at step %lld (epoch %lld, batch %lld): the loss is not finite although "
                            "every layer's output is"),
                          step, epoch, batch);
  }
  const net_node *nodes = net_plan_nodes(tr->net), *n = &nodes[node];
  char at[48], path[128] = "";
  loom_coord_format(n->coord, at, sizeof at);
  tr->last.nonfinite_at = n->coord;
  tr->last.nonfinite_has_coord = true;
  const char *type = loom_layer_type_name(loom_layer_get_type(n->layer));
  if (tensor >= 0 && tensor < tr->n_tensors)
    loom_layer_weights_path(nodes[tr->tensors[tensor].node].layer, tr->tensors[tensor].index, path, sizeof path);
  /* Output-shaped values: the index counts samples × per_sample (never 0: shapes are not empty). */
  long long sample = per_sample > 0 ? (long long)(index / per_sample) : 0;
  long long element = per_sample > 0 ? (long long)(index % per_sample) : (long long)index;
  switch (what) {
  case TRAINER_BAD_OUTPUT:
    return loom_error_set(err, LOOM_ERR_NONFINITE,
                          /* TRANSLATORS: the step, epoch and batch (counted from 1), the layer type name (e.g.
                             "dense"), the layer's grid coordinates (e.g. "(0,0,0,0)"), the sample within the batch
                             and the element within that sample's output. */
                          _("training stopped at step %lld (epoch %lld, batch %lld): NaN or infinity first appeared in "
                            "the output of layer %s at %s (sample %lld, element %lld)"),
                          step, epoch, batch, type, at, sample, element);
  case TRAINER_BAD_OUTPUT_GRADIENT:
    return loom_error_set(err, LOOM_ERR_NONFINITE,
                          /* TRANSLATORS: as for "…the output of layer…"; here the gradient of the loss with respect
                             to the layer's output. */
                          _("training stopped at step %lld (epoch %lld, batch %lld): NaN or infinity first appeared in "
                            "the output gradient of layer %s at %s (sample %lld, element %lld)"),
                          step, epoch, batch, type, at, sample, element);
  case TRAINER_BAD_TARGET_GAP:
    return loom_error_set(err, LOOM_ERR_NONFINITE,
                          /* TRANSLATORS: as for "…the output of layer…"; tween training: the gap between the layer's
                             output and its target. */
                          _("training stopped at step %lld (epoch %lld, batch %lld): NaN or infinity first appeared in "
                            "the target gap of layer %s at %s (sample %lld, element %lld)"),
                          step, epoch, batch, type, at, sample, element);
  case TRAINER_BAD_GRADIENT:
    return loom_error_set(err, LOOM_ERR_NONFINITE,
                          /* TRANSLATORS: the step, epoch and batch (counted from 1), the weight tensor's name (e.g.
                             "weight" or "children[1].bias"), the layer type name, the layer's grid coordinates and
                             the element within the tensor. */
                          _("training stopped at step %lld (epoch %lld, batch %lld): NaN or infinity first appeared in "
                            "the gradient of ‘%s’ of layer %s at %s (element %lld)"),
                          step, epoch, batch, path, type, at, element);
  case TRAINER_BAD_LOCAL_UPDATE:
    return loom_error_set(err, LOOM_ERR_NONFINITE,
                          /* TRANSLATORS: the step, epoch and batch (counted from 1), the layer type name, the
                             layer's grid coordinates and the element within the weight tensor; tween training
                             computes a local update for each layer's weights. */
                          _("training stopped at step %lld (epoch %lld, batch %lld): NaN or infinity first appeared in "
                            "the local update of layer %s at %s (element %lld)"),
                          step, epoch, batch, type, at, element);
  case TRAINER_BAD_UPDATED:
  default:
    return loom_error_set(err, LOOM_ERR_NONFINITE,
                          /* TRANSLATORS: as for "…the gradient of ‘%s’ of layer…"; here the weight tensor after the
                             update. */
                          _("training stopped at step %lld (epoch %lld, batch %lld): NaN or infinity first appeared in "
                            "the updated ‘%s’ of layer %s at %s (element %lld)"),
                          step, epoch, batch, path, type, at, element);
  }
}

int trainer_check_activations(loom_trainer *tr, double loss, loom_error *err) {
  int64_t batch = trainer_batch(tr);
  if (isfinite(loss)) return LOOM_OK;
  const net_node *nodes = net_plan_nodes(tr->net);
  for (int k = 0; k < tr->n_nodes; k++) {
    const net_node *n = &nodes[k];
    if (!n->enabled) continue;
    int64_t per = loom_shape_numel(&n->out);
    int64_t i = trainer_first_nonfinite(trainer_node_out(tr, k), batch * per);
    if (i >= 0) return trainer_report_nonfinite(tr, LOOM_NONFINITE_ACTIVATION, TRAINER_BAD_OUTPUT, k, -1, i, per, err);
  }
  tr->last.nonfinite = LOOM_NONFINITE_LOSS;
  return trainer_report_nonfinite(tr, LOOM_NONFINITE_LOSS, TRAINER_BAD_LOSS, -1, -1, 0, 0, err);
}

int trainer_gradient_pass(loom_trainer *tr, loom_error *err) {
  int64_t batch = trainer_batch(tr);
  /* Backward computes the last layer first, so that is where a NaN appears first. */
  const net_node *nodes = net_plan_nodes(tr->net);
  for (int k = tr->n_nodes - 1; k >= 0; k--) {
    const net_node *n = &nodes[k];
    int64_t per = loom_shape_numel(&n->out);
    const float *grad_out = trainer_node_grad_out(tr, k);
    double og = train_sum_squares_on(tr->pool, grad_out, batch * per);
    tr->lstats[k].out_grad_norm = sqrt(og);
    if (!isfinite(og))
      return trainer_report_nonfinite(tr, LOOM_NONFINITE_GRADIENT, TRAINER_BAD_OUTPUT_GRADIENT, k, -1,
                                      trainer_first_nonfinite(grad_out, batch * per), per, err);
    for (int t = 0; t < tr->n_tensors; t++) {
      train_tensor *tt = &tr->tensors[t];
      if (tt->node != k) continue;
      tt->grad_sq = train_sum_squares_on(tr->pool, tt->grad, tt->n);
      if (!isfinite(tt->grad_sq))
        return trainer_report_nonfinite(tr, LOOM_NONFINITE_GRADIENT, TRAINER_BAD_GRADIENT, k, t,
                                        trainer_first_nonfinite(tt->grad, tt->n), 0, err);
    }
  }
  return LOOM_OK;
}

int trainer_weight_pass(loom_trainer *tr, loom_error *err) {
  for (int t = 0; t < tr->n_tensors; t++) {
    train_tensor *tt = &tr->tensors[t];
    const float *m = loom_weights_master(tt->w);
    if (tt->backed_up) {
      train_sum_squares_diff_on(tr->pool, m, tr->before + tt->offset, tt->n, &tt->weight_sq, &tt->update_sq);
    } else {
      tt->weight_sq = train_sum_squares_on(tr->pool, m, tt->n);
      tt->update_sq = 0.0;
    }
    if (!isfinite(tt->weight_sq))
      return trainer_report_nonfinite(tr, LOOM_NONFINITE_WEIGHTS, TRAINER_BAD_UPDATED, tt->node, t,
                                      trainer_first_nonfinite(m, tt->n), 0, err);
  }
  return LOOM_OK;
}

void trainer_refresh_tensors(loom_trainer *tr) {
  loom_net *net = tr->net;
  int t = 0;
  int64_t offset = 0;
  const net_node *nodes = net_plan_nodes(net);
  for (int k = 0; k < tr->n_nodes; k++) {
    loom_layer *l = nodes[k].layer;
    int nw = loom_layer_n_weights(l);
    for (int i = 0; i < nw && t < tr->n_tensors; i++, t++) {
      train_tensor *tt = &tr->tensors[t];
      tt->w = loom_layer_weights(l, i);
      tt->grad = loom_layer_grad(l, i);
      tt->n = loom_weights_count(tt->w);
      tt->node = k;
      tt->index = i;
      tt->offset = offset;
      offset += tt->n;
      tr->masters[t] = loom_weights_master(tt->w);
      tr->grads[t] = nodes[k].enabled ? tt->grad : NULL;
      tr->sizes[t] = tt->n;
    }
  }
}

void trainer_layer_norms(loom_trainer *tr) {
  for (int k = 0; k < tr->n_nodes; k++)
    tr->lstats[k].grad_norm = tr->lstats[k].weight_norm = tr->lstats[k].update_norm = 0.0;
  for (int t = 0; t < tr->n_tensors; t++) {
    const train_tensor *tt = &tr->tensors[t];
    loom_layer_stats *s = &tr->lstats[tt->node];
    s->grad_norm += tt->grad_sq;
    s->weight_norm += tt->weight_sq;
    s->update_norm += tt->update_sq;
  }
  for (int k = 0; k < tr->n_nodes; k++) {
    loom_layer_stats *s = &tr->lstats[k];
    s->grad_norm = sqrt(s->grad_norm);
    s->weight_norm = sqrt(s->weight_norm);
    s->update_norm = sqrt(s->update_norm);
    s->update_ratio = s->weight_norm > 0 ? s->update_norm / s->weight_norm : 0.0;
  }
}

int trainer_morph_updated(loom_trainer *tr, loom_error *err) {
  for (int t = 0; t < tr->n_tensors; t++) {
    /* trainer_weight_pass, just before, found every updated master finite */
    if (tr->tensors[t].backed_up) loom_weights_touch_finite(tr->tensors[t].w);
    /* quant_error is cached per store: only a store morphed anew needs it again */
    bool stale = !loom_weights_packed(tr->tensors[t].w, NULL);
    int rc = loom_weights_morph_on(tr->tensors[t].w, train_step_pool(tr), err);
    if (!rc && stale) rc = trainer_quant_refresh(tr, t, err);
    if (rc) return rc;
  }
  return LOOM_OK;
}

int trainer_morph_all(loom_trainer *tr, loom_error *err) {
  for (int t = 0; t < tr->n_tensors; t++) {
    loom_weights_touch(tr->tensors[t].w);
    int rc = loom_weights_morph_on(tr->tensors[t].w, train_step_pool(tr), err);
    if (!rc) rc = trainer_quant_refresh(tr, t, err);
    if (rc) return rc;
  }
  return LOOM_OK;
}
