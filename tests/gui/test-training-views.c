/*
 * The panes beside training in the real workbench window: the DNA pane's
 * live similarity heatmap, timeline and logic-shift arrow; the export
 * dialog; systolic ticks and backprop through time on the feedback example;
 * importing a PyTorch state dict; training on a Vulkan device. The cases run
 * in order on one window.
 */
#include "loom-tick-raster.h"
#include "training-harness.h"

/* ---- the DNA pane ---- */

static int shift_pixels(GBytes *pixels) {
  gsize len;
  const guint8 *px = g_bytes_get_data(pixels, &len);
  int n = 0;
  for (gsize i = 0; i + 3 < len; i += 4)
    n += gui_test_pixel_near(px + i, LOOM_GRID_VIEW_SHIFT_R, LOOM_GRID_VIEW_SHIFT_G, LOOM_GRID_VIEW_SHIFT_B, 30);
  return n;
}

/* The timeline filled while training; the first snapshot against the
 * newest shows a matrix of the network's slots. */
static void test_dna_timeline(void) {
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window), "win.show-dna", NULL));
  g_assert_cmpuint(loom_dna_pane_get_n_snapshots(window->dna_pane), >=, 2);
  g_assert_true(loom_dna_pane_set_source(window->dna_pane, FALSE, LOOM_DNA_SOURCE_SNAPSHOT, 0));
  guint last = loom_dna_pane_get_n_snapshots(window->dna_pane) - 1;
  g_assert_true(loom_dna_pane_set_source(window->dna_pane, TRUE, LOOM_DNA_SOURCE_SNAPSHOT, last));
  const loom_dna_result *r = loom_dna_pane_get_result(window->dna_pane);
  g_assert_nonnull(r);
  g_assert_cmpint(loom_dna_result_n_a(r), ==, loom_net_n_layers(loom_document_get_net(doc())));
  double s = loom_dna_result_similarity(r);
  g_assert_true(s > 0 && s < 1); /* trained: alike, not the same */
  g_autofree char *csv = g_build_filename(tmp_dir, "matrix.csv", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(loom_dna_pane_export_matrix(window->dna_pane, csv, &error));
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(csv, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_assert_cmpuint(g_strv_length(lines), >=, (guint)loom_dna_result_n_a(r) + 1);
}

/* A copy of the network with its last layer moved to the free slot: the
 * move is the one logic shift, and selecting it draws its arrow. */
static void test_dna_shift_arrow(void) {
  loom_net *moved = loom_net_clone(loom_document_get_net(doc()), NULL);
  loom_coord from = {0, 1, 1, 0}, to = {0, 1, 2, 0};
  g_assert_nonnull(loom_net_layer_at(moved, from));
  g_assert_null(loom_net_layer_at(moved, to));
  g_assert_cmpint(loom_net_move(moved, from, to, NULL), ==, LOOM_OK);
  g_autofree char *path = g_build_filename(tmp_dir, "moved.loom.json", NULL);
  g_assert_cmpint(loom_model_save(moved, path, NULL), ==, LOOM_OK);
  loom_net_free(moved);
  g_autoptr(GError) error = NULL;
  g_assert_true(loom_dna_pane_set_source(window->dna_pane, FALSE, LOOM_DNA_SOURCE_CURRENT, 0));
  g_assert_true(loom_dna_pane_add_file(window->dna_pane, path, &error));
  const loom_dna_result *r = loom_dna_pane_get_result(window->dna_pane);
  g_assert_nonnull(r);
  g_assert_cmpint(loom_dna_result_n_shifts(r), ==, 1);
  loom_dna_shift shift = loom_dna_result_shift(r, 0);
  g_assert_cmpint(loom_net_flat_index(loom_document_get_net(doc()), shift.from), ==,
                  loom_net_flat_index(loom_document_get_net(doc()), from));
  g_assert_cmpint(loom_net_flat_index(loom_document_get_net(doc()), shift.to), ==,
                  loom_net_flat_index(loom_document_get_net(doc()), to));
  g_autoptr(GBytes) before = grid_pixels();
  g_assert_cmpint(shift_pixels(before), <, 20);
  loom_dna_pane_select_shift(window->dna_pane, 0);
  g_autoptr(GBytes) after = grid_pixels();
  g_test_message("shift arrow pixels: %d", shift_pixels(after));

  g_assert_cmpint(shift_pixels(after), >, 200);
  loom_dna_pane_select_shift(window->dna_pane, -1);
  g_autoptr(GBytes) cleared = grid_pixels();
  g_assert_cmpint(shift_pixels(cleared), <, 20);
  /* A file that does not load names itself and the reason. */
  g_autoptr(GError) bad = NULL;
  g_autofree char *missing = g_build_filename(tmp_dir, "missing.loom.json", NULL);
  g_assert_false(loom_dna_pane_add_file(window->dna_pane, missing, &bad));
  g_assert_nonnull(strstr(bad->message, "missing.loom.json"));
}

/* Over 500 bytes of the grid's picture differ from @before. */
static gboolean grid_changed(gpointer before) {
  g_autoptr(GBytes) now = grid_pixels();
  return differing_bytes(before, now) > 500;
}

/* The live heatmap: every slot by its best match against the baseline,
 * changing while training runs. */
static void test_dna_live_heatmap(void) {
  /* The spiral example: its grid has a free slot for the planted shift. */
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) spiral = loom_document_new_for_example("spiral", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, spiral);
  wait_state(LOOM_TRAINING_PAUSED, "the spiral example");
  set_field("epochs", "100000"); /* no case reaches the end */
  g_assert_true(loom_dna_pane_set_source(window->dna_pane, FALSE, LOOM_DNA_SOURCE_CURRENT, 0));
  loom_dna_pane_set_live_heatmap(window->dna_pane, TRUE);
  g_assert_cmpstr(loom_training_pane_get_heatmap_metric(pane()), ==, "none");
  activate("win.train-play");
  gui_test_wait(enough_points, GSIZE_TO_POINTER(plot_points("loss") + 50), TIMEOUT_MS, "training to run");
  g_assert_cmpint(loom_grid_view_get_color_mode(window->grid_view), ==, LOOM_GRID_VIEW_COLOR_METRIC);
  g_autoptr(GBytes) early = grid_pixels();
  /* The DNA snapshots come at the worker's lower rate for extras, not with
   * every step: 1,500 steps can pass between two (the spiral example runs
   * them in a fraction of a second), so wait for the next one. */
  gui_test_wait(enough_points, GSIZE_TO_POINTER(plot_points("loss") + 1500), TIMEOUT_MS, "more training");
  gui_test_wait(grid_changed, early, TIMEOUT_MS, "the live heatmap to change");
  activate("win.train-pause");
  wait_state(LOOM_TRAINING_PAUSED, "the pause");
  /* The training pane's heatmap takes the grid back. */
  loom_training_pane_set_heatmap_metric(pane(), "weight-norm");
  g_assert_false(loom_dna_pane_get_live_heatmap(window->dna_pane));
  loom_training_pane_set_heatmap_metric(pane(), "none");
}

