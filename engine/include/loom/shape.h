/*
 * Shapes of activations. A shape is per sample: the batch dimension is always
 * separate and leading. Dense data is [features]; convolutions are
 * [channels, spatial...] (C×L, C×H×W, C×D×H×W); sequences [tokens, features].
 * Data is float32, C order, batch-major: sample b starts at b·numel(shape).
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_MAX_DIMS 4

typedef struct loom_shape {
  int rank; /* 0 = unknown/unset */
  int64_t d[LOOM_MAX_DIMS];
} loom_shape;

LOOM_API loom_shape loom_shape_make(int rank, const int64_t *dims);
LOOM_API loom_shape loom_shape_1d(int64_t n);
LOOM_API int64_t loom_shape_numel(const loom_shape *s); /* 0 if rank 0 */
LOOM_API int loom_shape_equal(const loom_shape *a, const loom_shape *b);
/* Writes e.g. "[3×32×32]" (or "[?]" for an unset shape); returns buf. */
LOOM_API char *loom_shape_format(const loom_shape *s, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
