/*
 * Reading the model file (docs/file-format.md). Strict: every member is
 * checked for type and range, sizes are checked before anything is
 * allocated, and every error names the source and the JSON path or the grid
 * coordinates. On error nothing is returned.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/model-format.h"
#include "io/model-read.h"
#include "io/model-training.h"
#include "io/safetensors-internal.h"
#include "loom/file.h"
#include "loom/model.h"

static int read_coord(jr *r, JsonObject *o, const char *key, const loom_net *net, loom_coord *out) {
  JsonArray *a;
  int rc = jr_get_array(r, o, key, &a);
  if (rc) return rc;
  size_t mark = jr_push_key(r, key);
  if (json_array_get_length(a) != 4)
    return jr_fail(r, LOOM_ERR_FORMAT, _("expected 4 coordinates [z, y, x, l], found %u values"),
                   json_array_get_length(a));
  int64_t v[4];
  for (guint i = 0; i < 4; i++) {
    size_t m = jr_push_index(r, i);
    if ((rc = jr_int(r, json_array_get_element(a, i), 0, INT32_MAX, &v[i]))) return rc;
    jr_pop(r, m);
  }
  loom_coord c = {(int)v[0], (int)v[1], (int)v[2], (int)v[3]};
  if (!loom_net_contains(net, c)) {
    char where[64];
    return jr_fail(r, LOOM_ERR_RANGE, _("%s is outside the grid of %d×%d×%d cells with %d layers per cell"),
                   loom_coord_format(c, where, sizeof where), loom_net_depth(net), loom_net_rows(net),
                   loom_net_cols(net), loom_net_layers_per_cell(net));
  }
  jr_pop(r, mark);
  *out = c;
  return LOOM_OK;
}

static int read_header(jr *r, JsonObject *root, loom_net **out) {
  static const char *const members[] = {"format", "version", "grid", "input_shape", "execution", "slots", "links",
                                        "training", NULL};
  static const char *const grid_members[] = {"depth", "rows", "cols", "layers_per_cell", NULL};
  const char *format;
  int64_t version;
  int rc;
  if ((rc = jr_check_members(r, root, members)) || (rc = jr_get_string(r, root, "format", &format))) return rc;
  if (strcmp(format, MODEL_FORMAT_NAME) != 0) {
    size_t mark = jr_push_key(r, "format");
    rc = jr_fail(r, LOOM_ERR_FORMAT, _("expected “%s”, found “%s”"), MODEL_FORMAT_NAME, format);
    jr_pop(r, mark);
    return rc;
  }
  if ((rc = jr_get_int(r, root, "version", INT64_MIN, INT64_MAX, &version))) return rc;
  if (version < 1 || version > LOOM_MODEL_FORMAT_VERSION) {
    size_t mark = jr_push_key(r, "version");
    rc = version > LOOM_MODEL_FORMAT_VERSION
           ? jr_fail(r, LOOM_ERR_UNSUPPORTED, _("format version %lld is newer than this loom reads (up to %d)"),
                     (long long)version, LOOM_MODEL_FORMAT_VERSION)
           : jr_fail(r, LOOM_ERR_FORMAT, _("format version %lld does not exist"), (long long)version);
    jr_pop(r, mark);
    return rc;
  }
  JsonObject *g;
  if ((rc = jr_get_object(r, root, "grid", &g))) return rc;
  size_t mark = jr_push_key(r, "grid");
  int64_t dims[4];
  if ((rc = jr_check_members(r, g, grid_members))) return rc;
  for (int i = 0; i < 4; i++)
    if ((rc = jr_get_int(r, g, grid_members[i], 1, MODEL_MAX_GRID_EXTENT, &dims[i]))) return rc;
  loom_net *net = loom_net_new((int)dims[0], (int)dims[1], (int)dims[2], (int)dims[3], r->err);
  if (!net) return jr_wrap(r, r->err ? r->err->code : LOOM_ERR_NOMEM);
  jr_pop(r, mark);

  JsonNode *in;
  loom_shape shape;
  if ((rc = jr_member(r, root, "input_shape", true, &in))) goto fail;
  mark = jr_push_key(r, "input_shape");
  if ((rc = model_read_shape(r, in, true, &shape))) goto fail;
  if (shape.rank > 0 && (rc = loom_net_set_input_shape(net, &shape, r->err))) {
    rc = jr_wrap(r, rc);
    goto fail;
  }
  jr_pop(r, mark);
  /* Optional (absent = feed-forward); read before the links, which it may allow to point backwards. */
  JsonNode *exec_node;
  if ((rc = jr_member(r, root, "execution", false, &exec_node))) goto fail;
  if (exec_node) {
    const char *name;
    loom_execution mode;
    mark = jr_push_key(r, "execution");
    if ((rc = jr_string(r, exec_node, &name))) goto fail;
    if ((rc = loom_execution_from_name(name, &mode, r->err)) || (rc = loom_net_set_execution(net, mode, r->err))) {
      rc = jr_wrap(r, rc);
      goto fail;
    }
    jr_pop(r, mark);
  }
  *out = net;
  return LOOM_OK;
