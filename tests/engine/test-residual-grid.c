/* The worked example of docs/network.md, "Residuals in the grid": the same
 * residual block y = x + tanh(W·x + b) written once as a `residual` container
 * and once as an `add` link across the spine gives the same bits forward and
 * backward; disabling the skipped span doubles the skip; the network input
 * cannot be a link source. */
#include <glib.h>
#include <string.h>

#include "gradcheck.h"
#include "layers/layer-impl.h"
#include "loom/loom.h"

static loom_layer *dense(int64_t in, int64_t out) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  g_assert_nonnull(l);
  g_assert_cmpint(loom_layer_set_int(l, "in_features", in, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", out, &err), ==, 0);
  return l;
}

static loom_layer *named(const char *type) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  g_assert_nonnull(l);
  return l;
}

static void infer(loom_net *net) {
  loom_diag *diags = NULL;
  int n = loom_net_infer_shapes(net, 5, &diags);
  if (n) g_error("%s", diags[0].message);
  free(diags);
}

/* Grid 1×2×2×1 (rows 2, cols 2), input [4]:
 *   (0,0,0,0) dense 4→4   stem, its output is x     flat 0
 *   (0,0,1,0) dense 4→4   f, first layer            flat 1
 *   (0,1,0,0) tanh        f, second layer           flat 2
 *   (0,1,1,0) dense 4→3   head, reads f(x) + x      flat 3
 *   link (0,0,0,0) → (0,1,1,0), merge add */
static loom_net *link_form(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 2, 2, 1, &err);
  g_assert_nonnull(net);
  loom_shape in = loom_shape_1d(4);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, dense(4, 4), &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, dense(4, 4), &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 1, 0, 0}, named("tanh"), &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 1, 1, 0}, dense(4, 3), &err), ==, 0);
  loom_link skip = {.src = {0, 0, 0, 0}, .dst = {0, 1, 1, 0}, .merge = LOOM_MERGE_ADD};
  g_assert_cmpint(loom_net_add_link(net, &skip, &err), ==, 0);
  infer(net);
  return net;
}

/* Grid 1×1×3×1: stem (0,0,0,0), residual{dense 4→4, tanh} (0,0,1,0), head (0,0,2,0). */
static loom_net *container_form(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 3, 1, &err);
  g_assert_nonnull(net);
  loom_shape in = loom_shape_1d(4);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, &err), ==, 0);
  loom_layer *block = named("residual");
  g_assert_cmpint(loom_layer_add_child(block, dense(4, 4), &err), ==, 0);
  g_assert_cmpint(loom_layer_add_child(block, named("tanh"), &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, dense(4, 4), &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, block, &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 2, 0}, dense(4, 3), &err), ==, 0);
  infer(net);
  return net;
}

static void copy_weights(loom_layer *from, loom_layer *to) {
  g_assert_cmpint(loom_layer_n_weights(from), ==, loom_layer_n_weights(to));
  for (int w = 0; w < loom_layer_n_weights(from); w++) {
    loom_weights *a = loom_layer_weights(from, w), *b = loom_layer_weights(to, w);
    g_assert_cmpint(loom_weights_count(a), ==, loom_weights_count(b));
    memcpy(loom_weights_master(b), loom_weights_master(a), (size_t)loom_weights_count(a) * sizeof(float));
    loom_weights_touch(b);
  }
}

static void assert_same_grads(loom_layer *a, loom_layer *b) {
  for (int w = 0; w < loom_layer_n_weights(a); w++) {
    gsize bytes = (gsize)loom_weights_count(loom_layer_weights(a, w)) * sizeof(float);
    g_assert_cmpmem(loom_layer_grad(a, w), bytes, loom_layer_grad(b, w), bytes);
  }
}

enum { BATCH = 3 };

