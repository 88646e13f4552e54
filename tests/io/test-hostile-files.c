/*
 * The hostile-file suite: at least 200 crafted bad files, generated here
 * (hostile-*.c), across safetensors, JSON models, .npy and CSV. Each must
 * fail with an error containing its expected text, return nothing, and not
 * crash; the ASan build (tools/test) checks for leaks; peak memory stays
 * bounded although several files ask for gigabytes.
 */
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "hostile-cases.h"
#include "loom/loom.h"
#include "loom/safetensors.h"

static char *tmp_dir;

void hostile_add(GPtrArray *cases, hostile_kind kind, const char *name, const void *data, size_t len,
                 const char *expect) {
  hostile_case *c = g_new0(hostile_case, 1);
  c->kind = kind;
  c->name = g_strdup(name);
  c->bytes = g_bytes_new(data, len);
  c->expect = g_strdup(expect);
  g_ptr_array_add(cases, c);
}

static void case_free(gpointer p) {
  hostile_case *c = p;
  g_free(c->name);
  g_bytes_unref(c->bytes);
  g_free(c->expect);
  g_free(c);
}

/* Runs one case; returns NULL when it failed as expected, else why not. */
static char *run_case(const hostile_case *c) {
  gsize len;
  const void *data = g_bytes_get_data(c->bytes, &len);
  loom_error err = {0};
  int rc = 0;
  bool returned_something = false;
  const char *source = NULL;
  switch (c->kind) {
  case HOSTILE_SAFETENSORS: {
    loom_net *net = NULL;
    loom_model_extras x = {0};
    source = "h.safetensors";
    rc = loom_model_load_safetensors_data(data, len, source, LOOM_MODEL_STRICT, &net, &x, &err);
    returned_something = net || x.settings || x.train_state;
    loom_net_free(net);
    break;
  }
  case HOSTILE_JSON: {
    loom_net *net = NULL;
    source = "h.json";
    rc = loom_model_load_data(data, len, source, LOOM_MODEL_STRICT, &net, &err);
    returned_something = net != NULL;
    loom_net_free(net);
    break;
  }
  case HOSTILE_NPY:
  case HOSTILE_CSV: {
    char *path = g_build_filename(tmp_dir, c->kind == HOSTILE_NPY ? "h.npy" : "h.csv", NULL);
    g_assert_true(g_file_set_contents(path, data, (gssize)len, NULL));
    if (c->kind == HOSTILE_NPY) {
      loom_npy a = {0};
      rc = loom_npy_read(path, &a, &err);
      returned_something = a.data != NULL;
      loom_npy_clear(&a);
    } else {
      loom_csv_options o = loom_csv_options_default();
      loom_dataset *ds = loom_dataset_load_csv(path, &o, &err);
      rc = ds ? 0 : err.code ? err.code : -1;
      returned_something = ds != NULL;
      if (ds) loom_dataset_free(ds);
    }
    g_unlink(path);
    g_free(path);
    source = c->kind == HOSTILE_NPY ? "h.npy" : "h.csv";
    break;
  }
  }
  if (rc == 0) return g_strdup("loaded without an error");
  if (returned_something) return g_strdup_printf("returned a result with the error “%s”", err.message);
  if (!strstr(err.message, source)) return g_strdup_printf("the message does not name the file: “%s”", err.message);
  if (!strstr(err.message, c->expect))
    return g_strdup_printf("expected “%s” in the message “%s”", c->expect, err.message);
  return NULL;
}

static void test_hostile_files(void) {
  GPtrArray *cases = g_ptr_array_new_with_free_func(case_free);
  hostile_safetensors_cases(cases);
  hostile_model_cases(cases);
  hostile_npy_csv_cases(cases);
  int counts[4] = {0}, failures = 0;
  for (guint i = 0; i < cases->len; i++) {
    const hostile_case *c = g_ptr_array_index(cases, i);
    counts[c->kind]++;
    char *why = run_case(c);
    if (g_test_verbose() || why) g_test_message("%s: %s", c->name, why ? why : "ok");
    if (why) {
      failures++;
      fprintf(stderr, "# FAIL %s: %s\n", c->name, why);
    }
    g_free(why);
  }
  g_test_message("%u hostile files: %d safetensors, %d JSON, %d .npy, %d CSV", cases->len, counts[0], counts[1],
                 counts[2], counts[3]);
  g_assert_cmpint(failures, ==, 0);
  g_assert_cmpuint(cases->len, >=, 200);
  for (int k = 0; k < 4; k++) g_assert_cmpint(counts[k], >=, 10);
  g_ptr_array_unref(cases);
  /* None of the files that ask for gigabytes got them. */
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  g_test_message("peak resident memory: %ld KiB", ru.ru_maxrss);
  g_assert_cmpint(ru.ru_maxrss, <, 512 * 1024);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-hostile-XXXXXX", NULL);
  g_test_add_func("/io/hostile-files", test_hostile_files);
  int rc = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
