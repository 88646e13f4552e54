/*
 * Import of plain PyTorch weights (docs/safetensors.md, "Importing a state
 * dict"): the tensors of any safetensors file, named as a state dict, copied
 * into the float32 masters of a network's weights by a mapping (tensor name →
 * slot + weight path) or, without one, by the nn.Sequential rule. The file
 * goes through the validated reader (safetensors-read.c); nothing here parses
 * its bytes beyond converting values.
 *
 * A failed import leaves the network untouched: every check and conversion
 * runs before the first master is written, and should a morph still fail
 * while writing, the masters already written are restored.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/json-read.h"
#include "io/safetensors-internal.h"
#include "loom/file.h"
#include "loom/layer.h"
#include "loom/weights.h"

/* A mapping file is a few lines per tensor; this bounds a hostile one. */
#define IMPORT_MAP_MAX_BYTES ((size_t)16 << 20)
#define IMPORT_MAP_MAX_DEPTH 8
#define IMPORT_MAP_MAX_ENTRIES 100000
/* The highest N of an "N.name" tensor the nn.Sequential rule accepts. */
#define IMPORT_MAX_INDEX 1000000000LL

typedef struct {
  char *tensor; /* g_strdup */
  loom_coord at;
  char *weight; /* g_strdup: the weight's path in the layer, "weight", "children[1].bias" */
} import_entry;

struct loom_import_map {
  GArray *entries; /* import_entry */
};

static void entry_clear(gpointer p) {
  import_entry *e = p;
  g_free(e->tensor);
  g_free(e->weight);
}

static loom_import_map *map_new(void) {
  loom_import_map *m = g_new0(loom_import_map, 1);
  m->entries = g_array_new(FALSE, FALSE, sizeof(import_entry));
  g_array_set_clear_func(m->entries, entry_clear);
  return m;
}

static void map_add(loom_import_map *m, const char *tensor, loom_coord at, const char *weight) {
  import_entry e = {g_strdup(tensor), at, g_strdup(weight)};
  g_array_append_val(m->entries, e);
}

LOOM_API void loom_import_map_free(loom_import_map *map) {
  if (!map) return;
  g_array_free(map->entries, TRUE);
  g_free(map);
}

LOOM_API int64_t loom_import_map_n_entries(const loom_import_map *map) { return map ? (int64_t)map->entries->len : 0; }

static int read_entry(jr *r, const char *tensor, JsonNode *node, loom_import_map *m) {
  static const char *const allowed[] = {"at", "weight", NULL};
  JsonObject *o;
  JsonArray *at;
  const char *weight;
  int rc;
  if ((rc = jr_object(r, node, &o)) || (rc = jr_check_members(r, o, allowed)) ||
      (rc = jr_get_array(r, o, "at", &at)) || (rc = jr_get_string(r, o, "weight", &weight)))
    return rc;
  size_t mark = jr_push_key(r, "at");
  if (json_array_get_length(at) != 4) {
    rc = jr_fail(r, LOOM_ERR_FORMAT, _("the slot must be four coordinates [z, y, x, l], not %u values"),
                 json_array_get_length(at));
    jr_pop(r, mark);
    return rc;
  }
  int64_t v[4];
  for (guint k = 0; k < 4; k++) {
    size_t m2 = jr_push_index(r, k);
    if ((rc = jr_int(r, json_array_get_element(at, k), 0, INT32_MAX, &v[k]))) return rc;
    jr_pop(r, m2);
  }
  jr_pop(r, mark);
  if (!weight[0]) {
    mark = jr_push_key(r, "weight");
    rc = jr_fail(r, LOOM_ERR_FORMAT, _("the weight name is empty"));
    jr_pop(r, mark);
    return rc;
  }
  map_add(m, tensor, (loom_coord){(int)v[0], (int)v[1], (int)v[2], (int)v[3]}, weight);
  return LOOM_OK;
}

