/*
 * Training settings: defaults, every field through JSON and back, absent
 * fields taking their defaults, strict errors naming the JSON path, invalid
 * values refused naming the field, the data sets byte for byte as `loom
 * train --data NAME` made them before settings existed, the examples'
 * settings, and the model file's "training" section (including hostile
 * ones).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "train/settings-internal.h"

#define SRC "s.json"

static char *tmp_dir;

static loom_train_settings *from_text(const char *text) {
  loom_train_settings *s = NULL;
  loom_error err = {0};
  if (loom_train_settings_from_json(text, strlen(text), SRC, &s, &err)) g_error("%s", err.message);
  return s;
}

static void expect_json_error(const char *text, loom_status code, const char *message) {
  loom_train_settings *s = (loom_train_settings *)1;
  loom_error err = {0};
  int rc = loom_train_settings_from_json(text, strlen(text), SRC, &s, &err);
  if (rc != (int)code || strcmp(err.message, message) != 0)
    g_error("expected %s \"%s\"\n     got %s \"%s\"", loom_status_name(code), message, loom_status_name(rc),
            err.message);
  g_assert_null(s);
}

static void set(loom_train_settings *s, const char *field, const char *value) {
  loom_error err = {0};
  if (loom_train_settings_set_field(s, field, value, &err)) g_error("%s=%s: %s", field, value, err.message);
}

static void test_defaults(void) {
  loom_train_settings *s = loom_train_settings_new();
  loom_error err = {0};
  g_assert_cmpint(loom_train_settings_validate(s, &err), ==, 0);
  /* loom train's defaults */
  g_assert_cmpstr(s->data.source, ==, "spiral");
  g_assert_cmpfloat(s->data.test_fraction, ==, 0.2);
  g_assert_cmpuint(s->data.seed, ==, 1);
  g_assert_cmpuint(s->seed, ==, 1);
  g_assert_cmpstr(s->optimizer, ==, "adam");
  g_assert_cmpfloat(s->lr, ==, 1e-3);
  g_assert_cmpint(s->batch, ==, 32);
  g_assert_cmpint(s->epochs, ==, 10);
  g_assert_cmpint(s->schedule.kind, ==, LOOM_SCHEDULE_CONSTANT);
  g_assert_true(isnan(s->momentum) && isnan(s->beta1) && isnan(s->data.noise));
  /* a file with nothing but its header is the defaults */
  loom_train_settings *f = from_text("{\"format\": \"loom-train-settings\", \"version\": 1}");
  g_assert_true(loom_train_settings_equal(s, f));
  /* a group present in part: the rest of it takes the defaults */
  loom_train_settings *g =
    from_text("{\"format\": \"loom-train-settings\", \"version\": 1, \"tween\": {\"threshold\": 0.5}}");
  g_assert_cmpfloat(g->tween.threshold, ==, 0.5);
  g_assert_cmpfloat(g->tween.momentum, ==, loom_tween_config_default().momentum);
  g_assert_false(loom_train_settings_equal(s, g));
  g->tween.threshold = s->tween.threshold;
  g_assert_true(loom_train_settings_equal(s, g));
  loom_train_settings_free(s);
  loom_train_settings_free(f);
  loom_train_settings_free(g);
}

/* Settings variants that between them set every field of the table to a
 * value other than its default. */
