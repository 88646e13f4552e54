/* The packed float32 product of sgemm-simd.h at the AVX2 level: panels of
 * 16 lanes (two 8-lane vectors), 12 accumulators of the 16 registers. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/matmul.h"

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "kernels/transpose-avx2.h"

/* Lane masks for the first n lanes: maskload/maskstore read the sign bits. */
static const int32_t lane_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

typedef __m256 vf;
#define VL 8
#define VMAX 2
#define VZERO() _mm256_setzero_ps()
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps(p, v)
#define VMASK(n) _mm256_loadu_si256((const __m256i *)(lane_mask + 8 - (n)))
#define VLOADN(p, n) _mm256_maskload_ps(p, VMASK(n))
#define VSTOREN(p, v, n) _mm256_maskstore_ps(p, VMASK(n), v)
#define VBCAST(x) _mm256_set1_ps(x)
#define VFMA(a, b, acc) _mm256_fmadd_ps(a, b, acc)
#define SIMD(name) name##_avx2

/* dst[c·ldd + r] = src[r·lds + c] for an 8 × 8 block (exact copies). */
static inline void transpose8(const float *src, int64_t lds, float *dst, int64_t ldd) {
  __m256 r[8];
  for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(src + i * lds);
  transpose8_halves(r);
  for (int c = 0; c < 4; c++) {
    _mm256_storeu_ps(dst + c * ldd, _mm256_permute2f128_ps(r[c], r[4 + c], 0x20));
    _mm256_storeu_ps(dst + (4 + c) * ldd, _mm256_permute2f128_ps(r[c], r[4 + c], 0x31));
  }
}
#define VTRANSPOSE(src, lds, dst, ldd) transpose8(src, lds, dst, ldd)

/* The same transpose of 8 vectors already in registers. */
static inline __attribute__((always_inline)) void transpose8_ps(__m256 v[8]) {
  transpose8_halves(v);
  __m256 lo[4];
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) lo[c] = _mm256_permute2f128_ps(v[c], v[4 + c], 0x20);
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) v[4 + c] = _mm256_permute2f128_ps(v[c], v[4 + c], 0x31);
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) v[c] = lo[c];
}
#define VTRANSPOSE_REGS(v) transpose8_ps(v)
/* Measured on Zen 3 (docs/sgemm.md, *Rows a power of two apart*): a scalar
 * operand strided along k costs about 0.85 cycles a step of each micro call
 * (14 % of its 6), and keeping every panel with a copied block of the
 * scalar operand pays where many panels reuse the block. */
#define SGEMM_STRIDED_SCALAR 0.85
#define SGEMM_RESIDENT 1
#include "kernels/sgemm-simd.h"

#pragma GCC pop_options
#endif
