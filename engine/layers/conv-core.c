/*
 * The shared convolution arithmetic (see conv-core.h): im2col gathers, the
 * col2im scatter, and tiled matrix products (BLAS or the reference kernel).
 *
 * Workspace is bounded: all three products work in blocks of whole rows of
 * positions of one sample, of sizes that depend on the problem only, so a
 * large batch never needs a batch-sized column buffer and every summation
 * order is the same for any pool.
 */
#include "layers/conv-core.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"

#if defined(LOOM_KERNELS_X86)
#include <immintrin.h> /* before any target pragma: each intrinsic keeps its own target */
#endif

#ifdef LOOM_HAVE_BLAS
#include <cblas.h>
#include <pthread.h>
#endif

/* A block's column buffer holds at most 2 Mi floats (8 MiB) unless one row
 * of positions needs more (a block is at least one row). Kept well below
 * glibc's largest mmap threshold, so repeated calls reuse heap memory
 * instead of faulting in freshly mapped pages each time (measured: ~10% of
 * a conv2d pass). */
#define WORKSPACE_DEFAULT ((int64_t)1 << 21)

/* The forward's blocks (rows × positions): whole rows of about FWD_POS
 * positions, gathered and multiplied by one thread while their columns are
 * in its cache (at 288 columns a block is 590 KB); FWD_ROWS rows of the
 * weights at a time. Gathering a whole sample first (4.7 MB for conv2d
 * 32→64 3×3 at 64×64) and tiling the product afterwards wrote the columns
 * to memory and read them back: 10.9–11.8 ms against 8.6 ms for its products
 * alone (bench-layers, one thread). The two backward products are one
 * loom_sgemm per block and group, tiled by loom_sgemm itself. Tiles of their
 * own cost about as much as the multiply-adds: the input gradient's 32-row
 * tiles each packed their block of the position gradients again (9 times
 * over for 288 rows), and the weight gradient's 48-column tiles transposed
 * the whole column matrix into panels three vectors wide (4.5 times the
 * position gradients, which are what loom_sgemm packs now). */
#ifndef FWD_ROWS
#define FWD_ROWS 64
#endif
#ifndef FWD_POS
#define FWD_POS 512
#endif

void conv_plan_finish(conv_plan *p) {
  p->taps = p->kernel[0] * p->kernel[1] * p->kernel[2];
  p->n_pos = p->pos[0] * p->pos[1] * p->pos[2];
  p->n_img = p->img[0] * p->img[1] * p->img[2];
  p->cols_per_group = (p->img_channels / p->groups) * p->taps;
  p->pos_channels = p->groups * p->rows_per_group;
  p->is_identity = p->taps == 1;
  for (int i = 0; i < CONV_MAX_DIMS; i++)
    if (p->stride[i] != 1 || p->padding[i] != 0 || p->pos[i] != p->img[i]) p->is_identity = 0;
}

#ifdef LOOM_HAVE_BLAS
/* OpenBLAS only on request, as for loom_sgemm (docs/sgemm.md): its
 * summation order depends on the shape. */
static bool use_blas = false;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
/* The engine threads itself (see kernels/matmul.c). */
static void blas_init(void) { openblas_set_num_threads(1); }
#endif

void conv_set_use_blas(bool use) {
#ifdef LOOM_HAVE_BLAS
  use_blas = use;
#else
  (void)use;
#endif
}

/*
 * One product C (m×n, ldc) = [C +] op(A)·op(B): the forward's tiles pass no
 * pool (a tile is already one core's work), the backward products theirs.
 * loom_sgemm's sums run in ascending k whatever the tile and the pool, so the
 * bits depend on neither. OpenBLAS, when asked for, runs on the calling
 * thread.
 */
static void conv_gemm(loom_pool *pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float *a,
                      int64_t lda, const float *b, int64_t ldb, bool accumulate, float *c, int64_t ldc) {
#ifdef LOOM_HAVE_BLAS
  if (use_blas && m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && lda <= INT32_MAX && ldb <= INT32_MAX &&
      ldc <= INT32_MAX) {
    pthread_once(&blas_once, blas_init);
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                (blasint)m, (blasint)n, (blasint)k, 1.0f, a, (blasint)lda, b, (blasint)ldb,
                accumulate ? 1.0f : 0.0f, c, (blasint)ldc);
    return;
  }
