/*
 * The integer product (kernels/qgemm.h) of short rows at a batch, for the
 * AVX2 level and the AVX-512 level above it (loom_kernels.qgemm_short).
 *
 * The row kernels (qgemm-avx2.c, qgemm-vnni*.c) read a row's codes in
 * 64-byte blocks, each summed over lanes into one output at the end. A row
 * of 32 columns is 32 code bytes at int8, 16 at int4, 4 at binary: the
 * block is mostly padding (a binary row is padded to 512 columns), and the
 * reductions and finish of every output cost more than its products. Tiny
 * layers (a transformer of width 32, the examples' dense layers) ran 2–8
 * times slower through them than dequantizing and loom_sgemm.
 *
 * Here each tile of 8 · MR weight rows is first decoded into a panel of
 * bytes: for each group g of 4 columns one 32-byte vector holding those 4
 * columns of each of 8 rows (the code value u, below). A product then
 * broadcasts an activation row's 4 bytes of group g and multiplies them
 * with the panel vector: after vpmaddwd, 32-bit lane i holds row i's sum
 * over the group, so the 8 lanes are 8 outputs and no sum over lanes is
 * ever taken. The panel costs O(rows · cols) per call against the
 * product's O(batch · rows · cols).
 *
 * The values multiplied are those of qgemm-avx2.c, and so are the sums:
 * - 8-bit codes: v, the code as a signed byte (uint8 XOR 0x80, corrected
 *   with 128 · Σ xq), as vpmaddubsw(|v|, sign(x, v)), each pair widened at
 *   once (a pair at most 32512);
 * - narrower codes: u, the field in the low bits of a byte (signed and
 *   ternary fields XOR 2^(n−1), corrected with Σ xq; binary bits u give
 *   q = 1 − 2u; fp4 fields through a vpshufb table to u = 2 · value + 12,
 *   corrected with −12 · Σ xq), as vpmaddubsw(u, x) into 16-bit lanes: a
 *   pair is at most 2 · (2^n − 1) · 127 (2 · 24 · 127 for fp4), and
 *   flush_groups groups of pairs (8 at 4 bits, 4 for fp4, 32 at 2, 128 at
 *   1) stay below 2^15 before vpmaddwd widens them.
 * Each output is then the exact integer of every other level, finished by
 * loom_qgemm_finish's operations (4 lanes at a time in double). A 32-bit
 * lane holds at most 128 · 127 · cols and the corrected sum twice that
 * (uint8): within int32 up to 66,052 columns, beyond
 * LOOM_QGEMM_SHORT_MAX_COLS (65,536; test-qgemm's extremes reach it).
 */
#include "kernels/cpu.h"
#include "kernels/qgemm.h"

#if defined(LOOM_KERNELS_X86)
#include <math.h>
#include <string.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2")
#include <immintrin.h>

#include "kernels/transpose-avx2.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* Weight rows a tile (8 · MR) and activation rows a tile (NB): the 8-bit
 * product keeps MR · NB 32-bit sums, v and |v| of the tile's panel vectors
 * and a broadcast in registers; the narrow one MR · NB 16-bit and 32-bit
 * sums. (At NB = 4 the 8-bit loop kept 4 of its 8 sums on the stack, a
 * load and a store each a group: 58-62 against 65 GMAC/s at 4096 × 4096,
 * batch 64.) */
enum { MR = 2, NB = 3 };

static ALWAYS_INLINE int flush_groups(int bits, bool fp4) { return fp4 ? 4 : bits == 4 ? 8 : bits == 2 ? 32 : 128; }

/* What is multiplied (qgemm-avx2.c's code_map): the code byte XOR flip,
 * and isum = times · d + offset · Σ xq, times −2 for binary codes (the only
 * 1-bit ones: finish8 knows it from the width) and 1 otherwise. */
typedef struct {
  uint8_t flip;
  int32_t offset;
} short_map;

static short_map map_of(const loom_dtype_traits *t) {
  const int bits = t->bits;
  if (t->id == LOOM_DTYPE_FP4) return (short_map){0, -LOOM_QGEMM_FP4_OFFSET};
  switch (t->kind) {
  case LOOM_DTYPE_KIND_BINARY: return (short_map){0, 1};
  case LOOM_DTYPE_KIND_UNSIGNED: return bits == 8 ? (short_map){0x80, 128} : (short_map){0, 0};
  default: { /* signed, ternary */
    if (bits == 8) return (short_map){0, 0};
    uint8_t flip = 0;
    for (int f = 0; f < 8; f += bits) flip |= (uint8_t)(1u << (f + bits - 1));
    return (short_map){flip, -(1 << (bits - 1))};
  }
  }
}

/* 32 columns of a row from their 4 · bits code bytes at p: byte c the value
 * of column c (v or u above). */