static const char *const variants[][24] = {
  {"data.source=csv", "data.csv.path=sub/d.csv", "data.csv.header=no", "data.csv.delimiter=;",
   "data.csv.label_index=0", "data.csv.label_name=kind", "data.csv.target=vector", "data.csv.features=3,1,2",
   "data.test_fraction=0.25", "data.seed=18446744073709551615", "data.normalize=zscore", "method=tween",
   "loss=mse", "label_smoothing=0.1", "optimizer=sgd", "lr=0.125", "optimizer.weight_decay=0.01",
   "optimizer.momentum=0.9", "optimizer.dampening=0", "optimizer.nesterov=true", "optimizer.maximize=true",
   "schedule=step", "schedule.step_size=7", NULL},
  {"data=spiral", "data.samples=300", "data.noise=0.1", "data.classes=3", "optimizer=adamw", "optimizer.beta1=0.8",
   "optimizer.beta2=0.99", "optimizer.eps=1e-6", "optimizer.amsgrad=true", "schedule=cosine_restarts",
   "schedule.t0=11", "schedule.tmult=2", "schedule.eta_min=0.0001", "warmup=5", "schedule.warmup_start=0.5",
   "batch=7", "epochs=3", "seed=99", "threads=3", "clip_norm=1.5", "shuffle=false", "drop_last=true", "patience=4",
   NULL},
  {"data=circles", "data.factor=0.3", "optimizer=rmsprop", "optimizer.alpha=0.9", "optimizer.centered=true",
   "optimizer.momentum=0.5", "schedule=exponential", "schedule.gamma=0.97", "min_delta=0.01", "restore_best=true",
   "tween.threshold=-0.5", "tween.momentum=0.5", "tween.target_step=0.2", "tween.max_input_step=2",
   "tween.explosion_factor=3", "tween.baseline_decay=0.8", "tween.warmup_steps=2", "tween.damping=0.25",
   "tween.recovery=1.5", "tween.min_rate_scale=0.125", "tween.chain_rule=true", NULL},
  {"data=copy", "data.length=3", "data.symbols=5", "loss=cross_entropy", "ticks=12", NULL},
};

static loom_train_settings *variant(int v) {
  loom_train_settings *s = loom_train_settings_new();
  for (int i = 0; variants[v][i]; i++) {
    char **kv = g_strsplit(variants[v][i], "=", 2);
    set(s, kv[0], kv[1]);
    g_strfreev(kv);
  }
  return s;
}

static void test_round_trip_every_field(void) {
  loom_train_settings *defaults = loom_train_settings_new();
  bool covered[128] = {false};
  g_assert_cmpint(settings_n_fields, <=, 128);
  for (int v = 0; v < (int)G_N_ELEMENTS(variants); v++) {
    loom_train_settings *s = variant(v);
    loom_error err = {0};
    g_assert_cmpint(loom_train_settings_validate(s, &err), ==, 0);
    size_t len;
    char *text = loom_train_settings_to_json(s, &len, &err);
    g_assert_nonnull(text);
    loom_train_settings *back = NULL;
    g_assert_cmpint(loom_train_settings_from_json(text, len, SRC, &back, &err), ==, 0);
    g_assert_true(loom_train_settings_equal(s, back));
    /* writing what was read gives the same bytes */
    size_t len2;
    char *text2 = loom_train_settings_to_json(back, &len2, &err);
    g_assert_cmpstr(text, ==, text2);
    /* the saved file too, and the copy */
    char *path = g_build_filename(tmp_dir, "rt.json", NULL);
    loom_train_settings *loaded = NULL, *copy = loom_train_settings_copy(s);
    g_assert_cmpint(loom_train_settings_save(s, path, &err), ==, 0);
    g_assert_cmpint(loom_train_settings_load(path, &loaded, &err), ==, 0);
    g_assert_true(loom_train_settings_equal(loaded, s));
    g_assert_true(loom_train_settings_equal(copy, s));
    g_assert_cmpstr(loaded->data.base_dir, ==, tmp_dir);
    for (int i = 0; i < settings_n_fields; i++) {
      const settings_field *f = &settings_fields[i];
      char a[256], b[256];
      settings_field_format(s, f, a, sizeof a);
      settings_field_format(defaults, f, b, sizeof b);
      if (strcmp(a, b) != 0) covered[i] = true;
      /* get_field reads back what set_field takes */
      g_assert_cmpint(loom_train_settings_get_field(s, f->name, b, sizeof b, &err), ==, 0);
      g_assert_cmpstr(a, ==, b);
    }
    g_remove(path);
    g_free(path);
    free(text);
    free(text2);
    loom_train_settings_free(s);
    loom_train_settings_free(back);
    loom_train_settings_free(loaded);
    loom_train_settings_free(copy);
  }
  for (int i = 0; i < settings_n_fields; i++)
    if (!covered[i]) g_error("no round-trip variant sets %s", settings_fields[i].name);
  loom_train_settings_free(defaults);
}