/* ---- export ---- */

/* The export dialog shows the weights' size at the chosen dtype; each
 * format writes a file that reads back (ONNX: a protobuf). */
static void test_export(void) {
  LoomExportDialog *dialog = loom_window_show_export(window);
  loom_export_dialog_set_dtype(dialog, FALSE, LOOM_DTYPE_FLOAT32);
  g_autofree char *own = g_strdup(loom_export_dialog_get_size_text(dialog));
  loom_export_dialog_set_dtype(dialog, TRUE, LOOM_DTYPE_INT4);
  g_autofree char *int4 = g_strdup(loom_export_dialog_get_size_text(dialog));
  g_test_message("export sizes: %s / %s", own, int4);
  g_assert_cmpstr(own, !=, int4);
  g_assert_nonnull(strstr(int4, "float32"));
  gtk_window_destroy(GTK_WINDOW(dialog));

  const loom_net *net = loom_document_get_net(doc());
  g_autofree char *want = net_json(net);
  const LoomExportFormat formats[] = {LOOM_EXPORT_JSON, LOOM_EXPORT_SAFETENSORS, LOOM_EXPORT_ONNX};
  for (gsize i = 0; i < G_N_ELEMENTS(formats); i++) {
    g_autofree char *name = g_strconcat("export", loom_export_format_extension(formats[i]), NULL);
    g_autofree char *path = g_build_filename(tmp_dir, name, NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(loom_export_write(net, formats[i], FALSE, LOOM_DTYPE_FLOAT32, path, &error));
    g_assert_no_error(error);
    if (formats[i] == LOOM_EXPORT_ONNX) {
      gsize len = 0;
      g_autofree char *bytes = NULL;
      g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
      g_assert_cmpuint(len, >, 100);
      continue;
    }
    loom_net *back = NULL;
    g_assert_cmpint(loom_model_load(path, 0, &back, NULL), ==, LOOM_OK);
    g_autofree char *got = net_json(back);
    g_assert_cmpstr(got, ==, want);
    loom_net_free(back);
  }
  /* int4 for every layer: smaller, and the document keeps its dtypes. */
  g_autofree char *f32 = g_build_filename(tmp_dir, "f32.safetensors", NULL);
  g_autofree char *q4 = g_build_filename(tmp_dir, "int4.safetensors", NULL);
  g_assert_true(loom_export_write(net, LOOM_EXPORT_SAFETENSORS, FALSE, LOOM_DTYPE_FLOAT32, f32, NULL));
  g_assert_true(loom_export_write(net, LOOM_EXPORT_SAFETENSORS, TRUE, LOOM_DTYPE_INT4, q4, NULL));
  GStatBuf a, b;
  g_assert_cmpint(g_stat(f32, &a), ==, 0);
  g_assert_cmpint(g_stat(q4, &b), ==, 0);
  g_assert_cmpint(b.st_size, <, a.st_size);
  g_autofree char *after = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(after, ==, want);
  /* A file that cannot be written names itself. */
  g_autoptr(GError) error = NULL;
  g_assert_false(loom_export_write(net, LOOM_EXPORT_JSON, FALSE, LOOM_DTYPE_FLOAT32, "/nonexistent/dir/x.loom.json",
                                   &error));
  g_assert_nonnull(strstr(error->message, "/nonexistent/dir/x.loom.json"));
}

/* ---- the systolic mesh ---- */

static gboolean ticks_are(gpointer n) { return loom_systolic_pane_get_ticks(window->systolic_pane) == GPOINTER_TO_INT(n); }

static int lit_slots(void) {
  gsize n = 0;
  const loom_slot_trace *t = loom_systolic_pane_get_trace(window->systolic_pane, &n);
  int lit = 0;
  for (gsize i = 0; i < n; i++) lit += t[i].norm > 0;
  return lit;
}

/* The feedback example, one tick at a time: the trace and the grid's
 * colours advance with every tick; the signal reaches one more slot each
 * tick until every slot carries it. The pane's raster gains a column per
 * tick, a row per traced slot holding its output norm; Reset empties it. */
static void test_systolic(void) {
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) feedback = loom_document_new_for_example("feedback", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, feedback);
  g_assert_cmpint(loom_net_execution(loom_document_get_net(doc())), ==, LOOM_EXEC_SYSTOLIC);
  /* The training data (whose first sample the mesh holds) arrives first. */
  gui_test_wait(settled, NULL, TIMEOUT_MS, "the example's data");
  activate("win.systolic-tick");
  gui_test_wait(ticks_are, GINT_TO_POINTER(1), TIMEOUT_MS, "tick 1");
  g_assert_null(loom_systolic_pane_get_error(window->systolic_pane));
  g_assert_cmpstr(gtk_stack_get_visible_child_name(window->bottom_stack), ==, "systolic");
  g_assert_cmpint(loom_grid_view_get_color_mode(window->grid_view), ==, LOOM_GRID_VIEW_COLOR_METRIC);
  int lit1 = lit_slots();
  g_autoptr(GBytes) one = grid_pixels();
  activate("win.systolic-tick");
  gui_test_wait(ticks_are, GINT_TO_POINTER(2), TIMEOUT_MS, "tick 2");
  int lit2 = lit_slots();
  g_autoptr(GBytes) two = grid_pixels();
  g_test_message("slots reached: %d after one tick, %d after two", lit1, lit2);
  g_assert_cmpint(lit1, >=, 1);
  g_assert_cmpint(lit2, ==, lit1 + 1);
  g_assert_cmpuint(differing_bytes(one, two), >, 200);
  LoomTickRaster *raster = LOOM_TICK_RASTER(gui_test_find_child(GTK_WIDGET(window->systolic_pane), LOOM_TYPE_TICK_RASTER));
  gsize n_trace = 0;
  const loom_slot_trace *trace = loom_systolic_pane_get_trace(window->systolic_pane, &n_trace);
  g_assert_cmpint(loom_tick_raster_get_n_rows(raster), ==, (int)n_trace);
  g_assert_cmpint(loom_tick_raster_get_n_columns(raster), ==, 2);
  for (gsize k = 0; k < n_trace; k++) g_assert_cmpfloat(loom_tick_raster_get_value(raster, (int)k, 0), ==, (float)trace[k].norm);
  int lit_before = 0;
  for (gsize k = 0; k < n_trace; k++) lit_before += loom_tick_raster_get_value(raster, (int)k, 1) > 0;
  g_assert_cmpint(lit_before, ==, lit1);
  activate("win.systolic-reset");
  g_assert_cmpint(loom_systolic_pane_get_ticks(window->systolic_pane), ==, 0);
  g_assert_cmpint(loom_tick_raster_get_n_columns(raster), ==, 0);
  gtk_stack_set_visible_child_name(window->bottom_stack, "training");
  g_assert_cmpint(loom_grid_view_get_color_mode(window->grid_view), ==, LOOM_GRID_VIEW_COLOR_LAYER_TYPE);
}

