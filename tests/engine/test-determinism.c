/*
 * A network with dense layers, activations, containers and skip links gives
 * bit-identical outputs and gradients with pools of 1, 2 and 7 threads (and
 * none). Sizes are large enough that the matrix products (256×256 weights,
 * batch 67) and the activations split into several ranges.
 */
#include <glib.h>
#include <string.h>

#include "gradcheck.h"
#include "loom/loom.h"
#include "loom/weights.h"
#include "train/trainer-internal.h"

#define C(z, y, x, l) ((loom_coord){z, y, x, l})

static loom_layer *dense(int64_t n_in, int64_t n_out) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  loom_layer_set_int(l, "in_features", n_in, &err);
  loom_layer_set_int(l, "out_features", n_out, &err);
  return l;
}

static loom_layer *named(const char *n) { return loom_layer_new_by_name(n, NULL); }

static loom_net *build_net(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 2, 3, 1, &err);
  loom_shape in = loom_shape_1d(96);
  loom_net_set_input_shape(net, &in, &err);
  loom_net_place(net, C(0, 0, 0, 0), dense(96, 256), &err);
  loom_net_place(net, C(0, 0, 1, 0), named("gelu"), &err);
  loom_layer *par = named("parallel");
  loom_layer_set_enum(par, "combine", "filter", &err);
  for (int i = 0; i < 3; i++) {
    loom_layer *s = named("sequential");
    loom_layer_add_child(s, dense(256, 256), &err);
    loom_layer_add_child(s, named("silu"), &err);
    loom_layer_add_child(par, s, &err);
  }
  loom_layer_set_gate(par, dense(256, 3), &err);
  loom_net_place(net, C(0, 0, 2, 0), par, &err);
  loom_layer *res = named("residual");
  loom_layer_add_child(res, dense(256, 256), &err);
  loom_layer_add_child(res, named("tanh"), &err);
  loom_net_place(net, C(0, 1, 0, 0), res, &err);
  loom_layer *cat = named("parallel");
  loom_layer_add_child(cat, dense(256, 40), &err);
  loom_layer_add_child(cat, dense(256, 24), &err);
  loom_net_place(net, C(0, 1, 1, 0), cat, &err);
  loom_net_place(net, C(0, 1, 2, 0), dense(64 + 256, 10), &err);
  loom_link skip = {C(0, 0, 1, 0), C(0, 1, 2, 0), LOOM_MERGE_CONCAT};
  g_assert_cmpint(loom_net_add_link(net, &skip, &err), ==, 0);
  loom_link add = {C(0, 0, 0, 0), C(0, 1, 0, 0), LOOM_MERGE_ADD};
  g_assert_cmpint(loom_net_add_link(net, &add, &err), ==, 0);
  loom_diag *d = NULL;
  if (loom_net_infer_shapes(net, 1234, &d)) g_error("%s", d[0].message);
  return net;
}

typedef struct {
  float *y, *dx, *grads;
  int64_t n_grads;
} run_result;

static run_result run(loom_pool *pool) {
  enum { B = 67 };
  loom_net *net = build_net();
  loom_ctx ctx = {.pool = pool, .training = true};
  loom_error err = {0};
  float *x = g_new(float, B * 96), *dy = g_new(float, B * 10);
  gradcheck_fill_uniform(x, B * 96, -2, 2, 1);
  gradcheck_fill_uniform(dy, B * 10, -1, 1, 2);
  run_result r = {g_new(float, B * 10), g_new(float, B * 96), NULL, 0};
  g_assert_cmpint(loom_net_forward(net, &ctx, x, B, r.y, &err), ==, 0);
  loom_net_zero_grad(net);
  g_assert_cmpint(loom_net_backward(net, &ctx, dy, r.dx, &err), ==, 0);
  r.n_grads = loom_net_param_count(net);
  r.grads = g_new(float, r.n_grads);
  int64_t off = 0;
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, i));
    for (int w = 0; w < loom_layer_n_weights(l); w++) {
      int64_t n = loom_weights_count(loom_layer_weights(l, w));
      memcpy(r.grads + off, loom_layer_grad(l, w), (size_t)n * sizeof(float));
      off += n;
    }
  }
  g_assert_cmpint(off, ==, r.n_grads);
  g_free(x);
  g_free(dy);
  loom_net_free(net);
  return r;
}

static void test_thread_counts(void) {
  run_result ref = run(NULL);
  static const int threads[] = {1, 2, 7};
  for (size_t t = 0; t < G_N_ELEMENTS(threads); t++) {
    loom_pool *pool = loom_pool_new(threads[t], NULL);
    run_result r = run(pool);
    g_assert_cmpint(memcmp(ref.y, r.y, 67 * 10 * sizeof(float)), ==, 0);
    g_assert_cmpint(memcmp(ref.dx, r.dx, 67 * 96 * sizeof(float)), ==, 0);
    g_assert_cmpint(r.n_grads, ==, ref.n_grads);
    g_assert_cmpint(memcmp(ref.grads, r.grads, (size_t)r.n_grads * sizeof(float)), ==, 0);
    g_free(r.y);
    g_free(r.dx);
    g_free(r.grads);
    loom_pool_free(pool);
  }
  /* Not trivially equal: the gradients carry information. */
  double s = 0;
  for (int64_t i = 0; i < ref.n_grads; i++) s += ref.grads[i] * (double)ref.grads[i];
  g_assert_cmpfloat(s, >, 0);
  g_free(ref.y);
  g_free(ref.dx);
  g_free(ref.grads);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  /* These tests compare thread counts on small networks: the pool even for
   * steps a trainer would otherwise run on its calling thread. */
  train_set_serial_step_flops(0);
  g_test_add_func("/net/determinism/thread-counts", test_thread_counts);
  return g_test_run();
}
