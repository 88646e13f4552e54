/* hierarchical_softmax with any number of levels (parameter `levels`):
 * PyTorch parity, gradient checks, the definition as a product of
 * conditional softmaxes, equality with the two-level `group_sizes` form,
 * errors, describe/flops/adapt and thread independence. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "softmax-test-util.h"

static loom_layer *levels_layer(const float *levels, int64_t n) {
  loom_error err = {0};
  loom_layer *l = st_layer("hierarchical_softmax");
  if (loom_layer_set_floats(l, "levels", levels, n, &err)) g_error("%s", err.message);
  return l;
}

static void test_parity(void) {
  static const char *const cases[] = {"hier_levels_2_3_2", "hier_levels_3_1_2_2"};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    st_case c = st_case_load(cases[i]);
    loom_npy levels = st_case_extra(&c, "levels");
    loom_layer *l = levels_layer(levels.data, loom_npy_numel(&levels));
    st_build(l, c.shape);
    st_case_check(l, &c);
    loom_npy_clear(&levels);
    loom_layer_free(l);
    st_case_free(&c);
  }
}

static void gradcheck_levels(const float *levels, int64_t n_levels, loom_shape s, int64_t batch, uint64_t seed) {
  loom_layer *l = levels_layer(levels, n_levels);
  st_build(l, s);
  int64_t n = batch * loom_shape_numel(&s);
  float *x = g_new(float, n);
  gradcheck_fill_uniform(x, n, -3.0, 3.0, seed);
  char what[128];
  double worst = gradcheck_layer(l, x, batch, 5e-4);
  g_test_message("%s: worst error %.3g", loom_layer_describe(l, what, sizeof what), worst);
  g_free(x);
  loom_layer_free(l);
}

static void test_gradcheck(void) {
  const float three[] = {2, 3, 2}, four[] = {3, 1, 2, 2}, deep[] = {2, 2, 2, 2}, flat[] = {5}, ones[] = {1, 1};
  gradcheck_levels(three, 3, loom_shape_make(2, (const int64_t[]){2, 20}), 2, 1);
  gradcheck_levels(four, 4, loom_shape_1d(24), 3, 2);
  gradcheck_levels(deep, 4, loom_shape_1d(30), 2, 3);
  gradcheck_levels(flat, 1, loom_shape_1d(5), 2, 4);
  gradcheck_levels(ones, 2, loom_shape_1d(2), 2, 5);
}

/* Leaf probabilities computed independently: recursion over the tree in
 * float64, each node's softmax over its children times the parent's P. */
static void reference_tree(const float *x, const float *levels, int n_levels, int depth, int64_t node_start,
                           int64_t level_start, int64_t width, double parent, double *out, int64_t *leaf) {
  int64_t b = (int64_t)levels[depth];
  const float *z = x + level_start + node_start * b;
  double top = -INFINITY, sum = 0.0;
  for (int64_t c = 0; c < b; c++) top = fmax(top, z[c]);
  for (int64_t c = 0; c < b; c++) sum += exp(z[c] - top);
  for (int64_t c = 0; c < b; c++) {
    double p = parent * exp(z[c] - top) / sum;
    if (depth + 1 == n_levels) out[(*leaf)++] = p;
    else
      reference_tree(x, levels, n_levels, depth + 1, node_start * b + c, level_start + width * b, width * b, p, out,
                     leaf);
  }
}

