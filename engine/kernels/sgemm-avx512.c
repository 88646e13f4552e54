/* The packed float32 product of sgemm-simd.h at the AVX-512 level: panels of
 * 64 lanes (four 16-lane vectors), 24 accumulators in registers. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/matmul.h"

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")
#include <immintrin.h>

#include "kernels/transpose-avx512.h"

typedef __m512 vf;
#define VL 16
#define VMAX 4
#define VZERO() _mm512_setzero_ps()
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps(p, v)
#define VLOADN(p, n) _mm512_maskz_loadu_ps((__mmask16)((1u << (n)) - 1u), p)
#define VSTOREN(p, v, n) _mm512_mask_storeu_ps(p, (__mmask16)((1u << (n)) - 1u), v)
#define VBCAST(x) _mm512_set1_ps(x)
#define VFMA(a, b, acc) _mm512_fmadd_ps(a, b, acc)
#define SIMD(name) name##_avx512

/* dst[c·ldd + r] = src[r·lds + c] for a 16 × 16 block, in registers (a
 * scalar transpose ran at about 2 cycles a value). */
static inline void transpose16(const float *src, int64_t lds, float *dst, int64_t ldd) {
  __m512i r[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) {
    r[i] = _mm512_castps_si512(_mm512_loadu_ps(src + i * lds));
    _mm_prefetch((const char *)(src + i * lds + 64), _MM_HINT_T0);
  }
  transpose16_epi32(r);
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) _mm512_storeu_ps(dst + i * ldd, _mm512_castsi512_ps(r[i]));
}
#define VTRANSPOSE(src, lds, dst, ldd) transpose16(src, lds, dst, ldd)

/* The same transpose of 16 vectors already in registers. */
static inline __attribute__((always_inline)) void transpose16_ps(__m512 v[16]) {
  __m512i r[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) r[i] = _mm512_castps_si512(v[i]);
  transpose16_epi32(r);
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) v[i] = _mm512_castsi512_ps(r[i]);
}
#define VTRANSPOSE_REGS(v) transpose16_ps(v)
#define ROWS_ALIASED loom_sgemm_rows_avx2
#include "kernels/sgemm-simd.h"

#pragma GCC pop_options
#endif
