/*
 * The batched product of 8-bit and 4-bit codes (int8, uint8, int4, uint4,
 * fp4) with AVX-512 VNNI (kernels/qgemm.h), from weight panels: the GEMM of
 * qgemm-vnni.c streams each weight row through a 4 × 4 block of
 * accumulators, and with 16 MB of weights coming from memory that loop fell
 * from 1.9 to 1.1–1.3 vpdpbusd a cycle (docs/qgemm.md). Here the weights are
 * read once into a small buffer of the calling thread, a *panel*, and every
 * activation row then passes over it while it sits in L2:
 *
 *   panel: NR = 32 rows × KC columns, interleaved for vpdpbusd: for each
 *   group of 4 columns, one 64-byte vector per 16 rows holding each row's 4
 *   weights (row i at bytes 4i … 4i + 3) as unsigned operands u, one byte
 *   each (qgemm-vnni.c: a signed code XOR 2^(n−1) is q + 2^(n−1), fp4's
 *   code goes through its table to 2 · value + 12).
 *
 * A 4-bit code byte holds two columns; the pack spreads them to a byte each
 * in column order, so the panel, the tiles and the loop below are the same
 * for both widths: the 4-bit codes are multiplied at the speed of the 8-bit
 * ones and read from memory in half the bytes. (The row kernels multiply
 * 4-bit fields in place, which costs a shift and a mask per vector; the
 * panel does that once per weight instead of once per activation row.)
 *
 * The micro-kernel keeps MR = 8 activation rows × the panel's 2 vectors of
 * 16 rows in 16 accumulators; for each group of 4 columns it loads the 2
 * panel vectors and multiplies each by every activation row's 4 codes
 * broadcast (the signed operand), so one weight load serves MR vpdpbusd and
 * an activation load 2. The activations come in tiles (j->xt, qgemm.h: the
 * 4 codes of one group of the tile's rows side by side, built once per
 * call): read from their rows, 8 streams 4096 bytes apart that share their
 * L1 sets, the loop ran at 0.8 of the peak over data in cache, from tiles
 * at the peak. The sums are exact integers as everywhere else, so the
 * outputs keep every bit of the other levels' (the epilogue is
 * loom_qgemm_finish's operations).
 *
 * A slice of KC = 4096 columns is at most 1024 vpdpbusd into a lane (each
 * adding at most 4 · 255 · 127), far below 2^31, before the lanes are widened
 * to 64 bits.
 */
#include "kernels/cpu.h"
#include "kernels/qgemm.h"
#include "kernels/scratch.h"

#if defined(LOOM_KERNELS_X86)
#include <math.h>
#include <string.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#include <immintrin.h>

#include "kernels/qgemm-vnni-simd.h"
#include "kernels/transpose-avx512.h"

enum { NV = 2, NR = LOOM_QGEMM_PANEL_ROWS, MR = LOOM_QGEMM_TILE_ROWS, KC = 4096, BATCH_GROUP = 256 };
_Static_assert(MR == 8 && BATCH_GROUP % MR == 0, "the tails are tiles of 4, 2, 1; groups start tiles");
_Static_assert(NR == 16 * NV, "a panel is NV vectors of 16 rows");

/* Code bytes [o0, o1) of the NR rows at rowp into the panel as u: 8-bit
 * codes XORed with 0x80 (int8) or as they are (uint8), 4-bit codes (m = 2
 * columns a byte) spread to a byte each by unpack4; 64 columns of 16 rows
 * at a time, transposed to 16 groups of 4 columns. The last block of a
 * row may be short: its missing bytes read as zero (the activations there
 * are zero too). */
static ALWAYS_INLINE void pack_m(const int m, const loom_dtype d, const uint8_t *const *rowp, int64_t o0, int64_t o1,
                                 uint8_t *pan) {
  const int64_t step = 64 / m; /* code bytes of 64 columns */
  for (int64_t o = o0; o < o1; o += step) {
    const uint64_t k = o1 - o >= step ? (step == 64 ? ~UINT64_C(0) : (UINT64_C(1) << step) - 1)
                                      : _bzhi_u64(~UINT64_C(0), (unsigned)(o1 - o));
    uint8_t *dst = pan + (o - o0) * m * NR; /* (o − o0) · m / 4 groups of NV vectors */
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++) {
      __m512i r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; i++) {
        const uint8_t *src = rowp[16 * v + i] + o;
        r[i] = m == 2 ? unpack4(_mm256_maskz_loadu_epi8((__mmask32)k, src), d)
             : d == LOOM_DTYPE_INT8 ? _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, src), _mm512_set1_epi8((char)0x80))
                                    : _mm512_maskz_loadu_epi8(k, src);
      }
      transpose16_epi32(r);
#pragma GCC unroll 16
      for (int g = 0; g < 16; g++) _mm512_store_si512(dst + (g * NV + v) * 64, r[g]);
    }
  }
}

