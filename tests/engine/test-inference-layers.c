/*
 * Every weighted layer type at rest (issue 13, item 3; docs/kernels.md,
 * "Layers at rest"): a forward leaves no float32 copy of a weight resident,
 * gives the same bits on 1 and 3 threads, and against the forward before
 * loom_layer_to_inference gives
 *   - the same bits where the layer computes on the dequantized values as
 *     before (conv, transposed conv, embedding, kmeans) and, for
 *     the float formats, where X·Wᵀ runs on dequantized blocks of rows (a
 *     batch: swiglu, attention; loom_sgemm's chains do not depend on how W
 *     is blocked);
 *   - values within the bounds of the packed kernels otherwise: the GEMV of
 *     one or two rows (rnn and lstm take one per sample and step), the
 *     integer kernels with activations quantized to int8
 *     (tests/engine/test-inference.c holds the dense layer to the exact
 *     bounds; here a layer's output mixes several products and nonlinear
 *     steps, so the check is relative to the output's size).
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "kernels/qgemm.h"
#include "layer-test-util.h"
#include "loom/sequence.h"

typedef struct layer_case {
  const char *name;
  loom_layer *(*make)(void);
  int64_t batch;
  bool exact_float; /* bit-equal at the float formats (see above) */
  bool exact_int;   /* bit-equal at the integer formats too (no packed product) */
} layer_case;

static loom_layer *conv2d(void) {
  loom_layer *l = lt_new("conv2d");
  lt_set_int(l, "in_channels", 3);
  lt_set_int(l, "out_channels", 5);
  lt_set_ints(l, "kernel", (const int64_t[]){3, 3}, 2);
  lt_set_ints(l, "padding", (const int64_t[]){1, 1}, 2);
  lt_build(l, 3, (const int64_t[]){3, 9, 8}, 1);
  return l;
}

static loom_layer *conv_transpose2d(void) {
  loom_layer *l = lt_new("conv_transpose2d");
  lt_set_int(l, "in_channels", 4);
  lt_set_int(l, "out_channels", 3);
  lt_set_ints(l, "kernel", (const int64_t[]){3, 3}, 2);
  lt_set_ints(l, "stride", (const int64_t[]){2, 2}, 2);
  lt_build(l, 3, (const int64_t[]){4, 5, 5}, 2);
  return l;
}

static loom_layer *recurrent(const char *type) {
  loom_layer *l = lt_new(type);
  lt_set_int(l, "input_size", 6);
  lt_set_int(l, "hidden_size", 7);
  lt_set_bool(l, "bias", true);
  lt_set_enum(l, "output", "sequence");
  lt_build(l, 2, (const int64_t[]){5, 6}, 3);
  return l;
}
static loom_layer *lstm(void) { return recurrent("lstm"); }
static loom_layer *rnn(void) { return recurrent("rnn"); }

static loom_layer *embedding(void) {
  loom_layer *l = lt_new("embedding");
  lt_set_int(l, "num_embeddings", 50);
  lt_set_int(l, "embedding_dim", 12);
  lt_build(l, 1, (const int64_t[]){6}, 4);
  return l;
}

static loom_layer *kmeans(void) {
  loom_layer *l = lt_new("kmeans");
  lt_set_int(l, "n_clusters", 6);
  lt_set_enum(l, "output", "features");
  lt_build(l, 2, (const int64_t[]){4, 5}, 5);
  return l;
}

static loom_layer *swiglu(int rank) {
  loom_layer *l = lt_new("swiglu");
  lt_set_int(l, "d_model", 12);
  lt_set_int(l, "hidden", 20);
  lt_set_bool(l, "bias", true);
  if (rank == 2)
    lt_build(l, 2, (const int64_t[]){4, 12}, 6);
  else
    lt_build(l, 1, (const int64_t[]){12}, 6);
  return l;
}
static loom_layer *swiglu_positions(void) { return swiglu(2); }
static loom_layer *swiglu_vector(void) { return swiglu(1); }

static loom_layer *attention(void) {
  loom_layer *l = lt_new("attention");
  lt_set_int(l, "d_model", 16);
  lt_set_int(l, "heads", 4);
  lt_set_int(l, "kv_heads", 2);
  lt_set_int(l, "head_dim", 4);
  lt_set_bool(l, "causal", true);
  lt_set_bool(l, "bias", true);
  lt_set_bool(l, "qk_norm", true);
  lt_set_enum(l, "rope", "half");
  lt_build(l, 2, (const int64_t[]){5, 16}, 7);
  return l;
}

static const layer_case cases[] = {
  {"conv2d", conv2d, 3, true, true},
  {"conv_transpose2d", conv_transpose2d, 2, true, true},
  {"lstm", lstm, 3, false, false}, /* the recurrent product: a GEMV per step */
  {"rnn", rnn, 2, false, false},
  {"embedding", embedding, 3, true, true},
  {"kmeans", kmeans, 3, true, true},
  {"swiglu over positions", swiglu_positions, 3, true, false},
  {"swiglu of one vector", swiglu_vector, 2, false, false}, /* 2 rows: the GEMV */
  {"attention", attention, 2, true, false},
};

