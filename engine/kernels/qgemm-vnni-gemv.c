/*
 * The integer GEMV (kernels/qgemm.h, one activation row) with AVX-512 VNNI,
 * and the per-call preparation of the activations (their sum and the
 * permuted copy xp) in AVX-512 BW. The arithmetic is that of qgemm-vnni.c:
 * weights are the unsigned operand of vpdpbusd, signed and ternary codes
 * XOR 2^(n−1) and corrected with Σ xq, binary bits u give q = 1 − 2u.
 *
 * The GEMV is bound by reading the weights, so its decode is cut to the
 * bone: field k of a code byte is masked in place, not shifted down
 * (u · 2^(k·n)), into an accumulator of its own, whose every lane is then an
 * exact multiple of 2^(k·n) and is shifted back before the fields are added.
 * One XOR per 64 code bytes, one AND and one vpdpbusd per field. fp4's
 * fields are shifted down and go through a vpshufb table to u = 2 · value +
 * 12 (qgemm.h), corrected with −12 · Σ xq: three operations more a block.
 * Short binary rows instead use their bits as masks that pick activation
 * codes in column order (xq, not xp), one accumulator a row (block()).
 *
 * GR rows at a time share each activation vector (loaded once into a
 * register); the sums of 4 rows are reduced together (one transposing
 * reduction instead of four horizontal ones) and finished 4 at a time in
 * double, the same operations as loom_qgemm_finish. With short rows the
 * fixed cost per row (reduce, finish, store) is a large part of the work:
 * at 1024 ternary columns a row is 256 bytes, four blocks of 64.
 *
 * Exactness: columns go in chunks of 4096 code bytes. Per chunk a lane of a
 * field's accumulator adds at most 64 · 4 products |u · 2^(k·n) · xq| ≤
 * 255 · 127, about 8.3 · 10^6; after the shifts the fields of a lane sum to
 * less than twice that, and 16 lanes to less than 2.7 · 10^8 < 2^31. Each
 * chunk's sums are then widened to 64 bits.
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

/* CHUNK: see above. Prefetch: each row is a stream of its own; the hardware
 * prefetcher alone left int8 at ~30 GB/s. Where a group of rows spans at
 * most NEAR bytes, a later group is prefetched, at least AHEAD_BYTES ahead
 * (PREFETCH bytes ahead in the same row would land in the rows being read
 * now when rows are short), otherwise PREFETCH bytes ahead in each row.
 * Weights beyond L2_BYTES are prefetched into L2 only (T1), from where the
 * loads and the L1's own prefetcher take them: into L1 (T0) they left the
 * DRAM-resident 4096 × 14336 GEMVs at 0.45-0.61 of the read probe on a later
 * development VM, against 0.66-0.82 with T1 (int8, int4, ternary: bench-gemv
 * --integer, 2026-12-02). Cache-resident weights keep T0: the lines are in
 * L2 already, and T0 brings them to L1 ahead of the loads. */
enum { GR_MAX = 8, CHUNK = 4096, PREFETCH = 1024, NEAR = 16384, SPAN = 64, AHEAD_BYTES = 8192 };
/* Binary rows of at most this many bytes pick their columns' codes with
 * the row's bits as a mask (block()), 8 rows a group, beyond it the
 * fields: a private driver on a Xeon with AMX (2026-12-08), GB/s of codes,
 * fields → picked: 512 columns 8.4 → 12.6, 1024 10.6–11.2 → 13.6, 2048
 * 14.2–15.3 → 15.1–16.0, 4096 (512 rows) 13.8–14.6 → 13.9–14.1, 4096 ×
 * 14336 15.8–16.7 → 14.2–14.8. */
enum { PICK_ROW_BYTES = 256 };
#define L2_BYTES ((int64_t)4 << 20)

