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
  g_assert_cmpstr(err.message, ==, "layer parallel has a gate, which only combine “filter” and “route” use (combine is “add”)");
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

static loom_layer *grid_softmax(int64_t rows, int64_t cols) {
  loom_error err = {0};
  loom_layer *g = layer("grid_softmax");
  g_assert_cmpint(loom_layer_set_int(g, "rows", rows, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(g, "cols", cols, &err), ==, 0);
  return g;
}

/* Runs a built child on its own (children keep their own weights). */
static void run_child(loom_layer *child, const float *x, float *y, int64_t batch) {
  loom_error err = {0};
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(child, &ctx, x, y, batch, &err), ==, 0);
}

/*
 * route: three experts [4], a gate dense 5→6 → grid_softmax 2×3. Head h mixes
 * elements 2h, 2h+1 of the experts' outputs by its own row of probabilities.
 */
static void test_route(void) {
  loom_error err = {0};
  enum { B = 3, N = 3, H = 2, OUT = 4 };
  loom_layer *r = with(parallel("route"), dense(5, OUT), with(layer("sequential"), dense(5, OUT), layer("tanh"), NULL),
                       dense(5, OUT));
  g_assert_cmpint(loom_layer_set_gate(r, with(layer("sequential"), dense(5, H * N), grid_softmax(H, N), NULL), &err),
                  ==, 0);
  build_ok(r, 5, 9);
  g_assert_cmpint(loom_layer_out_shape(r).d[0], ==, OUT);
  char buf[96];
  g_assert_cmpstr(loom_layer_describe(r, buf, sizeof buf), ==, "parallel route ×3, 2 heads");
  g_assert_cmpstr(loom_layer_weights_path(r, 6, buf, sizeof buf), ==, "gate.children[0].weight");
  int64_t experts = 3 * (2 * 5 * OUT + OUT) + 5 * OUT, gate = (2 * 5 * H * N + H * N) + 5 * H * N;
  g_assert_cmpint(loom_layer_flops(r), ==, experts + gate + 2 * OUT * N);
  float x[B * 5], y[B * OUT], p[B * H * N], outs[N][B * OUT];
  gradcheck_fill_uniform(x, B * 5, -1, 1, 17);
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(r, &ctx, x, y, B, &err), ==, 0);
  run_child(loom_layer_gate(r), x, p, B);
  for (int i = 0; i < N; i++) run_child(loom_layer_child(r, i), x, outs[i], B);
  for (int b = 0; b < B; b++)
    for (int h = 0; h < H; h++) {
      double row = 0;
      for (int i = 0; i < N; i++) row += p[(b * H + h) * N + i];
      g_assert_cmpfloat(fabs(row - 1.0), <, 1e-6); /* taken as probabilities: no second softmax */
      for (int j = 0; j < OUT / H; j++) {
        int k = b * OUT + h * (OUT / H) + j;
        double want = 0;
        for (int i = 0; i < N; i++) want += (double)p[(b * H + h) * N + i] * outs[i][k];
        g_assert_cmpfloat(fabs(y[k] - want), <, 1e-6);
      }
    }
  check(r, 5, B);
  /* One head over a [2, 4] output gives the plain mixture of every element. */
  loom_layer *one = with(parallel("route"), dense(3, 4), dense(3, 4), NULL);
  g_assert_cmpint(loom_layer_set_gate(one, with(layer("sequential"), dense(3, 2), layer("softmax"), NULL), &err), ==, 0);
  build_ok(one, 3, 4);
  g_assert_cmpstr(loom_layer_describe(one, buf, sizeof buf), ==, "parallel route ×2, 1 head");
  check(one, 3, 2);
  loom_layer_free(one);
  loom_layer_free(r);
}

static void test_route_errors(void) {
  loom_error err = {0};
  loom_shape in = loom_shape_1d(5);
  loom_layer *r = with(parallel("route"), dense(5, 4), dense(5, 4), dense(5, 4));
  g_assert_cmpint(loom_layer_build(r, &in, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer parallel: combine “route” needs a gate that ends in a softmax-family layer (input → heads × 3 "
                  "probabilities)");
  g_assert_cmpint(loom_layer_set_gate(r, dense(5, 3), &err), ==, 0);
  g_assert_cmpint(loom_layer_build(r, &in, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer parallel: combine “route” uses the gate's output as probabilities, so the gate must end in a "
                  "softmax-family layer (e.g. dense → grid_softmax), not in dense");
  g_assert_cmpint(loom_layer_set_gate(r, with(layer("sequential"), dense(5, 4), layer("softmax"), NULL), &err), ==, 0);
  g_assert_cmpint(loom_layer_build(r, &in, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==,
                  "layer parallel: the gate's softmax gives rows of 4 probabilities, expected 3 (one per branch)");
  g_assert_cmpint(loom_layer_set_gate(r, with(layer("sequential"), dense(5, 9), grid_softmax(3, 3), NULL), &err), ==, 0);
  g_assert_cmpint(loom_layer_build(r, &in, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==,
                  "layer parallel: the gate has 3 routing heads but the branches give [4] (4 values), which do not "
                  "split into 3 equal parts");
  loom_layer_free(r);
}

/*
 * Files written before "route" existed keep their meaning: a filter gate's
 * output is always passed through the softmax, even when the gate already
 * ends in one (p = softmax(softmax(z))).
 */
static void test_filter_gate_ending_in_softmax(void) {
  loom_error err = {0};
  enum { B = 2, N = 2 };
  loom_layer *f = with(parallel("filter"), dense(3, 2), dense(3, 2), NULL);
  g_assert_cmpint(loom_layer_set_gate(f, with(layer("sequential"), dense(3, N), layer("softmax"), NULL), &err), ==, 0);
  build_ok(f, 3, 5);
  float x[B * 3] = {0.3f, -1.2f, 0.8f, 2.0f, 0.1f, -0.7f}, y[B * 2], q[B * N], outs[N][B * 2];
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(f, &ctx, x, y, B, &err), ==, 0);
  run_child(loom_layer_gate(f), x, q, B);
  for (int i = 0; i < N; i++) run_child(loom_layer_child(f, i), x, outs[i], B);
  for (int b = 0; b < B; b++) {
    double e0 = exp(q[b * N]), e1 = exp(q[b * N + 1]), p0 = e0 / (e0 + e1), p1 = e1 / (e0 + e1);
    for (int j = 0; j < 2; j++) {
      double twice = p0 * outs[0][b * 2 + j] + p1 * outs[1][b * 2 + j];
      double once = q[b * N] * outs[0][b * 2 + j] + q[b * N + 1] * outs[1][b * 2 + j];
      g_assert_cmpfloat(fabs(y[b * 2 + j] - twice), <, 1e-6);
      g_assert_cmpfloat(fabs(once - twice), >, 1e-4); /* the two readings differ on this input */
    }
  }
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
  g_test_add_func("/layers/containers/route", test_route);
  g_test_add_func("/layers/containers/route-errors", test_route_errors);
  g_test_add_func("/layers/containers/filter-gate-ending-in-softmax", test_filter_gate_ending_in_softmax);
  return g_test_run();
}
