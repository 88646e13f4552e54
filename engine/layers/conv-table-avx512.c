/*
 * The short rows' gathers and scatters from chunks (conv-table.h) at the
 * AVX-512 level: a chunk's image values are at most four aligned vectors,
 * loaded under the mask of the lanes it reads (masked lanes do not fault,
 * so no load reaches past the channel), and one or two permutes put them in
 * column order; the adjoint permutes a chunk's 16 column values to the image
 * lanes that read them and adds them there. A channel of at most four
 * vectors (the digits CNN's 8 × 8) stays in registers for the whole call:
 * the scatter through memory waited on each store before the next chunk's
 * load of the same vector. The additions are those of the lists, one per
 * image value and kernel offset, offsets ascending: the same bits.
 */
#include "layers/conv-table.h"

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")
#include <immintrin.h>

static inline __m512i chunk_index(const uint8_t *idx) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)idx));
}

/* Image vector v of a small channel of n floats, or 0 past them. */
static inline __m512 small_load(const float *img, int64_t n, int v) {
  const int64_t left = n - v * CONV_CHUNK;
  if (left <= 0) return _mm512_setzero_ps();
  return _mm512_maskz_loadu_ps(left >= CONV_CHUNK ? 0xffff : (__mmask16)((1u << left) - 1), img + v * CONV_CHUNK);
}

static inline void small_store(float *img, int64_t n, int v, __m512 x) {
  const int64_t left = n - v * CONV_CHUNK;
  if (left > 0)
    _mm512_mask_storeu_ps(img + v * CONV_CHUNK, left >= CONV_CHUNK ? 0xffff : (__mmask16)((1u << left) - 1), x);
}

/* Column values of a chunk from its four window vectors. */
static inline __m512 pick(const conv_chunk *c, __m512 w0, __m512 w1, __m512 w2, __m512 w3) {
  const __m512i idx = chunk_index(c->gidx);
  __m512 v = _mm512_permutex2var_ps(w0, idx, w1);
  if (c->quarters > 2) v = _mm512_mask_mov_ps(v, c->upper, _mm512_permutex2var_ps(w2, idx, w3));
  return _mm512_maskz_mov_ps(c->valid, v);
}

static inline __m512 window(const conv_chunk *c, const float *img, int v) {
  return v < c->quarters ? _mm512_maskz_loadu_ps(c->hit[v], img + c->base + v * CONV_CHUNK) : _mm512_setzero_ps();
}

static inline void store_chunk(float *o, const conv_chunk *c, __m512 v) {
  if (c->len == CONV_CHUNK)
    _mm512_storeu_ps(o, v);
  else
    _mm512_mask_storeu_ps(o, (__mmask16)((1u << c->len) - 1), v);
}

void conv_gather_chunks_avx512(const conv_plan *p, const conv_table *t, const float *img, float *out,
                               int64_t row_stride, int64_t block) {
  const int64_t q0 = block * t->block_rows * p->pos[2];
  const bool small = p->n_img <= CONV_SMALL_IMAGE;
  const __m512 s0 = small ? small_load(img, p->n_img, 0) : _mm512_setzero_ps(),
               s1 = small ? small_load(img, p->n_img, 1) : _mm512_setzero_ps(),
               s2 = small ? small_load(img, p->n_img, 2) : _mm512_setzero_ps(),
               s3 = small ? small_load(img, p->n_img, 3) : _mm512_setzero_ps();
  for (int64_t k = 0; k < p->taps; k++) {
    const conv_chunk *c = t->chunks + (k * t->n_blocks + block) * t->per_block;
    const conv_chunk *end = c + t->per_block;
    const int32_t *e = t->offsets + k * p->n_pos + q0;
    float *o = out + k * row_stride;
    for (; c < end && c->len; c++, o += CONV_CHUNK, e += CONV_CHUNK) {
      if (c->quarters < 0)
        conv_list_gather(e, c->len, img, o);
      else if (c->quarters == 0)
        store_chunk(o, c, _mm512_setzero_ps());
      else if (small)
        store_chunk(o, c, pick(c, s0, s1, s2, s3));
      else
        store_chunk(o, c, pick(c, window(c, img, 0), window(c, img, 1), window(c, img, 2), window(c, img, 3)));
    }
  }
}

/* w += the chunk's values at the lanes of window vector v that read them. */
static inline __m512 add_quarter(const conv_chunk *c, int v, __m512 col, __m512 w) {
  return _mm512_mask_add_ps(w, c->hit[v], w, _mm512_permutexvar_ps(chunk_index(c->inv[v]), col));
}

void conv_scatter_chunks_avx512(const conv_plan *p, const conv_table *t, const float *col, int64_t col_ld,
                                int64_t block, float *img) {
  const int64_t q0 = block * t->block_rows * p->pos[2];
  const bool small = p->n_img <= CONV_SMALL_IMAGE;
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  if (small) {
    s0 = small_load(img, p->n_img, 0);
    s1 = small_load(img, p->n_img, 1);
    s2 = small_load(img, p->n_img, 2);
    s3 = small_load(img, p->n_img, 3);
  }
  for (int64_t k = 0; k < p->taps; k++) {
    const conv_chunk *c = t->chunks + (k * t->n_blocks + block) * t->per_block;
    const conv_chunk *end = c + t->per_block;
    const int32_t *e = t->offsets + k * p->n_pos + q0;
    const float *s = col + k * col_ld;
    for (; c < end && c->len; c++, s += CONV_CHUNK, e += CONV_CHUNK) {
      if (c->quarters == 0) continue;
      if (c->quarters < 0) {
        conv_list_scatter(e, c->len, s, img);
        continue;
      }
      const __m512 v = _mm512_maskz_loadu_ps(c->valid, s);
      if (small) {
        s0 = add_quarter(c, 0, v, s0);
        s1 = add_quarter(c, 1, v, s1);
        s2 = add_quarter(c, 2, v, s2);
        s3 = add_quarter(c, 3, v, s3);
        continue;
      }
      for (int q = 0; q < c->quarters; q++) {
        if (!c->hit[q]) continue;
        float *at = img + c->base + q * CONV_CHUNK;
        _mm512_mask_storeu_ps(at, c->hit[q], add_quarter(c, q, v, _mm512_maskz_loadu_ps(c->hit[q], at)));
      }
    }
  }
  if (small) {
    small_store(img, p->n_img, 0, s0);
    small_store(img, p->n_img, 1, s1);
    small_store(img, p->n_img, 2, s2);
    small_store(img, p->n_img, 3, s3);
  }
}
#pragma GCC pop_options
#endif
