/*
 * Reading safetensors files: 8 bytes of little-endian header length, the
 * header (a JSON object: "__metadata__" with string values, and per tensor
 * {"dtype", "shape", "data_offsets"}), then the data. Nothing in the header
 * is trusted before it is checked against the file: the length against the
 * file size and LOOM_SAFETENSORS_MAX_HEADER_BYTES, each tensor's shape
 * (overflow-checked) and dtype against its byte range, and the ranges
 * against each other — they must tile the data exactly, as the reference
 * library requires. The file is mapped (GMappedFile), never copied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/json-read.h"
#include "io/safetensors-internal.h"

struct loom_safetensors {
  GMappedFile *map; /* NULL when opened over caller data */
  const uint8_t *bytes;
  size_t len;
  const uint8_t *data; /* the data section */
  uint64_t data_len;
  loom_st_tensor *tensors;
  int64_t n;
  GHashTable *by_name;  /* name → index + 1 */
  GHashTable *metadata; /* key → value (owned strings) */
  GStringChunk *strings; /* tensor names */
};

/* The format's dtypes and their element sizes (the reference library's list). */
static const struct {
  const char *name;
  size_t size;
} st_dtypes[] = {
  {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
  {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8},
};

LOOM_API size_t loom_safetensors_dtype_size(const char *dtype) {
  for (size_t i = 0; dtype && i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
    if (strcmp(dtype, st_dtypes[i].name) == 0) return st_dtypes[i].size;
  return 0;
}

static const char *st_dtype_static(const char *dtype) {
  for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
    if (strcmp(dtype, st_dtypes[i].name) == 0) return st_dtypes[i].name;
  return NULL;
}

/* Derived from the dtype traits (the only list of Loom dtypes). */
LOOM_API const char *loom_safetensors_dtype_for(loom_dtype d) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  if (!t) return NULL;
  if (t->bits < 8) return "U8";
  static const char *const ints[2][4] = {{"I8", "I16", "I32", "I64"}, {"U8", "U16", "U32", "U64"}};
  int w = t->bits == 8 ? 0 : t->bits == 16 ? 1 : t->bits == 32 ? 2 : 3;
  switch (t->kind) {
  case LOOM_DTYPE_KIND_SIGNED: return ints[0][w];
  case LOOM_DTYPE_KIND_UNSIGNED: return ints[1][w];
  case LOOM_DTYPE_KIND_FLOAT:
    if (t->bits == 8) return t->exp_bits == 4 ? "F8_E4M3" : "F8_E5M2";
    if (t->bits == 16) return t->exp_bits == 8 ? "BF16" : "F16";
    return t->bits == 32 ? "F32" : "F64";
  default: return NULL; /* ternary and binary are below a byte */
  }
}

static uint64_t read_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static int read_tensor(jr *r, loom_safetensors *st, const char *name, JsonNode *node, loom_st_tensor *t) {
  static const char *const members[] = {"dtype", "shape", "data_offsets", NULL};
  JsonObject *o;
  const char *dtype;
  JsonArray *shape, *offs;
  int rc;
  if ((rc = jr_object(r, node, &o)) || (rc = jr_check_members(r, o, members)) ||
      (rc = jr_get_string(r, o, "dtype", &dtype)) || (rc = jr_get_array(r, o, "shape", &shape)) ||
      (rc = jr_get_array(r, o, "data_offsets", &offs)))
    return rc;
  t->name = g_string_chunk_insert(st->strings, name);
  t->dtype = st_dtype_static(dtype);
  if (!t->dtype)
    return loom_error_set(r->err, LOOM_ERR_UNSUPPORTED, _("%s: tensor “%s” has the unknown dtype “%s”"), r->source,
                          name, dtype);
  size_t mark = jr_push_key(r, "shape");
  guint rank = json_array_get_length(shape);
  if (rank > LOOM_SAFETENSORS_MAX_RANK)
    return jr_fail(r, LOOM_ERR_SHAPE, _("tensor “%s” has %u dimensions, at most %d are supported"), name, rank,
                   LOOM_SAFETENSORS_MAX_RANK);
  t->rank = (int)rank;
  uint64_t numel = 1;
  bool overflow = false;
  for (guint i = 0; i < rank; i++) {
    size_t m = jr_push_index(r, i);
    if ((rc = jr_int(r, json_array_get_element(shape, i), 0, INT64_MAX, &t->shape[i]))) return rc;
    jr_pop(r, m);
    if (t->shape[i] && numel > UINT64_MAX / (uint64_t)t->shape[i]) overflow = true;
    else numel *= (uint64_t)t->shape[i];
  }
  jr_pop(r, mark);
  mark = jr_push_key(r, "data_offsets");
  if (json_array_get_length(offs) != 2)
    return jr_fail(r, LOOM_ERR_FORMAT, _("expected 2 offsets [begin, end], found %u values"),
                   json_array_get_length(offs));
  int64_t be[2];
  for (guint i = 0; i < 2; i++) {
    size_t m = jr_push_index(r, i);
    if ((rc = jr_int(r, json_array_get_element(offs, i), 0, INT64_MAX, &be[i]))) return rc;
    jr_pop(r, m);
  }
  jr_pop(r, mark);
  t->begin = (uint64_t)be[0];
  t->end = (uint64_t)be[1];
  size_t esize = loom_safetensors_dtype_size(t->dtype);
  if (overflow || numel > UINT64_MAX / esize)
    return loom_error_set(r->err, LOOM_ERR_SHAPE, _("%s: tensor “%s”: the shape's size overflows 64 bits"),
                          r->source, name);
  if (t->end < t->begin)
    return loom_error_set(r->err, LOOM_ERR_FORMAT, _("%s: tensor “%s” ends (byte %llu) before it begins (byte %llu)"),
                          r->source, name, (unsigned long long)t->end, (unsigned long long)t->begin);
  if (t->end > st->data_len)
    return loom_error_set(r->err, LOOM_ERR_FORMAT,
                          _("%s: tensor “%s” ends at byte %llu of the data, but the data has only %llu bytes"),
                          r->source, name, (unsigned long long)t->end, (unsigned long long)st->data_len);
  if (numel * esize != t->end - t->begin)
    return loom_error_set(r->err, LOOM_ERR_SHAPE,
                          _("%s: tensor “%s”: %llu %s values take %llu bytes, but its offsets hold %llu"), r->source,
                          name, (unsigned long long)numel, t->dtype, (unsigned long long)(numel * esize),
                          (unsigned long long)(t->end - t->begin));
  return LOOM_OK;
}

static int read_metadata(jr *r, loom_safetensors *st, JsonNode *node) {
  JsonObject *o;
  int rc = jr_object(r, node, &o);
  if (rc) return rc;
  GList *members = json_object_get_members(o);
  for (GList *m = members; m && rc == LOOM_OK; m = m->next) {
    const char *key = m->data, *value;
    size_t mark = jr_push_key(r, key);
    /* The format allows only strings here. */
    rc = jr_string(r, json_object_get_member(o, key), &value);
    if (rc == LOOM_OK) {
      g_hash_table_replace(st->metadata, g_strdup(key), g_strdup(value));
      jr_pop(r, mark);
    }
  }
  g_list_free(members);
  return rc;
}

static int by_offset(const void *a, const void *b) {
  const loom_st_tensor *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* The ranges must tile [0, data_len): sorted by begin, each starts where the
 * one before ends. Empty tensors may sit anywhere in the sequence. */
static int check_coverage(jr *r, loom_safetensors *st) {
  qsort(st->tensors, (size_t)st->n, sizeof *st->tensors, by_offset);
  uint64_t at = 0;
  const char *prev = NULL;
  for (int64_t i = 0; i < st->n; i++) {
    const loom_st_tensor *t = &st->tensors[i];
    if (t->begin < at)
      return loom_error_set(r->err, LOOM_ERR_FORMAT,
                            _("%s: tensor “%s” begins at byte %llu of the data, inside tensor “%s” (ends at %llu): "
                              "tensors overlap"),
                            r->source, t->name, (unsigned long long)t->begin, prev, (unsigned long long)at);
    if (t->begin > at)
      return loom_error_set(r->err, LOOM_ERR_FORMAT,
                            _("%s: tensor “%s” begins at byte %llu of the data, leaving bytes %llu..%llu to no "
                              "tensor"),
                            r->source, t->name, (unsigned long long)t->begin, (unsigned long long)at,
                            (unsigned long long)t->begin - 1);
    at = t->end;
    prev = t->name;
  }
  if (at != st->data_len)
    return loom_error_set(r->err, LOOM_ERR_FORMAT,
                          _("%s: the data has %llu bytes, but the tensors cover only %llu (trailing bytes)"),
                          r->source, (unsigned long long)st->data_len, (unsigned long long)at);
  for (int64_t i = 0; i < st->n; i++)
    g_hash_table_insert(st->by_name, (gpointer)st->tensors[i].name, GSIZE_TO_POINTER((gsize)i + 1));
  return LOOM_OK;
}

static int parse_header(loom_safetensors *st, const char *source, loom_error *err) {
  if (st->len < 8)
    return loom_error_set(err, LOOM_ERR_FORMAT,
                          _("%s: %zu bytes is too short for a safetensors file (8 bytes of header length first)"),
                          source, st->len);
  uint64_t hlen = read_le64(st->bytes);
  if (hlen > LOOM_SAFETENSORS_MAX_HEADER_BYTES)
    return loom_error_set(err, LOOM_ERR_FORMAT,
                          _("%s: the header length %llu is more than the limit of %llu bytes (not a safetensors "
                            "file?)"),
                          source, (unsigned long long)hlen, (unsigned long long)LOOM_SAFETENSORS_MAX_HEADER_BYTES);
  if (hlen > st->len - 8)
    return loom_error_set(err, LOOM_ERR_FORMAT,
                          _("%s: the header length %llu goes beyond the end of the file (%zu bytes; is it "
                            "truncated?)"),
                          source, (unsigned long long)hlen, st->len);
  if (hlen < 2 || st->bytes[8] != '{')
    return loom_error_set(err, LOOM_ERR_FORMAT, _("%s: the safetensors header does not begin with “{”"), source);
  st->data = st->bytes + 8 + hlen;
  st->data_len = st->len - 8 - hlen;

  const char *text = (const char *)st->bytes + 8;
  jr r;
  jr_init(&r, source, true, err);
  /* The header is {"name": {"shape": [...]}}: three levels. */
  int rc = jr_precheck(&r, text, (size_t)hlen, 3);
  if (rc) return rc;
  JsonParser *parser = json_parser_new_immutable();
  GError *gerr = NULL;
  if (!json_parser_load_from_data(parser, text, (gssize)hlen, &gerr)) {
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: the safetensors header is not valid JSON: %s"), source,
                        gerr->message);
    g_error_free(gerr);
    g_object_unref(parser);
    return rc;
  }
  JsonObject *root;
  if ((rc = jr_object(&r, json_parser_get_root(parser), &root))) goto done;
  guint n = json_object_get_size(root);
  st->tensors = calloc(n ? n : 1, sizeof *st->tensors);
  if (!st->tensors) {
    rc = loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), source);
    goto done;
  }
  GList *members = json_object_get_members(root);
  for (GList *m = members; m && rc == LOOM_OK; m = m->next) {
    const char *name = m->data;
    JsonNode *node = json_object_get_member(root, name);
    size_t mark = jr_push_key(&r, name);
    if (strcmp(name, "__metadata__") == 0) rc = read_metadata(&r, st, node);
    else if (!*name) rc = jr_fail(&r, LOOM_ERR_FORMAT, _("a tensor has an empty name"));
    else rc = read_tensor(&r, st, name, node, &st->tensors[st->n++]);
    jr_pop(&r, mark);
  }
  g_list_free(members);
  if (rc == LOOM_OK) rc = check_coverage(&r, st);
