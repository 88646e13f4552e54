/*
 * The integer product (kernels/qgemm.h) for the AVX2 level, for CPUs without
 * AVX-512 VNNI (AMD Zen 2 and 3, Intel client cores). AVX2 multiplies
 * unsigned by signed bytes with vpmaddubsw, which adds pairs of products
 * into 16 bits *with saturation*, and vpmaddwd widens pairs of 16-bit lanes
 * into 32 bits. Every sum stays exact:
 *
 * - 8-bit codes: vpmaddubsw(|v|, sign(x, v)), v the code as a signed byte
 *   (int8 as it is, uint8 XOR 0x80 = u − 128, corrected with 128 · Σ xq).
 *   |v| ≤ 128 and |x| ≤ 127, so a pair is at most 32512 and never
 *   saturates; each pair is widened at once.
 * - Narrower codes: each field moved to the low bits of its byte (u ≤ 15;
 *   signed and ternary fields XOR 2^(n−1), u = q + 2^(n−1), corrected with
 *   Σ xq as in the VNNI kernel; binary bits u give q = 1 − 2u) and
 *   multiplied against the permuted activations (xp, qgemm.h). The 16-bit
 *   products of several 32-byte halves of code blocks are added in 16-bit
 *   lanes before one vpmaddwd widens them: flush_every() halves, each
 *   adding at most m · 2 · (2^n − 1) · 127 to a lane (m = 8 / n fields a
 *   byte), stay below 2^15 (4 halves of 7620 at 4 bits, 8 of 3048 at 2, 16
 *   of 2032 at 1; the 2-bit GEMV's second sum, see half(), 4 of 6096).
 *   fp4 fields go through a vpshufb table to u = 2 · value + 12 (qgemm.h),
 *   corrected with −12 · Σ xq; u reaches 24, so 2 halves of 12192.
 * - The 32-bit lanes are widened to 64 bits after each CHUNK of code bytes
 *   of a row: a lane gains at most 65024 per half, 128 halves a chunk, and
 *   the 8 lanes of a row sum to less than 2^31.
 *
 * An integer sum has no order, so the bits are those of every other level.
 *
 * The GEMV (batch 1) takes gr rows at a time, each activation vector loaded
 * once per half for all of them (8-bit) or read from L1 by each row's
 * multiply (narrow codes, where registers hold the fields instead), with a
 * software prefetch as in qgemm-vnni-gemv.c: where a group of rows spans at
 * most NEAR bytes the group AHEAD_BYTES ahead, otherwise PREFETCH bytes
 * ahead in each row; into L2 beyond L2_BYTES of weights, into L1 below
 * (tile_gemv for the 4- and 2-bit codes, tile() for the others). The
 * GEMM multiplies a tile of rb weight rows × BB_MAX activation rows: each
 * code vector is loaded and decoded once for the tile's activation rows,
 * each activation vector loaded once for its weight rows (docs/qgemm.md,
 * *The AVX2 level*).
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

enum { CHUNK = 4096, RB_MAX = 4, BB_MAX = 4, PREFETCH = 1024, NEAR = 16384, AHEAD_BYTES = 8192 };
#define L2_BYTES ((int64_t)4 << 20)

/* Halves of code blocks whose 16-bit products a lane can add (see above;
 * fp4's u reach 24: 2 halves of 12192). */
static ALWAYS_INLINE int flush_every(int bits, bool fp4, int bb) {
  if (fp4) return 2;
  return bits == 4 ? 4 : bits == 2 ? (bb == 1 ? 4 : 8) : 16; /* 2-bit GEMV: half()'s second sum, 6096 a half */
}

/* fp4's fields to u = 2 · value + LOOM_QGEMM_FP4_OFFSET (qgemm.h), 0 … 24:
 * one vpshufb a field. */
static ALWAYS_INLINE __m256i fp4_u(__m256i field) {
  const __m256i table = _mm256_add_epi8(_mm256_setr_epi8(LOOM_QGEMM_FP4_TWICE, LOOM_QGEMM_FP4_TWICE),
                                        _mm256_set1_epi8(LOOM_QGEMM_FP4_OFFSET));
  return _mm256_shuffle_epi8(table, field);
}

/* What the kernel multiplies: the code byte XOR flip; and how the sum of
 * those values times xq becomes Σ q · xq. */
typedef struct {
  uint8_t flip;
  int64_t times;  /* isum = times · d + offset · Σ xq */
  int64_t offset;
} code_map;

