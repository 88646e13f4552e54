/*
 * Generic layer instances: creation, hyperparameters (validated against the
 * type's loom_param_spec table), dtype, build, weight accessors across
 * children, totals and container bookkeeping. Type-specific work happens in
 * the family files through the vtable in layer-impl.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "layers/layer-impl.h"

/* ---- creation ---------------------------------------------------------- */

static void param_default(const loom_param_spec *s, loom_param_value *v) {
  memset(v, 0, sizeof *v);
  switch (s->kind) {
  case LOOM_PARAM_FLOAT: v->f = s->def; break;
  case LOOM_PARAM_INTS:
    for (int i = 0; i < s->count && i < LOOM_PARAM_MAX_INTS; i++) v->i[i] = (int64_t)s->def;
    break;
  case LOOM_PARAM_FLOATS: break;
  default: v->i[0] = (int64_t)s->def; break;
  }
}

LOOM_API loom_layer *loom_layer_new(const loom_layer_type *t, loom_error *err) {
  if (!t) {
    loom_error_set(err, LOOM_ERR_INVALID, _("no layer type given"));
    return NULL;
  }
  loom_layer *l = calloc(1, sizeof *l);
  if (!l) goto nomem;
  l->type = t;
  l->dtype = LOOM_DTYPE_FLOAT32;
  if (t->n_params > 0) {
    l->values = calloc((size_t)t->n_params, sizeof *l->values);
    l->floats = calloc((size_t)t->n_params, sizeof *l->floats);
    l->n_floats = calloc((size_t)t->n_params, sizeof *l->n_floats);
    if (!l->values || !l->floats || !l->n_floats) goto nomem;
    for (int i = 0; i < t->n_params; i++) param_default(&t->params[i], &l->values[i]);
  }
  return l;
nomem:
  loom_layer_free(l);
  loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory creating a %s layer"), t->name);
  return NULL;
}

LOOM_API loom_layer *loom_layer_new_by_name(const char *type_name, loom_error *err) {
  const loom_layer_type *t = loom_layer_type_find(type_name);
  if (!t) {
    loom_error_set(err, LOOM_ERR_INVALID, _("unknown layer type “%s”"), type_name ? type_name : "(null)");
    return NULL;
  }
  return loom_layer_new(t, err);
}

static void free_weights(loom_layer *l) {
  for (int i = 0; i < l->n_weights; i++) {
    loom_weights_free(l->weights[i]);
    free(l->grad[i]);
    l->weights[i] = NULL;
    l->grad[i] = NULL;
  }
  l->n_weights = 0;
}

LOOM_API void loom_layer_free(loom_layer *l) {
  if (!l) return;
  if (l->type && l->type->free_state && l->state) l->type->free_state(l);
  free_weights(l);
  for (int i = 0; i < l->n_children; i++) loom_layer_free(l->children[i]);
  free(l->children);
  loom_layer_free(l->gate);
  if (l->floats)
    for (int i = 0; i < l->type->n_params; i++) free(l->floats[i]);
  free(l->floats);
  free(l->n_floats);
  free(l->values);
  free(l);
}

