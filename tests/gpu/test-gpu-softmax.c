/*
 * The rest of the softmax family on the device against the CPU layers
 * (engine/gpu/gpu-softmax.c; tolerances: docs/gpu.md "Tolerances against
 * the CPU"): sparsemax, entmax15, gumbel_softmax (soft and hard, the
 * CPU's noise drawn on the host) and hierarchical_softmax (group_sizes and
 * levels trees), forward and backward, on rows of 1, 3, 17, 130 and 1000
 * entries (trees of 2, 3, 17, 32 and 130 logits), with ties, large
 * magnitudes and constant rows; the same recording twice gives the same
 * bits; the Gumbel noise is the CPU's, and a small temperature cannot
 * overflow the exponents.
 */
#include "gpu-test.h"
#include "layers/layer-impl.h"
#include "layers/softmax-rows.h"
#include "loom/loom.h"

static loom_gpu *gpu;

#define EPS32 5.9604644775390625e-8 /* 2^-24 */

/* Inputs of the kinds the checks cover, `rows` rows of n: 0 uniform in
 * [−3, 3); 1 ties (multiples of 0.5 in [−2, 2], so most values repeat, and
 * a row's maximum too); 2 a large offset (1e4 + [−2, 2)); 3 a wide spread
 * ([−1e3, 1e3)); 4 all equal. */
static const char *const input_kinds[] = {"uniform", "ties", "offset 1e4", "spread 1e3", "constant"};
static void fill_input(float *x, int64_t rows, int64_t n, int kind, uint64_t seed) {
  int64_t len = rows * n;
  switch (kind) {
  case 0: gpu_test_fill(x, len, -3, 3, seed); break;
  case 1:
    gpu_test_fill(x, len, -2, 2.49, seed);
    for (int64_t i = 0; i < len; i++) x[i] = floorf(x[i] * 2.0f) / 2.0f;
    break;
  case 2:
    gpu_test_fill(x, len, -2, 2, seed);
    for (int64_t i = 0; i < len; i++) x[i] += 1e4f;
    break;
  case 3: gpu_test_fill(x, len, -1e3, 1e3, seed); break;
  default:
    for (int64_t i = 0; i < len; i++) x[i] = 0.75f;
  }
}

static loom_layer *make_layer(const char *type, int64_t spr, int64_t n) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  if (!l) g_error("%s", err.message);
  int64_t dims[2] = {spr, n};
  loom_shape in = loom_shape_make(2, dims);
  if (loom_layer_build(l, &in, 0, &err)) g_error("%s", err.message);
  return l;
}

typedef struct {
  gpu_buf x, y, dy, dx, ycpu, aux, noise, tree;
} bufs;

static void bufs_free(bufs *b) {
  gpu_buf *all[] = {&b->x, &b->y, &b->dy, &b->dx, &b->ycpu, &b->aux, &b->noise, &b->tree};
  for (size_t i = 0; i < G_N_ELEMENTS(all); i++) gpu_buf_free(gpu, all[i]);
}

/* Submits rec twice, the first result kept in `first` (len floats of
 * out), and checks the second is bit-identical. */
static void submit_twice(gpu_rec *rec, const gpu_buf *out, float *first, int64_t len, const char *what) {
  loom_error err = {0};
  if (gpu_rec_end(rec, &err) || gpu_rec_submit(rec, &err)) g_error("%s: %s", what, err.message);
  memcpy(first, out->map, (size_t)len * sizeof(float));
  if (gpu_rec_submit(rec, &err)) g_error("%s: %s", what, err.message);
  if (memcmp(first, out->map, (size_t)len * sizeof(float)))
    g_error("%s: two runs of one recording differ", what);
}

/* ---- sparsemax, entmax15 --------------------------------------------------- */

static double worst_sparse[2][2];