LOOM_API int loom_import_map_parse(const char *text, size_t len, const char *source, loom_import_map **out,
                                   loom_error *err) {
  if (out) *out = NULL;
  if (!source) source = "<mapping>";
  if (!text || !out) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: no mapping text given"), source);
  jr r;
  jr_init(&r, source, true, err);
  int rc = jr_precheck(&r, text, len, IMPORT_MAP_MAX_DEPTH);
  if (rc) return rc;
  JsonParser *parser = json_parser_new_immutable();
  GError *gerr = NULL;
  if (!json_parser_load_from_data(parser, text, (gssize)len, &gerr)) {
    const char *msg = gerr->message;
    if (g_str_has_prefix(msg, "<data>:")) msg += strlen("<data>");
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s%s%s (not valid JSON)"), source, msg[0] == ':' ? "" : ": ", msg);
    g_error_free(gerr);
    g_object_unref(parser);
    return rc;
  }
  JsonNode *root = json_parser_get_root(parser);
  JsonObject *ro;
  loom_import_map *m = map_new();
  if (!root) {
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: the mapping is empty"), source);
  } else if (!(rc = jr_object(&r, root, &ro))) {
    guint n = json_object_get_size(ro);
    if (n == 0) rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: the mapping maps no tensor"), source);
    else if (n > IMPORT_MAP_MAX_ENTRIES)
      rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: the mapping has %u entries, more than the limit of %d"), source,
                          n, IMPORT_MAP_MAX_ENTRIES);
    JsonObjectIter it;
    const char *key;
    JsonNode *node;
    json_object_iter_init(&it, ro);
    while (rc == LOOM_OK && json_object_iter_next(&it, &key, &node)) {
      size_t mark = jr_push_key(&r, key);
      rc = read_entry(&r, key, node, m);
      jr_pop(&r, mark);
    }
  }
  g_object_unref(parser);
  if (rc) loom_import_map_free(m);
  else *out = m;
  return rc;
}

LOOM_API int loom_import_map_load(const char *path, loom_import_map **out, loom_error *err) {
  if (out) *out = NULL;
  char *text;
  size_t len;
  int rc = loom_file_read_all(path, IMPORT_MAP_MAX_BYTES, &text, &len, err);
  if (rc) return rc;
  rc = loom_import_map_parse(text, len, path, out, err);
  free(text);
  return rc;
}

/* "[8, 4]" */
static void format_shape(char *buf, size_t size, const int64_t *shape, int rank) {
  size_t n = (size_t)snprintf(buf, size, "[");
  for (int k = 0; k < rank && n < size; k++)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", k ? ", " : "", (long long)shape[k]);
  if (n < size) snprintf(buf + n, size - n, "]");
}