static code_map map_of(const loom_dtype_traits *t) {
  const int bits = t->bits;
  if (t->id == LOOM_DTYPE_FP4) return (code_map){0, 1, -LOOM_QGEMM_FP4_OFFSET};
  switch (t->kind) {
  case LOOM_DTYPE_KIND_BINARY: return (code_map){0, -2, 1};
  case LOOM_DTYPE_KIND_UNSIGNED:
    return bits == 8 ? (code_map){0x80, 1, 128} : (code_map){0, 1, 0};
  default: { /* signed, ternary */
    if (bits == 8) return (code_map){0, 1, 0};
    uint8_t flip = 0;
    for (int f = 0; f < 8; f += bits) flip |= (uint8_t)(1u << (f + bits - 1));
    return (code_map){flip, 1, -(INT64_C(1) << (bits - 1))};
  }
  }
}

/* Lane i of the result: the sum of the 8 lanes of v_i, widened. Exact: a
 * chunk's lanes sum to less than 2^31 (see the top). */
static ALWAYS_INLINE __m256i sum4(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i abcd = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
  return _mm256_cvtepi32_epi64(_mm_add_epi32(_mm256_castsi256_si128(abcd), _mm256_extracti128_si256(abcd, 1)));
}

/*
 * One 32-byte half of a block of codes of rb rows against bb activation
 * rows. w[r]: the half's codes of row r, already XORed. x[b]: the
 * activations paired with field 0 of the half (field k at x[b] + k·64).
 */
static ALWAYS_INLINE void half(const int bits, const bool fp4, const int rb, const int bb, const __m256i *w,
                               const int8_t *const *x, __m256i acc16[RB_MAX][BB_MAX],
                               __m256i acc32[RB_MAX][BB_MAX]) {
  const __m256i ones = _mm256_set1_epi16(1);
  if (bits == 8) {
    __m256i mag[RB_MAX];
#pragma GCC unroll 4
    for (int r = 0; r < rb; r++) mag[r] = _mm256_abs_epi8(w[r]);
#pragma GCC unroll 4
    for (int b = 0; b < bb; b++) {
      const __m256i xv = _mm256_loadu_si256((const __m256i *)(const void *)x[b]);
#pragma GCC unroll 4
      for (int r = 0; r < rb; r++) {
        const __m256i pairs = _mm256_maddubs_epi16(mag[r], _mm256_sign_epi8(xv, w[r]));
        acc32[r][b] = _mm256_add_epi32(acc32[r][b], _mm256_madd_epi16(pairs, ones));
      }
    }
    return;
  }
  if (bits == 2 && bb == 1) {
    /* 2-bit codes against one activation row: fields 1 and 3 stay at 4×
     * their value (u ≤ 3 · 4, a pair at most 3048) in a second 16-bit sum,
     * acc16[r][1], divided by 4 when flushed: one shift a half instead of
     * three. */
    const __m256i f0 = _mm256_set1_epi8(0x03), f1 = _mm256_set1_epi8(0x0c);
#pragma GCC unroll 4
    for (int r = 0; r < rb; r++) {
      const __m256i w4 = _mm256_srli_epi16(w[r], 4);
#define X(k) _mm256_loadu_si256((const __m256i *)(const void *)(x[0] + (k) * 64))
      const __m256i a = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_and_si256(w[r], f0), X(0)),
                                         _mm256_maddubs_epi16(_mm256_and_si256(w4, f0), X(2)));
      const __m256i b = _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_and_si256(w[r], f1), X(1)),
                                         _mm256_maddubs_epi16(_mm256_and_si256(w4, f1), X(3)));
#undef X
      acc16[r][0] = _mm256_add_epi16(acc16[r][0], a);
      acc16[r][1] = _mm256_add_epi16(acc16[r][1], b);
    }
    return;
  }
  const int m = 8 / bits;
  const __m256i low = _mm256_set1_epi8((char)((1 << bits) - 1));
#pragma GCC unroll 4
  for (int r = 0; r < rb; r++) {
    __m256i f[8];
#pragma GCC unroll 8
    for (int k = 0; k < m; k++) {
      f[k] = _mm256_and_si256(k ? _mm256_srli_epi16(w[r], k * bits) : w[r], low);
      if (fp4) f[k] = fp4_u(f[k]);
    }
#pragma GCC unroll 4
    for (int b = 0; b < bb; b++) {
#pragma GCC unroll 8
      for (int k = 0; k < m; k++) {
        acc16[r][b] = _mm256_add_epi16(
            acc16[r][b], _mm256_maddubs_epi16(f[k], _mm256_loadu_si256((const __m256i *)(const void *)(x[b] + k * 64))));
        if (bits == 1 && bb > 1) __asm__("" : "+x"(acc16[r][b]));
      }
      if (bits == 2) /* no sum tree across halves (see half_gemv); 4-bit GEMMs ran slower without theirs */
        __asm__("" : "+x"(acc16[r][b]));
    }
  }
}