/* One 64-byte block of codes at byte offset o of each row into acc. `avail`
 * < 64 loads only that many bytes (the row's last block; the rest reads as
 * zero and meets zero activations). Prefetch: `near` fetches the group
 * after this one, whose rows are contiguous, gr lines per block from pfp
 * (one pointer: with a pointer per row GCC ran out of registers and
 * reloaded them from the stack in the loop); otherwise PREFETCH bytes ahead
 * in each row. Rows outer, fields inner: one code vector live at a time. */
static ALWAYS_INLINE void block(const int bits, const bool fp4, const bool pick, const int gr, const bool near,
                                const bool to_l2,
                                const uint8_t *const *rowp, const int8_t *xp, int64_t o, int64_t avail,
                                const uint8_t *pfp, __m512i flip, __m512i acc[GR_MAX][8]) {
  const int m = 8 / bits;
  const int64_t xo = o * m; /* the block's first column */
  if (pick) {
    /* Binary rows of at most PICK_ROW_BYTES: 8 code bytes of a row are the
     * mask of 64 columns (bit c, column c), which picks those columns'
     * codes out of xq in their own order; one vpdpbusd against ones adds
     * them into the row's only accumulator. The same two operations per 64
     * weights as a field's AND and vpdpbusd, but no fields to shift back
     * and add at the row's end, the fixed cost that bounds short rows. */
    const __m512i ones = _mm512_set1_epi8(1);
#pragma GCC unroll 8
    for (int s = 0; s < 8; s++) {
      if (8 * s >= avail) break;
      const __m512i x = _mm512_loadu_si512(xp + xo + 64 * s);
#pragma GCC unroll 8
      for (int r = 0; r < gr; r++) {
        __mmask64 k;
        if (avail - 8 * s >= 8) {
          uint64_t u; /* (_load_mask64 needs its address 8-byte aligned; rows are not) */
          memcpy(&u, rowp[r] + o + 8 * s, sizeof u);
          k = _cvtu64_mask64(u);
        } else { /* the row's last bytes; the rest reads as zero */
          const __m128i u = _mm_maskz_loadu_epi8((__mmask16)((1u << (avail - 8 * s)) - 1), rowp[r] + o + 8 * s);
          k = _cvtu64_mask64((uint64_t)_mm_cvtsi128_si64(u));
        }
        dpbusd(&acc[r][0], ones, _mm512_maskz_mov_epi8(k, x));
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < gr; r++) {
      const char *ahead = (const char *)(near ? pfp + o * gr + r * 64 : rowp[r] + o + PREFETCH);
      if (to_l2)
        _mm_prefetch(ahead, _MM_HINT_T1);
      else
        _mm_prefetch(ahead, _MM_HINT_T0);
    }
    return;
  }
  __m512i xv[8];
#pragma GCC unroll 8
  for (int k = 0; k < m; k++) xv[k] = _mm512_loadu_si512(xp + xo + k * 64);
#pragma GCC unroll 8
  for (int r = 0; r < gr; r++) {
    __m512i w = avail >= 64 ? _mm512_loadu_si512(rowp[r] + o)
                            : _mm512_maskz_loadu_epi8(_bzhi_u64(~UINT64_C(0), (unsigned)avail), rowp[r] + o);
    w = _mm512_xor_si512(w, flip);
    const char *ahead = (const char *)(near ? pfp + o * gr + r * 64 : rowp[r] + o + PREFETCH);
    if (to_l2)
      _mm_prefetch(ahead, _MM_HINT_T1);
    else
      _mm_prefetch(ahead, _MM_HINT_T0);
#pragma GCC unroll 8
    for (int k = 0; k < m; k++) {
      if (fp4) {
        const __m512i low = _mm512_set1_epi8(0x0f);
        dpbusd(&acc[r][k], fp4_u(_mm512_and_si512(k ? _mm512_srli_epi16(w, 4) : w, low)), xv[k]);
        continue;
      }
      const __m512i field = _mm512_set1_epi8((char)(((1 << bits) - 1) << (k * bits)));
      dpbusd(&acc[r][k], bits == 8 ? w : _mm512_and_si512(w, field), xv[k]);
    }
  }
}

/* Σ u·xq of the rows at rowp[0 .. gr) into dot[0 .. gr) (whole quads
 * written: dot has room for them). */
static ALWAYS_INLINE void group(const int bits, const bool fp4, const bool pick, const int gr, const bool near,
                                const bool to_l2,
                                const uint8_t *const *rowp, const int8_t *xp, int64_t rb, const uint8_t *pfp,
                                __m512i flip, int64_t *dot) {
  const int m = pick ? 1 : 8 / bits; /* accumulators a row (picked binary columns: one, block()) */
  const int nq = (gr + 3) / 4;
  __m256i d[GR_MAX / 4];
  for (int q = 0; q < nq; q++) d[q] = _mm256_setzero_si256();
  for (int64_t o0 = 0; o0 < rb; o0 += CHUNK) {
    const int64_t o1 = rb - o0 < CHUNK ? rb : o0 + CHUNK;
    __m512i acc[GR_MAX][8];
#pragma GCC unroll 8
    for (int i = 0; i < gr; i++)
#pragma GCC unroll 8
      for (int k = 0; k < m; k++) acc[i][k] = _mm512_setzero_si512();
    const int64_t full = o1 < rb ? o1 : rb / 64 * 64;
    int64_t o = o0;
    for (; o + 64 <= full; o += 64) block(bits, fp4, pick, gr, near, to_l2, rowp, xp, o, 64, pfp, flip, acc);
    if (o < o1) block(bits, fp4, pick, gr, near, to_l2, rowp, xp, o, rb - o, pfp, flip, acc);
    __m512i v[GR_MAX];
#pragma GCC unroll 8
    for (int i = 0; i < nq * 4; i++) {
      v[i] = _mm512_setzero_si512();
      if (i >= gr) continue;
      v[i] = acc[i][0];
#pragma GCC unroll 8
      for (int k = 1; k < m; k++) /* fp4's fields were shifted down */
        v[i] = _mm512_add_epi32(v[i], fp4 ? acc[i][k] : _mm512_srai_epi32(acc[i][k], (unsigned)(k * bits)));
    }
#pragma GCC unroll 2
    for (int q = 0; q < nq; q++)
      d[q] = _mm256_add_epi64(d[q], _mm256_cvtepi32_epi64(sum4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3])));
  }
  for (int q = 0; q < nq; q++) _mm256_storeu_si256((__m256i *)(void *)(dot + 4 * q), d[q]);
}

