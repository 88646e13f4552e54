#include <glib.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "layers/layer-impl.h"
#include "loom/loom.h"
#include "loom/layer.h"
#include "parity.h"

/* Activations compute in float64 and round once: held tighter than the
 * reduction term of parity.h (the old fixed 1e-7 corresponds to max|ref| ≈ 10). */
#define ACT_ATOL_SCALE 1e-8

typedef struct {
  const char *vector; /* parity case */
  const char *type;
  const char *param; /* NULL, a float parameter, or "approximate" */
  double value;
  const char *param2;
  double value2;
} act_case;

static const act_case cases[] = {
  {"relu", "relu", NULL, 0, NULL, 0},
  {"leaky_relu_default", "leaky-relu", NULL, 0, NULL, 0},
  {"leaky_relu_0_2", "leaky-relu", "negative_slope", 0.2, NULL, 0},
  {"elu_default", "elu", NULL, 0, NULL, 0},
  {"elu_0_5", "elu", "alpha", 0.5, NULL, 0},
  {"gelu_none", "gelu", NULL, 0, NULL, 0},
  {"gelu_tanh", "gelu", "approximate", 1, NULL, 0},
  {"silu", "silu", NULL, 0, NULL, 0},
  {"sigmoid", "sigmoid", NULL, 0, NULL, 0},
  {"tanh", "tanh", NULL, 0, NULL, 0},
  {"softplus_default", "softplus", NULL, 0, NULL, 0},
  {"softplus_b2_t3", "softplus", "beta", 2.0, "threshold", 3.0},
  {"relu2", "relu2", NULL, 0, NULL, 0},
};

static loom_layer *make(const act_case *c, int64_t n) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(c->type, &err);
  g_assert_nonnull(l);
  if (c->param && strcmp(c->param, "approximate") == 0)
    g_assert_cmpint(loom_layer_set_enum(l, "approximate", c->value == 1 ? "tanh" : "none", &err), ==, 0);
  else if (c->param)
    g_assert_cmpint(loom_layer_set_float(l, c->param, c->value, &err), ==, 0);
  if (c->param2) g_assert_cmpint(loom_layer_set_float(l, c->param2, c->value2, &err), ==, 0);
  loom_shape in = loom_shape_1d(n);
  if (loom_layer_build(l, &in, 0, &err)) g_error("%s", err.message);
  return l;
}

static void test_parity(void) {
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const act_case *c = &cases[i];
    char key[96];
    g_snprintf(key, sizeof key, "%s_x", c->vector);
    loom_npy x = parity_load("activations", key);
    g_assert_cmpint(x.ndim, ==, 2);
    int64_t batch = x.shape[0], n = x.shape[1];
    loom_layer *l = make(c, n);
    g_snprintf(key, sizeof key, "%s_y", c->vector);
    loom_npy y_ref = parity_load("activations", key);
    g_snprintf(key, sizeof key, "%s_dy", c->vector);
    loom_npy dy = parity_load("activations", key);
    g_snprintf(key, sizeof key, "%s_dx", c->vector);
    loom_npy dx_ref = parity_load("activations", key);
    float *y = g_new(float, batch * n), *dx = g_new(float, batch * n);
    loom_ctx ctx = {.training = true};
    loom_error err = {0};
    g_assert_cmpint(layer_forward(l, &ctx, x.data, y, batch, &err), ==, 0);
    g_assert_cmpint(layer_backward(l, &ctx, x.data, y, dy.data, dx, batch, &err), ==, 0);
    char what[128];
    g_snprintf(what, sizeof what, "%s y", c->vector);
    parity_assert_matches_tol(what, y, y_ref.data, batch * n, PARITY_RTOL, ACT_ATOL_SCALE);
    g_snprintf(what, sizeof what, "%s dx", c->vector);
    parity_assert_matches_tol(what, dx, dx_ref.data, batch * n, PARITY_RTOL, ACT_ATOL_SCALE);
    loom_npy_clear(&x);
    loom_npy_clear(&y_ref);
    loom_npy_clear(&dy);
    loom_npy_clear(&dx_ref);
    g_free(y);
    g_free(dx);
    loom_layer_free(l);
  }
}

static void test_gradcheck(void) {
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    loom_layer *l = make(&cases[i], 23);
    float x[3 * 23];
    /* Away from the kink at 0; softplus_b2_t3 switches at x = 1.5, kept off too. */
    gradcheck_fill_away_from_zero(x, 3 * 23, -3, 3, 0.05, i);
    for (int k = 0; k < 3 * 23; k++)
      if (fabsf(x[k] - 1.5f) < 0.05f) x[k] = 1.7f;
    double worst = gradcheck_layer(l, x, 3, 2e-3);
    g_test_message("%s: worst %.3g", cases[i].vector, worst);
    loom_layer_free(l);
  }
}

