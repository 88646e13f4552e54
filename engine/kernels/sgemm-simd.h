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

#include "kernels/scratch.h"

#define MR (VL * VMAX)
#define NR 6
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
  bool m_lanes;  /* lanes along rows of C ("m" orientation) */
  bool accumulate;
  int64_t u, s, k; /* lanes extent, scalar extent (of this chunk), depth */
  int64_t u0;      /* first lane index of the chunk */
  const float *vsrc; /* vector operand: element (u, p) at vsrc[u·v_u + p·v_p] */
  int64_t v_u, v_p;
  const float *ssrc; /* scalar operand: element (p, s) at ssrc[p·sc_p + s·sc_s] */
  int64_t sc_p, sc_s;
  float *c;
  int64_t ldc;
  float *packed; /* ceil(u / MR) panels of k × MR floats */
  int64_t s_blocks, s_groups; /* block b: groups [b·G/B, (b+1)·G/B) of NR columns */
  int64_t k_slabs, ks; /* packing items per panel, of ks steps of k each */
} SIMD(job);

/* Steps of k per packing item, at most: a panel is packed in slabs, so that
 * a product with one or two panels and a long k (a weight gradient: 64 rows,
 * 4096 positions) still packs on every thread. With few panels the slabs are
 * made shorter, so that every thread gets an equal share of them. Always a
 * multiple of 16 (of VL and of 8). */
#define KS 512

/* Item t: slab t % k_slabs of panel t / k_slabs, k rows [pa, pb) of w lanes,
 * zero beyond the operand's edge. */
