/*
 * loom info MODEL: the grid, every slot (coordinates, type, shapes, dtype,
 * hyperparameters, size), the links, totals and every shape problem. Exit
 * status 1 when shape inference finds a problem, so scripts can check models.
 * loom info --devices: the Vulkan devices (the N of --device vulkan:N).
 * loom info MODEL --inference: the same after putting the weights at rest
 * (loom_net_to_inference), so "resident now" is what loom forward --inference
 * holds; without it, what a model loaded for training holds.
 */
#include <glib/gi18n.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loom/gpu.h>
#include <loom/safetensors.h>

#include "cli-model.h"
#include "commands.h"

int cmd_info(int argc, char **argv);

/* "in_features=2 out_features=4 bias=true" */
static void format_params(const loom_layer *l, GString *s) {
  const loom_layer_type *t = loom_layer_get_type(l);
  for (int i = 0; i < loom_layer_type_n_params(t); i++) {
    const loom_param_spec *p = loom_layer_type_param(t, i);
    loom_param_value v = loom_layer_get_value(l, i);
    char num[40];
    if (i) g_string_append_c(s, ' ');
    g_string_append_printf(s, "%s=", p->name);
    switch (p->kind) {
    case LOOM_PARAM_INT: g_string_append_printf(s, "%lld", (long long)v.i[0]); break;
    case LOOM_PARAM_FLOAT:
      cli_format_double(num, sizeof num, v.f);
      g_string_append(s, num);
      break;
    case LOOM_PARAM_BOOL: g_string_append(s, v.i[0] ? "true" : "false"); break;
    case LOOM_PARAM_ENUM: g_string_append(s, p->choices[v.i[0]]); break;
    case LOOM_PARAM_INTS:
      for (int k = 0; k < p->count && k < LOOM_PARAM_MAX_INTS; k++)
        g_string_append_printf(s, k ? ",%lld" : "%lld", (long long)v.i[k]);
      break;
    case LOOM_PARAM_FLOATS: {
      int64_t n = 0;
      loom_layer_get_floats(l, p->name, &n);
      g_string_append_printf(s, ngettext("[%lld value]", "[%lld values]", (unsigned long)n), (long long)n);
      break;
    }
    }
  }
}

/* A container's children and gate, one line each, indented by depth. */
static void print_children(const loom_layer *l, int depth) {
  int n = loom_layer_n_children(l);
  for (int c = 0; c <= n; c++) {
    const loom_layer *sub = c < n ? loom_layer_child(l, c) : loom_layer_gate(l);
    if (!sub) continue;
    GString *params = g_string_new(NULL);
    format_params(sub, params);
    char what[32];
    if (c < n) snprintf(what, sizeof what, _("child %d"), c);
    else snprintf(what, sizeof what, "%s", _("gate"));
    printf("%*s%s: %s %s  %s\n", 13 + 2 * depth, "", what, loom_layer_type_name(loom_layer_get_type(sub)),
           loom_dtype_name(loom_layer_get_dtype(sub)), params->str);
    g_string_free(params, TRUE);
    print_children(sub, depth + 1);
  }
}

static void print_slot(loom_net *net, loom_coord c) {
  loom_layer *l = loom_net_layer_at(net, c);
  char at[64], in[96], out[96], desc[256];
  loom_shape si = loom_layer_in_shape(l), so = loom_layer_out_shape(l);
  printf("  %-11s %-10s %s → %s  %s  ", loom_coord_format(c, at, sizeof at),
         loom_layer_type_name(loom_layer_get_type(l)), loom_shape_format(&si, in, sizeof in),
         loom_shape_format(&so, out, sizeof out), loom_dtype_name(loom_layer_get_dtype(l)));
  long long np = (long long)loom_layer_param_count(l);
  printf(ngettext("%lld parameter", "%lld parameters", (unsigned long)np), np);
  printf(", ");
  printf(ngettext("%zu byte", "%zu bytes", (unsigned long)loom_layer_bytes(l)), loom_layer_bytes(l));
  if (!loom_net_is_enabled(net, c)) printf("  %s", _("(disabled)"));
  printf("\n");
  GString *params = g_string_new(NULL);
  format_params(l, params);
  printf("%13s%s\n", "", loom_layer_describe(l, desc, sizeof desc));
  if (params->len) printf("%13s%s\n", "", params->str);
  g_string_free(params, TRUE);
  print_children(l, 0);
}

