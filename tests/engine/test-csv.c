/* CSV import beyond the basics of test-dataset.c: chosen feature columns,
 * the single-class check, delimiter detection and the preview API. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "loom/loom.h"

static char *tmp_dir;

static char *tmp_file(const char *name, const char *contents) {
  char *path = g_build_filename(tmp_dir, name, NULL);
  g_assert_true(g_file_set_contents(path, contents, -1, NULL));
  return path;
}

static loom_dataset *load_ok(const char *path, const loom_csv_options *o) {
  loom_error err = {0};
  loom_dataset *ds = loom_dataset_load_csv(path, o, &err);
  if (!ds) g_error("%s", err.message);
  return ds;
}

static void expect_error(const char *name, const char *contents, const loom_csv_options *o, loom_status code,
                         const char *message_after_path) {
  g_autofree char *path = tmp_file(name, contents);
  loom_error err = {0};
  loom_dataset *ds = loom_dataset_load_csv(path, o, &err);
  if (ds) g_error("%s: loaded, expected an error", name);
  g_autofree char *expect = g_strdup_printf("%s%s", path, message_after_path);
  g_assert_cmpstr(err.message, ==, expect);
  g_assert_cmpint(err.code, ==, code);
}

/* ---- feature columns ------------------------------------------------------ */

static void test_features(void) {
  /* Column 1 holds text and is not a feature: it is never parsed. */
  g_autofree char *path = tmp_file("features.csv", "a,name,b,c,kind\n1,x,2,3,cat\n4,y,5,6,dog\n7,z,8,9,cat\n");
  loom_csv_options o = loom_csv_options_default();
  const int64_t features[] = {3, 0};
  o.features = features;
  o.n_features = 2;
  loom_dataset *ds = load_ok(path, &o);
  g_assert_cmpint(ds->n, ==, 3);
  g_assert_cmpint(ds->input_numel, ==, 2);
  g_assert_cmpint(ds->input_shape.d[0], ==, 2);
  const float in[6] = {3, 1, 6, 4, 9, 7}; /* in the order given: c, then a */
  g_assert_cmpmem(ds->inputs, sizeof in, in, sizeof in);
  g_assert_cmpint(ds->n_classes, ==, 2);
  g_assert_cmpstr(ds->class_names[1], ==, "dog");
  g_assert_cmpint(ds->labels[1], ==, 1);
  loom_dataset_free(ds);

  /* Regression on column 2 from column 3; column 4 (text) is ignored too. */
  o = loom_csv_options_default();
  o.label_index = 2;
  o.target = LOOM_TARGET_VECTOR;
  const int64_t one[] = {3};
  o.features = one;
  o.n_features = 1;
  ds = load_ok(path, &o);
  g_assert_cmpint(ds->input_numel, ==, 1);
  g_assert_cmpfloat(ds->inputs[2], ==, 9.0f);
  g_assert_cmpfloat(ds->targets[1], ==, 5.0f);
  loom_dataset_free(ds);

  /* NULL features with a non-zero count keeps the default of all columns. */
  o = loom_csv_options_default();
  o.n_features = 0;
  o.features = features;
  g_autofree char *plain = tmp_file("plain.csv", "1,2,0\n3,4,1\n");
  ds = load_ok(plain, &o);
  g_assert_cmpint(ds->input_numel, ==, 2);
  loom_dataset_free(ds);
}