done:
  g_object_unref(parser);
  return rc;
}

static loom_safetensors *st_new(void) {
  loom_safetensors *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  st->by_name = g_hash_table_new(g_str_hash, g_str_equal);
  st->metadata = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  st->strings = g_string_chunk_new(256);
  return st;
}

LOOM_API void loom_safetensors_close(loom_safetensors *st) {
  if (!st) return;
  if (st->map) g_mapped_file_unref(st->map);
  free(st->tensors);
  g_hash_table_destroy(st->by_name);
  g_hash_table_destroy(st->metadata);
  g_string_chunk_free(st->strings);
  free(st);
}

LOOM_API int loom_safetensors_open_data(const void *data, size_t len, const char *source, loom_safetensors **out,
                                        loom_error *err) {
  if (out) *out = NULL;
  if (!source) source = "<data>";
  if (!out || (!data && len))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: no data or result given"), source);
  loom_safetensors *st = st_new();
  if (!st) return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), source);
  st->bytes = data;
  st->len = len;
  int rc = parse_header(st, source, err);
  if (rc) {
    loom_safetensors_close(st);
    return rc;
  }
  *out = st;
  return LOOM_OK;
}

LOOM_API int loom_safetensors_open(const char *path, loom_safetensors **out, loom_error *err) {
  if (out) *out = NULL;
  if (!path || !out) return loom_error_set(err, LOOM_ERR_INVALID, _("no safetensors file given"));
  GError *gerr = NULL;
  GMappedFile *map = g_mapped_file_new(path, FALSE, &gerr);
  if (!map) {
    int rc = loom_error_set(err, LOOM_ERR_IO, _("%s: cannot open: %s"), path, gerr->message);
    g_error_free(gerr);
    return rc;
  }
  const void *bytes = g_mapped_file_get_contents(map);
  size_t len = g_mapped_file_get_length(map);
  int rc = loom_safetensors_open_data(bytes ? bytes : "", bytes ? len : 0, path, out, err);
  if (rc) {
    g_mapped_file_unref(map);
    return rc;
  }
  (*out)->map = map;
  return LOOM_OK;
}