static void check_sparse(const char *type, int64_t batch, int64_t spr, int64_t n, int kind, uint64_t seed) {
  loom_error err = {0};
  bool entmax = !strcmp(type, "entmax15");
  loom_layer *l = make_layer(type, spr, n);
  int64_t rows = batch * spr, len = rows * n;
  float *x = g_new(float, len), *y = g_new(float, len), *dy = g_new(float, len), *dx = g_new(float, len);
  float *got = g_new(float, len);
  fill_input(x, rows, n, kind, seed);
  gpu_test_fill(dy, len, -1, 1, seed + 100);
  if (layer_forward(l, NULL, x, y, batch, &err) || layer_backward(l, NULL, x, y, dy, dx, batch, &err))
    g_error("%s", err.message);
  bufs b = {0};
  gpu_test_buf(gpu, &b.x, x, len);
  gpu_test_buf(gpu, &b.y, NULL, len);
  gpu_test_buf(gpu, &b.dy, dy, len);
  gpu_test_buf(gpu, &b.dx, NULL, len);
  gpu_test_buf(gpu, &b.ycpu, y, len); /* the backward takes the CPU's y: checked on its own */
  gpu_rec rec;
  if (gpu_rec_begin(gpu, 2, &rec, &err) || gpu_op_sparsemax(&rec, entmax, rows, n, &b.x, NULL, &b.y, &err) ||
      gpu_op_sparsemax(&rec, entmax, rows, n, &b.ycpu, &b.dy, &b.dx, &err))
    g_error("%s", err.message);
  char what[128];
  snprintf(what, sizeof what, "%s %lld x %lld, %s", type, (long long)rows, (long long)n, input_kinds[kind]);
  submit_twice(&rec, &b.y, got, len, what);
  double *tol = g_new(double, len);
  /* The kernel's sums: ⌈n/64⌉ terms in order in each of 64 invocations,
   * then a tree of depth 6: within nsum·2⁻²⁴·Σ|terms| of exact. */
  double nsum = (double)((n + 63) / 64 + 6 + 2);
  for (int64_t i = 0; i < len; i++) {
    /* τ from sums of the support's shifted values (each in [−1, 0]): the
     * mean within nsum·2⁻²⁴, Σ u − 1 over k within 2·nsum·2⁻²⁴ (sparsemax);
     * entmax15's square root adds |dδ|/(2√δ) ≤ nsum·2⁻²⁴/Σ√y ≤ nsum·2⁻²⁴,
     * since k·√δ = Σ√y ≥ 1; y = d² moves by 2√y·dτ ≤ 2·dτ. Plus the shift
     * (x − max rounded once, 2⁻²⁴ where not exact) and y's own rounding. */
    double tau_err = 2 * nsum * EPS32;
    tol[i] = 4 * EPS32 * fabs(y[i]) + 2 * (tau_err + EPS32) + 1e-30;
  }
  double wf = gpu_test_compare(what, got, y, tol, len);
  /* exact zeros where the CPU's entry is well below the threshold */
  memcpy(got, b.dx.map, (size_t)len * sizeof(float));
  for (int64_t r = 0; r < rows; r++) {
    double sw = 0, swdy = 0;
    for (int64_t i = r * n; i < (r + 1) * n; i++) {
      double w = y[i] > 0 ? (entmax ? sqrt(y[i]) : 1.0) : 0.0;
      sw += w;
      swdy += fabs(w * dy[i]);
    }
    for (int64_t i = r * n; i < (r + 1) * n; i++) {
      double w = y[i] > 0 ? (entmax ? sqrt(y[i]) : 1.0) : 0.0;
      /* q = Σ w·dy / Σ w: two float32 sums of n terms, then one division */
      tol[i] = 4 * EPS32 * fabs(dx[i]) + w * 2.0 * nsum * EPS32 * (swdy / sw + fabs(dy[i])) + 1e-30;
    }
  }
  snprintf(what + strlen(what), sizeof what - strlen(what), " backward");
  double wb = gpu_test_compare(what, got, dx, tol, len);
  worst_sparse[entmax][0] = MAX(worst_sparse[entmax][0], wf);
  worst_sparse[entmax][1] = MAX(worst_sparse[entmax][1], wb);
  gpu_rec_free(&rec);
  bufs_free(&b);
  g_free(tol);
  g_free(x);
  g_free(y);
  g_free(dy);
  g_free(dx);
  g_free(got);
  loom_layer_free(l);
}

static const int64_t shapes[][3] = {{1, 1, 1}, {3, 1, 3}, {2, 3, 17}, {3, 1, 130}, {1, 2, 1000}};

static void test_sparse(void) {
  for (int e = 0; e < 2; e++) {
    const char *type = e ? "entmax15" : "sparsemax";
    for (size_t c = 0; c < G_N_ELEMENTS(shapes); c++)
      for (int kind = 0; kind < (int)G_N_ELEMENTS(input_kinds); kind++)
        check_sparse(type, shapes[c][0], shapes[c][1], shapes[c][2], kind, 10 * c + kind);
    g_test_message("%s: worst forward %.3f, backward %.3f of the tolerance", type, worst_sparse[e][0],
                   worst_sparse[e][1]);
  }
}

