/*
 * loom convert IN --to json|safetensors|onnx [--dtype NAME] --out OUT
 *
 * Reads a model in either format (recognised by its content), optionally
 * moves every layer to one dtype, and writes it in the other (or the same)
 * format, or exports it to ONNX (docs/onnx.md; the training section does not
 * go there). The training section travels with the network. OUT is replaced
 * atomically; on any error it is left as it was.
 */
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli-model.h"
#include "commands.h"

int cmd_convert(int argc, char **argv);

int cmd_convert(int argc, char **argv) {
  const char *in = NULL, *to = NULL, *dtype_name = NULL, *out = NULL;
  for (int i = 1; i < argc; i++) {
    int r;
    if ((r = cli_option_value("--to", argc, argv, &i, &to)) ||
        (r = cli_option_value("--dtype", argc, argv, &i, &dtype_name)) ||
        (r = cli_option_value("--out", argc, argv, &i, &out))) {
      if (r < 0) return cli_usage_error("convert", _("option '%s' needs a value"), argv[i]);
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0')
      return cli_usage_error("convert", _("unknown option '%s'"), argv[i]);
    if (in) return cli_usage_error("convert", _("unexpected argument '%s'"), argv[i]);
    in = argv[i];
  }
  if (!in) return cli_usage_error("convert", _("missing the input model"));
  if (!to) return cli_usage_error("convert", _("missing --to json|safetensors|onnx"));
  if (!out) return cli_usage_error("convert", _("missing --out FILE"));
  bool st = strcmp(to, "safetensors") == 0, onnx = strcmp(to, "onnx") == 0;
  if (!st && !onnx && strcmp(to, "json") != 0)
    return cli_usage_error("convert", _("unknown format '%s' (expected json, safetensors or onnx)"), to);
  if (!st && !onnx && g_str_has_suffix(out, ".safetensors"))
    return cli_usage_error("convert", _("'%s' names a safetensors file; use --to safetensors or another name"), out);
  loom_error err = {0};
  loom_dtype dtype = LOOM_DTYPE_FLOAT32;
  if (dtype_name && loom_dtype_from_name(dtype_name, &dtype, &err))
    return cli_usage_error("convert", "%s", err.message);

  loom_net *net = NULL;
  loom_model_extras extras = {0};
  if (loom_model_load_ex(in, LOOM_MODEL_STRICT, &net, &extras, &err)) {
    cli_error("convert", "%s", err.message);
    return 1;
  }
  int rc = dtype_name ? loom_net_set_dtype_all(net, dtype, &err) : LOOM_OK;
  if (rc == LOOM_OK)
    rc = onnx ? loom_onnx_export(net, out, &err)
         : st ? loom_model_save_safetensors(net, &extras, out, &err)
              : loom_model_save_ex(net, &extras, out, &err);
  loom_model_extras_clear(&extras);
  loom_net_free(net);
  if (rc) {
    cli_error("convert", "%s", err.message);
    return 1;
  }
  struct stat sb;
  long long size = stat(out, &sb) == 0 ? (long long)sb.st_size : 0;
  printf(ngettext("wrote %s (%lld byte)\n", "wrote %s (%lld bytes)\n", (unsigned long)size), out, size);
  return 0;
}
