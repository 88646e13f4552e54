/*
 * Internal: names and limits of the model file shared by the writer and the
 * reader (docs/file-format.md).
 */
#pragma once
#include "loom/dtype.h"

#define MODEL_FORMAT_NAME "loom-model"
/* JSON nesting the reader accepts: a layer nested in N containers sits about
 * 2N + 4 levels deep, so this allows MODEL_MAX_LAYER_NESTING with room. */
#define MODEL_MAX_JSON_DEPTH 64
#define MODEL_MAX_LAYER_NESTING 16
/* Limits checked before allocating: per-sample input values, grid extent. */
#define MODEL_MAX_INPUT_NUMEL ((int64_t)1 << 31)
#define MODEL_MAX_GRID_EXTENT 65536
#define MODEL_WEIGHT_NAME_MAX 256
/* Shape inference during loading only initialises layers the file has no
 * weights for (they were not built when saved). */
#define MODEL_LOAD_SEED UINT64_C(0x6c6f6f6d)

static inline const char *model_scale_mode_name(loom_scale_mode m) {
  return m == LOOM_SCALE_PER_TENSOR ? "per_tensor" : "per_row";
}
