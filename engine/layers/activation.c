/*
 * Element-wise activations, one registered type each, sharing one
 * implementation. Formulas and derivatives follow PyTorch exactly (see
 * docs/network.md); each value is computed in double and rounded once to
 * float32, so the result is the correctly rounded float of the formula up to
 * libm's accuracy. The output shape is the input shape. At the vector kernel
 * levels sigmoid, silu, tanh and elu go through loom_kernels.act
 * (kernels/act.h) with the same bits: the lanes it cannot vouch for are
 * computed here again.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/i18n.h"
#include "kernels/cpu.h"
#include "layers/registry.h"

typedef enum {
  ACT_RELU,
  ACT_LEAKY_RELU,
  ACT_ELU,
  ACT_GELU,
  ACT_SILU,
  ACT_SIGMOID,
  ACT_TANH,
  ACT_SOFTPLUS,
  ACT_RELU2,
} act_kind;

/* Type IDs are 10 + act_kind (registry.h, block 10-29). */
#define ACT_FIRST_ID 10

static const char *const gelu_choices[] = {"none", "tanh", NULL};

static const loom_param_spec leaky_relu_params[] = {
  {"negative_slope", N_("Negative slope"), N_("Factor applied to negative inputs"), LOOM_PARAM_FLOAT, -1000, 1000,
   0.01, NULL, 0},
};
static const loom_param_spec elu_params[] = {
  {"alpha", N_("Alpha"), N_("The output approaches −alpha for very negative inputs"), LOOM_PARAM_FLOAT, 0, 1000,
   1.0, NULL, 0},
};
static const loom_param_spec gelu_params[] = {
  {"approximate", N_("Approximation"), N_("Exact (erf) or the tanh approximation"), LOOM_PARAM_ENUM, 0, 1, 0,
   gelu_choices, 0},
};
static const loom_param_spec softplus_params[] = {
  {"beta", N_("Beta"), N_("Sharpness: softplus(x) = log(1 + exp(beta·x)) / beta"), LOOM_PARAM_FLOAT, 1e-6, 1e6, 1.0,
   NULL, 0},
  {"threshold", N_("Threshold"),
   N_("Where beta·x exceeds the threshold, the layer passes its input through unchanged"), LOOM_PARAM_FLOAT, 0,
   1e6, 20.0, NULL, 0},
};

typedef struct {
  act_kind kind;
  double p0, p1; /* slope / alpha / beta; threshold */
  bool tanh_gelu;
  const float *x, *dy;
  float *y, *dx;
} act_job;

static inline double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

#define SQRT_2_OVER_PI 0.79788456080286535588
#define INV_SQRT_2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794
#define GELU_TANH_C 0.044715

static double act_value(const act_job *j, double x) {
  switch (j->kind) {
  case ACT_RELU: return x > 0 ? x : 0.0;
  case ACT_LEAKY_RELU: return x > 0 ? x : j->p0 * x;
  case ACT_ELU: return x > 0 ? x : j->p0 * expm1(x);
  case ACT_GELU:
    if (j->tanh_gelu) return 0.5 * x * (1.0 + tanh(SQRT_2_OVER_PI * (x + GELU_TANH_C * x * x * x)));
    return 0.5 * x * (1.0 + erf(x * INV_SQRT_2));
  case ACT_SILU: return x * sigmoid(x);
  case ACT_SIGMOID: return sigmoid(x);
  case ACT_TANH: return tanh(x);
  case ACT_SOFTPLUS: return x * j->p0 > j->p1 ? x : log1p(exp(x * j->p0)) / j->p0;
  case ACT_RELU2: return x > 0 ? x * x : 0.0;
  }
  return 0.0;
}