static void test_link_equals_container(void) {
  loom_net *ln = link_form(), *cn = container_form();
  loom_layer *stem = loom_net_layer_at(ln, (loom_coord){0, 0, 0, 0});
  loom_layer *f = loom_net_layer_at(ln, (loom_coord){0, 0, 1, 0});
  loom_layer *head = loom_net_layer_at(ln, (loom_coord){0, 1, 1, 0});
  loom_layer *block = loom_net_layer_at(cn, (loom_coord){0, 0, 1, 0});
  copy_weights(stem, loom_net_layer_at(cn, (loom_coord){0, 0, 0, 0}));
  copy_weights(f, loom_layer_child(block, 0));
  copy_weights(head, loom_net_layer_at(cn, (loom_coord){0, 0, 2, 0}));

  float x[BATCH * 4], dy[BATCH * 3], y1[BATCH * 3], y2[BATCH * 3], dx1[BATCH * 4], dx2[BATCH * 4];
  gradcheck_fill_uniform(x, BATCH * 4, -1, 1, 1);
  gradcheck_fill_uniform(dy, BATCH * 3, -1, 1, 2);
  loom_ctx ctx = {.training = true};
  loom_error err = {0};
  g_assert_cmpint(loom_net_forward(ln, &ctx, x, BATCH, y1, &err), ==, 0);
  g_assert_cmpint(loom_net_forward(cn, &ctx, x, BATCH, y2, &err), ==, 0);
  g_assert_cmpmem(y1, sizeof y1, y2, sizeof y2);

  /* What the head reads: the tanh output (0,1,0,0) plus the stem output
   * (0,0,0,0) — exactly the residual container's output at (0,0,1,0). */
  int64_t b = 0;
  const float *xs = loom_net_activation(ln, (loom_coord){0, 0, 0, 0}, &b);
  const float *fx = loom_net_activation(ln, (loom_coord){0, 1, 0, 0}, &b);
  const float *res = loom_net_activation(cn, (loom_coord){0, 0, 1, 0}, &b);
  g_assert_cmpint(b, ==, BATCH);
  for (int i = 0; i < BATCH * 4; i++) g_assert_cmpfloat(res[i], ==, xs[i] + fx[i]);

  loom_net_zero_grad(ln);
  loom_net_zero_grad(cn);
  g_assert_cmpint(loom_net_backward(ln, &ctx, dy, dx1, &err), ==, 0);
  g_assert_cmpint(loom_net_backward(cn, &ctx, dy, dx2, &err), ==, 0);
  g_assert_cmpmem(dx1, sizeof dx1, dx2, sizeof dx2);
  assert_same_grads(stem, loom_net_layer_at(cn, (loom_coord){0, 0, 0, 0}));
  assert_same_grads(f, loom_layer_child(block, 0));
  assert_same_grads(head, loom_net_layer_at(cn, (loom_coord){0, 0, 2, 0}));

  /* Both forms hold the same gradient check. */
  gradcheck_net(ln, x, BATCH, 2e-3);
  gradcheck_net(cn, x, BATCH, 2e-3);
  loom_net_free(ln);
  loom_net_free(cn);
}

/* Disabled layers pass their input through, so with the whole span between
 * the ends disabled the head reads x + x, not x. */
static void test_disabled_span_doubles(void) {
  loom_net *net = link_form();
  loom_error err = {0};
  g_assert_cmpint(loom_net_set_enabled(net, (loom_coord){0, 0, 1, 0}, false, &err), ==, 0);
  g_assert_cmpint(loom_net_set_enabled(net, (loom_coord){0, 1, 0, 0}, false, &err), ==, 0);
  float x[BATCH * 4], y[BATCH * 3], twice[BATCH * 4], expect[BATCH * 3];
  gradcheck_fill_uniform(x, BATCH * 4, -1, 1, 3);
  loom_ctx ctx = {.training = true};
  g_assert_cmpint(loom_net_forward(net, &ctx, x, BATCH, y, &err), ==, 0);
  int64_t b = 0;
  const float *xs = loom_net_activation(net, (loom_coord){0, 0, 0, 0}, &b);
  for (int i = 0; i < BATCH * 4; i++) twice[i] = xs[i] + xs[i];
  loom_layer *head = loom_net_layer_at(net, (loom_coord){0, 1, 1, 0});
  g_assert_cmpint(layer_forward(head, &ctx, twice, expect, BATCH, &err), ==, 0);
  g_assert_cmpmem(y, sizeof y, expect, sizeof expect);
  loom_net_free(net);
}

/* A link needs a layer at its source: a skip around the first layers of a
 * net (from the network input) has to be a container. */
static void test_input_is_not_a_source(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 3, 1, &err);
  loom_shape in = loom_shape_1d(4);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, dense(4, 4), &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 2, 0}, dense(4, 4), &err), ==, 0);
  loom_link from_empty = {.src = {0, 0, 0, 0}, .dst = {0, 0, 2, 0}, .merge = LOOM_MERGE_ADD};
  g_assert_cmpint(loom_net_add_link(net, &from_empty, &err), !=, 0);
  g_assert_cmpstr(err.message, ==, "link (0,0,0,0) → (0,0,2,0): the source slot (0,0,0,0) is empty");
  loom_net_free(net);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/net/residual-grid/link-equals-container", test_link_equals_container);
  g_test_add_func("/net/residual-grid/disabled-span-doubles", test_disabled_span_doubles);
  g_test_add_func("/net/residual-grid/input-is-not-a-source", test_input_is_not_a_source);
  return g_test_run();
}