static ALWAYS_INLINE void flush(const int bits, const int rb, const int bb, __m256i acc16[RB_MAX][BB_MAX],
                                __m256i acc32[RB_MAX][BB_MAX]) {
  const __m256i ones = _mm256_set1_epi16(1);
  if (bits == 2 && bb == 1) { /* half()'s second sum: 4 × the fields' sums, exactly */
#pragma GCC unroll 4
    for (int r = 0; r < rb; r++) {
      const __m256i sum = _mm256_add_epi16(acc16[r][0], _mm256_srai_epi16(acc16[r][1], 2));
      acc32[r][0] = _mm256_add_epi32(acc32[r][0], _mm256_madd_epi16(sum, ones));
      acc16[r][0] = acc16[r][1] = _mm256_setzero_si256();
    }
    return;
  }
#pragma GCC unroll 4
  for (int r = 0; r < rb; r++)
#pragma GCC unroll 4
    for (int b = 0; b < bb; b++) {
      acc32[r][b] = _mm256_add_epi32(acc32[r][b], _mm256_madd_epi16(acc16[r][b], ones));
      acc16[r][b] = _mm256_setzero_si256();
    }
}

/* Prefetch of the GEMV (see the top): none, the group ahead into L1 or L2,
 * or PREFETCH bytes ahead in each row into L1 or L2. */
enum { PF_NONE, PF_NEAR_L1, PF_NEAR_L2, PF_ROW_L1, PF_ROW_L2 };

/*
 * Σ v · xq of rows rowp[0 .. rb) against activation rows xb[0 .. bb) (each
 * a row of xp) into dot[r · bb + b] (whole quads written: dot has room for
 * RB_MAX · BB_MAX). rbytes: code bytes a row.
 */
static ALWAYS_INLINE void tile(const int bits, const bool fp4, const int rb, const int bb, const int pf,
                               const uint8_t *const *rowp, const int8_t *const *xb, int64_t rbytes,
                               const uint8_t *end, const uint8_t *pfp, uint8_t flip, int64_t *dot) {
  const int m = 8 / bits, every = flush_every(bits, fp4, bb);
  const __m256i flipv = _mm256_set1_epi8((char)flip);
  const int nq = (rb * bb + 3) / 4;
  __m256i d[RB_MAX * BB_MAX / 4];
  for (int q = 0; q < nq; q++) d[q] = _mm256_setzero_si256();
  for (int64_t o0 = 0; o0 < rbytes; o0 += CHUNK) {
    const int64_t o1 = rbytes - o0 < CHUNK ? rbytes : o0 + CHUNK;
    __m256i acc16[RB_MAX][BB_MAX], acc32[RB_MAX][BB_MAX];
#pragma GCC unroll 4
    for (int r = 0; r < rb; r++)
#pragma GCC unroll 4
      for (int b = 0; b < BB_MAX; b++) acc16[r][b] = acc32[r][b] = _mm256_setzero_si256();
    int pending = 0;
    for (int64_t o = o0; o < o1; o += 64) {
      _Alignas(32) uint8_t tail[RB_MAX][64];
      const uint8_t *p[RB_MAX];
      const bool last = rbytes - o < 64;
#pragma GCC unroll 4
      for (int r = 0; r < rb; r++) {
        p[r] = rowp[r] + o;
        /* A row's last block reads on into the next row, whose codes meet
         * zero activations (xp is zero beyond cols); only a block that
         * would read past the codes' end takes a zero-padded copy: copied
         * for every short row, a GEMM of 64-column rows had spent a fifth
         * of its time on the copies' failed store forwarding. */
        if (last && p[r] + 64 > end) {
          memset(tail[r], 0, 64);
          memcpy(tail[r], p[r], (size_t)(rbytes - o));
          p[r] = tail[r];
        }
        if (pf != PF_NONE) {
          const char *ahead =
              (const char *)(pf == PF_NEAR_L1 || pf == PF_NEAR_L2 ? pfp + o * rb + r * 64 : rowp[r] + o + PREFETCH);
          if (pf == PF_NEAR_L2 || pf == PF_ROW_L2)
            _mm_prefetch(ahead, _MM_HINT_T1);
          else
            _mm_prefetch(ahead, _MM_HINT_T0);
        }
      }
#pragma GCC unroll 2
      for (int h = 0; h < 2; h++) {
        __m256i w[RB_MAX];
        const int8_t *x[BB_MAX];
#pragma GCC unroll 4
        for (int r = 0; r < rb; r++)
          w[r] = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p[r] + 32 * h)), flipv);
#pragma GCC unroll 4
        for (int b = 0; b < bb; b++) x[b] = xb[b] + o * m + 32 * h;
        half(bits, fp4, rb, bb, w, x, acc16, acc32);
        if (bits < 8 && ++pending == every) {
          flush(bits, rb, bb, acc16, acc32);
          pending = 0;
        }
      }
    }
    if (bits < 8) flush(bits, rb, bb, acc16, acc32);
    __m256i v[RB_MAX * BB_MAX];