/* d act / dx at x (y is the forward output, used where PyTorch uses it). */
static double act_derivative(const act_job *j, double x, double y) {
  switch (j->kind) {
  case ACT_RELU: return x > 0 ? 1.0 : 0.0;
  case ACT_LEAKY_RELU: return x > 0 ? 1.0 : j->p0;
  case ACT_ELU: return x > 0 ? 1.0 : j->p0 * exp(x);
  case ACT_GELU:
    if (j->tanh_gelu) {
      double inner = SQRT_2_OVER_PI * (x + GELU_TANH_C * x * x * x);
      double t = tanh(inner);
      return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_TANH_C * x * x);
    }
    return 0.5 * (1.0 + erf(x * INV_SQRT_2)) + x * INV_SQRT_2PI * exp(-0.5 * x * x);
  case ACT_SILU: {
    double s = sigmoid(x);
    return s * (1.0 + x * (1.0 - s));
  }
  case ACT_SIGMOID: {
    double s = sigmoid(x);
    return s * (1.0 - s);
  }
  case ACT_TANH: {
    double t = tanh(x);
    return 1.0 - t * t;
  }
  case ACT_SOFTPLUS: return x * j->p0 > j->p1 ? 1.0 : sigmoid(x * j->p0);
  case ACT_RELU2: return x > 0 ? 2.0 * x : 0.0;
  }
  (void)y;
  return 0.0;
}

/* ReLU's loops in float give the bits of the double formula (x or +0 out;
 * dy·1 or dy·0, whose sign and NaN float keeps) without a switch per element,
 * so the compiler vectorizes them: on the small networks of the examples they
 * were the largest part of a training step. */
/* ReLU four lanes at a time with masks: the same values as the scalar tails
 * (x > 0 keeps x or dy; otherwise +0, or dy·0, which keeps dy's sign and
 * turns inf and NaN into NaN). The plain loops were compiled with a branch
 * per element, mispredicted on half of a layer's signs: 9 % of a 784-256-10
 * training step (14 % once Adam was vectorized), 3 % after. */
typedef float relu_vf __attribute__((vector_size(16))); /* SSE2: wider ones GCC split per lane */
typedef int32_t relu_vi __attribute__((vector_size(16)));

static void relu_forward(const float *x, float *y, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 4 <= end; i += 4) {
    relu_vf v;
    memcpy(&v, x + i, sizeof v);
    relu_vi keep = v > 0.0f, bits;
    memcpy(&bits, &v, sizeof bits);
    bits &= keep;
    memcpy(y + i, &bits, sizeof bits);
  }
  for (; i < end; i++) y[i] = x[i] > 0 ? x[i] : 0.0f;
}

static void relu_backward(const float *x, const float *dy, float *dx, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i + 4 <= end; i += 4) {
    relu_vf v, d, z;
    memcpy(&v, x + i, sizeof v);
    memcpy(&d, dy + i, sizeof d);
    z = d * 0.0f;
    relu_vi keep = v > 0.0f, db, zb;
    memcpy(&db, &d, sizeof db);
    memcpy(&zb, &z, sizeof zb);
    db = (db & keep) | (zb & ~keep);
    memcpy(dx + i, &db, sizeof db);
  }
  for (; i < end; i++) dx[i] = x[i] > 0 ? dy[i] : dy[i] * 0.0f;
}

static float act_backward_one(const act_job *j, int64_t i) {
  return (float)((double)j->dy[i] * act_derivative(j, j->x[i], j->y ? j->y[i] : 0.0));
}

/* The kinds the vector levels compute (kernels/act.h): the same bits, the
 * lanes near a float32 rounding boundary redone here. */
static bool act_vector_fn(act_kind kind, loom_act_fn *fn) {
  switch (kind) {
  case ACT_SIGMOID: *fn = LOOM_ACT_SIGMOID; return true;
  case ACT_SILU: *fn = LOOM_ACT_SILU; return true;
  case ACT_TANH: *fn = LOOM_ACT_TANH; return true;
  case ACT_ELU: *fn = LOOM_ACT_ELU; return true;
  default: return false;
  }
}

