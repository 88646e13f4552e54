/*
 * Network DNA (DESIGN.md §5, docs/dna.md): a signature per occupied slot,
 * comparison across dtypes and across shapes, and logic shifts — a slot
 * whose learned weights turn up at another coordinate.
 *
 * A snapshot copies what comparison needs out of a network (the dequantized
 * weights, L2-normalised, and a fixed-length profile), so a worker thread can
 * take one between training steps and the UI can compare any two later
 * without touching the network again. Snapshots and results are immutable
 * after creation and may be read from any thread.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"
#include "export.h"
#include "net.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The score a best match must beat to count as a logic shift. */
#define LOOM_DNA_DEFAULT_THRESHOLD 0.8
/* The default budget for the exact (full-length) signatures of one snapshot. */
#define LOOM_DNA_DEFAULT_MAX_BYTES ((size_t)256 << 20)
/* Lengths of the fixed-length profile: sorted quantiles and a resampled map. */
#define LOOM_DNA_QUANTILES 32
#define LOOM_DNA_MAP_SIDE 8

typedef struct loom_dna_snapshot loom_dna_snapshot;
typedef struct loom_dna_result loom_dna_result;

/* What a snapshot (and a result) records about one occupied slot. */
typedef struct loom_dna_slot {
  loom_coord at;
  const loom_layer_type *type;
  loom_dtype dtype;
  int64_t values;  /* weights in the signature; 0 = a presence marker */
  int n_tensors;   /* tensors, containers' children and gates included */
  bool exact;      /* the full signature was kept (see max_bytes) */
} loom_dna_slot;

/* ---- snapshots --------------------------------------------------------- */

/*
 * Captures the signature of every occupied slot (flat order) at training
 * step `step` (any value the caller likes; it is only recorded). Reads each
 * tensor through loom_weights_effective, which fills the layers' dtype caches:
 * no other thread may use `net` during the call. Fails, naming the slot and
 * tensor, on non-finite weights. Memory: 4 bytes per weight plus a fixed
 * amount per slot, within LOOM_DNA_DEFAULT_MAX_BYTES (see _ex).
 */
LOOM_API loom_dna_snapshot *loom_dna_snapshot_new(const loom_net *net, int64_t step, loom_error *err);
/*
 * As above with a budget for the full signatures: slots are taken in flat
 * order and a slot whose full signature would overrun `max_bytes` keeps only
 * its profile (loom_dna_slot.exact is false), so a snapshot never holds more
 * than max_bytes of weights plus its per-slot profiles. max_bytes 0 keeps
 * profiles only.
 */
LOOM_API loom_dna_snapshot *loom_dna_snapshot_new_ex(const loom_net *net, int64_t step, size_t max_bytes,
                                                     loom_error *err);
LOOM_API void loom_dna_snapshot_free(loom_dna_snapshot *s);
LOOM_API int64_t loom_dna_snapshot_step(const loom_dna_snapshot *s);
LOOM_API int64_t loom_dna_snapshot_n_slots(const loom_dna_snapshot *s);
/* Slot i (flat order); a zeroed struct when i is out of range. */
LOOM_API loom_dna_slot loom_dna_snapshot_slot(const loom_dna_snapshot *s, int64_t i);
/* The path of tensor k of slot i inside its layer ("weight", "children[1].bias"); NULL if out of range. */
LOOM_API const char *loom_dna_snapshot_tensor_path(const loom_dna_snapshot *s, int64_t i, int k);
/* Bytes the snapshot holds. */
LOOM_API size_t loom_dna_snapshot_bytes(const loom_dna_snapshot *s);

/* ---- comparison -------------------------------------------------------- */

typedef struct loom_dna_pair {
  loom_coord at;   /* the coordinate both share */
  int64_t a, b;    /* slot indices in A and B */
  double score;
} loom_dna_pair;

typedef struct loom_dna_shift {
  loom_coord from; /* the slot of A */
  loom_coord to;   /* where its best match sits in B */
  int64_t a, b;    /* slot indices */
  double score;    /* similarity of the best match */
  double own;      /* similarity at its own coordinate in B (0 if B has no layer there) */
} loom_dna_shift;

/*
 * Compares every slot of A with every slot of B. threshold must lie in
 * [0, 1]. The result does not refer to the snapshots: free them at will.
 */
LOOM_API loom_dna_result *loom_dna_compare(const loom_dna_snapshot *a, const loom_dna_snapshot *b,
                                           double threshold, loom_error *err);
/* Snapshots both networks (default budget) and compares them. */
LOOM_API loom_dna_result *loom_dna_compare_nets(const loom_net *a, const loom_net *b, double threshold,
                                                loom_error *err);
LOOM_API void loom_dna_result_free(loom_dna_result *r);

LOOM_API double loom_dna_result_threshold(const loom_dna_result *r);
/* The overall index in [0, 1] (docs/dna.md): the mean best match of every slot of A in B and of B in A. */
LOOM_API double loom_dna_result_similarity(const loom_dna_result *r);
LOOM_API int64_t loom_dna_result_n_a(const loom_dna_result *r);
LOOM_API int64_t loom_dna_result_n_b(const loom_dna_result *r);
LOOM_API loom_dna_slot loom_dna_result_slot_a(const loom_dna_result *r, int64_t i);
LOOM_API loom_dna_slot loom_dna_result_slot_b(const loom_dna_result *r, int64_t j);
/* n_a × n_b similarities in [0, 1], row-major: rows follow A, columns follow B. */
LOOM_API const double *loom_dna_result_matrix(const loom_dna_result *r);
LOOM_API double loom_dna_result_at(const loom_dna_result *r, int64_t i, int64_t j); /* NAN if out of range */
/* Coordinates occupied in both, in flat order of A. */
LOOM_API int64_t loom_dna_result_n_shared(const loom_dna_result *r);
LOOM_API loom_dna_pair loom_dna_result_shared(const loom_dna_result *r, int64_t k);
/* Logic shifts, in flat order of A. */
LOOM_API int64_t loom_dna_result_n_shifts(const loom_dna_result *r);
LOOM_API loom_dna_shift loom_dna_result_shift(const loom_dna_result *r, int64_t k);

#ifdef __cplusplus
}
#endif
