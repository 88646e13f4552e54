/*
 * A whole network's forward on the device (one command buffer) against the
 * CPU's loom_net_forward, for the built-in examples made of dense layers and
 * activations (float32 and int4 weights), remote links (add, concat: hop,
 * playground-skip), a net ending in a softmax, the
 * same submission twice (bit-identical), and the refusals: a layer type or a
 * link the device cannot run is an error naming the slot, never a silent
 * CPU fallback.
 */
#include "gpu-test.h"
#include "loom/loom.h"

static loom_gpu *gpu;

/* Forward of `batch` samples on both sides; tolerance docs/gpu.md: after a
 * chain of layers the differences of every product and activation add up,
 * so the whole net is held to 2e-5 relative plus 2e-6 of the output's largest value. */
static void compare_forward(loom_net *net, const char *what, int64_t batch) {
  loom_error err = {0};
  loom_shape in = loom_net_input_shape(net);
  loom_gpu_net *gn = loom_gpu_net_new(gpu, net, batch, &err);
  if (!gn) g_error("%s: %s", what, err.message);
  loom_shape out = loom_net_output_shape(net);
  int64_t ni = batch * loom_shape_numel(&in), no = batch * loom_shape_numel(&out);
  float *x = g_new(float, ni), *y_cpu = g_new(float, no), *y_gpu = g_new(float, no), *y_again = g_new(float, no);
  gpu_test_fill(x, ni, -2, 2, 42);
  if (loom_net_forward(net, NULL, x, batch, y_cpu, &err)) g_error("%s: %s", what, err.message);
  if (loom_gpu_net_forward(gn, x, y_gpu, &err)) g_error("%s: %s", what, err.message);
  double scale = 0;
  for (int64_t i = 0; i < no; i++) scale = MAX(scale, fabs(y_cpu[i]));
  double *tol = g_new(double, no);
  for (int64_t i = 0; i < no; i++) tol[i] = 2e-5 * fabs(y_cpu[i]) + 2e-6 * scale + 1e-30;
  double worst = gpu_test_compare(what, y_gpu, y_cpu, tol, no);
  g_test_message("%s: %d dispatches, worst %.3f of the tolerance", what, loom_gpu_net_n_dispatches(gn), worst);
  if (loom_gpu_net_forward(gn, x, y_again, &err)) g_error("%s: %s", what, err.message);
  g_assert_cmpmem(y_again, (size_t)no * 4, y_gpu, (size_t)no * 4);
  g_free(tol);
  g_free(x);
  g_free(y_cpu);
  g_free(y_gpu);
  g_free(y_again);
  loom_gpu_net_free(gn);
}

static void test_examples(void) {
  static const char *const names[] = {"xor", "spiral", "playground", "playground-int4", "hop", "playground-skip",
                                      "cnn",  "moe"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    loom_error err = {0};
    loom_net *net = NULL;
    if (loom_example_build(names[i], &net, &err)) g_error("%s", err.message);
    compare_forward(net, names[i], 7);
    compare_forward(net, names[i], 1);
    loom_net_free(net);
  }
}

static void place(loom_net *net, int x, const char *type, const char *const *ints, const int64_t *values,
                  loom_dtype dtype) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  g_assert_nonnull(l);
  for (int i = 0; ints && ints[i]; i++)
    if (loom_layer_set_int(l, ints[i], values[i], &err)) g_error("%s", err.message);
  if (loom_layer_set_dtype(l, dtype, &err)) g_error("%s", err.message);
  if (loom_net_place(net, (loom_coord){0, 0, x, 0}, l, &err)) g_error("%s", err.message);
}

/* dense int8 → gelu → dense → silu → dense int4 → softmax, with a disabled
 * layer in between (it passes its input through). */
static void test_chain(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 8, 1, &err);
  g_assert_nonnull(net);
  loom_shape in = loom_shape_1d(13);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, &err), ==, 0);
  static const char *const io[] = {"in_features", "out_features", NULL};
  place(net, 0, "dense", io, (const int64_t[]){13, 70}, LOOM_DTYPE_INT8);
  place(net, 1, "gelu", NULL, NULL, LOOM_DTYPE_FLOAT32);
  place(net, 2, "dense", io, (const int64_t[]){70, 33}, LOOM_DTYPE_FLOAT32);
  place(net, 3, "silu", NULL, NULL, LOOM_DTYPE_FLOAT32);
  place(net, 4, "tanh", NULL, NULL, LOOM_DTYPE_FLOAT32);
  place(net, 5, "dense", io, (const int64_t[]){33, 9}, LOOM_DTYPE_INT4);
  place(net, 6, "softmax", NULL, NULL, LOOM_DTYPE_FLOAT32);
  g_assert_cmpint(loom_net_set_enabled(net, (loom_coord){0, 0, 4, 0}, false, &err), ==, 0);
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(net, 3, &diags), ==, 0);
  free(diags);
  compare_forward(net, "chain", 5);  /* the one-invocation-per-output product */
  compare_forward(net, "chain", 37); /* the tiled product */
  loom_net_free(net);
}