static ALWAYS_INLINE __m256i decode32(const int bits, const bool fp4, const uint8_t *p, uint8_t flip) {
  if (bits == 8)
    return _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)p), _mm256_set1_epi8((char)flip));
  if (bits == 4) {
    const __m128i c = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)p), _mm_set1_epi8((char)flip));
    const __m128i low = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(c, low), hi = _mm_and_si128(_mm_srli_epi16(c, 4), low);
    const __m256i u = _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
    if (!fp4) return u;
    const __m256i table = _mm256_add_epi8(_mm256_setr_epi8(LOOM_QGEMM_FP4_TWICE, LOOM_QGEMM_FP4_TWICE),
                                          _mm256_set1_epi8(LOOM_QGEMM_FP4_OFFSET));
    return _mm256_shuffle_epi8(table, u); /* u = 2 · value + 12 */
  }
  if (bits == 2) {
    const __m128i c = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)p), _mm_set1_epi8((char)flip));
    const __m128i low = _mm_set1_epi8(0x03);
    const __m128i f0 = _mm_and_si128(c, low), f1 = _mm_and_si128(_mm_srli_epi16(c, 2), low);
    const __m128i f2 = _mm_and_si128(_mm_srli_epi16(c, 4), low), f3 = _mm_and_si128(_mm_srli_epi16(c, 6), low);
    const __m128i f01 = _mm_unpacklo_epi8(f0, f1), f23 = _mm_unpacklo_epi8(f2, f3);
    return _mm256_set_m128i(_mm_unpackhi_epi16(f01, f23), _mm_unpacklo_epi16(f01, f23));
  }
  /* binary: bit k of byte j is column 8j + k */
  int32_t word;
  memcpy(&word, p, sizeof word);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(word), _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2,
                                                2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x((int64_t)0x8040201008040201);
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(1));
}

/* The panel of rows rows[0..8): panel + g · 32 holds group g (g < groups8,
 * a multiple of 8). A chunk that would read past `end` is read from a
 * zero-padded copy; one that reads on into the next row takes codes whose
 * activations are zero (xq is zero beyond cols). */
static ALWAYS_INLINE void build8(const int bits, const bool fp4, const uint8_t *const *rows, const uint8_t *end,
                                 uint8_t flip, int64_t groups8, uint8_t *panel) {
  const int64_t chunk = 4 * bits; /* code bytes of 32 columns */
  for (int64_t c = 0; c < groups8 / 8; c++) {
    __m256 r[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
      const uint8_t *p = rows[i] + c * chunk;
      if (p + chunk <= end) {
        r[i] = _mm256_castsi256_ps(decode32(bits, fp4, p, flip));
      } else {
        uint8_t tmp[32] = {0};
        memcpy(tmp, p, (size_t)(end - p));
        r[i] = _mm256_castsi256_ps(decode32(bits, fp4, tmp, flip));
      }
    }
    transpose8_halves(r);
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++) {
      _mm256_store_ps((float *)(void *)(panel + (8 * c + g) * 32), _mm256_permute2f128_ps(r[g], r[4 + g], 0x20));
      _mm256_store_ps((float *)(void *)(panel + (8 * c + g + 4) * 32), _mm256_permute2f128_ps(r[g], r[4 + g], 0x31));
    }
  }
}

static ALWAYS_INLINE __m256i bcast4(const int8_t *x) {
  int32_t v;
  memcpy(&v, x, sizeof v);
  return _mm256_set1_epi32(v);
}

/* The sums of the tile's MR · 8 rows (panel vectors m · groups8 + g) with
 * nb activation rows x[0..nb), over `groups` groups of 4 columns. */
