/*
 * The batched product of packed codes (every dtype of kernels/qgemm.h) with
 * AMX tiles. One tdpbusd multiplies a tile of 16 rows × 64 unsigned bytes
 * by a tile of 64 × 16 signed bytes into 16 × 16 int32 sums: 16,384
 * multiply-adds, against vpdpbusd's 64 (docs/qgemm.md gives the rates
 * measured).
 *
 *   A = 16 weight rows × 64 columns, one byte a weight, row-major, copied
 *       into a panel of the calling thread's scratch (pack): 8-bit codes
 *       as they are (int8 through tdpbssd, signed × signed, uint8 through
 *       tdpbusd), 4-bit and 2-bit codes spread to a byte each as the
 *       unsigned operand u of qgemm-vnni.c (signed formats XOR 2^(n−1), fp4
 *       through its table), binary bits as q = ±1 (tdpbssd).
 *   B = 64 columns × 16 activation rows: the activation tiles of j->xt in
 *       the AMX layout (qgemm.h: per group of 4 columns, the 4 codes of
 *       each of 16 rows side by side) — a tile is 1 KiB read at stride 64.
 *   C = 16 weight rows × 16 activation rows.
 *
 * A block of 32 weight rows (2 A tiles) meets 32 activation rows (2 B
 * tiles) in 4 C tiles, so each tile load serves 2 products; all 8 tile
 * registers are in use. The C tiles of every activation row of the block
 * are kept as int32 in a buffer (loaded and stored around each slice of
 * columns) and widened to 64 bits once per 65,536 columns: a sum gains at
 * most 255 · 127 per column, so 65,536 columns stay below 2^31. The outputs
 * are loom_qgemm_finish's operations on exact integer sums (panel_finish),
 * the bits of every other level.
 */
#include "kernels/cpu.h"
#include "kernels/qgemm.h"
#include "kernels/scratch.h"

#if defined(LOOM_KERNELS_X86)
#include <math.h>
#include <string.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,bmi,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,amx-tile,amx-int8")
#include <immintrin.h>

#include "kernels/qgemm-vnni-simd.h"
#include "kernels/transpose-avx512.h"

enum {
  NR = LOOM_QGEMM_PANEL_ROWS,      /* weight rows a block: 2 A tiles */
  TB = LOOM_QGEMM_AMX_TILE_ROWS,   /* activation rows a B tile */
  KC = 4096,                       /* columns a slice of the panel */
  STEP = 2048 + 64,                /* panel bytes a step of 64 columns: 2 A tiles and a line (pack) */
  GR = 4,                          /* rows the copy reads side by side */
  WIDEN = 65536,                   /* columns between widenings to 64 bits */
  BATCH_GROUP = 256,               /* activation rows whose sums are kept at once */
};
_Static_assert(NR == 2 * 16 && TB == 16 && NR % GR == 0, "2 A tiles of 16 rows, B tiles of 16 activation rows");
_Static_assert(BATCH_GROUP % (2 * TB) == 0 && WIDEN % KC == 0, "groups of whole tile pairs; slices within a widening");

/* The tile configuration (palette 1): tiles 0-3 C, 4-5 A, 6-7 B, each
 * 16 rows of 64 bytes. A constant in memory: built on the stack, GCC 12
 * dropped its stores as dead in one build (it does not see ldtilecfg read
 * them), and the instruction faulted on the zeros. */
typedef struct {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} tile_config;
_Static_assert(sizeof(tile_config) == 64, "ldtilecfg reads 64 bytes");

static const _Alignas(64) tile_config config = {
  .palette = 1,
  .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
  .rows = {16, 16, 16, 16, 16, 16, 16, 16},
};

static void configure(void) { _tile_loadconfig(&config); }

/* Columns [c0, c1) (whole steps of 64, zero past the row's end) of the
 * rows p0 … p1 − 1 of j into pan as A tiles, one byte a weight: step k's
 * tile of rows 0-15 at pan + STEP · k, of rows 16-31 1 KiB on, row i's 64
 * bytes at 64 i in its tile (rows past p1 zero). A tile is then one
 * contiguous KiB: read in place at the row stride, a power of two as a rule,
 * its 16 or 32 lines fell in one L1 set of 12 ways. GR rows side by side
 * (4 read streams: 8-10 % faster than one, and 32 read memory at about
 * half the rate), their steps STEP bytes apart: at 2048 the stores fell
 * in two L1 sets. 8-bit codes are copied, narrower ones spread a field to
 * a byte (step_bytes). */
/* 16 bytes of 2-bit codes to their 64 columns, a byte each in column
 * order: byte i holds columns 4i … 4i + 3 in bits 2k, so as a 32-bit lane
 * b | b << 6 | b << 12 | b << 18 has field k in byte k's low bits. */