/* A dense layer and the activation after it are one dispatch, unless
 * something else reads the dense layer's output (hop: a concat link reads
 * its first layer; the parity above holds either way). */
static void test_fusion(void) {
  static const struct {
    const char *name;
    int dispatches;
  } cases[] = {{"xor", 2}, {"spiral", 3}, {"hop", 9}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    loom_error err = {0};
    loom_net *net = NULL;
    if (loom_example_build(cases[i].name, &net, &err)) g_error("%s", err.message);
    loom_gpu_net *gn = loom_gpu_net_new(gpu, net, 2, &err);
    if (!gn) g_error("%s", err.message);
    g_assert_cmpint(loom_gpu_net_n_dispatches(gn), ==, cases[i].dispatches);
    loom_gpu_net_free(gn);
    loom_net_free(net);
  }
}

static void test_norms(void) {
  loom_net *net = gpu_test_norm_net(12, 5);
  compare_forward(net, "norms", 6);
  compare_forward(net, "norms", 1);
  loom_net_free(net);
}

static void test_softmax_family(void) {
  loom_net *net = gpu_test_softmax_net(5, 4);
  compare_forward(net, "softmax family", 6);
  compare_forward(net, "softmax family", 1);
  loom_net_free(net);
}

/* Containers: the forward of nested sequential and residual layers. */
static void test_containers(void) {
  loom_net *net = gpu_test_container_net(6, 4);
  compare_forward(net, "containers", 5);
  compare_forward(net, "containers", 1);
  loom_error err = {0};
  loom_gpu_net *gn = loom_gpu_net_new(gpu, net, 2, &err);
  if (!gn) g_error("%s", err.message);
  /* dense; residual: dense, tanh, dense, relu, layernorm and its two
   * segments; the empty sequential: none; sequential: the residual's dense
   * and two segments, dense, softmax; residual: gelu and two segments;
   * the residual of an empty sequential: two segments */
  g_assert_cmpint(loom_gpu_net_n_dispatches(gn), ==, 1 + 7 + 0 + 5 + 3 + 2);
  loom_gpu_net_free(gn);
  loom_net_free(net);
}

/* Parallel containers that concat, add and avg, nested. */
static void test_parallel(void) {
  loom_net *net = gpu_test_parallel_net(6, 4);
  compare_forward(net, "parallel", 5);
  compare_forward(net, "parallel", 1);
  loom_net_free(net);
}

/* Token inputs: the table at float32, int8, fp8, float64, int64 and uint32; an index out of range
 * or not an integer is refused before the submission with the CPU's error,
 * naming the slot, sample and position (embeddings whose indices a layer
 * computed: test-gpu-parallel.c). */
static void test_embedding(void) {
  static const loom_dtype tables[] = {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT8, LOOM_DTYPE_FP8_E4M3, LOOM_DTYPE_FLOAT64,
                                      LOOM_DTYPE_INT64,   LOOM_DTYPE_UINT32};
  for (size_t i = 0; i < G_N_ELEMENTS(tables); i++) {
    loom_net *net = gpu_test_embed_net(tables[i]);
    loom_error err = {0};
    int64_t batch = 6;
    float x[6 * 4], y[6 * 12];
    gpu_test_tokens(x, 24, 3);
    loom_gpu_net *gn = loom_gpu_net_new(gpu, net, batch, &err);
    if (!gn) g_error("%s", err.message);
    float *y_cpu = g_new(float, 72);
    if (loom_net_forward(net, NULL, x, batch, y_cpu, &err) || loom_gpu_net_forward(gn, x, y, &err))
      g_error("%s", err.message);
    double scale = 0, tol[72];
    for (int j = 0; j < 72; j++) scale = MAX(scale, fabs(y_cpu[j]));
    for (int j = 0; j < 72; j++) tol[j] = 2e-5 * fabs(y_cpu[j]) + 2e-6 * scale + 1e-30;
    char what[64];
    snprintf(what, sizeof what, "embedding %s", loom_dtype_name(tables[i]));
    double worst = gpu_test_compare(what, y, y_cpu, tol, 72);
    g_test_message("%s: worst %.3f of the tolerance", what, worst);
    x[13] = 9.0f;
    g_assert_cmpint(loom_gpu_net_forward(gn, x, y, &err), ==, LOOM_ERR_RANGE);
    if (!strstr(err.message, "(0,0,0,0)") || !strstr(err.message, "sample 3, position 1"))
      g_error("unexpected: %s", err.message);
    x[13] = 2.5f; /* as the CPU: not an integer is LOOM_ERR_INVALID */
    g_assert_cmpint(loom_gpu_net_forward(gn, x, y, &err), ==, LOOM_ERR_INVALID);
    g_free(y_cpu);
    loom_gpu_net_free(gn);
    loom_net_free(net);
  }
}

