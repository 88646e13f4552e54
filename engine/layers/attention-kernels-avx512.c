/* The attention kernels of attention-kernels-simd.h for the AVX-512 level (F, BW, VL, DQ). */
#include <stdint.h>

#include "layers/attention-kernels.h"

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")
#include <immintrin.h>
#define VBYTES 64
#define SIMD(name) name##_avx512
#include "layers/attention-kernels-simd.h"

void att_kernels_fill_avx512(att_kernels *k) { fill_avx512(k); }
#pragma GCC pop_options
#endif