#pragma GCC unroll 16
    for (int i = 0; i < nq * 4; i++) v[i] = i < rb * bb ? acc32[i / bb][i % bb] : _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int q = 0; q < nq; q++) d[q] = _mm256_add_epi64(d[q], sum4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]));
  }
  for (int q = 0; q < nq; q++) _mm256_storeu_si256((__m256i *)(void *)(dot + 4 * q), d[q]);
}

/*
 * The GEMV's tile for 4- and 2-bit codes, two rows against one activation
 * row, written out with its sums in named variables: through tile()'s arrays
 * GCC kept the 2-bit sums in memory (a store and a load of each every half,
 * perf annotate), and both widths paid a test and a branch a block for the
 * row's end and another for the flush. Here the loop takes 128 code bytes
 * of each row, the 4 halves between two flushes (flush_every(bits, 1)), and
 * the row's rest, if any, runs once after it from zero-padded copies. The
 * sums and their flushes are tile()'s, so the bits are too.
 */
static ALWAYS_INLINE void half_gemv(const int bits, const bool fp4, const __m256i w, const int8_t *x, __m256i *lo,
                                    __m256i *hi) {
#define X(k) _mm256_loadu_si256((const __m256i *)(const void *)(x + (k) * 64))
  if (bits == 4) {
    const __m256i f = _mm256_set1_epi8(0x0f);
    __m256i f0 = _mm256_and_si256(w, f), f1 = _mm256_and_si256(_mm256_srli_epi16(w, 4), f);
    if (fp4) {
      f0 = fp4_u(f0);
      f1 = fp4_u(f1);
    }
    *lo = _mm256_add_epi16(*lo, _mm256_add_epi16(_mm256_maddubs_epi16(f0, X(0)), _mm256_maddubs_epi16(f1, X(1))));
    __asm__("" : "+x"(*lo));
  } else { /* as half() with one activation row: fields 1 and 3 at 4× their value in hi */
    const __m256i f0 = _mm256_set1_epi8(0x03), f1 = _mm256_set1_epi8(0x0c);
    const __m256i w4 = _mm256_srli_epi16(w, 4);
    *lo = _mm256_add_epi16(*lo, _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_and_si256(w, f0), X(0)),
                                                 _mm256_maddubs_epi16(_mm256_and_si256(w4, f0), X(2))));
    *hi = _mm256_add_epi16(*hi, _mm256_add_epi16(_mm256_maddubs_epi16(_mm256_and_si256(w, f1), X(1)),
                                                 _mm256_maddubs_epi16(_mm256_and_si256(w4, f1), X(3))));
    /* Integer adds reassociate: without this GCC summed all the halves'
     * products between two flushes in one tree, every product live at
     * once, and spilled them. */
    __asm__("" : "+x"(*lo), "+x"(*hi));
  }
#undef X
}

/* nh halves (at most flush_every(bits, fp4, 1)) of both rows from p0 and
 * p1, then the flush. */
static ALWAYS_INLINE void step_gemv(const int bits, const bool fp4, const int nh, const uint8_t *p0, const uint8_t *p1,
                                    const int8_t *x, __m256i flipv, __m256i *acc0, __m256i *acc1) {
  const int m = 8 / bits;
  __m256i lo0 = _mm256_setzero_si256(), hi0 = lo0, lo1 = lo0, hi1 = lo0;
#pragma GCC unroll 4
  for (int h = 0; h < nh; h++) {
    const int8_t *xh = x + (h / 2) * 64 * m + (h % 2) * 32;
    half_gemv(bits, fp4, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p0 + 32 * h)), flipv),
              xh, &lo0, &hi0);
    half_gemv(bits, fp4, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p1 + 32 * h)), flipv),
              xh, &lo1, &hi1);
  }
  const __m256i ones = _mm256_set1_epi16(1);
  if (bits == 2) {
    lo0 = _mm256_add_epi16(lo0, _mm256_srai_epi16(hi0, 2));
    lo1 = _mm256_add_epi16(lo1, _mm256_srai_epi16(hi1, 2));
  }
  *acc0 = _mm256_add_epi32(*acc0, _mm256_madd_epi16(lo0, ones));
  *acc1 = _mm256_add_epi32(*acc1, _mm256_madd_epi16(lo1, ones));
}

/* 128 code bytes of each row (4 halves), or 64 (2): flushed after every
 * flush_every(bits, fp4, 1) halves. */
