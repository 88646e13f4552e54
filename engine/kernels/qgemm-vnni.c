/*
 * The integer product (kernels/qgemm.h) with AVX-512 VNNI: vpdpbusd
 * multiplies 64 unsigned bytes by 64 signed bytes and adds each group of
 * four products into one of 16 int32 lanes.
 *
 * The weights are the unsigned operand, so no code needs sign extension: a
 * signed n-bit code c (and ternary's) XOR 2^(n−1) is u = q + 2^(n−1), an
 * unsigned code is u = q, a binary bit is u with q = 1 − 2u; then
 *
 *   Σ q·xq = Σ u·xq − 2^(n−1)·Σ xq   (signed, ternary)
 *          = Σ xq − 2·Σ u·xq          (binary)
 *
 * and Σ xq is known per activation row. fp4 fields go through a vpshufb
 * table to u = 2 · value + 12 (qgemm.h), corrected with −12 · Σ xq. For
 * n < 8 the XOR applies to every field of a byte at once and field k of
 * 64 bytes is (bytes >> k·n) & mask (a 16-bit shift: the bits that cross
 * from the next byte are masked off);
 * its 64 columns are not consecutive, which is why the activations come
 * permuted (xp, qgemm.h). Columns past the row's end meet zero activations.
 *
 * Blocking (the GEMM; the GEMV, batch 1, is in qgemm-vnni-gemv.c, and 8-bit
 * and 4-bit codes from batch LOOM_QGEMM_PANEL_MIN_BATCH in qgemm-vnni-panel.c): 4 rows ×
 * 4 activation rows = 16 accumulators, each weight and activation vector loaded once per block;
 * columns in chunks of 4096 code bytes, so 4 weight rows of a chunk stay in
 * L1 while every activation row passes over them, and so no int32 lane can
 * overflow (a lane adds at most 4096 / 64 · 8 · 4 products of |u·xq| ≤ 255 ·
 * 127 before it is widened to 64 bits).
 */
#include "kernels/cpu.h"
#include "kernels/qgemm.h"

#if defined(LOOM_KERNELS_X86)
#include <math.h>
#include <string.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#include <immintrin.h>

#include "kernels/qgemm-vnni-simd.h"

enum { RB = 4, XB = 4, CHUNK = 4096, BATCH_GROUP = 256, PANEL = 16 };
#define PF_HINT _MM_HINT_T0

/* One 64-byte block of codes at byte offset o of each row, its fields
 * multiplied into acc. `avail` < 64 loads only that many bytes (the row's
 * last block; the rest read as zero). */
static ALWAYS_INLINE void block(const int bits, const bool fp4, const int nb, const bool pf,
                                const uint8_t *const *rowp, const int8_t *const *xb, int64_t o, int64_t avail,
                                int64_t next, __m512i flip, __m512i acc[RB][XB]) {
  const int m = 8 / bits;
  const __m512i low = _mm512_set1_epi8((char)((1 << bits) - 1));
  __m512i w[RB];
#pragma GCC unroll 4
  for (int r = 0; r < RB; r++) {
    w[r] = avail >= 64 ? _mm512_loadu_si512(rowp[r] + o)
                       : _mm512_maskz_loadu_epi8(_bzhi_u64(~UINT64_C(0), (unsigned)avail), rowp[r] + o);
    w[r] = _mm512_xor_si512(w[r], flip);
    if (pf) _mm_prefetch((const char *)(rowp[r] + o + next), PF_HINT);
  }
  const int64_t xo = o * m; /* the block's first column */
#pragma GCC unroll 8
  for (int k = 0; k < m; k++) {
    __m512i e[RB];
#pragma GCC unroll 4
    for (int r = 0; r < RB; r++) {
      e[r] = bits == 8 ? w[r] : _mm512_and_si512(k ? _mm512_srli_epi16(w[r], (unsigned)(k * bits)) : w[r], low);
      if (fp4) e[r] = fp4_u(e[r]);
    }
#pragma GCC unroll 4
    for (int b = 0; b < nb; b++) {
      const __m512i xv = _mm512_loadu_si512(xb[b] + xo + k * 64);
#pragma GCC unroll 4
      for (int r = 0; r < RB; r++) dpbusd_m(&acc[r][b], e[r], xv);
    }
  }
}

