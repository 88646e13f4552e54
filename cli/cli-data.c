/*
 * Data sets for the training commands, made by the engine from training
 * settings so that the workbench makes the same ones. The digits file is
 * looked up in the source tree during development ($LOOM_SOURCE_DIR, then
 * the source directory this binary was compiled in) and under the installed
 * datadir.
 */
#include "cli-data.h"

#include <errno.h>
#include <glib.h>
#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

bool cli_parse_uint64(const char *text, uint64_t *out) {
  char *end;
  errno = 0;
  if (!text || !*text || *text == '-') return false;
  unsigned long long v = strtoull(text, &end, 10);
  if (*end || errno == ERANGE) return false;
  *out = v;
  return true;
}

#define DIGITS_FILE "optdigits-8x8.csv.gz"

/* The directory holding the digits file, or NULL. */
static char *find_datasets_dir(void) {
  const char *roots[] = {g_getenv("LOOM_SOURCE_DIR"), LOOM_SOURCE_ROOT};
  for (size_t i = 0; i < G_N_ELEMENTS(roots); i++) {
    if (!roots[i]) continue;
    char *dir = g_build_filename(roots[i], "data", "datasets", NULL);
    char *p = g_build_filename(dir, DIGITS_FILE, NULL);
    bool found = g_file_test(p, G_FILE_TEST_IS_REGULAR);
    g_free(p);
    if (found) return dir;
    g_free(dir);
  }
  char *dir = g_build_filename(LOOM_DATADIR, "loom", "datasets", NULL);
  char *p = g_build_filename(dir, DIGITS_FILE, NULL);
  bool found = g_file_test(p, G_FILE_TEST_IS_REGULAR);
  g_free(p);
  if (found) return dir;
  g_free(dir);
  return NULL;
}

int cli_data_source(loom_train_settings *s, const char *spec, bool regression, loom_error *err) {
  if (g_str_has_suffix(spec, ".csv") || g_str_has_suffix(spec, ".csv.gz") || strchr(spec, '/')) {
    int rc = loom_train_settings_set_field(s, "data.source", "csv", err);
    if (!rc) rc = loom_train_settings_set_field(s, "data.csv.path", spec, err);
    if (!rc) s->data.csv.target = regression ? LOOM_TARGET_VECTOR : LOOM_TARGET_CLASS;
    return rc;
  }
  loom_train_settings *probe = loom_train_settings_copy(s);
  if (!probe) return loom_error_set(err, LOOM_ERR_NOMEM, "%s", g_strerror(ENOMEM));
  int rc = strcmp(spec, "csv") == 0 ? LOOM_ERR_INVALID : loom_train_settings_set_field(probe, "data.source", spec, NULL);
  loom_train_settings_free(probe);
  if (rc)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("unknown data set “%s” (expected spiral, xor, circles, clusters, sine, copy, parity, text, "
                            "digits or a .csv file)"),
                          spec);
  return loom_train_settings_set_field(s, "data.source", spec, err);
}

bool cli_make_data(const char *command, const loom_train_settings *s, const loom_net *net, loom_dataset **train,
                   loom_dataset **test) {
  loom_error err = {0};
  char *dir = NULL;
  *train = *test = NULL;
  bool shipped = strcmp(s->data.source, "digits") == 0 || strcmp(s->data.source, "text") == 0;
  if (shipped && !(dir = find_datasets_dir())) {
    cli_error(command, _("the digits data set (optdigits-8x8.csv.gz) was not found in the source tree or in %s"),
              LOOM_DATADIR);
    return false;
  }
  int rc = loom_train_settings_make_data(s, net, dir, train, test, &err);
  g_free(dir);
  if (rc) {
    cli_error(command, "%s", err.message);
    return false;
  }
  return true;
}

bool cli_load_data(const char *command, const char *spec, const loom_net *net, uint64_t seed, bool regression,
                   loom_dataset **train, loom_dataset **test) {
  loom_error err = {0};
  *train = *test = NULL;
  loom_train_settings *s = loom_train_settings_new();
  if (!s) {
    cli_error(command, "%s", g_strerror(ENOMEM));
    return false;
  }
  s->data.seed = s->seed = seed;
  bool ok = cli_data_source(s, spec, regression, &err) == 0;
  if (!ok) cli_error(command, "%s", err.message);
  else ok = cli_make_data(command, s, net, train, test);
  loom_train_settings_free(s);
  return ok;
}
