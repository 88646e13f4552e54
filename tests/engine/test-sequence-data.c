/* Sequence datasets: running parity and next-character text windows. */
#include <glib.h>
#include <string.h>

#include "loom/dataset.h"
#include "loom/net.h"
#include "loom/settings.h"

static void test_parity(void) {
  loom_error err = {0};
  loom_dataset *ds = loom_gen_parity(50, 9, 3, &err);
  g_assert_nonnull(ds);
  g_assert_cmpint(ds->input_shape.rank, ==, 2);
  g_assert_cmpint(ds->input_shape.d[0], ==, 9);
  g_assert_cmpint(ds->input_shape.d[1], ==, 1);
  g_assert_cmpint(ds->target_width, ==, 9);
  g_assert_cmpint(ds->n_classes, ==, 2);
  int ones = 0;
  for (int64_t s = 0; s < ds->n; s++) {
    int p = 0;
    for (int t = 0; t < 9; t++) {
      float b = ds->inputs[s * 9 + t];
      g_assert_true(b == 0.0f || b == 1.0f);
      p ^= (int)b;
      ones += (int)b;
      g_assert_cmpint(ds->labels[s * 9 + t], ==, p);
    }
  }
  g_assert_cmpint(ones, >, 150); /* 450 fair bits: far from all zeros or ones */
  g_assert_cmpint(ones, <, 300);
  g_assert_cmpint(loom_dataset_validate(ds, &err), ==, LOOM_OK);
  loom_dataset *again = loom_gen_parity(50, 9, 3, &err);
  g_assert_cmpmem(ds->inputs, 450 * sizeof(float), again->inputs, 450 * sizeof(float));
  loom_dataset_free(again);
  loom_dataset_free(ds);
  g_assert_null(loom_gen_parity(5, 0, 1, &err));
  g_assert_cmpstr(err.message, ==, "parity: length is 0, expected 1 to 100000");
}

static void test_text(void) {
  loom_error err = {0};
  const char *text = "abcab\nba";
  loom_dataset *ds = loom_dataset_from_text(text, strlen(text), 3, 2, true, &err);
  g_assert_nonnull(ds);
  /* Vocabulary in byte order: '\n' a b c. Windows start at 0, 2, 4 (start 6 lacks a next byte). */
  g_assert_cmpint(ds->n_classes, ==, 4);
  g_assert_cmpint(ds->n, ==, 3);
  g_assert_cmpstr(ds->class_names[0], ==, "\\n");
  g_assert_cmpstr(ds->class_names[1], ==, "a");
  g_assert_cmpint(ds->input_shape.d[0], ==, 3);
  g_assert_cmpint(ds->input_shape.d[1], ==, 4);
  const char *vocab = "\nabc";
  for (int64_t s = 0; s < ds->n; s++)
    for (int t = 0; t < 3; t++) {
      char now = text[s * 2 + t], next = text[s * 2 + t + 1];
      int cls = (int)(strchr(vocab, now) - vocab);
      for (int v = 0; v < 4; v++) g_assert_cmpfloat(ds->inputs[(s * 3 + t) * 4 + v], ==, v == cls ? 1.0f : 0.0f);
      g_assert_cmpint(ds->labels[s * 3 + t], ==, (int)(strchr(vocab, next) - vocab));
    }
  loom_dataset_free(ds);
  ds = loom_dataset_from_text(text, strlen(text), 3, 1, false, &err);
  g_assert_cmpint(ds->input_shape.rank, ==, 1);
  g_assert_cmpint(ds->n, ==, 5);
  /* Window 4 is "b\nb": 'b' is class 2, '\n' class 0. */
  g_assert_cmpfloat(ds->inputs[4 * 3 + 0], ==, 2.0f);
  g_assert_cmpfloat(ds->inputs[4 * 3 + 1], ==, 0.0f);
  g_assert_cmpfloat(ds->inputs[4 * 3 + 2], ==, 2.0f);
  loom_dataset_free(ds);
  g_assert_null(loom_dataset_from_text("aaaa", 4, 2, 1, true, &err));
  g_assert_cmpstr(err.message, ==, "text: it uses only one distinct character; at least two are needed");
  g_assert_null(loom_dataset_from_text("abc", 3, 3, 1, true, &err));
  g_assert_cmpstr(err.message, ==, "text: 3 characters are too few for a window of 3 (at least 4 are needed)");
}

static void test_shipped_text(void) {
  loom_error err = {0};
  char *path = g_build_filename(g_getenv("LOOM_SOURCE_DIR"), "data", "datasets", "loom-tale.txt", NULL);
  loom_dataset *ds = loom_dataset_load_text(path, 32, 16, true, &err);
  g_assert_nonnull(ds);
  g_assert_cmpint(ds->n_classes, >, 20);
  g_assert_cmpint(ds->n_classes, <, 80);
  g_assert_cmpint(ds->n, >, 150);
  g_assert_cmpint(loom_dataset_validate(ds, &err), ==, LOOM_OK);
  loom_dataset_free(ds);
  g_free(path);
  g_assert_null(loom_dataset_load_text("/nonexistent/tale.txt", 8, 1, true, &err));
  g_assert_cmpstr(err.message, ==, "/nonexistent/tale.txt: cannot open the text file");
}

/* A network whose input is `in`: an lstm and a dense head. */
static loom_net *sequence_net(int64_t steps, int64_t features) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 1, 1, &err);
  g_assert_cmpint(loom_net_set_input_shape(net, &(loom_shape){2, {steps, features}}, &err), ==, LOOM_OK);
  loom_layer *l = loom_layer_new_by_name("lstm", &err);
  g_assert_cmpint(loom_layer_set_int(l, "input_size", features, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, l, &err), ==, LOOM_OK);
  return net;
}

/* data.source parity and text through the training settings (loom train --data, the workbench). */
static void test_settings_sources(void) {
  char *dir = g_build_filename(g_getenv("LOOM_SOURCE_DIR"), "data", "datasets", NULL);
  const struct {
    const char *source;
    int64_t steps, features;
  } cases[] = {{"parity", 6, 1}, {"text", 8, 42}};
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    loom_net *net = sequence_net(cases[c].steps, cases[c].features);
    loom_train_settings *s = loom_train_settings_new();
    loom_error err = {0};
    g_assert_cmpint(loom_train_settings_set_field(s, "data.source", cases[c].source, &err), ==, LOOM_OK);
    loom_dataset *tr = NULL, *te = NULL;
    if (loom_train_settings_make_data(s, net, dir, &tr, &te, &err)) g_error("%s: %s", cases[c].source, err.message);
    g_assert_cmpint(tr->input_shape.rank, ==, 2);
    g_assert_cmpint(tr->input_shape.d[0], ==, cases[c].steps);
    g_assert_cmpint(tr->input_shape.d[1], ==, cases[c].features);
    g_assert_cmpint(tr->target_width, ==, cases[c].steps);
    g_assert_cmpint(te->n, >, 0);
    loom_dataset_free(tr);
    loom_dataset_free(te);
    loom_train_settings_free(s);
    loom_net_free(net);
  }
  g_free(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sequence-data/parity", test_parity);
  g_test_add_func("/sequence-data/text", test_text);
  g_test_add_func("/sequence-data/shipped-text", test_shipped_text);
  g_test_add_func("/sequence-data/settings-sources", test_settings_sources);
  return g_test_run();
}
