#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "kernels/matmul.h"
#include "layers/layer-impl.h"
#include "loom/loom.h"
#include "loom/layer.h"
#include "loom/weights.h"
#include "parity.h"

static loom_layer *make_dense(int64_t n_in, int64_t n_out, bool bias, uint64_t seed) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  g_assert_nonnull(l);
  g_assert_cmpint(loom_layer_set_int(l, "in_features", n_in, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", n_out, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_bool(l, "bias", bias, &err), ==, 0);
  loom_shape in = loom_shape_1d(n_in);
  if (loom_layer_build(l, &in, seed, &err)) g_error("%s", err.message);
  return l;
}

static void test_gradcheck(void) {
  static const struct { int64_t batch, n_in, n_out; bool bias; } cases[] = {
    {1, 1, 1, true}, {3, 5, 7, true}, {2, 9, 4, false}, {4, 17, 13, true}, {1, 33, 2, false},
  };
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    loom_layer *l = make_dense(cases[c].n_in, cases[c].n_out, cases[c].bias, 100 + c);
    int64_t n = cases[c].batch * cases[c].n_in;
    float *x = g_new(float, n);
    gradcheck_fill_uniform(x, n, -1, 1, c);
    double worst = gradcheck_layer(l, x, cases[c].batch, 2e-3);
    g_test_message("dense case %zu: worst %.3g", c, worst);
    g_free(x);
    loom_layer_free(l);
  }
}

/* The checker itself must notice a wrong gradient: a dense type whose
 * backward reports 0.25 too much for weight[3] and dx[5]. */
static const loom_layer_type *real_dense;

static int off_by_a_bit_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y,
                                 const float *dy, float *dx, int64_t batch, loom_error *err) {
  int rc = real_dense->backward(l, ctx, x, y, dy, dx, batch, err);
  l->grad[0][3] += 0.25f;
  if (dx) dx[5] += 0.25f;
  return rc;
}

static void test_gradcheck_catches_errors(void) {
  loom_layer *l = make_dense(4, 3, true, 5);
  float x[8];
  gradcheck_fill_uniform(x, 8, -1, 1, 9);
  gradcheck_report rep;
  gradcheck_options o = {.tolerance = 1e-2};
  g_assert_cmpint(gradcheck_layer_measure(l, x, 2, &o, &rep), ==, 0);
  g_assert_cmpfloat(rep.worst, <, 1e-3);
  g_assert_cmpint(rep.n_checked, ==, 8 + 12 + 3);
  g_assert_cmpint(rep.n_skipped, ==, 0);

  real_dense = l->type;
  loom_layer_type broken = *real_dense;
  broken.backward = off_by_a_bit_backward;
  l->type = &broken;
  g_assert_cmpint(gradcheck_layer_measure(l, x, 2, &o, &rep), ==, 0);
  g_assert_cmpstr(rep.tensor, ==, "x");
  g_assert_cmpint(rep.index, ==, 5);
  g_assert_cmpfloat(fabs(rep.analytic - rep.numeric - 0.25), <, 1e-3);
  gradcheck_options no_dx = {.tolerance = 1e-2, .skip_dx = true};
  g_assert_cmpint(gradcheck_layer_measure(l, x, 2, &no_dx, &rep), ==, 0);
  g_assert_cmpstr(rep.tensor, ==, "weight");
  g_assert_cmpint(rep.index, ==, 3);
  g_assert_cmpfloat(rep.worst, >, 0.2);
  l->type = real_dense;
  loom_layer_free(l);
}

/* Small gradients are held to the absolute term of the criterion, not to
 * the rtol of a gradient of size 1: a bias gradient of a few hundredths that
 * is 1% off, or off by 1e-3, must fail. The old criterion (error scaled by
 * max(1, |a|, |n|)) let both through at rtol 2e-3; the asserts on `old` show
 * that this test exercises exactly the gap it closes. */
static double bias_mistake_scale, bias_mistake_offset;

static int wrong_small_bias_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y,
                                     const float *dy, float *dx, int64_t batch, loom_error *err) {
  int rc = real_dense->backward(l, ctx, x, y, dy, dx, batch, err);
  float *db = l->grad[1];
  for (int64_t o = 0; o < loom_weights_count(l->weights[1]); o++)
    if (fabsf(db[o]) < 0.1f) db[o] = (float)(db[o] * bias_mistake_scale + bias_mistake_offset);
  return rc;
}

