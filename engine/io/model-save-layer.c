/*
 * Writing one layer of the model file: type, dtype, every hyperparameter by
 * its spec name, containers recursively and, for a slot's layer, its input
 * shape and packed weights (docs/file-format.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/model-format.h"
#include "io/model-write.h"

void model_write_shape(jw *w, const loom_shape *s) {
  jw_begin_array(w, true);
  for (int i = 0; i < s->rank; i++) jw_int(w, s->d[i]);
  jw_end_array(w);
}

static void write_params(jw *w, const loom_layer *l) {
  const loom_layer_type *t = loom_layer_get_type(l);
  int n = loom_layer_type_n_params(t);
  jw_begin_object(w, false);
  for (int i = 0; i < n; i++) {
    const loom_param_spec *s = loom_layer_type_param(t, i);
    loom_param_value v = loom_layer_get_value(l, i);
    jw_key(w, s->name);
    switch (s->kind) {
    case LOOM_PARAM_INT: jw_int(w, v.i[0]); break;
    case LOOM_PARAM_FLOAT: jw_double(w, v.f); break;
    case LOOM_PARAM_BOOL: jw_bool(w, v.i[0] != 0); break;
    case LOOM_PARAM_ENUM: jw_string(w, s->choices[v.i[0]]); break;
    case LOOM_PARAM_INTS:
      jw_begin_array(w, true);
      for (int k = 0; k < s->count && k < LOOM_PARAM_MAX_INTS; k++) jw_int(w, v.i[k]);
      jw_end_array(w);
      break;
    case LOOM_PARAM_FLOATS: {
      int64_t count = 0;
      const float *f = loom_layer_get_floats(l, s->name, &count);
      jw_begin_array(w, true);
      for (int64_t k = 0; k < count; k++) jw_float(w, f[k]);
      jw_end_array(w);
      break;
    }
    }
  }
  jw_end_object(w);
}

static int write_weights(jw *w, loom_layer *l, bool weight_data, loom_error *err) {
  int n = loom_layer_n_weights(l);
  jw_begin_array(w, false);
  for (int i = 0; i < n; i++) {
    loom_weights *ws = loom_layer_weights(l, i);
    char name[MODEL_WEIGHT_NAME_MAX];
    loom_layer_weights_path(l, i, name, sizeof name);
    /* The file holds the packed form the layer computes with. */
    int rc = loom_weights_morph(ws, err);
    if (rc) return rc;
    size_t nbytes = 0;
    int64_t nscales = 0;
    const uint8_t *packed = loom_weights_packed(ws, &nbytes);
    const float *scales = loom_weights_scales(ws, &nscales);
    loom_dtype d = loom_weights_dtype(ws);
    jw_begin_object(w, false);
    jw_key(w, "name");
    jw_string(w, name);
    jw_key(w, "rows");
    jw_int(w, loom_weights_rows(ws));
    jw_key(w, "cols");
    jw_int(w, loom_weights_cols(ws));
    jw_key(w, "dtype");
    jw_string(w, loom_dtype_name(d));
    jw_key(w, "scale_mode");
    jw_string(w, model_scale_mode_name(loom_weights_scale_mode(ws)));
    if (weight_data) {
      jw_key(w, "data");
      jw_base64(w, packed, nbytes);
    }
    if (weight_data && loom_dtype_traits_get(d)->scaled) {
      jw_key(w, "scales");
      /* Little-endian float32: the host order (dtype-internal.h refuses big-endian hosts). */
      jw_base64(w, scales, (size_t)nscales * sizeof(float));
    }
    jw_end_object(w);
  }
  jw_end_array(w);
  return LOOM_OK;
}

int model_write_layer(jw *w, loom_layer *l, bool top, bool weight_data, int depth, loom_error *err) {
  if (depth > MODEL_MAX_LAYER_NESTING)
    return loom_error_set(err, LOOM_ERR_RANGE, _("containers nest deeper than %d levels"), MODEL_MAX_LAYER_NESTING);
  const loom_layer_type *t = loom_layer_get_type(l);
  jw_begin_object(w, false);
  jw_key(w, "type");
  jw_string(w, loom_layer_type_name(t));
  jw_key(w, "dtype");
  jw_string(w, loom_dtype_name(loom_layer_get_dtype(l)));
  jw_key(w, "params");
  write_params(w, l);
  if (loom_layer_type_flags(t) & LOOM_LAYER_CONTAINER) {
    jw_key(w, "children");
    jw_begin_array(w, false);
    for (int c = 0; c < loom_layer_n_children(l); c++) {
      int rc = model_write_layer(w, loom_layer_child(l, c), false, weight_data, depth + 1, err);
      if (rc) return rc;
    }
    jw_end_array(w);
    loom_layer *gate = loom_layer_gate(l);
    if (gate) {
      jw_key(w, "gate");
      int rc = model_write_layer(w, gate, false, weight_data, depth + 1, err);
      if (rc) return rc;
    }
  }
  /* Weights belong to the slot's layer as one flat list (children's
   * included), and only once it is built: then their shapes are known. */
  if (top && loom_layer_is_built(l)) {
    loom_shape in = loom_layer_in_shape(l);
    jw_key(w, "in_shape");
    model_write_shape(w, &in);
    jw_key(w, "weights");
    int rc = write_weights(w, l, weight_data, err);
    if (rc) return rc;
  }
  jw_end_object(w);
  return LOOM_OK;
}
