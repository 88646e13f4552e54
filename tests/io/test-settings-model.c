/*
 * Training settings at work: the data sets they make equal, byte for byte,
 * those `loom train --data NAME` made before settings existed (the calls
 * below are that code); every example's settings fit the example and make
 * it learn; relative CSV paths; and the model file's "training" section,
 * round trip and hostile.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"

static char *tmp_dir;

static char *datasets_dir(void) {
  return g_build_filename(g_getenv("LOOM_SOURCE_DIR") ? g_getenv("LOOM_SOURCE_DIR") : ".", "data", "datasets", NULL);
}

static loom_net *example(const char *name) {
  loom_net *net = NULL;
  loom_error err = {0};
  if (loom_example_build(name, &net, &err)) g_error("%s", err.message);
  return net;
}

/* cli/cli-data.c before training settings: the generator calls and the split. */
static void old_cli_data(const char *name, const loom_net *net, uint64_t seed, loom_dataset **train,
                         loom_dataset **test) {
  loom_shape in = loom_net_input_shape(net), out = loom_net_output_shape(net);
  int64_t numel = loom_shape_numel(&in), classes = loom_shape_numel(&out);
  loom_dataset *all = NULL;
  if (strcmp(name, "spiral") == 0) all = loom_gen_spiral(200, 2, 0.02, seed, NULL);
  else if (strcmp(name, "xor") == 0) all = loom_gen_xor(400, 0.02, seed, NULL);
  else if (strcmp(name, "circles") == 0) all = loom_gen_circles(400, 0.5, 0.05, seed, NULL);
  else if (strcmp(name, "clusters") == 0) all = loom_gen_clusters(400, classes >= 2 ? classes : 2, numel, 0.2, seed, NULL);
  else if (strcmp(name, "sine") == 0) all = loom_gen_sine(400, numel, 0.01, seed, NULL);
  else if (strcmp(name, "copy") == 0) all = loom_gen_copy(400, 4, 6, 0.0, seed, NULL);
  else if (strcmp(name, "digits") == 0) {
    char *dir = datasets_dir(), *path = g_build_filename(dir, "optdigits-8x8.csv.gz", NULL);
    all = loom_dataset_load_digits(path, in.rank == 3, NULL);
    g_free(path);
    g_free(dir);
  }
  g_assert_nonnull(all);
  if (loom_shape_numel(&in) == all->input_numel && !loom_shape_equal(&in, &all->input_shape))
    loom_dataset_reshape_inputs(all, &in, NULL);
  g_assert_cmpint(loom_dataset_split(all, 0.2, seed, train, test, NULL), ==, 0);
  loom_dataset_free(all);
}

static void assert_same_data(const loom_dataset *a, const loom_dataset *b) {
  g_assert_cmpint(a->n, ==, b->n);
  g_assert_true(loom_shape_equal(&a->input_shape, &b->input_shape));
  g_assert_cmpint(a->target_kind, ==, b->target_kind);
  g_assert_cmpint(a->target_width, ==, b->target_width);
  g_assert_cmpint(a->n_classes, ==, b->n_classes);
  g_assert_cmpmem(a->inputs, (gsize)(a->n * a->input_numel) * sizeof(float), b->inputs,
                  (gsize)(b->n * b->input_numel) * sizeof(float));
  if (a->labels)
    g_assert_cmpmem(a->labels, (gsize)(a->n * a->target_width) * 4, b->labels, (gsize)(b->n * b->target_width) * 4);
  else
    g_assert_cmpmem(a->targets, (gsize)(a->n * a->target_width) * 4, b->targets, (gsize)(b->n * b->target_width) * 4);
}

static void test_make_data_as_before(void) {
  static const struct {
    const char *source, *net;
  } cases[] = {{"spiral", "spiral"}, {"xor", "spiral"}, {"circles", "xor"}, {"clusters", "hop"},
               {"sine", "hop"},      {"copy", "xor"},     {"digits", "cnn"}};
  char *dir = datasets_dir();
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    loom_net *net = example(cases[c].net);
    for (uint64_t seed = 1; seed <= 5; seed += 4) {
      loom_train_settings *s = loom_train_settings_new();
      loom_error err = {0};
      g_assert_cmpint(loom_train_settings_set_field(s, "data.source", cases[c].source, &err), ==, 0);
      s->data.seed = seed;
      loom_dataset *tr, *te, *otr, *ote;
      if (loom_train_settings_make_data(s, net, dir, &tr, &te, &err)) g_error("%s: %s", cases[c].source, err.message);
      old_cli_data(cases[c].source, net, seed, &otr, &ote);
      assert_same_data(tr, otr);
      assert_same_data(te, ote);
      loom_dataset_free(tr);
      loom_dataset_free(te);
      loom_dataset_free(otr);
      loom_dataset_free(ote);
      loom_train_settings_free(s);
    }
    loom_net_free(net);
  }
  g_free(dir);
}

