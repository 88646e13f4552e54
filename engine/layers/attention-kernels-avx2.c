/* The attention kernels of attention-kernels-simd.h for the AVX2 level (AVX2 + FMA). */
#include <stdint.h>

#include "layers/attention-kernels.h"

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include <immintrin.h>
#define VBYTES 32
#define SIMD(name) name##_avx2
#include "layers/attention-kernels-simd.h"

void att_kernels_fill_avx2(att_kernels *k) { fill_avx2(k); }
#pragma GCC pop_options
#endif