/* conv1d, conv2d (grouped, strided, padded, dilated) and conv3d, at float32,
 * int8, fp8, int32 and uint64 weights, and the transposed ones
 * (conv_transpose2d also with output_padding). */
static void test_convolutions(void) {
  static const loom_dtype dtypes[] = {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT8, LOOM_DTYPE_FP8_E5M2, LOOM_DTYPE_INT32,
                                      LOOM_DTYPE_UINT64};
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    loom_net *net = gpu_test_conv_net(dtypes[i]);
    char what[64];
    snprintf(what, sizeof what, "convolutions %s", loom_dtype_name(dtypes[i]));
    compare_forward(net, what, 3);
    compare_forward(net, what, 1);
    loom_net_free(net);
  }
  loom_net *net = gpu_test_conv3d_net();
  compare_forward(net, "conv3d", 2);
  loom_net_free(net);
  net = gpu_test_conv1d_net();
  compare_forward(net, "conv1d", 2);
  loom_net_free(net);
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    net = gpu_test_conv_t_net(dtypes[i]);
    char what[64];
    snprintf(what, sizeof what, "conv_transpose2d %s", loom_dtype_name(dtypes[i]));
    compare_forward(net, what, 3);
    loom_net_free(net);
  }
  net = gpu_test_conv_t1d_net();
  compare_forward(net, "conv_transpose1d", 2);
  loom_net_free(net);
  net = gpu_test_conv_t3d_net();
  compare_forward(net, "conv_transpose3d", 2);
  loom_net_free(net);
}

/* float64 and the 32/64-bit integers (decode.glsl's wide decode) in whole
 * networks: spiral and hop (links) with every layer at that dtype, per-row
 * and per-tensor scales. */
static void test_wide_dtypes(void) {
  static const loom_dtype wide[] = {LOOM_DTYPE_FLOAT64, LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT32,
                                    LOOM_DTYPE_UINT64};
  for (size_t i = 0; i < G_N_ELEMENTS(wide); i++)
    for (int e = 0; e < 2; e++) {
      loom_error err = {0};
      loom_net *net = NULL;
      if (loom_example_build(e ? "hop" : "spiral", &net, &err) || loom_net_set_dtype_all(net, wide[i], &err))
        g_error("%s", err.message);
      /* hop's first layer with one scale for the whole tensor */
      loom_weights *first = loom_layer_weights(loom_net_layer_at(net, loom_net_layer_coord(net, 0)), 0);
      if (e && wide[i] != LOOM_DTYPE_FLOAT64 && loom_weights_set_scale_mode(first, LOOM_SCALE_PER_TENSOR, &err))
        g_error("%s", err.message);
      char what[64];
      snprintf(what, sizeof what, "%s at %s", e ? "hop" : "spiral", loom_dtype_name(wide[i]));
      compare_forward(net, what, 7);
      compare_forward(net, what, 1);
      loom_net_free(net);
    }
}

/* sparsemax, entmax15, gumbel_softmax (soft and hard, in a sequential) and
 * hierarchical_softmax in one net, the Gumbel noise at the CPU context's
 * seed and step (loom_gpu_net_set_noise); another step draws other noise,
 * on both sides. */
