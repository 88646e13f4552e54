/*
 * The reference level of the attention kernels (attention-kernels.h), in
 * plain C with fmaf, and the choice of a level's table. The vector levels
 * (attention-kernels-simd.h) restate these loops lane by lane.
 */
#include "layers/attention-kernels.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

float att_exp(float x) {
  if (x < ATT_EXP_MIN) return 0.0f;
  float k = x * ATT_LOG2E + ATT_ROUNDER, n = k - ATT_ROUNDER;
  float r = fmaf(n, -ATT_LN2_HI, x);
  r = fmaf(n, -ATT_LN2_LO, r);
  float p = ATT_EXP_C7;
  p = fmaf(p, r, ATT_EXP_C6);
  p = fmaf(p, r, ATT_EXP_C5);
  p = fmaf(p, r, ATT_EXP_C4);
  p = fmaf(p, r, ATT_EXP_C3);
  p = fmaf(p, r, 0.5f);
  p = fmaf(p, r, 1.0f);
  p = fmaf(p, r, 1.0f);
  /* k holds 1.5·2^23 + n in its low mantissa bits; n + 127 ≥ 1 is the exponent of 2^n. */
  uint32_t bits;
  memcpy(&bits, &k, sizeof bits);
  bits = (bits - ATT_ROUNDER_BITS + 127u) << 23;
  float two_n;
  memcpy(&two_n, &bits, sizeof two_n);
  return p * two_n;
}

static void scores_ref(const float *q, int64_t ldq, int rows, const float *kt, int64_t ldk, int64_t hd, int64_t n,
                       float *s, int64_t lds) {
  for (int r = 0; r < rows; r++)
    for (int64_t j = 0; j < n; j++) {
      float acc = 0.0f;
      for (int64_t d = 0; d < hd; d++) acc = fmaf(q[r * ldq + d], kt[d * ldk + j], acc);
      s[r * lds + j] = acc;
    }
}

/* The pairs (k, k + w) for w = 8, 4, 2, 1: the vector levels' halving of a register. */
static float lane_tree(float lanes[ATT_LANES]) {
  for (int w = ATT_LANES / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; k++) lanes[k] += lanes[k + w];
  return lanes[0];
}

static void softmax_ref(const float *s, int64_t vis, const uint8_t *pad, float scale, float *p) {
  int64_t n = att_pad16(vis);
  float mx = -INFINITY;
  for (int64_t j = 0; j < vis; j++) {
    float t = s[j] * scale;
    if (!(pad && pad[j]) && t > mx) mx = t;
  }
  if (mx == -INFINITY) {
    memset(p, 0, (size_t)n * sizeof *p);
    return;
  }
  float lanes[ATT_LANES] = {0};
  for (int64_t j = 0; j < n; j++) {
    float e = j < vis && !(pad && pad[j]) ? att_exp(s[j] * scale - mx) : 0.0f;
    p[j] = e;
    lanes[j % ATT_LANES] += e;
  }
  float inv = 1.0f / lane_tree(lanes);
  for (int64_t j = 0; j < n; j++) p[j] *= inv;
}

static void softmax_backward_ref(const float *p, float *dp, int64_t vis, float scale) {
  int64_t n = att_pad16(vis);
  float lanes[ATT_LANES] = {0};
  for (int64_t j = 0; j < n; j++) lanes[j % ATT_LANES] = fmaf(p[j], dp[j], lanes[j % ATT_LANES]);
  float dot = lane_tree(lanes);
  for (int64_t j = 0; j < n; j++) dp[j] = p[j] * (dp[j] - dot) * scale;
}

static void mix_ref(const float *a, int64_t lda, int rows, const int64_t *n, const float *x, int64_t ldx, int64_t w,
                    float *o, int64_t ldo) {
  for (int r = 0; r < rows; r++)
    for (int64_t e = 0; e < w; e++) {
      float acc = 0.0f;
      for (int64_t j = 0; j < n[r]; j++) acc = fmaf(a[r * lda + j], x[j * ldx + e], acc);
      o[r * ldo + e] = acc;
    }
}

static void mix_t_ref(const float *a, int64_t lda, int cols, const int64_t *lo, int64_t hi, const float *x,
                      int64_t ldx, int64_t w, float *o, int64_t ldo, bool accumulate) {
  for (int c = 0; c < cols; c++)
    for (int64_t e = 0; e < w; e++) {
      float acc = accumulate ? o[c * ldo + e] : 0.0f;
      for (int64_t i = lo[c]; i < hi; i++) acc = fmaf(a[i * lda + c], x[i * ldx + e], acc);
      o[c * ldo + e] = acc;
    }
}

static att_kernels tables[LOOM_KERNELS_LEVEL_COUNT];
static bool available[LOOM_KERNELS_LEVEL_COUNT];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
  tables[LOOM_KERNELS_REF] = (att_kernels){scores_ref, softmax_ref, softmax_backward_ref, mix_ref, mix_t_ref};
  available[LOOM_KERNELS_REF] = true;
#if defined(LOOM_KERNELS_X86)
  /* A level exists here exactly where the engine's table exists. */
  if (loom_kernels_for(LOOM_KERNELS_AVX2)) {
    tables[LOOM_KERNELS_AVX2] = tables[LOOM_KERNELS_REF];
    att_kernels_fill_avx2(&tables[LOOM_KERNELS_AVX2]);
    available[LOOM_KERNELS_AVX2] = true;
  }
  if (loom_kernels_for(LOOM_KERNELS_AVX512)) {
    tables[LOOM_KERNELS_AVX512] = tables[LOOM_KERNELS_REF];
    att_kernels_fill_avx512(&tables[LOOM_KERNELS_AVX512]);
    available[LOOM_KERNELS_AVX512] = true;
  }
  if (loom_kernels_for(LOOM_KERNELS_AMX)) { /* AMX changes the integer GEMM only */
    tables[LOOM_KERNELS_AMX] = tables[LOOM_KERNELS_AVX512];
    available[LOOM_KERNELS_AMX] = true;
  }
#endif
}

const att_kernels *att_kernels_for(loom_kernel_level level) {
  pthread_once(&once, init);
  if ((unsigned)level >= LOOM_KERNELS_LEVEL_COUNT || !available[level]) return NULL;
  return &tables[level];
}

const att_kernels *att_kernels_get(void) { return att_kernels_for(loom_kernels_get()->level); }