LOOM_API loom_layer *loom_layer_clone(const loom_layer *src, loom_error *err) {
  if (!src) {
    loom_error_set(err, LOOM_ERR_INVALID, _("no layer to copy"));
    return NULL;
  }
  loom_layer *l = loom_layer_new(src->type, err);
  if (!l) return NULL;
  const loom_layer_type *t = src->type;
  if (t->n_params > 0) memcpy(l->values, src->values, (size_t)t->n_params * sizeof *l->values);
  for (int i = 0; i < t->n_params; i++) {
    if (!src->floats[i]) continue;
    l->floats[i] = malloc((size_t)(src->n_floats[i] > 0 ? src->n_floats[i] : 1) * sizeof(float));
    if (!l->floats[i]) goto nomem;
    memcpy(l->floats[i], src->floats[i], (size_t)src->n_floats[i] * sizeof(float));
    l->n_floats[i] = src->n_floats[i];
  }
  l->dtype = src->dtype;
  l->built = src->built;
  l->in_shape = src->in_shape;
  l->out_shape = src->out_shape;
  memcpy(l->coord, src->coord, sizeof l->coord);
  l->has_coord = src->has_coord;
  for (int i = 0; i < src->n_weights; i++) {
    l->weights[i] = loom_weights_clone(src->weights[i], err);
    if (!l->weights[i]) goto fail;
    l->n_weights = i + 1;
    int64_t n = loom_weights_count(src->weights[i]);
    if (src->grad[i]) { /* none at rest (layer-rest.c): the copy rests too */
      l->grad[i] = malloc((size_t)n * sizeof(float));
      if (!l->grad[i]) goto nomem;
      memcpy(l->grad[i], src->grad[i], (size_t)n * sizeof(float));
    }
    l->weight_names[i] = src->weight_names[i];
    l->weight_quantized[i] = src->weight_quantized[i];
  }
  if (src->n_children > 0) {
    l->children = calloc((size_t)src->n_children, sizeof *l->children);
    if (!l->children) goto nomem;
    for (int i = 0; i < src->n_children; i++) {
      l->children[i] = loom_layer_clone(src->children[i], err);
      if (!l->children[i]) goto fail;
      l->n_children = i + 1;
    }
  }
  if (src->gate) {
    l->gate = loom_layer_clone(src->gate, err);
    if (!l->gate) goto fail;
  }
  if (src->state && t->clone_state) {
    int rc = t->clone_state(l, src, err);
    if (rc) goto fail;
  }
  return l;
nomem:
  loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory copying a %s layer"), t->name);
fail:
  loom_layer_free(l);
  return NULL;
}

LOOM_API const loom_layer_type *loom_layer_get_type(const loom_layer *l) { return l ? l->type : NULL; }

LOOM_API bool loom_layer_outputs_probabilities(const loom_layer *l) {
  if (!l) return false;
  if (l->type->outputs_probabilities) return l->type->outputs_probabilities(l);
  return (l->type->flags & LOOM_LAYER_OUTPUTS_PROBABILITIES) != 0;
}

/* ---- hyperparameters --------------------------------------------------- */

static int find_param(const loom_layer *l, const char *name, loom_param_kind kind, bool any_int_kind,
                      loom_error *err) {
  char where[128];
  int i = loom_layer_type_param_index(l->type, name);
  if (i < 0)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s has no parameter “%s”"), layer_where(l, where, sizeof where),
                          name ? name : "(null)");
  loom_param_kind k = l->type->params[i].kind;
  bool ok = k == kind || (any_int_kind && (k == LOOM_PARAM_INT || k == LOOM_PARAM_BOOL));
  if (!ok)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “%s” is not of the kind being set"),
                          layer_where(l, where, sizeof where), name);
  return i;
}

static int check_bounds(const loom_layer *l, const loom_param_spec *s, double v, loom_error *err) {
  char where[128];
  if (!isfinite(v))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “%s” must be a finite number"),
                          layer_where(l, where, sizeof where), s->name);
  if (v < s->min || v > s->max)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “%s” must be between %.9g and %.9g, got %.9g"),
                          layer_where(l, where, sizeof where), s->name, s->min, s->max, v);
  return LOOM_OK;
}

/* A change of a hyperparameter invalidates the build unless the spec says it
 * is read at run time only. */
static void mark_changed(loom_layer *l, const loom_param_spec *s) {
  if (!s->runtime) l->built = false;
}