#endif
  loom_sgemm(pool, trans_a, trans_b, m, n, k, a, lda, b, ldb, accumulate, c, ldc);
}

static inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Positions ow in [*lo, *hi) read image column ow·stride + offset inside [0, size). */
static void valid_range(int64_t offset, int64_t stride, int64_t size, int64_t n_pos, int64_t *lo, int64_t *hi) {
  int64_t l = offset >= 0 ? 0 : ceil_div(-offset, stride);
  int64_t need = size - offset;
  int64_t h = need <= 0 ? 0 : ceil_div(need, stride);
  if (l > n_pos) l = n_pos;
  if (h > n_pos) h = n_pos;
  if (h < l) h = l;
  *lo = l;
  *hi = h;
}

/* dst[i] = src[i · stride] for i < n: a row of a gathered column. */
static inline void copy_row(float *restrict dst, const float *restrict src, int64_t n, int64_t stride) {
  if (stride == 1)
    memcpy(dst, src, (size_t)n * sizeof *dst);
  else
    for (int64_t i = 0; i < n; i++) dst[i] = src[i * stride];
}

static inline void zero_row(float *dst, int64_t n) { memset(dst, 0, (size_t)n * sizeof *dst); }

/* The image rows that rows r0, r0 + 1, … of positions read at one kernel
 * offset (kd, kh): (od, oh) advance without a division per row, and the
 * plan's sizes sit in locals (through the pointer GCC reloaded them for
 * every row). */
typedef struct {
  int64_t od, oh, pd, sd, sh, off_d, off_h, id_n, ih_n, iw_n;
} row_walk;

static inline row_walk row_walk_start(const conv_plan *p, int64_t kd, int64_t kh, int64_t r0) {
  return (row_walk){.od = r0 / p->pos[1], .oh = r0 % p->pos[1], .pd = p->pos[1], .sd = p->stride[0],
                    .sh = p->stride[1], .off_d = kd * p->dilation[0] - p->padding[0],
                    .off_h = kh * p->dilation[1] - p->padding[1], .id_n = p->img[0], .ih_n = p->img[1],
                    .iw_n = p->img[2]};
}

/* The offset in the image of the next row's image row, or −1 where it lies
 * in the padding. */
static inline int64_t row_walk_next(row_walk *w) {
  const int64_t id = w->od * w->sd + w->off_d, ih = w->oh * w->sh + w->off_h;
  if (++w->oh == w->pd) {
    w->oh = 0;
    w->od++;
  }
  return id < 0 || id >= w->id_n || ih < 0 || ih >= w->ih_n ? -1 : (id * w->ih_n + ih) * w->iw_n;
}

/* Gathers one image channel for the rows [r0, r1) of positions (a row: the
 * pos[2] positions of one (od, oh)): element (kernel offset k, position q)
 * goes to out[k·row_stride + q − r0·pos[2]]; positions reading padding get
 * 0. Rows of at most 16 positions go through conv-table.c's offset lists
 * instead. */
static void gather_channel(const conv_plan *p, const float *img, float *out, int64_t row_stride, int64_t r0,
                           int64_t r1) {
  const int64_t pw = p->pos[2], sw = p->stride[2];
  int64_t kidx = 0;
  for (int64_t kd = 0; kd < p->kernel[0]; kd++)
    for (int64_t kh = 0; kh < p->kernel[1]; kh++)
      for (int64_t kw = 0; kw < p->kernel[2]; kw++, kidx++) {
        int64_t lo, hi;
        const int64_t off_w = kw * p->dilation[2] - p->padding[2];
        valid_range(off_w, sw, p->img[2], pw, &lo, &hi);
        row_walk w = row_walk_start(p, kd, kh, r0);
        float *o = out + kidx * row_stride;
        for (int64_t r = r0; r < r1; r++, o += pw) {
          const int64_t at = row_walk_next(&w);
          if (at < 0) {
            zero_row(o, pw);
            continue;
          }
          zero_row(o, lo);
          copy_row(o + lo, img + at + lo * sw + off_w, hi - lo, sw);
          zero_row(o + hi, pw - hi);
        }
      }
}

