/*
 * The CSV import dialog: presets from the file (header, delimiter, target,
 * kind), an import with chosen columns, errors that name the line and column
 * and import nothing, closing during an import, accessible names. With
 * LOOM_CSV_SCREENSHOT=FILE.png it only writes a picture of the dialog (of a
 * failed import when LOOM_CSV_SCREENSHOT_ERROR=1).
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "gui-test.h"
#include "loom-csv-dialog-private.h"

#define TIMEOUT_MS 20000

static char *tmp_dir;

typedef struct {
  int imported;
  int64_t n, input_numel, n_classes;
  float first_inputs[4];
  int32_t first_label;
  float first_target;
  loom_target_kind kind;
  loom_norm_kind normalize;
  int64_t features[4], n_features;
  loom_dataset *kept; /* taken from the signal */
} Imported;

static void on_imported(LoomCsvDialog *dialog, gpointer result, Imported *out) {
  (void)dialog;
  LoomCsvImport *r = result;
  out->imported++;
  const loom_dataset *ds = r->dataset;
  out->n = ds->n;
  out->input_numel = ds->input_numel;
  out->n_classes = ds->n_classes;
  for (int64_t i = 0; i < MIN(ds->input_numel, 4); i++) out->first_inputs[i] = ds->inputs[i];
  out->kind = ds->target_kind;
  if (ds->labels) out->first_label = ds->labels[0];
  if (ds->targets) out->first_target = ds->targets[0];
  out->normalize = r->normalize;
  out->n_features = r->options.n_features;
  g_assert_true(r->options.features == r->features);
  for (int64_t i = 0; i < MIN(r->options.n_features, 4); i++) out->features[i] = r->features[i];
  out->kept = r->dataset; /* taking ownership, as the header allows */
  r->dataset = NULL;
}

static char *write_csv(const char *name, const char *text) {
  char *path = g_build_filename(tmp_dir, name, NULL);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  return path;
}

static gboolean is_mapped(gpointer widget) { return gtk_widget_get_mapped(widget); }
static gboolean not_busy(gpointer dialog) { return !LOOM_CSV_DIALOG(dialog)->busy; }
static gboolean not_visible(gpointer widget) { return !gtk_widget_get_visible(widget); }

static LoomCsvDialog *open_dialog(const char *path, Imported *sink) {
  g_autoptr(GFile) file = g_file_new_for_path(path);
  LoomCsvDialog *dialog = loom_csv_dialog_new(NULL, file);
  g_object_ref_sink(dialog);
  g_signal_connect(dialog, "imported", G_CALLBACK(on_imported), sink);
  gtk_window_present(GTK_WINDOW(dialog));
  gui_test_wait(is_mapped, dialog, TIMEOUT_MS, "the CSV dialog to map");
  return dialog;
}

static void close_dialog(LoomCsvDialog *dialog) {
  gtk_window_destroy(GTK_WINDOW(dialog));
  g_object_unref(dialog);
}

static void import(LoomCsvDialog *dialog) {
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(dialog), "csv.import", NULL));
  g_assert_true(dialog->busy);
  gui_test_wait(not_busy, dialog, TIMEOUT_MS, "the import to finish");
}

static const char *target_name(LoomCsvDialog *dialog) {
  GListModel *model = adw_combo_row_get_model(dialog->target_row);
  return gtk_string_list_get_string(GTK_STRING_LIST(model), adw_combo_row_get_selected(dialog->target_row));
}

static void set_feature(LoomCsvDialog *dialog, guint col, gboolean on) {
  gtk_check_button_set_active(g_ptr_array_index(dialog->feature_checks, col), on);
}

/* ---- cases ------------------------------------------------------------------- */

static const char iris[] = "sepal,petal,width,species\n"
                           "5.1,3.5,1.4,setosa\n"
                           "4.9,3.0,1.3,setosa\n"
                           "6.3,3.3,6.0,virginica\n"
                           "5.8,2.7,5.1,virginica\n"
                           "5.7,2.8,4.1,versicolor\n";

