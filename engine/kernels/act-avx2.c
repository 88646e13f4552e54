/* The vector activations of act-simd.h for the AVX2 level: four doubles a
 * vector. */
#include "kernels/act.h"
#include "kernels/cpu.h"

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include <immintrin.h>
#define VL 4
#define VFMA(a, b, c) ((vd)_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))
#define MOVEMASK(m) ((uint64_t)_mm256_movemask_pd((__m256d)(m)))
#define SIMD(name) name##_avx2
#include "kernels/act-simd.h"

void loom_kernels_fill_act_avx2(loom_kernels *k) { k->act = act_avx2; }
#pragma GCC pop_options
#endif