static ALWAYS_INLINE void gemv_bits(const int bits, const bool fp4, const bool pick, const int gr, const bool to_l2,
                                    const loom_qgemm_job *j, int64_t r0, int64_t r1) {
  const loom_dtype_kind kind = j->t->kind;
  const bool offset = !fp4 && (kind == LOOM_DTYPE_KIND_SIGNED || kind == LOOM_DTYPE_KIND_TERNARY);
  const bool binary = kind == LOOM_DTYPE_KIND_BINARY;
  uint8_t flip_byte = 0;
  for (int f = 0; offset && f < 8; f += bits) flip_byte |= (uint8_t)(1u << (f + bits - 1));
  const __m512i flip = _mm512_set1_epi8((char)flip_byte);
  const int64_t rb = j->row_bytes, s = j->xsum[0];
  /* isum = d − s · 2^(n−1) (signed, ternary), d − 12 · s (fp4), s − 2d (binary), d */
  const __m512i corr = _mm512_set1_epi64(binary   ? s
                                         : fp4    ? -s * LOOM_QGEMM_FP4_OFFSET
                                         : offset ? -s * (INT64_C(1) << (bits - 1))
                                                  : 0);
  const __m512d sx = _mm512_set1_pd((double)j->sx[0]);
  const int8_t *xs = pick ? j->xq : j->xp; /* picked binary columns: codes in column order (block()) */
  const bool bad = j->bad[0];
  /* Groups of rows ahead that the prefetch reaches: at least 8 KiB ahead
   * (one group of 1 KiB ternary rows, 4 KiB, left ternary 4096 × 4096 at
   * 50-56 GB/s from L3, 8 KiB at 62-69). */
  const int64_t ahead = gr * rb >= AHEAD_BYTES ? 1 : (AHEAD_BYTES + gr * rb - 1) / (gr * rb);
  /* The sums of a span of rows go to dot, and are finished 8 at a time
   * after it: the finish's long chain of conversions stays out of the
   * loop over the rows. */
  _Alignas(64) int64_t dot[SPAN + GR_MAX];
  for (int64_t r = r0; r < r1; r += SPAN) {
    const int64_t n = r1 - r < SPAN ? r1 - r : SPAN;
    int64_t i = 0;
    for (; i + gr <= n; i += gr) {
      const uint8_t *rowp[GR_MAX];
      const uint8_t *base = j->packed + (size_t)(r + i) * (size_t)rb;
      for (int g = 0; g < gr; g++) rowp[g] = base + (size_t)g * (size_t)rb;
      const uint8_t *pfp = base + (size_t)(ahead * gr) * (size_t)rb;
      const bool near = gr * rb <= NEAR;
      if (near && to_l2)
        group(bits, fp4, pick, gr, true, true, rowp, xs, rb, pfp, flip, dot + i);
      else if (near)
        group(bits, fp4, pick, gr, true, false, rowp, xs, rb, pfp, flip, dot + i);
      else if (to_l2)
        group(bits, fp4, pick, gr, false, true, rowp, xs, rb, pfp, flip, dot + i);
      else
        group(bits, fp4, pick, gr, false, false, rowp, xs, rb, pfp, flip, dot + i);
    }
    if (i < n) { /* a short last group repeats its last row */
      const uint8_t *rowp[GR_MAX];
      for (int g = 0; g < gr; g++) rowp[g] = j->packed + (size_t)(r + (i + g < n ? i + g : n - 1)) * (size_t)rb;
      group(bits, fp4, pick, gr, false, false, rowp, xs, rb, NULL, flip, dot + i);
    }
    for (int64_t e = 0; e < n; e += 8) {
      const __mmask8 mask = (__mmask8)(n - e >= 8 ? 0xff : (1u << (n - e)) - 1);
      const __m512i d = _mm512_loadu_si512(dot + e);
      const __m512i isum = binary ? _mm512_sub_epi64(corr, _mm512_add_epi64(d, d)) : _mm512_add_epi64(d, corr);
      const __m256 sw = j->nscales == 1 ? _mm256_set1_ps(j->scales[0]) : _mm256_maskz_loadu_ps(mask, j->scales + r + e);
      /* loom_qgemm_finish's operations, 8 rows at a time */
      const __m512d f = _mm512_mul_pd(_mm512_cvtps_pd(sw), sx);
      __m256 y = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_cvtepi64_pd(isum), f));
      if (bad) y = _mm256_set1_ps(NAN);
      _mm256_mask_storeu_ps(j->y + r + e, mask, y);
    }
  }
}

