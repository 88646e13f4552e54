/*
 * The numerical kernels of DNA: a fixed-order dot product and the two halves
 * of the fixed-length profile that compares layers of different shapes
 * (docs/dna.md explains why these two).
 */
#include <math.h>
#include <string.h>

#include "dna/dna-internal.h"
#include "kernels/cpu.h"

/* Float lanes are flushed into one double this often, so a long vector
 * keeps the accuracy of short float sums while the inner loop stays float. */
#define DOT_FLUSH 1024

/* The kernels' 64-lane fused dot step (kernels/cpu.h) gives the same bits at
 * every kernel level, so a DNA result does not depend on the CPU's vector
 * width; the 64 independent lanes also hide the FMA latency, which is what
 * makes 10^4 exact cosines of 10^4 weights fit the bench's budget. */
double dna_dot(const float *a, const float *b, int64_t n) {
  const loom_kernels *k = loom_kernels_get();
  double total = 0;
  for (int64_t i = 0; i < n; i += DOT_FLUSH) {
    float acc[64] = {0};
    k->dot_acc64(acc, a + i, b + i, n - i < DOT_FLUSH ? n - i : DOT_FLUSH);
    double s = 0;
    for (int j = 0; j < 64; j++) s += acc[j];
    total += s;
  }
  return total;
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

/* LSD radix sort, 3 passes of 11 bits with every histogram counted in one
 * read: O(n) and independent of the data's order, which matters when a
 * snapshot sorts 10^6 weights per network. The sorted keys end in `tmp`
 * (an odd number of passes), which is returned. */
#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)
static uint32_t *radix_sort(uint32_t *keys, uint32_t *tmp, int64_t n) {
  _Static_assert(3 * RADIX_BITS >= 32, "three passes cover a 32-bit key");
  /* n <= 2^31 (DNA_MAX_SLOT_VALUES), so 32-bit counts cannot overflow. */
  uint32_t count[3][RADIX_SIZE] = {{0}};
  for (int64_t i = 0; i < n; i++)
    for (int p = 0; p < 3; p++) count[p][(keys[i] >> (p * RADIX_BITS)) & (RADIX_SIZE - 1)]++;
  for (int p = 0; p < 3; p++) {
    int64_t sum = 0;
    for (int d = 0; d < RADIX_SIZE; d++) {
      uint32_t c = count[p][d];
      count[p][d] = (uint32_t)sum;
      sum += c;
    }
    for (int64_t i = 0; i < n; i++) tmp[count[p][(keys[i] >> (p * RADIX_BITS)) & (RADIX_SIZE - 1)]++] = keys[i];
    uint32_t *swap = keys;
    keys = tmp;
    tmp = swap;
  }
  return keys;
}

void dna_quantiles(const float *v, int64_t n, float *scratch, float out[LOOM_DNA_QUANTILES]) {
  uint32_t *keys = (uint32_t *)scratch, *tmp = keys + n;
  for (int64_t i = 0; i < n; i++) keys[i] = float_key(v[i]);
  const uint32_t *sorted = radix_sort(keys, tmp, n);
  for (int k = 0; k < LOOM_DNA_QUANTILES; k++) {
    /* The midpoint of the k-th of Q equal parts, linearly interpolated. */
    double p = ((double)k + 0.5) * (double)n / LOOM_DNA_QUANTILES - 0.5;
    if (p < 0) p = 0;
    if (p > (double)(n - 1)) p = (double)(n - 1);
    int64_t lo = (int64_t)p;
    int64_t hi = lo + 1 < n ? lo + 1 : lo;
    double t = p - (double)lo;
    out[k] = (float)((1 - t) * key_float(sorted[lo]) + t * key_float(sorted[hi]));
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
    /* The first bin a column touches only moves forward, so it is tracked
     * instead of divided out per weight; bins are still visited in the same
     * order (column by column, bins ascending), so the sums are unchanged. */
    int64_t bin = 0;
    for (int64_t c = 0; c < cols; c++) {
      while ((bin + 1) * cols <= c * LOOM_DNA_MAP_SIDE) bin++;
      for (int64_t j = bin; j < LOOM_DNA_MAP_SIDE && j * cols < (c + 1) * LOOM_DNA_MAP_SIDE; j++)
        bins[j] += (double)overlap(c, j, cols) * row[c];
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
