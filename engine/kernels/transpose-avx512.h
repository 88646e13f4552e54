/*
 * The 16 × 16 transpose of 32-bit elements in AVX-512 registers, shared by
 * the float32 packing (sgemm-avx512.c) and the VNNI GEMM's weight panels
 * (qgemm-vnni-panel.c). Include inside an AVX-512 F target region, after
 * <immintrin.h>. Every value is moved, never computed: exact.
 */
#pragma once

/* r[i] lane g → r[g] lane i. */
static inline __attribute__((always_inline)) void transpose16_epi32(__m512i r[16]) {
  __m512i t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  /* In each 128-bit lane of t[4q + 0 … 3], rows 4q … 4q + 3 are paired up
   * as 64-bit halves: */
#pragma GCC unroll 4
  for (int q = 0; q < 16; q += 4) {
    r[q] = _mm512_unpacklo_epi64(t[q], t[q + 2]);
    r[q + 1] = _mm512_unpackhi_epi64(t[q], t[q + 2]);
    r[q + 2] = _mm512_unpacklo_epi64(t[q + 1], t[q + 3]);
    r[q + 3] = _mm512_unpackhi_epi64(t[q + 1], t[q + 3]);
  }
  /* now r[4q + k] lane l holds rows 4q … 4q + 3 of column 4l + k; gather the
   * 128-bit lanes of the four row groups */
#pragma GCC unroll 4
  for (int k = 0; k < 4; k++) {
    t[k] = _mm512_shuffle_i32x4(r[k], r[4 + k], 0x88);
    t[4 + k] = _mm512_shuffle_i32x4(r[k], r[4 + k], 0xdd);
    t[8 + k] = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0x88);
    t[12 + k] = _mm512_shuffle_i32x4(r[8 + k], r[12 + k], 0xdd);
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; k++) {
    r[k] = _mm512_shuffle_i32x4(t[k], t[8 + k], 0x88);
    r[4 + k] = _mm512_shuffle_i32x4(t[4 + k], t[12 + k], 0x88);
    r[8 + k] = _mm512_shuffle_i32x4(t[k], t[8 + k], 0xdd);
    r[12 + k] = _mm512_shuffle_i32x4(t[4 + k], t[12 + k], 0xdd);
  }
}
