/*
 * Weight stores. A weight tensor is rows × cols (rows = output rows, the unit
 * of per-row scales; a 1-D tensor such as a bias has rows = 1). Its float32
 * master is the source of truth (at rest, below, the packed copy is); morph builds and caches the packed copy (and
 * scales) at the store's dtype, and any change of master (touch), dtype or
 * scale mode makes that cache stale. Rules: docs/dtypes.md.
 *
 * A store is not thread-safe: one owner at a time (the worker owns its copy).
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most values one weight tensor may hold (2^30): larger sizes are refused before allocating. */
#define LOOM_WEIGHTS_MAX_VALUES ((int64_t)1 << 30)

typedef struct loom_weights loom_weights;
/* loom_scale_mode (LOOM_SCALE_PER_ROW, LOOM_SCALE_PER_TENSOR) is in dtype.h. */

/* rows, cols >= 1; zeros, dtype float32, per-row scales; checks sizes before allocating. */
LOOM_API loom_weights *loom_weights_new(int64_t rows, int64_t cols, loom_error *err);
LOOM_API void loom_weights_free(loom_weights *w);
/* A deep copy: master, label, dtype, scale mode and the packed cache. */
LOOM_API loom_weights *loom_weights_clone(const loom_weights *w, loom_error *err);

LOOM_API int64_t loom_weights_rows(const loom_weights *w);
LOOM_API int64_t loom_weights_cols(const loom_weights *w);
LOOM_API int64_t loom_weights_count(const loom_weights *w);

/* Writable; call loom_weights_touch() after writing. At rest (below) both
 * accessors first recreate the master from the packed copy and return NULL
 * only when that runs out of memory (loom_weights_ensure_master reports it). */
LOOM_API float *loom_weights_master(loom_weights *w);
LOOM_API const float *loom_weights_master_const(const loom_weights *w);
LOOM_API void loom_weights_touch(loom_weights *w); /* master changed: invalidates the packed cache */
/* e.g. "layer (0,1,2,0) weight", used in error messages; copied, truncated at 127 bytes. */
LOOM_API void loom_weights_set_label(loom_weights *w, const char *label);
LOOM_API const char *loom_weights_label(const loom_weights *w);

LOOM_API int loom_weights_set_dtype(loom_weights *w, loom_dtype d, loom_error *err); /* the dtype the layer computes at */
LOOM_API loom_dtype loom_weights_dtype(const loom_weights *w);
LOOM_API int loom_weights_set_scale_mode(loom_weights *w, loom_scale_mode m, loom_error *err);
LOOM_API loom_scale_mode loom_weights_scale_mode(const loom_weights *w);

/* (Re)builds the packed copy + scales for the current dtype if stale. Fails
 * with LOOM_ERR_NONFINITE, naming the label and the element, when the master
 * holds NaN or ±inf (at every dtype, float32 included). */
LOOM_API int loom_weights_morph(loom_weights *w, loom_error *err);
/* The float32 values the layer computes with: the master for float32 and
 * float64 (their round trip is exact), else dequantize(morph(master)); cached
 * until the next change. NULL + error on a non-finite master. */
LOOM_API const float *loom_weights_effective(loom_weights *w, loom_error *err);
/* The same values written into dst (count floats) without keeping a copy in
 * the store: at rest (no master) they are dequantized from the packed codes,
 * which loom_weights_effective would leave resident. */
LOOM_API int loom_weights_values_into(loom_weights *w, float *dst, loom_error *err);
/* The packed copy after morph (NULL while stale). For float32 it is the master. */
LOOM_API const uint8_t *loom_weights_packed(const loom_weights *w, size_t *nbytes);
/* The scales after morph; NULL (and 0) for unscaled dtypes and while stale. */
LOOM_API const float *loom_weights_scales(const loom_weights *w, int64_t *nscales);
/* Packed bytes + scale bytes (4 per scale) at the current dtype / had it dtype d. */
LOOM_API size_t loom_weights_bytes(const loom_weights *w);
LOOM_API size_t loom_weights_bytes_at(const loom_weights *w, loom_dtype d);

/*
 * At rest (inference, docs/dtypes.md): to_inference morphs (so a non-finite
 * master fails as morph does, the store unchanged) and frees the dequantized
 * copy and, except at float32, the float32 master: the packed codes and
 * scales are then the only copy (float32 keeps the master: it is its packed
 * form). A layer reads loom_weights_packed/_scales at rest; anything that
 * needs the master (training, set_dtype, set_scale_mode, editing) recreates
 * it = dequantize(codes), which is exact by construction, and the cache stays
 * valid. ensure_master does that with an error naming the label;
 * master_resident says whether it is there. touch at rest does nothing.
 */
LOOM_API int loom_weights_to_inference(loom_weights *w, loom_error *err);
LOOM_API int loom_weights_ensure_master(loom_weights *w, loom_error *err);
LOOM_API bool loom_weights_master_resident(const loom_weights *w);
/* Bytes allocated now: master + packed copy + scales + dequantized copy. */
LOOM_API size_t loom_weights_resident_bytes(const loom_weights *w);
/* What the store holds at its dtype at rest (packed + scales, i.e.
 * loom_weights_bytes) and while training (master + packed + scales + the
 * dequantized copy the layers compute with; not gradients or optimizer state). */
LOOM_API size_t loom_weights_inference_bytes(const loom_weights *w);
LOOM_API size_t loom_weights_training_bytes(const loom_weights *w);

/*
 * For the model file: takes a packed tensor of dtype d (rows × cols as the
 * store) with its scales (rows of them, or 1 for per-tensor; none for unscaled
 * dtypes). Validates sizes, scales, codes (no -2^(n-1) in symmetric formats,
 * zero padding bits) and finiteness, then sets the dtype and scale mode, keeps
 * the packed copy as the cache and sets master := the dequantized values.
 * On failure the store is unchanged.
 */
LOOM_API int loom_weights_load_packed(loom_weights *w, loom_dtype d, const void *packed, size_t nbytes,
                                      const float *scales, int64_t nscales, loom_error *err);

#ifdef __cplusplus
}
#endif