static ALWAYS_INLINE void steps_gemv(const int bits, const bool fp4, const int nh, const uint8_t *p0, const uint8_t *p1,
                                     const int8_t *x, __m256i flipv, __m256i *acc0, __m256i *acc1) {
  if (fp4 && nh == 4) {
    step_gemv(bits, fp4, 2, p0, p1, x, flipv, acc0, acc1);
    step_gemv(bits, fp4, 2, p0 + 64, p1 + 64, x + 64 * (8 / bits), flipv, acc0, acc1);
  } else {
    step_gemv(bits, fp4, nh, p0, p1, x, flipv, acc0, acc1);
  }
}

static ALWAYS_INLINE void tile_gemv(const int bits, const bool fp4, const int pf, const uint8_t *const *rowp,
                                    const int8_t *xrow, int64_t rbytes, const uint8_t *end, const uint8_t *pfp,
                                    uint8_t flip, int64_t *dot) {
  const int m = 8 / bits;
  const __m256i flipv = _mm256_set1_epi8((char)flip);
  const uint8_t *p0 = rowp[0], *p1 = rowp[1];
  __m128i d = _mm_setzero_si128();
  for (int64_t o0 = 0; o0 < rbytes; o0 += CHUNK) {
    const int64_t o1 = rbytes - o0 < CHUNK ? rbytes : o0 + CHUNK;
    __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0;
    int64_t o = o0;
    for (; o + 128 <= o1; o += 128) {
      if (pf != PF_NONE)
        for (int l = 0; l < 4; l++) {
          const char *ahead = (const char *)(pf == PF_NEAR_L1 || pf == PF_NEAR_L2
                                                 ? pfp + 2 * o + 64 * l
                                                 : (l < 2 ? p0 : p1) + o + PREFETCH + 64 * (l % 2));
          if (pf == PF_NEAR_L2 || pf == PF_ROW_L2)
            _mm_prefetch(ahead, _MM_HINT_T1);
          else
            _mm_prefetch(ahead, _MM_HINT_T0);
        }
      steps_gemv(bits, fp4, 4, p0 + o, p1 + o, xrow + m * o, flipv, &acc0, &acc1);
    }
    if (o < o1) { /* the row's last 1 to 127 bytes, read on into the next row as in tile() */
      const int nh = o1 - o > 64 ? 4 : 2; /* xp holds whole 64-byte blocks of codes, so one or two */
      const uint8_t *q0 = p0 + o, *q1 = p1 + o;
      _Alignas(32) uint8_t t0[128], t1[128];
      if (q0 + 32 * nh > end || q1 + 32 * nh > end) { /* past the codes' end: zero-padded copies */
        memset(t0, 0, sizeof t0);
        memset(t1, 0, sizeof t1);
        memcpy(t0, q0, (size_t)(o1 - o));
        memcpy(t1, q1, (size_t)(o1 - o));
        q0 = t0;
        q1 = t1;
      }
      if (nh == 4)
        steps_gemv(bits, fp4, 4, q0, q1, xrow + m * o, flipv, &acc0, &acc1);
      else
        steps_gemv(bits, fp4, 2, q0, q1, xrow + m * o, flipv, &acc0, &acc1);
    }
    /* lanes 0 and 1: the 8 lanes of each row's sums, exact (see the top) */
    const __m256i h = _mm256_hadd_epi32(acc0, acc1);
    const __m128i q = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    d = _mm_add_epi64(d, _mm_cvtepi32_epi64(_mm_hadd_epi32(q, q)));
  }
  _mm_storeu_si128((__m128i *)(void *)dot, d);
}

static ALWAYS_INLINE void store(const loom_qgemm_job *j, const code_map *cm, int64_t r, int64_t b, int64_t d) {
  const int64_t isum = cm->times * d + cm->offset * j->xsum[b];
  j->y[b * j->rows + r] = j->bad[b] ? NAN : loom_qgemm_finish(j, b, r, isum);
}

/* int64 to double, exact for |v| < 2^51: v + 1.5 · 2^52 in the mantissa of
 * a double whose exponent makes its last bit a unit. */
static ALWAYS_INLINE __m256d exact_pd(__m256i v) {
  const __m256d magic = _mm256_set1_pd(0x1.8p52);
  return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(v, _mm256_castpd_si256(magic))), magic);
}

/* The outputs of rows r .. r + n of activation row 0 from their sums d
 * (n ≤ 4): loom_qgemm_finish's operations, 4 rows at a time. */