static void test_feature_errors(void) {
  const char *text = "a,b,c\n1,2,0\n3,4,1\n";
  loom_csv_options o = loom_csv_options_default();
  const int64_t out_of_range[] = {0, 3};
  o.features = out_of_range;
  o.n_features = 2;
  expect_error("range.csv", text, &o, LOOM_ERR_RANGE,
               ": feature column index 3 is out of range: expected 0 to 2 (the file has 3 columns)");
  const int64_t negative[] = {-1};
  o.features = negative;
  o.n_features = 1;
  expect_error("negative.csv", text, &o, LOOM_ERR_RANGE,
               ": feature column index -1 is out of range: expected 0 to 2 (the file has 3 columns)");
  const int64_t target[] = {0, 2};
  o.features = target;
  o.n_features = 2;
  expect_error("target.csv", text, &o, LOOM_ERR_INVALID,
               ": column 3 ('c') is the label column; it cannot be a feature too");
  expect_error("target-noheader.csv", "1,2,0\n3,4,1\n", &o, LOOM_ERR_INVALID,
               ": column 3 is the label column; it cannot be a feature too");
  const int64_t twice[] = {1, 1};
  o.features = twice;
  expect_error("twice.csv", text, &o, LOOM_ERR_INVALID, ": column 2 is listed twice as a feature");
  o.features = NULL;
  o.n_features = -2;
  expect_error("count.csv", text, &o, LOOM_ERR_INVALID, ": -2 feature columns given without their indices");
  const int64_t many[] = {0, 1, 0, 1};
  o.features = many;
  o.n_features = 4;
  expect_error("many.csv", text, &o, LOOM_ERR_RANGE, ": 4 feature columns listed but the file has 3 columns");

  /* A bad cell in a feature column is named; the same cell elsewhere is not read. */
  const int64_t first[] = {0};
  o.features = first;
  o.n_features = 1;
  expect_error("cell.csv", "a,b,c\n1,2,0\nx,y,1\n", &o, LOOM_ERR_FORMAT,
               ":3: column 1 ('a'): 'x' is not a finite number");
  g_autofree char *ok = tmp_file("cell-ok.csv", "a,b,c\n1,2,0\n3,y,1\n");
  loom_dataset *ds = load_ok(ok, &o);
  g_assert_cmpfloat(ds->inputs[1], ==, 3.0f);
  loom_dataset_free(ds);
}

/* ---- other errors ------------------------------------------------------------ */

static void test_errors(void) {
  expect_error("one-class.csv", "a,b,species\n1,2,setosa\n3,4,setosa\n", NULL, LOOM_ERR_FORMAT,
               ": column 3 ('species'): every row has the class 'setosa'; classification needs at least two "
               "classes");
  expect_error("one-class-int.csv", "1,2,1\n3,4,1\n", NULL, LOOM_ERR_FORMAT,
               ": column 3: every row has the class '1'; classification needs at least two classes");
  /* Regression has no classes to count. */
  loom_csv_options o = loom_csv_options_default();
  o.target = LOOM_TARGET_VECTOR;
  g_autofree char *constant = tmp_file("constant.csv", "1,2,1\n3,4,1\n");
  loom_dataset *ds = load_ok(constant, &o);
  g_assert_cmpint(ds->n, ==, 2);
  loom_dataset_free(ds);

  expect_error("after-quote.csv", "a,b,c\n1,\"2\"x,0\n", NULL, LOOM_ERR_FORMAT,
               ":2: column 2: text after a closing quote, expected the delimiter or the end of the line");
  expect_error("unbalanced.csv", "a,b,c\n1,2,0\n3,4,\"1\n", NULL, LOOM_ERR_FORMAT,
               ":3: column 3: unterminated quoted field, expected a closing '\"' before the end of the line");
  o = loom_csv_options_default();
  o.delimiter = 0; /* detected: ';' splits most fields on the first line */
  expect_error("columns.csv", "a;b;c\n1;2;0\n3;4\n", &o, LOOM_ERR_FORMAT, ":3: 2 fields, expected 3 like line 1");
  expect_error("empty.csv", "", NULL, LOOM_ERR_FORMAT, ": empty file (no rows)");
  o = loom_csv_options_default();
  o.delimiter = '"';
  expect_error("quote-delim.csv", "1,2\n", &o, LOOM_ERR_INVALID, ": '\"' cannot be a delimiter");
}

/* ---- delimiters ------------------------------------------------------------- */

