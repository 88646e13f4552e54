/*
 * The names optim-sgd-simd.h and optim-adam-simd.h are written in, for one
 * kernel level: included with OPTIM_LEVEL 512 or 256 defined (under that
 * level's `#pragma GCC target`, after optim-lanes.h) it defines them; with
 * OPTIM_LEVEL_END defined it undefines them again. Not a normal header.
 */
#if defined(OPTIM_LEVEL_END)
#undef VL
#undef SIMD
#undef VF
#undef VD
#undef VSET1
#undef VSET1D
#undef VLOAD
#undef VSTORE
#undef VADD
#undef VMUL
#undef VDIV
#undef VSQRT
#undef VXOR
#undef MUL_C
#undef MUL_EXACT
#undef DIV_EXACT
#undef SQRT_EXACT
#undef TINY
#undef BAND
#undef TINY_QUOTIENT
#undef OPTIM_LEVEL_END
#elif OPTIM_LEVEL == 512
#define VL 16
#define SIMD(name) name##_avx512
#define VF __m512
#define VD __m512d
#define VSET1 _mm512_set1_ps
#define VSET1D _mm512_set1_pd
#define VLOAD _mm512_loadu_ps
#define VSTORE _mm512_storeu_ps
#define VADD _mm512_add_ps
#define VMUL _mm512_mul_ps
#define VDIV _mm512_div_ps
#define VSQRT _mm512_sqrt_ps
#define VXOR _mm512_xor_ps
#define MUL_C mul_c512
#define MUL_EXACT mul_exact512
#define DIV_EXACT div_exact512
#define SQRT_EXACT sqrt_exact512
#define TINY tiny512
#define BAND band512
#define TINY_QUOTIENT tiny_quotient512
#elif OPTIM_LEVEL == 256
#define VL 8
#define SIMD(name) name##_avx2
#define VF __m256
#define VD __m256d
#define VSET1 _mm256_set1_ps
#define VSET1D _mm256_set1_pd
#define VLOAD _mm256_loadu_ps
#define VSTORE _mm256_storeu_ps
#define VADD _mm256_add_ps
#define VMUL _mm256_mul_ps
#define VDIV _mm256_div_ps
#define VSQRT _mm256_sqrt_ps
#define VXOR _mm256_xor_ps
#define MUL_C mul_c256
#define MUL_EXACT mul_exact256
#define DIV_EXACT div_exact256
#define SQRT_EXACT sqrt_exact256
#define TINY tiny256
#define BAND band256
#define TINY_QUOTIENT tiny_quotient256
#else
#error "optim-level.h: define OPTIM_LEVEL (512 or 256) or OPTIM_LEVEL_END"
#endif