#define HEAD "{\"format\": \"loom-train-settings\", \"version\": 1, "

static void test_strict_json_errors(void) {
  expect_json_error(HEAD "\"optimizer\": {\"lrr\": 0.1}}", LOOM_ERR_FORMAT,
                    "s.json: $.optimizer.lrr: unknown member (expected one of: name, lr, weight_decay, momentum, "
                    "dampening, nesterov, beta1, beta2, eps, amsgrad, alpha, centered, maximize)");
  expect_json_error(HEAD "\"epoch\": 3}", LOOM_ERR_FORMAT,
                    "s.json: $.epoch: unknown member (expected one of: format, version, data, method, loss, "
                    "label_smoothing, optimizer, schedule, batch, epochs, seed, threads, clip_norm, ticks, shuffle, "
                    "drop_last, patience, min_delta, restore_best, tween)");
  expect_json_error(HEAD "\"data\": {\"csv\": {\"sep\": \",\"}}}", LOOM_ERR_FORMAT,
                    "s.json: $.data.csv.sep: unknown member (expected one of: path, header, delimiter, label_index, "
                    "label_name, target, features)");
  expect_json_error(HEAD "\"optimizer\": {\"lr\": -1}}", LOOM_ERR_INVALID,
                    "s.json: $.optimizer.lr: expected a number >= 0, found “-1”");
  expect_json_error(HEAD "\"optimizer\": {\"lr\": \"0.1\"}}", LOOM_ERR_FORMAT,
                    "s.json: $.optimizer.lr: expected a number in -1.79769313e+308..1.79769313e+308, found a string");
  expect_json_error(HEAD "\"batch\": 0}", LOOM_ERR_RANGE,
                    "s.json: $.batch: expected an integer in 1..16777216, found 0");
  expect_json_error(HEAD "\"optimizer\": \"adam\"}", LOOM_ERR_FORMAT,
                    "s.json: $.optimizer: expected an object, found a string");
  expect_json_error(HEAD "\"optimizer\": {\"momentum\": 0.9}}", LOOM_ERR_INVALID,
                    "s.json: $.optimizer.momentum: applies to sgd, rmsprop only, not to adam");
  expect_json_error(HEAD "\"data\": {\"source\": \"xor\", \"factor\": 0.3}}", LOOM_ERR_INVALID,
                    "s.json: $.data.factor: applies to circles only, not to xor");
  expect_json_error(HEAD "\"data\": {\"source\": \"moons\"}}", LOOM_ERR_INVALID,
                    "s.json: $.data.source: unknown value “moons” (expected one of: spiral, xor, circles, clusters, "
                    "sine, copy, digits, csv, parity, text)");
  expect_json_error(HEAD "\"data\": {\"source\": \"csv\"}}", LOOM_ERR_INVALID,
                    "s.json: $.data.csv.path: a CSV data source needs the path of the file");
  expect_json_error(HEAD "\"data\": {\"source\": \"csv\", \"csv\": {\"path\": \"a.csv\", \"features\": [1, 1]}}}",
                    LOOM_ERR_INVALID, "s.json: $.data.csv.features: column 1 is listed twice");
  expect_json_error(HEAD "\"optimizer\": {\"name\": \"sgd\", \"nesterov\": true}}", LOOM_ERR_INVALID,
                    "s.json: $.optimizer: sgd: nesterov needs momentum > 0 and dampening 0 (momentum 0, dampening 0)");
  expect_json_error(HEAD "\"schedule\": {\"kind\": \"step\", \"gamma\": 0}}", LOOM_ERR_INVALID,
                    "s.json: $.schedule.gamma: expected a number > 0, found “0”");
  expect_json_error("{\"format\": \"loom-model\", \"version\": 1}", LOOM_ERR_FORMAT,
                    "s.json: $.format: expected “loom-train-settings”, found “loom-model”");
  expect_json_error("{\"format\": \"loom-train-settings\", \"version\": 2}", LOOM_ERR_UNSUPPORTED,
                    "s.json: $.version: format version 2 is newer than this loom reads (up to 1)");
  expect_json_error("{\"format\": \"loom-train-settings\"}", LOOM_ERR_FORMAT,
                    "s.json: $.version: required member is missing");
  expect_json_error(HEAD "\"batch\": 1, \"batch\": 2}", LOOM_ERR_FORMAT,
                    "s.json:1:61: duplicate member “batch”");
}

