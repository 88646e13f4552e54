/*
 * swiglu: the gated feed-forward block of Llama-style transformers,
 *
 *   y = down(act(gate(x)) · up(x)),   act = silu (SwiGLU) or relu² (a squared-ReLU GLU)
 *
 * gate_proj and up_proj are [hidden × d_model], down_proj [d_model × hidden],
 * in torch Linear layout and names (gate_proj.weight, up_proj.weight,
 * down_proj.weight, and .bias for each when bias is on). It applies to every
 * position: the input's last dimension is d_model ([d] or [tokens × d]).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "kernels/matmul.h"
#include "layers/registry.h"

enum { P_D, P_HIDDEN, P_BIAS, P_ACT };
enum { W_GATE, W_UP, W_DOWN, W_BGATE, W_BUP, W_BDOWN };
enum { ACT_SILU, ACT_RELU2 };

#define SWIGLU_MAX_FEATURES 1048576.0

static const char *const act_choices[] = {"silu", "relu2", NULL};

static const loom_param_spec swiglu_params[] = {
  {"d_model", N_("Model width"), N_("Features of each position, in and out"), LOOM_PARAM_INT, 1, SWIGLU_MAX_FEATURES,
   16, NULL, 0},
  {"hidden", N_("Hidden width"), N_("Features of the gated hidden layer"), LOOM_PARAM_INT, 1, SWIGLU_MAX_FEATURES, 64,
   NULL, 0},
  {"bias", N_("Bias"), N_("Learn a bias for each of the three projections"), LOOM_PARAM_BOOL, 0, 1, 0, NULL, 0},
  {"activation", N_("Activation"), N_("silu(gate)·up (SwiGLU) or relu(gate)²·up"), LOOM_PARAM_ENUM, 0, 1, ACT_SILU,
   act_choices, 0},
};

typedef struct swiglu_state {
  float *g, *u, *a, *dg, *du; /* rows × hidden */
  int64_t cap, rows;
} swiglu_state;

static int64_t positions(const loom_layer *l) { return loom_shape_numel(&l->in_shape) / layer_int(l, P_D); }

static int swiglu_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  char where[128], shape[96];
  int64_t d = layer_int(l, P_D), hid = layer_int(l, P_HIDDEN);
  if (in->rank < 1 || in->d[in->rank - 1] != d)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: d_model is %lld but the input %s ends in %lld features"),
                          layer_where(l, where, sizeof where), (long long)d, loom_shape_format(in, shape, sizeof shape),
                          (long long)(in->rank ? in->d[in->rank - 1] : 0));
  l->out_shape = *in;
  int rc = layer_weights_ensure(l, W_GATE, "gate_proj.weight", hid, d, true, LAYER_INIT_KAIMING_UNIFORM, d, seed, err);
  if (!rc) rc = layer_weights_ensure(l, W_UP, "up_proj.weight", hid, d, true, LAYER_INIT_KAIMING_UNIFORM, d, seed, err);
  if (!rc)
    rc = layer_weights_ensure(l, W_DOWN, "down_proj.weight", d, hid, true, LAYER_INIT_KAIMING_UNIFORM, hid, seed, err);
  if (rc) return rc;
  if (!layer_int(l, P_BIAS)) {
    layer_weights_truncate(l, 3);
    return LOOM_OK;
  }
  rc = layer_weights_ensure(l, W_BGATE, "gate_proj.bias", 1, hid, false, LAYER_INIT_KAIMING_UNIFORM, d, seed, err);
  if (!rc) rc = layer_weights_ensure(l, W_BUP, "up_proj.bias", 1, hid, false, LAYER_INIT_KAIMING_UNIFORM, d, seed, err);
  if (!rc)
    rc = layer_weights_ensure(l, W_BDOWN, "down_proj.bias", 1, d, false, LAYER_INIT_KAIMING_UNIFORM, hid, seed, err);
  return rc;
}

static void swiglu_free_state(loom_layer *l) {
  swiglu_state *s = l->state;
  if (!s) return;
  free(s->g);
  free(s->u);
  free(s->a);
  free(s->dg);
  free(s->du);
  free(s);
  l->state = NULL;
}

static int reserve(loom_layer *l, int64_t rows, loom_error *err) {
  char where[128];
  if (!l->state) l->state = calloc(1, sizeof(swiglu_state));
  swiglu_state *s = l->state;
  if (!s) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory running a %s layer"), l->type->name);
  int64_t hid = layer_int(l, P_HIDDEN);
  if (rows > (int64_t)(SIZE_MAX / sizeof(float) / 8) / hid)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: %lld positions are too many"), layer_where(l, where, sizeof where),
                          (long long)rows);
  int64_t n = rows * hid;
  if (n > s->cap) {
    float **bufs[] = {&s->g, &s->u, &s->a, &s->dg, &s->du};
    for (int i = 0; i < 5; i++) {
      free(*bufs[i]);
      *bufs[i] = malloc((size_t)n * sizeof(float));
      if (!*bufs[i]) {
        s->cap = 0;
        return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for %lld values"),
                              layer_where(l, where, sizeof where), (long long)n);
      }
    }
    s->cap = n;
  }
  s->rows = rows;
  return LOOM_OK;
}

static void add_bias(float *y, const float *b, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < n; j++) y[r * n + j] += b[j];
}

static float sigmoidf(float v) { return 1.0f / (1.0f + expf(-v)); }