/* Σ u·xq over code bytes [o0, o1) of RB rows and nb activation rows, added
 * to dot. */
static ALWAYS_INLINE void chunk(const int bits, const bool fp4, const int nb, const bool pf,
                                const uint8_t *const *rowp, const int8_t *const *xb, int64_t o0, int64_t o1,
                                int64_t row_bytes, int64_t next, __m512i flip, int64_t dot[XB][RB]) {
  __m512i acc[RB][XB];
#pragma GCC unroll 4
  for (int r = 0; r < RB; r++)
#pragma GCC unroll 4
    for (int b = 0; b < XB; b++) acc[r][b] = _mm512_setzero_si512();
  const int64_t full = o1 < row_bytes ? o1 : row_bytes / 64 * 64;
  int64_t o = o0;
  for (; o + 64 <= full; o += 64) block(bits, fp4, nb, pf, rowp, xb, o, 64, next, flip, acc);
  if (o < o1 && o < row_bytes) block(bits, fp4, nb, pf, rowp, xb, o, row_bytes - o, next, flip, acc);
#pragma GCC unroll 4
  for (int b = 0; b < nb; b++) {
    __m256i *d = (__m256i *)(void *)dot[b];
    _mm256_storeu_si256(d, _mm256_add_epi64(_mm256_loadu_si256(d), _mm256_cvtepi32_epi64(
                                                                     sum4(acc[0][b], acc[1][b], acc[2][b], acc[3][b]))));
  }
}

