/* conv1d, conv2d, conv3d: PyTorch parity, gradients, errors, dtypes, determinism. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "conv-test-util.h"
#include "loom/loom.h"

static const char *const parity_cases[] = {
  "c1_basic", "c1_groups_dil", "c1_depthwise", "c2_basic",  "c2_groups",
  "c2_pointwise", "c2_depthwise_s2", "c3_basic", "c3_groups",
};

static void test_parity(void) {
  conv_check_parity_cases(parity_cases, G_N_ELEMENTS(parity_cases));
}

static const conv_cfg gradient_cfgs[] = {
  /* dims, transposed, cin, cout, groups, bias, in, kernel, stride, padding, dilation */
  {1, false, 2, 3, 1, true, {5}, {3}, {1}, {0}, {1}},
  {1, false, 4, 2, 2, true, {9}, {2}, {3}, {2}, {2}},
  {1, false, 3, 3, 3, false, {6}, {1}, {1}, {0}, {1}}, /* depthwise 1×1: the identity plan */
  {2, false, 3, 4, 1, true, {5, 6}, {3, 2}, {2, 1}, {1, 0}, {1, 2}},
  {2, false, 4, 6, 2, false, {7, 5}, {2, 3}, {1, 2}, {0, 1}, {2, 1}},
  {2, false, 2, 2, 1, true, {3, 3}, {5, 5}, {1, 1}, {1, 1}, {1, 1}}, /* kernel reaches into padding only */
  {3, false, 2, 3, 1, true, {3, 4, 5}, {2, 2, 3}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}},
  {3, false, 4, 2, 2, true, {4, 3, 3}, {3, 1, 2}, {2, 1, 1}, {1, 0, 0}, {1, 1, 1}},
};

static void test_gradients(void) {
  for (size_t i = 0; i < G_N_ELEMENTS(gradient_cfgs); i++) conv_check_gradients(&gradient_cfgs[i], 2, 100 + i);
}

/* The short rows' offset lists (conv-table.c) are taken where a row of
 * positions has at most 16 (every gradient configuration above, and the
 * digits CNN's two convolutions) and give the row copies' bits; longer rows
 * keep the copies. */