fail:
  loom_net_free(net);
  return rc;
}

/* What the loader remembers per slot to check after shape inference. */
typedef struct {
  loom_coord at;
  loom_shape file_in_shape; /* rank 0: the file has no weights for it */
} slot_record;

static int read_slots(jr *r, JsonObject *root, loom_net *net, slot_record **records, guint *n_records) {
  static const char *const members[] = {"at", "enabled", "layer", NULL};
  JsonArray *a;
  int rc = jr_get_array(r, root, "slots", &a);
  if (rc) return rc;
  size_t mark = jr_push_key(r, "slots");
  guint n = json_array_get_length(a);
  if ((int64_t)n > loom_net_n_slots(net))
    return jr_fail(r, LOOM_ERR_RANGE, _("%u slots listed, but the grid has only %lld"), n,
                   (long long)loom_net_n_slots(net));
  slot_record *rec = calloc(n ? n : 1, sizeof *rec);
  if (!rec) return jr_fail(r, LOOM_ERR_NOMEM, _("out of memory"));
  *records = rec;
  *n_records = 0;
  for (guint i = 0; i < n; i++) {
    size_t m = jr_push_index(r, i);
    JsonObject *o;
    bool enabled;
    loom_coord c;
    JsonNode *ln;
    if ((rc = jr_object(r, json_array_get_element(a, i), &o)) || (rc = jr_check_members(r, o, members)) ||
        (rc = read_coord(r, o, "at", net, &c)) || (rc = jr_get_bool(r, o, "enabled", &enabled)) ||
        (rc = jr_member(r, o, "layer", true, &ln)))
      return rc;
    if (loom_net_layer_at(net, c)) {
      char where[64];
      guint first = 0;
      for (guint k = 0; k < *n_records; k++)
        if (memcmp(&rec[k].at, &c, sizeof c) == 0) first = k;
      size_t at_mark = jr_push_key(r, "at");
      rc = jr_fail(r, LOOM_ERR_FORMAT, _("slot %s is already taken by $.slots[%u]"),
                   loom_coord_format(c, where, sizeof where), first);
      jr_pop(r, at_mark);
      return rc;
    }
    size_t lm = jr_push_key(r, "layer");
    if (r->tensors) model_tensors_set_slot(r->tensors, c);
    loom_layer *l;
    if ((rc = model_read_layer(r, ln, 0, true, &l, &rec[i].file_in_shape))) return rc;
    jr_pop(r, lm);
    if ((rc = loom_net_place(net, c, l, r->err))) {
      loom_layer_free(l);
      return jr_wrap(r, rc);
    }
    rec[i].at = c;
    *n_records = i + 1;
    if (!enabled && (rc = loom_net_set_enabled(net, c, false, r->err))) return jr_wrap(r, rc);
    jr_pop(r, m);
  }
  jr_pop(r, mark);
  return LOOM_OK;
}