LOOM_API int loom_layer_set_value(loom_layer *l, int index, const loom_param_value *v, loom_error *err) {
  char where[128];
  if (!l || !v) return loom_error_set(err, LOOM_ERR_INVALID, _("no layer or value given"));
  if (index < 0 || index >= l->type->n_params)
    return loom_error_set(err, LOOM_ERR_RANGE, _("%s has no parameter number %d (it has %d)"),
                          layer_where(l, where, sizeof where), index, l->type->n_params);
  const loom_param_spec *s = &l->type->params[index];
  loom_param_value nv = {0};
  int rc;
  switch (s->kind) {
  case LOOM_PARAM_INT:
    if ((rc = check_bounds(l, s, (double)v->i[0], err))) return rc;
    nv.i[0] = v->i[0];
    break;
  case LOOM_PARAM_FLOAT:
    if ((rc = check_bounds(l, s, v->f, err))) return rc;
    nv.f = v->f;
    break;
  case LOOM_PARAM_BOOL:
    if (v->i[0] != 0 && v->i[0] != 1)
      return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “%s” must be true or false, got %lld"),
                            layer_where(l, where, sizeof where), s->name, (long long)v->i[0]);
    nv.i[0] = v->i[0];
    break;
  case LOOM_PARAM_ENUM: {
    int64_t n = 0;
    while (s->choices && s->choices[n]) n++;
    if (v->i[0] < 0 || v->i[0] >= n)
      return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “%s” has %lld choices, got index %lld"),
                            layer_where(l, where, sizeof where), s->name, (long long)n, (long long)v->i[0]);
    nv.i[0] = v->i[0];
    break;
  }
  case LOOM_PARAM_INTS:
    for (int i = 0; i < s->count && i < LOOM_PARAM_MAX_INTS; i++) {
      if (!((double)v->i[i] >= s->min && (double)v->i[i] <= s->max))
        return loom_error_set(err, LOOM_ERR_INVALID,
                              _("%s: entry %d of parameter “%s” must be between %.9g and %.9g, got %lld"),
                              layer_where(l, where, sizeof where), i, s->name, s->min, s->max, (long long)v->i[i]);
      nv.i[i] = v->i[i];
    }
    break;
  case LOOM_PARAM_FLOATS:
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “%s” is a list; set it with loom_layer_set_floats"),
                          layer_where(l, where, sizeof where), s->name);
  }
  if (memcmp(&nv, &l->values[index], sizeof nv) != 0) {
    l->values[index] = nv;
    mark_changed(l, s);
  }
  return LOOM_OK;
}

LOOM_API int loom_layer_set_int(loom_layer *l, const char *name, int64_t v, loom_error *err) {
  if (!l) return loom_error_set(err, LOOM_ERR_INVALID, _("no layer given"));
  int i = find_param(l, name, LOOM_PARAM_INT, false, err);
  if (i < 0) return i;
  loom_param_value pv = {.i = {v}};
  return loom_layer_set_value(l, i, &pv, err);
}

LOOM_API int loom_layer_set_float(loom_layer *l, const char *name, double v, loom_error *err) {
  if (!l) return loom_error_set(err, LOOM_ERR_INVALID, _("no layer given"));
  int i = find_param(l, name, LOOM_PARAM_FLOAT, false, err);
  if (i < 0) return i;
  loom_param_value pv = {.f = v};
  return loom_layer_set_value(l, i, &pv, err);
}

LOOM_API int loom_layer_set_bool(loom_layer *l, const char *name, bool v, loom_error *err) {
  if (!l) return loom_error_set(err, LOOM_ERR_INVALID, _("no layer given"));
  int i = find_param(l, name, LOOM_PARAM_BOOL, false, err);
  if (i < 0) return i;
  loom_param_value pv = {.i = {v ? 1 : 0}};
  return loom_layer_set_value(l, i, &pv, err);
}