LOOM_API int64_t loom_safetensors_n_tensors(const loom_safetensors *st) { return st ? st->n : 0; }

LOOM_API const loom_st_tensor *loom_safetensors_tensor(const loom_safetensors *st, int64_t i) {
  return st && i >= 0 && i < st->n ? &st->tensors[i] : NULL;
}

int64_t safetensors_index(const loom_safetensors *st, const char *name) {
  gpointer v = g_hash_table_lookup(st->by_name, name);
  return v ? (int64_t)GPOINTER_TO_SIZE(v) - 1 : -1;
}

LOOM_API const loom_st_tensor *loom_safetensors_find(const loom_safetensors *st, const char *name) {
  return st && name ? loom_safetensors_tensor(st, safetensors_index(st, name)) : NULL;
}

LOOM_API const uint8_t *loom_safetensors_data(const loom_safetensors *st, const loom_st_tensor *t) {
  return st && t ? st->data + t->begin : NULL;
}

LOOM_API const char *loom_safetensors_metadata(const loom_safetensors *st, const char *key) {
  return st && key ? g_hash_table_lookup(st->metadata, key) : NULL;
}

void model_tensors_set_slot(model_tensors *t, loom_coord c) {
  snprintf(t->prefix, sizeof t->prefix, "slot.%d.%d.%d.%d.", c.z, c.y, c.x, c.l);
}