static gint cmp_int64(gconstpointer a, gconstpointer b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/*
 * The nn.Sequential rule: every tensor is "N.name"; the distinct N in
 * ascending order go to the layers with weights in flat (spine) order, and
 * each such layer takes "N.<path>" for every one of its weights.
 */
static int auto_map(const loom_net *net, const loom_safetensors *st, const char *source, loom_import_map **out,
                    loom_error *err) {
  int64_t n = loom_safetensors_n_tensors(st);
  GArray *idx = g_array_new(FALSE, FALSE, sizeof(int64_t));
  GHashTable *seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  int rc = LOOM_OK;
  for (int64_t i = 0; i < n; i++) {
    const char *name = loom_safetensors_tensor(st, i)->name;
    char *end = NULL;
    long long v = g_ascii_isdigit(name[0]) ? g_ascii_strtoll(name, &end, 10) : -1;
    if (v < 0 || v > IMPORT_MAX_INDEX || *end != '.' || !end[1]) {
      rc = loom_error_set(err, LOOM_ERR_FORMAT,
                          _("%s: tensor “%s” is not named like an entry of an nn.Sequential state dict "
                            "(“N.weight”); give a mapping"),
                          source, name);
      break;
    }
    int64_t k = v;
    g_array_append_val(idx, k);
    int64_t *key = &g_array_index(idx, int64_t, idx->len - 1);
    if (g_hash_table_contains(seen, key)) g_array_set_size(idx, idx->len - 1);
    else g_hash_table_add(seen, g_memdup2(key, sizeof *key));
  }
  g_hash_table_destroy(seen);
  if (rc) {
    g_array_free(idx, TRUE);
    return rc;
  }
  g_array_sort(idx, cmp_int64);
  GArray *layers = g_array_new(FALSE, FALSE, sizeof(loom_coord));
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_coord c = loom_net_layer_coord(net, i);
    if (loom_layer_n_weights(loom_net_layer_at(net, c)) > 0) g_array_append_val(layers, c);
  }
  if (layers->len != idx->len) {
    rc = loom_error_set(err, LOOM_ERR_SHAPE,
                        _("%s: the file holds the weights of %u layers (distinct “N.” prefixes) but the network "
                          "has %u layers with weights; give a mapping"),
                        source, idx->len, layers->len);
  } else {
    loom_import_map *m = map_new();
    for (guint k = 0; k < idx->len; k++) {
      loom_coord c = g_array_index(layers, loom_coord, k);
      loom_layer *l = loom_net_layer_at(net, c);
      for (int w = 0; w < loom_layer_n_weights(l); w++) {
        char path[256];
        loom_layer_weights_path(l, w, path, sizeof path);
        char *tensor = g_strdup_printf("%lld.%s", (long long)g_array_index(idx, int64_t, k), path);
        map_add(m, tensor, c, path);
        g_free(tensor);
      }
    }
    *out = m;
  }
  g_array_free(layers, TRUE);
  g_array_free(idx, TRUE);
  return rc;
}

/* One mapped weight, checked and converted, ready to be written. */
typedef struct {
  loom_weights *w;
  float *values; /* the tensor as float32, rows × cols */
  float *backup; /* the master before writing (phase 2) */
} import_job;

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) {
    uint32_t bits = sign | 0x7f800000u | (man << 13);
    float f;
    memcpy(&f, &bits, 4);
    return f;
  }
  /* subnormals and zero: man · 2^-24 exactly; normals: (1024 + man) · 2^(exp-25) */
  float mag = exp ? ldexpf((float)(1024 + man), (int)exp - 25) : ldexpf((float)man, -24);
  return sign ? -mag : mag;
}