static ALWAYS_INLINE void product(const int bits, const bool fp4, const int nb, const uint8_t *panel, int64_t groups8,
                                  int64_t groups, const int8_t *const *x, __m256i (*init)[MR],
                                  __m256i acc[NB][MR]) {
  const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 4
  for (int n = 0; n < nb; n++)
#pragma GCC unroll 2
    for (int m = 0; m < MR; m++) acc[n][m] = init ? init[n][m] : _mm256_setzero_si256();
  if (bits == 8) {
    for (int64_t g = 0; g < groups; g++) {
      __m256i v[MR], mag[MR];
#pragma GCC unroll 2
      for (int m = 0; m < MR; m++) {
        v[m] = _mm256_load_si256((const __m256i *)(const void *)(panel + (m * groups8 + g) * 32));
        mag[m] = _mm256_abs_epi8(v[m]);
      }
#pragma GCC unroll 4
      for (int n = 0; n < nb; n++) {
        const __m256i xb = bcast4(x[n] + 4 * g);
#pragma GCC unroll 2
        for (int m = 0; m < MR; m++)
          acc[n][m] = _mm256_add_epi32(acc[n][m],
                                       _mm256_madd_epi16(_mm256_maddubs_epi16(mag[m], _mm256_sign_epi8(xb, v[m])), ones));
      }
    }
    return;
  }
  const int64_t flush = flush_groups(bits, fp4);
  for (int64_t g0 = 0; g0 < groups; g0 += flush) {
    const int64_t g1 = groups - g0 < flush ? groups : g0 + flush;
    __m256i acc16[NB][MR];
#pragma GCC unroll 4
    for (int n = 0; n < nb; n++)
#pragma GCC unroll 2
      for (int m = 0; m < MR; m++) acc16[n][m] = _mm256_setzero_si256();
    for (int64_t g = g0; g < g1; g++) {
      __m256i u[MR];
#pragma GCC unroll 2
      for (int m = 0; m < MR; m++) u[m] = _mm256_load_si256((const __m256i *)(const void *)(panel + (m * groups8 + g) * 32));
#pragma GCC unroll 4
      for (int n = 0; n < nb; n++) {
        const __m256i xb = bcast4(x[n] + 4 * g);
#pragma GCC unroll 2
        for (int m = 0; m < MR; m++) acc16[n][m] = _mm256_add_epi16(acc16[n][m], _mm256_maddubs_epi16(u[m], xb));
      }
    }
#pragma GCC unroll 4
    for (int n = 0; n < nb; n++)
#pragma GCC unroll 2
      for (int m = 0; m < MR; m++) acc[n][m] = _mm256_add_epi32(acc[n][m], _mm256_madd_epi16(acc16[n][m], ones));
  }
}

/* The 8 outputs of 8 sums d: loom_qgemm_finish's operations with isum =
 * times · d + offset · Σ xq[b] (in int32: see the top). off: offset · Σ xq[b];
 * sw: the 8 rows' scales and sx the activation row's, in double. */
static ALWAYS_INLINE __m256 finish8(const int bits, __m256i d, __m256i off, const __m256d sw[2], __m256d sx) {
  const __m256i td = bits != 1 ? d : _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_add_epi32(d, d));
  const __m256i isum = _mm256_add_epi32(td, off);
  const __m128 lo = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(isum)),
                                                  _mm256_mul_pd(sw[0], sx)));
  const __m128 hi = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(isum, 1)),
                                                  _mm256_mul_pd(sw[1], sx)));
  return _mm256_set_m128(hi, lo);
}

/* The first n (≤ 8) of 8 outputs. */
static ALWAYS_INLINE void store8(float *out, int n, __m256 y) {
  if (n == 8) {
    _mm256_storeu_ps(out, y);
  } else {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    _mm256_maskstore_ps(out, _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes), y);
  }
}

/* The tile's rows r … r + 8 · MR (nrows[m] of panel m are real) against
 * activation rows b … b + nb over the block of groups [k0, k0 + groups):
 * the product, plus the sums carried from the blocks before (unless
 * first); then, unless last, the sums carried on, else each activation
 * row's outputs (NaN for a row that held NaN or ±inf), its values loaded
 * once for the MR panels. One instance per nb keeps the sums in registers. */
static ALWAYS_INLINE void tile(const int bits, const bool fp4, const int nb, const loom_qgemm_job *j,
                               const short_map *mp, int64_t r, const int nrows[MR], __m256d sw[MR][2],
                               const uint8_t *panel, int64_t groups8, int64_t k0, int64_t groups, bool first, bool last,
                               int64_t b, __m256i carry[][MR]) {
  const int8_t *x[NB];
#pragma GCC unroll 4
  for (int n = 0; n < nb; n++) x[n] = j->xq + (b + n) * j->xstride + 4 * k0;
  __m256i acc[NB][MR];
  product(bits, fp4, nb, panel, groups8, groups, x, first ? NULL : carry, acc);
  if (!last) {
#pragma GCC unroll 4
    for (int n = 0; n < nb; n++)
#pragma GCC unroll 2
      for (int m = 0; m < MR; m++) carry[n][m] = acc[n][m];
    return;
  }
#pragma GCC unroll 4
  for (int n = 0; n < nb; n++) {
    float *out = j->y + (b + n) * j->rows + r;
    if (j->bad[b + n]) {
      for (int m = 0; m < MR; m++)
        if (nrows[m]) store8(out + 8 * m, nrows[m], _mm256_set1_ps(NAN));
      continue;
    }
    const __m256d sx = _mm256_set1_pd((double)j->sx[b + n]);
    const __m256i off = _mm256_set1_epi32((int32_t)(mp->offset * j->xsum[b + n]));
#pragma GCC unroll 2
    for (int m = 0; m < MR; m++)
      if (nrows[m]) store8(out + 8 * m, nrows[m], finish8(bits, acc[n][m], off, sw[m], sx));
  }
}

