/*
 * Internal: row kernels shared by the softmax family (softmax.c,
 * softmax-tree.c, sparsemax.c) and k-means (kmeans.c).
 *
 * Every family member normalises "rows": the last dimension of the per-sample
 * shape. A batch of B samples of shape [..., n] is B·(numel/n) rows of n
 * entries, processed independently, so rows are split across the pool with a
 * grain that depends on n only (bit-identical for any thread count).
 * Arithmetic inside a row runs in float64 and is rounded once to float32.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "layers/layer-impl.h"

/* y = softmax(scale·x) over n entries. keep (may be NULL: all kept) selects
 * the entries that take part: keep[i] == 0 gives y[i] = 0 exactly, and x[i]
 * is not read. At least one entry must be kept. */
void softmax_row_forward(const float *x, float *y, int64_t n, double scale, const float *keep);

/* The exact vector-Jacobian product of the above, from its output y:
 * dx = scale · y ⊙ (dy − ⟨y, dy⟩). Entries with y == 0 get dx == 0. */
void softmax_row_backward(const float *y, const float *dy, float *dx, int64_t n, double scale);

/* Softmax in float64 into p (n entries) of scale·x; returns nothing, p sums to 1. */
void softmax_row_f64(const float *x, double *p, int64_t n, double scale);

/* The last dimension of a shape (the row length) and the number of rows per sample. */
int64_t rows_last_dim(const loom_shape *s);
int64_t rows_per_sample(const loom_shape *s);

/* A pool grain for rows of n entries: about 16k entries per range. */
int64_t rows_grain(int64_t n);

/* Checks that a built layer's input shape is usable as rows (rank >= 1, every
 * dimension >= 1); the error names the layer and the shape. */
int rows_check_shape(const loom_layer *l, const loom_shape *in, loom_error *err);

/* Fails with LOOM_ERR_NONFINITE naming the sample, row and entry of the first
 * NaN or infinity among `batch` samples of `rows` rows of n entries. Entries
 * whose keep value is 0 are skipped (keep may be NULL; keep_len is n or rows·n,
 * repeated for every sample). */
int rows_check_finite(const loom_layer *l, const float *x, int64_t batch, int64_t rows, int64_t n,
                      const float *keep, int64_t keep_len, loom_error *err);

/* Formats a double without trailing noise for describe() strings: "0.5", "2". */
const char *rows_format_number(double v, char *buf, size_t size);

/* Runs fn over [0, n) on ctx's pool (ctx may be NULL). */
void rows_parallel(const loom_ctx *ctx, int64_t n, int64_t grain, loom_range_fn fn, void *arg);

/* gumbel_softmax's noise (gumbel-softmax.c), for the Vulkan backend, which
 * draws it on the host: the key of layer l at a context's seed and step,
 * and the Gumbel(0, 1) value of flat entry `index` of the batch. */
uint64_t gumbel_softmax_key(const loom_layer *l, uint64_t seed, uint64_t step);
double gumbel_softmax_noise(uint64_t key, int64_t index);

/* hierarchical_softmax's tree (hierarchical-softmax.c): the children count
 * of every inner node, breadth first (*blocks, malloc'd: the caller frees
 * it), the logits and the leaves; an error names the layer and parameter,
 * also when they no longer match the shapes the layer was built for. */
int hsoftmax_tree(const loom_layer *l, int64_t **blocks, int64_t *n_blocks, int64_t *n_logits, int64_t *n_leaves,
                  loom_error *err);
