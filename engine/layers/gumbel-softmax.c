/*
 * gumbel_softmax (Jang et al. 2017; Maddison et al. 2017): a relaxed sample
 * from the categorical distribution given by each row of logits,
 *
 *     y = softmax((x + g) / τ),   g_i = −log(−log u_i),  u_i ~ U(0, 1).
 *
 * The noise is counter-based: u for entry e of batch sample b comes from
 * (ctx->seed, ctx->step, the layer's identity, b·numel + e) alone, so a
 * forward is reproducible for a seed, independent of the thread count, and
 * backward regenerates exactly the noise its forward used. The layer's
 * identity is its type ID and grid coordinates, plus the "stream" parameter
 * that tells apart layers sharing coordinates (e.g. branches of a container).
 *
 * Backward is the exact Jacobian with the noise held fixed:
 * dx = (1/τ) · y ⊙ (dy − ⟨y, dy⟩). With "hard", the output is the one-hot
 * argmax of y (ties go to the lowest index) and backward is the
 * straight-through estimator: it uses the Jacobian of the relaxed sample y,
 * since the true Jacobian of a one-hot output is zero almost everywhere.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "core/rng.h"
#include "layers/registry.h"
#include "layers/softmax-rows.h"

enum { P_TEMPERATURE, P_HARD, P_STREAM };

/* Salt separating this layer's noise from any other use of the seed. */
#define GUMBEL_SALT 0x67756d62656c7378ull

typedef struct gumbel_job {
  const float *x, *dy, *y_in;
  float *y, *dx;
  int64_t n, rows; /* entries per row, rows per sample */
  double scale;    /* 1/τ */
  bool hard;
  uint64_t key;
  atomic_int out_of_memory; /* a range could not allocate its row scratch */
} gumbel_job;

static uint64_t gumbel_key(const loom_layer *l, const loom_ctx *ctx) {
  uint64_t k = loom_rng_derive(ctx->seed, GUMBEL_SALT);
  k = loom_rng_derive(k, ctx->step);
  k = loom_rng_derive(k, (uint64_t)l->type->id);
  k = loom_rng_derive(k, (uint64_t)layer_int(l, P_STREAM));
  if (l->has_coord)
    for (int i = 0; i < 4; i++) k = loom_rng_derive(k, (uint64_t)(uint32_t)l->coord[i] + 1);
  return k;
}

/* Gumbel(0, 1) noise for a flat entry index of the batch. u lies strictly
 * inside (0, 1) (53 random bits, offset by half a step), so g is finite. */
static double gumbel_noise(uint64_t key, int64_t index) {
  double u = ((double)(loom_rng_derive(key, (uint64_t)index) >> 11) + 0.5) * 0x1.0p-53;
  return -log(-log(u));
}

uint64_t gumbel_softmax_key(const loom_layer *l, uint64_t seed, uint64_t step) {
  loom_ctx ctx = {.seed = seed, .step = step};
  return gumbel_key(l, &ctx);
}

double gumbel_softmax_noise(uint64_t key, int64_t index) { return gumbel_noise(key, index); }

/* The relaxed sample of row r into out (float32, rounded once); z is a
 * scratch row of n doubles. */
static void gumbel_row(const gumbel_job *j, int64_t r, double *z, float *out) {
  const float *x = j->x + r * j->n;
  double top = -INFINITY, sum = 0.0;
  for (int64_t i = 0; i < j->n; i++) {
    z[i] = (double)x[i] + gumbel_noise(j->key, r * j->n + i);
    if (z[i] > top) top = z[i];
  }
  for (int64_t i = 0; i < j->n; i++) {
    z[i] = exp(j->scale * (z[i] - top));
    sum += z[i];
  }
  for (int64_t i = 0; i < j->n; i++) out[i] = (float)(z[i] / sum);
}

/* Each range allocates its own scratch: one row of doubles, plus one row of
 * floats for the relaxed sample in the backward of "hard". */
static double *gumbel_scratch(gumbel_job *j) {
  double *z = malloc((size_t)j->n * (sizeof(double) + sizeof(float)));
  if (!z) atomic_store(&j->out_of_memory, 1);
  return z;
}

static void gumbel_forward_range(void *arg, int64_t begin, int64_t end) {
  gumbel_job *j = arg;
  double *z = gumbel_scratch(j);
  if (!z) return;
  for (int64_t r = begin; r < end; r++) {
    float *y = j->y + r * j->n;
    gumbel_row(j, r, z, y);
    if (!j->hard) continue;
    int64_t best = 0;
    for (int64_t i = 1; i < j->n; i++)
      if (y[i] > y[best]) best = i;
    for (int64_t i = 0; i < j->n; i++) y[i] = i == best ? 1.0f : 0.0f;
  }
  free(z);
}

static void gumbel_backward_range(void *arg, int64_t begin, int64_t end) {
  gumbel_job *j = arg;
  double *z = gumbel_scratch(j);
  if (!z) return;
  float *soft = (float *)(z + j->n);
  for (int64_t r = begin; r < end; r++) {
    const float *y = j->y_in + r * j->n;
    if (j->hard) {
      gumbel_row(j, r, z, soft);
      y = soft;
    }
    softmax_row_backward(y, j->dy + r * j->n, j->dx + r * j->n, j->n, j->scale);
  }
  free(z);
}