static ALWAYS_INLINE void rows_bits(const int bits, const bool fp4, const loom_qgemm_job *j, int64_t r0,
                                    int64_t r1) {
  const loom_dtype_kind kind = j->t->kind;
  const bool offset = !fp4 && (kind == LOOM_DTYPE_KIND_SIGNED || kind == LOOM_DTYPE_KIND_TERNARY);
  /* isum = d − s · base */
  const int64_t base = fp4 ? LOOM_QGEMM_FP4_OFFSET : offset ? INT64_C(1) << (bits - 1) : 0;
  uint8_t flip_byte = 0;
  for (int f = 0; offset && f < 8; f += bits) flip_byte |= (uint8_t)(1u << (f + bits - 1));
  const __m512i flip = _mm512_set1_epi8((char)flip_byte);
  const int64_t rb = j->row_bytes, next = RB * rb;
  /* Outputs go out a panel of 16 rows at a time: row r of every activation
   * row b is y[b · rows + r], so a block of 4 rows would write a quarter of
   * a cache line in each of `batch` lines one `rows` apart, which share an
   * L1 set when rows is a power of two; that cost 15-20 % of a 4096² GEMM. */
  for (int64_t p0 = r0; p0 < r1; p0 += PANEL) {
    const int64_t p1 = r1 - p0 < PANEL ? r1 : p0 + PANEL;
    for (int64_t g = 0; g < j->batch; g += BATCH_GROUP) {
      const int64_t gn = j->batch - g < BATCH_GROUP ? j->batch - g : BATCH_GROUP;
      float out[BATCH_GROUP][PANEL];
      for (int64_t r = p0; r < p1; r += RB) {
        const uint8_t *rowp[RB];
        for (int i = 0; i < RB; i++) /* a short last block repeats its last row */
          rowp[i] = j->packed + (size_t)(r + i < p1 ? r + i : p1 - 1) * (size_t)rb;
        int64_t dot[(BATCH_GROUP + XB - 1) / XB][XB][RB];
        memset(dot, 0, (size_t)((gn + XB - 1) / XB) * sizeof dot[0]);
        for (int64_t o0 = 0; o0 < rb; o0 += CHUNK) {
          const int64_t o1 = rb - o0 < CHUNK ? rb : o0 + CHUNK;
          for (int64_t b = 0; b < gn; b += XB) {
            const int8_t *xb[XB];
            for (int i = 0; i < XB; i++) /* likewise the last activation block */
              xb[i] = j->xp + (g + (b + i < gn ? b + i : gn - 1)) * j->xstride;
            /* The first pass over a chunk of the rows fetches the next
             * rows' chunk (RB rows on), which the other passes leave time
             * to arrive: without it every block of rows began with a pass
             * at memory latency. */
            if (gn == 1)
              chunk(bits, fp4, 1, true, rowp, xb, o0, o1, rb, next, flip, dot[b / XB]);
            else if (b == 0)
              chunk(bits, fp4, XB, true, rowp, xb, o0, o1, rb, next, flip, dot[b / XB]);
            else
              chunk(bits, fp4, XB, false, rowp, xb, o0, o1, rb, next, flip, dot[b / XB]);
          }
        }
        /* loom_qgemm_finish's operations, the block's 4 rows at a time
         * (out has room for the lanes past p1) */
        const __mmask8 mask = (__mmask8)(p1 - r >= RB ? 0xf : (1u << (p1 - r)) - 1);
        const __m256d sw = _mm256_cvtps_pd(j->nscales == 1 ? _mm_set1_ps(j->scales[0])
                                                           : _mm_maskz_loadu_ps(mask, j->scales + r));
        for (int64_t b = 0; b < gn; b++) {
          const int64_t bb = g + b, s = j->xsum[bb];
          const __m256i d = _mm256_loadu_si256((const __m256i *)(const void *)dot[b / XB][b % XB]);
          const __m256i isum = kind == LOOM_DTYPE_KIND_BINARY ? _mm256_sub_epi64(_mm256_set1_epi64x(s), _mm256_add_epi64(d, d))
                                                             : _mm256_sub_epi64(d, _mm256_set1_epi64x(s * base));
          const __m256d f = _mm256_mul_pd(sw, _mm256_set1_pd((double)j->sx[bb]));
          const __m128 yv = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtepi64_pd(isum), f));
          _mm_storeu_ps(&out[b][r - p0], j->bad[bb] ? _mm_set1_ps(NAN) : yv);
        }
      }
      for (int64_t b = 0; b < gn; b++) memcpy(j->y + (g + b) * j->rows + p0, out[b], (size_t)(p1 - p0) * sizeof(float));
    }
  }
}

void loom_qgemm_rows_vnni(const loom_qgemm_job *j, int64_t r0, int64_t r1) {
  if (j->batch == 1) {
    loom_qgemm_gemv_vnni(j, r0, r1); /* qgemm-vnni-gemv.c */
    return;
  }
  /* 8-bit and 4-bit codes from weight panels (qgemm-vnni-panel.c) from the
   * batch where they were measured faster (docs/qgemm.md); j->xt says so */
  if (j->xt && loom_qgemm_panel_vnni(j, r0, r1)) return;
  if (j->t->id == LOOM_DTYPE_FP4) {
    rows_bits(4, true, j, r0, r1);
    return;
  }
  switch (j->t->bits) {
  case 1: rows_bits(1, false, j, r0, r1); break;
  case 2: rows_bits(2, false, j, r0, r1); break;
  case 4: rows_bits(4, false, j, r0, r1); break;
  default: rows_bits(8, false, j, r0, r1); break;
  }
}

void loom_kernels_fill_vnni(loom_kernels *k) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++)
    if (loom_qgemm_supports((loom_dtype)d)) k->qgemm_rows[d] = loom_qgemm_rows_vnni;
  k->qgemm_prepare = loom_qgemm_prepare_vnni;
  k->qgemm_tiles = LOOM_QGEMM_TILES_VNNI; /* the panel GEMM (qgemm-vnni-panel.c) */
  k->qgemm_make_tiles = loom_qgemm_make_tiles_vnni;
}
#pragma GCC pop_options
#endif
