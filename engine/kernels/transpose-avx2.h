/*
 * The register stages of an 8 × 8 float transpose, shared by the AVX2
 * products (sgemm-avx2.c's packing) and conv's bias gradient
 * (layers/conv-core.c). Include inside an AVX2 target region, after
 * <immintrin.h>. Every value is moved, never computed: exact.
 */
#pragma once

/* r[0..7] hold rows 0..7 of an 8 × 8 block. Afterwards r[c] (c < 4) holds
 * column c of rows 0-3 in its low half and column c + 4 of rows 0-3 in its
 * high half, and r[4 + c] the same of rows 4-7; one permute2f128 per pair
 * completes the columns. */
static inline __attribute__((always_inline)) void transpose8_halves(__m256 r[8]) {
  __m256 t[8];
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 2
  for (int i = 0; i < 2; i++) {
    r[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
}