static ALWAYS_INLINE __m512i spread2(__m128i codes) {
  const __m512i b = _mm512_cvtepu8_epi32(codes);
  const __m512i t = _mm512_or_si512(_mm512_or_si512(b, _mm512_slli_epi32(b, 6)),
                                    _mm512_or_si512(_mm512_slli_epi32(b, 12), _mm512_slli_epi32(b, 18)));
  return _mm512_and_si512(t, _mm512_set1_epi8(0x03));
}

/* One step (64 columns) of a row as A bytes: avail code bytes are left in
 * the row from o (the rest reads as zero). 8-bit codes as they are; 4-bit
 * and 2-bit codes as the unsigned operand u (signed formats XOR 2^(n−1),
 * fp4 its table); binary as q = ±1 (bit 0 is +1). */
static ALWAYS_INLINE __m512i step_bytes(const int m, const loom_dtype d, const uint8_t *row, int64_t o,
                                        int64_t avail) {
  const int64_t n = 64 / m; /* code bytes a step */
  const uint64_t k = avail >= n ? (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1)
                                : avail <= 0 ? 0 : _bzhi_u64(~UINT64_C(0), (unsigned)avail);
  switch (m) {
  case 1: return _mm512_maskz_loadu_epi8(k, row + o);
  case 2: return unpack4(_mm256_maskz_loadu_epi8((__mmask32)k, row + o), d);
  case 4: {
    const __m512i f = spread2(_mm_maskz_loadu_epi8((__mmask16)k, row + o));
    return d == LOOM_DTYPE_UINT2 ? f : _mm512_xor_si512(f, _mm512_set1_epi8(0x02));
  }
  default: { /* binary: the 64 bits of 8 code bytes are the 64 columns' */
    uint64_t bits = 0;
    memcpy(&bits, row + o, (size_t)(avail >= 8 ? 8 : avail <= 0 ? 0 : avail));
    return _mm512_mask_blend_epi8(bits, _mm512_set1_epi8(1), _mm512_set1_epi8(-1));
  }
  }
}

static ALWAYS_INLINE void pack_m(const int m, const loom_dtype d, const loom_qgemm_job *j, int64_t p0, int64_t p1,
                                 int64_t c0, int64_t c1, uint8_t *pan) {
  const int64_t rb = (int64_t)j->row_bytes;
  for (int64_t i0 = 0; i0 < NR; i0 += GR) {
    const uint8_t *rowp[GR];
    for (int r = 0; r < GR; r++) rowp[r] = p0 + i0 + r < p1 ? j->packed + (size_t)(p0 + i0 + r) * (size_t)rb : NULL;
    uint8_t *dst = pan + (i0 / 16) * 1024 + (i0 % 16) * 64;
    for (int64_t c = c0; c < c1; c += 64) {
      const int64_t o = c / m; /* the step's first code byte */
#pragma GCC unroll 8
      for (int r = 0; r < GR; r++) {
        _mm512_store_si512(dst + (c - c0) / 64 * STEP + r * 64, rowp[r] ? step_bytes(m, d, rowp[r], o, rb - o) : _mm512_setzero_si512());
      }
    }
  }
}

static void pack(const loom_qgemm_job *j, int64_t p0, int64_t p1, int64_t c0, int64_t c1, uint8_t *pan) {
  switch (j->t->id) {
  case LOOM_DTYPE_INT4: pack_m(2, LOOM_DTYPE_INT4, j, p0, p1, c0, c1, pan); break;
  case LOOM_DTYPE_UINT4: pack_m(2, LOOM_DTYPE_UINT4, j, p0, p1, c0, c1, pan); break;
  case LOOM_DTYPE_FP4: pack_m(2, LOOM_DTYPE_FP4, j, p0, p1, c0, c1, pan); break;
  case LOOM_DTYPE_INT2: pack_m(4, LOOM_DTYPE_INT2, j, p0, p1, c0, c1, pan); break;
  case LOOM_DTYPE_TERNARY: pack_m(4, LOOM_DTYPE_TERNARY, j, p0, p1, c0, c1, pan); break;
  case LOOM_DTYPE_UINT2: pack_m(4, LOOM_DTYPE_UINT2, j, p0, p1, c0, c1, pan); break;
  case LOOM_DTYPE_BINARY: pack_m(8, LOOM_DTYPE_BINARY, j, p0, p1, c0, c1, pan); break;
  default: pack_m(1, j->t->id, j, p0, p1, c0, c1, pan); break; /* int8, uint8 */
  }
}