/* Little-endian values of dtype `dt` (F64, F32, F16, BF16) to float32. */
static void convert(const char *dt, const uint8_t *p, int64_t n, float *out) {
  for (int64_t i = 0; i < n; i++) {
    if (!strcmp(dt, "F32")) {
      uint32_t b = 0;
      for (int k = 3; k >= 0; k--) b = b << 8 | p[4 * i + k];
      memcpy(&out[i], &b, 4);
    } else if (!strcmp(dt, "F64")) {
      uint64_t b = 0;
      for (int k = 7; k >= 0; k--) b = b << 8 | p[8 * i + k];
      double d;
      memcpy(&d, &b, 8);
      out[i] = (float)d;
    } else if (!strcmp(dt, "F16")) {
      out[i] = half_to_float((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
    } else { /* BF16: the high half of a float32 */
      uint32_t b = (uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16;
      memcpy(&out[i], &b, 4);
    }
  }
}

static bool dtype_importable(const char *dt) {
  return !strcmp(dt, "F64") || !strcmp(dt, "F32") || !strcmp(dt, "F16") || !strcmp(dt, "BF16");
}

/* The weight of `l` whose path is `name`, or -1. */
static int find_weight(loom_layer *l, const char *name) {
  for (int k = 0; k < loom_layer_n_weights(l); k++) {
    char path[256];
    if (!strcmp(loom_layer_weights_path(l, k, path, sizeof path), name)) return k;
  }
  return -1;
}

/* "weight, bias" */
static char *weight_list(loom_layer *l) {
  GString *s = g_string_new(NULL);
  for (int k = 0; k < loom_layer_n_weights(l); k++) {
    char path[256];
    g_string_append_printf(s, "%s%s", k ? ", " : "", loom_layer_weights_path(l, k, path, sizeof path));
  }
  return g_string_free(s, FALSE);
}

/* Phase 1 for one entry: every check, then the values converted. */
static int prepare(loom_net *net, const loom_safetensors *st, const char *source, const import_entry *e,
                   bool *used, import_job *job, loom_error *err) {
  char at[64];
  loom_coord_format(e->at, at, sizeof at);
  int64_t ti = safetensors_index(st, e->tensor);
  if (ti < 0)
    return loom_error_set(err, LOOM_ERR_FORMAT,
                          _("%s: no tensor “%s” in the file (wanted for the weight “%s” of the layer at %s)"), source,
                          e->tensor, e->weight, at);
  const loom_st_tensor *t = loom_safetensors_tensor(st, ti);
  loom_layer *l = loom_net_contains(net, e->at) ? loom_net_layer_at(net, e->at) : NULL;
  if (!l)
    return loom_error_set(err, LOOM_ERR_RANGE, _("%s: tensor “%s” is mapped to %s, where the network has no layer"),
                          source, e->tensor, at);
  const char *type = loom_layer_type_name(loom_layer_get_type(l));
  if (!loom_layer_is_built(l))
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("%s: tensor “%s” is mapped to the %s layer at %s, which has no weights yet (the network "
                            "needs an input shape)"),
                          source, e->tensor, type, at);
  int k = find_weight(l, e->weight);
  if (k < 0) {
    char *list = weight_list(l);
    int rc = loom_error_set(err, LOOM_ERR_FORMAT,
                            _("%s: tensor “%s” is mapped to the weight “%s” of the %s layer at %s, which has none of "
                              "that name (its weights: %s)"),
                            source, e->tensor, e->weight, type, at, list[0] ? list : "-");
    g_free(list);
    return rc;
  }
  if (!dtype_importable(t->dtype))
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                          _("%s: tensor “%s” holds %s values; only F64, F32, F16 and BF16 tensors can be imported"),
                          source, e->tensor, t->dtype);
  loom_weights *w = loom_layer_weights(l, k);
  int64_t rows = loom_weights_rows(w), cols = loom_weights_cols(w), rest = 1;
  for (int d = 1; d < t->rank; d++) rest *= t->shape[d]; /* the reader checked the product */
  /* torch's layout: a vector for a one-row weight, else [rows, ...] with the
   * trailing dimensions flattened into the columns (conv [out, in/groups, k...]). */
  bool fits = t->rank == 1 ? rows == 1 && t->shape[0] == cols : t->rank >= 2 && t->shape[0] == rows && rest == cols;
  if (!fits) {
    char ts[160], ws[64];
    format_shape(ts, sizeof ts, t->shape, t->rank);
    int64_t wshape[2] = {rows, cols};
    format_shape(ws, sizeof ws, rows == 1 ? wshape + 1 : wshape, rows == 1 ? 1 : 2);
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: tensor “%s” has shape %s but the weight “%s” of the %s layer at %s has shape %s"),
                          source, e->tensor, ts, e->weight, type, at, ws);
  }
  if (used[ti])
    return loom_error_set(err, LOOM_ERR_FORMAT, _("%s: tensor “%s” is mapped twice"), source, e->tensor);
  used[ti] = true;
  job->w = w;
  job->values = malloc((size_t)(rows * cols) * sizeof(float));
  if (!job->values) return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), source);
  convert(t->dtype, loom_safetensors_data(st, t), rows * cols, job->values);
  for (int64_t i = 0; i < rows * cols; i++)
    if (!isfinite(job->values[i]))
      return loom_error_set(err, LOOM_ERR_NONFINITE,
                            _("%s: tensor “%s” holds %s at element %lld (as float32); weights must be finite"), source,
                            e->tensor, isnan(job->values[i]) ? "NaN" : "infinity", (long long)i);
  return LOOM_OK;
}

