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
 * The gather only copies, so any level gives the same columns. The scatter
 * adds in scatter_channel's order: kernel offsets ascending, and for one
 * offset each image value at most once (distinct positions read distinct
 * image values at one offset), so every image value gets its terms in
 * ascending kernel offset: the same bits.
 */
#include "layers/conv-core.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"

#define TABLE_MAX_ROW 16
#define TABLE_MAX_ENTRIES (1 << 16)

static bool use_tables = true;

void conv_set_use_table(bool use) { use_tables = use; }

int32_t *conv_table_new(const conv_plan *p, loom_error *err, int *rc) {
  *rc = LOOM_OK;
  if (!use_tables || p->is_identity || p->pos[2] > TABLE_MAX_ROW || p->taps * p->n_pos > TABLE_MAX_ENTRIES ||
      p->n_img > INT32_MAX)
    return NULL;
  const size_t bytes = (size_t)(p->taps * p->n_pos) * sizeof(int32_t);
  int32_t *t = malloc(bytes);
  if (!t) {
    *rc = loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory allocating a convolution workspace of %zu bytes"),
                         bytes);
    return NULL;
  }
  int32_t *e = t;
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
  return t;
}

void conv_gather_table(const conv_plan *p, const int32_t *table, const float *img, float *out, int64_t row_stride,
                       int64_t r0, int64_t r1) {
  const int64_t q0 = r0 * p->pos[2], q = (r1 - r0) * p->pos[2];
  for (int64_t k = 0; k < p->taps; k++) {
    const int32_t *t = table + k * p->n_pos + q0;
    float *o = out + k * row_stride;
    for (int64_t i = 0; i < q; i++) o[i] = t[i] >= 0 ? img[t[i]] : 0.0f;
  }
}

void conv_scatter_table(const conv_plan *p, const int32_t *table, const float *col, int64_t col_ld, int64_t r0,
                        int64_t r1, bool zero, float *img) {
  if (zero) memset(img, 0, (size_t)p->n_img * sizeof *img);
  const int64_t q0 = r0 * p->pos[2], q = (r1 - r0) * p->pos[2];
  for (int64_t k = 0; k < p->taps; k++) {
    const int32_t *t = table + k * p->n_pos + q0;
    const float *c = col + k * col_ld;
    for (int64_t i = 0; i < q; i++)
      if (t[i] >= 0) img[t[i]] += c[i];
  }
}
