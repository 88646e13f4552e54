/*
 * Internal: the arithmetic shared by convolutions and transposed
 * convolutions (both in conv.c).
 *
 * Both are the same three products between an "image" side (a convolution's
 * input, a transposed convolution's output) and a "positions" side (the
 * places the kernel visits: a convolution's output, a transposed
 * convolution's input). With A the weight matrix seen as groups × m rows of
 * (image channels / groups) · taps columns, taps = prod(kernel):
 *
 *   positions_from_image:  pos[n][g] = A[g] · cols(img[n])[g]
 *                          (conv forward, transposed-conv input gradient)
 *   image_from_positions:  img[n] = col2im(A[g]ᵀ · pos[n][g])
 *                          (conv input gradient, transposed-conv forward)
 *   weight_gradient:       dA[g] += Σ_n pos[n][g] · cols(img[n])[g]ᵀ
 *                          (both weight gradients; samples in ascending order)
 *
 * The forward is tiled over samples, groups and blocks of positions, each
 * block gathered and multiplied by one thread; the backward products run over
 * samples and blocks of positions, each product over the pool; small samples
 * go several to a block (conv-core.c); all of sizes that depend only on the
 * problem. Each tile writes its own outputs, and
 * every sum runs in a fixed order: results are bit-identical for any pool.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "loom/error.h"
#include "loom/pool.h"

#define CONV_MAX_DIMS 3

typedef struct conv_plan {
  /* Spatial sizes padded to 3 dimensions with leading 1s (a 1-D size L is 1×1×L). */
  int64_t img[CONV_MAX_DIMS];    /* image side */
  int64_t pos[CONV_MAX_DIMS];    /* positions side */
  int64_t kernel[CONV_MAX_DIMS];
  int64_t stride[CONV_MAX_DIMS];
  int64_t padding[CONV_MAX_DIMS];
  int64_t dilation[CONV_MAX_DIMS];
  int64_t groups;
  int64_t rows_per_group;   /* rows of A per group */
  int64_t img_channels;     /* channels of the image side (all groups) */
  /* Derived by conv_plan_finish(). */
  int64_t taps, n_pos, n_img; /* prod(kernel), prod(pos), prod(img) */
  int64_t cols_per_group;   /* (img_channels / groups) · taps: columns of A */
  int64_t pos_channels;     /* groups · rows_per_group */
  int is_identity;          /* 1×1 kernel, stride 1, no padding, pos == img: cols(img) is img */
} conv_plan;

/* Whether tile products use OpenBLAS (when built with it) instead of
 * loom_sgemm (the default); for tests and benchmarks that compare the two,
 * set while no convolution runs. */
void conv_set_use_blas(bool use);

/* Computes the derived fields; every size must already be validated. */
void conv_plan_finish(conv_plan *p);

/* x, y hold `batch` samples each; A is (groups·rows_per_group) × cols_per_group row-major. */
int conv_positions_from_image(const conv_plan *p, loom_pool *pool, const float *A, const float *img, float *pos,
                              int64_t batch, loom_error *err);
int conv_image_from_positions(const conv_plan *p, loom_pool *pool, const float *A, const float *pos, float *img,
                              int64_t batch, loom_error *err);
int conv_weight_gradient(const conv_plan *p, loom_pool *pool, const float *pos, const float *img, float *dA,
                         int64_t batch, loom_error *err);

/* Short rows of positions (conv-table.c): for every column element (kernel
 * offset k, position q) of a channel, the image offset it reads, or −1 where
 * it reads padding; NULL with *rc = LOOM_OK where the plan's rows are long
 * enough for the row copies of conv-core.c (or it is an identity). The
 * product gathers or scatters in blocks of `block_rows` rows of positions
 * from row 0 (the vector level prepares for those blocks; others still
 * work). Tables are shared between calls (conv-table.c keeps the last few):
 * read-only, given back with conv_table_free. */
typedef struct conv_table conv_table;
conv_table *conv_table_new(const conv_plan *p, int64_t block_rows, loom_error *err, int *rc);
void conv_table_free(conv_table *t);
/* The image offset column element (k, q) reads, or −1 (for tests). */
int32_t conv_table_offset(const conv_table *t, const conv_plan *p, int64_t k, int64_t q);
/* Whether short rows use those lists (the default) or the row copies; for
 * tests that compare the two, set while no convolution runs. */
void conv_set_use_table(bool use);
/* The columns of the rows [r0, r1) of positions of one channel (kernel
 * offset k at out + k·row_stride), and their adjoint: adds them to the image
 * (zeroed first when `zero`), kernel offsets ascending. */
void conv_gather_table(const conv_plan *p, const conv_table *t, const float *img, float *out, int64_t row_stride,
                       int64_t r0, int64_t r1);
void conv_scatter_table(const conv_plan *p, const conv_table *t, const float *col, int64_t col_ld, int64_t r0,
                        int64_t r1, bool zero, float *img);

/* y[n][c][:] += bias[c] for `channels` channels of `spatial` values each. */
void conv_add_bias(loom_pool *pool, const float *bias, float *y, int64_t batch, int64_t channels, int64_t spatial);
/* dbias[c] += Σ_n Σ_s dy[n][c][s], summed in float64 in a fixed order. */
void conv_bias_gradient(loom_pool *pool, const float *dy, float *dbias, int64_t batch, int64_t channels,
                        int64_t spatial);