/* dst[i] += src[i]: the same additions as the plain loop, four lanes at a
 * time (SSE2; a runtime stride kept GCC from vectorizing the scatter's loop,
 * and wider vector types it split through the stack). */
static void add_row(float *restrict dst, const float *restrict src, int64_t n) {
  typedef float v4 __attribute__((vector_size(16)));
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4 a, b;
    memcpy(&a, dst + i, sizeof a);
    memcpy(&b, src + i, sizeof b);
    a += b;
    memcpy(dst + i, &a, sizeof a);
  }
  for (; i < n; i++) dst[i] += src[i];
}

/* The adjoint of gather_channel for the column layout, for the rows [r0, r1)
 * of positions whose columns are at col, col_ld floats apart: adds them to
 * the image, the kernel offsets in ascending order (zeroing the image first
 * when `zero`). Blocks of rows taken in descending order add each image
 * value's terms in ascending kernel offset too, the order of one whole pass:
 * an offset further along reads a position row further back. */
static void scatter_channel(const conv_plan *p, const float *col, int64_t col_ld, int64_t r0, int64_t r1, bool zero,
                            float *img) {
  if (zero) memset(img, 0, (size_t)p->n_img * sizeof *img);
  const int64_t pw = p->pos[2], sw = p->stride[2];
  int64_t kidx = 0;
  for (int64_t kd = 0; kd < p->kernel[0]; kd++)
    for (int64_t kh = 0; kh < p->kernel[1]; kh++)
      for (int64_t kw = 0; kw < p->kernel[2]; kw++, kidx++) {
        int64_t lo, hi;
        const int64_t off_w = kw * p->dilation[2] - p->padding[2];
        valid_range(off_w, sw, p->img[2], pw, &lo, &hi);
        row_walk w = row_walk_start(p, kd, kh, r0);
        const float *c = col + kidx * col_ld;
        for (int64_t r = r0; r < r1; r++, c += pw) {
          const int64_t at = row_walk_next(&w);
          if (at < 0) continue;
          float *row = img + at;
          if (sw == 1)
            add_row(row + lo + off_w, c + lo, hi - lo);
          else
            for (int64_t ow = lo; ow < hi; ow++) row[ow * sw + off_w] += c[ow];
        }
      }
}

static float *alloc_workspace(int64_t samples, int64_t per_sample, loom_error *err) {
  int64_t n;
  size_t bytes;
  if (__builtin_mul_overflow(samples, per_sample, &n) || __builtin_mul_overflow((size_t)n, sizeof(float), &bytes) ||
      n <= 0) {
    loom_error_set(err, LOOM_ERR_NOMEM,
                   _("convolution workspace of %lld × %lld values is too large"), (long long)samples,
                   (long long)per_sample);
    return NULL;
  }
  float *w = malloc(bytes);
  if (!w)
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory allocating a convolution workspace of %zu bytes"), bytes);
  return w;
}

/* ---- parallel phases ---------------------------------------------------- */

typedef struct {
  const conv_plan *p;
  const float *A;
  const float *src; /* image or positions: the first sample, or the block's sample */
  float *ws;        /* workspace */
  float *dst;       /* positions, image or dA: the first sample, or the block's */
  const conv_table *table; /* NULL, or conv_table_new's lists */
  int64_t r0, r1;   /* rows of positions of a block (backward products) */
  /* The forward: rows of positions per block, and one slot of slot_floats
   * floats of ws per thread that can run a range at once, busy[i] while a
   * range uses slot i. */
  int64_t block_rows, slot_floats;
  int n_slots;
  atomic_bool *busy;
} phase_job;

/* Items channel: the rows [r0, r1) of positions of one sample's columns,
 * (r1 − r0)·pos[2] floats apart. */
static void gather_block_range(void *arg, int64_t begin, int64_t end) {
  const phase_job *j = arg;
  const conv_plan *p = j->p;
  int64_t q = (j->r1 - j->r0) * p->pos[2];
  for (int64_t c = begin; c < end; c++)
    if (j->table)
      conv_gather_table(p, j->table, j->src + c * p->n_img, j->ws + c * p->taps * q, q, j->r0, j->r1);
    else
      gather_channel(p, j->src + c * p->n_img, j->ws + c * p->taps * q, q, j->r0, j->r1);
}