/* One function per width and prefetch target: inlined into one, the
 * cache-resident int4 GEMV lost about 5 %. */
#define GEMV_FN(NAME, BITS, FP4, PICK, GR)                                                                  \
  static void gemv_##NAME##_l1(const loom_qgemm_job *j, int64_t r0, int64_t r1) {                          \
    gemv_bits(BITS, FP4, PICK, GR, false, j, r0, r1);                                                       \
  }                                                                                                         \
  static void gemv_##NAME##_l2(const loom_qgemm_job *j, int64_t r0, int64_t r1) {                          \
    gemv_bits(BITS, FP4, PICK, GR, true, j, r0, r1);                                                        \
  }
GEMV_FN(1, 1, false, false, 2)
GEMV_FN(1pick, 1, false, true, 8)
GEMV_FN(2, 2, false, false, 4)
GEMV_FN(4, 4, false, false, 8)
GEMV_FN(fp4, 4, true, false, 8)
GEMV_FN(8, 8, false, false, 8)

void loom_qgemm_gemv_vnni(const loom_qgemm_job *j, int64_t r0, int64_t r1) {
  const bool to_l2 = j->row_bytes > 0 && j->rows > L2_BYTES / (int64_t)j->row_bytes;
  if (j->t->id == LOOM_DTYPE_FP4) {
    (to_l2 ? gemv_fp4_l2 : gemv_fp4_l1)(j, r0, r1);
    return;
  }
  switch (j->t->bits) {
  case 1:
    if (j->row_bytes <= PICK_ROW_BYTES)
      (to_l2 ? gemv_1pick_l2 : gemv_1pick_l1)(j, r0, r1);
    else
      (to_l2 ? gemv_1_l2 : gemv_1_l1)(j, r0, r1);
    break;
  case 2: (to_l2 ? gemv_2_l2 : gemv_2_l1)(j, r0, r1); break;
  case 4: (to_l2 ? gemv_4_l2 : gemv_4_l1)(j, r0, r1); break;
  default: (to_l2 ? gemv_8_l2 : gemv_8_l1)(j, r0, r1); break;
  }
}