static ALWAYS_INLINE void finish4(const loom_qgemm_job *j, const code_map *cm, int64_t r, int n, const int64_t *d) {
  const __m256i dv = _mm256_loadu_si256((const __m256i *)(const void *)d);
  const __m256i td = cm->times == 1 ? dv : _mm256_sub_epi64(_mm256_setzero_si256(), _mm256_add_epi64(dv, dv));
  const __m256i isum = _mm256_add_epi64(td, _mm256_set1_epi64x(cm->offset * j->xsum[0]));
  const __m128i lanes = _mm_setr_epi32(0, 1, 2, 3), mask = _mm_cmplt_epi32(lanes, _mm_set1_epi32(n));
  const __m128 sw = j->nscales == 1 ? _mm_set1_ps(j->scales[0]) : _mm_maskload_ps(j->scales + r, mask);
  const __m256d f = _mm256_mul_pd(_mm256_cvtps_pd(sw), _mm256_set1_pd((double)j->sx[0]));
  __m128 y = _mm256_cvtpd_ps(_mm256_mul_pd(exact_pd(isum), f));
  if (j->bad[0]) y = _mm_set1_ps(NAN);
  _mm_maskstore_ps(j->y + r, mask, y);
}

/* The outputs of weight row r for activation rows b .. b + 3 from their
 * sums d: loom_qgemm_finish's operations, 4 at a time (the scalar finish of
 * every output had been a quarter of a GEMM of 64-column rows). Every
 * operand is loaded as a vector where it lies (a vector load of scalars
 * just stored would miss the store forwarding); offset · Σ xq is a
 * multiply of the low 32 bits, exact since |Σ xq| ≤ 127 · cols < 2^31. */
static ALWAYS_INLINE void finish_batch4(const loom_qgemm_job *j, const code_map *cm, int64_t r, int64_t b,
                                        const int64_t *d) {
  uint32_t bad4;
  memcpy(&bad4, j->bad + b, sizeof bad4);
  if (bad4) { /* a row of NaN or infinite activations: rare */
    for (int i = 0; i < 4; i++) store(j, cm, r, b + i, d[i]);
    return;
  }
  const __m256i dv = _mm256_loadu_si256((const __m256i *)(const void *)d);
  const __m256i td = cm->times == 1 ? dv : _mm256_sub_epi64(_mm256_setzero_si256(), _mm256_add_epi64(dv, dv));
  const __m256i xs = _mm256_loadu_si256((const __m256i *)(const void *)(j->xsum + b));
  const __m256i isum = _mm256_add_epi64(td, _mm256_mul_epi32(xs, _mm256_set1_epi64x(cm->offset)));
  const float sw = j->scales[j->nscales == 1 ? 0 : r];
  const __m256d f = _mm256_mul_pd(_mm256_set1_pd((double)sw), _mm256_cvtps_pd(_mm_loadu_ps(j->sx + b)));
  const __m128 y = _mm256_cvtpd_ps(_mm256_mul_pd(exact_pd(isum), f));
  float *out = j->y + b * j->rows + r;
  _mm_store_ss(out, y);
  _mm_store_ss(out + j->rows, _mm_shuffle_ps(y, y, 1));
  _mm_store_ss(out + 2 * j->rows, _mm_shuffle_ps(y, y, 2));
  _mm_store_ss(out + 3 * j->rows, _mm_shuffle_ps(y, y, 3));
}

enum { SPAN = 64 };

/* The GEMV: groups of gr rows, a short last group repeating its last row;
 * the sums of a span of rows finished 4 at a time after it. */
static ALWAYS_INLINE void gemv_bits(const int bits, const bool fp4, const int gr, const loom_qgemm_job *j, int64_t r0,
                                    int64_t r1) {
  const code_map cm = map_of(j->t);
  const int64_t rbytes = (int64_t)j->row_bytes;
  const uint8_t *end = j->packed + (size_t)j->rows * j->row_bytes;
  const bool to_l2 = rbytes > 0 && j->rows > L2_BYTES / rbytes;
  const bool near = gr * rbytes <= NEAR;
  const int pf = near ? (to_l2 ? PF_NEAR_L2 : PF_NEAR_L1) : (to_l2 ? PF_ROW_L2 : PF_ROW_L1);
  const int64_t ahead = gr * rbytes >= AHEAD_BYTES ? 1 : (AHEAD_BYTES + gr * rbytes - 1) / (gr * rbytes);
  /* exact_pd's range: |isum| ≤ 2 · 255 · 127 · cols (or Σ xq for binary) */
  const bool vector_finish = j->cols < (INT64_C(1) << 32);
  const int8_t *xb[1] = {j->xp};
  _Alignas(32) int64_t dot[SPAN + RB_MAX * BB_MAX];
  for (int64_t s0 = r0; s0 < r1; s0 += SPAN) {
    const int64_t s1 = r1 - s0 < SPAN ? r1 : s0 + SPAN;
    for (int64_t r = s0; r < s1; r += gr) {
      const uint8_t *rowp[RB_MAX];
      const int n = s1 - r < gr ? (int)(s1 - r) : gr;
      for (int g = 0; g < gr; g++) rowp[g] = j->packed + (size_t)(r + (g < n ? g : n - 1)) * j->row_bytes;
      const uint8_t *pfp = j->packed + (size_t)(r + ahead * gr) * j->row_bytes;
      int64_t *d = dot + (r - s0);
#define GEMV_TILE(PF, PFP)                                                                                  \
  do {                                                                                                      \
    if ((bits == 2 || bits == 4) && gr == 2)                                                                \
      tile_gemv(bits, fp4, PF, rowp, j->xp, rbytes, end, PFP, cm.flip, d);                                  \
    else                                                                                                    \
      tile(bits, fp4, gr, 1, PF, rowp, xb, rbytes, end, PFP, cm.flip, d);                                   \
  } while (0)
      if (n < gr)
        GEMV_TILE(PF_NONE, NULL);
      else if (pf == PF_NEAR_L1)
        GEMV_TILE(PF_NEAR_L1, pfp);
      else if (pf == PF_NEAR_L2)
        GEMV_TILE(PF_NEAR_L2, pfp);
      else if (pf == PF_ROW_L1)
        GEMV_TILE(PF_ROW_L1, NULL);
      else
        GEMV_TILE(PF_ROW_L2, NULL);
#undef GEMV_TILE
    }
    for (int64_t r = s0; r < s1; r += 4) {
      const int n = s1 - r < 4 ? (int)(s1 - r) : 4;
      if (vector_finish)
        finish4(j, &cm, r, n, dot + (r - s0));
      else
        for (int g = 0; g < n; g++) store(j, &cm, r + g, 0, dot[r - s0 + g]);
    }
  }
}

