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
#include "kernels/sgemm-simd.h"

#pragma GCC pop_options
#endif
