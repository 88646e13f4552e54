/*
 * attention: multi-head self-attention over a sequence [T × d_model].
 *
 *   q = x·Wqᵀ (+bq), k = x·Wkᵀ (+bk), v = x·Wvᵀ (+bv)      (torch Linear layout)
 *   per head: q, k ← RMSNorm(q), RMSNorm(k)                  (qk_norm, weights q_norm/k_norm [head_dim])
 *             q, k ← RoPE(q, pos), RoPE(k, pos)               (half-split or interleaved pairs)
 *   s_ij = q_i·k_j / √head_dim, masked (causal j > i, key padding) to −∞
 *   o_i = Σ_j softmax_j(s_i)·v_j;   y = [o heads]·Woᵀ (+bo)
 *
 * Grouped-query attention: kv_heads divides heads; query head h uses key/value
 * head h / (heads / kv_heads). A query row whose every key is masked gets
 * zeros (PyTorch gives NaN there). With cache_capacity > 0 the keys and
 * values (after norm and RoPE) of every step are kept; a call appends its
 * steps at positions len…len+T−1 and attends over all cached steps, so token
 * by token decoding equals the full-sequence forward. Backward covers the
 * steps of the last call and needs it to have started from an empty cache.
 * Formulas, weight names and the RoPE convention: docs/layers.md. The
 * rotation angles are computed in float64; the projections are loom_sgemm
 * calls, the attention between them is attention-core.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "kernels/matmul.h"
#include "layers/attention-impl.h"
#include "layers/registry.h"
#include "layers/sequence-impl.h"

static const char *const rope_choices[] = {"none", "half", "interleaved", NULL};

static const loom_param_spec attention_params[] = {
  {"d_model", N_("Model width"), N_("Features of each position, in and out"), LOOM_PARAM_INT, 1, ATT_MAX_FEATURES, 32,
   NULL, 0},
  {"heads", N_("Heads"), N_("Query heads"), LOOM_PARAM_INT, 1, 4096, 4, NULL, 0},
  {"kv_heads", N_("Key/value heads"), N_("Key and value heads, shared by groups of query heads; 0 = as many as heads"),
   LOOM_PARAM_INT, 0, 4096, 0, NULL, 0},
  {"head_dim", N_("Head width"), N_("Features per head; 0 = d_model / heads"), LOOM_PARAM_INT, 0, 65536, 0, NULL, 0},
  {"causal", N_("Causal"), N_("Each position attends only to itself and earlier positions"), LOOM_PARAM_BOOL, 0, 1, 1,
   NULL, 0},
  {"bias", N_("Bias"), N_("Learn a bias for the q, k, v and output projections"), LOOM_PARAM_BOOL, 0, 1, 0, NULL, 0},
  {"rope", N_("Rotary embedding"),
   N_("Rotate queries and keys by their position: none, half (pairs j and j + head_dim/2, as in Llama) or "
      "interleaved (pairs 2j and 2j+1)"),
   LOOM_PARAM_ENUM, 0, 2, ATT_ROPE_NONE, rope_choices, 0},
  {"rope_base", N_("Rotary base"), N_("The base of the rotation frequencies"), LOOM_PARAM_FLOAT, 1.0, 1e9, 10000.0,
   NULL, 0},
  {"qk_norm", N_("Q/K norm"), N_("RMS-normalise each head's query and key (learned scale per feature)"),
   LOOM_PARAM_BOOL, 0, 1, 0, NULL, 0},
  {"qk_norm_eps", N_("Q/K norm epsilon"), N_("Added to the mean square before the square root"), LOOM_PARAM_FLOAT,
   1e-12, 1.0, 1e-6, NULL, 0},
  {"cache_capacity", N_("KV cache"),
   N_("Steps the key/value cache holds for incremental decoding; 0 = no cache, every call is a whole sequence"),
   LOOM_PARAM_INT, 0, 1048576, 0, NULL, 0, .file_optional = true},
};

static int att_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  char where[128], shape[96];
  layer_where(l, where, sizeof where);
  int64_t d = layer_int(l, P_D), h = layer_int(l, P_HEADS), kv = att_kv_heads(l), hd = att_head_dim(l);
  if (!((in->rank == 2 || in->rank == 1) && in->d[in->rank - 1] == d))
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: expects a sequence [steps × %lld] but the input is %s"), where,
                          (long long)d, loom_shape_format(in, shape, sizeof shape));
  if (layer_int(l, P_HEAD_DIM) == 0 && d % h != 0)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("%s: d_model %lld is not divisible by %lld heads; set head_dim or another head count"),
                          where, (long long)d, (long long)h);
  if (kv > h || h % kv != 0)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: kv_heads is %lld; it must divide heads (%lld)"), where,
                          (long long)kv, (long long)h);
  if (layer_int(l, P_ROPE) != ATT_ROPE_NONE && hd % 2 != 0)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: rotary embedding needs an even head_dim, got %lld"), where,
                          (long long)hd);
  int64_t steps = in->rank == 2 ? in->d[0] : 1, cap = layer_int(l, P_CACHE);
  if (cap > 0 && steps > cap)
    return loom_error_set(err, LOOM_ERR_RANGE, _("%s: a sequence of %lld steps does not fit the KV cache of %lld"),
                          where, (long long)steps, (long long)cap);
  l->out_shape = *in;
  int64_t qw = h * hd, kw = kv * hd;
  int rc = layer_weights_ensure(l, W_Q, "q_proj.weight", qw, d, true, LAYER_INIT_KAIMING_UNIFORM, d, seed, err);
  if (!rc) rc = layer_weights_ensure(l, W_K, "k_proj.weight", kw, d, true, LAYER_INIT_KAIMING_UNIFORM, d, seed, err);
  if (!rc) rc = layer_weights_ensure(l, W_V, "v_proj.weight", kw, d, true, LAYER_INIT_KAIMING_UNIFORM, d, seed, err);
  if (!rc) rc = layer_weights_ensure(l, W_O, "o_proj.weight", d, qw, true, LAYER_INIT_KAIMING_UNIFORM, qw, seed, err);
  if (rc) return rc;
  int n = 4;
  if (layer_int(l, P_BIAS)) {
    rc = layer_weights_ensure(l, n++, "q_proj.bias", 1, qw, false, LAYER_INIT_KAIMING_UNIFORM, d, seed, err);
    if (!rc) rc = layer_weights_ensure(l, n++, "k_proj.bias", 1, kw, false, LAYER_INIT_KAIMING_UNIFORM, d, seed, err);
    if (!rc) rc = layer_weights_ensure(l, n++, "v_proj.bias", 1, kw, false, LAYER_INIT_KAIMING_UNIFORM, d, seed, err);
    if (!rc) rc = layer_weights_ensure(l, n++, "o_proj.bias", 1, d, false, LAYER_INIT_KAIMING_UNIFORM, qw, seed, err);
  }
  if (!rc && layer_int(l, P_QK_NORM)) {
    rc = layer_weights_ensure(l, n++, "q_norm.weight", 1, hd, false, LAYER_INIT_ONE, hd, seed, err);
    if (!rc) rc = layer_weights_ensure(l, n++, "k_norm.weight", 1, hd, false, LAYER_INIT_ONE, hd, seed, err);
  }
  if (rc) return rc;
  layer_weights_truncate(l, n);
  /* A rebuilt layer starts with an empty cache: the old steps belong to other weights or shapes. */
  if (l->state) ((att_state *)l->state)->len = 0;
  return LOOM_OK;
}

