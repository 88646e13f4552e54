/*
 * Reading one layer of the model file: its type and hyperparameters through
 * the type's loom_param_spec table (so every registered type is covered
 * without knowing it), containers recursively, and the packed weights.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/base64.h"
#include "io/model-format.h"
#include "io/model-read.h"
#include "io/safetensors-internal.h"
#include "loom/model.h"

int model_read_shape(jr *r, JsonNode *node, bool allow_empty, loom_shape *out) {
  JsonArray *a;
  int rc = jr_array(r, node, &a);
  if (rc) return rc;
  guint n = json_array_get_length(a);
  if ((n == 0 && !allow_empty) || n > LOOM_MAX_DIMS)
    return jr_fail(r, LOOM_ERR_SHAPE, _("expected %d to %d sizes, found %u"), allow_empty ? 0 : 1, LOOM_MAX_DIMS, n);
  loom_shape s = {.rank = (int)n};
  int64_t numel = 1;
  for (guint i = 0; i < n; i++) {
    size_t mark = jr_push_index(r, i);
    rc = jr_int(r, json_array_get_element(a, i), 1, MODEL_MAX_INPUT_NUMEL, &s.d[i]);
    if (rc) return rc;
    if (numel > MODEL_MAX_INPUT_NUMEL / s.d[i]) {
      jr_pop(r, mark);
      return jr_fail(r, LOOM_ERR_NOMEM, _("the shape holds more than %lld values per sample"),
                     (long long)MODEL_MAX_INPUT_NUMEL);
    }
    numel *= s.d[i];
    jr_pop(r, mark);
  }
  *out = s;
  return LOOM_OK;
}

/* Integer bounds of a spec, clamped to what int64 holds. */
static int64_t spec_int_bound(double v, bool upper) {
  if (upper) return v >= 9.2e18 ? INT64_MAX : (int64_t)floor(v);
  return v <= -9.2e18 ? INT64_MIN : (int64_t)ceil(v);
}

static int read_param(jr *r, loom_layer *l, int index, const loom_param_spec *s, JsonNode *n) {
  loom_param_value v = {0};
  int rc;
  switch (s->kind) {
  case LOOM_PARAM_INT:
    if ((rc = jr_int(r, n, spec_int_bound(s->min, false), spec_int_bound(s->max, true), &v.i[0]))) return rc;
    break;
  case LOOM_PARAM_FLOAT:
    if ((rc = jr_double(r, n, s->min, s->max, &v.f))) return rc;
    break;
  case LOOM_PARAM_BOOL: {
    bool b;
    if ((rc = jr_bool(r, n, &b))) return rc;
    v.i[0] = b;
    break;
  }
  case LOOM_PARAM_ENUM: {
    const char *choice;
    if ((rc = jr_string(r, n, &choice))) return rc;
    if ((rc = loom_layer_set_enum(l, s->name, choice, r->err))) return jr_wrap(r, rc);
    return LOOM_OK;
  }
  case LOOM_PARAM_INTS: {
    JsonArray *a;
    if ((rc = jr_array(r, n, &a))) return rc;
    if ((int)json_array_get_length(a) != s->count)
      return jr_fail(r, LOOM_ERR_FORMAT, _("expected %d integers, found %u values"), s->count,
                     json_array_get_length(a));
    for (int k = 0; k < s->count && k < LOOM_PARAM_MAX_INTS; k++) {
      size_t mark = jr_push_index(r, k);
      if ((rc = jr_int(r, json_array_get_element(a, (guint)k), spec_int_bound(s->min, false),
                       spec_int_bound(s->max, true), &v.i[k])))
        return rc;
      jr_pop(r, mark);
    }
    break;
  }
  case LOOM_PARAM_FLOATS: {
    JsonArray *a;
    if ((rc = jr_array(r, n, &a))) return rc;
    guint count = json_array_get_length(a);
    /* Unbounded specs (min == max) still need values a float32 holds. */
    double lo = s->min < s->max ? s->min : -FLT_MAX, hi = s->min < s->max ? s->max : FLT_MAX;
    float *f = malloc((count ? count : 1) * sizeof *f);
    if (!f) return jr_fail(r, LOOM_ERR_NOMEM, _("out of memory for %u values"), count);
    for (guint k = 0; k < count; k++) {
      size_t mark = jr_push_index(r, k);
      double d;
      if ((rc = jr_double(r, json_array_get_element(a, k), lo, hi, &d))) {
        free(f);
        return rc;
      }
      f[k] = (float)d;
      jr_pop(r, mark);
    }
    rc = loom_layer_set_floats(l, s->name, f, count, r->err);
    free(f);
    return rc ? jr_wrap(r, rc) : LOOM_OK;
  }
  }
  rc = loom_layer_set_value(l, index, &v, r->err);
  return rc ? jr_wrap(r, rc) : LOOM_OK;
}

