/* Shared between the DNA files: the per-slot signature and the kernels that
 * build and compare it. The layout is described in docs/dna.md. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "loom/dna.h"

#define DNA_MAP_CELLS (LOOM_DNA_MAP_SIDE * LOOM_DNA_MAP_SIDE)
#define DNA_PATH_MAX 96

typedef struct dna_tensor {
  int64_t rows, cols;
  char path[DNA_PATH_MAX];
} dna_tensor;

typedef struct dna_sig {
  loom_dna_slot info;
  int64_t out_numel;     /* for presence markers: layers without weights */
  dna_tensor *tensors;   /* info.n_tensors */
  float *vec;            /* L2-normalised weights (info.values), NULL unless info.exact */
  double vec_self;       /* dna_dot(vec, vec): the denominator that makes self-similarity exactly 1 */
  bool zero;             /* every weight is 0: no direction to compare */
  float quant[LOOM_DNA_QUANTILES]; /* sorted-quantile profile of all weights */
  double quant_self;
  float map[DNA_MAP_CELLS];        /* the first tensor, area-resampled to MAP_SIDE × MAP_SIDE */
  double map_self;
} dna_sig;

struct loom_dna_snapshot {
  int64_t step;
  int64_t n;
  dna_sig *sigs;
  size_t bytes;
};

/* Dot product in a fixed order (16 float lanes, summed in double in lane
 * order), so equal inputs give equal results whatever the caller. */
double dna_dot(const float *a, const float *b, int64_t n);

/* The sorted-quantile profile of v[0..n) (1 <= n <= 2^31); scratch holds 2n floats. */
void dna_quantiles(const float *v, int64_t n, float *scratch, float out[LOOM_DNA_QUANTILES]);
/* A rows × cols tensor area-resampled to MAP_SIDE × MAP_SIDE. */
void dna_map(const float *w, int64_t rows, int64_t cols, float out[DNA_MAP_CELLS]);

/* Similarity of two signatures in [0, 1] (docs/dna.md). */
double dna_similarity(const dna_sig *a, const dna_sig *b);
/* Whether both have the same tensors of the same shapes (exact cosine applies). */
bool dna_same_layout(const dna_sig *a, const dna_sig *b);
