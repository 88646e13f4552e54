/*
 * Internal to conv-table.c and its vector level: the offset lists of short
 * rows of positions (conv-core.h) and, at the AVX-512 level, the same lists
 * cut into chunks of 16 column elements that the gathers and scatters serve
 * with permutes instead of a float at a time.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu.h"
#include "layers/conv-core.h"

/* Column elements of one chunk: one AVX-512 vector. */
#define CONV_CHUNK 16
/* A chunk's image values must lie within this many aligned vectors. */
#define CONV_CHUNK_QUARTERS 4
/* Channels of at most this many floats are every chunk's window. */
#define CONV_SMALL_IMAGE (CONV_CHUNK * CONV_CHUNK_QUARTERS)

/*
 * The column elements [i0, i0 + 16) of one kernel offset, within one block
 * of rows (chunks never straddle a block). Their image values lie in the
 * `quarters` aligned vectors of 16 floats from image offset `base` (a
 * multiple of 16): lane i reads window element gidx[i] (quarter gidx[i] / 16)
 * where `valid` has bit i, and padding otherwise; `len` lanes belong to the
 * chunk (base is 0 for a channel of at most CONV_SMALL_IMAGE floats). For
 * the adjoint, quarter v's lanes in hit[v] are read by chunk lane
 * inv[v][lane] (each image value by at most one lane: distinct positions
 * read distinct values at one offset). quarters is −1 where the values spread
 * wider (those chunks take the list a float at a time), 0 where every lane
 * reads padding.
 */
typedef struct conv_chunk {
  int32_t base;
  int8_t quarters;
  uint8_t len;
  uint16_t valid, upper; /* upper: lanes whose gidx ≥ 32 */
  uint8_t gidx[CONV_CHUNK];
  uint16_t hit[CONV_CHUNK_QUARTERS];
  uint8_t inv[CONV_CHUNK_QUARTERS][CONV_CHUNK];
} conv_chunk;

/* One row of at most CONV_SEG_MAX positions at one kernel offset, where its
 * offsets are consecutive (stride and dilation 1 along the row): position i
 * reads image value base + i for i in [lo, hi), padding elsewhere. */
#define CONV_SEG_MAX 8
typedef struct conv_seg {
  int32_t base; /* may be negative: the positions before lo read nothing */
  uint8_t lo, hi;
} conv_seg;

struct conv_table {
  int32_t *offsets;    /* taps × n_pos: image offset or −1 */
  conv_seg *segs;      /* NULL, or taps × rows of positions (conv-table-avx2.c) */
  conv_chunk *chunks;  /* NULL, or taps × n_blocks × per_block */
  int64_t block_rows;  /* rows of positions of a block of the product that made it */
  int64_t n_blocks, per_block;
  int cache_slot; /* −1: the caller's own */
};

/* The list's gather of n column elements (padding reads 0) and its adjoint,
 * a float at a time: the plain levels' whole path, and the AVX-512 level's
 * for chunks whose values spread too wide for permutes. */
static inline void conv_list_gather(const int32_t *e, int64_t n, const float *img, float *out) {
  for (int64_t i = 0; i < n; i++) out[i] = e[i] >= 0 ? img[e[i]] : 0.0f;
}

static inline void conv_list_scatter(const int32_t *e, int64_t n, const float *col, float *img) {
  for (int64_t i = 0; i < n; i++)
    if (e[i] >= 0) img[e[i]] += col[i];
}

#if defined(LOOM_KERNELS_X86)
/* conv-table-avx2.c: the gather and scatter of rows [r0, r1) of positions
 * from their segments, a row a masked vector; the same values and the same
 * additions as the lists. */
void conv_gather_segs_avx2(const conv_plan *p, const conv_table *t, const float *img, float *out, int64_t row_stride,
                           int64_t r0, int64_t r1);
void conv_scatter_segs_avx2(const conv_plan *p, const conv_table *t, const float *col, int64_t col_ld, int64_t r0,
                            int64_t r1, float *img);
/* conv-table-avx512.c: the gather and scatter of one block of rows from its
 * chunks; the same values and the same additions as the lists. */
void conv_gather_chunks_avx512(const conv_plan *p, const conv_table *t, const float *img, float *out,
                               int64_t row_stride, int64_t block);
void conv_scatter_chunks_avx512(const conv_plan *p, const conv_table *t, const float *col, int64_t col_ld,
                                int64_t block, float *img);
#endif
