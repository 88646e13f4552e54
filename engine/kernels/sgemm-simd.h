/*
 * The packed float32 product of one vector level, written once and compiled
 * per level (sgemm-avx2.c, sgemm-avx512.c). The including file defines:
 *
 *   VL            lanes of one vector
 *   VMAX          vectors of one panel (a panel is MR = VL·VMAX lanes wide)
 *   vf            the vector type
 *   VZERO(), VLOAD(p), VSTORE(p, v), VBCAST(x), VFMA(a, b, acc)
 *   VLOADN(p, n), VSTOREN(p, v, n)   the first n lanes only (n < VL)
 *   VTRANSPOSE(src, lds, dst, ldd)   dst[c·ldd + r] = src[r·lds + c], r, c < VL
 *   SIMD(name)    name##_level
 *
 * Every element of C is one fused multiply-add chain over k in ascending
 * order, starting from 0 (or from C when accumulating): the order the
 * reference kernel (matmul-ref.c) uses, so every level gives its bits,
 * whatever the shape, the tiling or the thread count.
 *
 * One operand is the *vector* operand: packed once per call into panels of
 * MR lanes (k-major: the MR values of one k are contiguous), so the lanes run
 * along rows of C (the "m" orientation) or along its columns ("n"). The other
 * is the *scalar* operand, read in place and broadcast NR values at a time.
 * A micro-kernel keeps an MR × NR block of C in registers (VMAX·NR vector
 * accumulators) for KC steps of k. In the "n" orientation the block is a
 * piece of NR rows of C itself; in the "m" orientation its lanes are columns
 * of C, so it lives in a small column-major tile that is transposed into C
 * once, after all of k.
 *
 * Which operand is packed is a choice of speed only (the bits are the same):
 * packing the small operand costs little, and the "m" orientation is the one
 * that never packs a large weight matrix for a batch of activations.
 */

#include "core/pool-internal.h"
#include "kernels/scratch.h"

#define MR (VL * VMAX)
#define NR 6
/* The level's choices for scalar operands strided along k (sgemm-avx2.c
 * sets them; measured on a 32 KiB, 8-way L1). */
#ifndef SGEMM_STRIDED_SCALAR
#define SGEMM_STRIDED_SCALAR 0.0
#endif
#ifndef SGEMM_RESIDENT
#define SGEMM_RESIDENT 0
#endif
/* k steps per block: one block of a panel (KC × MR floats) stays in L1 while
 * the scalar operand's columns stream past it. */
#define KC (8192 / MR)
/* Columns of the scalar operand per tile: for the "m" orientation the tile
 * of C (SB × MR floats) is on the stack. Tiles are what the pool hands out. */
#define SB_M 48
#define SB_N 96

typedef struct {
  const float *pv; /* KC × w block of a panel, k-major */
  int64_t w;       /* panel width in floats (nv · VL) */
  const float *sc; /* scalar operand at (k, s) of the block's first step and column */
  int64_t sc_p, sc_s;
  int64_t kc;
  float *ct; /* accumulator block: NR columns of nv vectors, ct_s floats apart */
  int64_t ct_s;
  int lanes; /* valid lanes of the last vector (VL when full) */
  bool load; /* start from ct (else from 0) */
} SIMD(micro_args);

/* nv vectors × nr columns; kcontig: the scalar operand is contiguous along k
 * (sc_p == 1), so each column is a stream of its own. The loops over nv and
 * nr carry `unroll` pragmas: without them GCC at -O2 kept the accumulators
 * in memory, which ran 4× slower. */