static void test_sparse_family(void) {
  for (int hard = 0; hard < 2; hard++) {
    loom_net *net = gpu_test_sparse_net(5, 3, hard);
    loom_error err = {0};
    const int64_t batch = 6;
    loom_gpu_net *gn = loom_gpu_net_new(gpu, net, batch, &err);
    if (!gn) g_error("%s", err.message);
    float x[6 * 5], y_cpu[6 * 3], y_gpu[6 * 3], y_first[6 * 3];
    gpu_test_fill(x, 6 * 5, -2, 2, 42);
    for (uint64_t step = 0; step < 3; step++) {
      loom_ctx ctx = {.seed = 9, .step = step};
      loom_gpu_net_set_noise(gn, 9, step);
      if (loom_net_forward(net, &ctx, x, batch, y_cpu, &err) || loom_gpu_net_forward(gn, x, y_gpu, &err))
        g_error("%s", err.message);
      double scale = 0, tol[6 * 3];
      for (int i = 0; i < 6 * 3; i++) scale = MAX(scale, fabs(y_cpu[i]));
      for (int i = 0; i < 6 * 3; i++) tol[i] = 2e-5 * fabs(y_cpu[i]) + 2e-6 * scale + 1e-30;
      char what[64];
      snprintf(what, sizeof what, "sparse family%s, step %d", hard ? " (hard)" : "", (int)step);
      double worst = gpu_test_compare(what, y_gpu, y_cpu, tol, 6 * 3);
      g_test_message("%s: worst %.3f of the tolerance", what, worst);
      if (step == 0) memcpy(y_first, y_gpu, sizeof y_first);
      else g_assert_true(memcmp(y_first, y_gpu, sizeof y_first) != 0);
    }
    if (hard) {
      /* a tree changed after preparing: refused naming the slot, until the
       * layer is built again; a tree of other leaves needs a new preparation */
      loom_layer *tree = loom_net_layer_at(net, (loom_coord){0, 0, 6, 0});
      static const float other[2] = {1, 3}, five[1] = {5};
      loom_shape in = loom_shape_1d(6);
      g_assert_cmpint(loom_layer_set_floats(tree, "group_sizes", other, 2, &err), ==, 0);
      g_assert_cmpint(loom_gpu_net_upload_weights(gn, &err), ==, LOOM_ERR_SHAPE);
      g_assert_nonnull(strstr(err.message, "(0,0,6,0)"));
      g_assert_cmpint(loom_layer_set_floats(tree, "group_sizes", five, 1, &err), ==, 0);
      g_assert_cmpint(loom_layer_build(tree, &in, 0, &err), ==, 0);
      g_assert_cmpint(loom_gpu_net_upload_weights(gn, &err), ==, LOOM_ERR_UNSUPPORTED);
      g_assert_nonnull(strstr(err.message, "prepare it again"));
    }
    loom_gpu_net_free(gn);
    loom_net_free(net);
  }
}

static void expect_refusal(const char *example, const char *needle) {
  loom_error err = {0};
  loom_net *net = NULL;
  if (loom_example_build(example, &net, &err)) g_error("%s", err.message);
  loom_gpu_net *gn = loom_gpu_net_new(gpu, net, 2, &err);
  g_assert_null(gn);
  g_assert_cmpint(err.code, ==, LOOM_ERR_UNSUPPORTED);
  if (!strstr(err.message, needle)) g_error("%s: expected '%s' in: %s", example, needle, err.message);
  loom_net_free(net);
}

static void test_refusals(void) {
  expect_refusal("transformer", "attention");
  expect_refusal("feedback", "systolic");
  /* a layer type it does not run: the list of those it does is complete */
  expect_refusal("multi-agent", "does not run lstm layers yet");
  expect_refusal("multi-agent", "sparsemax, entmax15, gumbel_softmax, hierarchical_softmax and the element-wise");
}

static void test_device_list(void) {
  loom_error err = {0};
  loom_gpu_device_info *list = NULL;
  int n = 0;
  g_assert_cmpint(loom_gpu_list_devices(&list, &n, &err), ==, 0);
  g_assert_cmpint(n, >=, 1);
  const loom_gpu_device_info *mine = loom_gpu_info(gpu);
  g_assert_cmpint(mine->index, <, n);
  g_assert_cmpstr(list[mine->index].name, ==, mine->name);
  free(list);
  bool use = true;
  int index = 5;
  g_assert_cmpint(loom_gpu_parse_device("cpu", &use, &index, &err), ==, 0);
  g_assert_false(use);
  g_assert_cmpint(loom_gpu_parse_device("vulkan:3", &use, &index, &err), ==, 0);
  g_assert_true(use);
  g_assert_cmpint(index, ==, 3);
  g_assert_cmpint(loom_gpu_parse_device("vulkan:x", &use, &index, &err), ==, LOOM_ERR_INVALID);
  g_assert_nonnull(strstr(err.message, "vulkan:x"));
  g_assert_null(loom_gpu_new(n + 3, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_RANGE);
}

int main(int argc, char **argv) {
  gpu = gpu_test_init(&argc, &argv);
  g_test_add_func("/gpu/net/devices", test_device_list);
  g_test_add_func("/gpu/net/examples", test_examples);
  g_test_add_func("/gpu/net/chain", test_chain);
  g_test_add_func("/gpu/net/fusion", test_fusion);
  g_test_add_func("/gpu/net/norms", test_norms);
  g_test_add_func("/gpu/net/softmax-family", test_softmax_family);
  g_test_add_func("/gpu/net/sparse-family", test_sparse_family);
  g_test_add_func("/gpu/net/containers", test_containers);
  g_test_add_func("/gpu/net/parallel", test_parallel);
  g_test_add_func("/gpu/net/embedding", test_embedding);
  g_test_add_func("/gpu/net/convolutions", test_convolutions);
  g_test_add_func("/gpu/net/wide-dtypes", test_wide_dtypes);
  g_test_add_func("/gpu/net/refusals", test_refusals);
  int rc = g_test_run();
  loom_gpu_free(gpu);
  return rc;
}