static int read_links(jr *r, JsonObject *root, loom_net *net) {
  static const char *const members[] = {"src", "dst", "merge", NULL};
  JsonArray *a;
  int rc = jr_get_array(r, root, "links", &a);
  if (rc) return rc;
  size_t mark = jr_push_key(r, "links");
  for (guint i = 0; i < json_array_get_length(a); i++) {
    size_t m = jr_push_index(r, i);
    JsonObject *o;
    loom_link k;
    const char *merge;
    if ((rc = jr_object(r, json_array_get_element(a, i), &o)) || (rc = jr_check_members(r, o, members)) ||
        (rc = read_coord(r, o, "src", net, &k.src)) || (rc = read_coord(r, o, "dst", net, &k.dst)) ||
        (rc = jr_get_string(r, o, "merge", &merge)))
      return rc;
    const char *ends[2] = {"src", "dst"};
    loom_coord at[2] = {k.src, k.dst};
    for (int e = 0; e < 2; e++) {
      if (loom_net_layer_at(net, at[e])) continue;
      char where[64];
      size_t em = jr_push_key(r, ends[e]);
      rc = jr_fail(r, LOOM_ERR_FORMAT, _("slot %s holds no layer"), loom_coord_format(at[e], where, sizeof where));
      jr_pop(r, em);
      return rc;
    }
    size_t mm = jr_push_key(r, "merge");
    if ((rc = loom_merge_from_name(merge, &k.merge, r->err))) return jr_wrap(r, rc);
    jr_pop(r, mm);
    if ((rc = loom_net_add_link(net, &k, r->err))) return jr_wrap(r, rc);
    jr_pop(r, m);
  }
  jr_pop(r, mark);
  return LOOM_OK;
}

/* The weights in the file were built for the input shape it records; the
 * network must feed exactly that, or they would be silently re-initialised. */
static int check_inferred_inputs(jr *r, loom_net *net, const slot_record *rec, guint n) {
  for (guint i = 0; i < n; i++) {
    if (rec[i].file_in_shape.rank == 0) continue;
    loom_layer *l = loom_net_layer_at(net, rec[i].at);
    if (!loom_layer_is_built(l)) continue; /* a shape problem there; diagnostics report it */
    loom_shape got = loom_layer_in_shape(l);
    if (loom_shape_equal(&got, &rec[i].file_in_shape)) continue;
    char where[64], a[96], b[96];
    size_t m = jr_push_key(r, "slots");
    jr_push_index(r, i);
    size_t k = jr_push_key(r, "layer");
    jr_push_key(r, "in_shape");
    int rc = jr_fail(r, LOOM_ERR_SHAPE, _("the layer at %s was saved for input %s, but the network feeds it %s"),
                     loom_coord_format(rec[i].at, where, sizeof where),
                     loom_shape_format(&rec[i].file_in_shape, a, sizeof a), loom_shape_format(&got, b, sizeof b));
    jr_pop(r, k);
    jr_pop(r, m);
    return rc;
  }
  return LOOM_OK;
}

/* After shape inference, before anything runs: the weights as built plus one
 * sample's activations (input and every layer's output, float32). */
static int check_memory(jr *r, const loom_net *net) {
  loom_shape in = loom_net_input_shape(net);
  uint64_t acts = (uint64_t)loom_shape_numel(&in), weights = (uint64_t)loom_net_bytes(net);
  weights += (uint64_t)loom_net_bytes_float32(net);
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    const loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, i));
    if (!loom_layer_is_built(l)) continue;
    loom_shape out = loom_layer_out_shape(l);
    acts += (uint64_t)loom_shape_numel(&out); /* each at most 2^62: no overflow in a few thousand */
  }
  if (acts <= (LOOM_MODEL_MAX_MEMORY_BYTES / 4) && weights <= LOOM_MODEL_MAX_MEMORY_BYTES - acts * 4) return LOOM_OK;
  return loom_error_set(r->err, LOOM_ERR_NOMEM,
                        _("%s: the network needs %llu bytes of weights and %llu bytes of activations per sample, "
                          "more than the limit of %llu bytes"),
                        r->source, (unsigned long long)weights,
                        acts > UINT64_MAX / 4 ? (unsigned long long)UINT64_MAX : (unsigned long long)(acts * 4),
                        (unsigned long long)LOOM_MODEL_MAX_MEMORY_BYTES);
}