/* ---- forward ------------------------------------------------------------ */

/* acc[j] += v[j]. Blocks of 16 with restrict: -O2 vectorizes only loops of
 * a known trip count. */
static void add_row(float *restrict acc, const float *restrict v, int64_t n) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int k = 0; k < 16; k++) acc[j + k] += v[j + k];
  for (; j < n; j++) acc[j] += v[j];
}

/* out[r·n + j] += b[j]. */
static void add_bias(float *out, int64_t rows, int64_t n, const float *b) {
  for (int64_t r = 0; r < rows; r++) add_row(out + r * n, b, n);
}

/* acc[j] += Σ_r m[r·n + j], rows in ascending order (a bias gradient). */
static void add_columns(float *acc, const float *m, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++) add_row(acc, m + r * n, n);
}

/* One loom_sgemm call (kernels/matmul.h). */
typedef struct att_gemm {
  bool trans_a, trans_b;
  int64_t m, n, k;
  const float *a;
  int64_t lda;
  const float *b;
  int64_t ldb;
  bool accumulate;
  float *c;
  int64_t ldc;
} att_gemm;

/* Products in order into one output, then the bias added to the rows of the
 * first's output, or the column sums of grad_rows added to a bias gradient. */
typedef struct att_task {
  att_gemm gemm[3];
  int count;
  const float *bias;
  float *bias_grad;
  const float *grad_rows; /* grad_m × grad_n */
  int64_t grad_m, grad_n;
} att_task;

