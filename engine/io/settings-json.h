/*
 * Internal: the training settings as JSON, shared by the settings file
 * (settings-json.c) and the model file's "training" section (model-training.c).
 */
#pragma once
#include "io/json-read.h"
#include "io/json-write.h"
#include "loom/settings.h"

#define SETTINGS_FORMAT_NAME "loom-train-settings"
#define SETTINGS_MAX_JSON_DEPTH 16

/* Writes the settings object (valid settings only: validate first). */
void settings_json_write(jw *w, const loom_train_settings *s);
/* Reads the settings object at the reader's current path; errors name the
 * JSON path of the offending member. */
int settings_json_read(jr *r, JsonNode *node, loom_train_settings **out);