static void expect_set_error(const char *field, const char *value, const char *message) {
  loom_train_settings *s = loom_train_settings_new(), *before = loom_train_settings_new();
  loom_error err = {0};
  g_assert_cmpint(loom_train_settings_set_field(s, field, value, &err), !=, 0);
  g_assert_cmpstr(err.message, ==, message);
  g_assert_true(loom_train_settings_equal(s, before)); /* unchanged */
  loom_train_settings_free(s);
  loom_train_settings_free(before);
}

static void test_invalid_values(void) {
  expect_set_error("lr", "-1", "optimizer.lr: expected a number >= 0, found “-1”");
  expect_set_error("lr", "fast", "optimizer.lr: expected a number >= 0, found “fast”");
  expect_set_error("batch", "0", "batch: expected an integer from 1 to 16777216, found “0”");
  expect_set_error("epochs", "2.5", "epochs: expected an integer from 1 to 1000000, found “2.5”");
  expect_set_error("optimizer", "lion", "optimizer.name: unknown value “lion” (expected one of: sgd, adam, adamw, "
                                        "rmsprop)");
  expect_set_error("data.noise", "-0.1", "data.noise: expected a number in [0, 1000000], found “-0.1”");
  expect_set_error("data.test_fraction", "1", "data.test_fraction: expected a number in (0, 1), found “1”");
  expect_set_error("optimizer.momentum", "0.9", "optimizer.momentum: applies to sgd, rmsprop only, not to adam");
  expect_set_error("seed", "-1", "seed: expected a non-negative integer below 2^64, found “-1”");
  expect_set_error("shuffle", "yes", "shuffle: expected true or false, found “yes”");
  expect_set_error("data.csv.delimiter", ";", "data.csv.delimiter: applies to csv only, not to spiral");
  expect_set_error("speed", "1", "unknown training settings field “speed”");
  /* a struct edited directly: validate names the field */
  loom_train_settings *s = loom_train_settings_new();
  loom_error err = {0};
  s->batch = 0;
  g_assert_cmpint(loom_train_settings_validate(s, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "batch: expected an integer from 1 to 16777216, found “0”");
  s->batch = 8;
  s->lr = INFINITY;
  g_assert_cmpint(loom_train_settings_validate(s, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "optimizer.lr: expected a number >= 0, found “inf”");
  s->lr = 0.1;
  s->beta2 = 1;
  g_assert_cmpint(loom_train_settings_validate(s, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "optimizer.beta2: expected a number in [0, 1), found “1”");
  g_assert_null(loom_train_settings_to_json(s, NULL, &err));
  loom_train_settings_free(s);
}

/* A new optimizer, schedule or source forgets the knobs it lacks; "default" unsets a knob. */
static void test_choice_changes(void) {
  loom_train_settings *s = loom_train_settings_new();
  set(s, "optimizer", "sgd");
  set(s, "optimizer.momentum", "0.9");
  set(s, "optimizer.nesterov", "true");
  set(s, "optimizer", "rmsprop");
  g_assert_cmpfloat(s->momentum, ==, 0.9); /* rmsprop has momentum too */
  g_assert_false(s->nesterov);
  set(s, "optimizer", "adam");
  g_assert_true(isnan(s->momentum));
  set(s, "data", "circles");
  set(s, "data.factor", "0.4");
  set(s, "data.noise", "0.3");
  set(s, "data", "xor");
  g_assert_true(isnan(s->data.factor));
  g_assert_cmpfloat(s->data.noise, ==, 0.3);
  set(s, "data.noise", "default");
  g_assert_true(isnan(s->data.noise));
  set(s, "schedule", "step");
  set(s, "schedule.gamma", "0.5");
  set(s, "schedule", "cosine_restarts");
  g_assert_true(isnan(s->schedule.gamma));
  loom_error err = {0};
  g_assert_cmpint(loom_train_settings_validate(s, &err), ==, 0);
  loom_train_settings_free(s);
}

/* The public field table: every field is reachable by name, has a label of
 * its own, its choices are accepted, its range matches what set_field
 * refuses, and "applies" follows the optimizer and the method. */
static void test_field_info(void) {
  loom_train_settings *s = loom_train_settings_new();
  int n = loom_train_settings_n_fields();
  g_assert_cmpint(n, ==, settings_n_fields);
  g_autoptr(GHashTable) labels = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (int i = 0; i < n; i++) {
    loom_setting_info info;
    g_assert_true(loom_train_settings_field_info(i, &info));
    g_assert_cmpstr(info.name, ==, settings_fields[i].name);
    g_assert_nonnull(info.label);
    g_assert_cmpstr(info.label, !=, info.name);
    /* Labels are unique within a group (the form shows groups apart). */
    g_autofree char *key = g_strdup_printf("%.*s/%s", (int)(strchr(info.name, '.') ? strchr(info.name, '.') - info.name : 0),
                                           info.name, info.label);
    g_assert_false(g_hash_table_contains(labels, key));
    g_hash_table_add(labels, g_steal_pointer(&key));
    char buf[256];
    loom_error err = {0};
    g_assert_cmpint(loom_train_settings_get_field(s, info.name, buf, sizeof buf, &err), ==, LOOM_OK);
    /* A knob of another data source is refused (test_choice_changes). */
    if (info.kind == LOOM_SETTING_CHOICE && loom_train_settings_field_applies(s, info.name)) {
      g_assert_nonnull(info.choices);
      loom_train_settings *c = loom_train_settings_copy(s);
      for (int k = 0; info.choices[k]; k++) g_assert_cmpint(loom_train_settings_set_field(c, info.name, info.choices[k], &err), ==, LOOM_OK);
      loom_train_settings_free(c);
    }
    if (info.kind == LOOM_SETTING_NUMBER && isfinite(info.max) && info.max < 1e6) {
      g_autofree char *over = g_strdup_printf("%.17g", info.max * 2 + 1);
      loom_train_settings *c = loom_train_settings_copy(s);
      g_assert_cmpint(loom_train_settings_set_field(c, info.name, over, &err), !=, LOOM_OK);
      g_assert_nonnull(strstr(err.message, info.name));
      loom_train_settings_free(c);
    }
  }
  g_assert_false(loom_train_settings_field_info(n, &(loom_setting_info){0}));
  g_assert_false(loom_train_settings_field_info(-1, &(loom_setting_info){0}));
  /* adam by default: no momentum; sgd has it. */
  g_assert_false(loom_train_settings_field_applies(s, "optimizer.momentum"));
  g_assert_true(loom_train_settings_field_applies(s, "optimizer.beta1"));
  set(s, "optimizer", "sgd");
  g_assert_true(loom_train_settings_field_applies(s, "optimizer.momentum"));
  g_assert_false(loom_train_settings_field_applies(s, "optimizer.beta1"));
  /* Target propagation's knobs act only under tween; clipping only under backprop. */
  g_assert_false(loom_train_settings_field_applies(s, "tween.threshold"));
  g_assert_true(loom_train_settings_field_applies(s, "clip_norm"));
  set(s, "method", "tween");
  g_assert_true(loom_train_settings_field_applies(s, "tween.threshold"));
  g_assert_false(loom_train_settings_field_applies(s, "clip_norm"));
  /* systolic networks train by backprop through time only */
  g_assert_false(loom_train_settings_field_applies(s, "ticks"));
  g_assert_false(loom_train_settings_field_applies(s, "no.such.field"));
  loom_train_settings_free(s);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-settings-XXXXXX", NULL);
  g_test_add_func("/io/settings/defaults", test_defaults);
  g_test_add_func("/io/settings/round-trip-every-field", test_round_trip_every_field);
  g_test_add_func("/io/settings/strict-json-errors", test_strict_json_errors);
  g_test_add_func("/io/settings/invalid-values", test_invalid_values);
  g_test_add_func("/io/settings/choice-changes", test_choice_changes);
  g_test_add_func("/io/settings/field-info", test_field_info);
  int rc = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
