/* The vector activations of act-simd.h for the AVX-512 level: eight doubles
 * a vector. */
#include "kernels/act.h"
#include "kernels/cpu.h"

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")
#include <immintrin.h>
#define VL 8
#define VFMA(a, b, c) ((vd)_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#define MOVEMASK(m) ((uint64_t)_mm512_movepi64_mask((__m512i)(m)))
#define SIMD(name) name##_avx512
#include "kernels/act-simd.h"

void loom_kernels_fill_act_avx512(loom_kernels *k) { k->act = act_avx512; }
#pragma GCC pop_options
#endif