static void test_delimiters(void) {
  loom_csv_options o = loom_csv_options_default();
  o.delimiter = 0;
  /* Semicolons with decimal-comma text in a non-feature column: ';' wins
   * although ',' also splits every line. */
  g_autofree char *semi = tmp_file("semi.csv", "x;y;note;label\n1;2;\"3,5\";0\n3;4;\"1,25\";1\n");
  const int64_t xy[] = {0, 1};
  o.features = xy;
  o.n_features = 2;
  loom_dataset *ds = load_ok(semi, &o);
  const float in[4] = {1, 2, 3, 4};
  g_assert_cmpmem(ds->inputs, sizeof in, in, sizeof in);
  loom_dataset_free(ds);
  o.features = NULL;
  o.n_features = 0;

  g_autofree char *tabs = tmp_file("tabs.tsv", "a\tb\tc\n1.5\t2\t0\n3\t\t1\n");
  loom_error err = {0};
  g_assert_null(loom_dataset_load_csv(tabs, &o, &err)); /* the empty field stays a field */
  g_autofree char *expect = g_strdup_printf("%s:3: column 2 ('b'): '' is not a finite number", tabs);
  g_assert_cmpstr(err.message, ==, expect);

  /* Commas with a quoted field holding a semicolon on one line only. */
  g_autofree char *commas = tmp_file("commas.csv", "a,b,c\n1,2,0\n\"x;y\",4,1\n5,6,1\n");
  loom_csv_preview p;
  g_assert_cmpint(loom_csv_preview_read(commas, &o, 10, &p, &err), ==, 0);
  g_assert_cmpint(p.delimiter, ==, ',');
  g_assert_cmpint(p.n_columns, ==, 3);
  loom_csv_preview_clear(&p);

  /* Nothing is steady: the most fields on the first line wins. */
  g_autofree char *ragged = tmp_file("ragged.csv", "1;2;3;4\n1;2\n");
  g_assert_cmpint(loom_csv_preview_read(ragged, &o, 10, &p, &err), ==, 0);
  g_assert_cmpint(p.delimiter, ==, ';');
  g_assert_cmpint(p.n_columns, ==, 4);
  g_assert_null(p.cells[1 * 4 + 2]); /* a missing cell */
  g_assert_cmpstr(p.cells[1 * 4 + 1], ==, "2");
  loom_csv_preview_clear(&p);

  /* One column: nothing splits, ',' is assumed. */
  g_autofree char *single = tmp_file("single.csv", "a\n1\n");
  g_assert_cmpint(loom_csv_preview_read(single, &o, 10, &p, &err), ==, 0);
  g_assert_cmpint(p.delimiter, ==, ',');
  g_assert_cmpint(p.n_columns, ==, 1);
  loom_csv_preview_clear(&p);
}

/* ---- preview ------------------------------------------------------------------ */

static void test_preview(void) {
  GString *text = g_string_new("sepal,petal,species\n");
  for (int i = 0; i < 30; i++) g_string_append_printf(text, "%d.5,%d,%s\n", i, i % 3, i % 2 ? "a" : "b");
  g_autofree char *path = tmp_file("preview.csv", text->str);
  g_string_free(text, TRUE);
  loom_csv_options o = loom_csv_options_default();
  loom_csv_preview p;
  loom_error err = {0};
  g_assert_cmpint(loom_csv_preview_read(path, &o, 20, &p, &err), ==, 0);
  g_assert_cmpint(p.n_rows, ==, 20);
  g_assert_cmpint(p.n_columns, ==, 3);
  g_assert_true(p.header_detected);
  g_assert_nonnull(p.header);
  g_assert_cmpstr(p.header[2], ==, "species");
  g_assert_cmpstr(p.cells[0], ==, "0.5");
  g_assert_cmpstr(p.cells[19 * 3 + 2], ==, "a");
  g_assert_true(p.numeric[0]);
  g_assert_true(p.numeric[1]);
  g_assert_false(p.numeric[2]);
  g_assert_cmpint(p.distinct[0], ==, 20);
  g_assert_cmpint(p.distinct[1], ==, 3);
  g_assert_cmpint(p.distinct[2], ==, 2);
  loom_csv_preview_clear(&p);
  g_assert_null(p.cells);

  /* Header forced off: the names row becomes data, detection still says yes. */
  o.header = LOOM_CSV_HEADER_NO;
  g_assert_cmpint(loom_csv_preview_read(path, &o, 5, &p, &err), ==, 0);
  g_assert_true(p.header_detected);
  g_assert_null(p.header);
  g_assert_cmpint(p.n_rows, ==, 5);
  g_assert_cmpstr(p.cells[0], ==, "sepal");
  g_assert_false(p.numeric[0]);
  loom_csv_preview_clear(&p);

  /* No header in the file; fewer rows than asked for. */
  g_autofree char *plain = tmp_file("preview-plain.csv", "1,2\n3,4\n");
  o = loom_csv_options_default();
  g_assert_cmpint(loom_csv_preview_read(plain, &o, 20, &p, &err), ==, 0);
  g_assert_false(p.header_detected);
  g_assert_null(p.header);
  g_assert_cmpint(p.n_rows, ==, 2);
  loom_csv_preview_clear(&p);
}