static void fill_input(const layer_case *c, loom_layer *l, float *x, int64_t n) {
  if (strcmp(c->name, "embedding") == 0) {
    for (int64_t i = 0; i < n; i++) x[i] = (float)((i * 17 + 3) % 50);
    return;
  }
  gradcheck_fill_uniform(x, n, -1.5, 1.5, 11);
  (void)l;
}

static void check_case(const layer_case *c, loom_dtype d) {
  loom_error err = {0};
  loom_layer *l = c->make();
  lt_randomize(l, 0.8, 40);
  g_assert_cmpint(loom_layer_set_dtype(l, d, &err), ==, LOOM_OK);
  const int64_t nx = c->batch * lt_in_numel(l), ny = c->batch * lt_out_numel(l);
  float *x = g_new(float, nx), *y0 = g_new(float, ny), *y1 = g_new(float, ny), *y3 = g_new(float, ny);
  fill_input(c, l, x, nx);
  loom_pool *p1 = lt_pool(1), *p3 = lt_pool(3);
  loom_ctx ctx1 = {.pool = p1}, ctx3 = {.pool = p3};
  if (layer_forward(l, &ctx1, x, y0, c->batch, &err)) g_error("%s plain: %s", c->name, err.message);

  g_assert_cmpint(loom_layer_to_inference(l, &err), ==, LOOM_OK);
  g_assert_cmpuint(loom_layer_resident_bytes(l), ==, loom_layer_inference_bytes(l));
  if (layer_forward(l, &ctx1, x, y1, c->batch, &err)) g_error("%s at rest: %s", c->name, err.message);
  if (layer_forward(l, &ctx3, x, y3, c->batch, &err)) g_error("%s at rest: %s", c->name, err.message);
  if (memcmp(y1, y3, (size_t)ny * sizeof *y1) != 0)
    g_error("%s at %s: 1 and 3 threads differ at rest", c->name, loom_dtype_name(d));
  /* No float32 copy of any weight left behind by the forward. */
  if (loom_layer_resident_bytes(l) != loom_layer_inference_bytes(l))
    g_error("%s at %s: %zu bytes resident after a forward at rest, %zu at rest", c->name, loom_dtype_name(d),
            loom_layer_resident_bytes(l), loom_layer_inference_bytes(l));

  const bool integer = loom_qgemm_supports(d);
  if (integer ? c->exact_int : c->exact_float) {
    for (int64_t i = 0; i < ny; i++)
      if (memcmp(&y0[i], &y1[i], sizeof *y0) != 0)
        g_error("%s at %s: output %lld at rest %.9g, before %.9g", c->name, loom_dtype_name(d), (long long)i,
                (double)y1[i], (double)y0[i]);
  } else {
    double top = 0;
    for (int64_t i = 0; i < ny; i++) top = fmax(top, fabs(y0[i]));
    /* int8 activations: about 1/254 of each input's range per product */
    const double bound = (integer ? 0.05 : 1e-5) * top + 1e-6;
    for (int64_t i = 0; i < ny; i++)
      if (!(fabs((double)y1[i] - y0[i]) <= bound))
        g_error("%s at %s: output %lld at rest %.9g, before %.9g (bound %.3g)", c->name, loom_dtype_name(d),
                (long long)i, (double)y1[i], (double)y0[i], bound);
  }
  loom_pool_free(p1);
  loom_pool_free(p3);
  g_free(x);
  g_free(y0);
  g_free(y1);
  g_free(y3);
  loom_layer_free(l);
}

/* Integer formats (int8, int4, ternary) and fp4 (the integer kernels),
 * float formats (float16, fp8-e4m3: the GEMV or dequantized blocks),
 * float64 (8-byte codes) and float32 (rests as its master: the plain
 * path). */
static void test_every_weighted_layer(void) {
  static const loom_dtype dtypes[] = {LOOM_DTYPE_INT8,     LOOM_DTYPE_INT4,    LOOM_DTYPE_TERNARY,
                                      LOOM_DTYPE_FLOAT16,  LOOM_DTYPE_FP8_E4M3, LOOM_DTYPE_FP4,
                                      LOOM_DTYPE_FLOAT64,  LOOM_DTYPE_FLOAT32};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    for (size_t d = 0; d < G_N_ELEMENTS(dtypes); d++) check_case(&cases[i], dtypes[d]);
}

/* Training after inference: a backward at rest brings the masters back, and
 * the layers compute with them as before (the plain forward's bits). */