/* ---- gumbel_softmax ------------------------------------------------------- */

static double worst_gumbel[2];

static void check_gumbel(int64_t batch, int64_t spr, int64_t n, int kind, double temperature, bool hard,
                         uint64_t seed) {
  loom_error err = {0};
  loom_layer *l = make_layer("gumbel_softmax", spr, n), *soft_l = make_layer("gumbel_softmax", spr, n);
  if (loom_layer_set_float(l, "temperature", temperature, &err) || loom_layer_set_bool(l, "hard", hard, &err) ||
      loom_layer_set_float(soft_l, "temperature", temperature, &err))
    g_error("%s", err.message);
  int64_t dims[2] = {spr, n};
  loom_shape in = loom_shape_make(2, dims);
  if (loom_layer_build(l, &in, 0, &err) || loom_layer_build(soft_l, &in, 0, &err)) g_error("%s", err.message);
  int64_t rows = batch * spr, len = rows * n;
  float *x = g_new(float, len), *y = g_new(float, len), *dy = g_new(float, len), *dx = g_new(float, len);
  float *soft = g_new(float, len), *got = g_new(float, len), *noise = g_new(float, 2 * len);
  fill_input(x, rows, n, kind, seed);
  gpu_test_fill(dy, len, -1, 1, seed + 100);
  loom_ctx ctx = {.seed = 1000 + seed, .step = 7};
  /* the CPU's relaxed sample: the same key (type, stream, no coordinates), not hard */
  if (layer_forward(l, &ctx, x, y, batch, &err) || layer_backward(l, &ctx, x, y, dy, dx, batch, &err) ||
      layer_forward(soft_l, &ctx, x, soft, batch, &err))
    g_error("%s", err.message);
  gpu_gumbel_noise(l, ctx.seed, ctx.step, len, noise);
  bufs b = {0};
  gpu_test_buf(gpu, &b.x, x, len);
  gpu_test_buf(gpu, &b.noise, noise, 2 * len);
  gpu_test_buf(gpu, &b.y, NULL, len);
  gpu_test_buf(gpu, &b.aux, NULL, len);
  gpu_test_buf(gpu, &b.dy, dy, len);
  gpu_test_buf(gpu, &b.dx, NULL, len);
  float scale = (float)(1.0 / temperature);
  gpu_softmax sm = {.rows = rows, .cols = n, .scale = scale};
  gpu_rec rec;
  /* the backward as in training: from the device's own relaxed sample */
  if (gpu_rec_begin(gpu, 2, &rec, &err) ||
      gpu_op_gumbel(&rec, rows, n, scale, hard, &b.x, &b.noise, &b.y, &b.aux, &err) ||
      gpu_op_softmax_backward(&rec, &sm, hard ? &b.aux : &b.y, &b.dy, &b.dx, &err))
    g_error("%s", err.message);
  char what[128];
  snprintf(what, sizeof what, "gumbel_softmax%s τ=%g %lld x %lld, %s", hard ? " hard" : "", temperature,
           (long long)rows, (long long)n, input_kinds[kind]);
  submit_twice(&rec, &b.y, got, len, what);
  const float *dsoft = hard ? b.aux.map : got;
  double *tol = g_new(double, len), *rel = g_new(double, len);
  uint64_t key = gumbel_softmax_key(l, ctx.seed, ctx.step);
  for (int64_t r = 0; r < rows; r++) {
    /* d_i = (x_i − x_t) + (g_i − g_t) in float32 rounds relative to
     * e_i = |x_i − x_t| + |g_i − g_t| (t: the CPU's arg-max of x + g), so
     * exp(d_i/τ) moves by a relative 1.5·2⁻²⁴·(e_i + |d_i|)/τ ≤ 3·2⁻²⁴·e_i/τ
     * and the sum by the y-weighted mean of that, E; exp's own error
     * (≤ 3 + 2|v| ulp) and the division's: 2e-5 of y */
    int64_t top = r * n;
    for (int64_t i = r * n; i < (r + 1) * n; i++)
      if ((double)x[i] + gumbel_softmax_noise(key, i) > (double)x[top] + gumbel_softmax_noise(key, top)) top = i;
    double gt = (double)noise[2 * top] + noise[2 * top + 1], e_mean = 0;
    for (int64_t i = r * n; i < (r + 1) * n; i++) {
      rel[i] = fabs((double)x[i] - x[top]) + fabs((double)noise[2 * i] + noise[2 * i + 1] - gt);
      e_mean += soft[i] * rel[i];
    }
    for (int64_t i = r * n; i < (r + 1) * n; i++) {
      rel[i] = 2e-5 + 3 * EPS32 * scale * (rel[i] + e_mean);
      tol[i] = rel[i] * fabs(soft[i]) + 1e-9;
    }
  }
  double wf = gpu_test_compare(what, dsoft, soft, tol, len);
  if (hard) {
    /* one-hot at the CPU's index, unless the device's relaxed sample has a
     * near tie there (two entries within the tolerance of each other) */
    for (int64_t r = 0; r < rows; r++) {
      int64_t want = -1, have = -1;
      for (int64_t i = 0; i < n; i++) {
        if (y[r * n + i] == 1.0f) want = i;
        if (got[r * n + i] == 1.0f) have = i;
        g_assert_true(got[r * n + i] == 0.0f || got[r * n + i] == 1.0f);
      }
      g_assert_cmpint(have, >=, 0);
      if (have != want && !(fabs(soft[r * n + have] - soft[r * n + want]) <= 2 * tol[r * n + want]))
        g_error("%s: row %lld is one-hot at %lld on the device, %lld on the CPU", what, (long long)r,
                (long long)have, (long long)want);
    }
  } else {
    gpu_test_compare(what, got, y, tol, len);
  }
  for (int64_t r = 0; r < rows; r++) {
    double absdot = 0, reldot = 0;
    for (int64_t i = r * n; i < (r + 1) * n; i++) {
      absdot += fabs((double)soft[i] * dy[i]);
      reldot += fabs((double)soft[i] * dy[i]) * rel[i];
    }
    /* dx = s·y⊙(dy − ⟨y, dy⟩) from the device's y (each within rel) and a
     * float32 dot product of n terms */
    for (int64_t i = r * n; i < (r + 1) * n; i++)
      tol[i] = 1e-5 * fabs(dx[i]) +
               2 * scale * fabs(soft[i]) *
                 (rel[i] * (fabs(dy[i]) + absdot) + reldot + 2.0 * (n + 2) * EPS32 * (absdot + fabs(dy[i]))) +
               1e-12;
  }
  snprintf(what + strlen(what), sizeof what - strlen(what), " backward");
  double wb = gpu_test_compare(what, b.dx.map, dx, tol, len);
  worst_gumbel[0] = MAX(worst_gumbel[0], wf);
  worst_gumbel[1] = MAX(worst_gumbel[1], wb);
  gpu_rec_free(&rec);
  bufs_free(&b);
  g_free(tol);
  g_free(rel);
  g_free(x);
  g_free(y);
  g_free(dy);
  g_free(dx);
  g_free(soft);
  g_free(got);
  g_free(noise);
  loom_layer_free(l);
  loom_layer_free(soft_l);
}

