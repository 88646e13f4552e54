/*
 * The gathers and scatters of convolutions with short rows of positions
 * (conv-core.h): pos[2] ≤ TABLE_MAX_ROW, as in the digits CNN's 8 × 8 and
 * 4 × 4. There conv-core.c's row copies cost more in bounds and offsets than
 * their few floats (the gather was 38 % of training that CNN, mostly index
 * arithmetic around copies of 4 to 8 floats), so each product first lists,
 * for every column element (kernel offset k, position q) of a channel, the
 * image offset it reads or −1 for padding — taps · n_pos entries, the same
 * for every channel and sample of the call — and the gathers and scatters
 * follow the list. (An AVX-512 vgatherdps for the gather measured no
 * faster than this plain loop on the development machine, and was not kept.)
 *
 * Where each row of positions reads one run of consecutive image values at
 * each kernel offset (stride and dilation 1 along rows of at most 8
 * positions, the digits CNN's), the AVX2 and AVX-512 levels take a row's
 * gather or scatter as one masked vector (conv-table-avx2.c) instead of the
 * list's float at a time: the gather had been a fifth of a training step of
 * that CNN at the AVX2 level.
 *
 * At the AVX-512 level the list is also cut into chunks of 16 column
 * elements (conv-table.h), each reading at most four aligned vectors of the
 * image: a gather is then a few masked loads and permutes a chunk
 * (conv-table-avx512.c), and so is a scatter.
 *
 * The gather only copies, so any level gives the same columns. The scatter
 * adds in scatter_channel's order: kernel offsets ascending, and for one
 * offset each image value at most once (distinct positions read distinct
 * image values at one offset), so every image value gets its terms in
 * ascending kernel offset: the same bits, whichever path adds them.
 */
#include "layers/conv-table.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"

#define TABLE_MAX_ROW 16
#define TABLE_MAX_ENTRIES (1 << 16)

static bool use_tables = true;

void conv_set_use_table(bool use) { use_tables = use; }

static void fill_offsets(const conv_plan *p, int32_t *e) {
  for (int64_t kd = 0; kd < p->kernel[0]; kd++)
    for (int64_t kh = 0; kh < p->kernel[1]; kh++)
      for (int64_t kw = 0; kw < p->kernel[2]; kw++)
        for (int64_t od = 0; od < p->pos[0]; od++)
          for (int64_t oh = 0; oh < p->pos[1]; oh++)
            for (int64_t ow = 0; ow < p->pos[2]; ow++) {
              const int64_t id = od * p->stride[0] - p->padding[0] + kd * p->dilation[0];
              const int64_t ih = oh * p->stride[1] - p->padding[1] + kh * p->dilation[1];
              const int64_t iw = ow * p->stride[2] - p->padding[2] + kw * p->dilation[2];
              const bool in = id >= 0 && id < p->img[0] && ih >= 0 && ih < p->img[1] && iw >= 0 && iw < p->img[2];
              *e++ = in ? (int32_t)((id * p->img[1] + ih) * p->img[2] + iw) : -1;
            }
}

/* The segments of every kernel offset and row of positions, where rows have
 * at most CONV_SEG_MAX positions and every row's offsets are consecutive
 * between its first and last image value (as with stride and dilation 1
 * along it); none otherwise. Checked against the list itself. */
static void make_segs(const conv_plan *p, conv_table *t) {
  const int64_t w = p->pos[2], rows = p->pos[0] * p->pos[1];
  if (w > CONV_SEG_MAX || !(t->segs = calloc((size_t)(p->taps * rows), sizeof *t->segs))) return;
  for (int64_t k = 0; k < p->taps; k++)
    for (int64_t r = 0; r < rows; r++) {
      const int32_t *e = t->offsets + k * p->n_pos + r * w;
      conv_seg *g = t->segs + k * rows + r;
      int64_t lo = 0;
      while (lo < w && e[lo] < 0) lo++;
      if (lo == w) continue; /* all padding: lo = hi = 0 */
      int64_t hi = lo;
      while (hi < w && e[hi] >= 0 && e[hi] == e[lo] + (hi - lo)) hi++;
      for (int64_t i = hi; i < w; i++)
        if (e[i] >= 0) { /* not one run of consecutive offsets */
          free(t->segs);
          t->segs = NULL;
          return;
        }
      *g = (conv_seg){.base = (int32_t)(e[lo] - lo), .lo = (uint8_t)lo, .hi = (uint8_t)hi};
    }
}

/* One chunk from the `len` offsets at e; an image of at most four vectors
 * is every chunk's window (base 0), so that its vectors can stay in
 * registers. */