/* A safetensors file that holds no Loom network: its tensors and metadata
 * keys. Returns -1 when the file does hold a network (described as usual). */
static int describe_plain_safetensors(const char *path) {
  loom_error err = {0};
  loom_safetensors *st = NULL;
  if (loom_safetensors_open(path, &st, &err)) {
    cli_error("info", "%s", err.message);
    return 1;
  }
  if (loom_safetensors_metadata(st, LOOM_SAFETENSORS_MODEL_KEY)) {
    loom_safetensors_close(st);
    return -1;
  }
  int64_t n = loom_safetensors_n_tensors(st);
  printf(_("File: %s (safetensors, no Loom network)\n"), path);
  printf(ngettext("%lld tensor:\n", "%lld tensors:\n", (unsigned long)n), (long long)n);
  for (int64_t i = 0; i < n; i++) {
    const loom_st_tensor *t = loom_safetensors_tensor(st, i);
    GString *shape = g_string_new("[");
    for (int k = 0; k < t->rank; k++) g_string_append_printf(shape, k ? ", %lld" : "%lld", (long long)t->shape[k]);
    g_string_append_c(shape, ']');
    unsigned long long bytes = (unsigned long long)(t->end - t->begin);
    printf("  %s  %s %s  ", t->name, t->dtype, shape->str);
    printf(ngettext("%llu byte", "%llu bytes", (unsigned long)bytes), bytes);
    printf("\n");
    g_string_free(shape, TRUE);
  }
  loom_safetensors_close(st);
  return 0;
}

/* Every device the Vulkan loader sees, in its order (what vulkan:N counts). */
static int list_devices(void) {
  loom_error err = {0};
  loom_gpu_device_info *list = NULL;
  int n = 0;
  if (loom_gpu_list_devices(&list, &n, &err)) {
    cli_error("info", "%s", err.message);
    return 1;
  }
  printf(ngettext("%d Vulkan device:\n", "%d Vulkan devices:\n", (unsigned long)n), n);
  for (int i = 0; i < n; i++) {
    const loom_gpu_device_info *d = &list[i];
    printf("  vulkan:%d  %s  [%s]  Vulkan %u.%u.%u  vendor 0x%04x device 0x%04x", d->index, d->name,
           loom_gpu_kind_name(d->kind), d->api_major, d->api_minor, d->api_patch, d->vendor_id, d->device_id);
    if (d->driver[0]) printf("  %s", d->driver);
    if (!d->has_compute) printf("  %s", _("(no compute queue: unusable)"));
    printf("\n");
  }
  free(list);
  return 0;
}

