/*
 * The undo model without a display: every command type, done, undone and
 * redone twice, must leave the model file (loom_model_to_json: grid, slots,
 * hyperparameters, dtypes, links, weights) exactly as it was at each step.
 */
#include <loom/model.h>
#include <loom/net.h>
#include <string.h>

#include "loom-commands.h"

typedef struct {
  loom_net *net;
  LoomCommandStack *stack;
  int changed;
} Fixture;

static loom_coord at(int z, int y, int x, int l) {
  return (loom_coord){z, y, x, l};
}

static char *json(const loom_net *net) {
  loom_error err = {0};
  size_t len = 0;
  char *text = loom_model_to_json(net, &len, &err);
  if (!text) g_error("loom_model_to_json: %s", err.message);
  return text;
}

static loom_layer *new_layer(const char *type, loom_error *err) {
  loom_layer *l = loom_layer_new_by_name(type, err);
  if (!l) g_error("loom_layer_new_by_name(%s): %s", type, err->message);
  return l;
}

static loom_layer *dense(int64_t in, int64_t out) {
  loom_error err = {0};
  loom_layer *l = new_layer("dense", &err);
  g_assert_cmpint(loom_layer_set_int(l, "in_features", in, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", out, &err), ==, 0);
  return l;
}

static void place(loom_net *net, loom_coord c, loom_layer *l) {
  loom_error err = {0};
  if (loom_net_place(net, c, l, &err) < 0) g_error("place: %s", err.message);
}

static void add_link(loom_net *net, loom_coord src, loom_coord dst, loom_merge merge) {
  loom_error err = {0};
  loom_link k = {src, dst, merge};
  if (loom_net_add_link(net, &k, &err) < 0) g_error("add_link: %s", err.message);
}

static void on_changed(LoomCommandStack *stack, Fixture *f) {
  f->changed++;
}

/*
 * A 1×2×4 grid with two slots per cell: dense 4→8 (0,0,0,0), relu (0,0,1,0),
 * dense 8→8 (0,0,2,0), dense 8→3 (0,1,0,0); links (0,0,0,0)→(0,0,2,0) add,
 * (0,0,1,0)→(0,1,0,0) add, (0,0,0,0)→(0,1,0,0) add. Shapes are inferred
 * so the weights exist and undo must bring back exactly those values.
 */
static void fixture_setup(Fixture *f, gconstpointer data) {
  loom_error err = {0};
  f->net = loom_net_new(1, 2, 4, 2, &err);
  g_assert_nonnull(f->net);
  loom_shape in = loom_shape_1d(4);
  g_assert_cmpint(loom_net_set_input_shape(f->net, &in, &err), ==, 0);
  place(f->net, at(0, 0, 0, 0), dense(4, 8));
  place(f->net, at(0, 0, 1, 0), new_layer("relu", &err));
  place(f->net, at(0, 0, 2, 0), dense(8, 8));
  place(f->net, at(0, 1, 0, 0), dense(8, 3));
  add_link(f->net, at(0, 0, 0, 0), at(0, 0, 2, 0), LOOM_MERGE_ADD);
  add_link(f->net, at(0, 0, 1, 0), at(0, 1, 0, 0), LOOM_MERGE_ADD);
  add_link(f->net, at(0, 0, 0, 0), at(0, 1, 0, 0), LOOM_MERGE_ADD);
  loom_diag *diags = NULL;
  int n = loom_net_infer_shapes(f->net, 7, &diags);
  for (int i = 0; i < n; i++) g_test_message("diag: %s", diags[i].message);
  free(diags);
  g_assert_cmpint(n, ==, 0);
  f->stack = loom_command_stack_new(f->net);
  g_signal_connect(f->stack, "changed", G_CALLBACK(on_changed), f);
}

static void fixture_teardown(Fixture *f, gconstpointer data) {
  g_object_unref(f->stack);
  loom_net_free(f->net);
}

/* Push, then undo/redo twice; the state must alternate exactly. */
static void roundtrip(Fixture *f, LoomCommand *cmd) {
  g_autoptr(GError) error = NULL;
  g_assert_nonnull(cmd);
  g_autofree char *before = json(f->net);
  g_assert_true(loom_command_stack_push(f->stack, cmd, &error));
  g_assert_no_error(error);
  g_autofree char *after = json(f->net);
  g_assert_cmpstr(before, !=, after);
  g_assert_true(loom_command_stack_get_can_undo(f->stack));
  g_assert_false(loom_command_stack_get_can_redo(f->stack));
  for (int round = 0; round < 2; round++) {
    g_assert_true(loom_command_stack_undo(f->stack, &error));
    g_assert_no_error(error);
    g_autofree char *undone = json(f->net);
    g_assert_cmpstr(undone, ==, before);
    g_assert_true(loom_command_stack_get_can_redo(f->stack));
    g_assert_true(loom_command_stack_redo(f->stack, &error));
    g_assert_no_error(error);
    g_autofree char *redone = json(f->net);
    g_assert_cmpstr(redone, ==, after);
  }
}

static void test_place(Fixture *f, gconstpointer data) {
  roundtrip(f, loom_command_new_place_layer(at(0, 1, 1, 0), dense(3, 5)));
  g_assert_nonnull(loom_net_layer_at(f->net, at(0, 1, 1, 0)));
  g_assert_cmpstr(loom_command_stack_get_undo_label(f->stack), ==, "Place Layer");
}

static void test_clear(Fixture *f, gconstpointer data) {
  /* (0,0,1,0) has the middle link: undo must put it back between the others. */
  roundtrip(f, loom_command_new_clear_slot(at(0, 0, 1, 0)));
  loom_command_stack_undo(f->stack, NULL);
  g_assert_cmpint(loom_net_n_links(f->net), ==, 3);
  const loom_link *middle = loom_net_link(f->net, 1);
  g_assert_cmpint(middle->src.x, ==, 1);
  g_assert_cmpint(middle->dst.y, ==, 1);
}

static void test_clear_disabled(Fixture *f, gconstpointer data) {
  loom_error err = {0};
  g_assert_cmpint(loom_net_set_enabled(f->net, at(0, 0, 2, 0), false, &err), ==, 0);
  roundtrip(f, loom_command_new_clear_slot(at(0, 0, 2, 0)));
  loom_command_stack_undo(f->stack, NULL);
  g_assert_false(loom_net_is_enabled(f->net, at(0, 0, 2, 0)));
}

static void test_move(Fixture *f, gconstpointer data) {
  roundtrip(f, loom_command_new_move_layer(at(0, 0, 2, 0), at(0, 0, 3, 1)));
}

static void test_set_param(Fixture *f, gconstpointer data) {
  const loom_layer_type *t = loom_layer_type_find("dense");
  int index = loom_layer_type_param_index(t, "out_features");
  g_assert_cmpint(index, >=, 0);
  loom_param_value v = loom_layer_get_value(loom_net_layer_at(f->net, at(0, 0, 2, 0)), index);
  v.i[0] = 16;
  g_autofree char *original = json(f->net);
  roundtrip(f, loom_command_new_set_param(at(0, 0, 2, 0), index, &v));
  g_assert_cmpint(loom_layer_get_int(loom_net_layer_at(f->net, at(0, 0, 2, 0)), "out_features"), ==, 16);
  /* Inference after the edit reallocates weights; undo still restores the originals. */
  loom_diag *diags = NULL;
  loom_net_infer_shapes(f->net, 99, &diags);
  free(diags);
  g_autofree char *edited = json(f->net);
  g_assert_true(loom_command_stack_undo(f->stack, NULL));
  g_autofree char *undone = json(f->net);
  g_assert_cmpstr(undone, !=, edited);
  g_assert_cmpstr(undone, ==, original);
  g_assert_cmpint(loom_layer_get_int(loom_net_layer_at(f->net, at(0, 0, 2, 0)), "out_features"), ==, 8);
}

static void test_set_param_invalid(Fixture *f, gconstpointer data) {
  const loom_layer_type *t = loom_layer_type_find("dense");
  int index = loom_layer_type_param_index(t, "out_features");
  loom_param_value v = {{0}};
  v.i[0] = (int64_t)loom_layer_type_param(t, index)->max + 1;
  g_autofree char *before = json(f->net);
  g_autoptr(GError) error = NULL;
  g_assert_false(loom_command_stack_push(f->stack, loom_command_new_set_param(at(0, 0, 2, 0), index, &v), &error));
  g_assert_error(error, LOOM_COMMAND_ERROR, LOOM_ERR_INVALID);
  g_assert_nonnull(strstr(error->message, "out_features"));
  g_autofree char *after = json(f->net);
  g_assert_cmpstr(before, ==, after);
  g_assert_false(loom_command_stack_get_can_undo(f->stack));
  g_assert_cmpint(f->changed, ==, 0);
}

static void test_set_floats(Fixture *f, gconstpointer data) {
  loom_error err = {0};
  loom_layer *masked = new_layer("masked_softmax", &err);
  place(f->net, at(0, 1, 1, 0), masked);
  int index = loom_layer_type_param_index(loom_layer_get_type(masked), "mask");
  g_assert_cmpint(index, >=, 0);
  const float mask[] = {1, 0, 1};
  roundtrip(f, loom_command_new_set_floats(at(0, 1, 1, 0), index, mask, 3));
  int64_t n = 0;
  const float *now = loom_layer_get_floats(loom_net_layer_at(f->net, at(0, 1, 1, 0)), "mask", &n);
  g_assert_cmpint(n, ==, 3);
  g_assert_cmpfloat(now[1], ==, 0);
}

static void test_set_dtype(Fixture *f, gconstpointer data) {
  roundtrip(f, loom_command_new_set_dtype(at(0, 0, 0, 0), LOOM_DTYPE_INT4));
  g_assert_cmpint(loom_layer_get_dtype(loom_net_layer_at(f->net, at(0, 0, 0, 0))), ==, LOOM_DTYPE_INT4);
}

static void test_set_enabled(Fixture *f, gconstpointer data) {
  roundtrip(f, loom_command_new_set_enabled(at(0, 0, 1, 0), FALSE));
  g_assert_false(loom_net_is_enabled(f->net, at(0, 0, 1, 0)));
}

static void test_add_link(Fixture *f, gconstpointer data) {
  loom_link k = {at(0, 0, 1, 0), at(0, 0, 2, 0), LOOM_MERGE_CONCAT};
  roundtrip(f, loom_command_new_add_link(&k));
  g_assert_cmpint(loom_net_n_links(f->net), ==, 4);
}

static void test_remove_link(Fixture *f, gconstpointer data) {
  roundtrip(f, loom_command_new_remove_link(1));
  g_assert_cmpint(loom_net_n_links(f->net), ==, 2);
  g_autoptr(GError) error = NULL;
  g_assert_false(loom_command_stack_push(f->stack, loom_command_new_remove_link(7), &error));
  g_assert_error(error, LOOM_COMMAND_ERROR, LOOM_ERR_RANGE);
}

static void test_set_link_merge(Fixture *f, gconstpointer data) {
  roundtrip(f, loom_command_new_set_link_merge(1, LOOM_MERGE_REPLACE));
  g_assert_cmpint(loom_net_link(f->net, 1)->merge, ==, LOOM_MERGE_REPLACE);
  g_assert_cmpint(loom_net_link(f->net, 1)->src.x, ==, 1);
}

static void test_resize(Fixture *f, gconstpointer data) {
  roundtrip(f, loom_command_new_resize_grid(2, 3, 5, 2));
  g_assert_cmpint(loom_net_depth(f->net), ==, 2);
  /* Shrinking past an occupied slot fails and changes nothing. */
  g_autofree char *before = json(f->net);
  g_autoptr(GError) error = NULL;
  g_assert_false(loom_command_stack_push(f->stack, loom_command_new_resize_grid(1, 1, 4, 2), &error));
  g_assert_nonnull(error);
  g_autofree char *after = json(f->net);
  g_assert_cmpstr(before, ==, after);
}

static void test_input_shape(Fixture *f, gconstpointer data) {
  loom_shape s = loom_shape_1d(6);
  roundtrip(f, loom_command_new_set_input_shape(&s));
  loom_shape now = loom_net_input_shape(f->net);
  g_assert_true(loom_shape_equal(&now, &s));
}

static void on_notify(GObject *object, GParamSpec *pspec, int *count) {
  (*count)++;
}

/* can-undo / can-redo / dirty, the clean index and the redo history. */
static void test_stack(Fixture *f, gconstpointer data) {
  int dirty_notes = 0, undo_notes = 0;
  g_signal_connect(f->stack, "notify::dirty", G_CALLBACK(on_notify), &dirty_notes);
  g_signal_connect(f->stack, "notify::can-undo", G_CALLBACK(on_notify), &undo_notes);
  g_assert_false(loom_command_stack_get_dirty(f->stack));
  g_assert_null(loom_command_stack_get_undo_label(f->stack));
  g_autoptr(GError) error = NULL;
  g_assert_false(loom_command_stack_undo(f->stack, &error));
  g_clear_error(&error);

  g_assert_true(loom_command_stack_push(f->stack, loom_command_new_set_enabled(at(0, 0, 1, 0), FALSE), NULL));
  g_assert_true(loom_command_stack_get_dirty(f->stack));
  g_assert_cmpint(dirty_notes, ==, 1);
  g_assert_cmpint(undo_notes, ==, 1);
  g_assert_cmpint(f->changed, ==, 1);
  loom_command_stack_mark_clean(f->stack);
  g_assert_false(loom_command_stack_get_dirty(f->stack));

  /* Undo leaves the saved state; redo comes back to it. */
  g_assert_true(loom_command_stack_undo(f->stack, NULL));
  g_assert_true(loom_command_stack_get_dirty(f->stack));
  g_assert_cmpstr(loom_command_stack_get_redo_label(f->stack), ==, "Disable Layer");
  g_assert_true(loom_command_stack_redo(f->stack, NULL));
  g_assert_false(loom_command_stack_get_dirty(f->stack));

  /* A failing command changes nothing: not the net, not the stack. */
  int changed = f->changed;
  g_assert_false(loom_command_stack_push(f->stack, loom_command_new_place_layer(at(0, 0, 0, 0), dense(1, 1)), &error));
  g_assert_error(error, LOOM_COMMAND_ERROR, error->code);
  g_clear_error(&error);
  g_assert_cmpint(f->changed, ==, changed);
  g_assert_false(loom_command_stack_get_dirty(f->stack));

  /* Branching after an undo drops the redo history and the saved state with it. */
  g_assert_true(loom_command_stack_undo(f->stack, NULL));
  g_assert_true(loom_command_stack_push(f->stack, loom_command_new_move_layer(at(0, 0, 2, 0), at(0, 1, 2, 0)), NULL));
  g_assert_false(loom_command_stack_get_can_redo(f->stack));
  g_assert_true(loom_command_stack_get_dirty(f->stack));
  g_assert_true(loom_command_stack_undo(f->stack, NULL));
  g_assert_true(loom_command_stack_get_dirty(f->stack));
  g_assert_false(loom_command_stack_get_can_undo(f->stack));

  loom_command_stack_reset(f->stack, f->net);
  g_assert_false(loom_command_stack_get_dirty(f->stack));
  g_assert_false(loom_command_stack_get_can_redo(f->stack));
}

/* A copy of the fixture's net with the first weight of (0,0,0,0) set to v:
 * what a training run hands back. */
static loom_net *trained(const loom_net *net, float v) {
  loom_net *copy = loom_net_clone(net, NULL);
  g_assert_nonnull(copy);
  loom_weights *w = loom_layer_weights(loom_net_layer_at(copy, at(0, 0, 0, 0)), 0);
  loom_weights_master(w)[0] = v;
  loom_weights_touch(w);
  return copy;
}

static void push_result(Fixture *f, float v, gint64 steps, gint64 run, gboolean continues) {
  loom_net *copy = trained(f->net, v);
  LoomCommand *cmd = loom_command_new_training_result(copy, NULL, steps, run, NULL);
  if (continues) loom_command_set_continues(cmd);
  g_assert_true(loom_command_stack_push(f->stack, cmd, NULL));
  loom_net_free(copy);
}

/* Continuations (single Steps) merge into one undo step that takes them all
 * back; not across the saved state, not into a played run. */
static void test_training_steps_merge(Fixture *f, gconstpointer data) {
  LoomTrainingExtras extras = {0};
  loom_command_stack_set_extras(f->stack, &extras);
  g_autofree char *start = json(f->net);
  push_result(f, 1.f, 1, 1, TRUE);
  push_result(f, 2.f, 2, 1, TRUE);
  push_result(f, 3.f, 3, 1, TRUE);
  g_assert_cmpstr(loom_command_stack_get_undo_label(f->stack), ==, "Training: 3 steps");
  g_autofree char *three = json(f->net);
  g_assert_true(loom_command_stack_undo(f->stack, NULL));
  g_assert_false(loom_command_stack_get_can_undo(f->stack));
  g_autofree char *undone = json(f->net);
  g_assert_cmpstr(undone, ==, start);
  g_assert_cmpint(extras.steps, ==, 0);
  g_assert_true(loom_command_stack_redo(f->stack, NULL));
  g_autofree char *redone = json(f->net);
  g_assert_cmpstr(redone, ==, three);
  g_assert_cmpint(extras.steps, ==, 3);

  /* Saved after three steps: the fourth stays its own step, so undo still
   * reaches the saved state. */
  loom_command_stack_mark_clean(f->stack);
  push_result(f, 4.f, 4, 1, TRUE);
  g_assert_cmpstr(loom_command_stack_get_undo_label(f->stack), ==, "Training: 1 step");
  g_assert_true(loom_command_stack_undo(f->stack, NULL));
  g_assert_false(loom_command_stack_get_dirty(f->stack));
  g_assert_true(loom_command_stack_redo(f->stack, NULL));

  /* A played run (no continuation) is an undo step of its own, and a step
   * after it does not merge into it. */
  push_result(f, 5.f, 104, 100, FALSE);
  push_result(f, 6.f, 105, 1, TRUE);
  g_assert_cmpstr(loom_command_stack_get_undo_label(f->stack), ==, "Training: 1 step");
  g_assert_true(loom_command_stack_undo(f->stack, NULL));
  g_assert_cmpstr(loom_command_stack_get_undo_label(f->stack), ==, "Training: 100 steps");
  loom_command_stack_set_extras(f->stack, NULL);
  g_clear_pointer(&extras.state, g_bytes_unref);
  if (extras.settings) loom_train_settings_free(extras.settings);
}

/* A long mixed history undone to the start gives back the first state. */
static void test_history(Fixture *f, gconstpointer data) {
  g_autofree char *start = json(f->net);
  loom_link k = {at(0, 0, 1, 0), at(0, 0, 2, 0), LOOM_MERGE_CONCAT};
  loom_shape s = loom_shape_1d(5);
  LoomCommand *cmds[] = {
    loom_command_new_add_link(&k),
    loom_command_new_place_layer(at(0, 0, 3, 0), dense(8, 8)),
    loom_command_new_set_dtype(at(0, 0, 2, 0), LOOM_DTYPE_FP8_E4M3),
    loom_command_new_clear_slot(at(0, 0, 0, 0)),
    loom_command_new_move_layer(at(0, 0, 2, 0), at(0, 1, 3, 1)),
    loom_command_new_set_link_merge(0, LOOM_MERGE_CONCAT),
    loom_command_new_resize_grid(3, 2, 4, 2),
    loom_command_new_set_input_shape(&s),
    loom_command_new_remove_link(0),
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cmds); i++) {
    g_autoptr(GError) error = NULL;
    if (!loom_command_stack_push(f->stack, cmds[i], &error)) g_error("command %zu: %s", i, error->message);
  }
  g_autofree char *end = json(f->net);
  while (loom_command_stack_get_can_undo(f->stack)) g_assert_true(loom_command_stack_undo(f->stack, NULL));
  g_autofree char *back = json(f->net);
  g_assert_cmpstr(back, ==, start);
  while (loom_command_stack_get_can_redo(f->stack)) g_assert_true(loom_command_stack_redo(f->stack, NULL));
  g_autofree char *again = json(f->net);
  g_assert_cmpstr(again, ==, end);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
#define ADD(name, fn) g_test_add("/commands/" name, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD("place", test_place);
  ADD("clear", test_clear);
  ADD("clear-disabled", test_clear_disabled);
  ADD("move", test_move);
  ADD("set-param", test_set_param);
  ADD("set-param-invalid", test_set_param_invalid);
  ADD("set-floats", test_set_floats);
  ADD("set-dtype", test_set_dtype);
  ADD("set-enabled", test_set_enabled);
  ADD("add-link", test_add_link);
  ADD("remove-link", test_remove_link);
  ADD("set-link-merge", test_set_link_merge);
  ADD("resize", test_resize);
  ADD("input-shape", test_input_shape);
  ADD("stack", test_stack);
  ADD("history", test_history);
  ADD("training-steps-merge", test_training_steps_merge);
  return g_test_run();
}
