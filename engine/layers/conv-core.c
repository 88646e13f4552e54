/*
 * The shared convolution arithmetic (see conv-core.h): im2col gathers, the
 * col2im scatter, and tiled matrix products (BLAS or the reference kernel).
 *
 * Workspace is bounded: all three products work in blocks of whole rows of
 * positions of one sample (or of a few whole samples side by side where a
 * sample is small), of sizes that depend on the problem only, so a large
 * batch never needs a batch-sized column buffer and every summation order
 * is the same for any pool.
 */
#include "layers/conv-core.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "kernels/matmul.h"

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
  int64_t ns, ld;   /* samples side by side in ws (backward products), and the columns' stride there */
  /* The forward: rows of positions per block, and one slot of slot_floats
   * floats of ws per thread that can run a range at once, busy[i] while a
   * range uses slot i. */
  int64_t block_rows, slot_floats, batch;
  int n_slots;
  atomic_bool *busy;
} phase_job;

/* Columns of channel c, kernel offset k, of sample s (of those side by side)
 * in a workspace whose columns are `ld` floats apart. */
static inline int64_t col_at(const conv_plan *p, int64_t ld, int64_t c, int64_t s, int64_t q) {
  return c * p->taps * ld + s * q;
}

/* Items (sample, channel) of the ns samples side by side from src: the rows
 * [r0, r1) of positions of their columns, j->ld floats apart. */
static void gather_block_range(void *arg, int64_t begin, int64_t end) {
  const phase_job *j = arg;
  const conv_plan *p = j->p;
  int64_t q = (j->r1 - j->r0) * p->pos[2];
  for (int64_t it = begin; it < end; it++) {
    int64_t s = it / p->img_channels, c = it % p->img_channels;
    const float *img = j->src + (s * p->img_channels + c) * p->n_img;
    float *out = j->ws + col_at(p, j->ld, c, s, q);
    if (j->table)
      conv_gather_table(p, j->table, img, out, j->ld, j->r0, j->r1);
    else
      gather_channel(p, img, out, j->ld, j->r0, j->r1);
  }
}

/* Items (sample, channel): col2im of the columns of the rows [r0, r1) of
 * positions of the ns samples side by side in ws into their images at dst;
 * the first block (the last rows) zeroes the image. */
static void scatter_block_range(void *arg, int64_t begin, int64_t end) {
  const phase_job *j = arg;
  const conv_plan *p = j->p;
  int64_t q = (j->r1 - j->r0) * p->pos[2];
  bool first = j->r1 == p->pos[0] * p->pos[1];
  for (int64_t it = begin; it < end; it++) {
    int64_t s = it / p->img_channels, c = it % p->img_channels;
    const float *col = j->ws + col_at(p, j->ld, c, s, q);
    float *img = j->dst + (s * p->img_channels + c) * p->n_img;
    if (j->table)
      conv_scatter_table(p, j->table, col, j->ld, j->r0, j->r1, first, img);
    else
      scatter_channel(p, col, j->ld, j->r0, j->r1, first, img);
  }
}

/*
 * Samples side by side. Where a sample has few positions (the digits CNN:
 * 64 and 16), one product per sample is mostly the product's fixed costs
 * (packing, dispatch, the pool): the weight gradient of its second
 * convolution is 8 × 36 × 16, 4,608 multiply-adds. Then `side` samples'
 * columns sit side by side in one matrix, sample s's at column s·n_pos, and
 * one product serves them all. The bits do not change: every element of the
 * forward's and the input gradient's products is a chain over k alone,
 * whatever n (kernels/matmul.h), and the weight gradient's chain over the
 * positions runs through sample s's before sample s + 1's, the order of one
 * product per sample. `side` depends on the problem alone; 1 where a
 * sample's positions fill a block (a block is then a sample's rows).
 * `floats_per_pos`: the workspace a position of one sample needs.
 */
static int64_t side_samples(const conv_plan *p, int64_t block_pos, int64_t floats_per_pos) {
  int64_t side = block_pos / p->n_pos, fit = WORKSPACE_DEFAULT / floats_per_pos / p->n_pos;
  if (side > fit) side = fit;
  return side > 1 ? side : 1;
}

/* The position rows of ns samples side by side, ld floats apart: channel ch
 * of sample s at side[ch·ld + s·n_pos]. */
static void positions_side_by_side(const conv_plan *p, const float *pos, int64_t ns, int64_t ld, float *side) {
  for (int64_t s = 0; s < ns; s++)
    for (int64_t ch = 0; ch < p->pos_channels; ch++)
      memcpy(side + ch * ld + s * p->n_pos, pos + (s * p->pos_channels + ch) * p->n_pos,
             (size_t)p->n_pos * sizeof *side);
}

