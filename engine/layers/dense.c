/*
 * dense: y = x·Wᵀ + b with W of shape out_features × in_features (PyTorch's
 * nn.Linear layout). The whole per-sample input is one vector of in_features
 * values; alternatively, when the input has rank >= 2 and its last dimension
 * is in_features, the layer applies to every position ([tokens, features] →
 * [tokens, out_features]). See docs/network.md.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "kernels/matmul.h"
#include "layers/registry.h"

enum { P_IN, P_OUT, P_BIAS };
enum { W_WEIGHT, W_BIAS };

#define DENSE_MAX_FEATURES 16777216.0 /* 2^24 */

static const loom_param_spec dense_params[] = {
  {"in_features", N_("Input features"), N_("Number of values each sample brings in"), LOOM_PARAM_INT, 1,
   DENSE_MAX_FEATURES, 16, NULL, 0},
  {"out_features", N_("Output features"), N_("Number of values the layer produces per sample"), LOOM_PARAM_INT, 1,
   DENSE_MAX_FEATURES, 16, NULL, 0},
  {"bias", N_("Bias"), N_("Add a learned offset to every output"), LOOM_PARAM_BOOL, 0, 1, 1, NULL, 0},
};

/* Rows of the product per sample: 1 when the input is flattened, else the
 * number of positions sharing the weights. */
static int64_t dense_positions(const loom_layer *l) {
  return loom_shape_numel(&l->in_shape) / layer_int(l, P_IN);
}

static int dense_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  int64_t n_in = layer_int(l, P_IN), n_out = layer_int(l, P_OUT);
  int64_t numel = loom_shape_numel(in);
  char where[128], shape_text[96];
  if (numel == n_in) {
    l->out_shape = loom_shape_1d(n_out);
  } else if (in->rank >= 2 && in->d[in->rank - 1] == n_in) {
    l->out_shape = *in;
    l->out_shape.d[in->rank - 1] = n_out;
  } else {
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: in_features is %lld but the input %s has %lld values (and its last dimension "
                            "is not %lld either)"),
                          layer_where(l, where, sizeof where), (long long)n_in,
                          loom_shape_format(in, shape_text, sizeof shape_text), (long long)numel, (long long)n_in);
  }
  int rc = layer_weights_ensure(l, W_WEIGHT, "weight", n_out, n_in, true, LAYER_INIT_KAIMING_UNIFORM, n_in, seed, err);
  if (rc) return rc;
  if (layer_int(l, P_BIAS)) {
    rc = layer_weights_ensure(l, W_BIAS, "bias", 1, n_out, false, LAYER_INIT_KAIMING_UNIFORM, n_in, seed, err);
    if (rc) return rc;
  } else {
    layer_weights_truncate(l, 1);
  }
  return LOOM_OK;
}

typedef struct {
  float *y;
  const float *b;
  int64_t n_out;
} bias_job;

/* y[r] += b for rows [r0, r1): each output gets its one addition after the
 * product, as before, whichever thread does it. */
static void add_bias_rows(void *arg, int64_t r0, int64_t r1) {
  const bias_job *j = arg;
  for (int64_t r = r0; r < r1; r++) {
    float *yr = j->y + r * j->n_out;
    for (int64_t o = 0; o < j->n_out; o++) yr[o] += j->b[o];
  }
}

static int dense_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                         loom_error *err) {
  int64_t n_out = layer_int(l, P_OUT);
  int64_t m = batch * dense_positions(l);
  /* At rest from the packed codes (layer-product.c, docs/kernels.md). */
  int rc = layer_weight_product(l, W_WEIGHT, ctx ? ctx->pool : NULL, x, m, y, err);
  if (rc) return rc;
  if (l->n_weights > W_BIAS) {
    const float *b = layer_weight_values(l, W_BIAS, err);
    if (!b) return err ? err->code : LOOM_ERR_INVALID;
    /* over the pool in ranges of about 16K outputs: on the calling thread
     * alone, over outputs the other threads had just written, this pass
     * held the 2-thread forward of a 1024 → 1024 layer at batch 64 to a
     * speed-up of 1.64, 1.86 now (docs/sgemm.md) */
    bias_job job = {.y = y, .b = b, .n_out = n_out};
    loom_pool_for(ctx ? ctx->pool : NULL, m, n_out > 0 ? (16384 + n_out - 1) / n_out : m, add_bias_rows, &job);
  }
  return LOOM_OK;
}

static int dense_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                          float *dx, int64_t batch, loom_error *err) {
  int64_t n_in = layer_int(l, P_IN), n_out = layer_int(l, P_OUT);
  int64_t m = batch * dense_positions(l);
  loom_pool *pool = ctx ? ctx->pool : NULL;
  /* dW += dyᵀ·x: each weight sums over the rows in ascending order. */
  loom_sgemm(pool, true, false, n_out, n_in, m, dy, n_out, x, n_in, true, l->grad[W_WEIGHT], n_in);
  if (l->n_weights > W_BIAS) {
    float *db = l->grad[W_BIAS];
    for (int64_t r = 0; r < m; r++) {
      const float *dyr = dy + r * n_out;
      for (int64_t o = 0; o < n_out; o++) db[o] += dyr[o];
    }
  }
  if (dx) {
    const float *w = layer_weight_values_on(l, W_WEIGHT, pool, err);
    if (!w) return err ? err->code : LOOM_ERR_INVALID;
    loom_sgemm(pool, false, false, m, n_in, n_out, dy, n_out, w, n_in, false, dx, n_in);
  }
  return LOOM_OK;
}

static int dense_adapt(loom_layer *l, const loom_shape *in, loom_error *err) {
  int64_t numel = loom_shape_numel(in);
  char where[128];
  if (numel < 1 || numel > (int64_t)DENSE_MAX_FEATURES)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: an input of %lld values is outside in_features' range 1…%lld"),
                          layer_where(l, where, sizeof where), (long long)numel, (long long)DENSE_MAX_FEATURES);
  return loom_layer_set_int(l, "in_features", numel, err);
}

static int64_t dense_flops(const loom_layer *l) {
  int64_t n_in = layer_int(l, P_IN), n_out = layer_int(l, P_OUT);
  int64_t pos = l->built ? dense_positions(l) : 1;
  return pos * (2 * n_in * n_out + (layer_int(l, P_BIAS) ? n_out : 0));
}

static char *dense_describe(const loom_layer *l, char *buf, size_t size) {
  /* TRANSLATORS: appended to a layer summary such as "dense 50→40" when the layer has a bias. */
  const char *bias = layer_int(l, P_BIAS) ? _(", bias") : "";
  snprintf(buf, size, "dense %lld→%lld%s", (long long)layer_int(l, P_IN), (long long)layer_int(l, P_OUT), bias);
  return buf;
}

const loom_layer_type loom_layer_dense = {
  .id = 1,
  .name = "dense",
  .label = N_("Dense"),
  .group = N_("Linear"),
  .description = N_("Fully connected layer: every output is a weighted sum of all inputs plus a bias."),
  .flags = LOOM_LAYER_WEIGHTED,
  .params = dense_params,
  .n_params = (int)(sizeof dense_params / sizeof dense_params[0]),
  .build = dense_build,
  .forward = dense_forward,
  .backward = dense_backward,
  .adapt = dense_adapt,
  .flops = dense_flops,
  .describe = dense_describe,
};