static void test_short_row_table(void) {
  const conv_cfg cnn[] = {
    {2, false, 1, 4, 1, true, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
    {2, false, 4, 8, 1, true, {8, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}},
    {2, false, 2, 4, 2, true, {5, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, /* rows of 16: the longest listed */
    /* the chunks of the AVX-512 level: images beyond four vectors, two blocks
     * of rows in the forward and the input gradient */
    {2, false, 2, 3, 1, true, {40, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
    {2, false, 1, 2, 1, false, {24, 20}, {3, 3}, {3, 3}, {1, 1}, {1, 1}}, /* chunks too spread for permutes */
    {2, false, 3, 2, 1, true, {9, 5}, {2, 3}, {1, 1}, {0, 1}, {1, 1}},    /* a block's last chunk partial */
    {1, false, 2, 2, 1, true, {13}, {3}, {1}, {1}, {1}},
    {2, false, 2, 2, 1, true, {9, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},    /* 63 floats: registers */
    {2, false, 2, 2, 1, true, {5, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},   /* 65 floats: memory */
  };
  for (size_t i = 0; i < G_N_ELEMENTS(gradient_cfgs); i++) conv_check_table_matches_rows(&gradient_cfgs[i], 3);
  for (size_t i = 0; i < G_N_ELEMENTS(cnn); i++) conv_check_table_matches_rows(&cnn[i], 5);
  conv_plan p = {.img = {1, 8, 16}, .pos = {1, 8, 16}, .kernel = {1, 3, 3}, .stride = {1, 1, 1},
                 .padding = {0, 1, 1}, .dilation = {1, 1, 1}, .groups = 1, .rows_per_group = 4, .img_channels = 1};
  conv_plan_finish(&p);
  int rc;
  conv_table *t = conv_table_new(&p, 8, NULL, &rc);
  g_assert_cmpint(rc, ==, LOOM_OK);
  g_assert_nonnull(t);
  /* kernel offset (0, 0) at position (0, 0) reads padding; offset (1, 1) at (2, 3) reads (2, 3) */
  g_assert_cmpint(conv_table_offset(t, &p, 0, 0), ==, -1);
  g_assert_cmpint(conv_table_offset(t, &p, 4, 2 * 16 + 3), ==, 2 * 16 + 3);
  conv_table_free(t);
  p.img[2] = p.pos[2] = 17;
  conv_plan_finish(&p);
  g_assert_null(conv_table_new(&p, 8, NULL, &rc));
  g_assert_cmpint(rc, ==, LOOM_OK);
}

static void test_errors(void) {
  loom_layer *l = lt_new("conv2d");
  lt_set_int(l, "in_channels", 3);
  lt_set_ints(l, "kernel", (const int64_t[]){3, 5}, 2);
  lt_build_fails(l, 3, (const int64_t[]){3, 8, 4}, LOOM_ERR_SHAPE,
                 "layer conv2d: along width the kernel spans 5 (kernel 5, dilation 1) but the padded input is only 4 "
                 "(input 4 + 2×padding 0)");
  lt_build_fails(l, 3, (const int64_t[]){4, 8, 8}, LOOM_ERR_SHAPE,
                 "layer conv2d: in_channels is 3 but the input [4×8×8] has 4 channels");
  lt_build_fails(l, 2, (const int64_t[]){8, 8}, LOOM_ERR_SHAPE,
                 "layer conv2d: expects an input of rank 3 [channels×height×width]; got [8×8]");
  lt_set_int(l, "in_channels", 6);
  lt_set_int(l, "groups", 4);
  lt_build_fails(l, 3, (const int64_t[]){6, 8, 8}, LOOM_ERR_INVALID,
                 "layer conv2d: in_channels 6 is not divisible by groups 4");
  lt_set_int(l, "in_channels", 8);
  lt_set_int(l, "out_channels", 6);
  lt_build_fails(l, 3, (const int64_t[]){8, 8, 8}, LOOM_ERR_INVALID,
                 "layer conv2d: out_channels 6 is not divisible by groups 4");
  g_assert_false(loom_layer_is_built(l));
  loom_error err = {0};
  g_assert_cmpint(loom_layer_set_ints(l, "kernel", (const int64_t[]){0, 3}, 2, &err), !=, LOOM_OK);
  g_assert_nonnull(strstr(err.message, "kernel"));
  loom_layer_free(l);

  l = lt_new("conv1d");
  lt_set_int(l, "in_channels", 2);
  lt_set_ints(l, "padding", (const int64_t[]){1}, 1);
  lt_set_ints(l, "dilation", (const int64_t[]){4}, 1);
  lt_build_fails(l, 2, (const int64_t[]){2, 6}, LOOM_ERR_SHAPE,
                 "layer conv1d: along length the kernel spans 9 (kernel 3, dilation 4) but the padded input is only 8 "
                 "(input 6 + 2×padding 1)");
  lt_build(l, 2, (const int64_t[]){2, 7}, 1); /* spans exactly the padded 9 */
  g_assert_cmpint(loom_layer_out_shape(l).d[1], ==, 1);
  /* Absurd sizes are refused before anything is allocated. */
  lt_set_int(l, "in_channels", 1048576);
  lt_set_ints(l, "kernel", (const int64_t[]){1024}, 1);
  lt_set_ints(l, "dilation", (const int64_t[]){1}, 1);
  lt_build_fails(l, 2, (const int64_t[]){1048576, 2097152}, LOOM_ERR_NOMEM,
                 "layer conv1d: one sample needs more than 2^40 column values (1048576 channels × 1024 kernel taps "
                 "× 2096131 positions)");
  loom_layer_free(l);

  l = lt_new("conv3d");
  lt_set_int(l, "in_channels", 1);
  lt_build_fails(l, 4, (const int64_t[]){1, 2, 5, 5}, LOOM_ERR_SHAPE,
                 "layer conv3d: along depth the kernel spans 3 (kernel 3, dilation 1) but the padded input is only 2 "
                 "(input 2 + 2×padding 0)");
  loom_layer_free(l);
}

static void test_shapes_and_registry(void) {
  const struct {
    const char *name;
    int id;
  } types[] = {{"conv1d", 40}, {"conv2d", 41}, {"conv3d", 42}};
  for (size_t i = 0; i < G_N_ELEMENTS(types); i++) {
    const loom_layer_type *t = loom_layer_type_find(types[i].name);
    g_assert_nonnull(t);
    g_assert_cmpint(loom_layer_type_id(t), ==, types[i].id);
    g_assert_true(loom_layer_type_by_id(types[i].id) == t);
    g_assert_cmpstr(loom_layer_type_group(t), ==, "Convolution");
    g_assert_cmpint(loom_layer_type_n_params(t), ==, 8);
    g_assert_cmpint(loom_layer_type_param(t, loom_layer_type_param_index(t, "kernel"))->count, ==, (int)i + 1);
    g_assert_true(loom_layer_type_flags(t) & LOOM_LAYER_WEIGHTED);
  }

  /* 3→8, 3×3, padding 1 on 10×12 keeps the size; stride 2 halves it (rounding down). */
  loom_layer *l = lt_new("conv2d");
  loom_error err = {0};
  loom_shape in = loom_shape_make(3, (const int64_t[]){3, 10, 12});
  g_assert_cmpint(loom_layer_adapt_to_input(l, &in, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_get_int(l, "in_channels"), ==, 3);
  lt_set_ints(l, "padding", (const int64_t[]){1, 1}, 2);
  lt_build(l, 3, in.d, 1);
  loom_shape out = loom_layer_out_shape(l);
  g_assert_cmpint(out.rank, ==, 3);
  g_assert_cmpint(out.d[0], ==, 8);
  g_assert_cmpint(out.d[1], ==, 10);
  g_assert_cmpint(out.d[2], ==, 12);
  g_assert_cmpint(loom_weights_rows(loom_layer_weights(l, 0)), ==, 8);
  g_assert_cmpint(loom_weights_cols(loom_layer_weights(l, 0)), ==, 27);
  g_assert_cmpstr(loom_layer_weights_name(l, 0), ==, "weight");
  g_assert_cmpstr(loom_layer_weights_name(l, 1), ==, "bias");
  g_assert_cmpint(loom_layer_param_count(l), ==, 8 * 27 + 8);
  g_assert_cmpint(loom_layer_flops(l), ==, 2 * 8 * 120 * 27 + 8 * 120);
  char buf[256];
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "conv2d 3→8, kernel 3×3, padding 1×1, bias");
  lt_set_ints(l, "stride", (const int64_t[]){2, 2}, 2);
  lt_set_int(l, "groups", 1);
  lt_set_bool(l, "bias", false);
  lt_build(l, 3, in.d, 1);
  out = loom_layer_out_shape(l);
  g_assert_cmpint(out.d[1], ==, 5);
  g_assert_cmpint(out.d[2], ==, 6);
  g_assert_cmpint(loom_layer_n_weights(l), ==, 1);
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "conv2d 3→8, kernel 3×3, stride 2×2, padding 1×1");
  loom_shape flat = loom_shape_1d(30);
  g_assert_cmpint(loom_layer_adapt_to_input(l, &flat, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "layer conv2d: expects an input of rank 3 [channels×height×width]; got [30]");
  loom_layer_free(l);

  l = lt_new("conv1d");
  lt_set_int(l, "in_channels", 4);
  lt_set_int(l, "groups", 2);
  lt_set_ints(l, "dilation", (const int64_t[]){2}, 1);
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "conv1d 4→8, kernel 3, dilation 2, groups 2, bias");
  loom_layer_free(l);
}

/* Known values: a 1-channel 2-D convolution with a hand-computed result. */
static void test_known_values(void) {
  loom_layer *l = lt_new("conv2d");
  lt_set_int(l, "out_channels", 1);
  lt_set_ints(l, "kernel", (const int64_t[]){2, 2}, 2);
  lt_set_ints(l, "padding", (const int64_t[]){0, 1}, 2);
  lt_build(l, 3, (const int64_t[]){1, 2, 3}, 1);
  lt_set_master(l, 0, (const float[]){1, 2, 3, 4}, 4);
  lt_set_master(l, 1, (const float[]){0.5f}, 1);
  const float x[] = {1, 2, 3, 4, 5, 6};
  float y[4];
  g_assert_cmpint(lt_out_numel(l), ==, 4);
  lt_forward(l, NULL, x, y, 1);
  /* windows over [0 1 2 3 0; 0 4 5 6 0] with w = [1 2; 3 4] */
  const float want[] = {0 * 1 + 1 * 2 + 0 * 3 + 4 * 4 + 0.5f, 1 * 1 + 2 * 2 + 4 * 3 + 5 * 4 + 0.5f,
                        2 * 1 + 3 * 2 + 5 * 3 + 6 * 4 + 0.5f, 3 * 1 + 0 * 2 + 6 * 3 + 0 * 4 + 0.5f};
  for (int i = 0; i < 4; i++) g_assert_cmpfloat(y[i], ==, want[i]);
  loom_layer_free(l);
}

static void test_quantized(void) {
  const conv_cfg c = {2, false, 4, 6, 2, true, {6, 7}, {3, 3}, {1, 2}, {1, 1}, {1, 1}};
  conv_check_quantized(&c, 2, LOOM_DTYPE_INT8);
  conv_check_quantized(&c, 2, LOOM_DTYPE_INT4);
  const conv_cfg c3 = {3, false, 2, 4, 1, true, {3, 4, 4}, {2, 2, 2}, {1, 1, 1}, {0, 1, 0}, {1, 1, 1}};
  conv_check_quantized(&c3, 2, LOOM_DTYPE_INT8);
}

static void test_determinism(void) {
  /* Several tiles per group in every product: 70 rows, 108 columns, 575 positions
   * per group exceed the forward's row and position blocks (conv-core.c) and
   * loom_sgemm's panels and column blocks in the backward products. */
  const conv_cfg c = {2, false, 24, 140, 2, true, {23, 25}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  conv_check_determinism(&c, 3);
  const conv_cfg c1 = {1, false, 3, 5, 1, true, {300}, {5}, {2}, {2}, {3}};
  conv_check_determinism(&c1, 4);
  /* OpenBLAS tiles (on request only) are deterministic too. */
  conv_set_use_blas(true);
  conv_check_determinism(&c, 2);
  conv_set_use_blas(false);
}

/* The summation order conv-core.c documents, written out one value at a
 * time (conv2d): dx[i] = Σ over taps ascending (from +0) of the tap's chain of
 * fmaf over the output channels of its group, ascending (a column of Aᵀ·dy);
 * dW accumulates one fmaf chain over the samples, then the positions,
 * ascending; dbias sums in double, samples then positions. The backward
 * products (loom_sgemm per sample or per samples side by side, the vector
 * col2im add, the side-by-side bias sums) must give exactly these bits, on
 * one thread and on a pool. */
static void reference_backward(const conv_cfg *c, int64_t batch, const float *W, const float *x, const float *dy,
                               int64_t oh_n, int64_t ow_n, float *dx, float *dW, float *db) {
  int64_t H = c->in[0], Wd = c->in[1], kh_n = c->kernel[0], kw_n = c->kernel[1], taps = kh_n * kw_n;
  int64_t cin_g = c->cin / c->groups, cout_g = c->cout / c->groups, npos = oh_n * ow_n, kc = cin_g * taps;
  for (int64_t o = 0; o < c->cout; o++) {
    double sum = 0.0;
    for (int64_t n = 0; n < batch; n++)
      for (int64_t q = 0; q < npos; q++) sum += dy[(n * c->cout + o) * npos + q];
    db[o] = (float)sum;
  }
  for (int64_t o = 0; o < c->cout; o++) {
    int64_t g = o / cout_g;
    for (int64_t j = 0; j < kc; j++) {
      int64_t ci = g * cin_g + j / taps, kh = j % taps / kw_n, kw = j % kw_n;
      float acc = 0.0f;
      for (int64_t n = 0; n < batch; n++)
        for (int64_t q = 0; q < npos; q++) {
          int64_t ih = q / ow_n * c->stride[0] - c->padding[0] + kh * c->dilation[0];
          int64_t iw = q % ow_n * c->stride[1] - c->padding[1] + kw * c->dilation[1];
          bool in = ih >= 0 && ih < H && iw >= 0 && iw < Wd;
          float col = in ? x[((n * c->cin + ci) * H + ih) * Wd + iw] : 0.0f;
          acc = fmaf(dy[(n * c->cout + o) * npos + q], col, acc);
        }
      dW[o * kc + j] = acc;
    }
  }
  for (int64_t n = 0; n < batch; n++)
    for (int64_t ci = 0; ci < c->cin; ci++) {
      int64_t g = ci / cin_g;
      for (int64_t ih = 0; ih < H; ih++)
        for (int64_t iw = 0; iw < Wd; iw++) {
          float acc = 0.0f;
          for (int64_t t = 0; t < taps; t++) {
            int64_t rh = ih + c->padding[0] - t / kw_n * c->dilation[0];
            int64_t rw = iw + c->padding[1] - t % kw_n * c->dilation[1];
            if (rh < 0 || rw < 0 || rh % c->stride[0] || rw % c->stride[1]) continue;
            int64_t oh = rh / c->stride[0], ow = rw / c->stride[1];
            if (oh >= oh_n || ow >= ow_n) continue;
            float v = 0.0f;
            for (int64_t r = 0; r < cout_g; r++) {
              int64_t o = g * cout_g + r;
              v = fmaf(W[o * kc + (ci - g * cin_g) * taps + t], dy[(n * c->cout + o) * npos + oh * ow_n + ow], v);
            }
            acc += v;
          }
          dx[((n * c->cin + ci) * H + ih) * Wd + iw] = acc;
        }
    }
}

static void assert_bits(const char *what, const float *got, const float *want, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (memcmp(&got[i], &want[i], sizeof(float)) != 0)
      g_error("%s[%lld]: %a, the reference order gives %a", what, (long long)i, (double)got[i], (double)want[i]);
}

/* y[n][o][q] = (one fmaf chain over the group's columns (channel, tap)
 * ascending, from +0) + bias[o]: what loom_sgemm's order gives however the
 * forward's blocks split the positions. */
static void reference_forward(const conv_cfg *c, int64_t batch, const float *W, const float *bias, const float *x,
                              int64_t oh_n, int64_t ow_n, float *y) {
  int64_t H = c->in[0], Wd = c->in[1], kw_n = c->kernel[1], taps = c->kernel[0] * kw_n;
  int64_t cin_g = c->cin / c->groups, cout_g = c->cout / c->groups, npos = oh_n * ow_n, kc = cin_g * taps;
  for (int64_t n = 0; n < batch; n++)
    for (int64_t o = 0; o < c->cout; o++)
      for (int64_t q = 0; q < npos; q++) {
        int64_t g = o / cout_g;
        float acc = 0.0f;
        for (int64_t j = 0; j < kc; j++) {
          int64_t ci = g * cin_g + j / taps, kh = j % taps / kw_n, kw = j % kw_n;
          int64_t ih = q / ow_n * c->stride[0] - c->padding[0] + kh * c->dilation[0];
          int64_t iw = q % ow_n * c->stride[1] - c->padding[1] + kw * c->dilation[1];
          bool in = ih >= 0 && ih < H && iw >= 0 && iw < Wd;
          acc = fmaf(W[o * kc + j], in ? x[((n * c->cin + ci) * H + ih) * Wd + iw] : 0.0f, acc);
        }
        y[(n * c->cout + o) * npos + q] = acc + bias[o];
      }
}

static void test_summation_order(void) {
  const conv_cfg cases[] = {
    /* stride 1 (the vector col2im add), 12 output channels (a group of 8 bias sums and a rest of 4) */
    {2, false, 5, 12, 1, true, {9, 37}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
    /* groups, stride 2 and dilation 2 (the strided col2im loop) */
    {2, false, 4, 6, 2, true, {11, 13}, {3, 2}, {2, 2}, {2, 1}, {2, 2}},
    /* 1600 positions a sample: the weight gradient's blocks of 1024 positions
     * (whole rows: 25 and 15 rows of 40), the input gradient's and the
     * forward's of 512 (12, 12, 12 and 4 rows, the last first for dx) */
    {2, false, 3, 4, 1, true, {40, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
    /* 70 output channels: the forward's blocks of 64 rows of the weights and a
     * rest of 6; 300 positions a row: blocks of one row */
    {2, false, 2, 70, 1, true, {3, 300}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
  };
  loom_pool *pool = lt_pool(3);
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    const conv_cfg *c = &cases[k];
    int64_t batch = 3;
    loom_layer *l = conv_cfg_layer(c, 5);
    loom_shape out = loom_layer_out_shape(l);
    int64_t nx = batch * lt_in_numel(l), ny = batch * lt_out_numel(l), nw = loom_weights_count(loom_layer_weights(l, 0));
    float *x = g_new(float, nx), *dy = g_new(float, ny), *y = g_new(float, ny), *dx = g_new(float, nx);
    float *want_y = g_new(float, ny), *want_dx = g_new(float, nx), *want_dw = g_new(float, nw);
    float *want_db = g_new(float, c->cout);
    gradcheck_fill_uniform(x, nx, -1.0, 1.0, 21);
    gradcheck_fill_uniform(dy, ny, -1.0, 1.0, 22);
    const float *W = loom_weights_master(loom_layer_weights(l, 0));
    reference_forward(c, batch, W, loom_weights_master(loom_layer_weights(l, 1)), x, out.d[1], out.d[2], want_y);
    reference_backward(c, batch, W, x, dy, out.d[1], out.d[2], want_dx, want_dw, want_db);
    loom_pool *pools[2] = {NULL, pool};
    for (int p = 0; p < 2; p++) {
      lt_forward(l, pools[p], x, y, batch);
      assert_bits("y", y, want_y, ny);
      lt_backward(l, pools[p], x, y, dy, dx, batch);
      assert_bits("dx", dx, want_dx, nx);
      assert_bits("dweight", loom_layer_grad(l, 0), want_dw, nw);
      assert_bits("dbias", loom_layer_grad(l, 1), want_db, c->cout);
    }
    g_free(x), g_free(dy), g_free(y), g_free(dx), g_free(want_y), g_free(want_dx), g_free(want_dw);
    g_free(want_db);
    loom_layer_free(l);
  }
  loom_pool_free(pool);
}

/* Small images put several samples side by side in one product
 * (conv-core.c): the digits CNN's two convolutions (64 and 16 positions a
 * sample: 8 to 64 samples a product, and a partial last group at batch
 * 70), groups, a 1-D layer,
 * and an identity 1 × 1 convolution (side by side in the weight gradient
 * only). */
static void test_samples_side_by_side(void) {
  const conv_cfg cases[] = {
    {2, false, 1, 4, 1, true, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
    {2, false, 4, 8, 1, true, {8, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}},
    {2, false, 4, 6, 2, true, {7, 9}, {3, 2}, {2, 1}, {1, 0}, {1, 2}},
    {1, false, 3, 5, 1, true, {30}, {5}, {2}, {2}, {1}},
    {2, false, 3, 5, 1, true, {6, 6}, {1, 1}, {1, 1}, {0, 0}, {1, 1}},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) conv_check_samples_side_by_side(&cases[i], 70);
}

/* One input channel may come without its axis: conv2d on [6×7] computes as on
 * [1×6×7] (same values, same order), forward and backward, bit for bit; the
 * layer reports [1×6×7] as its input shape, and adapting to [6×7] picks one
 * channel. More channels still need the axis. */
static void test_channel_axis_left_out(void) {
  const int64_t hw[2] = {6, 7}, chw[3] = {1, 6, 7}, batch = 2;
  loom_layer *a = lt_new("conv2d"), *b = lt_new("conv2d");
  loom_error err = {0};
  loom_shape flat = loom_shape_make(2, hw);
  g_assert_cmpint(loom_layer_adapt_to_input(a, &flat, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_get_int(a, "in_channels"), ==, 1);
  lt_set_int(b, "in_channels", 1);
  lt_set_int(a, "out_channels", 8); /* dy below holds 8 channels */
  lt_set_int(b, "out_channels", 8);
  lt_set_ints(a, "padding", (const int64_t[]){1, 1}, 2);
  lt_set_ints(b, "padding", (const int64_t[]){1, 1}, 2);
  lt_build(a, 2, hw, 3);
  lt_build(b, 3, chw, 3);
  loom_shape in = loom_layer_in_shape(a);
  g_assert_cmpint(in.rank, ==, 3);
  g_assert_cmpint(in.d[0], ==, 1);
  float x[2 * 42], dy[2 * 8 * 42];
  for (int i = 0; i < 84; i++) x[i] = (float)((i * 37) % 11) / 5.0f - 1.0f;
  g_assert_cmpint(lt_out_numel(a), ==, lt_out_numel(b));
  for (int64_t i = 0; i < batch * lt_out_numel(a); i++) dy[i] = (float)((i * 13) % 7) / 3.0f - 1.0f;
  conv_run ra = conv_run_once(a, NULL, x, dy, batch), rb = conv_run_once(b, NULL, x, dy, batch);
  conv_assert_same_run(&ra, &rb, a, batch, "conv2d on [6×7] against [1×6×7]");
  conv_run_free(&ra);
  conv_run_free(&rb);
  loom_layer_free(a);
  loom_layer_free(b);
}

/* The lists are kept between calls (conv-table.c, at most 8): two threads
 * running the products of more plans than that, each on layers of its own,
 * evict entries the other may be using; every run must still give the bits
 * of a run alone. ThreadSanitizer runs this test too. */
#define CACHE_PLANS 11
#define CACHE_ROUNDS 12

typedef struct {
  loom_layer *layers[CACHE_PLANS];
  float *x[CACHE_PLANS], *dy[CACHE_PLANS];
  conv_run ref[CACHE_PLANS];
} cache_case;

static gpointer cache_thread(gpointer data) {
  cache_case *c = data;
  for (int r = 0; r < CACHE_ROUNDS; r++)
    for (int i = 0; i < CACHE_PLANS; i++) {
      const int k = (i + r) % CACHE_PLANS;
      conv_run got = conv_run_once(c->layers[k], NULL, c->x[k], c->dy[k], 2);
      conv_assert_same_run(&got, &c->ref[k], c->layers[k], 2, "a product sharing the kept lists");
      conv_run_free(&got);
    }
  return NULL;
}

static void test_table_cache_threads(void) {
  cache_case cases[2];
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < CACHE_PLANS; i++) {
      const conv_cfg cfg = {2, false, 2, 3, 1, true, {4 + i, 5 + i % 4}, {3, 3}, {1 + i % 2, 1}, {1, 1}, {1, 1}};
      cases[t].layers[i] = conv_cfg_layer(&cfg, 9);
      conv_random_io(cases[t].layers[i], 2, 40 + i, &cases[t].x[i], &cases[t].dy[i]);
      cases[t].ref[i] = conv_run_once(cases[t].layers[i], NULL, cases[t].x[i], cases[t].dy[i], 2);
    }
  GThread *a = g_thread_new("conv-a", cache_thread, &cases[0]), *b = g_thread_new("conv-b", cache_thread, &cases[1]);
  g_thread_join(a);
  g_thread_join(b);
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < CACHE_PLANS; i++) {
      conv_run_free(&cases[t].ref[i]);
      g_free(cases[t].x[i]);
      g_free(cases[t].dy[i]);
      loom_layer_free(cases[t].layers[i]);
    }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/conv/parity", test_parity);
  g_test_add_func("/conv/gradients", test_gradients);
  g_test_add_func("/conv/errors", test_errors);
  g_test_add_func("/conv/shapes-and-registry", test_shapes_and_registry);
  g_test_add_func("/conv/known-values", test_known_values);
  g_test_add_func("/conv/quantized", test_quantized);
  g_test_add_func("/conv/determinism", test_determinism);
  g_test_add_func("/conv/summation-order", test_summation_order);
  g_test_add_func("/conv/channel-axis-left-out", test_channel_axis_left_out);
  g_test_add_func("/conv/short-row-table", test_short_row_table);
  g_test_add_func("/conv/table-cache-threads", test_table_cache_threads);
  g_test_add_func("/conv/samples-side-by-side", test_samples_side_by_side);
  return g_test_run();
}