static int read_params(jr *r, loom_layer *l, JsonObject *layer_obj) {
  const loom_layer_type *t = loom_layer_get_type(l);
  JsonObject *po;
  int rc = jr_get_object(r, layer_obj, "params", &po);
  if (rc) return rc;
  size_t mark = jr_push_key(r, "params");
  int np = loom_layer_type_n_params(t);
  const char **names = calloc((size_t)np + 1, sizeof *names);
  if (!names) return jr_fail(r, LOOM_ERR_NOMEM, _("out of memory"));
  for (int i = 0; i < np; i++) names[i] = loom_layer_type_param(t, i)->name;
  /* Unknown parameters are errors even when not strict: the type would
   * silently compute something other than what the file describes. */
  bool strict = r->strict;
  r->strict = true;
  rc = jr_check_members(r, po, names);
  r->strict = strict;
  free(names);
  for (int i = 0; i < np && rc == LOOM_OK; i++) {
    const loom_param_spec *s = loom_layer_type_param(t, i);
    JsonNode *n;
    if ((rc = jr_member(r, po, s->name, !s->file_optional, &n))) break;
    if (!n) continue; /* an older file: the layer keeps the spec's default */
    size_t m = jr_push_key(r, s->name);
    rc = read_param(r, l, i, s, n);
    if (rc == LOOM_OK) jr_pop(r, m);
  }
  if (rc == LOOM_OK) jr_pop(r, mark);
  return rc;
}

/* One entry of "weights", checked against the file's own sizes before
 * anything is allocated for it. */
typedef struct {
  const char *name;
  int64_t rows, cols;
  loom_dtype dtype;
  loom_scale_mode mode;
  size_t nbytes;
  int64_t nscales;
  const char *data, *scales;
  const uint8_t *bin, *bin_scales; /* from a safetensors file instead of data/scales */
} weight_entry;

static int read_scale_mode(jr *r, JsonObject *o, loom_scale_mode *out) {
  const char *s;
  int rc = jr_get_string(r, o, "scale_mode", &s);
  if (rc) return rc;
  if (strcmp(s, "per_row") == 0) *out = LOOM_SCALE_PER_ROW;
  else if (strcmp(s, "per_tensor") == 0) *out = LOOM_SCALE_PER_TENSOR;
  else {
    size_t mark = jr_push_key(r, "scale_mode");
    rc = jr_fail(r, LOOM_ERR_FORMAT, _("unknown scale mode “%s” (expected per_row or per_tensor)"), s);
    jr_pop(r, mark);
    return rc;
  }
  return LOOM_OK;
}

/* The tensor `name` of the safetensors file, checked against what the entry
 * needs: its dtype's safetensors name and [rows, row bytes or cols]. */