int cmd_info(int argc, char **argv) {
  const char *path = NULL;
  bool inference = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--inference")) {
      inference = true;
      continue;
    }
    if (!strcmp(argv[i], "--devices")) {
      if (argc != 2) return cli_usage_error("info", _("--devices takes no MODEL"));
      return list_devices();
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("info", _("unknown option '%s'"), argv[i]);
    if (path) return cli_usage_error("info", _("unexpected argument '%s'"), argv[i]);
    path = argv[i];
  }
  if (!path) return cli_usage_error("info", _("missing MODEL"));
  if (loom_model_file_is_safetensors(path)) {
    int rc = describe_plain_safetensors(path);
    if (rc >= 0) return rc;
  }
  loom_net *net = cli_load_model_flags("info", path, inference ? LOOM_MODEL_AT_REST : 0);
  if (!net) return 1;

  loom_diag *diags = NULL;
  int n_diags = 0;
  loom_shape in = loom_net_input_shape(net);
  if (in.rank > 0) n_diags = loom_net_infer_shapes(net, 0, &diags);
  loom_error err = {0};
  if (inference && loom_net_to_inference(net, &err)) {
    cli_error("info", "%s: %s", path, err.message);
    free(diags);
    loom_net_free(net);
    return 1;
  }
  char text[96], text2[96];

  printf(_("Model: %s\n"), path);
  int64_t slots = loom_net_n_slots(net);
  int per_cell = loom_net_layers_per_cell(net);
  char cell_text[64], slot_text[64];
  snprintf(cell_text, sizeof cell_text, ngettext("%d layer per cell", "%d layers per cell", (unsigned long)per_cell),
           per_cell);
  snprintf(slot_text, sizeof slot_text, ngettext("%lld slot", "%lld slots", (unsigned long)slots), (long long)slots);
  /* TRANSLATORS: the last two are "%d layer(s) per cell" and "%lld slot(s)" */
  printf(_("Grid: depth %d, rows %d, columns %d, %s (%s)\n"), loom_net_depth(net), loom_net_rows(net),
         loom_net_cols(net), cell_text, slot_text);
  printf(_("Input shape: %s\n"), loom_shape_format(&in, text, sizeof text));
  loom_shape out = n_diags == 0 && in.rank > 0 ? loom_net_output_shape(net) : (loom_shape){0};
  printf(_("Output shape: %s\n"), loom_shape_format(&out, text, sizeof text));
  if (loom_net_execution(net) == LOOM_EXEC_SYSTOLIC) /* feed-forward networks keep their listing unchanged */
    printf("%s\n", _("Execution: systolic (tick by tick; feedback links allowed)"));

  int64_t n = loom_net_n_layers(net);
  printf("\n");
  printf(ngettext("%lld layer:\n", "%lld layers:\n", (unsigned long)n), (long long)n);
  for (int64_t i = 0; i < n; i++) print_slot(net, loom_net_layer_coord(net, i));

  int nl = loom_net_n_links(net);
  printf("\n");
  printf(ngettext("%d link:\n", "%d links:\n", (unsigned long)nl), nl);
  for (int i = 0; i < nl; i++) {
    const loom_link *k = loom_net_link(net, i);
    printf("  %s → %s  %s\n", loom_coord_format(k->src, text, sizeof text),
           loom_coord_format(k->dst, text2, sizeof text2), loom_merge_name(k->merge));
  }

  printf("\n%s\n", _("Totals:"));
  printf(_("  parameters: %lld\n"), (long long)loom_net_param_count(net));
  printf(_("  bytes: %zu at the layers' dtypes, %zu at float32\n"), loom_net_bytes(net), loom_net_bytes_float32(net));
  printf(_("  FLOPs per sample: %lld\n"), (long long)loom_net_flops(net));
  /* Weight stores and gradients: what is allocated now (at rest with --inference), and the two figures. */
  printf(_("  resident bytes: %zu now (%s); %zu at rest for inference, %zu while training\n"),
         loom_net_resident_bytes(net), inference ? _("at rest") : _("as loaded"), loom_net_inference_bytes(net),
         loom_net_training_bytes(net));

  printf("\n");
  if (in.rank == 0) {
    printf("%s\n", _("Problems: the input shape is not set, so no shapes can be inferred"));
    n_diags = 1;
  } else if (n_diags == 0) {
    printf("%s\n", _("Problems: none"));
  } else {
    printf(ngettext("%d problem:\n", "%d problems:\n", (unsigned long)n_diags), n_diags);
    for (int i = 0; i < n_diags; i++) {
      if (diags[i].has_other)
        printf("  %s ← %s: %s\n", loom_coord_format(diags[i].at, text, sizeof text),
               loom_coord_format(diags[i].other, text2, sizeof text2), diags[i].message);
      else
        printf("  %s: %s\n", loom_coord_format(diags[i].at, text, sizeof text), diags[i].message);
    }
  }
  free(diags);
  loom_net_free(net);
  return n_diags > 0 ? 1 : 0;
}
