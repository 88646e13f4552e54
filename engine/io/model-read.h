/* Internal: the layer part of the model-file reader (model-load-layer.c). */
#pragma once
#include "io/json-read.h"
#include "loom/layer.h"
#include "loom/shape.h"

/*
 * Reads a layer object (type, dtype, params, children, gate; for a slot's
 * layer also in_shape and weights). When the file carries weights, the layer
 * comes back built for *in_shape (rank > 0) with exactly those weights.
 */
int model_read_layer(jr *r, JsonNode *node, int depth, bool top, loom_layer **out, loom_shape *in_shape);

/* Reads an array of 1..LOOM_MAX_DIMS positive sizes (or, if allow_empty, []). */
int model_read_shape(jr *r, JsonNode *node, bool allow_empty, loom_shape *out);