static void test_definition(void) {
  const float levels[] = {3, 2, 4};
  const int64_t n = 3 + 6 + 24, leaves = 24, batch = 5;
  loom_layer *l = levels_layer(levels, 3);
  st_build(l, loom_shape_1d(n));
  loom_shape out = loom_layer_out_shape(l);
  g_assert_cmpint(out.rank, ==, 1);
  g_assert_cmpint(out.d[0], ==, leaves);
  float *x = g_new(float, batch * n);
  gradcheck_fill_uniform(x, batch * n, -4.0, 4.0, 7);
  loom_ctx ctx = {0};
  float *y = st_forward(l, &ctx, x, batch);
  st_assert_rows_sum_to_one(y, batch, leaves, 1e-6);
  double ref[24];
  for (int64_t r = 0; r < batch; r++) {
    int64_t leaf = 0;
    reference_tree(x + r * n, levels, 3, 0, 0, 0, 1, 1.0, ref, &leaf);
    g_assert_cmpint(leaf, ==, leaves);
    for (int64_t i = 0; i < leaves; i++) g_assert_cmpfloat(fabs(y[r * leaves + i] - ref[i]), <=, 1e-7 * ref[i]);
  }
  g_free(y);
  loom_layer_free(l);

  /* One level is a plain softmax; a chain of single children is certain. */
  const float one_level[] = {6};
  l = levels_layer(one_level, 1);
  st_build(l, loom_shape_1d(6));
  loom_layer *plain = st_layer("softmax");
  st_build(plain, loom_shape_1d(6));
  float *yl = st_forward(l, &ctx, x, 2), *yp = st_forward(plain, &ctx, x, 2);
  for (int i = 0; i < 12; i++) g_assert_cmpfloat(fabs(yl[i] - yp[i]), <=, 1e-7 * yp[i]);
  g_free(yl);
  g_free(yp);
  loom_layer_free(plain);
  loom_layer_free(l);
  const float chain[] = {1, 1, 1};
  l = levels_layer(chain, 3);
  st_build(l, loom_shape_1d(3));
  float *yc = st_forward(l, &ctx, x, 1);
  g_assert_cmpfloat(yc[0], ==, 1.0f);
  g_free(yc);
  loom_layer_free(l);

  /* Extreme logits: a branch whose P underflows gets probability and gradient 0, nothing NaN. */
  const float two_two[] = {2, 2};
  l = levels_layer(two_two, 2);
  st_build(l, loom_shape_1d(6));
  const float xe[] = {0.0f, -2000.0f, 1.0f, 2.0f, 3.0f, 4.0f}, dy[] = {1.0f, -1.0f, 0.5f, 0.25f};
  float *ye = st_forward(l, &ctx, xe, 1);
  float *dx = st_backward(l, &ctx, xe, ye, dy, 1);
  g_assert_cmpfloat(ye[2], ==, 0.0f);
  g_assert_cmpfloat(ye[3], ==, 0.0f);
  g_assert_cmpfloat(dx[4], ==, 0.0f);
  g_assert_cmpfloat(dx[5], ==, 0.0f);
  for (int i = 0; i < 6; i++) g_assert_true(isfinite(dx[i]));
  g_free(ye);
  g_free(dx);
  loom_layer_free(l);
  g_free(x);
}

/* levels = [G, s] is the same tree as group_sizes = [s, …, s] (G times):
 * the same bits forward and backward. */
static void test_two_levels_match_groups(void) {
  const float levels[] = {3, 4}, groups[] = {4, 4, 4};
  const int64_t n = 3 + 12, batch = 4;
  loom_layer *a = levels_layer(levels, 2);
  loom_layer *b = st_layer("hierarchical_softmax");
  loom_error err = {0};
  g_assert_cmpint(loom_layer_set_floats(b, "group_sizes", groups, 3, &err), ==, LOOM_OK);
  const int64_t shape[] = {2, n};
  st_build(a, loom_shape_make(2, shape));
  st_build(b, loom_shape_make(2, shape));
  float *x = g_new(float, batch * 2 * n), *dy = g_new(float, batch * 2 * 12);
  gradcheck_fill_uniform(x, batch * 2 * n, -3.0, 3.0, 21);
  gradcheck_fill_uniform(dy, batch * 2 * 12, -1.0, 1.0, 22);
  loom_ctx ctx = {0};
  float *ya = st_forward(a, &ctx, x, batch), *yb = st_forward(b, &ctx, x, batch);
  g_assert_cmpmem(ya, batch * 2 * 12 * sizeof(float), yb, batch * 2 * 12 * sizeof(float));
  float *dxa = st_backward(a, &ctx, x, ya, dy, batch), *dxb = st_backward(b, &ctx, x, yb, dy, batch);
  g_assert_cmpmem(dxa, batch * 2 * n * sizeof(float), dxb, batch * 2 * n * sizeof(float));
  g_assert_cmpint(loom_layer_flops(a), ==, loom_layer_flops(b));
  g_free(ya);
  g_free(yb);
  g_free(dxa);
  g_free(dxb);
  g_free(x);
  g_free(dy);
  loom_layer_free(a);
  loom_layer_free(b);
}

