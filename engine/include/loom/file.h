/* Whole-file helpers shared by every format: atomic replace, bounded reads. */
#pragma once
#include <stddef.h>

#include "error.h"
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Replaces `path` with `len` bytes atomically: writes a temporary file in the
 * same directory, fsyncs it, renames it over `path`, fsyncs the directory.
 * On failure `path` is untouched and the temporary file removed.
 */
LOOM_API int loom_file_write_atomic(const char *path, const void *data, size_t len, loom_error *err);

/*
 * Reads a whole file, refusing files larger than `max_len` before allocating.
 * The buffer gets one extra NUL byte (not counted in *len); free() it.
 */
LOOM_API int loom_file_read_all(const char *path, size_t max_len, char **data, size_t *len, loom_error *err);

#ifdef __cplusplus
}
#endif
