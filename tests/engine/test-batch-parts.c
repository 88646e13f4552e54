/*
 * A batch run in parts gives every sample the bits of the batch run whole
 * (loom forward runs large files in parts of 256 samples, cli/cmd-forward.c):
 * every gallery example that runs feed-forward, with float32 weights and
 * with int8 weights at rest (the integer product, whose kernel depends on
 * the batch: the short-row product from 2 activation rows, the GEMV for
 * one), over batches split at 1, 2, 17 and 256 samples. And
 * loom_layer_keeps_state, which tells loom forward when it must not split:
 * an lstm with carry_state and an attention layer with a KV cache, also
 * inside a container.
 */
#include <glib.h>
#include <string.h>

#include "loom/loom.h"
#include "loom/model.h"
#include "loom/sequence.h"

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Inputs the example's first layer takes: token ids where it embeds. */
static void fill_inputs(float *x, int64_t n, bool tokens, uint64_t *seed) {
  for (int64_t i = 0; i < n; i++)
    x[i] = tokens ? (float)(next(seed) % 4) : (float)((double)(next(seed) >> 11) * 0x1p-52 * 2.0 - 1.0);
}

static void check_parts(const char *name, loom_net *net, const char *what) {
  const int64_t batch = 300;
  loom_shape is = loom_net_input_shape(net), os = loom_net_output_shape(net);
  const int64_t in_n = loom_shape_numel(&is), out_n = loom_shape_numel(&os);
  float *x = g_new(float, batch * in_n), *whole = g_new(float, batch * out_n), *parts = g_new(float, batch * out_n);
  uint64_t seed = 0x9e3779b97f4a7c15u;
  loom_ctx ctx = {0};
  loom_error err = {0};
  bool tokens = false;
  fill_inputs(x, batch * in_n, tokens, &seed);
  if (loom_net_forward(net, &ctx, x, batch, whole, &err)) { /* an embedding first: token ids */
    tokens = true;
    fill_inputs(x, batch * in_n, tokens, &seed);
    if (loom_net_forward(net, &ctx, x, batch, whole, &err)) g_error("%s (%s): %s", name, what, err.message);
  }
  static const int64_t sizes[] = {1, 2, 17, 256};
  for (size_t si = 0; si < G_N_ELEMENTS(sizes); si++) {
    memset(parts, 0xff, (size_t)(batch * out_n) * sizeof *parts);
    for (int64_t b0 = 0; b0 < batch; b0 += sizes[si]) {
      const int64_t nb = batch - b0 < sizes[si] ? batch - b0 : sizes[si];
      if (loom_net_forward(net, &ctx, x + b0 * in_n, nb, parts + b0 * out_n, &err))
        g_error("%s (%s), part of %lld: %s", name, what, (long long)nb, err.message);
    }
    if (memcmp(whole, parts, (size_t)(batch * out_n) * sizeof *whole) != 0)
      g_error("%s (%s): the batch in parts of %lld differs from the batch run whole", name, what, (long long)sizes[si]);
  }
  g_free(x);
  g_free(whole);
  g_free(parts);
}

/* As cli/cmd-forward.c asks it. */
static bool net_keeps_state(const loom_net *net) {
  for (int64_t i = 0; i < loom_net_n_layers(net); i++)
    if (loom_layer_keeps_state(loom_net_layer_at(net, loom_net_layer_coord(net, i)))) return true;
  return false;
}

static void test_examples(void) {
  int checked = 0;
  for (int i = 0; i < loom_example_count(); i++) {
    const char *name = loom_example_name(i);
    loom_net *net = NULL;
    loom_error err = {0};
    g_assert_cmpint(loom_example_build(name, &net, &err), ==, 0);
    loom_ctx ctx = {0};
    loom_shape is = loom_net_input_shape(net), os = loom_net_output_shape(net);
    float *zeros = g_new0(float, loom_shape_numel(&is)), *out = g_new(float, loom_shape_numel(&os));
    const bool runs = loom_net_forward(net, &ctx, zeros, 1, out, &err) == 0;
    g_free(zeros);
    g_free(out);
    if (!runs) { /* runs only systolically (the feedback example) */
      loom_net_free(net);
      continue;
    }
    g_assert_false(net_keeps_state(net));
    check_parts(name, net, "float32");
    g_assert_cmpint(loom_net_set_dtype_all(net, LOOM_DTYPE_INT8, &err), ==, 0);
    g_assert_cmpint(loom_net_to_inference(net, &err), ==, 0);
    check_parts(name, net, "int8 at rest");
    checked++;
    loom_net_free(net);
  }
  g_assert_cmpint(checked, >=, 10);
}

/* What loom_layer_keeps_state reports, alone and inside a container. */
static void test_keeps_state(void) {
  loom_error err = {0};
  loom_layer *lstm = loom_layer_new_by_name("lstm", &err);
  g_assert_nonnull(lstm);
  g_assert_false(loom_layer_keeps_state(lstm));
  g_assert_cmpint(loom_layer_set_bool(lstm, "carry_state", true, &err), ==, 0);
  g_assert_true(loom_layer_keeps_state(lstm));
  loom_layer *att = loom_layer_new_by_name("attention", &err);
  g_assert_nonnull(att);
  g_assert_false(loom_layer_keeps_state(att));
  g_assert_cmpint(loom_layer_set_int(att, "cache_capacity", 8, &err), ==, 0);
  g_assert_true(loom_layer_keeps_state(att));
  loom_layer *seq = loom_layer_new_by_name("sequential", &err);
  g_assert_nonnull(seq);
  g_assert_false(loom_layer_keeps_state(seq));
  g_assert_cmpint(loom_layer_add_child(seq, att, &err), ==, 0);
  g_assert_true(loom_layer_keeps_state(seq));
  g_assert_false(loom_layer_keeps_state(NULL));
  loom_layer_free(seq);
  loom_layer_free(lstm);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/batch-parts/examples", test_examples);
  g_test_add_func("/batch-parts/keeps-state", test_keeps_state);
  return g_test_run();
}