static void test_good_import(void) {
  g_autofree char *path = write_csv("iris.csv", iris);
  Imported got = {0};
  LoomCsvDialog *dialog = open_dialog(path, &got);
  g_assert_true(gtk_switch_get_active(dialog->header_switch));
  g_assert_cmpuint(adw_combo_row_get_selected(dialog->delimiter_row), ==, 0);
  g_assert_cmpstr(target_name(dialog), ==, "species");
  g_assert_cmpuint(adw_combo_row_get_selected(dialog->kind_row), ==, 0); /* text → classification */
  g_assert_cmpuint(dialog->feature_checks->len, ==, 4);
  g_assert_false(gtk_widget_get_sensitive(g_ptr_array_index(dialog->feature_checks, 3)));
  g_assert_false(gtk_check_button_get_active(g_ptr_array_index(dialog->feature_checks, 3)));
  /* The preview: a header row and the five rows. */
  GtkWidget *cell = gtk_grid_get_child_at(dialog->preview_grid, 0, 1);
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(cell)), ==, "5.1");
  g_assert_nonnull(gtk_grid_get_child_at(dialog->preview_grid, 3, 5));
  g_assert_null(gtk_grid_get_child_at(dialog->preview_grid, 0, 6));

  set_feature(dialog, 1, FALSE); /* petal is not an input */
  adw_combo_row_set_selected(dialog->norm_row, 2);
  import(dialog);
  g_assert_cmpint(got.imported, ==, 1);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(dialog))); /* closed */
  g_assert_cmpint(got.n, ==, 5);
  g_assert_cmpint(got.input_numel, ==, 2);
  g_assert_cmpfloat(got.first_inputs[0], ==, 5.1f);
  g_assert_cmpfloat(got.first_inputs[1], ==, 1.4f);
  g_assert_cmpint(got.n_classes, ==, 3);
  g_assert_cmpint(got.first_label, ==, 0); /* setosa, sorted first */
  g_assert_cmpint(got.kind, ==, LOOM_TARGET_CLASS);
  g_assert_cmpint(got.normalize, ==, LOOM_NORM_ZSCORE);
  g_assert_cmpint(got.n_features, ==, 2);
  g_assert_cmpint(got.features[0], ==, 0);
  g_assert_cmpint(got.features[1], ==, 2);
  g_assert_nonnull(got.kept);
  loom_dataset_free(got.kept);
  close_dialog(dialog);
}

static void test_target_choice(void) {
  /* No header, semicolons, a real-valued last column: regression preset. */
  g_autofree char *path = write_csv("semi.csv", "1;2;0;0.25\n3;4;1;0.5\n5;6;1;0.75\n7;8;0;1.5\n");
  Imported got = {0};
  LoomCsvDialog *dialog = open_dialog(path, &got);
  g_assert_false(gtk_switch_get_active(dialog->header_switch));
  g_assert_cmpuint(adw_combo_row_get_selected(dialog->delimiter_row), ==, 1);
  g_assert_cmpstr(target_name(dialog), ==, "Column 4");
  g_assert_cmpuint(adw_combo_row_get_selected(dialog->kind_row), ==, 1);
  /* Column 3 (few distinct integers) as the target: classification, and
   * column 4 becomes a feature again. */
  adw_combo_row_set_selected(dialog->target_row, 2);
  g_assert_cmpuint(adw_combo_row_get_selected(dialog->kind_row), ==, 0);
  g_assert_true(gtk_check_button_get_active(g_ptr_array_index(dialog->feature_checks, 3)));
  g_assert_false(gtk_check_button_get_active(g_ptr_array_index(dialog->feature_checks, 2)));
  import(dialog);
  g_assert_cmpint(got.imported, ==, 1);
  g_assert_cmpint(got.n, ==, 4);
  g_assert_cmpint(got.input_numel, ==, 3);
  g_assert_cmpfloat(got.first_inputs[2], ==, 0.25f);
  g_assert_cmpint(got.n_classes, ==, 2);
  loom_dataset_free(got.kept);
  close_dialog(dialog);
}

static void test_header_switch(void) {
  g_autofree char *path = write_csv("iris-header.csv", iris);
  Imported got = {0};
  LoomCsvDialog *dialog = open_dialog(path, &got);
  g_assert_true(gtk_switch_get_active(dialog->header_switch));
  /* Turned off, the names row becomes data: generic names, six rows. */
  gtk_switch_set_active(dialog->header_switch, FALSE);
  g_assert_cmpstr(target_name(dialog), ==, "Column 4");
  g_assert_cmpint(dialog->preview.n_rows, ==, 6);
  GtkWidget *cell = gtk_grid_get_child_at(dialog->preview_grid, 0, 1);
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(cell)), ==, "sepal");
  /* Importing now fails on the names row, naming line 1 and the column. */
  import(dialog);
  g_assert_cmpint(got.imported, ==, 0);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(dialog->error_label)));
  g_assert_nonnull(strstr(gtk_label_get_text(dialog->error_label), ":1: column 1: 'sepal' is not a finite number"));
  /* Back on: the error goes, the names come back. */
  gtk_switch_set_active(dialog->header_switch, TRUE);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(dialog->error_label)));
  g_assert_cmpstr(target_name(dialog), ==, "species");
  close_dialog(dialog);
}

