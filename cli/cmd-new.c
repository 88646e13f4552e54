/*
 * loom new --grid D,R,C,L [--out MODEL] [--input-shape N[,..]] [--force]
 * loom new --example NAME [--out MODEL] [--force]
 * loom new --list
 *
 * Without --out the model goes to NAME.loom.json (an example) or
 * network.loom.json (a grid) in the current directory; that default file is
 * never replaced unless --force is given, because nobody named it. An
 * explicit --out is replaced (atomically) as before. Either way the command
 * says where it wrote.
 */
#include <glib.h>
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "cli-model.h"
#include "commands.h"

int cmd_new(int argc, char **argv);

#define NEW_GRID_DEFAULT_OUT "network.loom.json"

static int list_examples(void) {
  int width = 0;
  for (int i = 0; i < loom_example_count(); i++) width = MAX(width, (int)strlen(loom_example_name(i)));
  for (int i = 0; i < loom_example_count(); i++) {
    printf("%-*s  %s\n", width, loom_example_name(i), loom_example_title(i));
    printf("%-*s  %s\n", width, "", loom_example_description(i));
  }
  return 0;
}

int cmd_new(int argc, char **argv) {
  const char *grid = NULL, *example = NULL, *out = NULL, *input_shape = NULL;
  bool list = false, force = false;
  for (int i = 1; i < argc; i++) {
    int r;
    if ((r = cli_option_value("--grid", argc, argv, &i, &grid)) ||
        (r = cli_option_value("--example", argc, argv, &i, &example)) ||
        (r = cli_option_value("--out", argc, argv, &i, &out)) ||
        (r = cli_option_value("--input-shape", argc, argv, &i, &input_shape))) {
      if (r < 0) return cli_usage_error("new", _("option '%s' needs a value"), argv[i]);
      continue;
    }
    if (strcmp(argv[i], "--list") == 0) {
      list = true;
      continue;
    }
    if (strcmp(argv[i], "--force") == 0) {
      force = true;
      continue;
    }
    return cli_usage_error("new", _("unexpected argument '%s'"), argv[i]);
  }
  if (list) {
    if (grid || example || out || input_shape || force)
      return cli_usage_error("new", _("--list takes no other options"));
    return list_examples();
  }
  if (!grid == !example) return cli_usage_error("new", _("give either --grid D,R,C,L or --example NAME"));
  if (example && input_shape)
    return cli_usage_error("new", _("--input-shape applies to --grid; an example has its own input shape"));

  loom_error err = {0};
  loom_net *net = NULL;
  loom_model_extras extras = {0};
  if (example) {
    bool known = false;
    for (int i = 0; i < loom_example_count(); i++) known = known || strcmp(loom_example_name(i), example) == 0;
    if (!known) {
      GString *names = g_string_new(NULL);
      for (int i = 0; i < loom_example_count(); i++)
        g_string_append_printf(names, "%s%s", i ? ", " : "", loom_example_name(i));
      int rc = cli_usage_error("new", _("unknown example '%s' (expected one of: %s)"), example, names->str);
      g_string_free(names, TRUE);
      return rc;
    }
    /* the example opens ready to train: its file carries the settings it trains with */
    if (loom_example_build(example, &net, &err) || loom_example_settings(example, &extras.settings, &err)) {
      cli_error("new", "%s", err.message);
      loom_net_free(net);
      return 1;
    }
  } else {
    int64_t dims[4], shape[LOOM_MAX_DIMS];
    int n, rank = 0;
    if (!cli_parse_int_list(grid, dims, 4, &n) || n != 4)
      return cli_usage_error("new", _("--grid needs four positive integers D,R,C,L (depth, rows, columns, layers per "
                                      "cell), not '%s'"),
                             grid);
    if (input_shape && !cli_parse_int_list(input_shape, shape, LOOM_MAX_DIMS, &rank))
      return cli_usage_error("new", _("--input-shape needs 1 to %d positive integers separated by commas, not '%s'"),
                             LOOM_MAX_DIMS, input_shape);
    for (int i = 0; i < 4; i++)
      if (dims[i] > INT32_MAX)
        return cli_usage_error("new", _("--grid value %lld is too large"), (long long)dims[i]);
    net = loom_net_new((int)dims[0], (int)dims[1], (int)dims[2], (int)dims[3], &err);
    if (!net) return cli_usage_error("new", "%s", err.message);
    if (rank > 0) {
      loom_shape s = loom_shape_make(rank, shape);
      if (loom_net_set_input_shape(net, &s, &err)) {
        loom_net_free(net);
        return cli_usage_error("new", "%s", err.message);
      }
    }
  }
  char *default_out = out ? NULL : example ? g_strconcat(example, ".loom.json", NULL) : g_strdup(NEW_GRID_DEFAULT_OUT);
  const char *path = out ? out : default_out;
  int rc = 0;
  if (default_out && !force && g_file_test(path, G_FILE_TEST_EXISTS)) {
    cli_error("new", _("%s already exists; give --force to replace it or --out to choose another file"), path);
    rc = 1;
  } else if (loom_model_save_ex(net, &extras, path, &err)) {
    cli_error("new", "%s", err.message);
    rc = 1;
  } else {
    printf(_("wrote %s\n"), path);
  }
  loom_net_free(net);
  loom_model_extras_clear(&extras);
  g_free(default_out);
  return rc;
}