static int take_tensor(jr *r, const char *name, const char *want_dtype, int64_t d0, int64_t d1, int rank,
                       const uint8_t **out) {
  model_tensors *t = r->tensors;
  char full[sizeof t->prefix + MODEL_WEIGHT_NAME_MAX + 16];
  snprintf(full, sizeof full, "%s%s", t->prefix, name);
  int64_t i = safetensors_index(t->st, full);
  if (i < 0) return jr_fail(r, LOOM_ERR_FORMAT, _("the file has no tensor “%s”"), full);
  const loom_st_tensor *st = loom_safetensors_tensor(t->st, i);
  int64_t want[2] = {d0, d1};
  bool ok = strcmp(st->dtype, want_dtype) == 0 && st->rank == rank;
  for (int k = 0; ok && k < rank; k++) ok = st->shape[k] == want[k];
  if (!ok) {
    char have[160] = "", need[64];
    for (int k = 0; k < st->rank; k++)
      g_snprintf(have + strlen(have), sizeof have - strlen(have), "%s%lld", k ? ", " : "", (long long)st->shape[k]);
    if (rank == 2) snprintf(need, sizeof need, "%lld, %lld", (long long)d0, (long long)d1);
    else snprintf(need, sizeof need, "%lld", (long long)d0);
    return jr_fail(r, LOOM_ERR_SHAPE, _("tensor “%s” is %s [%s], the weight needs %s [%s]"), full, st->dtype, have,
                   want_dtype, need);
  }
  if (t->used[i]) return jr_fail(r, LOOM_ERR_FORMAT, _("tensor “%s” is used by two weights"), full);
  t->used[i] = true;
  *out = loom_safetensors_data(t->st, st);
  return LOOM_OK;
}

static int read_tensor_entry(jr *r, weight_entry *e) {
  const loom_dtype_traits *tr = loom_dtype_traits_get(e->dtype);
  int64_t d1 = tr->bits < 8 ? (int64_t)loom_dtype_row_bytes(e->dtype, e->cols) : e->cols;
  int rc = take_tensor(r, e->name, loom_safetensors_dtype_for(e->dtype), e->rows, d1, 2, &e->bin);
  if (rc || !tr->scaled) return rc;
  e->nscales = loom_dtype_scale_count(e->dtype, e->rows, e->mode);
  char sname[MODEL_WEIGHT_NAME_MAX + 16];
  snprintf(sname, sizeof sname, "%s" SAFETENSORS_SCALES_SUFFIX, e->name);
  return take_tensor(r, sname, "F32", e->nscales, 0, 1, &e->bin_scales);
}

static int read_weight_entry(jr *r, JsonNode *node, weight_entry *e) {
  static const char *const members[] = {"name", "rows", "cols", "dtype", "scale_mode", "data", "scales", NULL};
  static const char *const tensor_members[] = {"name", "rows", "cols", "dtype", "scale_mode", NULL};
  JsonObject *o;
  int rc;
  const char *dname;
  if ((rc = jr_object(r, node, &o)) || (rc = jr_check_members(r, o, r->tensors ? tensor_members : members)) ||
      (rc = jr_get_string(r, o, "name", &e->name)) || (rc = jr_get_int(r, o, "rows", 1, INT64_MAX, &e->rows)) ||
      (rc = jr_get_int(r, o, "cols", 1, INT64_MAX, &e->cols)) || (rc = jr_get_string(r, o, "dtype", &dname)) ||
      (rc = read_scale_mode(r, o, &e->mode)) || (!r->tensors && (rc = jr_get_string(r, o, "data", &e->data))))
    return rc;
  size_t mark = jr_push_key(r, "dtype");
  if ((rc = loom_dtype_from_name(dname, &e->dtype, r->err))) return jr_wrap(r, rc);
  jr_pop(r, mark);
  mark = jr_push_key(r, "rows");
  if ((rc = loom_dtype_packed_bytes(e->dtype, e->rows, e->cols, &e->nbytes, r->err))) return jr_wrap(r, rc);
  jr_pop(r, mark);
  if (r->tensors) return read_tensor_entry(r, e);
  /* The text must hold exactly the bytes the sizes call for; this bounds every
   * later allocation by the size of the file. */
  size_t want, have = strlen(e->data);
  char why[160];
  mark = jr_push_key(r, "data");
  if (!base64_encoded_len(e->nbytes, &want) || have != want) {
    snprintf(why, sizeof why, _("expected %zu base64 characters for %lld × %lld %s values (%zu bytes), found %zu"),
             want, (long long)e->rows, (long long)e->cols, loom_dtype_name(e->dtype), e->nbytes, have);
    return jr_fail(r, LOOM_ERR_SHAPE, "%s", why);
  }
  jr_pop(r, mark);
  bool scaled = loom_dtype_traits_get(e->dtype)->scaled;
  e->nscales = loom_dtype_scale_count(e->dtype, e->rows, e->mode);
  JsonNode *sn = json_object_get_member(o, "scales");
  mark = jr_push_key(r, "scales");
  if (!scaled) {
    if (sn) return jr_fail(r, LOOM_ERR_FORMAT, _("%s has no scales; remove this member"), dname);
    e->scales = NULL;
  } else {
    if (!sn) return jr_fail(r, LOOM_ERR_FORMAT, _("required member is missing (%s needs scales)"), dname);
    if ((rc = jr_string(r, sn, &e->scales))) return rc;
    have = strlen(e->scales);
    base64_encoded_len((size_t)e->nscales * sizeof(float), &want);
    if (have != want)
      return jr_fail(r, LOOM_ERR_SHAPE, _("expected %zu base64 characters for %lld float32 scales, found %zu"), want,
                     (long long)e->nscales, have);
  }
  jr_pop(r, mark);
  return LOOM_OK;
}