static void expect_error(const char *name, const char *text, const char *message) {
  g_autofree char *path = write_csv(name, text);
  Imported got = {0};
  LoomCsvDialog *dialog = open_dialog(path, &got);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(dialog->error_label)));
  import(dialog);
  g_assert_cmpint(got.imported, ==, 0);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(dialog)));
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(dialog->error_label)));
  g_autofree char *expect = g_strdup_printf("%s%s", path, message);
  g_assert_cmpstr(gtk_label_get_text(dialog->error_label), ==, expect);
  g_assert_true(gtk_widget_is_sensitive(dialog->options_box));
  close_dialog(dialog);
}

static void test_errors(void) {
  expect_error("bad-line.csv", "a,b,c\n1,2,0\n3,\"4,1\n5,6,1\n",
               ":3: column 2: unterminated quoted field, expected a closing '\"' before the end of the line");
  expect_error("columns.csv", "a,b,c\n1,2,0\n3,4\n", ":3: 2 fields, expected 3 like line 1");
  expect_error("word.csv", "a,b,c\n1,2,0\n3,x,1\n", ":3: column 2 ('b'): 'x' is not a finite number");
  expect_error("one-class.csv", "a,b,label\n1,2,cat\n3,4,cat\n",
               ": column 3 ('label'): every row has the class 'cat'; classification needs at least two classes");
}

static void test_fix_after_error(void) {
  /* The error stays until a choice fixes it: dropping the bad column imports. */
  g_autofree char *path = write_csv("fixable.csv", "a,b,c\n1,2,0\n3,x,1\n");
  Imported got = {0};
  LoomCsvDialog *dialog = open_dialog(path, &got);
  import(dialog);
  g_assert_cmpint(got.imported, ==, 0);
  set_feature(dialog, 1, FALSE);
  import(dialog);
  g_assert_cmpint(got.imported, ==, 1);
  g_assert_cmpint(got.input_numel, ==, 1);
  g_assert_cmpfloat(got.first_inputs[0], ==, 1.0f);
  loom_dataset_free(got.kept);
  close_dialog(dialog);
}

static void test_no_features_no_import(void) {
  g_autofree char *path = write_csv("two.csv", "a,b\n1,0\n2,1\n");
  Imported got = {0};
  LoomCsvDialog *dialog = open_dialog(path, &got);
  set_feature(dialog, 0, FALSE);
  gtk_widget_activate_action(GTK_WIDGET(dialog), "csv.import", NULL); /* disabled: nothing starts */
  g_assert_false(dialog->busy);
  set_feature(dialog, 0, TRUE);
  import(dialog);
  g_assert_cmpint(got.imported, ==, 1);
  loom_dataset_free(got.kept);
  close_dialog(dialog);
}

static void test_unreadable(void) {
  g_autofree char *path = g_build_filename(tmp_dir, "missing.csv", NULL);
  Imported got = {0};
  LoomCsvDialog *dialog = open_dialog(path, &got);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(dialog->error_label)));
  g_assert_nonnull(strstr(gtk_label_get_text(dialog->error_label), "cannot open"));
  gtk_widget_activate_action(GTK_WIDGET(dialog), "csv.import", NULL);
  g_assert_false(dialog->busy);
  close_dialog(dialog);
}

static void test_close_cancels(void) {
  /* Big enough that the load is still running when the dialog closes. */
  GString *text = g_string_new("x,y,label\n");
  for (int i = 0; i < 200000; i++) g_string_append_printf(text, "%d.25,%d.5,%d\n", i, i % 7, i % 3);
  g_autofree char *path = write_csv("big.csv", text->str);
  g_string_free(text, TRUE);
  Imported got = {0};
  LoomCsvDialog *dialog = open_dialog(path, &got);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(dialog), "csv.import", NULL));
  g_assert_true(dialog->busy);
  gtk_window_close(GTK_WINDOW(dialog));
  gui_test_wait(not_visible, dialog, TIMEOUT_MS, "the dialog to close");
  gui_test_spin(1500); /* long enough for the load to finish and report */
  g_assert_cmpint(got.imported, ==, 0);
  g_object_unref(dialog);
}