static int swiglu_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                          loom_error *err) {
  loom_pool *pool = ctx ? ctx->pool : NULL;
  int64_t d = layer_int(l, P_D), hid = layer_int(l, P_HIDDEN), rows = batch * positions(l);
  int rc = reserve(l, rows, err);
  if (rc) return rc;
  swiglu_state *s = l->state;
  /* The projections through layer_weight_product: at rest from the packed
   * codes (layer-product.c); the biases are never quantized. */
  const float *w[6] = {NULL};
  for (int i = W_DOWN + 1; i < l->n_weights; i++)
    if (!(w[i] = layer_weight_values_on(l, i, pool, err))) return err ? err->code : LOOM_ERR_INVALID;
  if ((rc = layer_weight_product(l, W_GATE, pool, x, rows, s->g, err))) return rc;
  if ((rc = layer_weight_product(l, W_UP, pool, x, rows, s->u, err))) return rc;
  bool bias = l->n_weights > W_BDOWN;
  if (bias) {
    add_bias(s->g, w[W_BGATE], rows, hid);
    add_bias(s->u, w[W_BUP], rows, hid);
  }
  bool relu2 = layer_int(l, P_ACT) == ACT_RELU2;
  for (int64_t i = 0; i < rows * hid; i++) {
    float g = s->g[i], act = relu2 ? (g > 0.0f ? g * g : 0.0f) : g * sigmoidf(g);
    s->a[i] = act * s->u[i];
  }
  if ((rc = layer_weight_product(l, W_DOWN, pool, s->a, rows, y, err))) return rc;
  if (bias) add_bias(y, w[W_BDOWN], rows, d);
  return LOOM_OK;
}

static void bias_grad(float *db, const float *dy, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < n; j++) db[j] += dy[r * n + j];
}

static int swiglu_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                           float *dx, int64_t batch, loom_error *err) {
  loom_pool *pool = ctx ? ctx->pool : NULL;
  char where[128];
  int64_t d = layer_int(l, P_D), hid = layer_int(l, P_HIDDEN), rows = batch * positions(l);
  swiglu_state *s = l->state;
  if (!s || s->rows != rows)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: backward needs the forward pass of the same batch first"),
                          layer_where(l, where, sizeof where));
  const float *w[6] = {NULL};
  for (int i = 0; i < l->n_weights; i++)
    if (!(w[i] = layer_weight_values_on(l, i, pool, err))) return err ? err->code : LOOM_ERR_INVALID;
  bool bias = l->n_weights > W_BDOWN, relu2 = layer_int(l, P_ACT) == ACT_RELU2;
  loom_sgemm(pool, true, false, d, hid, rows, dy, d, s->a, hid, true, l->grad[W_DOWN], hid);
  if (bias) bias_grad(l->grad[W_BDOWN], dy, rows, d);
  /* dA into dg, then split into the gate's and up's gradients. */
  loom_sgemm(pool, false, false, rows, hid, d, dy, d, w[W_DOWN], hid, false, s->dg, hid);
  for (int64_t i = 0; i < rows * hid; i++) {
    float g = s->g[i], da = s->dg[i], act, dact;
    if (relu2) {
      act = g > 0.0f ? g * g : 0.0f;
      dact = g > 0.0f ? 2.0f * g : 0.0f;
    } else {
      float sg = sigmoidf(g);
      act = g * sg;
      dact = sg * (1.0f + g * (1.0f - sg));
    }
    s->du[i] = da * act;
    s->dg[i] = da * s->u[i] * dact;
  }
  loom_sgemm(pool, true, false, hid, d, rows, s->dg, hid, x, d, true, l->grad[W_GATE], d);
  loom_sgemm(pool, true, false, hid, d, rows, s->du, hid, x, d, true, l->grad[W_UP], d);
  if (bias) {
    bias_grad(l->grad[W_BGATE], s->dg, rows, hid);
    bias_grad(l->grad[W_BUP], s->du, rows, hid);
  }
  if (dx) {
    loom_sgemm(pool, false, false, rows, d, hid, s->dg, hid, w[W_GATE], d, false, dx, d);
    loom_sgemm(pool, false, false, rows, d, hid, s->du, hid, w[W_UP], d, true, dx, d);
  }
  return LOOM_OK;
}

static int swiglu_adapt(loom_layer *l, const loom_shape *in, loom_error *err) {
  char where[128];
  if (in->rank < 1)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: the input shape is not set"), layer_where(l, where, sizeof where));
  return loom_layer_set_int(l, "d_model", in->d[in->rank - 1], err);
}

static int64_t swiglu_flops(const loom_layer *l) {
  int64_t d = layer_int(l, P_D), hid = layer_int(l, P_HIDDEN), pos = l->built ? positions(l) : 1;
  return pos * (6 * d * hid + 5 * hid);
}

static char *swiglu_describe(const loom_layer *l, char *buf, size_t size) {
  const char *bias = layer_int(l, P_BIAS) ? _(", bias") : "";
  snprintf(buf, size, "swiglu %lld→%lld→%lld, %s%s", (long long)layer_int(l, P_D), (long long)layer_int(l, P_HIDDEN),
           (long long)layer_int(l, P_D), act_choices[layer_int(l, P_ACT)], bias);
  return buf;
}

const loom_layer_type loom_layer_swiglu = {
  .id = 140,
  .name = "swiglu",
  .label = N_("SwiGLU"),
  .group = N_("Transformer"),
  .description = N_("Gated feed-forward block: down(silu(gate(x)) · up(x)), as in Llama; relu² is the other gate."),
  .flags = LOOM_LAYER_WEIGHTED,
  .params = swiglu_params,
  .n_params = (int)(sizeof swiglu_params / sizeof swiglu_params[0]),
  .build = swiglu_build,
  .forward = swiglu_forward,
  .backward = swiglu_backward,
  .adapt = swiglu_adapt,
  .flops = swiglu_flops,
  .free_state = swiglu_free_state,
  .describe = swiglu_describe,
};