static void SIMD(pack_range)(void *arg, int64_t begin, int64_t end) {
  const SIMD(job) *j = arg;
  for (int64_t t = begin; t < end; t++) {
    int64_t q = t / j->k_slabs, pa = t % j->k_slabs * j->ks, pb = pa + j->ks < j->k ? pa + j->ks : j->k;
    int64_t u0 = j->u0 + q * MR, nu = j->u - q * MR < MR ? j->u - q * MR : MR;
    int64_t w = (nu + VL - 1) / VL * VL;
    float *dst = j->packed + q * MR * j->k;
    const float *src = j->vsrc + u0 * j->v_u;
    if (j->v_u == 1) {
      /* Lanes contiguous in the source: a copy per step of k. */
      for (int64_t p = pa; p < pb; p++) {
        memcpy(dst + p * w, src + p * j->v_p, (size_t)nu * sizeof *dst);
        for (int64_t x = nu; x < w; x++) dst[p * w + x] = 0.0f;
      }
    } else if (j->v_p == 1) {
      /* k contiguous in the source: a transpose, VL × VL blocks in registers.
       * VL source rows at a time, each read from start to end: the hardware
       * prefetchers follow VL streams, not MR of them. */
      int64_t kv = pb - (pb - pa) % VL, x = 0;
      for (; x + VL <= nu; x += VL)
        for (int64_t p0 = pa; p0 < kv; p0 += VL) VTRANSPOSE(src + x * j->v_u + p0, j->v_u, dst + p0 * w + x, w);
      for (; x < w; x++)
        for (int64_t p = pa; p < kv; p++) dst[p * w + x] = x < nu ? src[x * j->v_u + p] : 0.0f;
      for (int64_t p = kv; p < pb; p++)
        for (int64_t xx = 0; xx < w; xx++) dst[p * w + xx] = xx < nu ? src[xx * j->v_u + p] : 0.0f;
    } else {
      /* k strided in the source: a transpose, in blocks of 8 steps of k so
       * the source rows are read a cache line at a time. */
      int64_t p0 = pa;
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
}

/* Tiles (panel, block of SB columns of the scalar operand). */
static void SIMD(tile_range)(void *arg, int64_t begin, int64_t end) {
  const SIMD(job) *j = arg;
  _Alignas(64) float tile[SB_M * MR];
  for (int64_t t = begin; t < end; t++) {
    int64_t q = t / j->s_blocks, sb = t % j->s_blocks;
    int64_t uq = q * MR, nu = j->u - uq < MR ? j->u - uq : MR;
    int nv = (int)((nu + VL - 1) / VL);
    int64_t w = nv * VL;
    int64_t s0 = sb * j->s_groups / j->s_blocks * NR, s1 = (sb + 1) * j->s_groups / j->s_blocks * NR;
    if (s1 > j->s) s1 = j->s;
    const float *panel = j->packed + q * MR * j->k;
    SIMD(micro_args) g = {.w = w, .sc_p = j->sc_p, .sc_s = j->sc_s};
    bool kcontig = j->sc_p == 1;
    float *crow0 = NULL; /* "m": C at (first row of the panel, s0) */
    if (j->m_lanes) {
      crow0 = j->c + (j->u0 + uq) * j->ldc + s0;
      /* Lanes past the panel's rows compute on zeros and are never stored;
       * zeroing them keeps uninitialised stack out of the arithmetic. */
      if (j->accumulate && nu < MR) memset(tile, 0, sizeof tile);
      if (j->accumulate)
        for (int64_t s = 0; s < s1 - s0; s++)
          for (int64_t x = 0; x < nu; x++) tile[s * MR + x] = crow0[x * j->ldc + s];
      g.ct_s = MR;
      g.lanes = VL;
    } else {
      g.ct_s = j->ldc;
      g.lanes = (int)(nu - (nv - 1) * VL);
    }
    for (int64_t p0 = 0; p0 < j->k; p0 += KC) {
      g.kc = j->k - p0 < KC ? j->k - p0 : KC;
      g.pv = panel + p0 * w;
      g.load = j->accumulate || p0 > 0;
      for (int64_t s = s0; s < s1; s += NR) {
        int nr = (int)(s1 - s < NR ? s1 - s : NR);
        g.sc = j->ssrc + p0 * j->sc_p + s * j->sc_s;
        g.ct = j->m_lanes ? tile + (s - s0) * MR : j->c + s * j->ldc + j->u0 + uq;
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
 * and, for the "m" orientation, the transposition of C through the tile. */
static double SIMD(cost)(bool m_lanes, const loom_sgemm_args *a) {
  int64_t u = m_lanes ? a->m : a->n, s = m_lanes ? a->n : a->m;
  double vecs = (double)((u + VL - 1) / VL);
  double fma = vecs * (double)s * (double)a->k * 0.5;
  bool transpose_pack = m_lanes ? !a->trans_a : a->trans_b;
  double pack = (double)u * (double)a->k * (transpose_pack ? 1.0 : 0.25);
  double out = m_lanes ? (double)a->m * (double)a->n * (a->accumulate ? 2.0 : 1.0) : 0.0;
  return fma + pack + out;
}

/* Floats of packed panels per chunk of lanes: bounds the scratch memory. */
#define PACK_BUDGET ((int64_t)1 << 22)

bool SIMD(loom_sgemm_level)(loom_pool *pool, const loom_sgemm_args *a) {
  bool m_lanes = SIMD(cost)(true, a) <= SIMD(cost)(false, a);
  SIMD(job) j = {.m_lanes = m_lanes, .accumulate = a->accumulate, .k = a->k, .c = a->c, .ldc = a->ldc};
  int64_t u_all;
  if (m_lanes) {
    u_all = a->m;
    j.s = a->n;
    j.vsrc = a->a;
    j.v_u = a->trans_a ? 1 : a->lda;
    j.v_p = a->trans_a ? a->lda : 1;
    j.ssrc = a->b;
    j.sc_p = a->trans_b ? 1 : a->ldb;
    j.sc_s = a->trans_b ? a->ldb : 1;
  } else {
    u_all = a->n;
    j.s = a->m;
    j.vsrc = a->b;
    j.v_u = a->trans_b ? a->ldb : 1;
    j.v_p = a->trans_b ? 1 : a->ldb;
    j.ssrc = a->a;
    j.sc_p = a->trans_a ? a->lda : 1;
    j.sc_s = a->trans_a ? 1 : a->lda;
  }
  if (a->k > INT64_MAX / 2 / MR) return false; /* the sizes below would overflow */
  int64_t chunk = PACK_BUDGET / (a->k * MR) * MR;
  if (chunk < MR) chunk = MR;
  if (chunk > (u_all + MR - 1) / MR * MR) chunk = (u_all + MR - 1) / MR * MR;
  if ((uint64_t)(chunk * a->k) > SIZE_MAX / sizeof(float)) return false;
  j.packed = loom_scratch(LOOM_SCRATCH_SGEMM_PANELS, (size_t)(chunk * a->k) * sizeof(float));
  if (!j.packed) return false;
  /* Blocks of the scalar operand within one group of NR of each other, at
   * most SB columns each (the "m" orientation's tile is SB_M wide). With few
   * tiles, a block count that gives every thread as many: the pool hands
   * each thread an equal share of tiles (pool.c), so equal tiles are equal
   * work. */
  const int64_t max_groups = (m_lanes ? SB_M : SB_N) / NR, threads = loom_pool_size(pool);
  j.s_groups = (j.s + NR - 1) / NR;
  j.s_blocks = (j.s_groups + max_groups - 1) / max_groups;
  const int64_t panels_all = (u_all + MR - 1) / MR;
  if (threads > 1 && panels_all * j.s_blocks < 4 * threads)
    while ((panels_all * j.s_blocks) % threads != 0 && j.s_blocks < j.s_groups) j.s_blocks++;
  j.ks = KS;
  if (threads > 1 && panels_all < 2 * threads) {
    /* two slabs a thread over the panels there are */
    int64_t per_panel = (4 * threads + panels_all - 1) / panels_all;
    int64_t ks = ((a->k + per_panel - 1) / per_panel + 15) / 16 * 16;
    if (ks < j.ks) j.ks = ks < 64 ? 64 : ks;
  }
  j.k_slabs = (a->k + j.ks - 1) / j.ks;
  /* Small products stay on the calling thread: handing them out costs more
   * than they take. */
  if ((double)a->m * (double)a->n * (double)a->k < 65536.0) pool = NULL;
  for (j.u0 = 0; j.u0 < u_all; j.u0 += chunk) {
    j.u = u_all - j.u0 < chunk ? u_all - j.u0 : chunk;
    int64_t panels = (j.u + MR - 1) / MR;
    loom_pool_for(pool, panels * j.k_slabs, 1, SIMD(pack_range), &j);
    loom_pool_for(pool, panels * j.s_blocks, 1, SIMD(tile_range), &j);
  }
  return true;
}

#undef MR
#undef NR
#undef KC
#undef KS
#undef SB_M
#undef SB_N
#undef MICRO_ONE
#undef MICRO_NR
#undef MICRO_ROW
#undef PACK_BUDGET
