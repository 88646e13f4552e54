/*
 * Products with few rows of C (FEW_ROWS or fewer: one sample through a layer
 * at inference, a recurrent step, a batch of two), included by
 * sgemm-simd.h inside a level's target region. Nothing is packed: with one
 * row, sgemm-simd.h's "m" orientation fills one lane of each vector and the
 * "n" orientation transposes all of B into a panel for a single pass over
 * it. Here the lanes run along the columns of C, B is read where it lies
 * and A's few values are broadcast. Every element of C is the chain of
 * sgemm-simd.h (fma over k ascending from 0, or from C), so the bits are the
 * same as every other path's.
 *
 * The including file defines, beside sgemm-simd.h's macros:
 *   VTRANSPOSE_REGS(r)   r[c] lane i ← r[i] lane c, for vf r[VL]
 */

/* Three and four rows were tried: their accumulators beside the 16 vectors
 * of a transpose spilled, and the packed product was faster. */
#define FEW_ROWS 2
/* Columns of C a task of the pool takes (a multiple of VL) and, where B's
 * columns are contiguous, the block of C's columns that one pass over B
 * updates: FEW_ROWS rows of it stay in L1 (16 KiB). */
#define ROWS_TASK_COLS 64
#define ROWS_AXPY_FLOATS 4096

typedef struct {
  const loom_sgemm_args *a;
  int64_t task_cols; /* columns of C per task */
} SIMD(rows_job);

/* A[i][p] */
static inline __attribute__((always_inline)) float SIMD(rows_a)(const loom_sgemm_args *a, int64_t i, int64_t p) {
  return a->trans_a ? a->a[p * a->lda + i] : a->a[i * a->lda + p];
}

/*
 * B with k contiguous (B[p][j] at b[j·ldb + p], the rows of a weight matrix):
 * VL columns of C, whose VL rows of B are loaded VL steps of k at a time and
 * transposed in registers, so that vector q is step p0 + q of the VL
 * columns; each of C's m rows is a chain of its own. Columns past n read
 * the last row again and are never stored.
 */
static inline __attribute__((always_inline)) void SIMD(rows_kcontig)(const loom_sgemm_args *a, int64_t j0, const int m) {
  vf acc[FEW_ROWS];
  const float *row[VL];
  const int lanes = a->n - j0 < VL ? (int)(a->n - j0) : VL;
  for (int r = 0; r < VL; r++) row[r] = a->b + (r < lanes ? j0 + r : a->n - 1) * a->ldb;
#pragma GCC unroll 2
  for (int i = 0; i < m; i++) {
    const float *src = a->c + i * a->ldc + j0;
    if (!a->accumulate)
      acc[i] = VZERO();
    else
      acc[i] = lanes == VL ? VLOAD(src) : VLOADN(src, lanes);
  }
  const int64_t k = a->k;
  for (int64_t p0 = 0; p0 < k; p0 += VL) {
    vf t[VL];
    if (p0 + VL <= k) {
#pragma GCC unroll 16
      for (int r = 0; r < VL; r++) t[r] = VLOAD(row[r] + p0);
      VTRANSPOSE_REGS(t);
#pragma GCC unroll 16
      for (int q = 0; q < VL; q++)
#pragma GCC unroll 2
        for (int i = 0; i < m; i++) acc[i] = VFMA(VBCAST(SIMD(rows_a)(a, i, p0 + q)), t[q], acc[i]);
    } else {
      const int kv = (int)(k - p0);
      for (int r = 0; r < VL; r++) t[r] = VLOADN(row[r] + p0, kv);
      VTRANSPOSE_REGS(t);
      for (int q = 0; q < kv; q++)
#pragma GCC unroll 2
        for (int i = 0; i < m; i++) acc[i] = VFMA(VBCAST(SIMD(rows_a)(a, i, p0 + q)), t[q], acc[i]);
    }
  }
#pragma GCC unroll 2
  for (int i = 0; i < m; i++) {
    float *dst = a->c + i * a->ldc + j0;
    if (lanes == VL)
      VSTORE(dst, acc[i]);
    else
      VSTOREN(dst, acc[i], lanes);
  }
}

static void SIMD(rows_kcontig_1)(const loom_sgemm_args *a, int64_t j0) { SIMD(rows_kcontig)(a, j0, 1); }
static void SIMD(rows_kcontig_2)(const loom_sgemm_args *a, int64_t j0) { SIMD(rows_kcontig)(a, j0, 2); }

/*
 * B with its columns contiguous (B[p][j] at b[p·ldb + j]: dY·W): for each
 * step of k, each row of C's block takes A[i][p] times row p of B, so B
 * streams past row by row and the block of C, the accumulators, stays in
 * L1: in a buffer on the stack, copied into C at the end. Updated in C
 * itself, the cache line where two threads' blocks of a row meet (C's rows
 * are not 64-byte aligned in general) was written by both at every step of
 * k: on the 2-vCPU development VM that made two threads 1.2–2.8 times
 * slower than one (bench-sgemm, *single row dy·W*). The buffer starts from
 * C when accumulating, else from zeros: fma(x, y, +0) is the chain's first
 * step from 0.
 */