/* Items channel: col2im of one sample's columns for the rows [r0, r1) of
 * positions ((r1 − r0)·pos[2] floats apart in ws) into its image; the first
 * block (the last rows) zeroes the image. */
static void scatter_block_range(void *arg, int64_t begin, int64_t end) {
  const phase_job *j = arg;
  const conv_plan *p = j->p;
  int64_t q = (j->r1 - j->r0) * p->pos[2];
  bool first = j->r1 == p->pos[0] * p->pos[1];
  for (int64_t c = begin; c < end; c++)
    if (j->table)
      conv_scatter_table(p, j->table, j->ws + c * p->taps * q, q, j->r0, j->r1, first, j->dst + c * p->n_img);
    else
      scatter_channel(p, j->ws + c * p->taps * q, q, j->r0, j->r1, first, j->dst + c * p->n_img);
}

/* A free slot of the forward's workspace: at most n_slots ranges run at
 * once (one per thread of the pool), so one is always free. */
static int slot_take(phase_job *j) {
  for (;;)
    for (int i = 0; i < j->n_slots; i++)
      if (!atomic_exchange_explicit(&j->busy[i], true, memory_order_acquire)) return i;
}

/* Items (sample, group, block of rows of positions) of pos = A · cols: the
 * block's columns gathered into the thread's slot of ws (an identity plan
 * reads the image where it lies), then multiplied by FWD_ROWS rows of A at a
 * time, one single-threaded product each. */
static void forward_blocks_range(void *arg, int64_t begin, int64_t end) {
  phase_job *j = arg;
  const conv_plan *p = j->p;
  int64_t kc = p->cols_per_group, mg = p->rows_per_group, cpg = p->img_channels / p->groups;
  int64_t rows = p->pos[0] * p->pos[1], n_blocks = ceil_div(rows, j->block_rows);
  int slot = p->is_identity ? -1 : slot_take(j);
  float *cols = slot < 0 ? NULL : j->ws + slot * j->slot_floats;
  for (int64_t it = begin; it < end; it++) {
    int64_t n = it / (p->groups * n_blocks), g = it / n_blocks % p->groups, b = it % n_blocks;
    int64_t r0 = b * j->block_rows, r1 = min64(r0 + j->block_rows, rows);
    int64_t q0 = r0 * p->pos[2], q = (r1 - r0) * p->pos[2];
    const float *src = j->src + (n * p->img_channels + g * cpg) * p->n_img;
    const float *b_cols = src + q0;
    int64_t ld = p->n_pos;
    if (cols) {
      for (int64_t c = 0; c < cpg; c++)
        if (j->table)
          conv_gather_table(p, j->table, src + c * p->n_img, cols + c * p->taps * q, q, r0, r1);
        else
          gather_channel(p, src + c * p->n_img, cols + c * p->taps * q, q, r0, r1);
      b_cols = cols;
      ld = q;
    }
    float *out = j->dst + (n * p->pos_channels + g * mg) * p->n_pos + q0;
    for (int64_t m0 = 0; m0 < mg; m0 += FWD_ROWS)
      conv_gemm(NULL, false, false, min64(FWD_ROWS, mg - m0), q, kc, j->A + (g * mg + m0) * kc, kc, b_cols, ld, false,
                out + m0 * p->n_pos, p->n_pos);
  }
  if (slot >= 0) atomic_store_explicit(&j->busy[slot], false, memory_order_release);
}

/* ---- the three products -------------------------------------------------- */

