/* Internal: the model file's optional "training" section (model-training.c). */
#pragma once
#include "io/json-read.h"
#include "io/json-write.h"
#include "loom/model.h"

/* Reads $.training into *out (cleared first; holds nothing on error). */
int model_read_training(jr *r, JsonNode *node, loom_model_extras *out);
/* Whether extras has anything to write. */
bool model_training_present(const loom_model_extras *x);
/* Writes the "training" member (key and object); settings must be valid. */
int model_write_training(jw *w, const loom_model_extras *x, loom_error *err);