static gboolean monitor_has_activations(gpointer want) {
  return loom_slot_monitor_get_n_activations(window->slot_monitor) == *(const guint64 *)want;
}

/* The feedback example trains in the workbench: the worker runs the engine's
 * trainer, which backpropagates through the 8 ticks the example opens with;
 * three Steps give the losses the engine gives for the same settings. */
static void test_systolic_train(void) {
  const loom_train_settings *settings = loom_document_get_training(doc())->settings;
  g_assert_cmpint(settings->ticks, ==, 8);
  wait_state(LOOM_TRAINING_PAUSED, "the feedback example to be ready to train");
  g_assert_true(play_enabled());
  gint64 steps = doc_steps();
  guint before = points->len;
  /* The watched slot's activations come from the trainer's last tick: the
   * network's own plan holds none for a systolic network. */
  loom_coord watched = loom_net_layer_coord(loom_document_get_net(doc()), 1);
  loom_grid_view_set_selection(window->grid_view, &watched);
  gui_test_spin(50);
  for (gint64 i = 1; i <= 3; i++) {
    activate("win.train-step");
    gui_test_wait(doc_steps_are, GSIZE_TO_POINTER(steps + i), TIMEOUT_MS, "a step of the feedback example");
    wait_state(LOOM_TRAINING_PAUSED, "the step to end");
  }
  gui_test_spin(100);
  g_assert_cmpuint(points->len, ==, before + 3);
  {
    loom_layer *l = loom_net_layer_at(loom_document_get_net(doc()), watched);
    loom_shape out = loom_layer_out_shape(l);
    guint64 want = (guint64)settings->batch * (guint64)loom_shape_numel(&out);
    gui_test_wait(monitor_has_activations, &want, TIMEOUT_MS, "the watched slot's activations");
    g_assert_cmpuint(loom_slot_monitor_get_n_activations(window->slot_monitor), ==, want);
  }
  loom_grid_view_set_selection(window->grid_view, NULL);

  loom_error err = {0};
  loom_net *net = NULL;
  loom_dataset *train = NULL, *test = NULL;
  loom_train_config cfg;
  g_assert_cmpint(loom_example_build("feedback", &net, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_train_settings_make_data(settings, net, NULL, &train, &test, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_train_settings_make_config(settings, net, train, &cfg, &err), ==, LOOM_OK);
  loom_trainer *tr = loom_trainer_new(net, train, test, &cfg, NULL, &err);
  g_assert_nonnull(tr);
  for (guint i = 0; i < 3; i++) {
    loom_step_stats st;
    g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, LOOM_OK);
    g_assert_cmpfloat(g_array_index(points, LoomTrainingPoint, before + i).loss, ==, st.loss);
  }
  loom_trainer_free(tr);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_net_free(net);
  /* the next case opens a file into a clean window */
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) fresh = loom_document_new_for_example("feedback", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, fresh);
  gui_test_wait(settled, NULL, TIMEOUT_MS, "the fresh example");
}