static void pack(const loom_dtype_traits *t, const uint8_t *const *rowp, int64_t o0, int64_t o1, uint8_t *pan) {
  switch (t->id) {
  case LOOM_DTYPE_INT8: pack_m(1, LOOM_DTYPE_INT8, rowp, o0, o1, pan); break;
  case LOOM_DTYPE_INT4: pack_m(2, LOOM_DTYPE_INT4, rowp, o0, o1, pan); break;
  case LOOM_DTYPE_UINT4: pack_m(2, LOOM_DTYPE_UINT4, rowp, o0, o1, pan); break;
  case LOOM_DTYPE_FP4: pack_m(2, LOOM_DTYPE_FP4, rowp, o0, o1, pan); break;
  default: pack_m(1, LOOM_DTYPE_UINT8, rowp, o0, o1, pan); break;
  }
}

/* Where the next panel's code bytes lie, fetched a line at a time while the
 * current one is multiplied: the pack would otherwise wait on memory for
 * every line (32 rows read side by side run at a few GB/s without it). */
typedef struct {
  const uint8_t *p;
  int64_t left, per_row, skip, rows_left;
  unsigned every; /* one line every `every` + 1 groups of 4 columns (a mask) */
} pf_cursor;

static void pf_set(pf_cursor *c, const loom_qgemm_job *j, int64_t row, int64_t o0, int64_t o1, int64_t groups) {
  const int64_t rows = j->rows - row < NR ? j->rows - row : NR;
  c->per_row = (o1 - o0 + 63) / 64;
  c->rows_left = row < j->rows ? rows : 0;
  c->p = c->rows_left ? j->packed + (size_t)row * j->row_bytes + o0 : j->packed; /* none past the end */
  c->left = c->per_row;
  c->skip = (int64_t)j->row_bytes - c->per_row * 64;
  const int64_t lines = c->per_row * rows;
  unsigned e = 1;
  while (e < 64 && (int64_t)e * 2 * lines <= groups) e *= 2;
  c->every = e - 1;
}

static ALWAYS_INLINE void pf_step(pf_cursor *c) {
  if (!c->rows_left) return;
  _mm_prefetch((const char *)c->p, _MM_HINT_T1);
  c->p += 64;
  if (--c->left == 0) {
    c->p += c->skip;
    c->left = c->per_row;
    c->rows_left--;
  }
}

/* A tile of nb activation rows (xt: its codes in j->xt's layout, from the
 * slice's first column) against the panel's ng groups of 4 columns; the sums
 * are added to dot (nb rows of NR), or stored there for the first slice
 * (`fresh`), so dot needs no clearing. */
static ALWAYS_INLINE void tile(const int nb, const uint8_t *pan, int64_t ng, const int8_t *xt, int64_t *dot,
                               pf_cursor *pf, const bool fresh) {
  __m512i acc[MR][NV];
#pragma GCC unroll 8
  for (int b = 0; b < nb; b++)
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++) acc[b][v] = _mm512_setzero_si512();
  for (int64_t g = 0; g < ng; g++) {
    if (((unsigned)g & pf->every) == 0) pf_step(pf);
    __m512i w[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++) w[v] = _mm512_load_si512(pan + (g * NV + v) * 64);
#pragma GCC unroll 8
    for (int b = 0; b < nb; b++) {
      int32_t x4;
      memcpy(&x4, xt + (g * nb + b) * 4, sizeof x4);
      const __m512i x = _mm512_set1_epi32(x4);
#pragma GCC unroll 2
      for (int v = 0; v < NV; v++) dpbusd(&acc[b][v], w[v], x);
    }
  }
#pragma GCC unroll 8
  for (int b = 0; b < nb; b++)
#pragma GCC unroll 2
    for (int v = 0; v < NV; v++) {
      __m512i *d = (__m512i *)(void *)(dot + b * NR + v * 16);
      const __m512i lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(acc[b][v]));
      const __m512i hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(acc[b][v], 1));
      d[0] = fresh ? lo : _mm512_add_epi64(d[0], lo);
      d[1] = fresh ? hi : _mm512_add_epi64(d[1], hi);
    }
}

/* xt in the VNNI layout (qgemm.h: tiles of MR rows, then 4, 2, 1; group g
 * of a tile of nb rows at its byte g · nb · 4): two tiles of MR rows at a
 * time through a 16 × 16 transpose of 4-byte groups per 64 columns, which
 * turns row i's 16 groups into group g's 16 rows, the first tile's 8 in
 * the low half (qgemm.c's byte loop had been 2–3 % of a 1024 × 1024 int8
 * product at batch 64); the last rows in that loop's way. */
