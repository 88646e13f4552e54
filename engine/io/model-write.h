/* Internal: the layer part of the model-file writer (model-save-layer.c). */
#pragma once
#include "io/json-write.h"
#include "loom/layer.h"
#include "loom/model.h"
#include "loom/shape.h"

/* Writes a layer object; a slot's layer (top) also gets in_shape and its
 * weights (morphed to their dtype) when it is built, with their data and
 * scales unless !weight_data (safetensors: the tensors hold them). */
int model_write_layer(jw *w, loom_layer *l, bool top, bool weight_data, int depth, loom_error *err);
/* The model JSON (loom_model_to_json_ex), with or without weight data. */
char *model_to_json_text(const loom_net *net, const loom_model_extras *extras, bool weight_data, size_t *len,
                         loom_error *err);
void model_write_shape(jw *w, const loom_shape *s);