static void act_vector_range(const act_job *j, loom_act_fn fn, loom_act_fn_kernel kernel, bool backward,
                             int64_t begin, int64_t end) {
  uint64_t redo[LOOM_ACT_BLOCK / 64];
  for (int64_t b = begin; b < end; b += LOOM_ACT_BLOCK) {
    const int64_t n = end - b < LOOM_ACT_BLOCK ? end - b : LOOM_ACT_BLOCK;
    float *out = backward ? j->dx + b : j->y + b;
    if (kernel(fn, j->p0, j->x + b, backward ? j->dy + b : NULL, out, n, redo) == 0) continue;
    for (int64_t w = 0; w < (n + 63) / 64; w++)
      for (uint64_t bits = redo[w]; bits; bits &= bits - 1) {
        const int64_t i = b + w * 64 + __builtin_ctzll(bits);
        if (backward)
          j->dx[i] = act_backward_one(j, i);
        else
          j->y[i] = (float)act_value(j, j->x[i]);
      }
  }
}

static void act_forward_range(void *arg, int64_t begin, int64_t end) {
  const act_job *j = arg;
  if (j->kind == ACT_RELU) {
    relu_forward(j->x, j->y, begin, end);
    return;
  }
  loom_act_fn fn;
  const loom_act_fn_kernel kernel = loom_kernels_get()->act;
  if (kernel && act_vector_fn(j->kind, &fn)) {
    act_vector_range(j, fn, kernel, false, begin, end);
    return;
  }
  for (int64_t i = begin; i < end; i++) j->y[i] = (float)act_value(j, j->x[i]);
}

static void act_backward_range(void *arg, int64_t begin, int64_t end) {
  const act_job *j = arg;
  if (j->kind == ACT_RELU) {
    relu_backward(j->x, j->dy, j->dx, begin, end);
    return;
  }
  loom_act_fn fn;
  const loom_act_fn_kernel kernel = loom_kernels_get()->act;
  if (kernel && act_vector_fn(j->kind, &fn)) {
    act_vector_range(j, fn, kernel, true, begin, end);
    return;
  }
  for (int64_t i = begin; i < end; i++) j->dx[i] = act_backward_one(j, i);
}

static act_job act_setup(const loom_layer *l) {
  act_job j = {.kind = (act_kind)(l->type->id - ACT_FIRST_ID)};
  switch (j.kind) {
  case ACT_LEAKY_RELU:
  case ACT_ELU: j.p0 = layer_float(l, 0); break;
  case ACT_GELU: j.tanh_gelu = layer_int(l, 0) == 1; break;
  case ACT_SOFTPLUS:
    j.p0 = layer_float(l, 0);
    j.p1 = layer_float(l, 1);
    break;
  default: break;
  }
  return j;
}

#define ACT_GRAIN 16384

static int act_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  l->out_shape = *in;
  return LOOM_OK;
}

static int act_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                       loom_error *err) {
  act_job j = act_setup(l);
  j.x = x;
  j.y = y;
  loom_pool_for(ctx ? ctx->pool : NULL, batch * loom_shape_numel(&l->in_shape), ACT_GRAIN, act_forward_range, &j);
  return LOOM_OK;
}

static int act_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                        float *dx, int64_t batch, loom_error *err) {
  if (!dx) return LOOM_OK; /* no parameters: nothing else to compute */
  act_job j = act_setup(l);
  j.x = x;
  j.y = (float *)y;
  j.dy = dy;
  j.dx = dx;
  loom_pool_for(ctx ? ctx->pool : NULL, batch * loom_shape_numel(&l->in_shape), ACT_GRAIN, act_backward_range, &j);
  return LOOM_OK;
}

static int64_t act_flops(const loom_layer *l) {
  int64_t n = l->built ? loom_shape_numel(&l->out_shape) : 0;
  /* Rough per-element costs of the transcendental ones. */
  switch ((act_kind)(l->type->id - ACT_FIRST_ID)) {
  case ACT_RELU:
  case ACT_LEAKY_RELU: return n;
  case ACT_RELU2: return 2 * n;
  case ACT_GELU: return 10 * n;
  default: return 5 * n;
  }
}

