/*
 * The short rows' gathers and scatters from segments (conv-table.h) at the
 * AVX2 level and above: a row of at most 8 positions reads one run of
 * consecutive image values at each kernel offset, so one masked load of the
 * image serves the row's gather (padding lanes load 0, as the list gives),
 * and one masked load, add and masked store its scatter. The scatter adds
 * the list's terms in the list's order (kernel offsets ascending; within an
 * offset each image value at most once), so the bits are the same.
 */
#include "layers/conv-table.h"

#if defined(LOOM_KERNELS_X86)
#include <stdint.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include <immintrin.h>

/* Lanes [lo, hi) set. */
static inline __m256i lanes(int lo, int hi) {
  const __m256i i = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(hi), i), _mm256_cmpgt_epi32(i, _mm256_set1_epi32(lo - 1)));
}

/* The image at a segment's base, which may lie before the image: as an
 * address only, its lanes before lo are never read. */
static inline float *at(float *img, int32_t base) {
  return (float *)(void *)((uintptr_t)img + (uintptr_t)((intptr_t)base * (intptr_t)sizeof(float)));
}

void conv_gather_segs_avx2(const conv_plan *p, const conv_table *t, const float *img, float *out, int64_t row_stride,
                           int64_t r0, int64_t r1) {
  const int64_t w = p->pos[2], rows = p->pos[0] * p->pos[1];
  const __m256i row = lanes(0, (int)w);
  for (int64_t k = 0; k < p->taps; k++) {
    const conv_seg *g = t->segs + k * rows;
    float *o = out + k * row_stride;
    for (int64_t r = r0; r < r1; r++, o += w) {
      const __m256 v = g[r].hi > g[r].lo ? _mm256_maskload_ps(at((float *)img, g[r].base), lanes(g[r].lo, g[r].hi))
                                         : _mm256_setzero_ps();
      if (w == 8)
        _mm256_storeu_ps(o, v);
      else
        _mm256_maskstore_ps(o, row, v);
    }
  }
}

void conv_scatter_segs_avx2(const conv_plan *p, const conv_table *t, const float *col, int64_t col_ld, int64_t r0,
                            int64_t r1, float *img) {
  const int64_t w = p->pos[2], rows = p->pos[0] * p->pos[1];
  const __m256i row = lanes(0, (int)w);
  for (int64_t k = 0; k < p->taps; k++) {
    const conv_seg *g = t->segs + k * rows;
    const float *c = col + k * col_ld;
    for (int64_t r = r0; r < r1; r++, c += w) {
      if (g[r].hi <= g[r].lo) continue;
      const __m256i m = lanes(g[r].lo, g[r].hi);
      float *a = at(img, g[r].base);
      const __m256 x = w == 8 ? _mm256_loadu_ps(c) : _mm256_maskload_ps(c, row);
      _mm256_maskstore_ps(a, m, _mm256_add_ps(_mm256_maskload_ps(a, m), x));
    }
  }
}
#pragma GCC pop_options
#endif