int conv_positions_from_image(const conv_plan *p, loom_pool *pool, const float *A, const float *img, float *pos,
                              int64_t batch, loom_error *err) {
  int64_t rows = p->pos[0] * p->pos[1], row_floats = p->cols_per_group * p->pos[2];
  int64_t rb = FWD_POS / p->pos[2];
  if (rb > WORKSPACE_DEFAULT / row_floats) rb = WORKSPACE_DEFAULT / row_floats;
  if (rb < 1) rb = 1;
  if (rb > rows) rb = rows;
  phase_job j = {.p = p, .A = A, .src = img, .dst = pos, .block_rows = rb, .slot_floats = rb * row_floats,
                 .n_slots = loom_pool_size(pool)};
  if (batch <= 0) return LOOM_OK;
  if (!p->is_identity) {
    if (!(j.ws = alloc_workspace(j.n_slots, j.slot_floats, err))) return err ? err->code : LOOM_ERR_NOMEM;
    if (!(j.busy = calloc((size_t)j.n_slots, sizeof *j.busy))) {
      free(j.ws);
      return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory allocating a convolution workspace of %zu bytes"),
                            (size_t)j.n_slots * sizeof *j.busy);
    }
    for (int i = 0; i < j.n_slots; i++) atomic_init(&j.busy[i], false);
  }
  int rc;
  conv_table *table = conv_table_new(p, rb, err, &rc);
  j.table = table;
  if (rc == LOOM_OK) loom_pool_for(pool, batch * p->groups * ceil_div(rows, rb), 1, forward_blocks_range, &j);
  conv_table_free(table);
  free(j.busy);
  free(j.ws);
  return rc;
}

/* img = col2im(Aᵀ · pos), per sample in blocks of about DX_BLOCK_POS
 * positions (whole rows), the last block first: one product per block and
 * group (every column one chain over the rows of A in ascending order,
 * however loom_sgemm tiles it), then its col2im while the block's columns are
 * still in cache. The block depends on the problem alone. An identity plan's
 * columns are the image itself: one product per sample and group. */
#define DX_BLOCK_POS 512

int conv_image_from_positions(const conv_plan *p, loom_pool *pool, const float *A, const float *pos, float *img,
                              int64_t batch, loom_error *err) {
  int64_t kc = p->cols_per_group, mg = p->rows_per_group, rows = p->pos[0] * p->pos[1];
  if (p->is_identity) {
    for (int64_t n = 0; n < batch; n++)
      for (int64_t g = 0; g < p->groups; g++)
        conv_gemm(pool, true, false, kc, p->n_pos, mg, A + g * mg * kc, kc,
                  pos + (n * p->pos_channels + g * mg) * p->n_pos, p->n_pos, false,
                  img + (n * p->groups + g) * kc * p->n_pos, p->n_pos);
    return LOOM_OK;
  }
  int64_t per_row = p->img_channels * p->taps * p->pos[2];
  int64_t rb = DX_BLOCK_POS / p->pos[2];
  if (rb > WORKSPACE_DEFAULT / per_row) rb = WORKSPACE_DEFAULT / per_row;
  if (rb < 1) rb = 1;
  if (rb > rows) rb = rows;
  if (batch <= 0) return LOOM_OK;
  float *ws = alloc_workspace(rb, per_row, err);
  if (!ws) return err ? err->code : LOOM_ERR_NOMEM;
  int rc;
  conv_table *table = conv_table_new(p, rb, err, &rc);
  if (rc != LOOM_OK) {
    free(ws);
    return rc;
  }
  phase_job j = {.p = p, .A = A, .ws = ws, .table = table};
  int64_t n_blocks = ceil_div(rows, rb);
  for (int64_t n = 0; n < batch; n++) {
    j.dst = img + n * p->img_channels * p->n_img;
    for (int64_t b = n_blocks - 1; b >= 0; b--) {
      j.r0 = b * rb;
      j.r1 = min64(j.r0 + rb, rows);
      int64_t q = (j.r1 - j.r0) * p->pos[2];
      for (int64_t g = 0; g < p->groups; g++)
        conv_gemm(pool, true, false, kc, q, mg, A + g * mg * kc, kc,
                  pos + (n * p->pos_channels + g * mg) * p->n_pos + j.r0 * p->pos[2], p->n_pos, false,
                  ws + g * kc * q, q);
      loom_pool_for(pool, p->img_channels, 1 + 16384 / (p->taps * q), scatter_block_range, &j);
    }
  }
  conv_table_free(table);
  free(ws);
  return LOOM_OK;
}

