/* sparsemax and entmax15 (engine/layers/sparsemax.c). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "softmax-test-util.h"

static void check_case(const char *type, const char *name) {
  st_case c = st_case_load(name);
  loom_layer *l = st_layer(type);
  st_build(l, c.shape);
  st_case_check(l, &c);
  /* The references have exact zeros; so must we, at the same places. */
  loom_shape out = loom_layer_out_shape(l);
  loom_ctx ctx = {0};
  float *y = st_forward(l, &ctx, c.x.data, c.batch);
  int64_t n = c.batch * loom_shape_numel(&out);
  for (int64_t i = 0; i < n; i++) g_assert_cmpint(y[i] == 0.0f, ==, c.y.data[i] == 0.0f);
  g_free(y);
  loom_layer_free(l);
  st_case_free(&c);
}

static void test_parity(void) {
  check_case("sparsemax", "sparsemax_9");
  check_case("sparsemax", "sparsemax_3d");
  check_case("sparsemax", "sparsemax_n1");
  check_case("entmax15", "entmax15_9");
  check_case("entmax15", "entmax15_3d");
  check_case("entmax15", "entmax15_n1");
}

static float *run(const char *type, const float *x, int64_t batch, int64_t n) {
  const int64_t dims[] = {n};
  loom_layer *l = st_layer(type);
  st_build(l, loom_shape_make(1, dims));
  loom_ctx ctx = {0};
  float *y = st_forward(l, &ctx, x, batch);
  loom_layer_free(l);
  return y;
}

/* Hand-computed cases. */
static void test_definitions(void) {
  /* sparsemax([1, 0.5, -2]): support {0, 1}, τ = (1.5 − 1)/2 = 0.25. */
  const float x[] = {1.0f, 0.5f, -2.0f};
  float *y = run("sparsemax", x, 1, 3);
  const float want[] = {0.75f, 0.25f, 0.0f};
  g_assert_cmpmem(y, sizeof want, want, sizeof want);
  g_free(y);
  /* Ties: sparsemax([2, 2, 0]) = [1/2, 1/2, 0]; one dominant logit gives one-hot. */
  const float ties[] = {2.0f, 2.0f, 0.0f, 5.0f, 0.0f, 0.0f};
  y = run("sparsemax", ties, 2, 3);
  const float want_ties[] = {0.5f, 0.5f, 0.0f, 1.0f, 0.0f, 0.0f};
  g_assert_cmpmem(y, sizeof want_ties, want_ties, sizeof want_ties);
  g_free(y);
  /* entmax15([1, 0, -4]): x/2 − max = [0, −0.5, −2]; support 2,
   * τ = −0.25 − √0.4375, p = [(0.25 + √0.4375)², (√0.4375 − 0.25)², 0]. */
  const float z[] = {1.0f, 0.0f, -4.0f};
  y = run("entmax15", z, 1, 3);
  double r = sqrt(0.4375);
  g_assert_cmpfloat_with_epsilon(y[0], (0.25 + r) * (0.25 + r), 1e-7);
  g_assert_cmpfloat_with_epsilon(y[1], (r - 0.25) * (r - 0.25), 1e-7);
  g_assert_cmpfloat(y[2], ==, 0.0f);
  g_free(y);
  /* Equal logits: uniform for both. */
  const float flat[] = {0.3f, 0.3f, 0.3f, 0.3f};
  for (int t = 0; t < 2; t++) {
    y = run(t ? "entmax15" : "sparsemax", flat, 1, 4);
    for (int i = 0; i < 4; i++) g_assert_cmpfloat_with_epsilon(y[i], 0.25, 1e-7);
    g_free(y);
  }
}

static void test_properties(void) {
  enum { B = 50, N = 33 };
  float *x = g_new(float, B * N);
  gradcheck_fill_uniform(x, B * N, -4.0, 4.0, 77);
  float *sp = run("sparsemax", x, B, N), *em = run("entmax15", x, B, N);
  st_assert_rows_sum_to_one(sp, B, N, 2e-6);
  st_assert_rows_sum_to_one(em, B, N, 2e-6);
  int64_t zeros_sp = 0, zeros_em = 0;
  for (int i = 0; i < B * N; i++) {
    zeros_sp += sp[i] == 0.0f;
    zeros_em += em[i] == 0.0f;
    /* Supports shrink as α grows: entmax15 (α = 1.5) keeps all of sparsemax's (α = 2). */
    if (sp[i] > 0.0f) g_assert_cmpfloat(em[i], >, 0.0f);
  }
  g_test_message("exact zeros: sparsemax %lld, entmax15 %lld of %d", (long long)zeros_sp, (long long)zeros_em, B * N);
  g_assert_cmpint(zeros_sp, >, B * N / 2);
  g_assert_cmpint(zeros_em, >, B * N / 4);
  g_assert_cmpint(zeros_sp, >=, zeros_em);
  /* Shift invariance: adding 100 to every logit changes nothing but rounding. */
  for (int i = 0; i < B * N; i++) x[i] += 100.0f;
  float *sp2 = run("sparsemax", x, B, N), *em2 = run("entmax15", x, B, N);
  for (int i = 0; i < B * N; i++) {
    g_assert_cmpfloat_with_epsilon(sp2[i], sp[i], 2e-5);
    g_assert_cmpfloat_with_epsilon(em2[i], em[i], 2e-5);
  }
  g_free(sp);
  g_free(em);
  g_free(sp2);
  g_free(em2);
  g_free(x);
}

/* Inputs with ties inside and outside the support, kept away from the
 * support's edge (where the map has a kink). */
