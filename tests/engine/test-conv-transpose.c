/* conv_transpose1d/2d/3d: PyTorch parity, gradients, errors, dtypes, determinism. */
#include <glib.h>
#include <string.h>

#include "conv-test-util.h"
#include "loom/loom.h"

static const char *const parity_cases[] = {
  "t1_basic", "t1_groups_dil", "t2_basic", "t2_groups", "t3_basic", "t3_groups",
};

static void test_parity(void) {
  conv_check_parity_cases(parity_cases, G_N_ELEMENTS(parity_cases));
}

static const conv_cfg gradient_cfgs[] = {
  /* dims, transposed, cin, cout, groups, bias, in, kernel, stride, padding, dilation, output_padding */
  {1, true, 2, 3, 1, true, {4}, {3}, {2}, {1}, {1}, {1}},
  {1, true, 4, 2, 2, false, {5}, {2}, {1}, {0}, {3}, {2}},  /* output_padding < dilation, stride 1 */
  {1, true, 3, 3, 3, true, {7}, {1}, {1}, {0}, {1}, {0}},   /* 1×1 depthwise: the identity plan */
  {2, true, 3, 2, 1, true, {3, 4}, {3, 2}, {2, 3}, {1, 0}, {1, 2}, {1, 2}},
  {2, true, 4, 6, 2, true, {3, 3}, {2, 3}, {3, 1}, {0, 2}, {2, 1}, {2, 0}},
  {3, true, 2, 3, 1, true, {2, 3, 2}, {2, 2, 3}, {2, 1, 2}, {0, 1, 1}, {1, 2, 1}, {1, 1, 0}},
  {3, true, 4, 4, 4, false, {2, 2, 3}, {3, 2, 2}, {1, 2, 1}, {1, 0, 0}, {1, 1, 2}, {0, 1, 1}},
};

static void test_gradients(void) {
  for (size_t i = 0; i < G_N_ELEMENTS(gradient_cfgs); i++) conv_check_gradients(&gradient_cfgs[i], 2, 200 + i);
}

/* The short rows' offset lists give the row copies' bits (transposed: the
 * forward is the scatter, the input gradient the gather). */
static void test_short_row_table(void) {
  /* larger images than the gradient configurations': the AVX-512 level's
   * chunks through memory, two blocks of rows in the forward */
  const conv_cfg wide[] = {
    {2, true, 2, 2, 1, true, {40, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}},
    {2, true, 1, 2, 1, false, {6, 7}, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {0, 0}},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(gradient_cfgs); i++) conv_check_table_matches_rows(&gradient_cfgs[i], 3);
  for (size_t i = 0; i < G_N_ELEMENTS(wide); i++) conv_check_table_matches_rows(&wide[i], 2);
}

/* Samples side by side (conv-core.c) in the transposed products: the
 * forward is the input-gradient product there and the reverse. */
