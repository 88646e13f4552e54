#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "loom/loom.h"

static loom_layer *dense(int64_t n_in, int64_t n_out) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  loom_layer_set_int(l, "in_features", n_in, &err);
  loom_layer_set_int(l, "out_features", n_out, &err);
  return l;
}

static loom_layer *act(const char *name) {
  loom_error err = {0};
  return loom_layer_new_by_name(name, &err);
}

#define C(z, y, x, l) ((loom_coord){z, y, x, l})

static void place(loom_net *net, loom_coord c, loom_layer *l) {
  loom_error err = {0};
  if (loom_net_place(net, c, l, &err)) g_error("%s", err.message);
}

static void add_link(loom_net *net, loom_coord a, loom_coord b, loom_merge m) {
  loom_error err = {0};
  loom_link k = {a, b, m};
  if (loom_net_add_link(net, &k, &err)) g_error("%s", err.message);
}

static void set_input(loom_net *net, int64_t n) {
  loom_error err = {0};
  loom_shape s = loom_shape_1d(n);
  g_assert_cmpint(loom_net_set_input_shape(net, &s, &err), ==, 0);
}

static void test_grid(void) {
  loom_error err = {0};
  g_assert_null(loom_net_new(0, 1, 1, 1, &err));
  g_assert_cmpstr(err.message, ==, "grid depth must be between 1 and 4096, got 0");
  g_assert_null(loom_net_new(4096, 4096, 2, 1, &err));
  g_assert_cmpstr(err.message, ==, "a 4096×4096×2 grid with 1 layers per cell has 33554432 slots, more than 16777216");
  loom_net *net = loom_net_new(2, 3, 4, 2, &err);
  g_assert_nonnull(net);
  g_assert_cmpint(loom_net_n_slots(net), ==, 48);
  g_assert_cmpint(loom_net_flat_index(net, C(1, 2, 3, 1)), ==, ((1 * 3 + 2) * 4 + 3) * 2 + 1);
  g_assert_cmpint(loom_net_flat_index(net, C(0, 3, 0, 0)), ==, -1);
  for (int64_t f = 0; f < 48; f++) g_assert_cmpint(loom_net_flat_index(net, loom_net_coord_of(net, f)), ==, f);
  char buf[32];
  g_assert_cmpstr(loom_coord_format(C(1, 2, 3, 1), buf, sizeof buf), ==, "(1,2,3,1)");

  place(net, C(1, 0, 0, 0), dense(4, 4));
  place(net, C(0, 1, 2, 1), act("relu"));
  loom_layer *stray = act("tanh");
  g_assert_cmpint(loom_net_place(net, C(1, 0, 0, 0), stray, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "slot (1,0,0,0) already holds a dense layer");
  g_assert_cmpint(loom_net_place(net, C(2, 0, 0, 0), stray, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "slot (2,0,0,0) is outside the 2×3×4 grid with 2 layers per cell");
  loom_layer_free(stray);
  g_assert_cmpint(loom_net_n_layers(net), ==, 2);
  loom_coord first = loom_net_layer_coord(net, 0);
  g_assert_cmpint(loom_net_flat_index(net, first), ==, loom_net_flat_index(net, C(0, 1, 2, 1)));
  g_assert_true(loom_net_is_enabled(net, C(1, 0, 0, 0)));
  g_assert_cmpint(loom_net_set_enabled(net, C(1, 0, 0, 0), false, &err), ==, 0);
  g_assert_false(loom_net_is_enabled(net, C(1, 0, 0, 0)));
  g_assert_cmpint(loom_net_set_enabled(net, C(0, 0, 0, 0), false, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "slot (0,0,0,0) is empty; only a layer can be enabled or disabled");

  /* Resizing keeps layers at their coordinates and refuses to drop one. */
  g_assert_cmpint(loom_net_resize(net, 1, 3, 4, 2, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "the layer at (1,0,0,0) would fall outside a 1×3×4 grid with 2 layers per cell");
  g_assert_cmpint(loom_net_resize(net, 3, 3, 5, 2, &err), ==, 0);
  g_assert_nonnull(loom_net_layer_at(net, C(1, 0, 0, 0)));
  g_assert_nonnull(loom_net_layer_at(net, C(0, 1, 2, 1)));
  g_assert_false(loom_net_is_enabled(net, C(1, 0, 0, 0)));
  g_assert_cmpint(loom_net_n_slots(net), ==, 90);

  g_assert_cmpint(loom_net_clear(net, C(0, 1, 2, 1), &err), ==, 0);
  g_assert_cmpint(loom_net_clear(net, C(0, 1, 2, 1), &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "slot (0,1,2,1) is empty");
  loom_layer *taken = loom_net_take(net, C(1, 0, 0, 0), NULL, NULL);
  g_assert_nonnull(taken);
  loom_layer_free(taken);
  g_assert_cmpint(loom_net_n_layers(net), ==, 0);
  loom_net_free(net);
}

static void test_links(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 2, 2, 1, &err);
  place(net, C(0, 0, 0, 0), dense(4, 4));
  place(net, C(0, 0, 1, 0), act("relu"));
  place(net, C(0, 1, 1, 0), dense(4, 4));
  loom_link back = {C(0, 1, 1, 0), C(0, 0, 1, 0), LOOM_MERGE_ADD};
  g_assert_cmpint(loom_net_add_link(net, &back, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "link (0,1,1,0) → (0,0,1,0) points backwards (the source comes after the destination); feedback "
                  "links need systolic execution");
  loom_link to_empty = {C(0, 0, 0, 0), C(0, 1, 0, 0), LOOM_MERGE_ADD};
  g_assert_cmpint(loom_net_check_link(net, &to_empty, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "link (0,0,0,0) → (0,1,0,0): the destination slot (0,1,0,0) is empty");
  loom_link from_empty = {C(0, 1, 0, 0), C(0, 1, 1, 0), LOOM_MERGE_ADD};
  g_assert_cmpint(loom_net_check_link(net, &from_empty, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "link (0,1,0,0) → (0,1,1,0): the source slot (0,1,0,0) is empty");
  loom_link outside = {C(0, 0, 0, 0), C(0, 2, 1, 0), LOOM_MERGE_ADD};
  g_assert_cmpint(loom_net_check_link(net, &outside, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "link (0,0,0,0) → (0,2,1,0): the destination (0,2,1,0) is outside the grid");
  add_link(net, C(0, 0, 0, 0), C(0, 1, 1, 0), LOOM_MERGE_ADD);
  loom_link dup = {C(0, 0, 0, 0), C(0, 1, 1, 0), LOOM_MERGE_CONCAT};
  g_assert_cmpint(loom_net_add_link(net, &dup, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "link (0,0,0,0) → (0,1,1,0) already exists (merge “add”)");
  g_assert_cmpint(loom_net_n_links(net), ==, 1);
  /* The link in the network is judged against the others, not against itself;
   * a copy of it is still a duplicate. */
  g_assert_cmpint(loom_net_check_link(net, loom_net_link(net, 0), &err), ==, LOOM_OK);
  loom_link copy = *loom_net_link(net, 0);
  g_assert_cmpint(loom_net_check_link(net, &copy, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "link (0,0,0,0) → (0,1,1,0) already exists (merge “add”)");

  /* Moving a layer carries its links; a move that would reverse one is refused. */
  g_assert_cmpint(loom_net_move(net, C(0, 1, 1, 0), C(0, 1, 0, 0), &err), ==, 0);
  g_assert_cmpint(loom_net_flat_index(net, loom_net_link(net, 0)->dst), ==, 2);
  g_assert_nonnull(loom_net_layer_at(net, C(0, 1, 0, 0)));
  g_assert_null(loom_net_layer_at(net, C(0, 1, 1, 0)));
  g_assert_cmpint(loom_net_move(net, C(0, 0, 0, 0), C(0, 1, 1, 0), &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "moving (0,0,0,0) to (0,1,1,0) would turn its link (0,1,1,0) → (0,1,0,0) backwards, which "
                  "feed-forward execution cannot run");
  g_assert_cmpint(loom_net_move(net, C(0, 0, 1, 0), C(0, 1, 0, 0), &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "cannot move to (0,1,0,0): it already holds a dense layer");

  /* Taking a layer removes its links and hands them back for undo. */
  loom_link removed[4];
  int n_removed = 4;
  loom_layer *l = loom_net_take(net, C(0, 0, 0, 0), removed, &n_removed);
  g_assert_nonnull(l);
  g_assert_cmpint(n_removed, ==, 1);
  g_assert_cmpint(removed[0].merge, ==, LOOM_MERGE_ADD);
  g_assert_cmpint(loom_net_n_links(net), ==, 0);
  place(net, C(0, 0, 0, 0), l);
  g_assert_cmpint(loom_net_add_link(net, &removed[0], &err), ==, 0);
  g_assert_cmpint(loom_net_remove_link(net, 3, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "there is no link number 3 (the network has 1)");
  g_assert_cmpint(loom_net_remove_link(net, 0, &err), ==, 0);

  loom_merge m;
  g_assert_cmpint(loom_merge_from_name("concat", &m, &err), ==, 0);
  g_assert_cmpint(m, ==, LOOM_MERGE_CONCAT);
  g_assert_cmpint(loom_merge_from_name("mul", &m, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "unknown merge “mul” (expected replace, add or concat)");
  g_assert_cmpstr(loom_merge_name(LOOM_MERGE_REPLACE), ==, "replace");
  loom_net_free(net);
}

static void test_inference(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 4, 1, &err);
  place(net, C(0, 0, 0, 0), dense(6, 5));
  place(net, C(0, 0, 1, 0), act("tanh"));
  place(net, C(0, 0, 2, 0), dense(7, 3));
  place(net, C(0, 0, 3, 0), dense(3, 2));
  loom_diag *d = NULL;
  g_assert_cmpint(loom_net_infer_shapes(net, 1, &d), ==, 1);
  g_assert_cmpstr(d[0].message, ==, "the network's input shape is not set");
  free(d);
  set_input(net, 6);
  g_assert_cmpint(loom_net_infer_shapes(net, 1, &d), ==, 1);
  g_assert_cmpint(d[0].at.x, ==, 2);
  g_assert_cmpint(d[0].code, ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(d[0].message, ==,
                  "layer dense at (0,0,2,0): in_features is 7 but the input [5] has 5 values (and its last dimension "
                  "is not 7 either)");
  free(d);
  loom_shape s;
  g_assert_cmpint(loom_net_propose_input(net, C(0, 0, 2, 0), &s, &err), ==, 0);
  g_assert_cmpint(s.d[0], ==, 5);
  g_assert_cmpint(loom_net_propose_input(net, C(0, 0, 0, 0), &s, &err), ==, 0);
  g_assert_cmpint(s.d[0], ==, 6);
  g_assert_cmpint(loom_net_propose_input(net, C(0, 0, 3, 0), &s, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "the layer at (0,0,2,0) before (0,0,3,0) has no valid output shape");
  float x[6] = {0}, y[2];
  loom_ctx ctx = {.training = true};
  g_assert_cmpint(loom_net_forward(net, &ctx, x, 1, y, &err), ==, LOOM_ERR_SHAPE);
  g_assert_true(g_str_has_prefix(err.message, "layer dense at (0,0,2,0): in_features is 7"));
  /* Concat link (0,0,0,0) → (0,0,2,0): [5] + [5] = 10, still not 7. */
  add_link(net, C(0, 0, 0, 0), C(0, 0, 2, 0), LOOM_MERGE_CONCAT);
  g_assert_cmpint(loom_net_infer_shapes(net, 1, &d), ==, 1);
  g_assert_true(g_str_has_prefix(d[0].message, "layer dense at (0,0,2,0): in_features is 7 but the input [10]"));
  free(d);
  loom_layer_adapt_to_input(loom_net_layer_at(net, C(0, 0, 2, 0)), &(loom_shape){1, {10}}, &err);
  g_assert_cmpint(loom_net_infer_shapes(net, 1, &d), ==, 0);
  g_assert_null(d);
  g_assert_cmpint(loom_net_output_shape(net).d[0], ==, 2);
  /* An add link whose sizes differ is reported at the destination, naming both ends. */
  add_link(net, C(0, 0, 0, 0), C(0, 0, 3, 0), LOOM_MERGE_ADD);
  g_assert_cmpint(loom_net_infer_shapes(net, 1, &d), ==, 1);
  g_assert_cmpint(d[0].at.x, ==, 3);
  g_assert_true(d[0].has_other);
  g_assert_cmpint(d[0].other.x, ==, 0);
  g_assert_cmpstr(d[0].message, ==,
                  "link (0,0,0,0) → (0,0,3,0) (add): the link carries [5] but the input at (0,0,3,0) is [3]; add "
                  "needs equal shapes");
  free(d);
  loom_net_remove_link(net, 1, &err);
  /* Totals. */
  g_assert_cmpint(loom_net_infer_shapes(net, 1, NULL), ==, 0);
  g_assert_cmpint(loom_net_param_count(net), ==, (6 * 5 + 5) + (10 * 3 + 3) + (3 * 2 + 2));
  g_assert_cmpuint(loom_net_bytes(net), ==, 4 * loom_net_param_count(net));
  g_assert_cmpuint(loom_net_bytes_float32(net), ==, loom_net_bytes(net));
  g_assert_cmpint(loom_net_flops(net), ==, (60 + 5) + 25 + (60 + 3) + (12 + 2));
  loom_net_free(net);
}

/* A net with a skip link of each merge mode, gradchecked end to end. */
static void test_forward_backward_merges(void) {
  for (int mode = 0; mode < 3; mode++) {
    loom_error err = {0};
    loom_net *net = loom_net_new(1, 2, 2, 1, &err);
    set_input(net, 4);
    place(net, C(0, 0, 0, 0), dense(4, 5));
    place(net, C(0, 0, 1, 0), act("tanh"));
    place(net, C(0, 1, 0, 0), dense(5, 5));
    place(net, C(0, 1, 1, 0), dense(mode == LOOM_MERGE_CONCAT ? 10 : 5, 3));
    add_link(net, C(0, 0, 0, 0), C(0, 1, 1, 0), (loom_merge)mode);
    float x[3 * 4];
    gradcheck_fill_uniform(x, 12, -1, 1, 7);
    double worst = gradcheck_net(net, x, 3, 2e-3);
    g_test_message("merge %s: worst %.3g", loom_merge_name((loom_merge)mode), worst);
    /* The activation at a slot is its output from the last forward. */
    int64_t b;
    const float *a = loom_net_activation(net, C(0, 0, 0, 0), &b);
    g_assert_nonnull(a);
    g_assert_cmpint(b, ==, 3);
    g_assert_null(loom_net_activation(net, C(0, 1, 2, 0), &b));
    /* A disabled slot passes its input through. */
    g_assert_cmpint(loom_net_set_enabled(net, C(0, 1, 0, 0), false, &err), ==, 0);
    worst = gradcheck_net(net, x, 3, 2e-3);
    loom_net_free(net);
  }
}

static void test_replace_semantics(void) {
  /* (0,0,0,0) dense 3→3, (0,0,1,0) relu, (0,0,2,0) sigmoid with a replace link from
   * (0,0,0,0): the sigmoid sees the dense output, the relu's output is unused. */
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 3, 1, &err);
  set_input(net, 3);
  place(net, C(0, 0, 0, 0), dense(3, 3));
  place(net, C(0, 0, 1, 0), act("relu"));
  place(net, C(0, 0, 2, 0), act("sigmoid"));
  add_link(net, C(0, 0, 0, 0), C(0, 0, 2, 0), LOOM_MERGE_REPLACE);
  float x[3] = {0.5f, -1.0f, 2.0f}, y[3], dy[3] = {1, 1, 1}, dx[3];
  loom_ctx ctx = {.training = true};
  g_assert_cmpint(loom_net_forward(net, &ctx, x, 1, y, &err), ==, 0);
  const float *h = loom_net_activation(net, C(0, 0, 0, 0), NULL);
  for (int i = 0; i < 3; i++) g_assert_cmpfloat(y[i], ==, (float)(1.0 / (1.0 + exp(-(double)h[i]))));
  loom_net_zero_grad(net);
  g_assert_cmpint(loom_net_backward(net, &ctx, dy, dx, &err), ==, 0);
  gradcheck_net(net, x, 1, 2e-3);
  loom_net_free(net);
}

static void test_clone_and_backward_guard(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 2, 1, &err);
  set_input(net, 3);
  place(net, C(0, 0, 0, 0), dense(3, 4));
  place(net, C(0, 0, 1, 0), dense(4, 2));
  float dy[2] = {1, 1};
  loom_ctx ctx = {.training = true};
  g_assert_cmpint(loom_net_backward(net, &ctx, dy, NULL, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "backward needs a forward pass of the unchanged network first");
  float x[3] = {1, 2, 3}, y1[2], y2[2];
  g_assert_cmpint(loom_net_forward(net, &ctx, x, 1, y1, &err), ==, 0);
  loom_net *copy = loom_net_clone(net, &err);
  g_assert_cmpint(loom_net_forward(copy, &ctx, x, 1, y2, &err), ==, 0);
  g_assert_cmpmem(y1, sizeof y1, y2, sizeof y2);
  g_assert_true(loom_net_layer_at(copy, C(0, 0, 0, 0)) != loom_net_layer_at(net, C(0, 0, 0, 0)));
  /* Changing a layer after the forward invalidates backward. */
  loom_layer_set_int(loom_net_layer_at(net, C(0, 0, 1, 0)), "out_features", 3, &err);
  g_assert_cmpint(loom_net_backward(net, &ctx, dy, NULL, &err), ==, LOOM_ERR_INVALID);
  loom_net_free(copy);
  loom_net_free(net);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/net/grid", test_grid);
  g_test_add_func("/net/links", test_links);
  g_test_add_func("/net/inference", test_inference);
  g_test_add_func("/net/forward-backward-merges", test_forward_backward_merges);
  g_test_add_func("/net/replace", test_replace_semantics);
  g_test_add_func("/net/clone-and-backward-guard", test_clone_and_backward_guard);
  return g_test_run();
}
