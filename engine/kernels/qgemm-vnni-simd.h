/*
 * What the VNNI integer products share (qgemm-vnni.c, qgemm-vnni-gemv.c,
 * qgemm-vnni-panel.c). Included after `#pragma GCC target(... avx512vnni)`
 * and <immintrin.h>.
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