/* The products of columns [c0, c1) of a block's 2 A tiles (pan, as pack
 * lays them out) with one B tile (xt0) or two (xt1 too), into the C tiles
 * at acc (4 of 1 KiB: A tile 0 × B tiles 0, 1, then A tile 1 × B tiles 0,
 * 1): loaded and stored back, or started at zero (`first`). */
static ALWAYS_INLINE void products(const bool sign, const bool two, const uint8_t *pan, const int8_t *xt0,
                                   const int8_t *xt1, int64_t c0, int64_t c1, int32_t *acc, bool first) {
  int32_t *acc0 = acc, *acc1 = acc + 256, *acc2 = acc + 512, *acc3 = acc + 768;
  if (first) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  } else {
    _tile_loadd(0, acc0, 64);
    _tile_loadd(2, acc2, 64);
    if (two) {
      _tile_loadd(1, acc1, 64);
      _tile_loadd(3, acc3, 64);
    }
  }
  for (int64_t c = c0; c < c1; c += 64) {
    const uint8_t *a = pan + (c - c0) / 64 * STEP;
    _tile_loadd(4, a, 64);
    _tile_loadd(5, a + 1024, 64);
    _tile_loadd(6, xt0 + c * TB, 64); /* 16 groups of 4 columns × 16 rows × 4 bytes */
    if (sign) {
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(2, 5, 6);
    } else {
      _tile_dpbusd(0, 4, 6);
      _tile_dpbusd(2, 5, 6);
    }
    if (two) {
      _tile_loadd(7, xt1 + c * TB, 64);
      if (sign) {
        _tile_dpbssd(1, 4, 7);
        _tile_dpbssd(3, 5, 7);
      } else {
        _tile_dpbusd(1, 4, 7);
        _tile_dpbusd(3, 5, 7);
      }
    }
  }
  _tile_stored(0, acc0, 64);
  _tile_stored(2, acc2, 64);
  if (two) {
    _tile_stored(1, acc1, 64);
    _tile_stored(3, acc3, 64);
  }
}

/* The int32 sums of a C tile (16 weight rows × 16 activation rows, row i
 * at acc + 16 i) added, widened, to dot (activation row b's weight row r at
 * dot[b · NR + r]) for its first nb activation rows; stored there instead
 * at the first widening (`fresh`), so dot needs no clearing. */
static void widen(const int32_t *acc, int64_t *dot, int nb, bool fresh) {
  __m512i r[16];
  for (int i = 0; i < 16; i++) r[i] = _mm512_load_si512(acc + 16 * i);
  transpose16_epi32(r); /* r[b]: the 16 weight rows' sums of activation row b */
  for (int b = 0; b < nb; b++) {
    __m512i *d = (__m512i *)(void *)(dot + b * NR);
    const __m512i lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(r[b]));
    const __m512i hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(r[b], 1));
    _mm512_storeu_si512(d, fresh ? lo : _mm512_add_epi64(_mm512_loadu_si512(d), lo));
    _mm512_storeu_si512(d + 1, fresh ? hi : _mm512_add_epi64(_mm512_loadu_si512(d + 1), hi));
  }
}

/* Needs j->xt in the AMX layout; false (nothing written) when its buffers
 * cannot be had. */
