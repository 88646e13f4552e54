/*
 * Errors. Every fallible engine call takes a `loom_error *` (may be NULL) and
 * returns a status: 0 on success, a negative loom_status otherwise. The message
 * names what went wrong and where: a file, a JSON path, grid coordinates.
 */
#pragma once
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum loom_status {
  LOOM_OK = 0,
  LOOM_ERR_INVALID = -1,     /* bad argument or parameter value */
  LOOM_ERR_NOMEM = -2,       /* allocation failed or size absurd */
  LOOM_ERR_IO = -3,          /* file system */
  LOOM_ERR_FORMAT = -4,      /* malformed file or text */
  LOOM_ERR_SHAPE = -5,       /* shape mismatch */
  LOOM_ERR_NONFINITE = -6,   /* NaN or infinity where finite is required */
  LOOM_ERR_RANGE = -7,       /* index or coordinates out of range */
  LOOM_ERR_UNSUPPORTED = -8, /* valid request the engine cannot do */
  LOOM_ERR_CANCELLED = -9,   /* stopped by the caller */
} loom_status;

#define LOOM_ERROR_MESSAGE_MAX 1024

typedef struct loom_error {
  loom_status code;
  char message[LOOM_ERROR_MESSAGE_MAX];
} loom_error;

/* Sets err (if not NULL) and returns code, so callers can `return loom_error_set(...)`. */
LOOM_API int loom_error_set(loom_error *err, loom_status code, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

/* Prepends "context: " to an existing message (e.g. a file name or JSON path). */
LOOM_API void loom_error_prefix(loom_error *err, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

LOOM_API void loom_error_clear(loom_error *err);

/* A short, stable, untranslated name for a status ("invalid", "shape", ...). */
LOOM_API const char *loom_status_name(loom_status code);

#ifdef __cplusplus
}
#endif