static void test_samples_side_by_side(void) {
  const conv_cfg cases[] = {
    {2, true, 4, 3, 1, true, {4, 4}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
    {2, true, 2, 4, 2, true, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) conv_check_samples_side_by_side(&cases[i], 70);
}

static void test_errors(void) {
  loom_layer *l = lt_new("conv_transpose2d");
  lt_set_int(l, "in_channels", 2);
  lt_set_ints(l, "stride", (const int64_t[]){2, 2}, 2);
  lt_set_ints(l, "output_padding", (const int64_t[]){1, 2}, 2);
  lt_build_fails(l, 3, (const int64_t[]){2, 4, 4}, LOOM_ERR_INVALID,
                 "layer conv_transpose2d: along width output_padding 2 must be smaller than the stride 2 or the "
                 "dilation 1");
  lt_set_ints(l, "output_padding", (const int64_t[]){1, 1}, 2);
  lt_build(l, 3, (const int64_t[]){2, 4, 4}, 1);
  /* (4−1)·2 + 2·(3−1) + 1 + 1 = 10 */
  g_assert_cmpint(loom_layer_out_shape(l).d[1], ==, 10);
  g_assert_cmpint(loom_layer_out_shape(l).d[2], ==, 10);
  lt_set_int(l, "groups", 2);
  lt_set_int(l, "out_channels", 3);
  lt_build_fails(l, 3, (const int64_t[]){2, 4, 4}, LOOM_ERR_INVALID,
                 "layer conv_transpose2d: out_channels 3 is not divisible by groups 2");
  lt_set_int(l, "out_channels", 4);
  lt_set_int(l, "in_channels", 3);
  lt_build_fails(l, 3, (const int64_t[]){3, 4, 4}, LOOM_ERR_INVALID,
                 "layer conv_transpose2d: in_channels 3 is not divisible by groups 2");
  loom_layer_free(l);

  l = lt_new("conv_transpose1d");
  lt_set_ints(l, "kernel", (const int64_t[]){1}, 1);
  lt_set_ints(l, "padding", (const int64_t[]){1}, 1);
  lt_build_fails(l, 2, (const int64_t[]){1, 1}, LOOM_ERR_SHAPE,
                 "layer conv_transpose1d: along length the output size would be -1 = (input 1 − 1)×stride 1 − "
                 "2×padding 1 + dilation 1×(kernel 1 − 1) + output_padding 0 + 1; it must be at least 1");
  lt_build_fails(l, 3, (const int64_t[]){1, 4, 4}, LOOM_ERR_SHAPE,
                 "layer conv_transpose1d: expects an input of rank 2 [channels×length]; got [1×4×4]");
  loom_layer_free(l);
}

static void test_shapes_and_registry(void) {
  const struct {
    const char *name;
    int id;
  } types[] = {{"conv_transpose1d", 43}, {"conv_transpose2d", 44}, {"conv_transpose3d", 45}};
  for (size_t i = 0; i < G_N_ELEMENTS(types); i++) {
    const loom_layer_type *t = loom_layer_type_find(types[i].name);
    g_assert_nonnull(t);
    g_assert_cmpint(loom_layer_type_id(t), ==, types[i].id);
    g_assert_cmpint(loom_layer_type_n_params(t), ==, 9);
    const loom_param_spec *op = loom_layer_type_param(t, loom_layer_type_param_index(t, "output_padding"));
    g_assert_nonnull(op);
    g_assert_cmpint(op->count, ==, (int)i + 1);
  }
  /* Weight rows are input channels (PyTorch's [in, out/groups, k...]). */
  loom_layer *l = lt_new("conv_transpose3d");
  lt_set_int(l, "in_channels", 4);
  lt_set_int(l, "out_channels", 6);
  lt_set_int(l, "groups", 2);
  lt_set_ints(l, "kernel", (const int64_t[]){1, 2, 3}, 3);
  lt_set_ints(l, "stride", (const int64_t[]){1, 2, 2}, 3);
  lt_build(l, 4, (const int64_t[]){4, 2, 3, 4}, 1);
  g_assert_cmpint(loom_weights_rows(loom_layer_weights(l, 0)), ==, 4);
  g_assert_cmpint(loom_weights_cols(loom_layer_weights(l, 0)), ==, 3 * 6);
  loom_shape out = loom_layer_out_shape(l);
  g_assert_cmpint(out.d[0], ==, 6);
  g_assert_cmpint(out.d[1], ==, 2);
  g_assert_cmpint(out.d[2], ==, 6);
  g_assert_cmpint(out.d[3], ==, 9);
  /* 2 · in·positions_in·(out/groups)·K + one add per output value */
  g_assert_cmpint(loom_layer_flops(l), ==, 2 * 4 * 24 * 3 * 6 + 6 * 2 * 6 * 9);
  char buf[256];
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==,
                  "conv_transpose3d 4→6, kernel 1×2×3, stride 1×2×2, groups 2, bias");
  loom_layer_free(l);
}

/* A 1-D case by hand: every input spreads the kernel over the output. */
static void test_known_values(void) {
  loom_layer *l = lt_new("conv_transpose1d");
  lt_set_int(l, "out_channels", 1);
  lt_set_ints(l, "stride", (const int64_t[]){2}, 1);
  lt_set_ints(l, "output_padding", (const int64_t[]){1}, 1);
  lt_build(l, 2, (const int64_t[]){1, 2}, 1);
  g_assert_cmpint(lt_out_numel(l), ==, 6); /* (2−1)·2 + 3 + 1 */
  lt_set_master(l, 0, (const float[]){1, 10, 100}, 3);
  lt_set_master(l, 1, (const float[]){0.25f}, 1);
  float y[6];
  lt_forward(l, NULL, (const float[]){1, 2}, y, 1);
  const float want[] = {1.25f, 10.25f, 102.25f, 20.25f, 200.25f, 0.25f};
  for (int i = 0; i < 6; i++) g_assert_cmpfloat(y[i], ==, want[i]);
  loom_layer_free(l);
}

static void test_quantized(void) {
  const conv_cfg c = {2, true, 4, 6, 2, true, {4, 5}, {3, 2}, {2, 1}, {1, 0}, {1, 1}, {1, 0}};
  conv_check_quantized(&c, 2, LOOM_DTYPE_INT8);
  conv_check_quantized(&c, 2, LOOM_DTYPE_INT4);
}

static void test_determinism(void) {
  /* 70 rows, 108 columns and 575 positions per group: several tiles per product. */
  const conv_cfg c = {2, true, 140, 24, 2, true, {23, 25}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 0}};
  conv_check_determinism(&c, 3);
  const conv_cfg c3 = {3, true, 3, 4, 1, true, {3, 4, 5}, {2, 3, 2}, {2, 1, 2}, {0, 1, 0}, {1, 1, 1}, {1, 0, 1}};
  conv_check_determinism(&c3, 2);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/conv-transpose/parity", test_parity);
  g_test_add_func("/conv-transpose/gradients", test_gradients);
  g_test_add_func("/conv-transpose/errors", test_errors);
  g_test_add_func("/conv-transpose/shapes-and-registry", test_shapes_and_registry);
  g_test_add_func("/conv-transpose/known-values", test_known_values);
  g_test_add_func("/conv-transpose/quantized", test_quantized);
  g_test_add_func("/conv-transpose/determinism", test_determinism);
  g_test_add_func("/conv-transpose/short-row-table", test_short_row_table);
  g_test_add_func("/conv-transpose/samples-side-by-side", test_samples_side_by_side);
  return g_test_run();
}