static void check_small_bias_mistake(loom_layer *l, const float *x, double scale, double offset) {
  bias_mistake_scale = scale;
  bias_mistake_offset = offset;
  gradcheck_report rep;
  gradcheck_options o = {.tolerance = 2e-3, .skip_dx = true};
  g_assert_cmpint(gradcheck_layer_measure(l, x, 1, &o, &rep), ==, 0);
  g_test_message("bias ×%g %+g: worst %.3g at %s[%lld], analytic %.9g, numeric %.9g", scale, offset, rep.worst,
                 rep.tensor, (long long)rep.index, rep.analytic, rep.numeric);
  g_assert_cmpstr(rep.tensor, ==, "bias");
  g_assert_cmpfloat(rep.worst, >, 2e-3);
  g_assert_cmpfloat(fabs(rep.analytic), <, 0.11);
  g_assert_cmpint(rep.n_skipped, ==, 0);
  double old = fabs(rep.analytic - rep.numeric) / fmax(1.0, fmax(fabs(rep.analytic), fabs(rep.numeric)));
  g_assert_cmpfloat(old, <, 2e-3);
}

static void test_gradcheck_catches_small_errors(void) {
  loom_layer *l = make_dense(3, 16, true, 7);
  float x[3];
  gradcheck_fill_uniform(x, 3, -1, 1, 4);
  gradcheck_report rep;
  gradcheck_options o = {.tolerance = 2e-3};
  g_assert_cmpint(gradcheck_layer_measure(l, x, 1, &o, &rep), ==, 0);
  g_assert_cmpfloat(rep.worst, <, 2e-3);
  real_dense = l->type;
  loom_layer_type broken = *real_dense;
  broken.backward = wrong_small_bias_backward;
  l->type = &broken;
  check_small_bias_mistake(l, x, 1.01, 0.0);
  check_small_bias_mistake(l, x, 1.0, 1e-3);
  l->type = real_dense;
  loom_layer_free(l);
}

static void load_into(loom_weights *w, const char *family, const char *name) {
  loom_npy a = parity_load(family, name);
  g_assert_cmpint(loom_npy_numel(&a), ==, loom_weights_count(w));
  memcpy(loom_weights_master(w), a.data, (size_t)loom_npy_numel(&a) * sizeof(float));
  loom_weights_touch(w);
  loom_npy_clear(&a);
}

static void test_parity(void) {
  static const struct { const char *name; int64_t batch, n_in, n_out; bool bias; } cases[] = {
    {"b3_5x7_bias", 3, 5, 7, true},   {"b1_1x1_nobias", 1, 1, 1, false}, {"b4_13x6_nobias", 4, 13, 6, false},
    {"b2_17x33_bias", 2, 17, 33, true}, {"b5_64x3_bias", 5, 64, 3, true},
  };
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    char key[96];
    loom_layer *l = make_dense(cases[c].n_in, cases[c].n_out, cases[c].bias, 1);
    g_assert_cmpint(loom_layer_n_weights(l), ==, cases[c].bias ? 2 : 1);
    g_snprintf(key, sizeof key, "%s_weight", cases[c].name);
    load_into(loom_layer_weights(l, 0), "dense", key);
    if (cases[c].bias) {
      g_snprintf(key, sizeof key, "%s_bias", cases[c].name);
      load_into(loom_layer_weights(l, 1), "dense", key);
    }
    g_snprintf(key, sizeof key, "%s_x", cases[c].name);
    loom_npy x = parity_load("dense", key);
    g_snprintf(key, sizeof key, "%s_y", cases[c].name);
    loom_npy y_ref = parity_load("dense", key);
    g_snprintf(key, sizeof key, "%s_dy", cases[c].name);
    loom_npy dy = parity_load("dense", key);
    int64_t b = cases[c].batch;
    float *y = g_new(float, b * cases[c].n_out), *dx = g_new(float, b * cases[c].n_in);
    loom_ctx ctx = {.training = true};
    loom_error err = {0};
    g_assert_cmpint(layer_forward(l, &ctx, x.data, y, b, &err), ==, 0);
    parity_assert_matches(cases[c].name, y, y_ref.data, b * cases[c].n_out);
    layer_zero_grad(l);
    g_assert_cmpint(layer_backward(l, &ctx, x.data, y, dy.data, dx, b, &err), ==, 0);
    g_snprintf(key, sizeof key, "%s_dx", cases[c].name);
    loom_npy ref = parity_load("dense", key);
    parity_assert_matches("dx", dx, ref.data, b * cases[c].n_in);
    loom_npy_clear(&ref);
    g_snprintf(key, sizeof key, "%s_dweight", cases[c].name);
    ref = parity_load("dense", key);
    parity_assert_matches("dweight", loom_layer_grad(l, 0), ref.data, cases[c].n_out * cases[c].n_in);
    loom_npy_clear(&ref);
    if (cases[c].bias) {
      g_snprintf(key, sizeof key, "%s_dbias", cases[c].name);
      ref = parity_load("dense", key);
      parity_assert_matches("dbias", loom_layer_grad(l, 1), ref.data, cases[c].n_out);
      loom_npy_clear(&ref);
    }
    loom_npy_clear(&x);
    loom_npy_clear(&y_ref);
    loom_npy_clear(&dy);
    g_free(y);
    g_free(dx);
    loom_layer_free(l);
  }
}