static inline __attribute__((always_inline)) void SIMD(micro_body)(const SIMD(micro_args) * g, const int nv,
                                                                    const int nr, const bool kcontig) {
  vf acc[VMAX][NR];
  const bool partial = g->lanes < VL;
#pragma GCC unroll 8
  for (int j = 0; j < nr; j++)
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++) {
      const float *src = g->ct + j * g->ct_s + v * VL;
      if (!g->load)
        acc[v][j] = VZERO();
      else if (v == nv - 1 && partial)
        acc[v][j] = VLOADN(src, g->lanes);
      else
        acc[v][j] = VLOAD(src);
    }
  const float *pv = g->pv;
  const int64_t w = g->w, kc = g->kc;
  if (kcontig) {
    const float *col[NR];
#pragma GCC unroll 8
    for (int j = 0; j < nr; j++) col[j] = g->sc + j * g->sc_s;
#pragma GCC unroll 2
    for (int64_t p = 0; p < kc; p++) {
      vf a[VMAX];
#pragma GCC unroll 8
      for (int v = 0; v < nv; v++) a[v] = VLOAD(pv + p * w + v * VL);
#pragma GCC unroll 8
      for (int j = 0; j < nr; j++) {
        vf b = VBCAST(col[j][p]);
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++) acc[v][j] = VFMA(a[v], b, acc[v][j]);
      }
    }
  } else {
    const float *sc = g->sc;
    const int64_t sc_p = g->sc_p;
#pragma GCC unroll 2
    for (int64_t p = 0; p < kc; p++) {
      vf a[VMAX];
#pragma GCC unroll 8
      for (int v = 0; v < nv; v++) a[v] = VLOAD(pv + p * w + v * VL);
#pragma GCC unroll 8
      for (int j = 0; j < nr; j++) {
        vf b = VBCAST(sc[p * sc_p + j]);
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++) acc[v][j] = VFMA(a[v], b, acc[v][j]);
      }
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < nr; j++)
#pragma GCC unroll 8
    for (int v = 0; v < nv; v++) {
      float *dst = g->ct + j * g->ct_s + v * VL;
      if (v == nv - 1 && partial)
        VSTOREN(dst, acc[v][j], g->lanes);
      else
        VSTORE(dst, acc[v][j]);
    }
}

typedef void (*SIMD(micro_fn))(const SIMD(micro_args) *);

#define MICRO_ONE(NV, NRR, KC_)                                                                     \
  static void SIMD(micro_##NV##_##NRR##_##KC_)(const SIMD(micro_args) * g) {                        \
    SIMD(micro_body)(g, NV, NRR, KC_);                                                              \
  }
#define MICRO_NR(NV, KC_)                                                                           \
  MICRO_ONE(NV, 1, KC_) MICRO_ONE(NV, 2, KC_) MICRO_ONE(NV, 3, KC_) MICRO_ONE(NV, 4, KC_)           \
  MICRO_ONE(NV, 5, KC_) MICRO_ONE(NV, 6, KC_)