static void test_errors_describe_adapt(void) {
  loom_error err = {0};
  loom_layer *l = st_layer("hierarchical_softmax");
  loom_shape s = loom_shape_1d(20);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer hierarchical_softmax: parameters “group_sizes” and “levels” are both empty; expected leaves "
                  "per group (two levels, e.g. [4, 4, 2]) or children per node for each level (e.g. [2, 3, 4])");
  const float groups[] = {2, 1}, levels[] = {2, 3, 2}, half[] = {2, 1.5f}, huge[] = {4096, 4096, 2};
  g_assert_cmpint(loom_layer_set_floats(l, "group_sizes", groups, 2, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_floats(l, "levels", levels, 3, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer hierarchical_softmax: parameters “group_sizes” (2 entries) and “levels” (3 entries) are both "
                  "set; expected one of them, the other empty");
  g_assert_cmpint(loom_layer_set_floats(l, "group_sizes", NULL, 0, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_floats(l, "levels", half, 2, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer hierarchical_softmax: parameter “levels” entry 1 is 1.5; expected a whole number from 1 to "
                  "16777216");
  const float zero[] = {0};
  g_assert_cmpint(loom_layer_set_floats(l, "levels", zero, 1, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpint(loom_layer_set_floats(l, "levels", huge, 3, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer hierarchical_softmax: parameter “levels” makes a tree of more than 16777216 nodes");
  g_assert_cmpint(loom_layer_set_floats(l, "levels", levels, 3, &err), ==, LOOM_OK);
  loom_shape wrong = loom_shape_1d(12);
  g_assert_cmpint(loom_layer_build(l, &wrong, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==,
                  "layer hierarchical_softmax: input [12] has a last dimension of 12; expected 20 (8 inner-node logits "
                  "+ 12 leaf logits from “levels”)");
  st_build(l, s);
  char buf[128];
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "hierarchical_softmax levels 2×3×2, 12 leaves");
  /* Softmax over 20 logits, one multiply per node below the root's 2 children. */
  g_assert_cmpint(loom_layer_flops(l), ==, 5 * 20 + 18);
  /* adapt keeps a tree that fits, and otherwise proposes two balanced levels. */
  g_assert_cmpint(loom_layer_adapt_to_input(l, &s, &err), ==, LOOM_OK);
  int64_t n = 0;
  g_assert_nonnull(loom_layer_get_floats(l, "levels", &n));
  g_assert_cmpint(n, ==, 3);
  loom_shape twelve = loom_shape_1d(12);
  g_assert_cmpint(loom_layer_adapt_to_input(l, &twelve, &err), ==, LOOM_OK);
  loom_layer_get_floats(l, "levels", &n);
  g_assert_cmpint(n, ==, 0);
  const float *g = loom_layer_get_floats(l, "group_sizes", &n);
  g_assert_cmpint(n, ==, 3);
  for (int i = 0; i < 3; i++) g_assert_cmpfloat(g[i], ==, 3.0f);
  st_build(l, twelve);
  loom_layer_free(l);
}

static void test_threads(void) {
  const float levels[] = {2, 3, 2};
  const int64_t shape[] = {3, 20}, batch = 300;
  float *x = g_new(float, batch * 60), *dy = g_new(float, batch * 36);
  gradcheck_fill_uniform(x, batch * 60, -3.0, 3.0, 31);
  gradcheck_fill_uniform(dy, batch * 36, -1.0, 1.0, 32);
  loom_layer *l = levels_layer(levels, 3);
  st_build(l, loom_shape_make(2, shape));
  st_assert_thread_independent(l, x, dy, batch);
  loom_layer_free(l);
  g_free(x);
  g_free(dy);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/hierarchical-softmax/parity", test_parity);
  g_test_add_func("/hierarchical-softmax/gradcheck", test_gradcheck);
  g_test_add_func("/hierarchical-softmax/definition", test_definition);
  g_test_add_func("/hierarchical-softmax/two-levels-match-groups", test_two_levels_match_groups);
  g_test_add_func("/hierarchical-softmax/errors-describe-adapt", test_errors_describe_adapt);
  g_test_add_func("/hierarchical-softmax/threads", test_threads);
  return g_test_run();
}
