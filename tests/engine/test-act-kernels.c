/*
 * The vector activations (kernels/act.h) against the reference: for every
 * level the machine has, sigmoid, silu, tanh and elu (three alphas), forward
 * and backward through the layer, must give the reference level's bits on
 * float32 inputs spread over every exponent (every 65521st bit pattern), the
 * edges (±0, subnormals, ±inf, NaN, the largest values), dense sweeps of the
 * ranges where the formulas cancel or the vector path hands lanes back
 * (around the derivative roots, |x| near 4, 6, 22, 88, 708), with random
 * gradients that include zeros. The whole float32 range, every input, is
 * checked by tests/bench/bench-act --exhaustive.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu.h"
#include "layer-test-util.h"
#include "test-levels.h"

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (uint32_t)(*s >> 32);
}

static GArray *inputs(void) {
  GArray *v = g_array_new(FALSE, FALSE, sizeof(float));
  for (uint64_t u = 0; u < (UINT64_C(1) << 32); u += 65521) {
    float f = from_bits((uint32_t)u);
    g_array_append_val(v, f);
  }
  static const uint32_t edges[] = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000,
                                   0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001,
                                   0x7f800001, 0x3f800000, 0xbf800000, 0x33800000, 0xb3800000};
  for (size_t i = 0; i < G_N_ELEMENTS(edges); i++) {
    float f = from_bits(edges[i]);
    g_array_append_val(v, f);
  }
  static const float centres[] = {0.0f, -1.2785f, -0.7518f, 4.0f, -4.0f, 6.0f, 22.0f, -22.0f, 88.0f, -88.0f,
                                  -87.3f, 103.0f, -103.0f, 708.0f, -708.0f, 40.0f, -40.0f, 0.3466f, -0.3466f};
  for (size_t c = 0; c < G_N_ELEMENTS(centres); c++) {
    /* 4001 consecutive floats around the centre, then a wider sweep */
    float lo = centres[c];
    for (int k = 0; k < 2000; k++) lo = nextafterf(lo, -INFINITY);
    for (int k = 0; k <= 4000; k++, lo = nextafterf(lo, INFINITY)) g_array_append_val(v, lo);
    for (int k = -2000; k <= 2000; k++) {
      float f = centres[c] + (float)k * 1e-3f * (fabsf(centres[c]) + 1.0f);
      g_array_append_val(v, f);
    }
  }
  uint64_t seed = 0x9e3779b97f4a7c15u;
  for (int k = 0; k < 200000; k++) {
    float f = ((float)(xorshift(&seed) >> 8) / 16777216.0f - 0.5f) * 24.0f;
    g_array_append_val(v, f);
  }
  return v;
}

static void gradients(float *dy, int64_t n) {
  uint64_t seed = 12345;
  for (int64_t i = 0; i < n; i++) {
    uint32_t r = xorshift(&seed);
    dy[i] = r % 17 == 0 ? 0.0f : r % 19 == 0 ? -0.0f : ((float)(r >> 8) / 16777216.0f - 0.5f) * 4.0f;
  }
  dy[0] = 1e-30f; /* products in the subnormal range */
  dy[1] = 3e38f;
}

static void run_layer(loom_layer *l, const float *x, const float *dy, float *y, float *dx, int64_t n) {
  lt_forward(l, NULL, x, y, n);
  lt_backward(l, NULL, x, y, dy, dx, n);
}

static void check_type(const char *type, double alpha) {
  GArray *in = inputs();
  const int64_t n = in->len;
  const float *x = (const float *)(void *)in->data;
  float *dy = g_new(float, n), *y0 = g_new(float, n), *dx0 = g_new(float, n), *y1 = g_new(float, n),
        *dx1 = g_new(float, n);
  gradients(dy, n);
  loom_layer *l = lt_new(type);
  if (alpha >= 0) lt_set_float(l, "alpha", alpha);
  const int64_t one[] = {1};
  lt_build(l, 1, one, 1);
  const loom_kernel_level was = loom_kernels_get()->level;
  g_assert_true(loom_kernels_force(LOOM_KERNELS_REF));
  run_layer(l, x, dy, y0, dx0, n);
  int levels = 0;
  for (int lv = LOOM_KERNELS_AVX2; lv <= TEST_LAST_LEVEL; lv++) {
    if (!loom_kernels_force((loom_kernel_level)lv)) {
      g_test_message("%s: level %s not available here", type, loom_kernel_level_name((loom_kernel_level)lv));
      continue;
    }
    g_assert_nonnull(loom_kernels_get()->act);
    levels++;
    run_layer(l, x, dy, y1, dx1, n);
    for (int64_t i = 0; i < n; i++) {
      if (memcmp(&y0[i], &y1[i], 4) != 0 && !(isnan(y0[i]) && isnan(y1[i])))
        g_error("%s (alpha %g) at %s: forward of %a gives %a, the reference %a", type, alpha,
                loom_kernel_level_name((loom_kernel_level)lv), (double)x[i], (double)y1[i], (double)y0[i]);
      if (memcmp(&dx0[i], &dx1[i], 4) != 0 && !(isnan(dx0[i]) && isnan(dx1[i])))
        g_error("%s (alpha %g) at %s: backward of %a (dy %a) gives %a, the reference %a", type, alpha,
                loom_kernel_level_name((loom_kernel_level)lv), (double)x[i], (double)dy[i], (double)dx1[i],
                (double)dx0[i]);
    }
  }
  loom_kernels_force(was);
  if (!levels) g_test_skip("no vector level on this machine");
  loom_layer_free(l);
  g_free(dy), g_free(y0), g_free(dx0), g_free(y1), g_free(dx1);
  g_array_free(in, TRUE);
}

static void test_sigmoid(void) { check_type("sigmoid", -1); }
static void test_silu(void) { check_type("silu", -1); }
static void test_tanh(void) { check_type("tanh", -1); }
static void test_elu(void) {
  check_type("elu", 1.0);
  check_type("elu", 0.37);
  check_type("elu", 0.0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/act-kernels/sigmoid", test_sigmoid);
  g_test_add_func("/act-kernels/silu", test_silu);
  g_test_add_func("/act-kernels/tanh", test_tanh);
  g_test_add_func("/act-kernels/elu", test_elu);
  return g_test_run();
}
