/*
 * A small valid model file: a 2 → 2 dense layer without bias, its output added
 * to itself by a link into a tanh. test-model-hostile.c breaks it one field at
 * a time; tests/cli/test-model-cli.c runs it for outputs known by hand.
 */
#pragma once

/* The document with WEIGHT_DATA (a string literal: the dense weight's
 * base64 float32 data, or "%s" for a printf format) as the weight data. */
#define TINY_MODEL_JSON(WEIGHT_DATA)                                                                           \
  "{\"format\": \"loom-model\", \"version\": 1,\n"                                                             \
  " \"grid\": {\"depth\": 1, \"rows\": 1, \"cols\": 3, \"layers_per_cell\": 1},\n"                             \
  " \"input_shape\": [2],\n"                                                                                   \
  " \"slots\": [\n"                                                                                            \
  "  {\"at\": [0, 0, 0, 0], \"enabled\": true, \"layer\": {\"type\": \"dense\", \"dtype\": \"float32\",\n"     \
  "   \"params\": {\"in_features\": 2, \"out_features\": 2, \"bias\": false}, \"in_shape\": [2],\n"            \
  "   \"weights\": [{\"name\": \"weight\", \"rows\": 2, \"cols\": 2, \"dtype\": \"float32\", \"scale_mode\": " \
  "\"per_row\", \"data\": \"" WEIGHT_DATA "\"}]}},\n"                                                          \
  "  {\"at\": [0, 0, 2, 0], \"enabled\": true, \"layer\": {\"type\": \"tanh\", \"dtype\": \"float32\", "       \
  "\"params\": {}, \"in_shape\": [2], \"weights\": []}}\n"                                                     \
  " ],\n"                                                                                                      \
  " \"links\": [{\"src\": [0, 0, 0, 0], \"dst\": [0, 0, 2, 0], \"merge\": \"add\"}]}\n"