static int gumbel_out_of_memory(const loom_layer *l, gumbel_job *j, loom_error *err) {
  if (!atomic_load(&j->out_of_memory)) return LOOM_OK;
  char where[128];
  return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for a row of %lld entries"),
                        layer_where(l, where, sizeof where), (long long)j->n);
}

static int gumbel_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  int rc = rows_check_shape(l, in, err);
  if (rc) return rc;
  l->out_shape = *in;
  return LOOM_OK;
}

static int gumbel_check_ctx(const loom_layer *l, const loom_ctx *ctx, loom_error *err) {
  if (ctx) return LOOM_OK;
  char where[128];
  return loom_error_set(err, LOOM_ERR_INVALID,
                        _("%s: a Gumbel softmax draws noise from the context's seed and step; no context was given"),
                        layer_where(l, where, sizeof where));
}

static int gumbel_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                          loom_error *err) {
  int rc = gumbel_check_ctx(l, ctx, err);
  if (rc) return rc;
  gumbel_job j = {.x = x, .y = y, .n = rows_last_dim(&l->in_shape), .rows = rows_per_sample(&l->in_shape),
                  .scale = 1.0 / layer_float(l, P_TEMPERATURE), .hard = layer_int(l, P_HARD) != 0,
                  .key = gumbel_key(l, ctx)};
  atomic_init(&j.out_of_memory, 0);
  rc = rows_check_finite(l, x, batch, j.rows, j.n, NULL, 0, err);
  if (rc) return rc;
  rows_parallel(ctx, batch * j.rows, rows_grain(j.n), gumbel_forward_range, &j);
  return gumbel_out_of_memory(l, &j, err);
}

static int gumbel_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                           float *dx, int64_t batch, loom_error *err) {
  if (!dx) return LOOM_OK;
  int rc = gumbel_check_ctx(l, ctx, err);
  if (rc) return rc;
  gumbel_job j = {.x = x, .y_in = y, .dy = dy, .dx = dx, .n = rows_last_dim(&l->in_shape),
                  .rows = rows_per_sample(&l->in_shape), .scale = 1.0 / layer_float(l, P_TEMPERATURE),
                  .hard = layer_int(l, P_HARD) != 0, .key = gumbel_key(l, ctx)};
  atomic_init(&j.out_of_memory, 0);
  rows_parallel(ctx, batch * j.rows, rows_grain(j.n), gumbel_backward_range, &j);
  return gumbel_out_of_memory(l, &j, err);
}

static int64_t gumbel_flops(const loom_layer *l) {
  /* Two logarithms and an add for the noise, a division by τ, then a softmax (5). */
  return 9 * loom_shape_numel(&l->in_shape);
}

static char *gumbel_describe(const loom_layer *l, char *buf, size_t size) {
  char t[32];
  /* TRANSLATORS: appended to a layer summary such as "gumbel_softmax τ=0.5" when the layer
     outputs one-hot samples (the parameter "Hard"). */
  const char *hard = layer_int(l, P_HARD) ? _(", hard") : "";
  snprintf(buf, size, "gumbel_softmax τ=%s%s", rows_format_number(layer_float(l, P_TEMPERATURE), t, sizeof t), hard);
  return buf;
}

static const loom_param_spec gumbel_params[] = {
  {.name = "temperature", .label = N_("Temperature"),
   .tooltip = N_("τ: small values give nearly one-hot samples, large values nearly uniform ones"),
   .kind = LOOM_PARAM_FLOAT, .min = 1e-6, .max = 1e6, .def = 1.0},
  {.name = "hard", .label = N_("Hard"),
   .tooltip = N_("Output the one-hot argmax; the gradient is that of the relaxed sample (straight-through)"),
   .kind = LOOM_PARAM_BOOL, .min = 0, .max = 1, .def = 0},
  {.name = "stream", .label = N_("Noise stream"),
   .tooltip = N_("Selects an independent noise sequence; give layers at the same coordinates different streams"),
   .kind = LOOM_PARAM_INT, .min = 0, .max = 2147483647.0, .def = 0},
};

const loom_layer_type loom_layer_gumbel_softmax = {
  .id = 95,
  .name = "gumbel_softmax",
  .label = N_("Gumbel softmax"),
  .group = N_("Softmax"),
  .description = N_("Draws a differentiable, relaxed sample from the categorical distribution of each row of "
                    "logits."),
  .flags = LOOM_LAYER_STOCHASTIC | LOOM_LAYER_OUTPUTS_PROBABILITIES,
  .params = gumbel_params,
  .n_params = (int)(sizeof gumbel_params / sizeof gumbel_params[0]),
  .build = gumbel_build,
  .forward = gumbel_forward,
  .backward = gumbel_backward,
  .flops = gumbel_flops,
  .describe = gumbel_describe,
};