void loom_qgemm_make_tiles_vnni(const int8_t *xq, int8_t *xt, int64_t batch, int64_t xstride) {
  int64_t b0 = 0;
  while (batch - b0 >= MR) {
    const bool two = batch - b0 >= 2 * MR;
    int8_t *t0 = xt + b0 * xstride, *t1 = xt + (b0 + MR) * xstride;
    for (int64_t c = 0; c < xstride; c += 64) {
      __m512i r[16];
      for (int i = 0; i < 16; i++)
        r[i] = i < MR || two ? _mm512_loadu_si512(xq + (b0 + i) * xstride + c) : _mm512_setzero_si512();
      transpose16_epi32(r); /* r[g]: group c / 4 + g of the 16 rows */
      for (int g = 0; g < 16; g++) {
        _mm256_storeu_si256((__m256i *)(void *)(t0 + (c + 4 * g) * MR), _mm512_castsi512_si256(r[g]));
        if (two) _mm256_storeu_si256((__m256i *)(void *)(t1 + (c + 4 * g) * MR), _mm512_extracti64x4_epi64(r[g], 1));
      }
    }
    b0 += two ? 2 * MR : MR;
  }
  for (int nb = MR / 2; nb >= 1; nb /= 2) {
    if (batch - b0 < nb) continue;
    int8_t *t = xt + b0 * xstride;
    for (int64_t g = 0; g < xstride / 4; g++)
      for (int i = 0; i < nb; i++) memcpy(t + (g * nb + i) * 4, xq + (b0 + i) * xstride + g * 4, 4);
    b0 += nb;
  }
}

/* Needs j->xt; 8-bit or 4-bit codes. */
bool loom_qgemm_panel_vnni(const loom_qgemm_job *j, int64_t r0, int64_t r1) {
  const int m = 8 / j->t->bits; /* columns a code byte */
  const int64_t rb = j->row_bytes;
  /* a slice: KC columns, KC / m code bytes */
  const int64_t kc = rb < KC / m ? (rb + 63) / 64 * 64 : KC / m;
  const int64_t gmax = j->batch < BATCH_GROUP ? j->batch : BATCH_GROUP;
  const size_t pan_bytes = (size_t)(kc * m) * NR;
  uint8_t *pan = loom_scratch(LOOM_SCRATCH_QGEMM_PANELS, pan_bytes + (size_t)gmax * NR * sizeof(int64_t));
  if (!pan) return false;
  int64_t *dot = (int64_t *)(void *)(pan + pan_bytes);
  /* isum = dot − Σ xq · base (qgemm-vnni.c) */
  const int64_t base = j->t->id == LOOM_DTYPE_INT8   ? 128
                       : j->t->id == LOOM_DTYPE_INT4 ? 8
                       : j->t->id == LOOM_DTYPE_FP4  ? LOOM_QGEMM_FP4_OFFSET
                                                     : 0;
  for (int64_t p0 = r0; p0 < r1; p0 += NR) {
    const int64_t p1 = r1 - p0 < NR ? r1 : p0 + NR;
    const uint8_t *rowp[NR];
    for (int i = 0; i < NR; i++) /* a short panel repeats its last row */
      rowp[i] = j->packed + (size_t)(p0 + i < p1 ? p0 + i : p1 - 1) * (size_t)rb;
    for (int64_t g0 = 0; g0 < j->batch; g0 += BATCH_GROUP) {
      const int64_t gn = j->batch - g0 < BATCH_GROUP ? j->batch - g0 : BATCH_GROUP;
      /* dot: every one of its gn rows of NR written by the first slice's tiles */
      for (int64_t o0 = 0; o0 < rb; o0 += kc) {
        const int64_t o1 = rb - o0 < kc ? rb : o0 + kc, c0 = o0 * m, ng = ((o1 - o0) * m + 3) / 4;
        pack(j->t, rowp, o0, o1, pan);
        /* the next slice of these rows, or the next panel's first (beyond
         * r1 too: with one thread the next range follows) */
        pf_cursor pf;
        const int64_t tiles = gn / MR + (gn % MR) / 4 + (gn % 4) / 2 + gn % 2;
        if (o1 < rb) pf_set(&pf, j, p0, o1, rb - o1 < kc ? rb : o1 + kc, tiles * ng);
        else if (g0 + BATCH_GROUP < j->batch) pf_set(&pf, j, p0, 0, kc < rb ? kc : rb, tiles * ng);
        else pf_set(&pf, j, p0 + NR, 0, kc < rb ? kc : rb, tiles * ng);
        /* the tiles of j->xt: MR rows, the last rows 4, 2, 1 (BATCH_GROUP is
         * a multiple of MR, so a group starts a tile) */
        const bool fresh = o0 == 0;
        int64_t b = 0;
        for (; b + MR <= gn; b += MR) {
          const int8_t *xt = j->xt + (g0 + b) * j->xstride + c0 * MR;
          if (fresh) tile(MR, pan, ng, xt, dot + b * NR, &pf, true);
          else tile(MR, pan, ng, xt, dot + b * NR, &pf, false);
        }
        for (int nb = MR / 2; nb >= 1; nb /= 2) {
          if (gn - b < nb) continue;
          const int8_t *xt = j->xt + (g0 + b) * j->xstride + c0 * nb;
          if (nb == 4) tile(4, pan, ng, xt, dot + b * NR, &pf, fresh);
          else if (nb == 2) tile(2, pan, ng, xt, dot + b * NR, &pf, fresh);
          else tile(1, pan, ng, xt, dot + b * NR, &pf, fresh);
          b += nb;
        }
      }
      panel_finish(j, dot, NR, p0, p1, g0, gn, base);
    }
  }
  return true;
}
#pragma GCC pop_options
#endif
