/*
 * What the VNNI integer products share (qgemm-vnni.c, qgemm-vnni-gemv.c,
 * qgemm-vnni-panel.c, and the AMX panel GEMM, qgemm-amx.c). Included after
 * `#pragma GCC target(... avx512vnni)`, <immintrin.h>, <math.h> and
 * kernels/qgemm.h.
 */
#pragma once

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* acc += u · x in place. Through the intrinsic, GCC 12 copies the
 * accumulator to another register before each vpdpbusd and back after it
 * (the instruction overwrites its first operand); those copies sat on the
 * critical path and halved the speed of the narrow formats. x in a
 * register: where x is one vector used by several rows, a memory operand
 * let GCC fold its load into every row's vpdpbusd (the GEMV), and a
 * broadcast memory operand loaded the panel GEMM's activations once per
 * instruction (2–10 % slower in a loop over data in cache). */
static ALWAYS_INLINE void dpbusd(__m512i *acc, __m512i u, __m512i x) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(*acc) : "v"(u), "v"(x));
}

/* The same with x allowed in memory: the block GEMM's activation vectors
 * are each used once per weight row, and a load folded in saves a register. */
static ALWAYS_INLINE void dpbusd_m(__m512i *acc, __m512i u, __m512i x) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(*acc) : "v"(u), "vm"(x));
}

/* Lane i of the result is the sum of the 16 lanes of v_i. */
static ALWAYS_INLINE __m128i sum4(__m512i v0, __m512i v1, __m512i v2, __m512i v3) {
  const __m512i a = _mm512_add_epi32(_mm512_unpacklo_epi32(v0, v1), _mm512_unpackhi_epi32(v0, v1));
  const __m512i b = _mm512_add_epi32(_mm512_unpacklo_epi32(v2, v3), _mm512_unpackhi_epi32(v2, v3));
  const __m512i c = _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
  const __m256i d = _mm256_add_epi32(_mm512_castsi512_si256(c), _mm512_extracti64x4_epi64(c, 1));
  return _mm_add_epi32(_mm256_castsi256_si128(d), _mm256_extracti128_si256(d, 1));
}

/* fp4's fields (each in the low 4 bits of its byte) to u = 2 · value +
 * LOOM_QGEMM_FP4_OFFSET (qgemm.h), 0 … 24: one vpshufb. */
static ALWAYS_INLINE __m512i fp4_u(__m512i field) {
  const __m512i table = _mm512_add_epi8(_mm512_broadcast_i32x4(_mm_setr_epi8(LOOM_QGEMM_FP4_TWICE)),
                                        _mm512_set1_epi8(LOOM_QGEMM_FP4_OFFSET));
  return _mm512_shuffle_epi8(table, field);
}

/* 32 bytes of 4-bit codes to the u of their 64 columns, a byte each in
 * column order: byte i holds column 2i in its low half and 2i + 1 in its
 * high half, so as a 16-bit lane it becomes low | high << 8. */
static ALWAYS_INLINE __m512i unpack4(__m256i codes, loom_dtype d) {
  const __m512i x = _mm512_cvtepu8_epi16(codes);
  const __m512i f = _mm512_or_si512(_mm512_and_si512(x, _mm512_set1_epi16(0x000f)),
                                    _mm512_and_si512(_mm512_slli_epi16(x, 4), _mm512_set1_epi16(0x0f00)));
  if (d == LOOM_DTYPE_FP4) return fp4_u(f);
  if (d == LOOM_DTYPE_INT4) return _mm512_xor_si512(f, _mm512_set1_epi8(0x08));
  return f;
}

/* loom_qgemm_finish's operations on a panel's sums, 8 weight rows at a
 * time: dot holds, for the gn activation rows from g0, the exact sums
 * Σ u·xq of weight rows [p0, p1) (row b's at dot + b · nr, nr ≥ p1 − p0
 * and a multiple of 8); isum = dot − Σ xq · base (qgemm-vnni.c). Shared by
 * the panel GEMMs (qgemm-vnni-panel.c, qgemm-amx.c), so both give the bits
 * of every other level. */
static ALWAYS_INLINE void panel_finish(const loom_qgemm_job *j, const int64_t *dot, int64_t nr, int64_t p0,
                                       int64_t p1, int64_t g0, int64_t gn, int64_t base) {
  for (int64_t h = 0; h < nr; h += 8) {
    if (p0 + h >= p1) break;
    const __mmask8 mask = (__mmask8)(p1 - p0 - h >= 8 ? 0xff : (1u << (p1 - p0 - h)) - 1);
    const __m512d sw = _mm512_cvtps_pd(j->nscales == 1 ? _mm256_set1_ps(j->scales[0])
                                                       : _mm256_maskz_loadu_ps(mask, j->scales + p0 + h));
    for (int64_t b = 0; b < gn; b++) {
      const int64_t bb = g0 + b;
      const __m512i d = _mm512_loadu_si512(dot + b * nr + h);
      const __m512i isum = _mm512_sub_epi64(d, _mm512_set1_epi64(j->xsum[bb] * base));
      const __m512d f = _mm512_mul_pd(sw, _mm512_set1_pd((double)j->sx[bb]));
      const __m256 yv = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_cvtepi64_pd(isum), f));
      _mm256_mask_storeu_ps(j->y + bb * j->rows + p0 + h, mask, j->bad[bb] ? _mm256_set1_ps(NAN) : yv);
    }
  }
}
