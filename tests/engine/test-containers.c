#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "layers/layer-impl.h"
#include "loom/loom.h"
#include "loom/layer.h"
#include "loom/weights.h"

static loom_layer *dense(int64_t n_in, int64_t n_out) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  g_assert_cmpint(loom_layer_set_int(l, "in_features", n_in, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", n_out, &err), ==, 0);
  return l;
}

static loom_layer *layer(const char *type) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  g_assert_nonnull(l);
  return l;
}

static loom_layer *with(loom_layer *container, loom_layer *a, loom_layer *b, loom_layer *c) {
  loom_error err = {0};
  loom_layer *kids[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if (kids[i]) g_assert_cmpint(loom_layer_add_child(container, kids[i], &err), ==, 0);
  return container;
}

static loom_layer *parallel(const char *combine) {
  loom_layer *p = layer("parallel");
  loom_error err = {0};
  g_assert_cmpint(loom_layer_set_enum(p, "combine", combine, &err), ==, 0);
  return p;
}

static void build_ok(loom_layer *l, int64_t n_in, uint64_t seed) {
  loom_error err = {0};
  loom_shape in = loom_shape_1d(n_in);
  if (loom_layer_build(l, &in, seed, &err)) g_error("%s", err.message);
}

static void check(loom_layer *l, int64_t n_in, int64_t batch) {
  float *x = g_new(float, batch * n_in);
  gradcheck_fill_uniform(x, batch * n_in, -1, 1, 42);
  char what[128];
  double worst = gradcheck_layer(l, x, batch, 2e-3);
  g_test_message("%s: worst %.3g", loom_layer_describe(l, what, sizeof what), worst);
  g_free(x);
}

static void test_sequential_and_residual(void) {
  loom_layer *s = with(layer("sequential"), dense(5, 4), layer("tanh"), dense(4, 3));
  build_ok(s, 5, 1);
  g_assert_cmpint(loom_layer_out_shape(s).d[0], ==, 3);
  g_assert_cmpint(loom_layer_n_weights(s), ==, 4);
  char path[64];
  g_assert_cmpstr(loom_layer_weights_path(s, 2, path, sizeof path), ==, "children[2].weight");
  g_assert_cmpint(loom_layer_param_count(s), ==, 5 * 4 + 4 + 4 * 3 + 3);
  g_assert_cmpint(loom_layer_flops(s), ==, (2 * 5 * 4 + 4) + 5 * 4 + (2 * 4 * 3 + 3));
  check(s, 5, 3);
  loom_layer_free(s);

  loom_layer *r = with(layer("residual"), dense(6, 8), layer("silu"), dense(8, 6));
  build_ok(r, 6, 2);
  check(r, 6, 2);
  /* y = x + f(x), checked against the sequential it wraps. */
  loom_error err = {0};
  loom_layer *f = layer("sequential");
  for (int i = 0; i < 3; i++) loom_layer_add_child(f, loom_layer_clone(loom_layer_child(r, i), &err), &err);
  build_ok(f, 6, 2);
  float x[12], yr[12], yf[12];
  gradcheck_fill_uniform(x, 12, -1, 1, 3);
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(r, &ctx, x, yr, 2, &err), ==, 0);
  g_assert_cmpint(layer_forward(f, &ctx, x, yf, 2, &err), ==, 0);
  for (int i = 0; i < 12; i++) g_assert_cmpfloat(yr[i], ==, x[i] + yf[i]);
  loom_layer_free(f);
  loom_layer_free(r);

  /* The residual's layers must keep the shape. */
  loom_layer *bad = with(layer("residual"), dense(6, 5), NULL, NULL);
  loom_shape in = loom_shape_1d(6);
  g_assert_cmpint(loom_layer_build(bad, &in, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "layer residual: its layers turn the input [6] into [5]; the shapes must match to be added");
  loom_layer_free(bad);
  loom_layer *empty = layer("residual");
  g_assert_cmpint(loom_layer_build(empty, &in, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer residual holds no layers; add at least one");
  loom_layer_free(empty);
  /* An empty sequential is the identity. */
  loom_layer *id = layer("sequential");
  build_ok(id, 4, 0);
  float xi[4] = {1, -2, 3, -4}, yi[4], dyi[4] = {0.5f, 1, 2, 3}, dxi[4];
  g_assert_cmpint(layer_forward(id, &ctx, xi, yi, 1, &err), ==, 0);
  g_assert_cmpmem(xi, sizeof xi, yi, sizeof yi);
  g_assert_cmpint(layer_backward(id, &ctx, xi, yi, dyi, dxi, 1, &err), ==, 0);
  g_assert_cmpmem(dyi, sizeof dyi, dxi, sizeof dxi);
  loom_layer_free(id);
}

static void test_parallel_modes(void) {
  loom_layer *c = with(parallel("concat"), dense(5, 3), with(layer("sequential"), dense(5, 4), layer("gelu"), NULL),
                       dense(5, 1));
  build_ok(c, 5, 3);
  g_assert_cmpint(loom_layer_out_shape(c).d[0], ==, 8);
  check(c, 5, 3);
  loom_layer_free(c);

  const char *modes[] = {"add", "avg"};
  for (int m = 0; m < 2; m++) {
    loom_layer *p = with(parallel(modes[m]), dense(5, 4), with(layer("sequential"), dense(5, 4), layer("tanh"), NULL),
                         dense(5, 4));
    build_ok(p, 5, 4);
    g_assert_cmpint(loom_layer_out_shape(p).d[0], ==, 4);
    check(p, 5, 2);
    loom_layer_free(p);
  }

  loom_layer *g = with(parallel("grid_scatter"), dense(5, 2), dense(5, 2), dense(5, 2));
  loom_error err = {0};
  g_assert_cmpint(loom_layer_set_int(g, "grid_rows", 2, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(g, "grid_cols", 2, &err), ==, 0);
  build_ok(g, 5, 5);
  loom_shape out = loom_layer_out_shape(g);
  g_assert_cmpint(out.rank, ==, 3);
  g_assert_cmpint(out.d[0], ==, 2);
  g_assert_cmpint(out.d[1], ==, 2);
  g_assert_cmpint(out.d[2], ==, 2);
  check(g, 5, 2);
  char buf[64];
  g_assert_cmpstr(loom_layer_describe(g, buf, sizeof buf), ==, "parallel grid_scatter 2×2 ×3");
  loom_layer_free(g);

  loom_layer *f = with(parallel("filter"), dense(5, 4), with(layer("sequential"), dense(5, 4), layer("tanh"), NULL),
                       dense(5, 4));
  g_assert_cmpint(loom_layer_set_gate(f, dense(5, 3), &err), ==, 0);
  build_ok(f, 5, 6);
  g_assert_cmpint(loom_layer_n_weights(f), ==, 8);
  g_assert_cmpstr(loom_layer_weights_path(f, 6, buf, sizeof buf), ==, "gate.weight");
  g_assert_cmpstr(loom_layer_weights_path(f, 3, buf, sizeof buf), ==, "children[1].children[0].bias");
  check(f, 5, 3);
  loom_layer_free(f);
}

/* Branch outputs are constants (zero weights, distinct biases) so every
 * element's place in the [C, rows·H, cols·W] output is visible. */
static void test_grid_scatter_layout(void) {
  loom_error err = {0};
  loom_layer *g = parallel("grid_scatter");
  g_assert_cmpint(loom_layer_set_int(g, "grid_rows", 2, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(g, "grid_cols", 3, &err), ==, 0);
  for (int i = 0; i < 4; i++) loom_layer_add_child(g, dense(1, 2), &err);
  build_ok(g, 1, 0);
  for (int i = 0; i < 4; i++) {
    loom_layer *b = loom_layer_child(g, i);
    loom_weights_master(loom_layer_weights(b, 0))[0] = 0;
    loom_weights_master(loom_layer_weights(b, 0))[1] = 0;
    loom_weights_master(loom_layer_weights(b, 1))[0] = 10.0f * (float)(i + 1);     /* channel 0 */
    loom_weights_master(loom_layer_weights(b, 1))[1] = 10.0f * (float)(i + 1) + 1; /* channel 1 */
    loom_weights_touch(loom_layer_weights(b, 0));
    loom_weights_touch(loom_layer_weights(b, 1));
  }
  float x = 0.5f, y[12];
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(g, &ctx, &x, y, 1, &err), ==, 0);
  /* Output [2, 2, 3]: channel, grid row, grid column; branch i at (i/3, i%3); tiles 4 and 5 empty. */
  static const float want[12] = {10, 20, 30, 40, 0, 0, 11, 21, 31, 41, 0, 0};
  g_assert_cmpmem(y, sizeof y, want, sizeof want);
  loom_layer_free(g);

  /* Rank-3 branch outputs tile spatially: [1,1,2] branches on a 1×2 grid → [1,1,4]. */
  loom_layer *t = parallel("grid_scatter");
  loom_layer_set_int(t, "grid_cols", 2, &err);
  for (int i = 0; i < 2; i++) loom_layer_add_child(t, layer("relu"), &err);
  int64_t dims[3] = {1, 1, 2};
  loom_shape in = loom_shape_make(3, dims);
  g_assert_cmpint(loom_layer_build(t, &in, 0, &err), ==, 0);
  g_assert_cmpint(loom_layer_out_shape(t).d[2], ==, 4);
  float xt[2] = {1, 2}, yt[4];
  g_assert_cmpint(layer_forward(t, &ctx, xt, yt, 1, &err), ==, 0);
  static const float want_t[4] = {1, 2, 1, 2};
  g_assert_cmpmem(yt, sizeof yt, want_t, sizeof want_t);
  loom_layer_free(t);
}

static void test_nesting(void) {
  /* parallel(concat)[ sequential[ residual[dense, tanh, dense], dense ], parallel(filter)[dense, dense | gate] ] */
  loom_error err = {0};
  loom_layer *inner_filter = with(parallel("filter"), dense(4, 3), dense(4, 3), NULL);
  g_assert_cmpint(loom_layer_set_gate(inner_filter, with(layer("sequential"), dense(4, 2), NULL, NULL), &err), ==, 0);
  loom_layer *outer = with(parallel("concat"),
                           with(layer("sequential"), with(layer("residual"), dense(4, 5), layer("tanh"), dense(5, 4)),
                                dense(4, 2), NULL),
                           inner_filter, NULL);
  build_ok(outer, 4, 9);
  g_assert_cmpint(loom_layer_out_shape(outer).d[0], ==, 5);
  check(outer, 4, 3);
  /* A deep copy runs identically and shares nothing. */
  loom_layer *copy = loom_layer_clone(outer, &err);
  g_assert_nonnull(copy);
  g_assert_cmpint(loom_layer_n_weights(copy), ==, loom_layer_n_weights(outer));
  for (int i = 0; i < loom_layer_n_weights(outer); i++)
    g_assert_true(loom_layer_weights(copy, i) != loom_layer_weights(outer, i));
  float x[8], y1[10], y2[10];
  gradcheck_fill_uniform(x, 8, -1, 1, 5);
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(outer, &ctx, x, y1, 2, &err), ==, 0);
  g_assert_cmpint(layer_forward(copy, &ctx, x, y2, 2, &err), ==, 0);
  g_assert_cmpmem(y1, sizeof y1, y2, sizeof y2);
  loom_layer_free(copy);
  loom_layer_free(outer);
}

static void test_errors(void) {
  loom_error err = {0};
  loom_shape in = loom_shape_1d(5);
  loom_layer *p = parallel("add");
  g_assert_cmpint(loom_layer_build(p, &in, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer parallel has no branches; add at least one");
  with(p, dense(5, 3), dense(5, 4), NULL);
  g_assert_cmpint(loom_layer_build(p, &in, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "layer parallel: branch 1 gives [4] but branch 0 gives [3]; combine “add” needs equal shapes");
  g_assert_cmpint(loom_layer_set_gate(p, dense(5, 2), &err), ==, 0);
  g_assert_cmpint(loom_layer_build(p, &in, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer parallel has a gate, which only combine “filter” uses (combine is “add”)");
  g_assert_cmpint(loom_layer_set_gate(p, NULL, &err), ==, 0);
  loom_layer_set_enum(p, "combine", "filter", &err);
  g_assert_cmpint(loom_layer_build(p, &in, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer parallel: combine “filter” needs a gate layer (input → 2 logits)");
  loom_layer_free(loom_layer_remove_child(p, 1));
  with(p, dense(5, 3), NULL, NULL);
  g_assert_cmpint(loom_layer_set_gate(p, dense(5, 3), &err), ==, 0);
  g_assert_cmpint(loom_layer_build(p, &in, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "layer parallel: the gate gives 3 values per sample, expected 2 (one per branch)");
  /* A child's own error names where it sits. */
  loom_layer_free(loom_layer_remove_child(p, 0));
  with(p, dense(6, 3), NULL, NULL);
  loom_layer_set_int(loom_layer_gate(p), "out_features", 2, &err);
  g_assert_cmpint(loom_layer_build(p, &in, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==,
                  "layer parallel, branch 1: layer dense: in_features is 6 but the input [5] has 5 values (and its last "
                  "dimension is not 6 either)");
  loom_layer_free(p);

  loom_layer *g = with(parallel("grid_scatter"), dense(5, 2), dense(5, 2), NULL);
  g_assert_cmpint(loom_layer_build(g, &in, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "layer parallel: 2 branches do not fit a 1×1 grid");
  loom_layer_free(g);

  loom_layer *c = with(parallel("concat"), layer("relu"), NULL, NULL);
  g_assert_cmpint(loom_layer_add_child(c, c, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "a layer cannot contain itself");
  loom_layer *d = dense(5, 5);
  loom_layer *refused = layer("relu");
  g_assert_cmpint(loom_layer_add_child(d, refused, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer dense is not a container and cannot hold child layers");
  loom_layer_free(refused); /* a refused child stays the caller's */
  loom_layer_free(d);
  loom_layer_free(c);
}

/*
 * The filter gate learns: two fixed experts (y = +x and y = −x); the target is
 * +x for samples whose first input is positive and −x otherwise. Only the gate
 * (dense 2 → 2) trains, by plain SGD; the mixture must come to pick the right
 * expert.
 */
static double filter_loss(loom_layer *f, const float *x, const float *t, int64_t batch, bool train, double lr) {
  loom_ctx ctx = {.training = true};
  loom_error err = {0};
  float y[2 * 64], dy[2 * 64];
  g_assert_cmpint(layer_forward(f, &ctx, x, y, batch, &err), ==, 0);
  double loss = 0;
  for (int64_t i = 0; i < 2 * batch; i++) {
    double d = (double)y[i] - t[i];
    loss += d * d;
    dy[i] = (float)(2.0 * d / (double)batch);
  }
  if (train) {
    layer_zero_grad(f);
    g_assert_cmpint(layer_backward(f, &ctx, x, y, dy, NULL, batch, &err), ==, 0);
    loom_layer *gate = loom_layer_gate(f);
    bool any = false;
    for (int w = 0; w < loom_layer_n_weights(gate); w++) {
      loom_weights *wt = loom_layer_weights(gate, w);
      float *m = loom_weights_master(wt), *g = loom_layer_grad(gate, w);
      for (int64_t k = 0; k < loom_weights_count(wt); k++) {
        any |= g[k] != 0.0f;
        m[k] -= (float)(lr * g[k]);
      }
      loom_weights_touch(wt);
    }
    g_assert_true(any);
  }
  return loss / (double)batch;
}

static void test_filter_gate_learns(void) {
  loom_error err = {0};
  loom_layer *f = with(parallel("filter"), dense(2, 2), dense(2, 2), NULL);
  g_assert_cmpint(loom_layer_set_gate(f, dense(2, 2), &err), ==, 0);
  build_ok(f, 2, 11);
  for (int e = 0; e < 2; e++) {
    loom_layer *ex = loom_layer_child(f, e);
    float *w = loom_weights_master(loom_layer_weights(ex, 0)), *b = loom_weights_master(loom_layer_weights(ex, 1));
    float s = e == 0 ? 1.0f : -1.0f;
    w[0] = s, w[1] = 0, w[2] = 0, w[3] = s, b[0] = b[1] = 0;
    loom_weights_touch(loom_layer_weights(ex, 0));
    loom_weights_touch(loom_layer_weights(ex, 1));
  }
  enum { B = 64 };
  float x[2 * B], t[2 * B];
  gradcheck_fill_away_from_zero(x, 2 * B, -1, 1, 0.1, 8);
  for (int i = 0; i < B; i++) {
    float s = x[2 * i] > 0 ? 1.0f : -1.0f;
    t[2 * i] = s * x[2 * i];
    t[2 * i + 1] = s * x[2 * i + 1];
  }
  double before = filter_loss(f, x, t, B, false, 0);
  for (int step = 0; step < 300; step++) filter_loss(f, x, t, B, true, 0.5);
  double after = filter_loss(f, x, t, B, false, 0);
  g_test_message("filter toy: loss %.4f → %.4f", before, after);
  g_assert_cmpfloat(after, <, 0.1 * before);
  loom_layer_free(f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/layers/containers/sequential-residual", test_sequential_and_residual);
  g_test_add_func("/layers/containers/parallel-modes", test_parallel_modes);
  g_test_add_func("/layers/containers/grid-scatter-layout", test_grid_scatter_layout);
  g_test_add_func("/layers/containers/nesting", test_nesting);
  g_test_add_func("/layers/containers/errors", test_errors);
  g_test_add_func("/layers/containers/filter-gate-learns", test_filter_gate_learns);
  return g_test_run();
}
