/* The vector codecs of codec-simd.h for the AVX-512 level (F, BW, VL, DQ). */
#include <math.h>

#include "core/dtype-internal.h"
#include "kernels/cpu.h"

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2,avx512f,avx512bw,avx512vl,avx512dq")
#include <immintrin.h>
#define VBYTES 64
#define SIMD(name) name##_avx512
#include "kernels/codec-simd.h"

void loom_kernels_fill_avx512(loom_kernels *k) {
  fill_codecs_avx512(k);
  loom_kernels_fill_scaled_avx512(k);
}
#pragma GCC pop_options
#endif