int model_load_text(const char *json, size_t len, const char *source_name, unsigned flags, model_tensors *tensors,
                    loom_net **out, loom_model_extras *extras, loom_error *err) {
  if (out) *out = NULL;
  if (extras) memset(extras, 0, sizeof *extras);
  const char *source = source_name ? source_name : "<data>";
  if (!json || !out) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: no model text or result given"), source);
  if (flags & ~(unsigned)(LOOM_MODEL_STRICT | LOOM_MODEL_AT_REST))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: unknown load flags 0x%x"), source, flags);
  if (len > LOOM_MODEL_MAX_FILE_BYTES)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: %zu bytes is more than the limit of %zu bytes"), source, len,
                          LOOM_MODEL_MAX_FILE_BYTES);
  jr r;
  jr_init(&r, source, (flags & LOOM_MODEL_STRICT) != 0, err);
  r.tensors = tensors;
  r.at_rest = (flags & LOOM_MODEL_AT_REST) != 0;
  int rc = jr_precheck(&r, json, len, MODEL_MAX_JSON_DEPTH);
  if (rc) return rc;

  JsonParser *parser = json_parser_new_immutable();
  GError *gerr = NULL;
  if (!json_parser_load_from_data(parser, json, (gssize)len, &gerr)) {
    /* json-glib says "<data>:LINE:COL: Parse error: ..." */
    const char *msg = gerr->message;
    if (g_str_has_prefix(msg, "<data>:")) msg += strlen("<data>");
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s%s%s (not valid JSON; is the file truncated?)"), source,
                        msg[0] == ':' ? "" : ": ", msg);
    g_error_free(gerr);
    g_object_unref(parser);
    return rc;
  }
  JsonNode *root = json_parser_get_root(parser);
  JsonObject *ro;
  loom_net *net = NULL;
  slot_record *records = NULL;
  guint n_records = 0;
  if (!root) {
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: the file is empty"), source);
    goto done;
  }
  if ((rc = jr_object(&r, root, &ro)) || (rc = read_header(&r, ro, &net)) ||
      (rc = read_slots(&r, ro, net, &records, &n_records)) || (rc = read_links(&r, ro, net)))
    goto done;
  /* read (and so checked) even when the caller does not want it */
  JsonNode *training = json_object_get_member(ro, "training");
  loom_model_extras x = {0};
  if (training) {
    size_t mark = jr_push_key(&r, "training");
    if ((rc = model_read_training(&r, training, &x))) goto done;
    jr_pop(&r, mark);
  }
  if (extras) *extras = x;
  else loom_model_extras_clear(&x);
  if (loom_net_input_shape(net).rank > 0) {
    /* Problems found here are the network's (loom info lists them), not the file's. */
    loom_diag *diags = NULL;
    loom_net_infer_shapes(net, MODEL_LOAD_SEED, &diags);
    free(diags);
    rc = check_inferred_inputs(&r, net, records, n_records);
    if (rc == LOOM_OK) rc = check_memory(&r, net);
  }
done:
  free(records);
  g_object_unref(parser);
  if (rc) {
    loom_net_free(net);
    loom_model_extras_clear(extras);
    return rc;
  }
  *out = net;
  return LOOM_OK;
}

LOOM_API int loom_model_load_data_ex(const char *json, size_t len, const char *source_name, unsigned flags,
                                     loom_net **out, loom_model_extras *extras, loom_error *err) {
  return model_load_text(json, len, source_name, flags, NULL, out, extras, err);
}

LOOM_API int loom_model_load_data(const char *json, size_t len, const char *source_name, unsigned flags,
                                  loom_net **out, loom_error *err) {
  return loom_model_load_data_ex(json, len, source_name, flags, out, NULL, err);
}

LOOM_API int loom_model_load_ex(const char *path, unsigned flags, loom_net **out, loom_model_extras *extras,
                                loom_error *err) {
  if (out) *out = NULL;
  if (extras) memset(extras, 0, sizeof *extras);
  if (!path) return loom_error_set(err, LOOM_ERR_INVALID, _("no model file given"));
  if (loom_model_file_is_safetensors(path)) return loom_model_load_safetensors(path, flags, out, extras, err);
  char *text;
  size_t len;
  int rc = loom_file_read_all(path, LOOM_MODEL_MAX_FILE_BYTES, &text, &len, err);
  if (rc) return rc;
  rc = loom_model_load_data_ex(text, len, path, flags, out, extras, err);
  free(text);
  if (rc || !extras || !extras->settings) return rc;
  /* a relative CSV path in the settings is relative to the model file */
  extras->settings->data.base_dir = g_path_get_dirname(path);
  return rc;
}

LOOM_API int loom_model_load(const char *path, unsigned flags, loom_net **out, loom_error *err) {
  return loom_model_load_ex(path, flags, out, NULL, err);
}
