/*
 * Data sets for the training commands. The digits file is looked up in the
 * source tree during development ($LOOM_SOURCE_DIR, then the source
 * directory this binary was compiled in) and under the installed datadir.
 */
#include "cli-data.h"

#include <errno.h>
#include <glib.h>
#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

#define CLI_TEST_FRACTION 0.2

bool cli_parse_uint64(const char *text, uint64_t *out) {
  char *end;
  errno = 0;
  if (!text || !*text || *text == '-') return false;
  unsigned long long v = strtoull(text, &end, 10);
  if (*end || errno == ERANGE) return false;
  *out = v;
  return true;
}

static char *find_digits(void) {
  const char *rel = "data/datasets/optdigits-8x8.csv.gz";
  const char *roots[] = {g_getenv("LOOM_SOURCE_DIR"), LOOM_SOURCE_ROOT};
  for (size_t i = 0; i < G_N_ELEMENTS(roots); i++) {
    if (!roots[i]) continue;
    char *p = g_build_filename(roots[i], rel, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_REGULAR)) return p;
    g_free(p);
  }
  char *p = g_build_filename(LOOM_DATADIR, "loom", "datasets", "optdigits-8x8.csv.gz", NULL);
  if (g_file_test(p, G_FILE_TEST_IS_REGULAR)) return p;
  g_free(p);
  return NULL;
}

static loom_dataset *generate(const char *command, const char *name, const loom_net *net, uint64_t seed,
                              loom_error *err) {
  loom_shape in = loom_net_input_shape(net);
  int64_t numel = loom_shape_numel(&in);
  if (strcmp(name, "spiral") == 0) return loom_gen_spiral(200, 2, 0.02, seed, err);
  if (strcmp(name, "xor") == 0) return loom_gen_xor(400, 0.02, seed, err);
  if (strcmp(name, "circles") == 0) return loom_gen_circles(400, 0.5, 0.05, seed, err);
  if (strcmp(name, "clusters") == 0) {
    loom_shape out = loom_net_output_shape(net);
    int64_t classes = loom_shape_numel(&out);
    return loom_gen_clusters(400, classes >= 2 ? classes : 2, numel, 0.2, seed, err);
  }
  if (strcmp(name, "sine") == 0) return loom_gen_sine(400, numel, 0.01, seed, err);
  if (strcmp(name, "copy") == 0) return loom_gen_copy(400, 4, 6, 0.0, seed, err);
  if (strcmp(name, "digits") == 0) {
    char *path = find_digits();
    if (!path) {
      loom_error_set(err, LOOM_ERR_IO, _("the digits data set (optdigits-8x8.csv.gz) was not found in the source tree "
                                         "or in %s"), LOOM_DATADIR);
      return NULL;
    }
    loom_dataset *ds = loom_dataset_load_digits(path, in.rank == 3, err);
    g_free(path);
    return ds;
  }
  (void)command;
  loom_error_set(err, LOOM_ERR_INVALID,
                 _("unknown data set “%s” (expected spiral, xor, circles, clusters, sine, copy, digits or a .csv file)"),
                 name);
  return NULL;
}

bool cli_load_data(const char *command, const char *spec, const loom_net *net, uint64_t seed, bool regression,
                   loom_dataset **train, loom_dataset **test) {
  loom_error err = {0};
  loom_dataset *all;
  *train = *test = NULL;
  if (g_str_has_suffix(spec, ".csv") || g_str_has_suffix(spec, ".csv.gz") || strchr(spec, '/')) {
    loom_csv_options o = loom_csv_options_default();
    o.target = regression ? LOOM_TARGET_VECTOR : LOOM_TARGET_CLASS;
    all = loom_dataset_load_csv(spec, &o, &err);
  } else {
    all = generate(command, spec, net, seed, &err);
  }
  if (!all) {
    cli_error(command, "%s", err.message);
    return false;
  }
  loom_shape in = loom_net_input_shape(net);
  if (loom_shape_numel(&in) == all->input_numel && !loom_shape_equal(&in, &all->input_shape))
    loom_dataset_reshape_inputs(all, &in, NULL);
  int rc = loom_dataset_split(all, CLI_TEST_FRACTION, seed, train, test, &err);
  loom_dataset_free(all);
  if (rc) {
    cli_error(command, "%s: %s", spec, err.message);
    return false;
  }
  return true;
}