static void make_chunk(const int32_t *e, int len, bool small_image, conv_chunk *c) {
  memset(c, 0, sizeof *c);
  c->len = (uint8_t)len;
  int32_t lo = INT32_MAX, hi = -1;
  for (int i = 0; i < len; i++)
    if (e[i] >= 0) {
      if (e[i] < lo) lo = e[i];
      if (e[i] > hi) hi = e[i];
    }
  if (hi < 0) return; /* all padding: quarters 0 */
  c->base = small_image ? 0 : lo / CONV_CHUNK * CONV_CHUNK;
  const int32_t span = hi - c->base + 1;
  if (span > CONV_CHUNK * CONV_CHUNK_QUARTERS) {
    c->quarters = -1;
    return;
  }
  c->quarters = (int8_t)((span + CONV_CHUNK - 1) / CONV_CHUNK);
  for (int i = 0; i < len; i++) {
    if (e[i] < 0) continue;
    const int w = e[i] - c->base, v = w / CONV_CHUNK;
    c->gidx[i] = (uint8_t)w;
    c->valid |= (uint16_t)(1u << i);
    if (w >= 2 * CONV_CHUNK) c->upper |= (uint16_t)(1u << i);
    c->hit[v] |= (uint16_t)(1u << (w % CONV_CHUNK));
    c->inv[v][w % CONV_CHUNK] = (uint8_t)i;
  }
}

/* The chunks of every kernel offset and block of `block_rows` rows; none
 * when they cannot be had (the lists alone then serve). */
static void make_chunks(const conv_plan *p, conv_table *t) {
  const int64_t rows = p->pos[0] * p->pos[1], rb = t->block_rows;
  t->n_blocks = (rows + rb - 1) / rb;
  t->per_block = (rb * p->pos[2] + CONV_CHUNK - 1) / CONV_CHUNK;
  size_t n = (size_t)(p->taps * t->n_blocks * t->per_block);
  if (!(t->chunks = calloc(n, sizeof *t->chunks))) return; /* unused slots: len 0 */
  for (int64_t k = 0; k < p->taps; k++)
    for (int64_t b = 0; b < t->n_blocks; b++) {
      const int64_t q0 = b * rb * p->pos[2], q1 = (b + 1 == t->n_blocks ? rows : (b + 1) * rb) * p->pos[2];
      conv_chunk *c = t->chunks + (k * t->n_blocks + b) * t->per_block;
      for (int64_t i = q0; i < q1; i += CONV_CHUNK, c++)
        make_chunk(t->offsets + k * p->n_pos + i, (int)(q1 - i < CONV_CHUNK ? q1 - i : CONV_CHUNK),
                   p->n_img <= CONV_SMALL_IMAGE, c);
    }
}

static conv_table *table_build(const conv_plan *p, int64_t block_rows, bool chunks, loom_error *err, int *rc) {
  const size_t bytes = (size_t)(p->taps * p->n_pos) * sizeof(int32_t);
  conv_table *t = calloc(1, sizeof *t);
  if (t) t->offsets = malloc(bytes);
  if (!t || !t->offsets) {
    free(t);
    *rc = loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory allocating a convolution workspace of %zu bytes"),
                         bytes);
    return NULL;
  }
  fill_offsets(p, t->offsets);
  t->block_rows = block_rows;
#if defined(LOOM_KERNELS_X86)
  make_segs(p, t); /* whatever the level: it may be forced after the table is cached */
#endif
  if (chunks) make_chunks(p, t);
  return t;
}

static void table_destroy(conv_table *t) {
  free(t->segs);
  free(t->chunks);
  free(t->offsets);
  free(t);
}

/*
 * The lists are the same for every call of a layer's product, and building
 * the chunks took 7 % of training the digits CNN, so the last few are kept
 * (at most 8; a list is at most TABLE_MAX_ENTRIES entries, about 0.7 MB with
 * its chunks). An entry in use by a product is never evicted; where all are
 * in use the product gets a table of its own.
 */
#define TABLE_CACHE 8

static struct {
  conv_plan plan;
  int64_t block_rows;
  bool chunks;
  conv_table *table;
  int users;
  uint64_t used;
} cache[TABLE_CACHE];
static uint64_t cache_clock;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_dims(const int64_t *a, const int64_t *b) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* The fields the lists depend on. */
static bool same_plan(const conv_plan *a, const conv_plan *b) {
  return same_dims(a->img, b->img) && same_dims(a->pos, b->pos) && same_dims(a->kernel, b->kernel) &&
         same_dims(a->stride, b->stride) && same_dims(a->padding, b->padding) &&
         same_dims(a->dilation, b->dilation);
}