/* The GEMM: tiles of rb weight rows × BB_MAX activation rows, the last
 * activation rows in a tile of their own count; a short last group of
 * weight rows repeats its last row. */
static ALWAYS_INLINE void gemm_bits(const int bits, const bool fp4, const int rb, const loom_qgemm_job *j, int64_t r0,
                                    int64_t r1) {
  const code_map cm = map_of(j->t);
  const int64_t rbytes = (int64_t)j->row_bytes;
  const uint8_t *end = j->packed + (size_t)j->rows * j->row_bytes;
  /* finish_batch4's ranges: exact_pd's, and Σ xq within 32 bits */
  const bool vector_finish = j->cols < (INT64_C(1) << 24);
  _Alignas(32) int64_t dot[RB_MAX * BB_MAX];
  for (int64_t r = r0; r < r1; r += rb) {
    const uint8_t *rowp[RB_MAX];
    const int n = r1 - r < rb ? (int)(r1 - r) : rb;
    for (int g = 0; g < rb; g++) rowp[g] = j->packed + (size_t)(r + (g < n ? g : n - 1)) * j->row_bytes;
    for (int64_t b = 0; b < j->batch; b += BB_MAX) {
      const int bb = j->batch - b < BB_MAX ? (int)(j->batch - b) : BB_MAX;
      const int8_t *xb[BB_MAX];
      for (int i = 0; i < bb; i++) xb[i] = j->xp + (b + i) * j->xstride;
      switch (bb) {
      case 1: tile(bits, fp4, rb, 1, PF_NONE, rowp, xb, rbytes, end, NULL, cm.flip, dot); break;
      case 2: tile(bits, fp4, rb, 2, PF_NONE, rowp, xb, rbytes, end, NULL, cm.flip, dot); break;
      case 3: tile(bits, fp4, rb, 3, PF_NONE, rowp, xb, rbytes, end, NULL, cm.flip, dot); break;
      default: tile(bits, fp4, rb, BB_MAX, PF_NONE, rowp, xb, rbytes, end, NULL, cm.flip, dot); break;
      }
      for (int g = 0; g < n; g++) {
        if (bb == BB_MAX && vector_finish)
          finish_batch4(j, &cm, r + g, b, dot + g * bb);
        else
          for (int i = 0; i < bb; i++) store(j, &cm, r + g, b + i, dot[g * bb + i]);
      }
    }
  }
}

/* One function per width (GEMV rows a group, GEMM weight rows a tile): the
 * narrow fields take registers that wider tiles would spill. */
#define ROWS_FN(NAME, BITS, FP4, GR, RB)                                                                    \
  static void rows_##NAME(const loom_qgemm_job *j, int64_t r0, int64_t r1) {                               \
    if (j->batch == 1)                                                                                      \
      gemv_bits(BITS, FP4, GR, j, r0, r1);                                                                  \
    else                                                                                                    \
      gemm_bits(BITS, FP4, RB, j, r0, r1);                                                                  \
  }
ROWS_FN(1, 1, false, 1, 1)
ROWS_FN(2, 2, false, 2, 1)
ROWS_FN(4, 4, false, 2, 1)
ROWS_FN(fp4, 4, true, 2, 1)
ROWS_FN(8, 8, false, 4, 2)