static void test_gumbel(void) {
  for (size_t c = 0; c < G_N_ELEMENTS(shapes); c++)
    for (int kind = 0; kind < (int)G_N_ELEMENTS(input_kinds); kind++) {
      check_gumbel(shapes[c][0], shapes[c][1], shapes[c][2], kind, 1.0, false, 10 * c + kind);
      check_gumbel(shapes[c][0], shapes[c][1], shapes[c][2], kind, 0.3, false, 10 * c + kind + 500);
      check_gumbel(shapes[c][0], shapes[c][1], shapes[c][2], kind, 0.5, true, 10 * c + kind + 900);
      /* τ = 1e-3: exponents of up to 1e3 per unit of a rounding of x + g (no overflow) */
      check_gumbel(shapes[c][0], shapes[c][1], shapes[c][2], kind, 1e-3, kind == 1, 10 * c + kind + 1300);
    }
  g_test_message("gumbel_softmax: worst forward %.3f, backward %.3f of the tolerance", worst_gumbel[0],
                 worst_gumbel[1]);
}

/* The noise is the CPU's, entry for entry: hi + lo is g to float32 twice. */
static void test_gumbel_noise(void) {
  loom_layer *l = make_layer("gumbel_softmax", 1, 17);
  float noise[2 * 51];
  gpu_gumbel_noise(l, 5, 3, 51, noise);
  uint64_t key = gumbel_softmax_key(l, 5, 3);
  for (int e = 0; e < 51; e++) {
    double g = gumbel_softmax_noise(key, e);
    g_assert_cmpfloat(noise[2 * e], ==, (float)g);
    g_assert_cmpfloat(fabs((double)noise[2 * e] + noise[2 * e + 1] - g), <=, 1e-14 * fabs(g) + 1e-300);
  }
  /* another step, another draw */
  float other[2 * 51];
  gpu_gumbel_noise(l, 5, 4, 51, other);
  g_assert_true(memcmp(noise, other, sizeof noise) != 0);
  loom_layer_free(l);
}

