/*
 * In-memory datasets: float32 inputs (n × numel(input_shape), batch-major like
 * activations) and either class labels (n × heads int32, heads = 1 for
 * ordinary classification) or float target vectors (n × width). Seeded
 * shuffling into mini-batches, seeded train/test splits, normalisation fitted
 * on the train split, synthetic generators, the 8×8 digits set, CSV and .npy
 * import. Every random choice derives from an explicit seed, so the same
 * seed gives bit-identical data on every machine. See docs/training.md.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "export.h"
#include "shape.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum loom_target_kind {
  LOOM_TARGET_CLASS = 0,  /* labels: n × width int32 in [0, n_classes) */
  LOOM_TARGET_VECTOR = 1, /* targets: n × width float32 */
} loom_target_kind;

typedef struct loom_dataset {
  int64_t n;               /* samples */
  loom_shape input_shape;  /* per sample */
  int64_t input_numel;     /* numel(input_shape) */
  float *inputs;           /* n × input_numel */
  loom_target_kind target_kind;
  int64_t target_width;    /* class: heads per sample; vector: floats per sample */
  int64_t n_classes;       /* class targets; 0 for vectors */
  int32_t *labels;         /* class targets, else NULL */
  float *targets;          /* vector targets, else NULL */
  char **class_names;      /* n_classes names (CSV text labels) or NULL */
  uint8_t *head_mask;      /* class targets, optional: n × width, nonzero = head active; NULL = all active */
} loom_dataset;

/* Allocates a zero-filled dataset (sizes checked for overflow first). */
LOOM_API loom_dataset *loom_dataset_new(int64_t n, const loom_shape *input_shape, loom_target_kind kind,
                                        int64_t target_width, int64_t n_classes, loom_error *err);
LOOM_API void loom_dataset_free(loom_dataset *ds);
LOOM_API loom_dataset *loom_dataset_clone(const loom_dataset *ds, loom_error *err);
/* Sets (copies) the per-sample head mask of class targets: n × target_width
 * bytes, nonzero = the head takes part in multi-head cross-entropy and its
 * accuracy, 0 = ignored (its label is not checked). NULL removes the mask. */
LOOM_API int loom_dataset_set_head_mask(loom_dataset *ds, const uint8_t *mask, loom_error *err);
/* Finite inputs and targets, labels of active heads in range, consistent sizes; errors name the sample. */
LOOM_API int loom_dataset_validate(const loom_dataset *ds, loom_error *err);
/* The samples indices[0..count-1], in that order. */
LOOM_API loom_dataset *loom_dataset_subset(const loom_dataset *ds, const int64_t *indices, int64_t count,
                                           loom_error *err);
/* Replaces the per-sample input shape by one with the same numel (e.g. [64] ↔ [1×8×8]). */
LOOM_API int loom_dataset_reshape_inputs(loom_dataset *ds, const loom_shape *shape, loom_error *err);
/* Class labels (one head) as float vectors: one_hot → width n_classes,
 * else width 1 holding the index (for BCE with two classes, or MSE). */
LOOM_API int loom_dataset_labels_to_vectors(loom_dataset *ds, bool one_hot, loom_error *err);

/* ---- shuffling and splitting -------------------------------------------- */

/* A permutation of [0, n) that depends only on (n, seed, epoch) (Fisher-Yates). */
LOOM_API void loom_permutation(int64_t n, uint64_t seed, uint64_t epoch, int64_t *perm);

/*
 * Shuffles with `seed`, then puts the first ceil(test_fraction·n) samples
 * (ignoring floating-point noise: 0.1·30 gives 3) in *test and the rest in
 * *train (sample order inside each follows the shuffle).
 * 0 < test_fraction < 1 and both parts must be non-empty.
 */
LOOM_API int loom_dataset_split(const loom_dataset *ds, double test_fraction, uint64_t seed, loom_dataset **train,
                                loom_dataset **test, loom_error *err);

/* ---- normalisation (fit on the train split, apply to both) -------------- */

typedef enum loom_norm_kind {
  LOOM_NORM_NONE = 0,
  LOOM_NORM_MINMAX = 1, /* (x - min) / (max - min); a constant feature maps to 0 */
  LOOM_NORM_ZSCORE = 2, /* (x - mean) / std (population std); a constant feature maps to 0 */
} loom_norm_kind;