/* Decodes the entry into the built layer's weight store `index`. */
static int load_weight(jr *r, loom_layer *l, int index, const weight_entry *e) {
  loom_weights *w = loom_layer_weights(l, index);
  char name[MODEL_WEIGHT_NAME_MAX];
  loom_layer_weights_path(l, index, name, sizeof name);
  int rc;
  if (strcmp(name, e->name) != 0) {
    size_t mark = jr_push_key(r, "name");
    rc = jr_fail(r, LOOM_ERR_FORMAT, _("the layer's weight %d is “%s”, the file names “%s”"), index, name, e->name);
    jr_pop(r, mark);
    return rc;
  }
  if (loom_weights_rows(w) != e->rows || loom_weights_cols(w) != e->cols) {
    size_t mark = jr_push_key(r, loom_weights_rows(w) != e->rows ? "rows" : "cols");
    rc = jr_fail(r, LOOM_ERR_SHAPE, _("the layer builds “%s” as %lld × %lld for its input shape, the file has %lld × %lld"),
                 name, (long long)loom_weights_rows(w), (long long)loom_weights_cols(w), (long long)e->rows,
                 (long long)e->cols);
    jr_pop(r, mark);
    return rc;
  }
  /* A mapped safetensors tensor is used in place; its scales are copied,
   * since the file does not align them. */
  uint8_t *bytes = e->bin ? NULL : malloc(e->nbytes ? e->nbytes : 1);
  float *scales = e->nscales ? malloc((size_t)e->nscales * sizeof *scales) : NULL;
  char why[160];
  if ((!e->bin && !bytes) || (e->nscales && !scales)) {
    rc = jr_fail(r, LOOM_ERR_NOMEM, _("out of memory for %zu bytes of weights"), e->nbytes);
    goto done;
  }
  if (e->bin) {
    if (e->nscales) memcpy(scales, e->bin_scales, (size_t)e->nscales * sizeof *scales);
    goto load;
  }
  size_t mark = jr_push_key(r, "data");
  if (!base64_decode_exact(e->data, strlen(e->data), bytes, e->nbytes, why, sizeof why)) {
    rc = jr_fail(r, LOOM_ERR_FORMAT, "%s", why);
    goto done;
  }
  jr_pop(r, mark);
  if (e->nscales) {
    mark = jr_push_key(r, "scales");
    if (!base64_decode_exact(e->scales, strlen(e->scales), scales, (size_t)e->nscales * sizeof *scales, why,
                             sizeof why)) {
      rc = jr_fail(r, LOOM_ERR_FORMAT, "%s", why);
      goto done;
    }
    jr_pop(r, mark);
  }
load:
  /* The mode first: loading keeps the packed copy, and a later mode change
   * would throw it away. */
  if ((rc = loom_weights_set_scale_mode(w, e->mode, r->err)) ||
      (rc = loom_weights_load_packed(w, e->dtype, e->bin ? e->bin : bytes, e->nbytes, scales, e->nscales, r->err)) ||
      (r->at_rest && (rc = loom_weights_to_inference(w, r->err))))
    rc = jr_wrap(r, rc);
done:
  free(bytes);
  free(scales);
  return rc;
}

