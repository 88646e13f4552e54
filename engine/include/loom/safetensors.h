/*
 * safetensors files (https://github.com/huggingface/safetensors): a validated
 * reader for any such file, and a whole Loom network in one file — the model
 * JSON without its weight data in __metadata__, every weight tensor as a
 * tensor named by its slot and path. Specified in docs/safetensors.md.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "export.h"
#include "model.h"
#include "net.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The reference library refuses headers above 100 MB; so do we. */
#define LOOM_SAFETENSORS_MAX_HEADER_BYTES ((uint64_t)100000000)
#define LOOM_SAFETENSORS_MAX_RANK 8
/* The __metadata__ key that holds the network (the model JSON without weight data). */
#define LOOM_SAFETENSORS_MODEL_KEY "loom_model"

typedef struct loom_st_tensor {
  const char *name;  /* owned by the file */
  const char *dtype; /* the format's name: "F32", "BF16", "F8_E4M3", "I64", "U8", ... */
  int rank;
  int64_t shape[LOOM_SAFETENSORS_MAX_RANK];
  uint64_t begin, end; /* byte offsets in the data section */
} loom_st_tensor;

typedef struct loom_safetensors loom_safetensors;

/*
 * Opens and validates a file: header length against the file and the limit,
 * the header's JSON, every tensor's dtype, shape (product overflow-checked)
 * and offsets (in range, size = values × element size), and that the tensors
 * cover the data exactly, without overlap or gap. The file is mapped, not
 * read. Errors name the file and the tensor.
 */
LOOM_API int loom_safetensors_open(const char *path, loom_safetensors **out, loom_error *err);
/* The same over bytes the caller keeps alive until close. */
LOOM_API int loom_safetensors_open_data(const void *data, size_t len, const char *source, loom_safetensors **out,
                                        loom_error *err);
LOOM_API void loom_safetensors_close(loom_safetensors *st);
/* Tensors in the order of their data offsets. */
LOOM_API int64_t loom_safetensors_n_tensors(const loom_safetensors *st);
LOOM_API const loom_st_tensor *loom_safetensors_tensor(const loom_safetensors *st, int64_t i);
LOOM_API const loom_st_tensor *loom_safetensors_find(const loom_safetensors *st, const char *name);
/* The tensor's bytes inside the mapping (no alignment promised). */
LOOM_API const uint8_t *loom_safetensors_data(const loom_safetensors *st, const loom_st_tensor *t);
/* A __metadata__ value, or NULL. */
LOOM_API const char *loom_safetensors_metadata(const loom_safetensors *st, const char *key);
/* Bytes per value of a safetensors dtype name; 0 if unknown. */
LOOM_API size_t loom_safetensors_dtype_size(const char *dtype);
/* The safetensors dtype holding a Loom dtype's packed codes: its own name
 * where the format has one (F32, BF16, F8_E5M2, I8, U64, ...), U8 bytes for
 * the dtypes packed below a byte (fp4, int4, int2, uint4, uint2, ternary, binary). */
LOOM_API const char *loom_safetensors_dtype_for(loom_dtype d);

/* Whether a path names a safetensors file (by its name, else by its first bytes). */
LOOM_API bool loom_model_file_is_safetensors(const char *path);

/* A network from a file written by loom_model_save_safetensors (flags: loom_model_flags). */
LOOM_API int loom_model_load_safetensors(const char *path, unsigned flags, loom_net **out, loom_model_extras *extras,
                                         loom_error *err);
LOOM_API int loom_model_load_safetensors_data(const void *data, size_t len, const char *source, unsigned flags,
                                              loom_net **out, loom_model_extras *extras, loom_error *err);
/* The file's bytes (malloc'd). */
LOOM_API uint8_t *loom_model_to_safetensors(const loom_net *net, const loom_model_extras *extras, size_t *len,
                                            loom_error *err);
/* Atomic: temp file, fsync, rename. */
LOOM_API int loom_model_save_safetensors(const loom_net *net, const loom_model_extras *extras, const char *path,
                                         loom_error *err);

/*
 * Import of plain PyTorch weights (docs/safetensors.md, "Importing a state
 * dict"): a safetensors file named like a state dict, mapped onto a network's
 * weights. A mapping is tensor name → slot + the weight's path in that layer
 * ("weight", "bias", "weight_ih_l0", "children[1].weight").
 */
typedef struct loom_import_map loom_import_map;
/* JSON: {"0.weight": {"at": [z, y, x, l], "weight": "weight"}, ...}; errors name the key. */
LOOM_API int loom_import_map_parse(const char *text, size_t len, const char *source, loom_import_map **out,
                                   loom_error *err);
LOOM_API int loom_import_map_load(const char *path, loom_import_map **out, loom_error *err);
LOOM_API int64_t loom_import_map_n_entries(const loom_import_map *map);
LOOM_API void loom_import_map_free(loom_import_map *map);

/* Tensors of the file that no entry maps are skipped instead of an error. */
#define LOOM_IMPORT_IGNORE_UNMAPPED 1u

/*
 * Copies the mapped tensors (F64, F32, F16 or BF16, converted to float32) into
 * the weights' masters and morphs them to the layers' dtypes. map NULL: the
 * nn.Sequential rule ("N.<path>" → the N-th distinct prefix's layer among the
 * layers with weights, in flat order). Layers must be built (shapes inferred).
 * Every mapped tensor must exist, be finite and have the weight's shape (rows
 * × cols; a one-row weight as a vector; trailing dimensions flattened); an
 * unmapped tensor of the file is an error unless flags has
 * LOOM_IMPORT_IGNORE_UNMAPPED. On failure the network is unchanged.
 */
LOOM_API int loom_import_state_dict(loom_net *net, const char *path, const loom_import_map *map, unsigned flags,
                                    loom_error *err);
LOOM_API int loom_import_state_dict_from(loom_net *net, const loom_safetensors *st, const char *source,
                                         const loom_import_map *map, unsigned flags, loom_error *err);

#ifdef __cplusplus
}
#endif