/* Rank-2 inputs whose last dimension is in_features: the layer applies per position. */
static void test_per_position(void) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  loom_layer_set_int(l, "in_features", 5, &err);
  loom_layer_set_int(l, "out_features", 3, &err);
  int64_t dims[2] = {4, 5};
  loom_shape in = loom_shape_make(2, dims);
  g_assert_cmpint(loom_layer_build(l, &in, 3, &err), ==, 0);
  loom_shape out = loom_layer_out_shape(l);
  g_assert_cmpint(out.rank, ==, 2);
  g_assert_cmpint(out.d[0], ==, 4);
  g_assert_cmpint(out.d[1], ==, 3);
  g_assert_cmpint(loom_layer_flops(l), ==, 4 * (2 * 5 * 3 + 3));
  float x[2 * 20];
  gradcheck_fill_uniform(x, 40, -1, 1, 4);
  gradcheck_layer(l, x, 2, 2e-3);
  /* Each position equals the flattened layer applied to that row alone. */
  float y[2 * 12], y1[3];
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(l, &ctx, x, y, 2, &err), ==, 0);
  loom_layer *flat = loom_layer_clone(l, &err);
  loom_shape in1 = loom_shape_1d(5);
  g_assert_cmpint(loom_layer_build(flat, &in1, 3, &err), ==, 0);
  for (int r = 0; r < 8; r++) {
    g_assert_cmpint(layer_forward(flat, &ctx, x + 5 * r, y1, 1, &err), ==, 0);
    g_assert_cmpmem(y1, sizeof y1, y + 3 * r, sizeof y1);
  }
  loom_layer_free(flat);
  loom_layer_free(l);
}

