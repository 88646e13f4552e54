/* NumPy .npy arrays (float32, C order) for data in and out of the CLI and tests. */
#pragma once
#include <stdint.h>

#include "error.h"
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_NPY_MAX_DIMS 8

typedef struct loom_npy {
  int ndim;
  int64_t shape[LOOM_NPY_MAX_DIMS];
  float *data; /* malloc'd; numel floats */
} loom_npy;

LOOM_API int64_t loom_npy_numel(const loom_npy *a);
/* Reads float32 ('<f4') arrays; float64 ('<f8') and int ('<i4','<i8') arrays are converted to float32.
 * Fortran order, big-endian and object arrays are errors naming the file. */
LOOM_API int loom_npy_read(const char *path, loom_npy *out, loom_error *err);
LOOM_API int loom_npy_write(const char *path, const loom_npy *a, loom_error *err); /* '<f4', atomic */
LOOM_API void loom_npy_clear(loom_npy *a);

#ifdef __cplusplus
}
#endif