typedef struct loom_normalizer {
  loom_norm_kind kind;
  int64_t n_features;
  double *offset; /* x' = (x - offset) · scale, per input feature */
  double *scale;
} loom_normalizer;

LOOM_API const char *loom_norm_name(loom_norm_kind kind); /* "none", "minmax", "zscore" */
LOOM_API int loom_norm_from_name(const char *name, loom_norm_kind *out, loom_error *err);
LOOM_API int loom_normalizer_fit(const loom_dataset *train, loom_norm_kind kind, loom_normalizer *out,
                                 loom_error *err);
LOOM_API int loom_normalizer_apply(const loom_normalizer *norm, loom_dataset *ds, loom_error *err);
LOOM_API void loom_normalizer_clear(loom_normalizer *norm);

/* ---- mini-batches -------------------------------------------------------- */

typedef struct loom_batch {
  int64_t size;          /* samples in this batch */
  const float *inputs;   /* size × input_numel */
  const int32_t *labels; /* size × target_width, or NULL */
  const float *targets;  /* size × target_width, or NULL */
  const uint8_t *head_mask; /* size × target_width, or NULL (all heads active) */
} loom_batch;

typedef struct loom_batcher loom_batcher;

/* Batches over `ds` (which must outlive the batcher). shuffle: each epoch
 * visits the samples in loom_permutation(n, seed, epoch) order, else in
 * order. drop_last drops a final partial batch. */
LOOM_API loom_batcher *loom_batcher_new(const loom_dataset *ds, int64_t batch_size, bool shuffle, bool drop_last,
                                        uint64_t seed, loom_error *err);
LOOM_API void loom_batcher_free(loom_batcher *b);
LOOM_API int64_t loom_batcher_n_batches(const loom_batcher *b);
/* Selects the epoch's order (a pure function of seed and epoch). */
LOOM_API void loom_batcher_set_epoch(loom_batcher *b, uint64_t epoch);
/* Gathers batch `index` of the current epoch into the batcher's buffers;
 * *out stays valid until the next call. */
LOOM_API int loom_batcher_get(loom_batcher *b, int64_t index, loom_batch *out, loom_error *err);

/* ---- generators ---------------------------------------------------------- */

/* Spirals: `classes` arms of n_per_class points each (input [2]). */
LOOM_API loom_dataset *loom_gen_spiral(int64_t n_per_class, int64_t classes, double noise, uint64_t seed,
                                       loom_error *err);
/* XOR: uniform points in [-1,1]², label (x>0) xor (y>0), Gaussian noise on the inputs. */
LOOM_API loom_dataset *loom_gen_xor(int64_t n, double noise, uint64_t seed, loom_error *err);
/* Two concentric circles (radius 1 → class 0, radius `factor` in (0,1) → class 1). */
LOOM_API loom_dataset *loom_gen_circles(int64_t n, double factor, double noise, uint64_t seed, loom_error *err);
/* Gaussian clusters: `classes` centres uniform in [-1,1]^dims, std `noise`. */
LOOM_API loom_dataset *loom_gen_clusters(int64_t n, int64_t classes, int64_t dims, double noise, uint64_t seed,
                                         loom_error *err);
/* Sine prediction: `window` samples of sin(ω·t + φ) (input [window×1]) →
 * the next value (target width 1); ω ~ U[0.1, 0.5], φ ~ U[0, 2π); Gaussian
 * noise on the inputs only. */
LOOM_API loom_dataset *loom_gen_sine(int64_t n, int64_t window, double noise, uint64_t seed, loom_error *err);
/* Copy/recall: `length` random symbols, a delimiter, `length` blanks, one-hot
 * over symbols+2 tokens (input [(2·length+1)×(symbols+2)]); labels: the
 * symbols again, one head per position (multi-head CE, classes = symbols). */
LOOM_API loom_dataset *loom_gen_copy(int64_t n, int64_t length, int64_t symbols, double noise, uint64_t seed,
                                     loom_error *err);

/* Running parity: `length` random bits (input [length×1]) and, per position,
 * the parity of the bits so far (labels: one head per position, 2 classes;
 * the last head is the parity of the whole string). engine/train/dataset-seq.c */