static void qgemm_rows_avx2(const loom_qgemm_job *j, int64_t r0, int64_t r1) {
  if (j->t->id == LOOM_DTYPE_FP4) {
    rows_fp4(j, r0, r1);
    return;
  }
  switch (j->t->bits) {
  case 1: rows_1(j, r0, r1); break;
  case 2: rows_2(j, r0, r1); break;
  case 4: rows_4(j, r0, r1); break;
  default: rows_8(j, r0, r1); break;
  }
}

/*
 * The activations' preparation (cpu.h, qgemm_prepare): Σ xq from vpsadbw of
 * the codes + 128 (exact in 64-bit lanes), and xp for 4- and 2-bit weights
 * from in-lane byte shuffles and cross-lane permutations (as the AVX-512
 * version in qgemm-vnni-gemv.c); binary keeps the reference's byte loop.
 * len is a whole number of 64-byte blocks of codes (qgemm.h: xstride).
 */
static void qgemm_prepare_avx2(int bits, const int8_t *xq, int8_t *xp, int64_t len, int64_t *xsum) {
  const __m256i bias = _mm256_set1_epi8((char)0x80);
  __m256i s = _mm256_setzero_si256();
  for (int64_t c = 0; c < len; c += 32)
    s = _mm256_add_epi64(s, _mm256_sad_epu8(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(xq + c)), bias),
                                            _mm256_setzero_si256()));
  const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  *xsum = _mm_cvtsi128_si64(s2) + _mm_extract_epi64(s2, 1) - 128 * len;
#define LOAD(o) _mm256_loadu_si256((const __m256i *)(const void *)(xq + c0 + (o)))
#define STORE(o, v) _mm256_storeu_si256((__m256i *)(void *)(xp + c0 + (o)), (v))
  if (bits == 4) { /* xp[c0 + k·64 + j] = xq[c0 + 2j + k] */
    /* per 16 bytes: the 8 even bytes, then the 8 odd ones; then per 32
     * bytes the 16 even ones in the low lane, the odd ones in the high */
    const __m256i even_odd = _mm256_broadcastsi128_si256(
        _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
    for (int64_t c0 = 0; c0 < len; c0 += 128) {
      __m256i v[4];
      for (int i = 0; i < 4; i++)
        v[i] = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(LOAD(32 * i), even_odd), _MM_SHUFFLE(3, 1, 2, 0));
      STORE(0, _mm256_permute2x128_si256(v[0], v[1], 0x20));
      STORE(32, _mm256_permute2x128_si256(v[2], v[3], 0x20));
      STORE(64, _mm256_permute2x128_si256(v[0], v[1], 0x31));
      STORE(96, _mm256_permute2x128_si256(v[2], v[3], 0x31));
    }
  } else if (bits == 2) { /* xp[c0 + k·64 + j] = xq[c0 + 4j + k] */
    /* per 16 bytes a 4 × 4 transpose (dword k: field k of 4 columns); per
     * 32 bytes quadword k: field k of 8 columns */
    const __m256i t4 = _mm256_broadcastsi128_si256(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    const __m256i td = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int64_t c0 = 0; c0 < len; c0 += 256)
      for (int h = 0; h < 2; h++) { /* columns 32h … 32h + 31 of each field */
        __m256i v[4];
        for (int i = 0; i < 4; i++)
          v[i] = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(LOAD(128 * h + 32 * i), t4), td);
        const __m256i lo01 = _mm256_unpacklo_epi64(v[0], v[1]), lo23 = _mm256_unpacklo_epi64(v[2], v[3]);
        const __m256i hi01 = _mm256_unpackhi_epi64(v[0], v[1]), hi23 = _mm256_unpackhi_epi64(v[2], v[3]);
        STORE(0 * 64 + 32 * h, _mm256_permute2x128_si256(lo01, lo23, 0x20));
        STORE(1 * 64 + 32 * h, _mm256_permute2x128_si256(hi01, hi23, 0x20));
        STORE(2 * 64 + 32 * h, _mm256_permute2x128_si256(lo01, lo23, 0x31));
        STORE(3 * 64 + 32 * h, _mm256_permute2x128_si256(hi01, hi23, 0x31));
      }
  } else if (bits == 1) {
    int64_t ignored;
    loom_qgemm_prepare_ref(1, xq, xp, len, &ignored);
  }
#undef LOAD
#undef STORE
}

void loom_kernels_fill_qgemm_avx2(loom_kernels *k) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++)
    if (loom_qgemm_supports((loom_dtype)d)) k->qgemm_rows[d] = qgemm_rows_avx2;
  k->qgemm_prepare = qgemm_prepare_avx2;
}
#pragma GCC pop_options
#endif