static int read_weights(jr *r, loom_layer *l, JsonObject *o, loom_shape *in_shape) {
  JsonNode *in_node, *w_node;
  int rc;
  if ((rc = jr_member(r, o, "in_shape", false, &in_node)) || (rc = jr_member(r, o, "weights", false, &w_node)))
    return rc;
  if (!in_node && !w_node) return LOOM_OK; /* not built when saved */
  if (!in_node || !w_node) {
    size_t mark = jr_push_key(r, in_node ? "weights" : "in_shape");
    rc = jr_fail(r, LOOM_ERR_FORMAT, _("required member is missing (in_shape and weights come together)"));
    jr_pop(r, mark);
    return rc;
  }
  size_t mark = jr_push_key(r, "in_shape");
  if ((rc = model_read_shape(r, in_node, false, in_shape))) return rc;
  jr_pop(r, mark);

  JsonArray *a;
  mark = jr_push_key(r, "weights");
  if ((rc = jr_array(r, w_node, &a))) return rc;
  guint n = json_array_get_length(a);
  weight_entry *entries = calloc(n ? n : 1, sizeof *entries);
  if (!entries) return jr_fail(r, LOOM_ERR_NOMEM, _("out of memory"));
  for (guint i = 0; i < n && rc == LOOM_OK; i++) {
    size_t m = jr_push_index(r, i);
    rc = read_weight_entry(r, json_array_get_element(a, i), &entries[i]);
    if (rc == LOOM_OK) jr_pop(r, m);
  }
  if (rc) goto done;
  jr_pop(r, mark);

  /* What the entries will take (master, packed copy, scales), against the
   * limit before anything is built; their sizes are bounded by the file. */
  uint64_t need = 0;
  for (guint i = 0; i < n; i++) {
    uint64_t values;
    if (__builtin_mul_overflow((uint64_t)entries[i].rows, (uint64_t)entries[i].cols, &values) ||
        __builtin_mul_overflow(values, 4, &values) || __builtin_add_overflow(need, values, &need) ||
        __builtin_add_overflow(need, (uint64_t)entries[i].nbytes + 4 * (uint64_t)entries[i].nscales, &need))
      need = UINT64_MAX;
  }
  if (need > LOOM_MODEL_MAX_MEMORY_BYTES - r->weight_bytes) {
    rc = jr_fail(r, LOOM_ERR_NOMEM,
                 _("the weights so far need %llu bytes, more than the limit of %llu bytes for a network"),
                 need == UINT64_MAX ? (unsigned long long)need : (unsigned long long)(r->weight_bytes + need),
                 (unsigned long long)LOOM_MODEL_MAX_MEMORY_BYTES);
    goto done;
  }
  r->weight_bytes += need;
  /* Building allocates the weights the hyperparameters call for at this input. */
  if ((rc = loom_layer_build(l, in_shape, MODEL_LOAD_SEED, r->err))) {
    rc = jr_wrap(r, rc);
    goto done;
  }
  mark = jr_push_key(r, "weights");
  if ((int)n != loom_layer_n_weights(l)) {
    rc = jr_fail(r, LOOM_ERR_SHAPE, _("the layer has %d weight tensors for its input shape, the file gives %u"),
                 loom_layer_n_weights(l), n);
    goto done;
  }
  for (guint i = 0; i < n && rc == LOOM_OK; i++) {
    size_t m = jr_push_index(r, i);
    rc = load_weight(r, l, (int)i, &entries[i]);
    if (rc == LOOM_OK) jr_pop(r, m);
  }
  if (rc == LOOM_OK) jr_pop(r, mark);
done:
  free(entries);
  return rc;
}