#define MICRO_ROW(NV, KC_)                                                                          \
  {SIMD(micro_##NV##_1_##KC_), SIMD(micro_##NV##_2_##KC_), SIMD(micro_##NV##_3_##KC_),              \
   SIMD(micro_##NV##_4_##KC_), SIMD(micro_##NV##_5_##KC_), SIMD(micro_##NV##_6_##KC_)}

MICRO_NR(1, 0) MICRO_NR(1, 1)
MICRO_NR(2, 0) MICRO_NR(2, 1)
#if VMAX == 4
MICRO_NR(3, 0) MICRO_NR(3, 1)
MICRO_NR(4, 0) MICRO_NR(4, 1)
#endif

/* [kcontig][nv - 1][nr - 1] */
static const SIMD(micro_fn) SIMD(micro_table)[2][VMAX][NR] = {
  {MICRO_ROW(1, 0), MICRO_ROW(2, 0),
#if VMAX == 4
   MICRO_ROW(3, 0), MICRO_ROW(4, 0)
#endif
  },
  {MICRO_ROW(1, 1), MICRO_ROW(2, 1),
#if VMAX == 4
   MICRO_ROW(3, 1), MICRO_ROW(4, 1)
#endif
  },
};

/* ---- one call ---------------------------------------------------------------- */

typedef struct {
  bool m_lanes; /* lanes along rows of C ("m" orientation) */
  bool load_c;  /* start from C: accumulating, or a later chunk of k */
  int64_t u, s, k; /* lanes extent, scalar extent, depth (of this chunk of k) */
  const float *vsrc; /* vector operand: element (u, p) at vsrc[u·v_u + p·v_p] */
  int64_t v_u, v_p;
  const float *ssrc; /* scalar operand: element (p, s) at ssrc[p·sc_p + s·sc_s] */
  int64_t sc_p, sc_s;
  float *c;
  int64_t ldc;
  /* One slice per thread: a 64-byte header (the panel packed there, −1 for
   * none; when resident, [0] is 1 once every panel is packed and [1] the
   * block of the scalar operand packed, −1 for none) and one panel of k ×
   * MR floats, or when resident every panel and one block of the scalar
   * operand. */
  unsigned char *slices;
  size_t slice_bytes;
  bool parallel; /* the tiles run on the pool's threads: slice by thread */
  int64_t s_blocks, s_groups; /* block b: groups [b·G/B, (b+1)·G/B) of NR columns */
  /* Scalar operand strided along k and the panels small: every panel packed
   * in each thread's slice, tiles block-major, and each block of the scalar
   * operand copied once into rows of sbw floats (docs/sgemm.md, *Rows a
   * power of two apart*). */
  bool resident;
  int64_t panels, sbw;
  /* B's rows decoded into the block (loom_sgemm_decoded_b): always
   * resident, "m" orientation, the block k-contiguous (row stride k). */
  const loom_sgemm_b_rows *dec;
} SIMD(job);

/* Panel q (lanes [q·MR, q·MR + MR)) over all of the chunk's k into dst, k-major,
 * w lanes a step, zero beyond the operand's edge. */
static void SIMD(pack_panel)(const SIMD(job) * j, int64_t q, float *dst) {
  const int64_t pb = j->k;
  int64_t u0 = q * MR, nu = j->u - u0 < MR ? j->u - u0 : MR;
  int64_t w = (nu + VL - 1) / VL * VL;
  const float *src = j->vsrc + u0 * j->v_u;
  if (j->v_u == 1) {
    /* Lanes contiguous in the source: a copy per step of k. */
    for (int64_t p = 0; p < pb; p++) {
      memcpy(dst + p * w, src + p * j->v_p, (size_t)nu * sizeof *dst);
      for (int64_t x = nu; x < w; x++) dst[p * w + x] = 0.0f;
    }
  } else if (j->v_p == 1) {
    /* k contiguous in the source: a transpose, VL × VL blocks in registers.
     * VL source rows at a time, each read from start to end: the hardware
     * prefetchers follow VL streams, not MR of them. */
    int64_t kv = pb - pb % VL, x = 0;
    for (; x + VL <= nu; x += VL)
      for (int64_t p0 = 0; p0 < kv; p0 += VL) VTRANSPOSE(src + x * j->v_u + p0, j->v_u, dst + p0 * w + x, w);
    /* The last lanes step of k by step of k, so the stores run along the
     * panel (lanes outer wrote a float every w: half the time of a
     * convolution's tiny products, whose 4 or 8 rows fill a third or half of
     * one vector). */
    const int64_t x0 = x;
    for (int64_t p = 0; p < kv; p++)
      for (int64_t xx = x0; xx < w; xx++) dst[p * w + xx] = xx < nu ? src[xx * j->v_u + p] : 0.0f;
    for (int64_t p = kv; p < pb; p++)
      for (int64_t xx = 0; xx < w; xx++) dst[p * w + xx] = xx < nu ? src[xx * j->v_u + p] : 0.0f;
  } else {
    /* k strided in the source: a transpose, in blocks of 8 steps of k so
     * the source rows are read a cache line at a time. */
    int64_t p0 = 0;
    for (; p0 + 8 <= pb; p0 += 8)
      for (int64_t x = 0; x < w; x++) {
        if (x < nu) {
          const float *row = src + x * j->v_u + p0 * j->v_p;
          for (int t8 = 0; t8 < 8; t8++) dst[(p0 + t8) * w + x] = row[t8 * j->v_p];
        } else {
          for (int t8 = 0; t8 < 8; t8++) dst[(p0 + t8) * w + x] = 0.0f;
        }
      }
    for (int64_t p = p0; p < pb; p++)
      for (int64_t x = 0; x < w; x++) dst[p * w + x] = x < nu ? src[x * j->v_u + p * j->v_p] : 0.0f;
  }
}

/* This thread's slice (see SIMD(job)): its header, its panel or panels,
 * and when resident the block of the scalar operand after them. */
typedef struct {
  int64_t *holds;
  float *panels, *sblock;
} SIMD(slice);

static SIMD(slice) SIMD(slice_of)(const SIMD(job) * j) {
  const int index = j->parallel ? loom_pool_thread_index() : 0;
  unsigned char *slice = j->slices + (size_t)(index < 0 ? 0 : index) * j->slice_bytes;
  float *panels = (float *)(void *)(slice + 64);
  return (SIMD(slice)){(int64_t *)(void *)slice, panels, panels + j->panels * j->k * MR};
}

/* Columns [*s0, *s1) of the scalar operand: its block sb. */
static void SIMD(block_cols)(const SIMD(job) * j, int64_t sb, int64_t *s0, int64_t *s1) {
  *s0 = sb * j->s_groups / j->s_blocks * NR;
  *s1 = (sb + 1) * j->s_groups / j->s_blocks * NR;
  if (*s1 > j->s) *s1 = j->s;
}

/* Resident (see SIMD(job)): every panel packed in this thread's slice, and
 * block sb of the scalar operand (columns [s0, s1)) copied into rows of sbw
 * floats after them. */
static void SIMD(resident_prepare)(const SIMD(job) * j, const SIMD(slice) * sl, int64_t sb, int64_t s0, int64_t s1) {
  int64_t *holds = sl->holds;
  if (holds[0] != 1) {
    for (int64_t i = 0; i < j->panels; i++) SIMD(pack_panel)(j, i, sl->panels + i * j->k * MR);
    holds[0] = 1;
  }
  if (holds[1] == sb) return;
  if (j->dec) { /* B's rows s0 … s1, k apart */
    j->dec->decode(j->dec, s0, s1 - s0, sl->sblock);
  } else {
    const int64_t width = s1 - s0, whole = width / VL * VL;
    for (int64_t p = 0; p < j->k; p++) {
      const float *from = j->ssrc + p * j->sc_p + s0;
      float *to = sl->sblock + p * j->sbw;
      for (int64_t c = 0; c < whole; c += VL) VSTORE(to + c, VLOAD(from + c));
      if (whole < width) VSTOREN(to + whole, VLOADN(from + whole, (int)(width - whole)), (int)(width - whole));
    }
  }
  holds[1] = sb;
}

/* The "n" orientation when resident: a tile is a block of rows of C, taken
 * NR rows at a time across every panel, so each row of C is read and written
 * from start to end (streams the hardware prefetchers follow) rather than a
 * panel's 16 or 64 floats of rows 4 KiB apart at a time. */
static void SIMD(rows_range)(void *arg, int64_t begin, int64_t end) {
  const SIMD(job) *j = arg;
  const SIMD(slice) sl = SIMD(slice_of)(j);
  for (int64_t sb = begin; sb < end; sb++) {
    int64_t s0, s1;
    SIMD(block_cols)(j, sb, &s0, &s1);
    SIMD(resident_prepare)(j, &sl, sb, s0, s1);
    SIMD(micro_args) g = {.sc_p = j->sbw, .sc_s = 1, .ct_s = j->ldc};
    for (int64_t p0 = 0; p0 < j->k; p0 += KC) {
      g.kc = j->k - p0 < KC ? j->k - p0 : KC;
      g.load = j->load_c || p0 > 0;
      for (int64_t s = s0; s < s1; s += NR) {
        const int nr = (int)(s1 - s < NR ? s1 - s : NR);
        g.sc = sl.sblock + p0 * j->sbw + (s - s0);
        for (int64_t q = 0; q < j->panels; q++) {
          const int64_t uq = q * MR, nu = j->u - uq < MR ? j->u - uq : MR;
          const int nv = (int)((nu + VL - 1) / VL);
          g.w = nv * VL;
          g.lanes = (int)(nu - (nv - 1) * VL);
          g.pv = sl.panels + q * j->k * MR + p0 * g.w;
          g.ct = j->c + s * j->ldc + uq;
          SIMD(micro_table)[0][nv - 1][nr - 1](&g);
        }
      }
    }
  }
}

/* Tiles (panel, block of columns of the scalar operand), panel-major. Each
 * thread packs the panel of its tile into its own slice when the slice does
 * not hold it yet: the pool gives a thread consecutive tiles (pool.c), so it
 * packs each panel of its share once, and no thread reads a panel another
 * core wrote (docs/sgemm.md, *Each thread its own panel*). */
static void SIMD(tile_range)(void *arg, int64_t begin, int64_t end) {
  const SIMD(job) *j = arg;
  _Alignas(64) float tile[SB_M * MR];
  const SIMD(slice) sl = SIMD(slice_of)(j);
  int64_t *holds = sl.holds;
  for (int64_t t = begin; t < end; t++) {
    int64_t q = j->resident ? t % j->panels : t / j->s_blocks;
    int64_t sb = j->resident ? t / j->panels : t % j->s_blocks;
    int64_t uq = q * MR, nu = j->u - uq < MR ? j->u - uq : MR;
    int nv = (int)((nu + VL - 1) / VL);
    int64_t w = nv * VL;
    int64_t s0, s1;
    SIMD(block_cols)(j, sb, &s0, &s1);
    float *panel = sl.panels;
    SIMD(micro_args) g = {.w = w, .sc_p = j->sc_p, .sc_s = j->sc_s};
    const float *ssrc = j->ssrc;
    int64_t s_origin = 0; /* the column of the scalar operand at ssrc */
    if (j->resident) {
      SIMD(resident_prepare)(j, &sl, sb, s0, s1);
      panel = sl.panels + q * j->k * MR;
      ssrc = sl.sblock;
      s_origin = s0;
      if (!j->dec) g.sc_p = j->sbw; /* decoded rows keep the job's strides: 1 along k, k between rows */
    } else if (*holds != q) {
      SIMD(pack_panel)(j, q, panel);
      *holds = q;
    }
    bool kcontig = g.sc_p == 1;
    float *crow0 = NULL; /* "m": C at (first row of the panel, s0) */
    if (j->m_lanes) {
      crow0 = j->c + uq * j->ldc + s0;
      /* Lanes past the panel's rows compute on zeros and are never stored;
       * zeroing them keeps uninitialised stack out of the arithmetic. Only
       * those the micro-kernels read: the whole tile (12 KiB at AVX-512)
       * was cleared for every tile of the small weight gradients of a
       * convolution, 3 % of training the digits CNN. */
      if (j->load_c)
        for (int64_t s = 0; s < s1 - s0; s++) {
          for (int64_t x = 0; x < nu; x++) tile[s * MR + x] = crow0[x * j->ldc + s];
          for (int64_t x = nu; x < w; x++) tile[s * MR + x] = 0.0f;
        }
      g.ct_s = MR;
      g.lanes = VL;
    } else {
      g.ct_s = j->ldc;
      g.lanes = (int)(nu - (nv - 1) * VL);
    }
    for (int64_t p0 = 0; p0 < j->k; p0 += KC) {
      g.kc = j->k - p0 < KC ? j->k - p0 : KC;
      g.pv = panel + p0 * w;
      g.load = j->load_c || p0 > 0;
      for (int64_t s = s0; s < s1; s += NR) {
        int nr = (int)(s1 - s < NR ? s1 - s : NR);
        g.sc = ssrc + p0 * g.sc_p + (s - s_origin) * g.sc_s;
        g.ct = j->m_lanes ? tile + (s - s0) * MR : j->c + s * j->ldc + uq;
        SIMD(micro_table)[kcontig][nv - 1][nr - 1](&g);
      }
    }
    if (j->m_lanes)
      for (int64_t x = 0; x < nu; x++)
        for (int64_t s = 0; s < s1 - s0; s++) crow0[x * j->ldc + s] = tile[s * MR + x];
  }
}

/* Rough cycles of one orientation, for choosing between them: vector
 * multiply-adds (two a cycle), packing (a transpose costs more than a copy)
 * and, for the "m" orientation, the transposition of C through the tile;
 * and where the level says so (SGEMM_STRIDED_SCALAR, cycles per step of k
 * of one micro call), reading a scalar operand that steps along k by whole
 * rows: each step a line of its own, and rows a multiple of 4 KiB apart
 * share one set of the L1 cache. */
static double SIMD(cost)(bool m_lanes, const loom_sgemm_args *a) {
  int64_t u = m_lanes ? a->m : a->n, s = m_lanes ? a->n : a->m;
  double vecs = (double)((u + VL - 1) / VL);
  double fma = vecs * (double)s * (double)a->k * 0.5;
  bool transpose_pack = m_lanes ? !a->trans_a : a->trans_b;
  double pack = (double)u * (double)a->k * (transpose_pack ? 1.0 : 0.25);
  double out = m_lanes ? (double)a->m * (double)a->n * (a->accumulate ? 2.0 : 1.0) : 0.0;
  bool strided = m_lanes ? !a->trans_b : a->trans_a;
  double calls = (double)((u + MR - 1) / MR) * (double)((s + NR - 1) / NR);
  double scalar = strided ? calls * (double)a->k * SGEMM_STRIDED_SCALAR : 0.0;
  return fma + pack + out + scalar;
}

/* Floats of packed panels of all threads together: bounds the scratch
 * memory. Beyond it k is taken in chunks, one after the other, each a
 * product of its own that goes on from C: the chain over k of every element
 * of C is the same, through memory between chunks as between blocks of KC. */
#define PACK_BUDGET ((int64_t)1 << 22)
/* Floats of one thread's slice in the resident case: 512 KiB. */
#define RESIDENT_FLOATS ((int64_t)1 << 17)

#include "kernels/sgemm-rows-simd.h"

bool SIMD(loom_sgemm_level)(loom_pool *pool, const loom_sgemm_args *a) {
  /* Small products stay on the calling thread: handing them out costs more
   * than they take. Inside another pool job the product runs inline, on this
   * thread alone. */
  if ((double)a->m * (double)a->n * (double)a->k < 65536.0) pool = NULL;
  if (a->m <= FEW_ROWS) {
    if (a->b_rows) return false; /* the few-rows kernel reads B in place */
    SIMD(loom_sgemm_rows)(pool, a);
    return true;
  }
  bool m_lanes = SIMD(cost)(true, a) <= SIMD(cost)(false, a);
  /* Decoded rows of B serve the "m" orientation only: where it is not the
   * cheaper one (many rows of A, few of B: the caller's one block of B is
   * small) the caller's blocks are faster. */
  if (a->b_rows && !m_lanes) return false;
  SIMD(job) j = {.m_lanes = m_lanes, .c = a->c, .ldc = a->ldc, .dec = a->b_rows};
  if (m_lanes) {
    j.u = a->m;
    j.s = a->n;
    j.vsrc = a->a;
    j.v_u = a->trans_a ? 1 : a->lda;
    j.v_p = a->trans_a ? a->lda : 1;
    j.ssrc = a->b;
    j.sc_p = a->trans_b ? 1 : a->ldb;
    j.sc_s = a->trans_b ? a->ldb : 1;
    if (j.dec) j.sc_s = a->k; /* the block's rows */
  } else {
    j.u = a->n;
    j.s = a->m;
    j.vsrc = a->b;
    j.v_u = a->trans_b ? a->ldb : 1;
    j.v_p = a->trans_b ? 1 : a->ldb;
    j.ssrc = a->a;
    j.sc_p = a->trans_a ? a->lda : 1;
    j.sc_s = a->trans_a ? 1 : a->lda;
  }
  const int64_t threads = loom_pool_size(pool);
  j.parallel = threads > 1 && loom_pool_thread_index() < 0;
  const int64_t slices = j.parallel ? threads : 1;
  const int64_t max_groups = (m_lanes ? SB_M : SB_N) / NR, panels = (j.u + MR - 1) / MR;
  /* Resident (see SIMD(job)) where the scalar operand steps along k by
   * whole rows and every panel and one block fit RESIDENT_FLOATS: rows a
   * multiple of 4 KiB apart share one set of the L1 cache, and each micro
   * call read one from each of KC of them. */
  j.panels = panels;
  j.sbw = max_groups * NR;
  const bool fits = (panels * MR + j.sbw) * a->k <= RESIDENT_FLOATS;
  j.resident = ((SGEMM_RESIDENT && j.sc_p != 1) || j.dec) && fits;
  if (j.dec && !j.resident) return false;
  int64_t kchunk = PACK_BUDGET / (MR * slices) / KC * KC;
  if (kchunk < KC) kchunk = KC;
  if (kchunk > a->k || j.resident) kchunk = a->k;
  j.slice_bytes = 64 + (size_t)(j.resident ? (panels * MR + j.sbw) * kchunk : kchunk * MR) * sizeof(float);
  j.slices = loom_scratch(LOOM_SCRATCH_SGEMM_PANELS, (size_t)slices * j.slice_bytes);
  if (!j.slices) return false;
  if (!j.resident) j.panels = 0; /* tile_range's block of the scalar operand follows the one panel */
  /* Blocks of the scalar operand within one group of NR of each other, at
   * most SB columns each (the "m" orientation's tile is SB_M wide). With few
   * tiles, a block count that gives every thread as many: the pool hands
   * each thread an equal share of tiles (pool.c), so equal tiles are equal
   * work. */
  j.s_groups = (j.s + NR - 1) / NR;
  j.s_blocks = (j.s_groups + max_groups - 1) / max_groups;
  /* resident "n" orientation: tiles are blocks of rows (rows_range) */
  const bool by_rows = j.resident && !m_lanes;
  const int64_t per_block = by_rows ? 1 : panels;
  if (j.parallel && per_block * j.s_blocks < (by_rows ? 16 : 4) * threads)
    while ((per_block * j.s_blocks) % threads != 0 && j.s_blocks < j.s_groups) j.s_blocks++;
  const float *vsrc = j.vsrc, *ssrc = j.ssrc;
  for (int64_t k0 = 0; k0 < a->k; k0 += kchunk) {
    j.k = a->k - k0 < kchunk ? a->k - k0 : kchunk;
    j.vsrc = vsrc + k0 * j.v_p;
    j.ssrc = ssrc ? ssrc + k0 * j.sc_p : NULL; /* NULL: decoded rows (one chunk) */
    j.load_c = a->accumulate || k0 > 0;
    for (int64_t i = 0; i < slices; i++) {
      int64_t *holds = (int64_t *)(void *)(j.slices + (size_t)i * j.slice_bytes);
      holds[0] = holds[1] = -1;
    }
    loom_pool_for(pool, per_block * j.s_blocks, 1, by_rows ? SIMD(rows_range) : SIMD(tile_range), &j);
  }
  return true;
}

#undef MR
#undef NR
#undef KC
#undef SB_M
#undef SB_N
#undef MICRO_ONE
#undef MICRO_NR
#undef MICRO_ROW
#undef PACK_BUDGET
#undef RESIDENT_FLOATS
#undef SGEMM_STRIDED_SCALAR
#undef SGEMM_RESIDENT
#undef FEW_ROWS