static void run_task(loom_pool *pool, const att_task *t) {
  for (int i = 0; i < t->count; i++) {
    const att_gemm *g = &t->gemm[i];
    loom_sgemm(pool, g->trans_a, g->trans_b, g->m, g->n, g->k, g->a, g->lda, g->b, g->ldb, g->accumulate, g->c,
               g->ldc);
  }
  if (t->bias) add_bias(t->gemm[0].c, t->gemm[0].m, t->gemm[0].n, t->bias);
  if (t->bias_grad) add_columns(t->bias_grad, t->grad_rows, t->grad_m, t->grad_n);
}

static void task_range(void *arg, int64_t begin, int64_t end) {
  const att_task *tasks = arg;
  for (int64_t i = begin; i < end; i++) run_task(NULL, &tasks[i]);
}

/*
 * Independent tasks side by side on the pool when every product is small
 * enough that loom_sgemm would run it on one thread anyway (about 16M
 * multiply-adds, its tile); larger ones are split by loom_sgemm itself.
 * loom_sgemm gives the same bits on any pool, so the choice changes only
 * the speed.
 */
static void run_tasks(loom_pool *pool, const att_task *tasks, int count) {
  bool small = loom_pool_size(pool) > 1;
  for (int t = 0; t < count; t++)
    for (int i = 0; i < tasks[t].count; i++) {
      const att_gemm *g = &tasks[t].gemm[i];
      small = small && g->k > 0 && g->m <= ((int64_t)1 << 24) / g->k / (g->n > 0 ? g->n : 1);
    }
  if (small) {
    loom_pool_for(pool, count, 1, task_range, (void *)tasks);
    return;
  }
  for (int t = 0; t < count; t++) run_task(pool, &tasks[t]);
}

/* The projection out = x·Wᵀ + b of rows × d inputs to n features. */
static att_task projection(const float *x, int64_t rows, int64_t d, const float *w, const float *b, int64_t n,
                           float *out) {
  return (att_task){.gemm = {{false, true, rows, n, d, x, d, w, d, false, out, n}}, .count = 1, .bias = b};
}

/* RMS-normalises each head vector of `rows` rows of nh heads in place
 * (raw keeps the input, rstd gets 1/rms per head vector). */
static void heads_rmsnorm(float *v, float *raw, float *rstd, const float *w, int64_t rows, int64_t nh, int64_t hd,
                          double eps) {
  for (int64_t r = 0; r < rows * nh; r++) {
    float *p = v + r * hd;
    memcpy(raw + r * hd, p, (size_t)hd * sizeof *p);
    double ss = 0.0;
    for (int64_t j = 0; j < hd; j++) ss += (double)p[j] * p[j];
    double inv = 1.0 / sqrt(ss / (double)hd + eps);
    rstd[r] = (float)inv;
    for (int64_t j = 0; j < hd; j++) p[j] = (float)((double)p[j] * inv) * w[j];
  }
}

