/*
 * loom import MODEL --weights FILE.safetensors [--map MAP.json]
 *             [--ignore-unmapped] --out OUT
 *
 * Takes the weights of a plain PyTorch state dict saved as safetensors into a
 * Loom network whose layers match it (docs/safetensors.md, "Importing a state
 * dict"): by the mapping file, or without one by the nn.Sequential rule. The
 * network is written to OUT in the format its name says (.safetensors, else
 * JSON), atomically; on any error OUT is left as it was.
 */
#include <glib/gi18n.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli-model.h"
#include "commands.h"
#include "loom/safetensors.h"

int cmd_import(int argc, char **argv);

int cmd_import(int argc, char **argv) {
  const char *model = NULL, *weights = NULL, *map_path = NULL, *out = NULL;
  bool ignore_unmapped = false;
  for (int i = 1; i < argc; i++) {
    int r;
    if ((r = cli_option_value("--weights", argc, argv, &i, &weights)) ||
        (r = cli_option_value("--map", argc, argv, &i, &map_path)) ||
        (r = cli_option_value("--out", argc, argv, &i, &out))) {
      if (r < 0) return cli_usage_error("import", _("option '%s' needs a value"), argv[i]);
      continue;
    }
    if (strcmp(argv[i], "--ignore-unmapped") == 0) {
      ignore_unmapped = true;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("import", _("unknown option '%s'"), argv[i]);
    if (model) return cli_usage_error("import", _("unexpected argument '%s'"), argv[i]);
    model = argv[i];
  }
  if (!model) return cli_usage_error("import", _("missing the model"));
  if (!weights) return cli_usage_error("import", _("missing --weights FILE.safetensors"));
  if (!out) return cli_usage_error("import", _("missing --out FILE"));

  loom_error err = {0};
  loom_import_map *map = NULL;
  if (map_path && loom_import_map_load(map_path, &map, &err)) {
    cli_error("import", "%s", err.message);
    return 1;
  }
  loom_net *net = NULL;
  loom_model_extras extras = {0};
  if (loom_model_load_ex(model, LOOM_MODEL_STRICT, &net, &extras, &err)) {
    cli_error("import", "%s", err.message);
    loom_import_map_free(map);
    return 1;
  }
  /* The weights exist once the layers are built. */
  loom_diag *diags = NULL;
  int n_diags = loom_net_infer_shapes(net, 0, &diags);
  int rc = LOOM_OK;
  if (n_diags != 0) {
    char at[64];
    if (n_diags > 0)
      cli_error("import", _("%s: the network cannot run: %s: %s"), model, loom_coord_format(diags[0].at, at, sizeof at),
                diags[0].message);
    else
      cli_error("import", _("%s: shape inference failed"), model);
    rc = 1;
  }
  free(diags);
  if (rc == LOOM_OK) {
    rc = loom_import_state_dict(net, weights, map, ignore_unmapped ? LOOM_IMPORT_IGNORE_UNMAPPED : 0, &err);
    if (rc == LOOM_OK)
      rc = g_str_has_suffix(out, ".safetensors") ? loom_model_save_safetensors(net, &extras, out, &err)
                                                 : loom_model_save_ex(net, &extras, out, &err);
    if (rc) cli_error("import", "%s", err.message);
  }
  loom_model_extras_clear(&extras);
  loom_net_free(net);
  loom_import_map_free(map);
  if (rc) return 1;
  struct stat sb;
  long long size = stat(out, &sb) == 0 ? (long long)sb.st_size : 0;
  printf(ngettext("wrote %s (%lld byte)\n", "wrote %s (%lld bytes)\n", (unsigned long)size), out, size);
  return 0;
}
