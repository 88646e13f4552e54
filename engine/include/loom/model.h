/*
 * The model file: a versioned JSON description of a network — grid, slots,
 * layer hyperparameters, dtypes, links, containers and weights (base64 of the
 * packed bytes + scales). Specified in docs/file-format.md.
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "export.h"
#include "net.h"
#include "settings.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_MODEL_FORMAT_VERSION 1
#define LOOM_MODEL_MAX_FILE_BYTES ((size_t)2 << 30)
/* The memory a loaded network may need: its weights (float32 masters and
 * packed copies) plus the activations of one sample (the input and every
 * layer's output, float32). Checked while loading, before the weights are
 * allocated and before anything is run. */
#define LOOM_MODEL_MAX_MEMORY_BYTES ((uint64_t)8 << 30)

typedef enum loom_model_flags {
  LOOM_MODEL_STRICT = 1 << 0, /* unknown fields are errors (default in the CLI and GUI) */
  /* Each weight tensor goes to rest (loom_weights_to_inference) as soon as it
   * is read, so the float32 masters of a model never all exist at once; call
   * loom_net_to_inference after shape inference for the rest (gradients). */
  LOOM_MODEL_AT_REST = 1 << 1,
} loom_model_flags;

/* Errors name the file and the JSON path ("$.slots[3].params.kernel") or the
 * coordinates. On error *out is NULL. */
LOOM_API int loom_model_load(const char *path, unsigned flags, loom_net **out, loom_error *err);
LOOM_API int loom_model_load_data(const char *json, size_t len, const char *source_name, unsigned flags,
                                  loom_net **out, loom_error *err);
/* Atomic: temp file, fsync, rename. A path ending in ".safetensors" gets a
 * safetensors file (loom/safetensors.h), any other the JSON text. */
LOOM_API int loom_model_save(const loom_net *net, const char *path, loom_error *err);
/* The JSON text (malloc'd, NUL-terminated). */
LOOM_API char *loom_model_to_json(const loom_net *net, size_t *len, loom_error *err);

/*
 * The optional "training" section of a model file: the settings of the run
 * that trained the network, the trainer's state blob (opaque here; see
 * loom_trainer_export_state) and the updates done. A NULL extras, or one
 * with nothing set, reads and writes files without the section; the
 * functions above are these with extras NULL.
 */
typedef struct loom_model_extras {
  loom_train_settings *settings; /* owned; NULL = none */
  void *train_state;             /* owned (malloc); NULL = none */
  size_t train_state_len;
  int64_t train_steps;           /* >= 0 */
} loom_model_extras;

/* The largest training state a model file may carry, checked before decoding. */
#define LOOM_MODEL_MAX_TRAIN_STATE_BYTES ((size_t)1 << 30)

/* On success *extras is filled (cleared first; the caller clears it after
 * use); on error it holds nothing. A bad "training" section is an error
 * naming its JSON path ("$.training.steps"). */
LOOM_API int loom_model_load_ex(const char *path, unsigned flags, loom_net **out, loom_model_extras *extras,
                                loom_error *err);
LOOM_API int loom_model_load_data_ex(const char *json, size_t len, const char *source_name, unsigned flags,
                                     loom_net **out, loom_model_extras *extras, loom_error *err);
LOOM_API int loom_model_save_ex(const loom_net *net, const loom_model_extras *extras, const char *path,
                                loom_error *err);
LOOM_API char *loom_model_to_json_ex(const loom_net *net, const loom_model_extras *extras, size_t *len,
                                     loom_error *err);
/* Frees what extras holds and zeroes it. */
LOOM_API void loom_model_extras_clear(loom_model_extras *extras);

/* ---- built-in examples ------------------------------------------------- */

LOOM_API int loom_example_count(void);
LOOM_API const char *loom_example_name(int index);        /* "xor", "spiral", "hop", "moe", "cnn" */
LOOM_API const char *loom_example_title(int index);       /* translated */
LOOM_API const char *loom_example_description(int index); /* translated: what it teaches */
LOOM_API int loom_example_build(const char *name, loom_net **out, loom_error *err);

#ifdef __cplusplus
}
#endif