static int att_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch, loom_error *err) {
  loom_pool *pool = ctx ? ctx->pool : NULL;
  char where[128];
  att_state *s = att_get_state(l, err);
  if (!s) return LOOM_ERR_NOMEM;
  att_dims g = att_dims_of(l);
  int64_t cap = layer_int(l, P_CACHE), steps = att_steps(l);
  int64_t offset = cap > 0 ? s->len : 0;
  if (cap > 0 && offset > 0 && s->cache_batch != batch)
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: the KV cache holds steps of a batch of %lld, not %lld; reset it first"),
                          layer_where(l, where, sizeof where), (long long)s->cache_batch, (long long)batch);
  if (cap > 0 && offset + steps > cap)
    return loom_error_set(err, LOOM_ERR_RANGE,
                          _("%s: the KV cache holds %lld of %lld steps; %lld more do not fit (reset it or raise "
                            "cache_capacity)"),
                          layer_where(l, where, sizeof where), (long long)offset, (long long)cap, (long long)steps);
  int64_t keys = offset + steps, kv_steps = cap > 0 ? cap : steps;
  if (s->mask_batch > 0 && (s->mask_batch != batch || s->mask_keys != keys))
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: the key padding mask is for %lld × %lld keys but this call has %lld × %lld"),
                          layer_where(l, where, sizeof where), (long long)s->mask_batch, (long long)s->mask_keys,
                          (long long)batch, (long long)keys);
  int rc = att_reserve(l, s, batch, steps, keys, kv_steps, err);
  if (rc) return rc;
  /* At rest the four projections come from their packed codes, one after
   * the other through layer_weight_product (layer-product.c); biases and
   * norm weights are never quantized. */
  bool rest = false;
  for (int i = W_Q; i <= W_O; i++) rest = rest || layer_weight_at_rest(l, i);
  const float *w[ATT_MAX_W] = {NULL};
  for (int i = rest ? W_O + 1 : 0; i < l->n_weights; i++)
    if (!(w[i] = layer_weight_values_on(l, i, pool, err))) return err ? err->code : LOOM_ERR_INVALID;
  int bi = att_bias_index(l), ni = att_norm_index(l);
  int64_t rows = batch * steps;
  /* Without a cache the key/value buffers hold exactly this call's rows: project into them. */
  float *k_new = cap > 0 ? s->k_new : s->k, *v_new = cap > 0 ? s->v_new : s->v;
  if (rest) {
    float *out[3] = {s->q, k_new, v_new};
    const int64_t width[3] = {g.qw, g.kw, g.kw};
    for (int i = 0; i < 3; i++) {
      if ((rc = layer_weight_product(l, W_Q + i, pool, x, rows, out[i], err))) return rc;
      if (bi >= 0) add_bias(out[i], rows, width[i], w[bi + i]);
    }
  } else {
    att_task qkv[3];
    qkv[0] = projection(x, rows, g.d, w[W_Q], bi >= 0 ? w[bi] : NULL, g.qw, s->q);
    qkv[1] = projection(x, rows, g.d, w[W_K], bi >= 0 ? w[bi + 1] : NULL, g.kw, k_new);
    qkv[2] = projection(x, rows, g.d, w[W_V], bi >= 0 ? w[bi + 2] : NULL, g.kw, v_new);
    run_tasks(pool, qkv, 3);
  }
  if (ni >= 0) {
    double eps = layer_float(l, P_QK_EPS);
    heads_rmsnorm(s->q, s->q_raw, s->q_rstd, w[ni], rows, g.h, g.hd, eps);
    heads_rmsnorm(k_new, s->k_raw, s->k_rstd, w[ni + 1], rows, g.kv, g.hd, eps);
  }
  if (layer_int(l, P_ROPE) != ATT_ROPE_NONE) {
    att_rope_table(l, s, offset, steps);
    att_rope_apply(l, s, s->q, batch, steps, g.h, 1.0f);
    att_rope_apply(l, s, k_new, batch, steps, g.kv, 1.0f);
  }
  /* With a cache: this call's keys and values into their rows of it. */
  for (int64_t b = 0; b < batch && cap > 0; b++) {
    size_t n = (size_t)(steps * g.kw) * sizeof(float);
    memcpy(s->k + (b * kv_steps + offset) * g.kw, s->k_new + b * steps * g.kw, n);
    memcpy(s->v + (b * kv_steps + offset) * g.kw, s->v_new + b * steps * g.kw, n);
  }
  s->batch = batch;
  s->steps = steps;
  s->offset = offset;
  s->keys = keys;
  s->kv_steps = kv_steps;
  att_scores(l, s, pool);
  if ((rc = layer_weight_product(l, W_O, pool, s->o, rows, y, err))) return rc;
  if (bi >= 0) add_bias(y, rows, g.d, w[bi + 3]);
  if (cap > 0) {
    s->len = keys;
    s->cache_batch = batch;
  }
  return LOOM_OK;
}