/* x + hi ties in float32 (entry 0 wins, the lower index) while lo makes
 * entry 1 the larger by 1e-4: at τ = 1e-6 its exponent relative to entry 0
 * is +100, which overflows float32 unless the exponents are taken relative
 * to their own maximum. */
static void test_gumbel_no_overflow(void) {
  loom_error err = {0};
  float x[2] = {1e4f, 1e4f}, noise[4] = {0, 0, 0, 1e-4f};
  bufs b = {0};
  gpu_test_buf(gpu, &b.x, x, 2);
  gpu_test_buf(gpu, &b.noise, noise, 4);
  gpu_test_buf(gpu, &b.y, NULL, 2);
  gpu_rec rec;
  if (gpu_rec_begin(gpu, 1, &rec, &err) || gpu_op_gumbel(&rec, 1, 2, 1e6f, false, &b.x, &b.noise, &b.y, NULL, &err) ||
      gpu_rec_end(&rec, &err) || gpu_rec_submit(&rec, &err))
    g_error("%s", err.message);
  const float *y = b.y.map;
  g_assert_cmpfloat(y[1], ==, 1.0f);
  g_assert_cmpfloat(y[0], >=, 0.0f);
  g_assert_cmpfloat(y[0], <=, 1e-30f);
  gpu_rec_free(&rec);
  bufs_free(&b);
}

/* ---- hierarchical_softmax ------------------------------------------------- */

static double worst_hs[2];

/* groups: group_sizes, else levels; depth: the tree's levels. */
static void check_hsoftmax(const float *sizes, int n_sizes, bool groups, int64_t batch, int kind, uint64_t seed) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("hierarchical_softmax", &err);
  if (!l || loom_layer_set_floats(l, groups ? "group_sizes" : "levels", sizes, n_sizes, &err))
    g_error("%s", err.message);
  int64_t logits = 0, leaves = 1, width = 1, depth = groups ? 2 : n_sizes;
  if (groups) {
    leaves = 0;
    for (int i = 0; i < n_sizes; i++) leaves += (int64_t)sizes[i];
    logits = n_sizes + leaves;
  } else {
    for (int i = 0; i < n_sizes; i++) logits += (width *= (int64_t)sizes[i]);
    leaves = width;
  }
  loom_shape in = loom_shape_1d(logits);
  if (loom_layer_build(l, &in, 0, &err)) g_error("%s", err.message);
  int64_t rows = batch, nx = rows * logits, ny = rows * leaves;
  float *x = g_new(float, nx), *y = g_new(float, ny), *dy = g_new(float, ny), *dx = g_new(float, nx);
  float *got = g_new(float, ny);
  fill_input(x, rows, logits, kind, seed);
  gpu_test_fill(dy, ny, -1, 1, seed + 100);
  if (layer_forward(l, NULL, x, y, batch, &err) || layer_backward(l, NULL, x, y, dy, dx, batch, &err))
    g_error("%s", err.message);
  bufs b = {0};
  int64_t blocks = 0;
  if (gpu_hsoftmax_tree(gpu, l, &b.tree, &blocks, &err)) g_error("%s", err.message);
  gpu_test_buf(gpu, &b.x, x, nx);
  gpu_test_buf(gpu, &b.y, NULL, ny);
  gpu_test_buf(gpu, &b.dy, dy, ny);
  gpu_test_buf(gpu, &b.dx, NULL, nx);
  gpu_test_buf(gpu, &b.aux, NULL, 3 * nx);
  gpu_hsoftmax h = {.rows = rows, .logits = logits, .leaves = leaves, .blocks = blocks, .tree = &b.tree,
                    .aux = &b.aux};
  gpu_rec rec;
  if (gpu_rec_begin(gpu, 2, &rec, &err) || gpu_op_hsoftmax(&rec, &h, &b.x, NULL, &b.y, &err) ||
      gpu_op_hsoftmax(&rec, &h, NULL, &b.dy, &b.dx, &err))
    g_error("%s", err.message);
  char what[128];
  snprintf(what, sizeof what, "hierarchical_softmax %s of %d, %lld logits x %lld rows, %s",
           groups ? "group_sizes" : "levels", n_sizes, (long long)logits, (long long)rows, input_kinds[kind]);
  submit_twice(&rec, &b.y, got, ny, what);
  /* forward: a float32 softmax per level (exp within 2e-5 with its
   * division) and a product a level */
  double *tol = g_new(double, nx);
  for (int64_t i = 0; i < ny; i++) tol[i] = (2e-5 + 2 * EPS32) * (double)depth * fabs(y[i]) + 1e-30;
  double wf = gpu_test_compare(what, got, y, tol, ny);
  /* backward: dx_c = P_c·(U_c − U_parent); P within the forward's bound,
   * each U a convex combination of dy (|U| ≤ max|dy|) within the same
   * relative bound a level and a float32 sum of a block's terms */
  for (int64_t r = 0; r < rows; r++) {
    double dmax = 0;
    for (int64_t i = r * leaves; i < (r + 1) * leaves; i++) dmax = MAX(dmax, fabs(dy[i]));
    double *p = g_new(double, logits);
    /* P from the CPU's own code path: the leaves are y; inner P from x */
    int64_t start = 0;
    int64_t *bl = NULL, nb, nl, nlv;
    if (hsoftmax_tree(l, &bl, &nb, &nl, &nlv, &err)) g_error("%s", err.message);
    for (int64_t k = 0; k < nb; k++) {
      softmax_row_f64(x + r * logits + start, p + start, bl[k], 1.0);
      if (k > 0)
        for (int64_t c = start; c < start + bl[k]; c++) p[c] *= p[k - 1];
      start += bl[k];
    }
    for (int64_t c = 0; c < logits; c++)
      tol[r * logits + c] = 1e-5 * fabs(dx[r * logits + c]) +
                            p[c] * dmax * 2 * ((2e-5 + 2 * EPS32) * (double)depth + 2.0 * (logits + 2) * EPS32) +
                            1e-30;
    free(bl);
    g_free(p);
  }
  snprintf(what + strlen(what), sizeof what - strlen(what), " backward");
  double wb = gpu_test_compare(what, b.dx.map, dx, tol, nx);
  worst_hs[0] = MAX(worst_hs[0], wf);
  worst_hs[1] = MAX(worst_hs[1], wb);
  gpu_rec_free(&rec);
  bufs_free(&b);
  g_free(tol);
  g_free(x);
  g_free(y);
  g_free(dy);
  g_free(dx);
  g_free(got);
  loom_layer_free(l);
}