static void test_params_and_describe(void) {
  loom_error err = {0};
  loom_layer *g = loom_layer_new_by_name("gelu", &err);
  char buf[96];
  g_assert_cmpstr(loom_layer_describe(g, buf, sizeof buf), ==, "gelu");
  g_assert_cmpint(loom_layer_set_enum(g, "approximate", "fast", &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer gelu: parameter “approximate” has no choice “fast” (expected one of: none, tanh)");
  g_assert_cmpint(loom_layer_set_enum(g, "approximate", "tanh", &err), ==, 0);
  g_assert_cmpint(loom_layer_get_int(g, "approximate"), ==, 1);
  g_assert_cmpstr(loom_layer_describe(g, buf, sizeof buf), ==, "gelu tanh");
  loom_layer_free(g);

  loom_layer *s = loom_layer_new_by_name("softplus", &err);
  g_assert_cmpfloat(loom_layer_get_float(s, "beta"), ==, 1.0);
  g_assert_cmpfloat(loom_layer_get_float(s, "threshold"), ==, 20.0);
  g_assert_cmpint(loom_layer_set_float(s, "beta", 0.0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer softplus: parameter “beta” must be between 1e-06 and 1000000, got 0");
  g_assert_cmpint(loom_layer_set_float(s, "beta", NAN, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer softplus: parameter “beta” must be a finite number");
  g_assert_cmpstr(loom_layer_describe(s, buf, sizeof buf), ==, "softplus β=1 threshold 20");
  loom_layer_free(s);

  loom_layer *lr = loom_layer_new_by_name("leaky-relu", &err);
  g_assert_cmpfloat(loom_layer_get_float(lr, "negative_slope"), ==, 0.01);
  g_assert_cmpstr(loom_layer_describe(lr, buf, sizeof buf), ==, "leaky-relu 0.01");
  loom_layer_free(lr);

  /* Activations keep the shape, whatever its rank, and have no weights. */
  loom_layer *t = loom_layer_new_by_name("tanh", &err);
  int64_t dims[3] = {2, 3, 4};
  loom_shape in = loom_shape_make(3, dims);
  g_assert_cmpint(loom_layer_build(t, &in, 0, &err), ==, 0);
  loom_shape out = loom_layer_out_shape(t);
  g_assert_true(loom_shape_equal(&in, &out));
  g_assert_cmpint(loom_layer_n_weights(t), ==, 0);
  g_assert_cmpint(loom_layer_param_count(t), ==, 0);
  g_assert_cmpint(loom_layer_flops(t), ==, 5 * 24);
  loom_layer_free(t);
}

/* Exact values at a few points, independent of PyTorch. */
static void test_exact_points(void) {
  static const struct { const char *type; float x, y, dydx; } pts[] = {
    {"relu", -2.0f, 0.0f, 0.0f},     {"relu", 3.0f, 3.0f, 1.0f},         {"relu2", 3.0f, 9.0f, 6.0f},
    {"relu2", -1.0f, 0.0f, 0.0f},    {"leaky-relu", -2.0f, -0.02f, 0.01f}, {"sigmoid", 0.0f, 0.5f, 0.25f},
    {"tanh", 0.0f, 0.0f, 1.0f},      {"silu", 0.0f, 0.0f, 0.5f},         {"gelu", 0.0f, 0.0f, 0.5f},
    {"softplus", 25.0f, 25.0f, 1.0f}, {"elu", 2.0f, 2.0f, 1.0f},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(pts); i++) {
    act_case c = {"", pts[i].type, NULL, 0, NULL, 0};
    loom_layer *l = make(&c, 1);
    float y, dx, one = 1.0f;
    loom_ctx ctx = {0};
    loom_error err = {0};
    g_assert_cmpint(layer_forward(l, &ctx, &pts[i].x, &y, 1, &err), ==, 0);
    g_assert_cmpint(layer_backward(l, &ctx, &pts[i].x, &y, &one, &dx, 1, &err), ==, 0);
    g_assert_cmpfloat(y, ==, pts[i].y);
    g_assert_cmpfloat(dx, ==, pts[i].dydx);
    loom_layer_free(l);
  }
}

static uint32_t bits_of(float v) {
  uint32_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

/* ReLU runs float loops of its own (activation.c); they must give the bits of
 * the double formula every other activation uses, at the edges too: ±0, NaN,
 * ±inf, subnormals, and a negative dy where x ≤ 0 (dx is −0 then). */
static void test_relu_bits(void) {
  static const float xs[] = {-0.0f, 0.0f, NAN, -NAN, INFINITY, -INFINITY, 1e-45f, -1e-45f, 3.5f, -3.5f, FLT_MAX};
  static const float dys[] = {1.0f, -2.0f, -0.0f, NAN, INFINITY};
  enum { N = G_N_ELEMENTS(xs) * G_N_ELEMENTS(dys) };
  float x[N], dy[N], y[N], dx[N];
  int k = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(xs); i++)
    for (size_t j = 0; j < G_N_ELEMENTS(dys); j++, k++) {
      x[k] = xs[i];
      dy[k] = dys[j];
    }
  act_case c = {"", "relu", NULL, 0, NULL, 0};
  loom_layer *l = make(&c, N);
  loom_ctx ctx = {0};
  loom_error err = {0};
  g_assert_cmpint(layer_forward(l, &ctx, x, y, 1, &err), ==, 0);
  g_assert_cmpint(layer_backward(l, &ctx, x, y, dy, dx, 1, &err), ==, 0);
  for (int i = 0; i < N; i++) {
    double xd = x[i];
    float want_y = (float)(xd > 0 ? xd : 0.0);
    float want_dx = (float)((double)dy[i] * (xd > 0 ? 1.0 : 0.0));
    g_assert_cmphex(bits_of(y[i]), ==, bits_of(want_y));
    g_assert_cmphex(bits_of(dx[i]), ==, bits_of(want_dx));
  }
  loom_layer_free(l);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/layers/activations/parity", test_parity);
  g_test_add_func("/layers/activations/gradcheck", test_gradcheck);
  g_test_add_func("/layers/activations/params-and-describe", test_params_and_describe);
  g_test_add_func("/layers/activations/exact-points", test_exact_points);
  g_test_add_func("/layers/activations/relu-bits", test_relu_bits);
  return g_test_run();
}