/* ---- backward ----------------------------------------------------------- */

/* dx of a per-head RMSNorm (y = x·r·w): dx = r·(g·w − x̂·mean(g·w·x̂)), dw += g·x̂. */
static void heads_rmsnorm_backward(float *g, const float *raw, const float *rstd, const float *w, float *dw,
                                   int64_t rows, int64_t nh, int64_t hd) {
  for (int64_t r = 0; r < rows * nh; r++) {
    float *gr = g + r * hd;
    const float *xr = raw + r * hd;
    double rs = rstd[r], dot = 0.0;
    for (int64_t j = 0; j < hd; j++) {
      double xh = (double)xr[j] * rs;
      dw[j] += (float)(gr[j] * xh);
      dot += (double)gr[j] * w[j] * xh;
    }
    dot /= (double)hd;
    for (int64_t j = 0; j < hd; j++) {
      double xh = (double)xr[j] * rs;
      gr[j] = (float)(rs * ((double)gr[j] * w[j] - xh * dot));
    }
  }
}

static int att_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy, float *dx,
                        int64_t batch, loom_error *err) {
  loom_pool *pool = ctx ? ctx->pool : NULL;
  char where[128];
  att_state *s = l->state;
  if (!s || s->batch != batch || s->steps != att_steps(l))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: backward needs the forward pass of the same batch first"),
                          layer_where(l, where, sizeof where));
  if (s->offset > 0)
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                          _("%s: backward covers one whole sequence; the last forward continued a KV cache of %lld "
                            "steps (reset it before training)"),
                          layer_where(l, where, sizeof where), (long long)s->offset);
  att_dims g = att_dims_of(l);
  const float *w[ATT_MAX_W] = {NULL};
  for (int i = 0; i < l->n_weights; i++)
    if (!(w[i] = layer_weight_values_on(l, i, pool, err))) return err ? err->code : LOOM_ERR_INVALID;
  int bi = att_bias_index(l), ni = att_norm_index(l);
  int64_t rows = batch * s->steps;
  /* Output projection: its weight (and bias) gradient beside the heads' output gradient. */
  att_task out[2] = {
    {.gemm = {{true, false, g.d, g.qw, rows, dy, g.d, s->o, g.qw, true, l->grad[W_O], g.qw}},
     .count = 1,
     .bias_grad = bi >= 0 ? l->grad[bi + 3] : NULL,
     .grad_rows = dy,
     .grad_m = rows,
     .grad_n = g.d},
    {.gemm = {{false, false, rows, g.qw, g.d, dy, g.d, w[W_O], g.qw, false, s->d_o, g.qw}}, .count = 1},
  };
  run_tasks(pool, out, 2);
  att_scores_backward(l, s, pool);
  /* Undo RoPE (rotate back) and the norms, then the projections. */
  if (layer_int(l, P_ROPE) != ATT_ROPE_NONE) {
    att_rope_apply(l, s, s->dq, batch, s->steps, g.h, -1.0f);
    att_rope_apply(l, s, s->dk, batch, s->steps, g.kv, -1.0f);
  }
  if (ni >= 0) {
    heads_rmsnorm_backward(s->dq, s->q_raw, s->q_rstd, w[ni], l->grad[ni], rows, g.h, g.hd);
    heads_rmsnorm_backward(s->dk, s->k_raw, s->k_rstd, w[ni + 1], l->grad[ni + 1], rows, g.kv, g.hd);
  }
  /* The input gradient sums the three products in order, in one task beside the three weight gradients. */
  const float *grads[3] = {s->dq, s->dk, s->dv};
  const int64_t widths[3] = {g.qw, g.kw, g.kw};
  att_task in[4] = {{.count = dx ? 3 : 0}};
  for (int p = 0; p < 3; p++) {
    in[0].gemm[p] = (att_gemm){false, false, rows, g.d, widths[p], grads[p], widths[p], w[W_Q + p], g.d, p > 0, dx, g.d};
    in[1 + p] = (att_task){
      .gemm = {{true, false, widths[p], g.d, rows, grads[p], widths[p], x, g.d, true, l->grad[W_Q + p], g.d}},
      .count = 1,
      .bias_grad = bi >= 0 ? l->grad[bi + p] : NULL,
      .grad_rows = grads[p],
      .grad_m = rows,
      .grad_n = widths[p]};
  }
  run_tasks(pool, in, 4);
  return LOOM_OK;
}