/*
 * The activations' preparation (cpu.h, qgemm_prepare): Σ xq from vpsadbw of
 * the codes + 128 (exact in 64-bit lanes), and xp for 4-, 2- and 1-bit
 * weights from in-lane byte shuffles and cross-lane permutations (binary's
 * had been the reference's byte loop: 6 % of a 1024 × 1024 binary GEMV).
 */
void loom_qgemm_prepare_vnni(int bits, const int8_t *xq, int8_t *xp, int64_t len, int64_t *xsum) {
  const __m512i bias = _mm512_set1_epi8((char)0x80);
  __m512i s = _mm512_setzero_si512();
  for (int64_t c = 0; c < len; c += 64)
    s = _mm512_add_epi64(s, _mm512_sad_epu8(_mm512_xor_si512(_mm512_loadu_si512(xq + c), bias),
                                            _mm512_setzero_si512()));
  *xsum = _mm512_reduce_add_epi64(s) - 128 * len;
  if (bits == 4) { /* xp[c0 + k·64 + j] = xq[c0 + 2j + k] */
    /* per 16 bytes: the 8 even bytes, then the 8 odd ones */
    const __m512i even_odd = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
    const __m512i lo = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), hi = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
    for (int64_t c0 = 0; c0 < len; c0 += 128) {
      const __m512i a = _mm512_shuffle_epi8(_mm512_loadu_si512(xq + c0), even_odd);
      const __m512i b = _mm512_shuffle_epi8(_mm512_loadu_si512(xq + c0 + 64), even_odd);
      _mm512_storeu_si512(xp + c0, _mm512_permutex2var_epi64(a, lo, b));
      _mm512_storeu_si512(xp + c0 + 64, _mm512_permutex2var_epi64(a, hi, b));
    }
  } else if (bits == 2) { /* xp[c0 + k·64 + j] = xq[c0 + 4j + k] */
    /* per 16 bytes: a 4 × 4 transpose (byte 4k + j from byte 4j + k) */
    const __m512i t4 = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    /* dword 4k + L from dword 4L + k: lane k gathers dword k of every lane */
    const __m512i td = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    for (int64_t c0 = 0; c0 < len; c0 += 256) {
      __m512i u[4];
      for (int i = 0; i < 4; i++)
        u[i] = _mm512_permutexvar_epi32(td, _mm512_shuffle_epi8(_mm512_loadu_si512(xq + c0 + 64 * i), t4));
      /* output k, 128-bit lane i = lane k of u_i: a 4 × 4 transpose of lanes */
      const __m512i s0 = _mm512_shuffle_i64x2(u[0], u[1], _MM_SHUFFLE(1, 0, 1, 0));
      const __m512i s1 = _mm512_shuffle_i64x2(u[2], u[3], _MM_SHUFFLE(1, 0, 1, 0));
      const __m512i s2 = _mm512_shuffle_i64x2(u[0], u[1], _MM_SHUFFLE(3, 2, 3, 2));
      const __m512i s3 = _mm512_shuffle_i64x2(u[2], u[3], _MM_SHUFFLE(3, 2, 3, 2));
      _mm512_storeu_si512(xp + c0, _mm512_shuffle_i64x2(s0, s1, _MM_SHUFFLE(2, 0, 2, 0)));
      _mm512_storeu_si512(xp + c0 + 64, _mm512_shuffle_i64x2(s0, s1, _MM_SHUFFLE(3, 1, 3, 1)));
      _mm512_storeu_si512(xp + c0 + 128, _mm512_shuffle_i64x2(s2, s3, _MM_SHUFFLE(2, 0, 2, 0)));
      _mm512_storeu_si512(xp + c0 + 192, _mm512_shuffle_i64x2(s2, s3, _MM_SHUFFLE(3, 1, 3, 1)));
    }
  } else if (bits == 1) { /* xp[c0 + k·64 + j] = xq[c0 + 8j + k] */
    /* per 16 bytes (the 8 codes of two columns' groups): pairs by field */
    const __m512i pairs = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
    /* word 4k + l from word 8l + k: qword k gathers field k of all 4 lanes */
    static const int16_t by_field[32] = {0, 8,  16, 24, 1, 9,  17, 25, 2, 10, 18, 26, 3, 11, 19, 27,
                                         4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31};
    const __m512i fields = _mm512_loadu_si512(by_field);
    for (int64_t c0 = 0; c0 < len; c0 += 512) {
      __m512i u[8], t[8];
      /* u[i], qword k: field k of groups 8i … 8i + 7 */
      for (int i = 0; i < 8; i++)
        u[i] = _mm512_permutexvar_epi16(fields, _mm512_shuffle_epi8(_mm512_loadu_si512(xq + c0 + 64 * i), pairs));
      /* output k, qword i = u[i]'s qword k: an 8 × 8 transpose of qwords;
       * t[2i] lane l holds qwords 2l of u[2i], u[2i + 1], t[2i + 1] qwords 2l + 1 */
      for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm512_unpacklo_epi64(u[2 * i], u[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi64(u[2 * i], u[2 * i + 1]);
      }
      for (int h = 0; h < 2; h++) { /* the even fields, then the odd: lane l of t[h], t[2 + h], … is field 2l + h */
        const __m512i s0 = _mm512_shuffle_i64x2(t[h], t[2 + h], _MM_SHUFFLE(1, 0, 1, 0));
        const __m512i s1 = _mm512_shuffle_i64x2(t[h], t[2 + h], _MM_SHUFFLE(3, 2, 3, 2));
        const __m512i s2 = _mm512_shuffle_i64x2(t[4 + h], t[6 + h], _MM_SHUFFLE(1, 0, 1, 0));
        const __m512i s3 = _mm512_shuffle_i64x2(t[4 + h], t[6 + h], _MM_SHUFFLE(3, 2, 3, 2));
        _mm512_storeu_si512(xp + c0 + 64 * h, _mm512_shuffle_i64x2(s0, s2, _MM_SHUFFLE(2, 0, 2, 0)));
        _mm512_storeu_si512(xp + c0 + 64 * (2 + h), _mm512_shuffle_i64x2(s0, s2, _MM_SHUFFLE(3, 1, 3, 1)));
        _mm512_storeu_si512(xp + c0 + 64 * (4 + h), _mm512_shuffle_i64x2(s1, s3, _MM_SHUFFLE(2, 0, 2, 0)));
        _mm512_storeu_si512(xp + c0 + 64 * (6 + h), _mm512_shuffle_i64x2(s1, s3, _MM_SHUFFLE(3, 1, 3, 1)));
      }
    }
  }
}
#pragma GCC pop_options
#endif
