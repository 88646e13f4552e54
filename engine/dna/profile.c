/*
 * The numerical kernels of DNA: a fixed-order dot product and the two halves
 * of the fixed-length profile that compares layers of different shapes
 * (docs/dna.md explains why these two).
 */
#include <math.h>
#include <string.h>

#include "dna/dna-internal.h"

#define DOT_LANES 16
/* Float lanes are flushed into double lanes this often, so a long vector
 * keeps the accuracy of short float sums while the inner loop stays float
 * (it vectorises; the bench compares 10^8 products). */
#define DOT_FLUSH 1024

double dna_dot(const float *a, const float *b, int64_t n) {
  double total[DOT_LANES] = {0};
  int64_t i = 0;
  while (n - i >= DOT_LANES) {
    float acc[DOT_LANES] = {0};
    int64_t stop = n - i >= DOT_FLUSH ? i + DOT_FLUSH : i + (n - i) / DOT_LANES * DOT_LANES;
    for (; i < stop; i += DOT_LANES)
      for (int k = 0; k < DOT_LANES; k++) acc[k] += a[i + k] * b[i + k];
    for (int k = 0; k < DOT_LANES; k++) total[k] += acc[k];
  }
  double s = 0;
  for (int k = 0; k < DOT_LANES; k++) s += total[k];
  for (; i < n; i++) s += (double)a[i] * b[i];
  return s;
}

/* Maps float bits to unsigned keys that sort in the floats' numeric order. */
static uint32_t float_key(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}

static float key_float(uint32_t k) {
  uint32_t u = (k & 0x80000000u) ? k & 0x7fffffffu : ~k;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* LSD radix sort, 4 passes of 8 bits: O(n) and independent of the data's
 * order, which matters when a snapshot sorts 10^6 weights per network. */
static void radix_sort(uint32_t *keys, uint32_t *tmp, int64_t n) {
  for (int shift = 0; shift < 32; shift += 8) {
    int64_t count[257] = {0};
    for (int64_t i = 0; i < n; i++) count[((keys[i] >> shift) & 0xffu) + 1]++;
    for (int d = 0; d < 256; d++) count[d + 1] += count[d];
    for (int64_t i = 0; i < n; i++) tmp[count[(keys[i] >> shift) & 0xffu]++] = keys[i];
    uint32_t *swap = keys;
    keys = tmp;
    tmp = swap;
  }
  /* Four passes: the sorted keys are back in the caller's `keys`. */
}

void dna_quantiles(const float *v, int64_t n, float *scratch, float out[LOOM_DNA_QUANTILES]) {
  uint32_t *keys = (uint32_t *)scratch, *tmp = keys + n;
  for (int64_t i = 0; i < n; i++) keys[i] = float_key(v[i]);
  radix_sort(keys, tmp, n);
  for (int k = 0; k < LOOM_DNA_QUANTILES; k++) {
    /* The midpoint of the k-th of Q equal parts, linearly interpolated. */
    double p = ((double)k + 0.5) * (double)n / LOOM_DNA_QUANTILES - 0.5;
    if (p < 0) p = 0;
    if (p > (double)(n - 1)) p = (double)(n - 1);
    int64_t lo = (int64_t)p;
    int64_t hi = lo + 1 < n ? lo + 1 : lo;
    double t = p - (double)lo;
    out[k] = (float)((1 - t) * key_float(keys[lo]) + t * key_float(keys[hi]));
  }
}

/* Source cell s spans [S·s, S·s + S) and target cell t spans [N·t, N·t + N)
 * on a common axis of N·S units (N source cells, S = MAP_SIDE target cells),
 * so every overlap is an exact integer. */
static int64_t overlap(int64_t s, int64_t t, int64_t n) {
  int64_t lo_s = s * LOOM_DNA_MAP_SIDE, hi_s = lo_s + LOOM_DNA_MAP_SIDE;
  int64_t lo_t = t * n, hi_t = lo_t + n;
  int64_t lo = lo_s > lo_t ? lo_s : lo_t, hi = hi_s < hi_t ? hi_s : hi_t;
  return hi > lo ? hi - lo : 0;
}

void dna_map(const float *w, int64_t rows, int64_t cols, float out[DNA_MAP_CELLS]) {
  double acc[DNA_MAP_CELLS] = {0};
  for (int64_t r = 0; r < rows; r++) {
    double bins[LOOM_DNA_MAP_SIDE] = {0};
    const float *row = w + r * cols;
    for (int64_t c = 0; c < cols; c++) {
      int64_t first = c * LOOM_DNA_MAP_SIDE / cols, last = (c * LOOM_DNA_MAP_SIDE + LOOM_DNA_MAP_SIDE - 1) / cols;
      for (int64_t j = first; j <= last && j < LOOM_DNA_MAP_SIDE; j++) bins[j] += (double)overlap(c, j, cols) * row[c];
    }
    int64_t first = r * LOOM_DNA_MAP_SIDE / rows, last = (r * LOOM_DNA_MAP_SIDE + LOOM_DNA_MAP_SIDE - 1) / rows;
    for (int64_t i = first; i <= last && i < LOOM_DNA_MAP_SIDE; i++) {
      double o = (double)overlap(r, i, rows);
      for (int j = 0; j < LOOM_DNA_MAP_SIDE; j++) acc[i * LOOM_DNA_MAP_SIDE + j] += o * bins[j];
    }
  }
  /* Every target cell gathers the same total overlap (rows·cols units), so
   * dividing by it would change no cosine; the scale only keeps floats tame. */
  double scale = 1.0 / ((double)rows * (double)cols);
  for (int k = 0; k < DNA_MAP_CELLS; k++) out[k] = (float)(acc[k] * scale);
}