/* ---- import of PyTorch weights ---- */

static loom_layer *dense(int64_t in, int64_t out) {
  loom_layer *l = loom_layer_new_by_name("dense", NULL);
  g_assert_nonnull(l);
  g_assert_cmpint(loom_layer_set_int(l, "in_features", in, NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", out, NULL), ==, LOOM_OK);
  return l;
}

static gboolean titled(gpointer title) { return g_strcmp0(loom_document_get_title(doc()), title) == 0; }

static gboolean execution_is(gpointer mode) {
  return loom_net_execution(loom_document_get_net(doc())) == (loom_execution)GPOINTER_TO_INT(mode) &&
         !loom_training_session_get_busy(session());
}

static gboolean execution_state(void) {
  g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(window), "systolic-execution");
  return g_variant_get_boolean(state);
}

/* The execution mode is an undoable edit of the network: xor runs
 * systolically and back; the feedback example cannot go feed-forward while
 * its feedback link exists, and stays as it was. */
static void test_execution_mode(void) {
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) xor = loom_document_new_for_example("xor", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, xor);
  wait_state(LOOM_TRAINING_PAUSED, "the xor example");
  g_assert_false(execution_state());
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window), "win.systolic-execution", NULL));
  gui_test_wait(execution_is, GINT_TO_POINTER(LOOM_EXEC_SYSTOLIC), TIMEOUT_MS, "systolic execution");
  g_assert_true(execution_state());
  g_assert_cmpstr(loom_command_stack_get_undo_label(loom_document_get_commands(doc())), ==, "Run Systolically");
  activate("win.undo");
  gui_test_wait(execution_is, GINT_TO_POINTER(LOOM_EXEC_FEED_FORWARD), TIMEOUT_MS, "feed-forward again");
  g_assert_false(execution_state());

  g_autoptr(LoomDocument) feedback = loom_document_new_for_example("feedback", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, feedback);
  wait_state(LOOM_TRAINING_PAUSED, "the feedback example");
  g_assert_true(execution_state());
  g_autofree char *before = net_json(loom_document_get_net(doc()));
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window), "win.systolic-execution", NULL));
  gui_test_spin(50);
  g_assert_true(execution_state());
  g_autofree char *after = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(before, ==, after);
  g_assert_false(loom_command_stack_get_can_undo(loom_document_get_commands(doc())));
}