static char *act_describe(const loom_layer *l, char *buf, size_t size) {
  switch ((act_kind)(l->type->id - ACT_FIRST_ID)) {
  case ACT_LEAKY_RELU: snprintf(buf, size, "%s %g", l->type->name, layer_float(l, 0)); break;
  case ACT_ELU: snprintf(buf, size, "%s α=%g", l->type->name, layer_float(l, 0)); break;
  case ACT_GELU: snprintf(buf, size, "%s%s", l->type->name, layer_int(l, 0) == 1 ? " tanh" : ""); break;
  case ACT_SOFTPLUS:
    /* TRANSLATORS: layer summary, e.g. "softplus β=1 threshold 20": the layer type name, then its
       parameters beta and threshold. */
    snprintf(buf, size, _("%s β=%g threshold %g"), l->type->name, layer_float(l, 0), layer_float(l, 1));
    break;
  default: snprintf(buf, size, "%s", l->type->name); break;
  }
  return buf;
}

#define N_OF(table) ((int)(sizeof(table) / sizeof((table)[0])))

#define ACTIVATION(ident, kind, type_name, label_text, description_text, param_table, n_param)                    \
  const loom_layer_type ident = {                                                                                 \
    .id = ACT_FIRST_ID + (kind),                                                                                  \
    .name = type_name,                                                                                            \
    .label = label_text,                                                                                          \
    .group = N_("Activation"),                                                                                    \
    .description = description_text,                                                                              \
    .params = param_table,                                                                                        \
    .n_params = n_param,                                                                                          \
    .build = act_build,                                                                                           \
    .forward = act_forward,                                                                                       \
    .backward = act_backward,                                                                                     \
    .flops = act_flops,                                                                                           \
    .describe = act_describe,                                                                                     \
  }

ACTIVATION(loom_layer_relu, ACT_RELU, "relu", N_("ReLU"), N_("Passes positive values and zeroes negative ones."),
           NULL, 0);
ACTIVATION(loom_layer_leaky_relu, ACT_LEAKY_RELU, "leaky-relu", N_("Leaky ReLU"),
           N_("Passes positive values and scales negative ones by a small slope."), leaky_relu_params,
           N_OF(leaky_relu_params));
ACTIVATION(loom_layer_elu, ACT_ELU, "elu", N_("ELU"),
           N_("Identity for positive values, alpha·(exp(x) − 1) for negative ones."), elu_params, N_OF(elu_params));
ACTIVATION(loom_layer_gelu, ACT_GELU, "gelu", N_("GELU"),
           N_("Gaussian error linear unit: x weighted by the normal distribution's CDF at x."), gelu_params,
           N_OF(gelu_params));
ACTIVATION(loom_layer_silu, ACT_SILU, "silu", N_("SiLU"), N_("Sigmoid-weighted linear unit (swish): x·sigmoid(x)."),
           NULL, 0);
ACTIVATION(loom_layer_sigmoid, ACT_SIGMOID, "sigmoid", N_("Sigmoid"), N_("Squashes every value into (0, 1)."), NULL,
           0);
ACTIVATION(loom_layer_tanh, ACT_TANH, "tanh", N_("Tanh"), N_("Squashes every value into (−1, 1)."), NULL, 0);
ACTIVATION(loom_layer_softplus, ACT_SOFTPLUS, "softplus", N_("Softplus"),
           N_("A smooth ReLU: log(1 + exp(beta·x)) / beta, linear above the threshold."), softplus_params,
           N_OF(softplus_params));
ACTIVATION(loom_layer_relu2, ACT_RELU2, "relu2", N_("Squared ReLU"), N_("The square of ReLU: max(x, 0)²."), NULL, 0);