static void test_hsoftmax(void) {
  static const float g1[] = {1}, g2[] = {2}, g3[] = {4, 5, 5}, l1[] = {1, 1, 1}, l2[] = {2, 3, 4}, l3[] = {5, 5, 4},
                     l4[] = {3};
  for (int kind = 0; kind < (int)G_N_ELEMENTS(input_kinds); kind++) {
    check_hsoftmax(g1, 1, true, 3, kind, 1 + kind);    /* 2 logits, 1 leaf */
    check_hsoftmax(g2, 1, true, 2, kind, 11 + kind);   /* 3 logits */
    check_hsoftmax(l1, 3, false, 2, kind, 21 + kind);  /* 3 logits: a chain */
    check_hsoftmax(l4, 1, false, 5, kind, 61 + kind);  /* 3 logits, one level: a plain softmax */
    check_hsoftmax(g3, 3, true, 4, kind, 31 + kind);   /* 17 logits */
    check_hsoftmax(l2, 3, false, 3, kind, 41 + kind);  /* 32 logits */
    check_hsoftmax(l3, 3, false, 2, kind, 51 + kind);  /* 130 logits */
  }
  g_test_message("hierarchical_softmax: worst forward %.3f, backward %.3f of the tolerance", worst_hs[0],
                 worst_hs[1]);
}

int main(int argc, char **argv) {
  gpu = gpu_test_init(&argc, &argv);
  g_test_add_func("/gpu/softmax/sparsemax-entmax15", test_sparse);
  g_test_add_func("/gpu/softmax/gumbel-noise", test_gumbel_noise);
  g_test_add_func("/gpu/softmax/gumbel", test_gumbel);
  g_test_add_func("/gpu/softmax/gumbel-no-overflow", test_gumbel_no_overflow);
  g_test_add_func("/gpu/softmax/hierarchical", test_hsoftmax);
  int rc = g_test_run();
  loom_gpu_free(gpu);
  return rc;
}
