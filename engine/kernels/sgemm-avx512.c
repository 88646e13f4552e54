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

/* dst[c·ldd + r] = src[r·lds + c] for a 16 × 16 block: pairs of rows
 * interleaved, then groups of four within each 128-bit lane, then the lanes
 * of four groups gathered. Exact copies, so packing through it changes no
 * bits; a scalar transpose ran at about 2 cycles a value. */
static inline void transpose16(const float *src, int64_t lds, float *dst, int64_t ldd) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * lds);
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; i++) {
    r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int c = 0; c < 4; c++) {
    __m512 u0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44), u1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xEE);
    __m512 v0 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44), v1 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xEE);
    _mm512_storeu_ps(dst + c * ldd, _mm512_shuffle_f32x4(u0, v0, 0x88));
    _mm512_storeu_ps(dst + (4 + c) * ldd, _mm512_shuffle_f32x4(u0, v0, 0xDD));
    _mm512_storeu_ps(dst + (8 + c) * ldd, _mm512_shuffle_f32x4(u1, v1, 0x88));
    _mm512_storeu_ps(dst + (12 + c) * ldd, _mm512_shuffle_f32x4(u1, v1, 0xDD));
  }
}
#define VTRANSPOSE(src, lds, dst, ldd) transpose16(src, lds, dst, ldd)
#include "kernels/sgemm-simd.h"

#pragma GCC pop_options
#endif