/* A free slot of the forward's workspace: at most n_slots ranges run at
 * once (one per thread of the pool), so one is always free. */
static int slot_take(phase_job *j) {
  for (;;)
    for (int i = 0; i < j->n_slots; i++)
      if (!atomic_exchange_explicit(&j->busy[i], true, memory_order_acquire)) return i;
}

/* Items (samples, group, block of rows of positions) of pos = A · cols:
 * the block's columns of j->ns samples side by side (the last item may have
 * fewer) gathered into the thread's slot of ws (an identity plan, one sample
 * an item, reads the image where it lies), then multiplied by FWD_ROWS rows
 * of A at a time, one single-threaded product each. Samples side by side
 * get their positions in the slot after the columns, then copied out. */
static void forward_blocks_range(void *arg, int64_t begin, int64_t end) {
  phase_job *j = arg;
  const conv_plan *p = j->p;
  int64_t kc = p->cols_per_group, mg = p->rows_per_group, cpg = p->img_channels / p->groups;
  int64_t rows = p->pos[0] * p->pos[1], n_blocks = ceil_div(rows, j->block_rows);
  int slot = p->is_identity ? -1 : slot_take(j);
  float *cols = slot < 0 ? NULL : j->ws + slot * j->slot_floats;
  for (int64_t it = begin; it < end; it++) {
    int64_t n = it / (p->groups * n_blocks) * j->ns, g = it / n_blocks % p->groups, b = it % n_blocks;
    int64_t ns = min64(j->ns, j->batch - n);
    int64_t r0 = b * j->block_rows, r1 = min64(r0 + j->block_rows, rows);
    int64_t q0 = r0 * p->pos[2], q = (r1 - r0) * p->pos[2];
    const float *src = j->src + (n * p->img_channels + g * cpg) * p->n_img;
    const float *b_cols = src + q0;
    int64_t ld = p->n_pos;
    if (cols) {
      ld = ns * q;
      for (int64_t s = 0; s < ns; s++)
        for (int64_t c = 0; c < cpg; c++) {
          const float *img = src + (s * p->img_channels + c) * p->n_img;
          if (j->table)
            conv_gather_table(p, j->table, img, cols + col_at(p, ld, c, s, q), ld, r0, r1);
          else
            gather_channel(p, img, cols + col_at(p, ld, c, s, q), ld, r0, r1);
        }
      b_cols = cols;
    }
    float *dst = j->dst + (n * p->pos_channels + g * mg) * p->n_pos + q0, *out = dst;
    int64_t ldo = p->n_pos;
    if (ns > 1) {
      out = cols + kc * ld;
      ldo = ld;
    }
    for (int64_t m0 = 0; m0 < mg; m0 += FWD_ROWS)
      conv_gemm(NULL, false, false, min64(FWD_ROWS, mg - m0), ns * q, kc, j->A + (g * mg + m0) * kc, kc, b_cols, ld,
                false, out + m0 * ldo, ldo);
    if (ns > 1)
      for (int64_t s = 0; s < ns; s++)
        for (int64_t i = 0; i < mg; i++)
          memcpy(dst + (s * p->pos_channels + i) * p->n_pos, out + i * ld + s * q, (size_t)q * sizeof *out);
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
  int64_t side = p->is_identity ? 1 : side_samples(p, FWD_POS, p->cols_per_group + p->rows_per_group);
  if (side > batch) side = batch;
  phase_job j = {.p = p, .A = A, .src = img, .dst = pos, .block_rows = rb, .ns = side, .batch = batch,
                 .slot_floats = side > 1 ? side * p->n_pos * (p->cols_per_group + p->rows_per_group) : rb * row_floats,
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
  if (rc == LOOM_OK)
    loom_pool_for(pool, ceil_div(batch, side) * p->groups * ceil_div(rows, rb), 1, forward_blocks_range, &j);
  conv_table_free(table);
  free(j.busy);
  free(j.ws);
  return rc;
}

/* What the two backward products hold while they run: blocks of rb rows of
 * positions (about block_pos positions, whole rows, at most the workspace),
 * `side` samples side by side where a sample is one block, the columns'
 * workspace, the positions side by side (side > 1) and the offset lists. */
typedef struct {
  int64_t rb, side;
  float *ws, *side_pos;
  conv_table *table;
} backward_blocks;

static void backward_blocks_free(backward_blocks *b) {
  conv_table_free(b->table);
  free(b->side_pos);
  free(b->ws);
}

/* LOOM_OK, or an error with nothing held. The sizes depend on the problem
 * alone: OpenBLAS (on request) sums a block in an order of its own. */
static int backward_blocks_take(const conv_plan *p, int64_t block_pos, int64_t batch, backward_blocks *b,
                                loom_error *err) {
  const int64_t rows = p->pos[0] * p->pos[1], per_row = p->img_channels * p->taps * p->pos[2];
  *b = (backward_blocks){.rb = block_pos / p->pos[2]};
  if (b->rb > WORKSPACE_DEFAULT / per_row) b->rb = WORKSPACE_DEFAULT / per_row;
  if (b->rb < 1) b->rb = 1;
  if (b->rb > rows) b->rb = rows;
  b->side = min64(side_samples(p, block_pos, p->img_channels * p->taps + p->pos_channels), batch);
  if (!(b->ws = alloc_workspace(b->side * b->rb, per_row, err)) ||
      (b->side > 1 && !(b->side_pos = alloc_workspace(b->side * p->n_pos, p->pos_channels, err)))) {
    backward_blocks_free(b);
    return err ? err->code : LOOM_ERR_NOMEM;
  }
  int rc;
  b->table = conv_table_new(p, b->rb, err, &rc);
  if (rc != LOOM_OK) backward_blocks_free(b);
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
  if (batch <= 0) return LOOM_OK;
  backward_blocks bb;
  int rc = backward_blocks_take(p, DX_BLOCK_POS, batch, &bb, err);
  if (rc != LOOM_OK) return rc;
  const int64_t rb = bb.rb;
  phase_job j = {.p = p, .A = A, .ws = bb.ws, .table = bb.table};
  int64_t n_blocks = ceil_div(rows, rb);
  for (int64_t n = 0; n < batch; n += bb.side) {
    j.ns = min64(bb.side, batch - n);
    j.dst = img + n * p->img_channels * p->n_img;
    const float *a = pos + n * p->pos_channels * p->n_pos;
    int64_t lda = p->n_pos;
    for (int64_t b = n_blocks - 1; b >= 0; b--) {
      j.r0 = b * rb;
      j.r1 = min64(j.r0 + rb, rows);
      int64_t q = (j.r1 - j.r0) * p->pos[2];
      j.ld = j.ns * q;
      if (j.ns > 1) { /* then a sample is one block */
        positions_side_by_side(p, a, j.ns, j.ld, bb.side_pos);
        a = bb.side_pos;
        lda = j.ld;
      }
      for (int64_t g = 0; g < p->groups; g++)
        conv_gemm(pool, true, false, kc, j.ld, mg, A + g * mg * kc, kc, a + g * mg * lda + j.r0 * p->pos[2], lda,
                  false, bb.ws + g * kc * j.ld, j.ld);
      loom_pool_for(pool, j.ns * p->img_channels, 1 + 16384 / (p->taps * q), scatter_block_range, &j);
    }
  }
  backward_blocks_free(&bb);
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
  if (batch <= 0) return LOOM_OK;
  backward_blocks bb;
  int rc = backward_blocks_take(p, WG_BLOCK_POS, batch, &bb, err);
  if (rc != LOOM_OK) return rc;
  const int64_t rb = bb.rb;
  phase_job j = {.p = p, .ws = bb.ws, .table = bb.table};
  for (int64_t n = 0; n < batch; n += bb.side) {
    j.ns = min64(bb.side, batch - n);
    j.src = img + n * p->img_channels * p->n_img;
    const float *a = pos + n * p->pos_channels * p->n_pos;
    int64_t lda = p->n_pos;
    for (j.r0 = 0; j.r0 < rows; j.r0 += rb) {
      j.r1 = min64(j.r0 + rb, rows);
      int64_t q = (j.r1 - j.r0) * p->pos[2];
      j.ld = j.ns * q;
      if (j.ns > 1) { /* then a sample is one block */
        positions_side_by_side(p, a, j.ns, j.ld, bb.side_pos);
        a = bb.side_pos;
        lda = j.ld;
      }
      loom_pool_for(pool, j.ns * p->img_channels, 1 + 16384 / (p->taps * q), gather_block_range, &j);
      for (int64_t g = 0; g < p->groups; g++)
        conv_gemm(pool, false, true, mg, kc, j.ld, a + g * mg * lda + j.r0 * p->pos[2], lda, bb.ws + g * kc * j.ld,
                  j.ld, true, dA + g * mg * kc, kc);
    }
  }
  backward_blocks_free(&bb);
  return LOOM_OK;
}
