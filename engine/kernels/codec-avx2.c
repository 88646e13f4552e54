/* The vector codecs of codec-simd.h for the AVX2 level (AVX2, FMA, F16C), and
 * the 32- and 64-bit formats' encoders of codec-wide-avx2.c. */
#include <math.h>

#include "core/dtype-internal.h"
#include "kernels/cpu.h"

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2")
#include <immintrin.h>
#define VBYTES 32
#define SIMD(name) name##_avx2
#include "kernels/codec-simd.h"

void loom_kernels_fill_avx2(loom_kernels *k) {
  fill_codecs_avx2(k);
  loom_kernels_fill_wide_avx2(k);
}
#pragma GCC pop_options
#endif
