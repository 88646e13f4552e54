/*
 * Internal: what the model-file reader needs to take a network's weights
 * from a safetensors file instead of base64 text (docs/safetensors.md).
 */
#pragma once
#include <stdbool.h>

#include "loom/model.h"
#include "loom/net.h"
#include "loom/safetensors.h"

typedef struct model_tensors {
  const loom_safetensors *st;
  bool *used;      /* per tensor (index of loom_safetensors_tensor): taken by a weight */
  char prefix[96]; /* "slot.z.y.x.l." of the slot being read */
} model_tensors;

/* "slot.z.y.x.l." */
void model_tensors_set_slot(model_tensors *t, loom_coord c);
/* Index of a tensor, or -1. */
int64_t safetensors_index(const loom_safetensors *st, const char *name);
/* The name of the scales tensor of weight tensor `name`. */
#define SAFETENSORS_SCALES_SUFFIX ".scales"

/* The model-file reader (model-load.c) with weights from `tensors` (NULL: base64 in the text). */
int model_load_text(const char *json, size_t len, const char *source_name, unsigned flags, model_tensors *tensors,
                    loom_net **out, loom_model_extras *extras, loom_error *err);