int model_read_layer(jr *r, JsonNode *node, int depth, bool top, loom_layer **out, loom_shape *in_shape) {
  static const char *const top_members[] = {"type", "dtype", "params", "children", "gate", "in_shape", "weights", NULL};
  static const char *const child_members[] = {"type", "dtype", "params", "children", "gate", NULL};
  *out = NULL;
  if (in_shape) in_shape->rank = 0;
  if (depth > MODEL_MAX_LAYER_NESTING)
    return jr_fail(r, LOOM_ERR_RANGE, _("containers nest deeper than %d levels"), MODEL_MAX_LAYER_NESTING);
  JsonObject *o;
  const char *type_name, *dtype_name;
  int rc;
  if ((rc = jr_object(r, node, &o)) || (rc = jr_check_members(r, o, top ? top_members : child_members)) ||
      (rc = jr_get_string(r, o, "type", &type_name)))
    return rc;
  const loom_layer_type *t = loom_layer_type_find(type_name);
  if (!t) {
    size_t mark = jr_push_key(r, "type");
    rc = jr_fail(r, LOOM_ERR_FORMAT, _("unknown layer type “%s”"), type_name);
    jr_pop(r, mark);
    return rc;
  }
  loom_layer *l = loom_layer_new(t, r->err);
  if (!l) return jr_wrap(r, r->err ? r->err->code : LOOM_ERR_NOMEM);
  loom_dtype d;
  if ((rc = jr_get_string(r, o, "dtype", &dtype_name))) goto fail;
  size_t mark = jr_push_key(r, "dtype");
  if ((rc = loom_dtype_from_name(dtype_name, &d, r->err)) || (rc = loom_layer_set_dtype(l, d, r->err))) {
    rc = jr_wrap(r, rc);
    goto fail;
  }
  jr_pop(r, mark);
  if ((rc = read_params(r, l, o))) goto fail;

  bool container = (loom_layer_type_flags(t) & LOOM_LAYER_CONTAINER) != 0;
  JsonNode *children = json_object_get_member(o, "children"), *gate = json_object_get_member(o, "gate");
  if (!container && (children || gate)) {
    mark = jr_push_key(r, children ? "children" : "gate");
    rc = jr_fail(r, LOOM_ERR_FORMAT, _("a %s layer is not a container"), type_name);
    goto fail;
  }
  if (container) {
    JsonArray *a;
    if ((rc = jr_get_array(r, o, "children", &a))) goto fail;
    mark = jr_push_key(r, "children");
    for (guint i = 0; i < json_array_get_length(a); i++) {
      size_t m = jr_push_index(r, i);
      loom_layer *child;
      if ((rc = model_read_layer(r, json_array_get_element(a, i), depth + 1, false, &child, NULL))) goto fail;
      if ((rc = loom_layer_add_child(l, child, r->err))) {
        loom_layer_free(child);
        rc = jr_wrap(r, rc);
        goto fail;
      }
      jr_pop(r, m);
    }
    jr_pop(r, mark);
    if (gate) {
      mark = jr_push_key(r, "gate");
      loom_layer *g;
      if ((rc = model_read_layer(r, gate, depth + 1, false, &g, NULL))) goto fail;
      if ((rc = loom_layer_set_gate(l, g, r->err))) {
        loom_layer_free(g);
        rc = jr_wrap(r, rc);
        goto fail;
      }
      jr_pop(r, mark);
    }
  }
  if (top && (rc = read_weights(r, l, o, in_shape))) goto fail;
  *out = l;
  return LOOM_OK;
fail:
  loom_layer_free(l);
  return rc;
}