/* dA[g] += pos[n][g] · cols[n][g]ᵀ, the samples in ascending order and each
 * in blocks of about WG_BLOCK_POS positions (whole rows), ascending: one
 * gather and one product per block, so the block's columns are still in
 * cache when the product reads them. Every element of dA is one chain over
 * the samples, then the positions, in ascending order, whatever the pool or
 * the block size. The columns are gathered taps-major (the product
 * transposes them). */
#define WG_BLOCK_POS 1024

int conv_weight_gradient(const conv_plan *p, loom_pool *pool, const float *pos, const float *img, float *dA,
                         int64_t batch, loom_error *err) {
  int64_t kc = p->cols_per_group, mg = p->rows_per_group, rows = p->pos[0] * p->pos[1];
  int64_t per_row = p->img_channels * p->taps * p->pos[2];
  /* The block depends on the problem alone: OpenBLAS (on request) sums a
   * block in an order of its own. */
  int64_t rb = WG_BLOCK_POS / p->pos[2];
  if (rb > WORKSPACE_DEFAULT / per_row) rb = WORKSPACE_DEFAULT / per_row;
  if (rb < 1) rb = 1;
  if (rb > rows) rb = rows;
  float *ws = NULL;
  if (batch <= 0) return LOOM_OK;
  if (!(ws = alloc_workspace(rb, per_row, err))) return err ? err->code : LOOM_ERR_NOMEM;
  int rc;
  conv_table *table = conv_table_new(p, rb, err, &rc);
  if (rc != LOOM_OK) {
    free(ws);
    return rc;
  }
  phase_job j = {.p = p, .ws = ws, .table = table};
  for (int64_t n = 0; n < batch; n++) {
    j.src = img + n * p->img_channels * p->n_img;
    for (j.r0 = 0; j.r0 < rows; j.r0 += rb) {
      j.r1 = min64(j.r0 + rb, rows);
      int64_t q = (j.r1 - j.r0) * p->pos[2];
      loom_pool_for(pool, p->img_channels, 1 + 16384 / (p->taps * q), gather_block_range, &j);
      for (int64_t g = 0; g < p->groups; g++)
        conv_gemm(pool, false, true, mg, kc, q, pos + (n * p->pos_channels + g * mg) * p->n_pos + j.r0 * p->pos[2],
                  p->n_pos, ws + g * kc * q, q, true, dA + g * mg * kc, kc);
    }
  }
  conv_table_free(table);
  free(ws);
  return LOOM_OK;
}

/* ---- bias ------------------------------------------------------------------ */

typedef struct {
  const float *bias;
  const float *dy;
  float *y;
  float *dbias;
  int64_t batch, channels, spatial;
} bias_job;

static void add_bias_range(void *arg, int64_t begin, int64_t end) {
  const bias_job *j = arg;
  for (int64_t it = begin; it < end; it++) {
    float b = j->bias[it % j->channels];
    float *row = j->y + it * j->spatial;
    for (int64_t s = 0; s < j->spatial; s++) row[s] += b;
  }
}

void conv_add_bias(loom_pool *pool, const float *bias, float *y, int64_t batch, int64_t channels, int64_t spatial) {
  bias_job j = {.bias = bias, .y = y, .batch = batch, .channels = channels, .spatial = spatial};
  loom_pool_for(pool, batch * channels, 1 + 16384 / (spatial > 0 ? spatial : 1), add_bias_range, &j);
}

/* Channels summed side by side: each keeps its own chain in the order of the
 * plain loop (samples, then positions, ascending), but the chains of
 * BIAS_LANES neighbouring channels interleave, so the adds no longer wait on
 * each other. Tasks take whole groups of BIAS_LANES channels. One chain at a
 * time took 1.45 ms of the conv2d benchmark's 26 ms backward; side by side
 * 1.0 ms, and 0.7 ms in vectors (below). */
#define BIAS_LANES 8