static void test_make_data_knobs(void) {
  loom_net *net = example("spiral");
  loom_train_settings *s = loom_train_settings_new();
  loom_error err = {0};
  loom_dataset *tr, *te;
  /* spiral: samples count every arm; classes 0 fits the network's 2 outputs */
  g_assert_cmpint(loom_train_settings_set_field(s, "data.samples", "100", &err), ==, 0);
  g_assert_cmpint(loom_train_settings_set_field(s, "data.test_fraction", "0.5", &err), ==, 0);
  g_assert_cmpint(loom_train_settings_set_field(s, "data.normalize", "zscore", &err), ==, 0);
  g_assert_cmpint(loom_train_settings_make_data(s, net, NULL, &tr, &te, &err), ==, 0);
  g_assert_cmpint(tr->n, ==, 50);
  g_assert_cmpint(te->n, ==, 50);
  g_assert_cmpint(tr->n_classes, ==, 2);
  double mean = 0;
  for (int64_t i = 0; i < tr->n; i++) mean += tr->inputs[i * 2];
  g_assert_cmpfloat(fabs(mean / (double)tr->n), <, 1e-6); /* fitted on the train split */
  loom_dataset_free(tr);
  loom_dataset_free(te);
  g_assert_cmpint(loom_train_settings_set_field(s, "data.samples", "101", &err), ==, 0);
  g_assert_cmpint(loom_train_settings_make_data(s, net, NULL, &tr, &te, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "data.samples: 101 samples do not split evenly into 2 spiral arms");
  g_assert_null(tr);
  g_assert_cmpint(loom_train_settings_set_field(s, "data.source", "digits", &err), ==, 0);
  g_assert_cmpint(loom_train_settings_make_data(s, net, NULL, &tr, &te, &err), ==, LOOM_ERR_IO);
  g_assert_cmpstr(err.message, ==, "data.source: the digits data set needs the directory holding optdigits-8x8.csv.gz");
  loom_train_settings_free(s);
  loom_net_free(net);
}

/* A relative CSV path is relative to the settings (or model) file, not to the current directory. */
static void test_relative_csv(void) {
  char *sub = g_build_filename(tmp_dir, "sub", NULL), *csv = g_build_filename(sub, "d.csv", NULL);
  char *cfg = g_build_filename(tmp_dir, "c.json", NULL);
  g_assert_cmpint(g_mkdir_with_parents(sub, 0700), ==, 0);
  GString *rows = g_string_new("a,b,label\n");
  for (int i = 0; i < 20; i++) g_string_append_printf(rows, "%d,%d,%d\n", i, 20 - i, i % 2);
  g_assert_true(g_file_set_contents(csv, rows->str, -1, NULL));
  g_string_free(rows, TRUE);
  g_assert_true(g_file_set_contents(
    cfg, "{\"format\": \"loom-train-settings\", \"version\": 1, \"data\": {\"source\": \"csv\", \"csv\": {\"path\": "
         "\"sub/d.csv\"}}}",
    -1, NULL));
  loom_train_settings *s = NULL;
  loom_error err = {0};
  g_assert_cmpint(loom_train_settings_load(cfg, &s, &err), ==, 0);
  loom_net *net = example("spiral");
  loom_dataset *tr, *te;
  if (loom_train_settings_make_data(s, net, NULL, &tr, &te, &err)) g_error("%s", err.message);
  g_assert_cmpint(tr->n + te->n, ==, 20);
  g_assert_cmpint(te->n, ==, 4);
  loom_dataset_free(tr);
  loom_dataset_free(te);
  /* the same settings in a model file next to sub/ */
  char *model = g_build_filename(tmp_dir, "m.loom.json", NULL);
  loom_model_extras x = {.settings = s};
  g_assert_cmpint(loom_model_save_ex(net, &x, model, &err), ==, 0);
  loom_model_extras back;
  loom_net *net2;
  g_assert_cmpint(loom_model_load_ex(model, LOOM_MODEL_STRICT, &net2, &back, &err), ==, 0);
  g_assert_cmpstr(back.settings->data.base_dir, ==, tmp_dir);
  g_assert_cmpint(loom_train_settings_make_data(back.settings, net2, NULL, &tr, &te, &err), ==, 0);
  g_assert_cmpint(tr->n, ==, 16);
  loom_dataset_free(tr);
  loom_dataset_free(te);
  loom_model_extras_clear(&back);
  loom_net_free(net2);
  loom_net_free(net);
  loom_train_settings_free(s);
  g_remove(model);
  g_remove(csv);
  g_remove(cfg);
  g_rmdir(sub);
  g_free(model);
  g_free(sub);
  g_free(csv);
  g_free(cfg);
}

/* Every example opens with settings that fit it and make it learn. */
static void test_example_settings(void) {
  char *dir = datasets_dir();
  for (int i = 0; i < loom_example_count(); i++) {
    const char *name = loom_example_name(i);
    loom_net *net = example(name);
    if (loom_net_execution(net) == LOOM_EXEC_SYSTOLIC) { /* trained through ticks (BPTT), not by the trainer */
      loom_net_free(net);
      continue;
    }
    loom_train_settings *s = NULL;
    loom_error err = {0};
    g_assert_cmpint(loom_example_settings(name, &s, &err), ==, 0);
    g_assert_cmpint(loom_train_settings_validate(s, &err), ==, 0);
    loom_dataset *tr, *te;
    loom_train_config cfg;
    if (loom_train_settings_make_data(s, net, dir, &tr, &te, &err) ||
        loom_train_settings_make_config(s, net, tr, &cfg, &err))
      g_error("%s: %s", name, err.message);
    loom_trainer *t = loom_trainer_new(net, tr, te, &cfg, NULL, &err);
    if (!t) g_error("%s: %s", name, err.message);
    loom_epoch_stats first, e;
    g_assert_cmpint(loom_trainer_run_epoch(t, &first, &err), ==, 0);
    while (!loom_trainer_finished(t)) g_assert_cmpint(loom_trainer_run_epoch(t, &e, &err), ==, 0);
    /* the first epoch's train figures accumulate while it learns: the curve starts where the network did */
    if (!(e.train.loss < 0.5 * first.train.loss) || !(e.train.accuracy > first.train.accuracy + 0.15))
      g_error("%s does not learn visibly: loss %g → %g, train accuracy %g → %g", name, first.train.loss,
              e.train.loss, first.train.accuracy, e.train.accuracy);
    loom_trainer_free(t);
    loom_dataset_free(tr);
    loom_dataset_free(te);
    loom_train_settings_free(s);
    loom_net_free(net);
  }
  loom_train_settings *s = (loom_train_settings *)1;
  loom_error err = {0};
  g_assert_cmpint(loom_example_settings("lstm", &s, &err), ==, LOOM_ERR_INVALID);
  g_assert_null(s);
  g_free(dir);
}

static char *model_with_training(size_t *len) {
  loom_net *net = example("xor");
  loom_model_extras x = {.train_steps = 123};
  loom_error err = {0};
  g_assert_cmpint(loom_example_settings("xor", &x.settings, &err), ==, 0);
  x.train_state_len = 37;
  x.train_state = malloc(x.train_state_len);
  for (size_t i = 0; i < x.train_state_len; i++) ((unsigned char *)x.train_state)[i] = (unsigned char)(i * 7 + 1);
  char *text = loom_model_to_json_ex(net, &x, len, &err);
  g_assert_nonnull(text);
  loom_model_extras_clear(&x);
  loom_net_free(net);
  return text;
}

static void test_model_training_round_trip(void) {
  size_t len;
  char *text = model_with_training(&len);
  loom_net *net;
  loom_model_extras x;
  loom_error err = {0};
  g_assert_cmpint(loom_model_load_data_ex(text, len, "m.json", LOOM_MODEL_STRICT, &net, &x, &err), ==, 0);
  g_assert_cmpint(x.train_steps, ==, 123);
  g_assert_cmpuint(x.train_state_len, ==, 37);
  for (size_t i = 0; i < 37; i++) g_assert_cmpint(((unsigned char *)x.train_state)[i], ==, (unsigned char)(i * 7 + 1));
  loom_train_settings *want = NULL;
  g_assert_cmpint(loom_example_settings("xor", &want, &err), ==, 0);
  g_assert_true(loom_train_settings_equal(x.settings, want));
  size_t len2;
  char *again = loom_model_to_json_ex(net, &x, &len2, &err);
  g_assert_cmpstr(again, ==, text);
  /* the plain functions: the network alone, no section written */
  char *plain = loom_model_to_json(net, NULL, &err);
  g_assert_null(strstr(plain, "\"training\""));
  loom_net *net2;
  g_assert_cmpint(loom_model_load_data(text, len, "m.json", LOOM_MODEL_STRICT, &net2, &err), ==, 0);
  loom_net_free(net2);
  free(plain);
  free(again);
  free(text);
  loom_train_settings_free(want);
  loom_model_extras_clear(&x);
  g_assert_null(x.settings);
  loom_net_free(net);
}

/* The document with `from` replaced by `to`; with tail_only, everything
 * from `from` on is replaced. */
static void expect_model_error_at(const char *from, const char *to, bool tail_only, const char *message) {
  size_t len;
  char *text = model_with_training(&len);
  char *at = strstr(text, from);
  if (!at) g_error("'%s' is not in the document", from);
  GString *doc = g_string_new_len(text, at - text);
  g_string_append(doc, to);
  if (!tail_only) g_string_append(doc, at + strlen(from));
  for (int with_extras = 0; with_extras < 2; with_extras++) {
    loom_net *net = (loom_net *)1;
    loom_model_extras x = {.train_steps = 9};
    loom_error err = {0};
    int rc = loom_model_load_data_ex(doc->str, doc->len, "m.json", LOOM_MODEL_STRICT, &net, with_extras ? &x : NULL,
                                     &err);
    g_assert_cmpint(rc, !=, 0);
    if (!g_str_has_prefix(err.message, message)) g_error("expected \"%s\"\n     got \"%s\"", message, err.message);
    g_assert_null(net);
    g_assert_null(x.settings);
    g_assert_null(x.train_state);
  }
  g_string_free(doc, TRUE);
  free(text);
}

static void expect_model_error(const char *from, const char *to, const char *message) {
  expect_model_error_at(from, to, false, message);
}

static void test_model_training_hostile(void) {
  expect_model_error("\"steps\": 123", "\"steps\": -1",
                     "m.json: $.training.steps: expected an integer in 0..9223372036854775807, found -1");
  expect_model_error("\"steps\": 123", "\"stepz\": 123",
                     "m.json: $.training.stepz: unknown member (expected one of: settings, state, steps)");
  expect_model_error_at("\"training\": {", "\"training\": []}", true,
                        "m.json: $.training: expected an object, found an array");
  expect_model_error("\"state\": \"A", "\"state\": \"!", "m.json: $.training.state: ");
  expect_model_error("\"state\": \"", "\"state\": \"AB", "m.json: $.training.state: base64 text of ");
  expect_model_error_at("\"training\": {", "\"training\": {\"state\": 5}}", true,
                        "m.json: $.training.state: expected a string, found an integer");
  expect_model_error("\"lr\": 0.05", "\"lr\": -1",
                     "m.json: $.training.settings.optimizer.lr: expected a number >= 0, found “-1”");
  expect_model_error("\"source\": \"xor\"", "\"source\": \"xor\", \"factor\": 0.5",
                     "m.json: $.training.settings.data.factor: applies to circles only, not to xor");
  expect_model_error("\"format\": \"loom-train-settings\"", "\"format\": \"loom\"",
                     "m.json: $.training.settings.format: expected “loom-train-settings”, found “loom”");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-settings-model-XXXXXX", NULL);
  g_test_add_func("/io/settings/make-data-as-before", test_make_data_as_before);
  g_test_add_func("/io/settings/make-data-knobs", test_make_data_knobs);
  g_test_add_func("/io/settings/relative-csv", test_relative_csv);
  g_test_add_func("/io/settings/example-settings", test_example_settings);
  g_test_add_func("/io/settings/model-training-round-trip", test_model_training_round_trip);
  g_test_add_func("/io/settings/model-training-hostile", test_model_training_hostile);
  int rc = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