static gboolean has_field(gpointer data) {
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(session());
  return snap && snap->field && !loom_training_session_get_busy(session());
}

/* A systolic network of two features, with a feedback loop, gets its
 * decision boundary too: the worker runs the plane through the ticks it
 * trains with (a plain forward refuses the loop). */
static void test_systolic_field(void) {
  /* dense 2→4, tanh, dense 4→2, and the output fed back into the first
   * layer's input: only a systolic run computes this network. */
  loom_net *net = loom_net_new(1, 1, 3, 1, NULL);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, dense(2, 4), NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, loom_layer_new_by_name("tanh", NULL), NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 2, 0}, dense(4, 2), NULL), ==, LOOM_OK);
  loom_shape in = loom_shape_1d(2);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_net_set_execution(net, LOOM_EXEC_SYSTOLIC, NULL), ==, LOOM_OK);
  loom_link loop = {{0, 0, 2, 0}, {0, 0, 0, 0}, LOOM_MERGE_ADD};
  loom_error err = {0};
  if (loom_net_add_link(net, &loop, &err)) g_error("feedback link: %s", err.message);
  g_assert_cmpint(loom_net_infer_shapes(net, 7, NULL), ==, 0);
  loom_model_extras extras = {0};
  g_assert_cmpint(loom_example_settings("xor", &extras.settings, NULL), ==, LOOM_OK);
  g_autofree char *path = g_build_filename(tmp_dir, "xor-systolic.loom.json", NULL);
  g_assert_cmpint(loom_model_save_ex(net, &extras, path, NULL), ==, LOOM_OK);
  loom_model_extras_clear(&extras);
  g_autoptr(GFile) file = g_file_new_for_path(path);
  loom_window_open_file(window, file);
  gui_test_wait(titled, "xor-systolic.loom.json", TIMEOUT_MS, "the systolic xor to open");
  wait_state(LOOM_TRAINING_PAUSED, "the systolic xor to be ready");
  activate("win.train-step");
  gui_test_wait(has_field, NULL, TIMEOUT_MS, "a decision field");
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(session());
  g_assert_cmpint(snap->field_res, >, 1);
  /* Not a constant plane: the field is the network's output. */
  float lo = snap->field[0], hi = snap->field[0];
  for (int i = 1; i < snap->field_res * snap->field_res * snap->field_channels; i++) {
    lo = MIN(lo, snap->field[i]);
    hi = MAX(hi, snap->field[i]);
  }
  g_assert_cmpfloat(hi - lo, >, 1e-4);
  loom_net_free(net);
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) fresh = loom_document_new_for_example("feedback", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, fresh);
  gui_test_wait(settled, NULL, TIMEOUT_MS, "the fresh example");
}