/* Every control carries an accessible name (GTK_A11Y=test keeps them). */
static int count_unnamed(GtkWidget *w, int *checked) {
  if (!gtk_widget_get_visible(w)) return 0;
  gboolean needs = GTK_IS_BUTTON(w) || GTK_IS_SWITCH(w) || GTK_IS_CHECK_BUTTON(w) || GTK_IS_DROP_DOWN(w) ||
                   (GTK_IS_LIST_BOX_ROW(w) && gtk_list_box_row_get_activatable(GTK_LIST_BOX_ROW(w)));
  int missing = 0;
  if (needs) {
    ++*checked;
    if (!gtk_test_accessible_has_property(GTK_ACCESSIBLE(w), GTK_ACCESSIBLE_PROPERTY_LABEL)) {
      g_test_message("unnamed: %s", G_OBJECT_TYPE_NAME(w));
      missing++;
    }
    if (!GTK_IS_LIST_BOX_ROW(w)) return missing; /* the insides of a composite are GTK's */
  }
  for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
    missing += count_unnamed(c, checked);
  return missing;
}

static void test_accessible_names(void) {
  g_autofree char *path = write_csv("names.csv", iris);
  Imported got = {0};
  LoomCsvDialog *dialog = open_dialog(path, &got);
  int checked = 0;
  g_assert_cmpint(count_unnamed(GTK_WIDGET(dialog), &checked), ==, 0);
  g_assert_cmpint(checked, >=, 12); /* 2 buttons, switch, 4 rows, 4 checks, header row */
  close_dialog(dialog);
}

/* The dialog as a user meets it; with `failed`, after an import that failed. */
static void screenshot(const char *out, gboolean failed) {
  g_autofree char *path = write_csv("shot.csv", failed ? "sepal,petal,width,species\n5.1,3.5,1.4,setosa\n"
                                                         "4.9,3..0,1.3,setosa\n6.3,3.3,6.0,virginica\n"
                                                       : iris);
  Imported got = {0};
  LoomCsvDialog *dialog = open_dialog(path, &got);
  set_feature(dialog, 1, FALSE);
  if (failed) {
    set_feature(dialog, 1, TRUE);
    import(dialog);
  }
  gui_test_spin(700);
  int w = gtk_widget_get_width(GTK_WIDGET(dialog)), h = gtk_widget_get_height(GTK_WIDGET(dialog));
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new(GTK_WIDGET(dialog));
  GtkSnapshot *snapshot = gtk_snapshot_new();
  gdk_paintable_snapshot(paintable, snapshot, w, h);
  g_autoptr(GskRenderNode) node = gtk_snapshot_free_to_node(snapshot);
  GskRenderer *renderer = gtk_native_get_renderer(GTK_NATIVE(dialog));
  g_autoptr(GdkTexture) texture = gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, w, h));
  g_assert_true(gdk_texture_save_to_png(texture, out));
  close_dialog(dialog);
}

static void remove_tmp_dir(void) {
  GDir *d = g_dir_open(tmp_dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name(d))) {
    g_autofree char *p = g_build_filename(tmp_dir, name, NULL);
    g_remove(p);
  }
  g_dir_close(d);
  g_rmdir(tmp_dir);
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);
  adw_init();
  tmp_dir = g_dir_make_tmp("loom-csv-dialog-XXXXXX", NULL);
  g_assert_nonnull(tmp_dir);
  const char *shot = g_getenv("LOOM_CSV_SCREENSHOT");
  if (shot) {
    screenshot(shot, g_strcmp0(g_getenv("LOOM_CSV_SCREENSHOT_ERROR"), "1") == 0);
    remove_tmp_dir();
    return 0;
  }
  g_test_add_func("/csv-dialog/good-import", test_good_import);
  g_test_add_func("/csv-dialog/target-choice", test_target_choice);
  g_test_add_func("/csv-dialog/header-switch", test_header_switch);
  g_test_add_func("/csv-dialog/errors", test_errors);
  g_test_add_func("/csv-dialog/fix-after-error", test_fix_after_error);
  g_test_add_func("/csv-dialog/no-features", test_no_features_no_import);
  g_test_add_func("/csv-dialog/unreadable", test_unreadable);
  g_test_add_func("/csv-dialog/close-cancels", test_close_cancels);
  if (g_strcmp0(g_getenv("GTK_A11Y"), "test") == 0)
    g_test_add_func("/csv-dialog/accessible-names", test_accessible_names);
  int rc = g_test_run();
  remove_tmp_dir();
  g_free(tmp_dir);
  return rc;
}