static void fill_with_ties(float *x, int64_t rows, int64_t n, uint64_t seed) {
  gradcheck_fill_uniform(x, rows * n, -2.0, 2.0, seed);
  for (int64_t r = 0; r < rows; r++) {
    float *row = x + r * n;
    if (n >= 2) row[1] = row[0] = 1.5f;        /* tie at the top */
    if (n >= 5) row[n - 1] = row[n - 2] = -3.0f; /* tie far below */
  }
}

static void gradcheck_type(const char *type, loom_shape s, int64_t batch, uint64_t seed) {
  loom_layer *l = st_layer(type);
  st_build(l, s);
  int64_t n = s.d[s.rank - 1], rows = batch * loom_shape_numel(&s) / n;
  float *x = g_new(float, rows * n);
  fill_with_ties(x, rows, n, seed);
  gradcheck_options o = {.tolerance = 5e-4, .seed = seed};
  gradcheck_report rep;
  g_assert_cmpint(gradcheck_layer_measure(l, x, batch, &o, &rep), ==, 0);
  char what[64];
  g_snprintf(what, sizeof what, "%s n=%lld", type, (long long)n);
  gradcheck_judge(&rep, 5e-4, what);
  g_test_message("%s: worst %.3g, %lld checked, %lld on kinks", what, rep.worst, (long long)rep.n_checked,
                 (long long)rep.n_skipped);
  g_free(x);
  loom_layer_free(l);
}

static void test_gradcheck(void) {
  const int64_t sizes[] = {1, 2, 5, 8, 13};
  const int64_t three_d[] = {2, 3, 7};
  for (int t = 0; t < 2; t++) {
    const char *type = t ? "entmax15" : "sparsemax";
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++)
      gradcheck_type(type, loom_shape_make(1, &sizes[i]), 3, 100 + i);
    gradcheck_type(type, loom_shape_make(3, three_d), 2, 200);
  }
}

/* On the support the Jacobian is exact: diag(s) − s sᵀ/Σs with s = 1 or √p. */
static void test_backward_formula(void) {
  const int64_t four[] = {4};
  const float x[] = {1.0f, 0.5f, -2.0f, 0.9f};
  const float dy[] = {0.3f, -1.0f, 7.0f, 2.0f};
  for (int t = 0; t < 2; t++) {
    loom_layer *l = st_layer(t ? "entmax15" : "sparsemax");
    st_build(l, loom_shape_make(1, four));
    loom_ctx ctx = {0};
    float *y = st_forward(l, &ctx, x, 1);
    float *dx = st_backward(l, &ctx, x, y, dy, 1);
    double s[4], ss = 0.0, sdy = 0.0;
    for (int i = 0; i < 4; i++) {
      s[i] = y[i] > 0.0f ? (t ? sqrt(y[i]) : 1.0) : 0.0;
      ss += s[i];
      sdy += s[i] * dy[i];
    }
    g_assert_cmpfloat(y[2], ==, 0.0f);
    g_assert_cmpfloat(dx[2], ==, 0.0f); /* off the support: no gradient, whatever dy says */
    double sum = 0.0;
    for (int i = 0; i < 4; i++) {
      g_assert_cmpfloat_with_epsilon(dx[i], s[i] * (dy[i] - sdy / ss), 1e-6);
      sum += dx[i];
    }
    g_assert_cmpfloat_with_epsilon(sum, 0.0, 1e-6); /* outputs stay on the simplex */
    g_free(y);
    g_free(dx);
    loom_layer_free(l);
  }
}

static void test_errors_and_describe(void) {
  const int64_t five[] = {5};
  loom_error err = {0};
  loom_layer *l = st_layer("entmax15");
  char buf[64];
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "entmax15");
  st_build(l, loom_shape_make(1, five));
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "entmax15 over 5");
  g_assert_cmpint(loom_layer_flops(l), ==, 5 * (3 + 10));
  float x[5] = {0, 1, INFINITY, 2, 3}, y[5];
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(l, &ctx, x, y, 1, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "layer entmax15: input sample 0, row 0, entry 2 is inf; expected a finite value");
  loom_layer_free(l);
  l = st_layer("sparsemax");
  st_build(l, loom_shape_make(1, five));
  g_assert_cmpint(loom_layer_flops(l), ==, 5 * (3 + 4));
  loom_layer_free(l);
}

static void test_threads(void) {
  const int64_t shape[] = {4, 9}, batch = 300;
  int64_t n = batch * 36;
  float *x = g_new(float, n), *dy = g_new(float, n);
  gradcheck_fill_uniform(x, n, -3.0, 3.0, 5);
  gradcheck_fill_uniform(dy, n, -1.0, 1.0, 6);
  for (int t = 0; t < 2; t++) {
    loom_layer *l = st_layer(t ? "entmax15" : "sparsemax");
    st_build(l, loom_shape_make(2, shape));
    st_assert_thread_independent(l, x, dy, batch);
    loom_layer_free(l);
  }
  g_free(x);
  g_free(dy);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sparsemax-entmax/parity", test_parity);
  g_test_add_func("/sparsemax-entmax/definitions", test_definitions);
  g_test_add_func("/sparsemax-entmax/properties", test_properties);
  g_test_add_func("/sparsemax-entmax/gradcheck", test_gradcheck);
  g_test_add_func("/sparsemax-entmax/backward-formula", test_backward_formula);
  g_test_add_func("/sparsemax-entmax/errors-and-describe", test_errors_and_describe);
  g_test_add_func("/sparsemax-entmax/threads", test_threads);
  return g_test_run();
}