conv_table *conv_table_new(const conv_plan *p, int64_t block_rows, loom_error *err, int *rc) {
  *rc = LOOM_OK;
  if (!use_tables || p->is_identity || p->pos[2] > TABLE_MAX_ROW || p->taps * p->n_pos > TABLE_MAX_ENTRIES ||
      p->n_img > INT32_MAX)
    return NULL;
  if (block_rows < 1) block_rows = 1;
  bool chunks = false;
#if defined(LOOM_KERNELS_X86)
  chunks = loom_kernels_get()->level >= LOOM_KERNELS_AVX512;
#endif
  pthread_mutex_lock(&cache_lock);
  int slot = -1;
  for (int i = 0; i < TABLE_CACHE; i++) {
    if (cache[i].table && cache[i].block_rows == block_rows && cache[i].chunks == chunks &&
        same_plan(&cache[i].plan, p)) {
      cache[i].users++;
      cache[i].used = ++cache_clock;
      conv_table *t = cache[i].table;
      pthread_mutex_unlock(&cache_lock);
      return t;
    }
    if (!cache[i].users && (slot < 0 || cache[i].used < cache[slot].used)) slot = i;
  }
  conv_table *t = table_build(p, block_rows, chunks, err, rc);
  if (t && slot >= 0) {
    if (cache[slot].table) table_destroy(cache[slot].table);
    cache[slot].plan = *p;
    cache[slot].block_rows = block_rows;
    cache[slot].chunks = chunks;
    cache[slot].table = t;
    cache[slot].users = 1;
    cache[slot].used = ++cache_clock;
    t->cache_slot = slot;
  } else if (t) {
    t->cache_slot = -1;
  }
  pthread_mutex_unlock(&cache_lock);
  return t;
}

void conv_table_free(conv_table *t) {
  if (!t) return;
  if (t->cache_slot < 0) {
    table_destroy(t);
    return;
  }
  pthread_mutex_lock(&cache_lock);
  cache[t->cache_slot].users--;
  pthread_mutex_unlock(&cache_lock);
}

int32_t conv_table_offset(const conv_table *t, const conv_plan *p, int64_t k, int64_t q) {
  return t->offsets[k * p->n_pos + q];
}

#if defined(LOOM_KERNELS_X86)
/* The block that [r0, r1) is, where the chunks serve it; −1 otherwise. */
static int64_t chunk_block(const conv_plan *p, const conv_table *t, int64_t r0, int64_t r1) {
  if (!t->chunks || r0 % t->block_rows) return -1;
  const int64_t b = r0 / t->block_rows, rows = p->pos[0] * p->pos[1];
  const int64_t end = r0 + t->block_rows < rows ? r0 + t->block_rows : rows;
  return r1 == end ? b : -1;
}
#endif

void conv_gather_table(const conv_plan *p, const conv_table *t, const float *img, float *out, int64_t row_stride,
                       int64_t r0, int64_t r1) {
#if defined(LOOM_KERNELS_X86)
  const int64_t b = chunk_block(p, t, r0, r1);
  if (b >= 0) {
    conv_gather_chunks_avx512(p, t, img, out, row_stride, b);
    return;
  }
  if (t->segs && loom_kernels_get()->level >= LOOM_KERNELS_AVX2) {
    conv_gather_segs_avx2(p, t, img, out, row_stride, r0, r1);
    return;
  }
#endif
  const int64_t q0 = r0 * p->pos[2], q = (r1 - r0) * p->pos[2];
  for (int64_t k = 0; k < p->taps; k++) conv_list_gather(t->offsets + k * p->n_pos + q0, q, img, out + k * row_stride);
}

void conv_scatter_table(const conv_plan *p, const conv_table *t, const float *col, int64_t col_ld, int64_t r0,
                        int64_t r1, bool zero, float *img) {
  if (zero) memset(img, 0, (size_t)p->n_img * sizeof *img);
#if defined(LOOM_KERNELS_X86)
  const int64_t b = chunk_block(p, t, r0, r1);
  if (b >= 0) {
    conv_scatter_chunks_avx512(p, t, col, col_ld, b, img);
    return;
  }
  if (t->segs && loom_kernels_get()->level >= LOOM_KERNELS_AVX2) {
    conv_scatter_segs_avx2(p, t, col, col_ld, r0, r1, img);
    return;
  }
#endif
  const int64_t q0 = r0 * p->pos[2], q = (r1 - r0) * p->pos[2];
  for (int64_t k = 0; k < p->taps; k++) conv_list_scatter(t->offsets + k * p->n_pos + q0, q, col + k * col_ld, img);
}
