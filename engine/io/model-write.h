/* Internal: the layer part of the model-file writer (model-save-layer.c). */
#pragma once
#include "io/json-write.h"
#include "loom/layer.h"
#include "loom/shape.h"

/* Writes a layer object; a slot's layer (top) also gets in_shape and its
 * weights (morphed to their dtype) when it is built. */
int model_write_layer(jw *w, loom_layer *l, bool top, int depth, loom_error *err);
void model_write_shape(jw *w, const loom_shape *s);