LOOM_API int loom_layer_set_enum(loom_layer *l, const char *name, const char *choice, loom_error *err) {
  char where[128];
  if (!l) return loom_error_set(err, LOOM_ERR_INVALID, _("no layer given"));
  int i = find_param(l, name, LOOM_PARAM_ENUM, false, err);
  if (i < 0) return i;
  const loom_param_spec *s = &l->type->params[i];
  char list[512];
  size_t used = 0;
  list[0] = '\0';
  for (int c = 0; s->choices[c]; c++) {
    if (choice && strcmp(s->choices[c], choice) == 0) {
      loom_param_value pv = {.i = {c}};
      return loom_layer_set_value(l, i, &pv, err);
    }
    if (used < sizeof list)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", c ? ", " : "", s->choices[c]);
  }
  return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “%s” has no choice “%s” (expected one of: %s)"),
                        layer_where(l, where, sizeof where), s->name, choice ? choice : "(null)", list);
}

LOOM_API int loom_layer_set_ints(loom_layer *l, const char *name, const int64_t *v, int n, loom_error *err) {
  char where[128];
  if (!l || !v) return loom_error_set(err, LOOM_ERR_INVALID, _("no layer or values given"));
  int i = find_param(l, name, LOOM_PARAM_INTS, false, err);
  if (i < 0) return i;
  const loom_param_spec *s = &l->type->params[i];
  if (n != s->count)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “%s” takes %d values, got %d"),
                          layer_where(l, where, sizeof where), s->name, s->count, n);
  loom_param_value pv = {0};
  for (int k = 0; k < n && k < LOOM_PARAM_MAX_INTS; k++) pv.i[k] = v[k];
  return loom_layer_set_value(l, i, &pv, err);
}

LOOM_API int loom_layer_set_floats(loom_layer *l, const char *name, const float *v, int64_t n, loom_error *err) {
  char where[128];
  if (!l) return loom_error_set(err, LOOM_ERR_INVALID, _("no layer given"));
  int i = find_param(l, name, LOOM_PARAM_FLOATS, false, err);
  if (i < 0) return i;
  const loom_param_spec *s = &l->type->params[i];
  /* A list is bounded only by memory: 2^28 entries is far beyond any mask. */
  if (n < 0 || n > ((int64_t)1 << 28) || (n > 0 && !v))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “%s” cannot hold %lld values"),
                          layer_where(l, where, sizeof where), s->name, (long long)n);
  /* Specs with min < max bound every entry; min == max means unbounded. */
  for (int64_t k = 0; k < n; k++) {
    double x = v[k];
    if (!isfinite(x) || (s->min < s->max && (x < s->min || x > s->max)))
      return loom_error_set(err, LOOM_ERR_INVALID, _("%s: entry %lld of parameter “%s” is %.9g, outside %.9g…%.9g"),
                            layer_where(l, where, sizeof where), (long long)k, s->name, x, s->min, s->max);
  }
  float *copy = malloc((size_t)(n > 0 ? n : 1) * sizeof *copy);
  if (!copy) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory setting parameter “%s”"), s->name);
  if (n > 0) memcpy(copy, v, (size_t)n * sizeof *copy);
  free(l->floats[i]);
  l->floats[i] = copy;
  l->n_floats[i] = n;
  mark_changed(l, s);
  return LOOM_OK;
}

LOOM_API loom_param_value loom_layer_get_value(const loom_layer *l, int index) {
  loom_param_value zero = {0};
  if (!l || index < 0 || index >= l->type->n_params) return zero;
  return l->values[index];
}

LOOM_API int64_t loom_layer_get_int(const loom_layer *l, const char *name) {
  if (!l) return 0;
  int i = loom_layer_type_param_index(l->type, name);
  if (i < 0) return 0;
  switch (l->type->params[i].kind) {
  case LOOM_PARAM_INT:
  case LOOM_PARAM_BOOL:
  case LOOM_PARAM_ENUM:
  case LOOM_PARAM_INTS: return l->values[i].i[0];
  default: return 0;
  }
}