static void bias_lanes_add_plain(double *sum, const float *rows, int64_t sp, int64_t n) {
  /* named accumulators: GCC kept an array of them in memory */
  double s0 = sum[0], s1 = sum[1], s2 = sum[2], s3 = sum[3], s4 = sum[4], s5 = sum[5], s6 = sum[6], s7 = sum[7];
  for (int64_t s = 0; s < n; s++) {
    s0 += rows[s];
    s1 += rows[sp + s];
    s2 += rows[2 * sp + s];
    s3 += rows[3 * sp + s];
    s4 += rows[4 * sp + s];
    s5 += rows[5 * sp + s];
    s6 += rows[6 * sp + s];
    s7 += rows[7 * sp + s];
  }
  sum[0] = s0, sum[1] = s1, sum[2] = s2, sum[3] = s3, sum[4] = s4, sum[5] = s5, sum[6] = s6, sum[7] = s7;
}

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2")
#include "kernels/transpose-avx2.h"
/* The same chains with the eight channels in two vectors of four doubles:
 * an 8 × 8 block of floats (channels × positions) is transposed in
 * registers, then each position adds its eight channels' values, widened,
 * in one step per vector. */
static void bias_lanes_add_avx2(double *sum, const float *rows, int64_t stride, int64_t n) {
  __m256d lo = _mm256_loadu_pd(sum), hi = _mm256_loadu_pd(sum + 4);
  int64_t s = 0;
  for (; s + 8 <= n; s += 8) {
    __m256 r[8];
    for (int c = 0; c < 8; c++) r[c] = _mm256_loadu_ps(rows + c * stride + s);
    transpose8_halves(r);
    /* r[c] holds position c (low half) and c + 4 (high half) of channels
     * 0-3 (r[0..3]) or 4-7 (r[4..7]). */
    for (int half = 0; half < 2; half++)
      for (int c = 0; c < 4; c++) {
        __m128 a = half ? _mm256_extractf128_ps(r[c], 1) : _mm256_castps256_ps128(r[c]);
        __m128 b = half ? _mm256_extractf128_ps(r[4 + c], 1) : _mm256_castps256_ps128(r[4 + c]);
        lo = _mm256_add_pd(lo, _mm256_cvtps_pd(a));
        hi = _mm256_add_pd(hi, _mm256_cvtps_pd(b));
      }
  }
  _mm256_storeu_pd(sum, lo);
  _mm256_storeu_pd(sum + 4, hi);
  for (; s < n; s++)
    for (int c = 0; c < 8; c++) sum[c] += rows[c * stride + s];
}
#pragma GCC pop_options
#endif

static void bias_lanes_add(double *sum, const float *rows, int64_t stride, int64_t n) {
#if defined(LOOM_KERNELS_X86)
  if (loom_kernels_get()->level >= LOOM_KERNELS_AVX2) {
    bias_lanes_add_avx2(sum, rows, stride, n);
    return;
  }
#endif
  bias_lanes_add_plain(sum, rows, stride, n);
}

static void bias_grad_range(void *arg, int64_t begin, int64_t end) {
  const bias_job *j = arg;
  for (int64_t c0 = begin; c0 < end; c0 += BIAS_LANES) {
    int64_t nc = min64(BIAS_LANES, end - c0);
    double sum[BIAS_LANES] = {0};
    for (int64_t n = 0; n < j->batch; n++) {
      const float *rows = j->dy + (n * j->channels + c0) * j->spatial;
      if (nc == BIAS_LANES)
        bias_lanes_add(sum, rows, j->spatial, j->spatial);
      else
        for (int64_t c = 0; c < nc; c++)
          for (int64_t s = 0; s < j->spatial; s++) sum[c] += rows[c * j->spatial + s];
    }
    for (int64_t c = 0; c < nc; c++) j->dbias[c0 + c] += (float)sum[c];
  }
}

void conv_bias_gradient(loom_pool *pool, const float *dy, float *dbias, int64_t batch, int64_t channels,
                        int64_t spatial) {
  bias_job j = {.dy = dy, .dbias = dbias, .batch = batch, .channels = channels, .spatial = spatial};
  int64_t per_channel = batch * spatial > 0 ? batch * spatial : 1;
  /* whole groups of BIAS_LANES channels per task */
  int64_t grain = (1 + 16384 / per_channel + BIAS_LANES - 1) / BIAS_LANES * BIAS_LANES;
  loom_pool_for(pool, channels, grain, bias_grad_range, &j);
}