static bool panel_amx(const loom_qgemm_job *j, int64_t r0, int64_t r1) {
  const int m = 8 / j->t->bits;
  const int64_t rb = (int64_t)j->row_bytes;
  const int64_t kcols = (rb * m + 63) / 64 * 64; /* columns a row's tiles cover (its code bytes', and zeros) */
  const int64_t gmax = j->batch < BATCH_GROUP ? j->batch : BATCH_GROUP;
  const int64_t gtiles = (gmax + TB - 1) / TB;
  /* pan: NR × KC; acc: per pair of B tiles, the 4 C tiles of 1 KiB (A
   * tile 0 × B tiles 0, 1, then A tile 1 × B tiles 0, 1); dot: 64-bit sums */
  const size_t pan_bytes = (size_t)KC / 64 * STEP, acc_bytes = (size_t)(gtiles + 1) / 2 * 4096;
  uint8_t *pan = loom_scratch(LOOM_SCRATCH_QGEMM_PANELS, pan_bytes + acc_bytes + (size_t)gmax * NR * sizeof(int64_t));
  if (!pan) return false;
  int32_t *acc = (int32_t *)(void *)(pan + pan_bytes);
  int64_t *dot = (int64_t *)(void *)(pan + pan_bytes + acc_bytes);
  const loom_dtype d = j->t->id;
  /* int8 multiplies its codes as they are and binary its ±1 (signed ×
   * signed), uint8 as unsigned; 4-bit and 2-bit codes as u, corrected by
   * base (qgemm-vnni.c) */
  const bool sign = d == LOOM_DTYPE_INT8 || d == LOOM_DTYPE_BINARY;
  const int64_t base = d == LOOM_DTYPE_INT4                              ? 8
                       : d == LOOM_DTYPE_FP4                             ? LOOM_QGEMM_FP4_OFFSET
                       : d == LOOM_DTYPE_INT2 || d == LOOM_DTYPE_TERNARY ? 2
                                                                         : 0;
  configure();
  for (int64_t p0 = r0; p0 < r1; p0 += NR) {
    const int64_t p1 = r1 - p0 < NR ? r1 : p0 + NR;
    for (int64_t g0 = 0; g0 < j->batch; g0 += BATCH_GROUP) {
      const int64_t gn = j->batch - g0 < BATCH_GROUP ? j->batch - g0 : BATCH_GROUP;
      const int64_t nt = (gn + TB - 1) / TB; /* B tiles */
      bool fresh = true; /* dot: every one of its gn rows of NR written at the first widening */
      for (int64_t c0 = 0; c0 < kcols; c0 += KC) {
        const int64_t c1 = kcols - c0 < KC ? kcols : c0 + KC;
        pack(j, p0, p1, c0, c1, pan);
        const bool first = c0 % WIDEN == 0;
        for (int64_t t = 0; t < nt; t += 2) {
          const int8_t *xt0 = j->xt + (g0 + t * TB) * j->xstride, *xt1 = xt0 + TB * j->xstride;
          int32_t *a = acc + t / 2 * 1024; /* the pair's C tiles 0-3, 1 KiB each */
          if (sign && t + 1 < nt) products(true, true, pan, xt0, xt1, c0, c1, a, first);
          else if (sign) products(true, false, pan, xt0, xt1, c0, c1, a, first);
          else if (t + 1 < nt) products(false, true, pan, xt0, xt1, c0, c1, a, first);
          else products(false, false, pan, xt0, xt1, c0, c1, a, first);
        }
        if (c1 % WIDEN == 0 || c1 == kcols) {
          for (int64_t t = 0; t < nt; t++) {
            /* tile pair t / 2's C tiles: 0 (rows 0-15 × B tile t even) or
             * 1 (odd), then 2 or 3 for rows 16-31 */
            int32_t *pair = acc + t / 2 * 1024;
            const int nb = gn - t * TB < TB ? (int)(gn - t * TB) : TB;
            widen(pair + (t % 2) * 256, dot + t * TB * NR, nb, fresh);
            widen(pair + 512 + (t % 2) * 256, dot + t * TB * NR + 16, nb, fresh);
          }
          fresh = false;
        }
      }
      panel_finish(j, dot, NR, p0, p1, g0, gn, base);
    }
  }
  _tile_release();
  return true;
}

/* xt in the AMX layout (qgemm.h): per tile of 16 rows, 64 columns at a
 * time, the 16 rows' 64 bytes transposed as 32-bit elements, so group g's
 * 4 bytes of each row lie together (rows past the batch zero). A plain C
 * loop (qgemm.c's, since removed) took about 30 µs for 64 rows of 4096
 * columns. */
static void make_tiles(const int8_t *xq, int8_t *xt, int64_t batch, int64_t xstride) {
  for (int64_t b0 = 0; b0 < batch; b0 += TB) {
    const int64_t nb = batch - b0 < TB ? batch - b0 : TB;
    int8_t *t = xt + b0 * xstride;
    for (int64_t c = 0; c < xstride; c += 64) {
      __m512i r[16];
      for (int i = 0; i < 16; i++)
        r[i] = i < nb ? _mm512_loadu_si512(xq + (b0 + i) * xstride + c) : _mm512_setzero_si512();
      transpose16_epi32(r); /* r[g]: group c / 4 + g of the 16 rows */
      for (int g = 0; g < 16; g++) _mm512_storeu_si512(t + c * TB + g * 64, r[g]);
    }
  }
}

static void qgemm_rows_amx(const loom_qgemm_job *j, int64_t r0, int64_t r1) {
  if (j->xt && panel_amx(j, r0, r1)) return;
  /* the shapes the tiles do not take, or no buffer: the VNNI level's
   * kernels, which must not read tiles of this layout */
  loom_qgemm_job plain = *j;
  plain.xt = NULL;
  loom_qgemm_rows_vnni(&plain, r0, r1);
}

void loom_kernels_fill_amx(loom_kernels *k) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++)
    if (loom_qgemm_supports((loom_dtype)d)) k->qgemm_rows[d] = qgemm_rows_amx;
  k->qgemm_tiles = LOOM_QGEMM_TILES_AMX;
  k->qgemm_make_tiles = make_tiles;
}
#pragma GCC pop_options
#endif