LOOM_API int loom_import_state_dict_from(loom_net *net, const loom_safetensors *st, const char *source,
                                         const loom_import_map *map, unsigned flags, loom_error *err) {
  if (!source) source = "<safetensors>";
  if (!net || !st) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: no network or file given"), source);
  loom_import_map *own = NULL;
  int rc = LOOM_OK;
  if (!map) {
    if ((rc = auto_map(net, st, source, &own, err))) return rc;
    map = own;
  }
  int64_t n_tensors = loom_safetensors_n_tensors(st);
  guint n = map->entries->len;
  bool *used = calloc((size_t)(n_tensors ? n_tensors : 1), sizeof(bool));
  import_job *jobs = calloc(n ? n : 1, sizeof *jobs);
  if (!used || !jobs) rc = loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), source);
  for (guint i = 0; rc == LOOM_OK && i < n; i++) {
    rc = prepare(net, st, source, &g_array_index(map->entries, import_entry, i), used, &jobs[i], err);
    for (guint j = 0; rc == LOOM_OK && j < i; j++)
      if (jobs[j].w == jobs[i].w) {
        const import_entry *a = &g_array_index(map->entries, import_entry, j);
        const import_entry *b = &g_array_index(map->entries, import_entry, i);
        char at[64];
        rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: tensors “%s” and “%s” are both mapped to the weight “%s” of "
                                                    "the layer at %s"),
                            source, a->tensor, b->tensor, b->weight, loom_coord_format(b->at, at, sizeof at));
      }
  }
  for (int64_t i = 0; rc == LOOM_OK && !(flags & LOOM_IMPORT_IGNORE_UNMAPPED) && i < n_tensors; i++)
    if (!used[i])
      rc = loom_error_set(err, LOOM_ERR_FORMAT,
                          _("%s: tensor “%s” is mapped to no weight of the network (map it, or ignore unmapped "
                            "tensors)"),
                          source, loom_safetensors_tensor(st, i)->name);
  /* Phase 2: write. Everything that can fail on the file's side has been
   * checked; a morph that fails all the same (memory) puts the old masters back. */
  guint written = 0;
  for (; rc == LOOM_OK && written < n; written++) {
    import_job *j = &jobs[written];
    size_t bytes = (size_t)loom_weights_count(j->w) * sizeof(float);
    j->backup = malloc(bytes);
    if (!j->backup) {
      rc = loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), source);
      break;
    }
    memcpy(j->backup, loom_weights_master_const(j->w), bytes);
    memcpy(loom_weights_master(j->w), j->values, bytes);
    loom_weights_touch(j->w);
    if ((rc = loom_weights_morph(j->w, err))) {
      loom_error_prefix(err, "%s", source);
      written++;
      break;
    }
  }
  if (rc)
    for (guint i = 0; i < written; i++)
      if (jobs[i].backup) {
        memcpy(loom_weights_master(jobs[i].w), jobs[i].backup, (size_t)loom_weights_count(jobs[i].w) * sizeof(float));
        loom_weights_touch(jobs[i].w);
        loom_weights_morph(jobs[i].w, NULL); /* the old values morphed before */
      }
  for (guint i = 0; jobs && i < n; i++) {
    free(jobs[i].values);
    free(jobs[i].backup);
  }
  free(jobs);
  free(used);
  loom_import_map_free(own);
  return rc;
}

LOOM_API int loom_import_state_dict(loom_net *net, const char *path, const loom_import_map *map, unsigned flags,
                                    loom_error *err) {
  loom_safetensors *st;
  int rc = loom_safetensors_open(path, &st, err);
  if (rc) return rc;
  rc = loom_import_state_dict_from(net, st, path, map, flags, err);
  loom_safetensors_close(st);
  return rc;
}