/* torch's nn.Sequential(Linear(4, 8), ReLU(), Linear(8, 3)) saved as
 * safetensors (tests/io/make_state_dict.py) into the same network in the
 * window: its forward gives torch's output; one undo puts the weights back;
 * a file named otherwise is refused until a mapping says where it goes. */
static void test_import_weights(void) {
  loom_net *net = loom_net_new(1, 1, 3, 1, NULL);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, dense(4, 8), NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, loom_layer_new_by_name("relu", NULL), NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 2, 0}, dense(8, 3), NULL), ==, LOOM_OK);
  loom_shape in = loom_shape_1d(4);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_net_infer_shapes(net, 7, NULL), ==, 0);
  g_autofree char *model = g_build_filename(tmp_dir, "mlp.loom.json", NULL);
  g_assert_cmpint(loom_model_save(net, model, NULL), ==, LOOM_OK);
  loom_net_free(net);
  g_assert_false(loom_document_get_dirty(doc()));
  g_autoptr(GFile) file = g_file_new_for_path(model);
  loom_window_open_file(window, file);
  gui_test_wait(titled, "mlp.loom.json", TIMEOUT_MS, "the MLP to open");
  g_autofree char *before = net_json(loom_document_get_net(doc()));

  const char *src = g_getenv("G_TEST_SRCDIR");
  g_autofree char *dir = g_build_filename(src, "io", "state-dict", NULL);
  g_autofree char *weights = g_build_filename(dir, "mlp-f32.safetensors", NULL);
  g_autofree char *input = g_build_filename(dir, "input.npy", NULL);
  g_autofree char *expected = g_build_filename(dir, "expected-f32.npy", NULL);
  g_autoptr(GError) error = NULL;
  loom_window_import_weights(window, weights, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(loom_command_stack_get_undo_label(loom_document_get_commands(doc())), ==, "Import Weights");

  loom_npy x = {0}, want = {0};
  g_assert_cmpint(loom_npy_read(input, &x, NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_npy_read(expected, &want, NULL), ==, LOOM_OK);
  loom_net *copy = loom_net_clone(loom_document_get_net(doc()), NULL);
  loom_diag *diags = NULL;
  loom_net_infer_shapes(copy, loom_net_seed(copy), &diags);
  free(diags);
  int64_t batch = loom_npy_numel(&x) / 4;
  g_autofree float *y = g_new(float, (gsize)batch * 3);
  loom_ctx ctx = {0};
  g_assert_cmpint(loom_net_forward(copy, &ctx, x.data, batch, y, NULL), ==, LOOM_OK);
  double scale = 0;
  for (int64_t i = 0; i < batch * 3; i++) scale = fmax(scale, fabs(want.data[i]));
  for (int64_t i = 0; i < batch * 3; i++) g_assert_cmpfloat(fabs(y[i] - want.data[i]), <=, 1e-5 * scale);
  loom_net_free(copy);
  loom_npy_clear(&x);
  loom_npy_clear(&want);

  activate("win.undo");
  g_autofree char *undone = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(undone, ==, before);

  /* fc1/fc2 names: no nn.Sequential order to follow; with the mapping it goes. */
  g_autofree char *named = g_build_filename(dir, "mlp-named.safetensors", NULL);
  g_autofree char *map = g_build_filename(dir, "mlp-named.map.json", NULL);
  g_autoptr(GError) refused = NULL;
  g_assert_false(loom_window_import_weights(window, named, NULL, &refused));
  g_test_message("refused: %s", refused->message);
  g_assert_nonnull(strstr(refused->message, "mapping"));
  g_autofree char *unchanged = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(unchanged, ==, before);
  g_autoptr(GError) mapped = NULL;
  g_assert_true(loom_window_import_weights(window, named, map, &mapped));
}

/* Closing the window while the worker trains cancels it and joins it. */

static gboolean state_settled(gpointer data) { return !loom_training_session_get_busy(session()); }

/* Training on a Vulkan device (lavapipe here): the device list offers it,
 * Step runs there and hands the weights back as ever, with the training
 * state (the device's optimizer state) for the document; switching devices
 * keeps the trainer and its state; a network the device cannot run is
 * refused with its slot named, and the CPU takes it again. */
static void test_device(void) {
  loom_gpu_device_info *devices = NULL;
  int n = 0;
  if (!loom_gpu_compiled() || loom_gpu_list_devices(&devices, &n, NULL) != LOOM_OK || n == 0) {
    free(devices);
    g_test_skip("no Vulkan device");
    return;
  }
  free(devices);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(pane()->device_dropdown)));
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) xor = loom_document_new_for_example("xor", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, xor);
  wait_state(LOOM_TRAINING_PAUSED, "the xor example");
  gtk_drop_down_set_selected(pane()->device_dropdown, 1); /* as the user picks it */
  gui_test_wait(state_settled, NULL, TIMEOUT_MS, "the trainer on the device");
  g_assert_cmpint(loom_training_session_get_state(session()), ==, LOOM_TRAINING_PAUSED);
  gint64 steps = doc_steps();
  g_autofree char *before = net_json(loom_document_get_net(doc()));
  activate("win.train-step");
  gui_test_wait(doc_steps_are, GSIZE_TO_POINTER(steps + 1), TIMEOUT_MS, "a step on the device");
  g_autofree char *after = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(before, !=, after);
  /* the optimizer's state came back with the weights, read from the device */
  g_assert_nonnull(loom_document_get_training(doc())->state);

  /* Back to the CPU and onto the device again: the same trainer goes on,
   * its optimizer's state moving with it (a new trainer counts from 0). */
  gint64 trainer_steps = loom_training_session_get_latest(session())->trainer_step;
  g_assert_cmpint(trainer_steps, >, 0);
  gtk_drop_down_set_selected(pane()->device_dropdown, 0);
  gui_test_wait(state_settled, NULL, TIMEOUT_MS, "the trainer back on the CPU");
  g_assert_cmpint(loom_training_session_get_latest(session())->trainer_step, ==, trainer_steps);
  activate("win.train-step");
  gui_test_wait(doc_steps_are, GSIZE_TO_POINTER(steps + 2), TIMEOUT_MS, "a step on the CPU");
  gtk_drop_down_set_selected(pane()->device_dropdown, 1);
  gui_test_wait(state_settled, NULL, TIMEOUT_MS, "the trainer on the device again");
  g_assert_cmpint(loom_training_session_get_latest(session())->trainer_step, ==, trainer_steps + 1);
  g_assert_cmpint(loom_training_session_get_state(session()), ==, LOOM_TRAINING_PAUSED);

  /* The multi-modal example's lstm does not run there: refused, naming the
   * slot. */
  g_autoptr(LoomDocument) lstm = loom_document_new_for_example("multi-modal", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, lstm);
  wait_state(LOOM_TRAINING_INVALID, "the refusal");
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(session());
  g_assert_nonnull(snap->message);
  g_test_message("refused: %s", snap->message);
  g_assert_nonnull(strstr(snap->message, "lstm at (0,0,0,0)"));
  g_assert_false(play_enabled());
  gtk_drop_down_set_selected(pane()->device_dropdown, 0);
  wait_state(LOOM_TRAINING_PAUSED, "the CPU to take the multi-modal network");
  g_assert_true(play_enabled());
}

static void add_cases(void) {
  g_test_add_func("/training/dna-live-heatmap", test_dna_live_heatmap);
  g_test_add_func("/training/dna-timeline", test_dna_timeline);
  g_test_add_func("/training/dna-shift-arrow", test_dna_shift_arrow);
  g_test_add_func("/training/export", test_export);
  g_test_add_func("/training/systolic", test_systolic);
  g_test_add_func("/training/systolic-train", test_systolic_train);
  g_test_add_func("/training/systolic-field", test_systolic_field);
  g_test_add_func("/training/execution-mode", test_execution_mode);
  g_test_add_func("/training/import-weights", test_import_weights);
  g_test_add_func("/training/device", test_device);
}

int main(int argc, char **argv) { return training_harness_run(argc, argv, add_cases); }