LOOM_API double loom_layer_get_float(const loom_layer *l, const char *name) {
  if (!l) return 0.0;
  int i = loom_layer_type_param_index(l->type, name);
  if (i < 0) return 0.0;
  switch (l->type->params[i].kind) {
  case LOOM_PARAM_FLOAT: return l->values[i].f;
  case LOOM_PARAM_FLOATS: return 0.0;
  default: return (double)l->values[i].i[0];
  }
}

LOOM_API const float *loom_layer_get_floats(const loom_layer *l, const char *name, int64_t *n) {
  if (n) *n = 0;
  if (!l) return NULL;
  int i = loom_layer_type_param_index(l->type, name);
  if (i < 0 || l->type->params[i].kind != LOOM_PARAM_FLOATS) return NULL;
  if (n) *n = l->n_floats[i];
  return l->floats[i];
}

/* ---- dtype ------------------------------------------------------------- */

LOOM_API int loom_layer_set_dtype(loom_layer *l, loom_dtype d, loom_error *err) {
  char where[128];
  if (!l) return loom_error_set(err, LOOM_ERR_INVALID, _("no layer given"));
  if (!loom_dtype_traits_get(d))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: unknown dtype number %d"), layer_where(l, where, sizeof where),
                          (int)d);
  for (int i = 0; i < l->n_weights; i++) {
    if (!l->weight_quantized[i]) continue;
    int rc = loom_weights_set_dtype(l->weights[i], d, err);
    if (rc) {
      loom_error_prefix(err, "%s", layer_where(l, where, sizeof where));
      /* Put back the slots already switched so the layer stays consistent. */
      for (int k = 0; k < i; k++)
        if (l->weight_quantized[k]) loom_weights_set_dtype(l->weights[k], l->dtype, NULL);
      return rc;
    }
  }
  /* A container computes at one dtype throughout: its children follow. */
  for (int c = 0; c < l->n_children; c++) {
    int rc = loom_layer_set_dtype(l->children[c], d, err);
    if (rc) return rc;
  }
  if (l->gate) {
    int rc = loom_layer_set_dtype(l->gate, d, err);
    if (rc) return rc;
  }
  l->dtype = d;
  return LOOM_OK;
}

LOOM_API loom_dtype loom_layer_get_dtype(const loom_layer *l) { return l ? l->dtype : LOOM_DTYPE_FLOAT32; }

/* ---- build ------------------------------------------------------------- */

LOOM_API int loom_layer_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  char where[128], shape_text[96];
  if (!l || !in) return loom_error_set(err, LOOM_ERR_INVALID, _("no layer or input shape given"));
  if (in->rank < 1 || in->rank > LOOM_MAX_DIMS)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: the input shape %s is not set"),
                          layer_where(l, where, sizeof where), loom_shape_format(in, shape_text, sizeof shape_text));
  for (int i = 0; i < in->rank; i++)
    if (in->d[i] < 1)
      return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: dimension %d of the input shape %s is not positive"),
                            layer_where(l, where, sizeof where), i,
                            loom_shape_format(in, shape_text, sizeof shape_text));
  loom_shape in_copy = *in;
  l->built = false;
  l->in_shape = in_copy;
  int rc = l->type->build(l, &in_copy, seed, err);
  if (rc) return rc;
  l->built = true;
  return LOOM_OK;
}

LOOM_API bool loom_layer_is_built(const loom_layer *l) { return l && l->built; }
LOOM_API loom_shape loom_layer_in_shape(const loom_layer *l) {
  loom_shape none = {0};
  return l && l->built ? l->in_shape : none;
}
LOOM_API loom_shape loom_layer_out_shape(const loom_layer *l) {
  loom_shape none = {0};
  return l && l->built ? l->out_shape : none;
}

LOOM_API int loom_layer_adapt_to_input(loom_layer *l, const loom_shape *in, loom_error *err) {
  if (!l || !in) return loom_error_set(err, LOOM_ERR_INVALID, _("no layer or input shape given"));
  if (!l->type->adapt) return LOOM_OK; /* nothing of this type depends on the input size */
  return l->type->adapt(l, in, err);
}
