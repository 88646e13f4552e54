/* kmeans (engine/layers/kmeans.c). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "softmax-test-util.h"

static loom_layer *kmeans_layer(int64_t k, double t, const char *output) {
  loom_error err = {0};
  loom_layer *l = st_layer("kmeans");
  g_assert_cmpint(loom_layer_set_int(l, "n_clusters", k, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_float(l, "temperature", t, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_enum(l, "output", output, &err), ==, LOOM_OK);
  return l;
}

static void set_centres(loom_layer *l, const float *c) {
  loom_weights *w = loom_layer_weights(l, 0);
  memcpy(loom_weights_master(w), c, (size_t)loom_weights_count(w) * sizeof(float));
  loom_weights_touch(w);
}

static void check_case(const char *name) {
  st_case c = st_case_load(name);
  loom_npy p = st_case_extra(&c, "params"), centres = st_case_extra(&c, "centres"),
           dcentres = st_case_extra(&c, "dcentres");
  loom_layer *l = kmeans_layer((int64_t)p.data[0], p.data[1], p.data[2] == 1.0f ? "features" : "probabilities");
  st_build(l, c.shape);
  g_assert_cmpint(loom_weights_count(loom_layer_weights(l, 0)), ==, loom_npy_numel(&centres));
  set_centres(l, centres.data);
  layer_zero_grad(l);
  st_case_check(l, &c);
  char what[96];
  g_snprintf(what, sizeof what, "%s centres gradient", name);
  parity_assert_matches(what, loom_layer_grad(l, 0), dcentres.data, loom_npy_numel(&dcentres));
  loom_npy_clear(&p);
  loom_npy_clear(&centres);
  loom_npy_clear(&dcentres);
  loom_layer_free(l);
  st_case_free(&c);
}

static void test_parity(void) {
  check_case("kmeans_prob");
  check_case("kmeans_feat");
}

static void test_shapes_and_describe(void) {
  const int64_t seq[] = {6, 3};
  loom_layer *l = kmeans_layer(4, 0.5, "probabilities");
  char buf[96];
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "kmeans 4 clusters, T=0.5, probabilities");
  st_build(l, loom_shape_make(2, seq));
  loom_shape out = loom_layer_out_shape(l);
  g_assert_cmpint(out.rank, ==, 2);
  g_assert_cmpint(out.d[0], ==, 6);
  g_assert_cmpint(out.d[1], ==, 4);
  g_assert_cmpint(loom_layer_n_weights(l), ==, 1);
  g_assert_cmpstr(loom_layer_weights_name(l, 0), ==, "centres");
  g_assert_cmpint(loom_layer_param_count(l), ==, 12);
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "kmeans 4 clusters of 3, T=0.5, probabilities");
  g_assert_cmpint(loom_layer_flops(l), ==, 6 * (3 * 4 * 3 + 5 * 4));
  loom_layer_free(l);
  l = kmeans_layer(4, 0.5, "features");
  st_build(l, loom_shape_make(2, seq));
  out = loom_layer_out_shape(l);
  g_assert_cmpint(out.d[1], ==, 3);
  g_assert_cmpint(loom_layer_flops(l), ==, 6 * (3 * 4 * 3 + 5 * 4 + 2 * 4 * 3));
  const loom_layer_type *t = loom_layer_type_find("kmeans");
  g_assert_cmpint(loom_layer_type_id(t), ==, 110);
  g_assert_cmpuint(loom_layer_type_flags(t), ==, LOOM_LAYER_WEIGHTED);
  g_assert_cmpstr(loom_layer_type_group(t), ==, "Clustering");
  loom_error err = {0};
  /* Distributions only in probabilities mode: the layer answers, not the type. */
  g_assert_false(loom_layer_outputs_probabilities(l));
  g_assert_cmpint(loom_layer_set_enum(l, "output", "probabilities", &err), ==, LOOM_OK);
  g_assert_true(loom_layer_outputs_probabilities(l));
  g_assert_cmpint(loom_layer_set_enum(l, "output", "features", &err), ==, LOOM_OK);
  g_assert_false(loom_layer_outputs_probabilities(l));
  st_build(l, loom_shape_make(2, seq));
  g_assert_cmpint(loom_layer_set_enum(l, "output", "centroids", &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpint(loom_layer_set_float(l, "temperature", 0.0, &err), ==, LOOM_ERR_INVALID);
  float x[18] = {0}, y[18];
  x[7] = NAN;
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(l, &ctx, x, y, 1, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "layer kmeans: input sample 0, row 2, entry 1 is nan; expected a finite value");
  loom_layer_free(l);
}

/* Probabilities follow softmax(−‖x − c_k‖²/T); features mix the centres. */
static void test_definition(void) {
  const int64_t two[] = {2};
  const float centres[] = {0, 0, 2, 0};
  const float x[] = {1.5f, 0.0f}; /* squared distances 2.25 and 0.25 */
  for (int mode = 0; mode < 2; mode++) {
    loom_layer *l = kmeans_layer(2, 0.5, mode ? "features" : "probabilities");
    st_build(l, loom_shape_make(1, two));
    set_centres(l, centres);
    loom_ctx ctx = {0};
    float *y = st_forward(l, &ctx, x, 1);
    double p1 = 1.0 / (1.0 + exp(-(2.25 - 0.25) / 0.5));
    if (mode == 0) {
      g_assert_cmpfloat_with_epsilon(y[0], 1.0 - p1, 1e-7);
      g_assert_cmpfloat_with_epsilon(y[1], p1, 1e-7);
    } else {
      g_assert_cmpfloat_with_epsilon(y[0], 2.0 * p1, 1e-6);
      g_assert_cmpfloat(y[1], ==, 0.0f);
    }
    g_free(y);
    loom_layer_free(l);
  }
}

static void gradcheck_case(int64_t k, double t, const char *output, loom_shape s, int64_t batch, uint64_t seed) {
  loom_layer *l = kmeans_layer(k, t, output);
  st_build(l, s);
  int64_t n = batch * loom_shape_numel(&s);
  float *x = g_new(float, n);
  gradcheck_fill_uniform(x, n, -1.5, 1.5, seed);
  double worst = gradcheck_layer(l, x, batch, 5e-4);
  g_test_message("kmeans K=%lld %s: worst %.3g", (long long)k, output, worst);
  g_free(x);
  loom_layer_free(l);
}

static void test_gradcheck(void) {
  const int64_t one[] = {1}, five[] = {5}, seq[] = {5, 3}, pairs[] = {3, 2};
  for (int mode = 0; mode < 2; mode++) {
    const char *output = mode ? "features" : "probabilities";
    gradcheck_case(4, 1.0, output, loom_shape_make(2, seq), 2, 1);
    gradcheck_case(1, 1.0, output, loom_shape_make(1, one), 3, 2);
    gradcheck_case(3, 2.5, output, loom_shape_make(1, five), 3, 3);
    gradcheck_case(2, 0.7, output, loom_shape_make(2, pairs), 2, 4);
    gradcheck_case(5, 1.3, output, loom_shape_make(1, one), 4, 5);
  }
}

/* The centres compute at the layer's dtype: int8 equals float32 math on the
 * dequantized centres; gradients reach the float32 master. */
static void test_quantized(void) {
  const int64_t four[] = {4};
  loom_error err = {0};
  loom_layer *q = kmeans_layer(3, 1.0, "features"), *f = kmeans_layer(3, 1.0, "features");
  st_build(q, loom_shape_make(1, four));
  st_build(f, loom_shape_make(1, four));
  g_assert_cmpint(loom_layer_set_dtype(q, LOOM_DTYPE_INT8, &err), ==, LOOM_OK);
  const float *deq = loom_weights_effective(loom_layer_weights(q, 0), &err);
  g_assert_nonnull(deq);
  const float *master = loom_weights_master(loom_layer_weights(q, 0));
  bool differs = false;
  for (int i = 0; i < 12; i++) differs |= deq[i] != master[i];
  g_assert_true(differs);
  set_centres(f, deq);
  float x[8];
  gradcheck_fill_uniform(x, 8, -1.0, 1.0, 9);
  loom_ctx ctx = {0};
  float *yq = st_forward(q, &ctx, x, 2), *yf = st_forward(f, &ctx, x, 2);
  g_assert_cmpmem(yq, 8 * sizeof(float), yf, 8 * sizeof(float));
  layer_zero_grad(q);
  layer_zero_grad(f);
  float *dxq = st_backward(q, &ctx, x, yq, x, 2), *dxf = st_backward(f, &ctx, x, yf, x, 2);
  g_assert_cmpmem(dxq, sizeof x, dxf, sizeof x);
  g_assert_cmpmem(loom_layer_grad(q, 0), 12 * sizeof(float), loom_layer_grad(f, 0), 12 * sizeof(float));
  g_free(yq);
  g_free(yf);
  g_free(dxq);
  g_free(dxf);
  loom_layer_free(q);
  loom_layer_free(f);
}

/* Three well-separated blobs; a few gradient steps on the reconstruction
 * error ‖features(x) − x‖² move every centre toward its blob. */
static void test_learns_blobs(void) {
  enum { PER_BLOB = 30, N = 3 * PER_BLOB, STEPS = 25 };
  const float blobs[3][2] = {{-4.0f, 0.0f}, {4.0f, 0.0f}, {0.0f, 5.0f}};
  const float start[] = {-1.0f, -1.0f, 1.0f, -1.0f, 0.0f, 1.0f};
  const int64_t two[] = {2};
  float x[N * 2], noise[N * 2], dy[N * 2];
  gradcheck_fill_uniform(noise, N * 2, -0.5, 0.5, 31);
  for (int i = 0; i < N; i++)
    for (int d = 0; d < 2; d++) x[i * 2 + d] = blobs[i % 3][d] + noise[i * 2 + d];
  loom_layer *l = kmeans_layer(3, 2.0, "features");
  st_build(l, loom_shape_make(1, two));
  set_centres(l, start);
  loom_weights *w = loom_layer_weights(l, 0);
  loom_ctx ctx = {.training = true};
  double first_loss = 0.0, loss = 0.0;
  for (int step = 0; step < STEPS; step++) {
    float *y = st_forward(l, &ctx, x, N);
    loss = 0.0;
    for (int i = 0; i < N * 2; i++) {
      loss += (double)(y[i] - x[i]) * (y[i] - x[i]) / N;
      dy[i] = 2.0f * (y[i] - x[i]) / N;
    }
    if (step == 0) first_loss = loss;
    layer_zero_grad(l);
    float *dx = st_backward(l, &ctx, x, y, dy, N);
    float *c = loom_weights_master(w);
    for (int i = 0; i < 6; i++) c[i] -= 0.5f * loom_layer_grad(l, 0)[i];
    loom_weights_touch(w);
    g_free(y);
    g_free(dx);
  }
  const float *c = loom_weights_master(w);
  for (int k = 0; k < 3; k++) {
    double before = hypot(start[k * 2] - blobs[k][0], start[k * 2 + 1] - blobs[k][1]);
    double after = hypot(c[k * 2] - blobs[k][0], c[k * 2 + 1] - blobs[k][1]);
    g_test_message("centre %d: (%.3f, %.3f), distance to its blob %.3f → %.3f", k, c[k * 2], c[k * 2 + 1], before,
                   after);
    g_assert_cmpfloat(after, <, 0.5 * before);
  }
  g_test_message("loss %.4f → %.4f", first_loss, loss);
  g_assert_cmpfloat(loss, <, 0.25 * first_loss);
  loom_layer_free(l);
}

static void test_threads(void) {
  const int64_t shape[] = {4, 6}, batch = 200;
  int64_t n = batch * 24, n_prob = batch * 4 * 9;
  float *x = g_new(float, n), *dy = g_new(float, n_prob > n ? n_prob : n);
  gradcheck_fill_uniform(x, n, -2.0, 2.0, 1);
  gradcheck_fill_uniform(dy, n_prob > n ? n_prob : n, -1.0, 1.0, 2);
  for (int mode = 0; mode < 2; mode++) {
    loom_layer *l = kmeans_layer(9, 1.5, mode ? "features" : "probabilities");
    st_build(l, loom_shape_make(2, shape));
    st_assert_thread_independent(l, x, dy, batch);
    loom_layer_free(l);
  }
  g_free(x);
  g_free(dy);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/kmeans/parity", test_parity);
  g_test_add_func("/kmeans/shapes-and-describe", test_shapes_and_describe);
  g_test_add_func("/kmeans/definition", test_definition);
  g_test_add_func("/kmeans/gradcheck", test_gradcheck);
  g_test_add_func("/kmeans/quantized", test_quantized);
  g_test_add_func("/kmeans/learns-blobs", test_learns_blobs);
  g_test_add_func("/kmeans/threads", test_threads);
  return g_test_run();
}
