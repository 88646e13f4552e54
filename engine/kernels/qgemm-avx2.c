/*
 * The integer product (kernels/qgemm.h) for the AVX2 level, for CPUs without
 * AVX-512 VNNI. AVX2 multiplies unsigned by signed bytes with vpmaddubsw,
 * which adds pairs of products into 16 bits with saturation; the weights
 * are therefore fed as fields of at most 4 bits (u ≤ 15: a pair is at most
 * 2 · 15 · 127 = 3810), then vpmaddwd widens the pairs to 32-bit lanes. As in
 * the VNNI kernel (qgemm-vnni.c), signed codes are made unsigned by XOR
 * 2^(n−1) and corrected with Σ xq; an 8-bit code u is split into its nibbles,
 * Σ u·x = Σ lo·x + 16 · Σ hi·x, both against the same activation bytes.
 * Narrow fields pair with the permuted activations (xp, qgemm.h).
 *
 * One weight row against one activation row at a time: a fallback, not
 * tuned. The sums are exact, so the bits are those of every other level.
 */
#include "kernels/cpu.h"
#include "kernels/qgemm.h"

#if defined(LOOM_KERNELS_X86)
#include <math.h>
#include <string.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2")
#include <immintrin.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))
/* Bytes of codes between widenings to 64 bits: a lane gains at most
 * 8 · 2 · 3810 per 64 bytes, 4096 / 64 times, far below 2^31. */
enum { CHUNK = 4096 };

static ALWAYS_INLINE __m256i field_dot(__m256i acc, __m256i u, __m256i x) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1)));
}

static ALWAYS_INLINE int64_t lanes_sum(__m256i v) {
  int32_t l[8];
  _mm256_storeu_si256((__m256i *)(void *)l, v);
  int64_t s = 0;
  for (int i = 0; i < 8; i++) s += l[i];
  return s;
}

/* Σ u·xq over one row (u the flipped fields). */
static ALWAYS_INLINE int64_t row_dot(const int bits, const uint8_t *row, int64_t rb, const int8_t *xp,
                                     uint8_t flip) {
  const int m = 8 / bits;
  const __m256i flipv = _mm256_set1_epi8((char)flip);
  const __m256i low = _mm256_set1_epi8((char)(bits == 8 ? 0x0f : (1 << bits) - 1));
  int64_t total = 0;
  for (int64_t o0 = 0; o0 < rb; o0 += CHUNK) {
    const int64_t o1 = rb - o0 < CHUNK ? rb : o0 + CHUNK;
    __m256i acc = _mm256_setzero_si256(), acc_hi = _mm256_setzero_si256();
    for (int64_t o = o0; o < o1; o += 64) {
      uint8_t tail[64];
      const uint8_t *p = row + o;
      if (rb - o < 64) { /* the row's last block: zeros beyond it meet zero activations */
        memset(tail, 0, sizeof tail);
        memcpy(tail, p, (size_t)(rb - o));
        p = tail;
      }
      const int64_t xo = o * m; /* the block's first column */
      for (int h = 0; h < 2; h++) {
        const __m256i w = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * h)), flipv);
        if (bits == 8) {
          const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(xp + xo + 32 * h));
          acc = field_dot(acc, _mm256_and_si256(w, low), x);
          acc_hi = field_dot(acc_hi, _mm256_and_si256(_mm256_srli_epi16(w, 4), low), x);
        } else {
#pragma GCC unroll 8
          for (int k = 0; k < m; k++) {
            const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(xp + xo + k * 64 + 32 * h));
            const __m256i u = _mm256_and_si256(k ? _mm256_srli_epi16(w, k * bits) : w, low);
            acc = field_dot(acc, u, x);
          }
        }
      }
    }
    total += lanes_sum(acc) + 16 * lanes_sum(acc_hi);
  }
  return total;
}

static ALWAYS_INLINE void rows_bits(const int bits, const loom_qgemm_job *j, int64_t r0, int64_t r1) {
  const loom_dtype_kind kind = j->t->kind;
  const bool offset = kind == LOOM_DTYPE_KIND_SIGNED || kind == LOOM_DTYPE_KIND_TERNARY;
  uint8_t flip = 0;
  for (int f = 0; offset && f < 8; f += bits) flip |= (uint8_t)(1u << (f + bits - 1));
  for (int64_t r = r0; r < r1; r++) {
    const uint8_t *row = j->packed + (size_t)r * j->row_bytes;
    for (int64_t b = 0; b < j->batch; b++) {
      const int64_t d = row_dot(bits, row, (int64_t)j->row_bytes, j->xp + b * j->xstride, flip), s = j->xsum[b];
      const int64_t isum = kind == LOOM_DTYPE_KIND_BINARY ? s - 2 * d : offset ? d - s * (INT64_C(1) << (bits - 1)) : d;
      j->y[b * j->rows + r] = j->bad[b] ? NAN : loom_qgemm_finish(j, b, r, isum);
    }
  }
}

static void qgemm_rows_avx2(const loom_qgemm_job *j, int64_t r0, int64_t r1) {
  switch (j->t->bits) {
  case 1: rows_bits(1, j, r0, r1); break;
  case 2: rows_bits(2, j, r0, r1); break;
  case 4: rows_bits(4, j, r0, r1); break;
  default: rows_bits(8, j, r0, r1); break;
  }
}

void loom_kernels_fill_qgemm_avx2(loom_kernels *k) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++)
    if (loom_qgemm_supports((loom_dtype)d)) k->qgemm_rows[d] = qgemm_rows_avx2;
}
#pragma GCC pop_options
#endif