static inline __attribute__((always_inline)) void SIMD(rows_axpy)(const loom_sgemm_args *a, int64_t j0, int64_t j1,
                                                                   const int m) {
  const int64_t w = j1 - j0, wv = w - w % VL, wpad = (w + VL - 1) / VL * VL; /* m · wpad ≤ ROWS_AXPY_FLOATS */
  const int rest = (int)(w - wv);
  _Alignas(64) float block[ROWS_AXPY_FLOATS];
  float *acc[FEW_ROWS];
  for (int i = 0; i < m; i++) {
    acc[i] = block + i * wpad;
    memset(acc[i] + wv, 0, (size_t)(wpad - wv) * sizeof(float)); /* lanes past w: fma of zeros, never copied */
    if (a->accumulate)
      memcpy(acc[i], a->c + i * a->ldc + j0, (size_t)w * sizeof(float));
    else
      memset(acc[i], 0, (size_t)w * sizeof(float));
  }
  for (int64_t p = 0; p < a->k; p++) {
    const float *brow = a->b + p * a->ldb + j0;
    vf x[FEW_ROWS];
#pragma GCC unroll 2
    for (int i = 0; i < m; i++) x[i] = VBCAST(SIMD(rows_a)(a, i, p));
    int64_t j = 0;
    for (; j + 4 * VL <= wv; j += 4 * VL)
#pragma GCC unroll 4
      for (int v = 0; v < 4; v++) {
        const vf b = VLOAD(brow + j + v * VL);
#pragma GCC unroll 2
        for (int i = 0; i < m; i++) VSTORE(acc[i] + j + v * VL, VFMA(x[i], b, VLOAD(acc[i] + j + v * VL)));
      }
    for (; j < wv; j += VL) {
      const vf b = VLOAD(brow + j);
#pragma GCC unroll 2
      for (int i = 0; i < m; i++) VSTORE(acc[i] + j, VFMA(x[i], b, VLOAD(acc[i] + j)));
    }
    if (rest) {
      const vf b = VLOADN(brow + wv, rest);
#pragma GCC unroll 2
      for (int i = 0; i < m; i++) VSTORE(acc[i] + wv, VFMA(x[i], b, VLOAD(acc[i] + wv)));
    }
  }
  for (int i = 0; i < m; i++) memcpy(a->c + i * a->ldc + j0, acc[i], (size_t)w * sizeof(float));
}

static void SIMD(rows_axpy_1)(const loom_sgemm_args *a, int64_t j0, int64_t j1) { SIMD(rows_axpy)(a, j0, j1, 1); }
static void SIMD(rows_axpy_2)(const loom_sgemm_args *a, int64_t j0, int64_t j1) { SIMD(rows_axpy)(a, j0, j1, 2); }

static void SIMD(rows_tasks)(void *arg, int64_t begin, int64_t end) {
  const SIMD(rows_job) *job = arg;
  const loom_sgemm_args *a = job->a;
  for (int64_t t = begin; t < end; t++) {
    int64_t j0 = t * job->task_cols, j1 = j0 + job->task_cols < a->n ? j0 + job->task_cols : a->n;
    if (!a->trans_b) {
      if (a->m == 1)
        SIMD(rows_axpy_1)(a, j0, j1);
      else
        SIMD(rows_axpy_2)(a, j0, j1);
      continue;
    }
    for (int64_t j = j0; j < j1; j += VL) {
      if (a->m == 1)
        SIMD(rows_kcontig_1)(a, j);
      else
        SIMD(rows_kcontig_2)(a, j);
    }
  }
}

/* Products of at most FEW_ROWS rows (a->m), on the pool by blocks of
 * columns of C: each element is computed by one task, so any thread count
 * gives the same bits. */
void SIMD(loom_sgemm_rows)(loom_pool *pool, const loom_sgemm_args *a) {
#ifdef ROWS_ALIASED
  /* Rows of B a multiple of 4 KiB apart map into one set of the L1 cache,
   * which has 12 ways: VL = 16 rows read side by side evicted each other's
   * prefetched lines (a 1024 × 1024 row product at 250 µs, a 1000 × 1000 one
   * at 100). Eight rows at a time, the narrower level's kernel, fit. */
  if (a->trans_b && a->ldb % 1024 == 0) {
    ROWS_ALIASED(pool, a);
    return;
  }
#endif
  SIMD(rows_job) job = {.a = a, .task_cols = ROWS_TASK_COLS};
  if (!a->trans_b) {
    /* As many tasks as threads where C is narrow, else blocks that stay in L1. */
    const int64_t threads = loom_pool_size(pool), share = (a->n + threads - 1) / threads;
    const int64_t most = ROWS_AXPY_FLOATS / a->m;
    job.task_cols = share < most ? (share + VL - 1) / VL * VL : most;
  }
  const int64_t tasks = (a->n + job.task_cols - 1) / job.task_cols;
  loom_pool_for(pool, tasks, 1, SIMD(rows_tasks), &job);
}

#undef ROWS_TASK_COLS
#undef ROWS_AXPY_FLOATS