static void test_backward_after_rest(void) {
  loom_error err = {0};
  loom_layer *l = swiglu_positions();
  lt_randomize(l, 0.8, 50);
  g_assert_cmpint(loom_layer_set_dtype(l, LOOM_DTYPE_INT4, &err), ==, LOOM_OK);
  const int64_t nx = 2 * lt_in_numel(l), ny = 2 * lt_out_numel(l);
  float *x = g_new(float, nx), *y0 = g_new(float, ny), *y1 = g_new(float, ny), *dy = g_new(float, ny),
        *dx = g_new(float, nx);
  gradcheck_fill_uniform(x, nx, -1, 1, 12);
  gradcheck_fill_uniform(dy, ny, -1, 1, 13);
  lt_forward(l, NULL, x, y0, 2);
  g_assert_cmpint(loom_layer_to_inference(l, &err), ==, LOOM_OK);
  lt_forward(l, NULL, x, y1, 2);
  lt_backward(l, NULL, x, y1, dy, dx, 2);
  g_assert_true(loom_weights_master_resident(loom_layer_weights(l, 0)));
  lt_forward(l, NULL, x, y1, 2);
  g_assert_cmpmem(y0, (gsize)ny * sizeof *y0, y1, (gsize)ny * sizeof *y1);
  g_free(x);
  g_free(y0);
  g_free(y1);
  g_free(dy);
  g_free(dx);
  loom_layer_free(l);
}

/* Decoding token by token at rest through the KV cache (the projections of
 * one step at a time: m = the batch, 2 here, so the integer GEMV or the
 * float GEMV): every step within the kernels' tolerance of the whole
 * sequence computed before rest, nothing left resident. */
static void test_kv_cache_at_rest(void) {
  static const loom_dtype dtypes[] = {LOOM_DTYPE_INT8, LOOM_DTYPE_INT4, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_FP8_E5M2};
  enum { BATCH = 2, STEPS = 6, D = 16 };
  for (size_t k = 0; k < G_N_ELEMENTS(dtypes); k++) {
    loom_error err = {0};
    loom_layer *full = lt_new("attention");
    lt_set_int(full, "d_model", D);
    lt_set_int(full, "heads", 4);
    lt_set_int(full, "kv_heads", 2);
    lt_set_int(full, "head_dim", 4);
    lt_set_bool(full, "causal", true);
    lt_set_bool(full, "bias", true);
    lt_set_enum(full, "rope", "half");
    lt_set_int(full, "cache_capacity", STEPS);
    lt_build(full, 2, (const int64_t[]){STEPS, D}, 8);
    lt_randomize(full, 0.7, 60);
    g_assert_cmpint(loom_layer_set_dtype(full, dtypes[k], &err), ==, LOOM_OK);
    loom_layer *step = loom_layer_clone(full, &err);
    g_assert_nonnull(step);
    lt_build(step, 2, (const int64_t[]){1, D}, 1);
    float x[BATCH * STEPS * D], y[BATCH * STEPS * D], xt[BATCH * D], yt[BATCH * D];
    gradcheck_fill_uniform(x, BATCH * STEPS * D, -1, 1, 61);
    lt_forward(full, NULL, x, y, BATCH);
    g_assert_cmpint(loom_layer_to_inference(step, &err), ==, LOOM_OK);
    double top = 0;
    for (int i = 0; i < BATCH * STEPS * D; i++) top = fmax(top, fabs(y[i]));
    const double bound = (loom_qgemm_supports(dtypes[k]) ? 0.05 : 1e-5) * top + 1e-6;
    loom_pool *pool = lt_pool(3);
    loom_ctx ctx = {.pool = pool};
    for (int64_t t = 0; t < STEPS; t++) {
      for (int64_t b = 0; b < BATCH; b++) memcpy(xt + b * D, x + (b * STEPS + t) * D, sizeof(float) * D);
      if (layer_forward(step, &ctx, xt, yt, BATCH, &err)) g_error("step %lld: %s", (long long)t, err.message);
      g_assert_cmpint(loom_layer_cached_steps(step), ==, t + 1);
      for (int64_t b = 0; b < BATCH; b++)
        for (int j = 0; j < D; j++)
          if (!(fabs((double)yt[b * D + j] - y[(b * STEPS + t) * D + j]) <= bound))
            g_error("%s: step %lld, sample %lld, feature %d: at rest %.9g, before %.9g (bound %.3g)",
                    loom_dtype_name(dtypes[k]), (long long)t, (long long)b, j, (double)yt[b * D + j],
                    (double)y[(b * STEPS + t) * D + j], bound);
      g_assert_cmpuint(loom_layer_resident_bytes(step), ==, loom_layer_inference_bytes(step));
    }
    loom_pool_free(pool);
    loom_layer_free(step);
    loom_layer_free(full);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/inference-layers/every-weighted-layer", test_every_weighted_layer);
  g_test_add_func("/inference-layers/backward-after-rest", test_backward_after_rest);
  g_test_add_func("/inference-layers/kv-cache-at-rest", test_kv_cache_at_rest);
  return g_test_run();
}