LOOM_API loom_dataset *loom_gen_parity(int64_t n, int64_t length, uint64_t seed, loom_error *err);
/* Next-character prediction: windows of `window` bytes every `stride` bytes;
 * the classes are the text's distinct bytes in ascending order (class_names
 * hold them, escaped); inputs one-hot [window×vocab] or class indices
 * [window] (for an embedding); labels: the next byte at every position. */
LOOM_API loom_dataset *loom_dataset_from_text(const char *text, size_t len, int64_t window, int64_t stride,
                                              bool one_hot, loom_error *err);
/* The same from a file (at most 16 MiB), e.g. data/datasets/loom-tale.txt. */
LOOM_API loom_dataset *loom_dataset_load_text(const char *path, int64_t window, int64_t stride, bool one_hot,
                                              loom_error *err);

/* ---- files --------------------------------------------------------------- */

/* The UCI 8×8 digits CSV (optionally gzip'ed): 64 pixels 0..16 and a label
 * per row; inputs ÷16, shape [1×8×8] when image_shape else [64]. */
LOOM_API loom_dataset *loom_dataset_load_digits(const char *path, bool image_shape, loom_error *err);

typedef enum loom_csv_header {
  LOOM_CSV_HEADER_AUTO = 0, /* detected: see docs/training.md */
  LOOM_CSV_HEADER_YES = 1,
  LOOM_CSV_HEADER_NO = 2,
} loom_csv_header;

typedef struct loom_csv_options {
  loom_csv_header header;
  char delimiter;          /* ',' ';' '\t' or another byte; 0 = detect (docs/training.md) */
  const char *label_name;  /* label column by header name; NULL: use label_index */
  int64_t label_index;     /* 0-based; negative counts from the end (-1 = last) */
  loom_target_kind target; /* CLASS: integer or text labels; VECTOR: a number per row */
  const int64_t *features; /* 0-based column indices used as inputs, in this
                              order; NULL/0 = every column but the target */
  int64_t n_features;
} loom_csv_options;

/* Defaults: header auto, ',', last column, class labels, every other column a feature. */
LOOM_API loom_csv_options loom_csv_options_default(void);
/* Reads a CSV file (gzip'ed or plain). The feature columns (all but the
 * label unless opts->features says otherwise) become the inputs, shape
 * [n_features]; other columns are not read. Class targets need at least two
 * classes. Errors name the file, line and column. */
LOOM_API loom_dataset *loom_dataset_load_csv(const char *path, const loom_csv_options *opts, loom_error *err);

/* The first rows of a CSV file, for an import dialog. Cells are copies. */
typedef struct loom_csv_preview {
  int64_t n_columns;    /* the most fields of any previewed row */
  int64_t n_rows;       /* data rows returned (the header row not counted) */
  char **cells;         /* n_rows × n_columns, NULL for a missing cell */
  char **header;        /* n_columns names (NULL for a missing one) when the
                           first row is a header per opts->header, else NULL */
  bool header_detected; /* what header = auto decides for this file */
  char delimiter;       /* opts->delimiter, or the detected one when it is 0 */
  bool *numeric;        /* per column: every previewed cell parses as a number */
  int64_t *distinct;    /* per column: distinct values among the previewed rows */
} loom_csv_preview;

/* Reads only the first max_rows (1..100000) data rows, plus the header row.
 * Uses opts->header and opts->delimiter (0 = detect); the other options are
 * ignored. A malformed quote or a short row does not fail the preview (the
 * loader reports it); an unreadable or empty file does. */
LOOM_API int loom_csv_preview_read(const char *path, const loom_csv_options *opts, int64_t max_rows,
                                   loom_csv_preview *out, loom_error *err);
LOOM_API void loom_csv_preview_clear(loom_csv_preview *p);

/* inputs.npy [n, ...] (1-4 dims per sample) and targets.npy: [n] or [n,k]
 * class indices (kind CLASS, k heads) or [n] / [n,k] floats (kind VECTOR). */
LOOM_API loom_dataset *loom_dataset_load_npy(const char *inputs_path, const char *targets_path,
                                             loom_target_kind kind, loom_error *err);

#ifdef __cplusplus
}
#endif