static void test_preview_reads_only_the_head(void) {
  /* Good rows, then a line the loader rejects as too long: the preview of
   * the first rows never reaches it. */
  size_t huge = ((size_t)1 << 21);
  GString *text = g_string_new("a,b,c\n1,2,0\n3,4,1\n5,6,0\n");
  g_string_append_c(text, '"');
  for (size_t i = 0; i < huge; i++) g_string_append_c(text, '7');
  g_string_append(text, "\n");
  g_autofree char *path = tmp_file("long-tail.csv", text->str);
  g_string_free(text, TRUE);
  loom_csv_preview p;
  loom_error err = {0};
  g_assert_cmpint(loom_csv_preview_read(path, NULL, 3, &p, &err), ==, 0);
  g_assert_cmpint(p.n_rows, ==, 3);
  g_assert_cmpstr(p.cells[2 * 3 + 1], ==, "6");
  loom_csv_preview_clear(&p);
  g_assert_null(loom_dataset_load_csv(path, NULL, &err));
  g_assert_nonnull(strstr(err.message, ":5: line longer than 1048576 bytes"));
  /* Asking for one more row reaches the long line. */
  g_assert_cmpint(loom_csv_preview_read(path, NULL, 4, &p, &err), ==, LOOM_ERR_FORMAT);
  g_assert_nonnull(strstr(err.message, ":5: line longer than 1048576 bytes"));
  g_assert_null(p.cells);
}

static void test_preview_lenient_and_errors(void) {
  /* A broken quote shows in the preview; the loader names its line and column. */
  g_autofree char *path = tmp_file("broken.csv", "a,b,c\n1,\"2,0\n3,\"4\"x,1\n");
  loom_csv_preview p;
  loom_error err = {0};
  g_assert_cmpint(loom_csv_preview_read(path, NULL, 20, &p, &err), ==, 0);
  g_assert_cmpint(p.n_rows, ==, 2);
  g_assert_cmpint(p.n_columns, ==, 3);
  g_assert_cmpstr(p.cells[1], ==, "2,0");
  g_assert_null(p.cells[2]);
  g_assert_cmpstr(p.cells[3 + 1], ==, "4");
  g_assert_cmpstr(p.cells[3 + 2], ==, "1");
  loom_csv_preview_clear(&p);

  g_autofree char *empty = tmp_file("preview-empty.csv", "\n\n");
  g_assert_cmpint(loom_csv_preview_read(empty, NULL, 20, &p, &err), ==, LOOM_ERR_FORMAT);
  g_autofree char *expect = g_strdup_printf("%s: empty file (no rows)", empty);
  g_assert_cmpstr(err.message, ==, expect);
  g_assert_cmpint(loom_csv_preview_read(path, NULL, 0, &p, &err), ==, LOOM_ERR_RANGE);
  g_assert_nonnull(strstr(err.message, "preview of 0 rows, expected 1 to 100000"));
  g_autofree char *missing = g_build_filename(tmp_dir, "missing.csv", NULL);
  g_assert_cmpint(loom_csv_preview_read(missing, NULL, 20, &p, &err), ==, LOOM_ERR_IO);
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
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-csv-XXXXXX", NULL);
  g_assert_nonnull(tmp_dir);
  g_test_add_func("/train/csv/features", test_features);
  g_test_add_func("/train/csv/feature-errors", test_feature_errors);
  g_test_add_func("/train/csv/errors", test_errors);
  g_test_add_func("/train/csv/delimiters", test_delimiters);
  g_test_add_func("/train/csv/preview", test_preview);
  g_test_add_func("/train/csv/preview-head", test_preview_reads_only_the_head);
  g_test_add_func("/train/csv/preview-lenient", test_preview_lenient_and_errors);
  int rc = g_test_run();
  remove_tmp_dir();
  g_free(tmp_dir);
  return rc;
}