static int att_adapt(loom_layer *l, const loom_shape *in, loom_error *err) {
  char where[128];
  if (in->rank < 1)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: the input shape is not set"), layer_where(l, where, sizeof where));
  int64_t d = in->d[in->rank - 1];
  int rc = loom_layer_set_int(l, "d_model", d, err);
  if (rc || layer_int(l, P_HEAD_DIM) > 0) return rc;
  /* Keep head_dim automatic: the most heads (up to the current count) that divide the width,
   * with kv_heads following when it no longer divides them. */
  int64_t h = layer_int(l, P_HEADS);
  while (h > 1 && d % h != 0) h--;
  rc = loom_layer_set_int(l, "heads", h, err);
  if (!rc && h % att_kv_heads(l) != 0) rc = loom_layer_set_int(l, "kv_heads", 0, err);
  return rc;
}

static int64_t att_flops(const loom_layer *l) {
  att_dims g = att_dims_of(l);
  int64_t t = l->built ? att_steps(l) : 1;
  return t * (2 * g.d * (2 * g.qw + 2 * g.kw)) + 4 * g.h * g.hd * t * t;
}

static char *att_describe(const loom_layer *l, char *buf, size_t size) {
  att_dims g = att_dims_of(l);
  snprintf(buf, size, "attention d=%lld, %lld heads (%lld kv) × %lld%s%s", (long long)g.d, (long long)g.h,
           (long long)g.kv, (long long)g.hd, layer_int(l, P_CAUSAL) ? ", causal" : "",
           layer_int(l, P_ROPE) != ATT_ROPE_NONE ? ", RoPE" : "");
  return buf;
}

/* ---- state across calls ------------------------------------------------- */

int attention_set_key_padding(loom_layer *l, const uint8_t *mask, int64_t batch, int64_t keys, loom_error *err) {
  char where[128];
  att_state *s = att_get_state(l, err);
  if (!s) return LOOM_ERR_NOMEM;
  if (!mask) {
    s->mask_batch = 0;
    return LOOM_OK;
  }
  if (batch < 1 || keys < 1 || keys > (int64_t)(SIZE_MAX / 2) / batch)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: a key padding mask of %lld × %lld is not valid"),
                          layer_where(l, where, sizeof where), (long long)batch, (long long)keys);
  uint8_t *m = realloc(s->mask, (size_t)(batch * keys));
  if (!m) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a key padding mask"));
  memcpy(m, mask, (size_t)(batch * keys));
  s->mask = m;
  s->mask_batch = batch;
  s->mask_keys = keys;
  return LOOM_OK;
}

int64_t attention_cache_length(const loom_layer *l) {
  const att_state *s = l->state;
  return s && layer_int(l, P_CACHE) > 0 ? s->len : 0;
}

void attention_reset(loom_layer *l) {
  att_state *s = l->state;
  if (s) s->len = 0;
}

const loom_layer_type loom_layer_attention = {
  .id = 160,
  .name = "attention",
  .label = N_("Attention"),
  .group = N_("Transformer"),
  .description = N_("Multi-head self-attention with grouped key/value heads, optional causal mask, rotary position "
                    "embedding, Q/K normalisation and a KV cache for decoding."),
  .flags = LOOM_LAYER_WEIGHTED,
  .params = attention_params,
  .n_params = (int)(sizeof attention_params / sizeof attention_params[0]),
  .build = att_build,
  .forward = att_forward,
  .backward = att_backward,
  .adapt = att_adapt,
  .flops = att_flops,
  .free_state = att_free_state,
  .describe = att_describe,
};
