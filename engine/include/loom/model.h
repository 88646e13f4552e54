/*
 * The model file: a versioned JSON description of a network — grid, slots,
 * layer hyperparameters, dtypes, links, containers and weights (base64 of the
 * packed bytes + scales). Specified in docs/file-format.md.
 */
#pragma once
#include <stddef.h>

#include "error.h"
#include "export.h"
#include "net.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_MODEL_FORMAT_VERSION 1
#define LOOM_MODEL_MAX_FILE_BYTES ((size_t)2 << 30)

typedef enum loom_model_flags {
  LOOM_MODEL_STRICT = 1 << 0, /* unknown fields are errors (default in the CLI and GUI) */
} loom_model_flags;

/* Errors name the file and the JSON path ("$.slots[3].params.kernel") or the
 * coordinates. On error *out is NULL. */
LOOM_API int loom_model_load(const char *path, unsigned flags, loom_net **out, loom_error *err);
LOOM_API int loom_model_load_data(const char *json, size_t len, const char *source_name, unsigned flags,
                                  loom_net **out, loom_error *err);
/* Atomic: temp file, fsync, rename. */
LOOM_API int loom_model_save(const loom_net *net, const char *path, loom_error *err);
/* The JSON text (malloc'd, NUL-terminated). */
LOOM_API char *loom_model_to_json(const loom_net *net, size_t *len, loom_error *err);

/* ---- built-in examples ------------------------------------------------- */

LOOM_API int loom_example_count(void);
LOOM_API const char *loom_example_name(int index);        /* "xor", "spiral", "hop", "moe", "cnn" */
LOOM_API const char *loom_example_title(int index);       /* translated */
LOOM_API const char *loom_example_description(int index); /* translated: what it teaches */
LOOM_API int loom_example_build(const char *name, loom_net **out, loom_error *err);

#ifdef __cplusplus
}
#endif