static void test_build_errors_and_adapt(void) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  int64_t dims[2] = {3, 4};
  loom_shape in = loom_shape_make(2, dims);
  g_assert_cmpint(loom_layer_build(l, &in, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==,
                  "layer dense: in_features is 16 but the input [3×4] has 12 values (and its last dimension is not 16 either)");
  g_assert_false(loom_layer_is_built(l));
  int coord[4] = {0, 1, 2, 0};
  layer_set_coord(l, coord, true);
  g_assert_cmpint(loom_layer_build(l, &in, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_true(g_str_has_prefix(err.message, "layer dense at (0,1,2,0): in_features is 16"));
  loom_shape unset = {0};
  g_assert_cmpint(loom_layer_build(l, &unset, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "layer dense at (0,1,2,0): the input shape [?] is not set");
  g_assert_cmpint(loom_layer_adapt_to_input(l, &in, &err), ==, 0);
  g_assert_cmpint(loom_layer_get_int(l, "in_features"), ==, 12);
  g_assert_cmpint(loom_layer_build(l, &in, 0, &err), ==, 0);
  g_assert_cmpint(loom_layer_out_shape(l).rank, ==, 1);
  g_assert_cmpint(loom_layer_out_shape(l).d[0], ==, 16);
  loom_layer_free(l);
}

static void test_weights_init_and_totals(void) {
  loom_layer *a = make_dense(50, 40, true, 7), *b = make_dense(50, 40, true, 7), *c = make_dense(50, 40, true, 8);
  g_assert_cmpint(loom_layer_param_count(a), ==, 50 * 40 + 40);
  g_assert_cmpuint(loom_layer_bytes(a), ==, (50 * 40 + 40) * 4);
  g_assert_cmpint(loom_layer_flops(a), ==, 2 * 50 * 40 + 40);
  char buf[64];
  g_assert_cmpstr(loom_layer_describe(a, buf, sizeof buf), ==, "dense 50→40, bias");
  g_assert_cmpstr(loom_layer_weights_name(a, 0), ==, "weight");
  g_assert_cmpstr(loom_layer_weights_name(a, 1), ==, "bias");
  g_assert_null(loom_layer_weights_name(a, 2));
  const float *wa = loom_weights_master_const(loom_layer_weights(a, 0));
  const float *wb = loom_weights_master_const(loom_layer_weights(b, 0));
  const float *wc = loom_weights_master_const(loom_layer_weights(c, 0));
  g_assert_cmpmem(wa, 2000 * sizeof(float), wb, 2000 * sizeof(float));
  g_assert_true(memcmp(wa, wc, 2000 * sizeof(float)) != 0);
  /* Kaiming-uniform: inside ±1/√50, spread over the range, mean near 0. */
  double bound = 1.0 / sqrt(50.0), lo = 1, hi = -1, sum = 0;
  for (int i = 0; i < 2000; i++) {
    g_assert_cmpfloat(fabs(wa[i]), <=, bound);
    lo = fmin(lo, wa[i]);
    hi = fmax(hi, wa[i]);
    sum += wa[i];
  }
  g_assert_cmpfloat(lo, <, -0.95 * bound);
  g_assert_cmpfloat(hi, >, 0.95 * bound);
  g_assert_cmpfloat(fabs(sum / 2000), <, 0.01);
  const float *ba = loom_weights_master_const(loom_layer_weights(a, 1));
  g_assert_true(memcmp(ba, wa, 40 * sizeof(float)) != 0); /* weight and bias draw different streams */

  /* Rebuilding with the same shapes keeps the weights; another shape draws new ones. */
  loom_error err = {0};
  loom_shape in = loom_shape_1d(50);
  loom_weights *before = loom_layer_weights(a, 0);
  g_assert_cmpint(loom_layer_build(a, &in, 99, &err), ==, 0);
  g_assert_true(loom_layer_weights(a, 0) == before);
  g_assert_cmpmem(loom_weights_master_const(before), 2000 * sizeof(float), wb, 2000 * sizeof(float));
  loom_layer_set_bool(a, "bias", false, &err);
  g_assert_cmpint(loom_layer_build(a, &in, 99, &err), ==, 0);
  g_assert_cmpint(loom_layer_n_weights(a), ==, 1);
  g_assert_cmpint(loom_layer_param_count(a), ==, 2000);
  g_assert_cmpstr(loom_layer_describe(a, buf, sizeof buf), ==, "dense 50→40");

  /* dtype applies to the weight matrix only; the bias stays float32. */
  g_assert_cmpint(loom_layer_set_dtype(b, LOOM_DTYPE_INT8, &err), ==, 0);
  g_assert_cmpint(loom_weights_dtype(loom_layer_weights(b, 0)), ==, LOOM_DTYPE_INT8);
  g_assert_cmpint(loom_weights_dtype(loom_layer_weights(b, 1)), ==, LOOM_DTYPE_FLOAT32);
  g_assert_cmpuint(loom_layer_bytes(b), ==, 2000 + 40 * 4 /* scales */ + 40 * 4);
  g_assert_cmpuint(loom_layer_bytes_at(c, LOOM_DTYPE_INT8), ==, loom_layer_bytes(b));
  g_assert_cmpint(loom_layer_set_dtype(b, (loom_dtype)99, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer dense: unknown dtype number 99");

  /* A clone is deep and equal. */
  loom_layer *bc = loom_layer_clone(b, &err);
  g_assert_nonnull(bc);
  g_assert_cmpint(loom_layer_get_dtype(bc), ==, LOOM_DTYPE_INT8);
  g_assert_true(loom_layer_weights(bc, 0) != loom_layer_weights(b, 0));
  g_assert_cmpmem(loom_weights_master_const(loom_layer_weights(bc, 0)), 2000 * sizeof(float), wb, 2000 * sizeof(float));
  float x[50], y1[40], y2[40];
  gradcheck_fill_uniform(x, 50, -1, 1, 1);
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(b, &ctx, x, y1, 1, &err), ==, 0);
  g_assert_cmpint(layer_forward(bc, &ctx, x, y2, 1, &err), ==, 0);
  g_assert_cmpmem(y1, sizeof y1, y2, sizeof y2);
  loom_layer_free(bc);
  loom_layer_free(a);
  loom_layer_free(b);
  loom_layer_free(c);
}

/* The quantized forward equals float32 math on the dequantized weights. */
static void test_quantized_forward_uses_effective_weights(void) {
  loom_error err = {0};
  loom_layer *q = make_dense(7, 5, true, 3), *f = make_dense(7, 5, true, 3);
  g_assert_cmpint(loom_layer_set_dtype(q, LOOM_DTYPE_INT4, &err), ==, 0);
  const float *eff = loom_weights_effective(loom_layer_weights(q, 0), &err);
  g_assert_nonnull(eff);
  memcpy(loom_weights_master(loom_layer_weights(f, 0)), eff, 35 * sizeof(float));
  loom_weights_touch(loom_layer_weights(f, 0));
  float x[14], yq[10], yf[10];
  gradcheck_fill_uniform(x, 14, -1, 1, 2);
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(q, &ctx, x, yq, 2, &err), ==, 0);
  g_assert_cmpint(layer_forward(f, &ctx, x, yf, 2, &err), ==, 0);
  g_assert_cmpmem(yq, sizeof yq, yf, sizeof yf);
  loom_layer_free(q);
  loom_layer_free(f);
}

/* The engine's own kernels (the default; test-sgemm holds every level to the
 * reference bit for bit) are held to the parity vectors, and so is the
 * OpenBLAS path a benchmark can ask for; the two agree closely on a product
 * large enough to split into tiles, and each gives the same bits for any
 * thread count. */
static void test_parity_reference_kernel(void) {
  loom_sgemm_use_blas(false);
  test_parity();
  enum { M = 70, N = 90, K = 200 };
  float *a = g_new(float, M * K), *b = g_new(float, N * K), *c_ref = g_new(float, M * N), *c_blas = g_new(float, M * N);
  gradcheck_fill_uniform(a, M * K, -1, 1, 1);
  gradcheck_fill_uniform(b, N * K, -1, 1, 2);
  /* Each kernel gives the same bits without a pool and with 1, 2 and 7 threads. */
  static const int threads[] = {0, 1, 2, 7};
  float *c_other = g_new(float, M * N);
  for (int use_blas = 0; use_blas < 2; use_blas++) {
    loom_sgemm_use_blas(use_blas);
    float *c = use_blas ? c_blas : c_ref;
    for (size_t t = 0; t < G_N_ELEMENTS(threads); t++) {
      loom_pool *pool = threads[t] ? loom_pool_new(threads[t], NULL) : NULL;
      if (threads[t]) g_assert_nonnull(pool);
      loom_sgemm(pool, false, true, M, N, K, a, K, b, K, false, t ? c_other : c, N);
      if (t) g_assert_cmpmem(c, M * N * sizeof(float), c_other, M * N * sizeof(float));
      loom_pool_free(pool);
    }
  }
  if (loom_sgemm_blas_available()) {
    loom_sgemm_use_blas(true);
    test_parity();
  }
  loom_sgemm_use_blas(false); /* the default */
  /* Exact double-precision check of one element of each. */
  double exact = 0;
  for (int p = 0; p < K; p++) exact += (double)a[5 * K + p] * b[7 * K + p];
  g_assert_cmpfloat(fabs(c_ref[5 * N + 7] - exact), <, 1e-4);
  /* Two float32 computations with different summation orders, not a reference. */
  parity_assert_close("engine vs blas", c_ref, c_blas, M * N, 1e-4, 1e-5);
  g_free(c_other);
  g_free(a);
  g_free(b);
  g_free(c_ref);
  g_free(c_blas);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/layers/dense/gradcheck", test_gradcheck);
  g_test_add_func("/layers/dense/gradcheck-catches-errors", test_gradcheck_catches_errors);
  g_test_add_func("/layers/dense/gradcheck-catches-small-errors", test_gradcheck_catches_small_errors);
  g_test_add_func("/layers/dense/parity", test_parity);
  g_test_add_func("/layers/dense/parity-reference-kernel", test_parity_reference_kernel);
  g_test_add_func("/layers/dense/per-position", test_per_position);
  g_test_add_func("/layers/dense/build-errors-and-adapt", test_build_errors_and_adapt);
  g_test_add_func("/layers/dense/weights-init-and-totals", test_weights_init_and_totals);
  g_test_add_func("/layers/dense/quantized-forward", test_quantized_forward_uses_effective_weights);
  return g_test_run();
}