/* Rows of up to BLOCK_GROUPS groups of 4 columns are one block: each tile
 * of weight rows is decoded once for all activation rows [b0, b1). Longer
 * rows go in blocks of that many groups (1024 columns), the panel of each
 * block decoded in turn (16 KiB: it stays in L1 while the activation rows
 * pass over it) for CHUNK activation rows at a time, whose 32-bit sums are
 * carried from block to block. The integer sums are exact, so blocks change
 * no bit. (Blocks of 128 or 512 groups measured within 4 % of these on Zen
 * 3, 4096 × 4096 at a batch of 64.) */
enum { BLOCK_GROUPS = 256, CHUNK = 64 };

static ALWAYS_INLINE void rows_bits(const int bits, const bool fp4, const loom_qgemm_job *j, int64_t r0, int64_t r1,
                                    int64_t b0, int64_t b1, uint8_t *panel, __m256i carry[CHUNK][MR]) {
  const short_map mp = map_of(j->t);
  const int64_t groups = (j->cols + 3) / 4;
  const int64_t chunk = groups <= BLOCK_GROUPS ? (b1 - b0) : CHUNK;
  const uint8_t *end = j->packed + (size_t)j->rows * j->row_bytes;
  for (int64_t r = r0; r < r1; r += 8 * MR) {
    __m256d sw[MR][2];
    int nrows[MR];
    const uint8_t *rowp[MR][8];
    for (int m = 0; m < MR; m++) {
      float s[8];
      const int64_t rm = r + 8 * m;
      nrows[m] = r1 - rm >= 8 ? 8 : r1 - rm > 0 ? (int)(r1 - rm) : 0;
      for (int i = 0; i < 8; i++) {
        const int64_t ri = i < nrows[m] ? rm + i : nrows[m] ? rm + nrows[m] - 1 : r0; /* past r1: any row */
        rowp[m][i] = j->packed + (size_t)ri * j->row_bytes;
        s[i] = j->scales[j->nscales == 1 ? 0 : ri];
      }
      sw[m][0] = _mm256_cvtps_pd(_mm_loadu_ps(s));
      sw[m][1] = _mm256_cvtps_pd(_mm_loadu_ps(s + 4));
    }
    for (int64_t bc = b0; bc < b1; bc += chunk) {
      const int64_t bc1 = b1 - bc < chunk ? b1 : bc + chunk;
      for (int64_t k0 = 0; k0 < groups; k0 += BLOCK_GROUPS) {
        const int64_t kg = groups - k0 < BLOCK_GROUPS ? groups - k0 : BLOCK_GROUPS, kg8 = (kg + 7) / 8 * 8;
        const bool first = k0 == 0, last = k0 + kg == groups;
        for (int m = 0; m < MR; m++) {
          const uint8_t *bp[8];
          for (int i = 0; i < 8; i++) bp[i] = rowp[m][i] + k0 * bits / 2; /* 4 · bits / 8 bytes a group */
          build8(bits, fp4, bp, end, mp.flip, kg8, panel + m * kg8 * 32);
        }
        /* one block: nothing carried, and the chunk may pass CHUNK rows */
#define CARRY (first && last ? carry : carry + (b - bc))
        int64_t b = bc;
        for (; b + NB <= bc1; b += NB)
          tile(bits, fp4, NB, j, &mp, r, nrows, sw, panel, kg8, k0, kg, first, last, b, CARRY);
        switch (bc1 - b) {
        case 1: tile(bits, fp4, 1, j, &mp, r, nrows, sw, panel, kg8, k0, kg, first, last, b, CARRY); break;
        case 2: tile(bits, fp4, 2, j, &mp, r, nrows, sw, panel, kg8, k0, kg, first, last, b, CARRY); break;
        default: break;
        }
#undef CARRY
      }
    }
  }
}

static void qgemm_short_avx2(const loom_qgemm_job *j, int64_t r0, int64_t r1, int64_t b0, int64_t b1) {
  _Alignas(32) uint8_t panel[MR * 8 * BLOCK_GROUPS * 4]; /* 4 column bytes of 8 rows a vector */
  _Alignas(32) __m256i carry[CHUNK][MR];
  if (j->t->id == LOOM_DTYPE_FP4) {
    rows_bits(4, true, j, r0, r1, b0, b1, panel, carry);
    return;
  }
  switch (j->t->bits) {
  case 1: rows_bits(1, false, j, r0, r1, b0, b1, panel, carry); break;
  case 2: rows_bits(2, false, j, r0, r1, b0, b1, panel, carry); break;
  case 4: rows_bits(4, false, j, r0, r1, b0, b1, panel, carry); break;
  default: rows_bits(8, false, j, r0, r1, b0, b1, panel, carry); break;
  }
}

void loom_kernels_fill_qgemm_short_avx2(loom_kernels *k) { k->qgemm_short = qgemm_short_avx2; }
#pragma GCC pop_options
#endif
