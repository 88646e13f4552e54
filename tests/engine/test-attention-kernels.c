/*
 * The attention kernels (engine/layers/attention-kernels.h): every vector
 * level gives the reference's bits on odd sizes, masks and strides; the
 * exponential against libm; the whole layer at every level (both the
 * in-place path, head_dim a multiple of 16, and the padded one), against a
 * plain float64 attention, and bit-identical for 1, 2 and 7 threads.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu.h"
#include "layer-test-util.h"
#include "parity.h"
#include "layers/attention-kernels.h"
#include "loom/sequence.h"
#include "test-levels.h"

/* The same bits, or NaN in both. */
static void assert_same(const char *what, const float *got, const float *ref, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (isnan(got[i]) && isnan(ref[i])) continue;
    if (memcmp(got + i, ref + i, sizeof *got) != 0)
      g_error("%s: element %lld is %.9g, the reference %.9g", what, (long long)i, (double)got[i], (double)ref[i]);
  }
}

static void test_exp(void) {
  g_assert_cmpfloat(att_exp(0.0f), ==, 1.0f);
  g_assert_cmpfloat(att_exp(-0.0f), ==, 1.0f);
  g_assert_cmpfloat(att_exp(-87.5f), ==, 0.0f);
  g_assert_cmpfloat(att_exp(-INFINITY), ==, 0.0f);
  g_assert_true(isnan(att_exp(NAN)));
  GRand *r = g_rand_new_with_seed(5);
  double worst = 0;
  for (int i = 0; i < 400000; i++) {
    float x = i < 200000 ? (float)g_rand_double_range(r, -87.0, 0.0) : (float)g_rand_double_range(r, -1.0, 0.0);
    double want = exp((double)x), got = att_exp(x);
    /* in units of the float spacing at the exact value */
    double ulp = ldexp(1.0, ilogb(want) - 23), err = fabs(got - want) / ulp;
    worst = err > worst ? err : worst;
  }
  g_rand_free(r);
  g_test_message("att_exp: worst error %.2f ulp", worst);
  g_assert_cmpfloat(worst, <=, 2.0);
}

static float *random_floats(int64_t n, double a, uint64_t seed) {
  float *v = g_new(float, n);
  gradcheck_fill_uniform(v, n, -a, a, seed);
  return v;
}

static void check_scores(const att_kernels *k, const att_kernels *ref, const char *level) {
  const int64_t hds[] = {1, 3, 16, 17, 32, 33}, ns[] = {16, 32, 48, 64, 80, 144};
  for (size_t a = 0; a < G_N_ELEMENTS(hds); a++)
    for (size_t b = 0; b < G_N_ELEMENTS(ns); b++)
      for (int rows = 1; rows <= ATT_BLOCK; rows++) {
        int64_t hd = hds[a], n = ns[b], ldq = hd + 3, ldk = n + 16, lds = n + 5;
        float *q = random_floats(rows * ldq, 1.5, 10 + a), *kt = random_floats(hd * ldk, 1.5, 20 + b);
        float *s = g_new0(float, rows * lds), *sr = g_new0(float, rows * lds);
        k->scores(q, ldq, rows, kt, ldk, hd, n, s, lds);
        ref->scores(q, ldq, rows, kt, ldk, hd, n, sr, lds);
        char what[96];
        g_snprintf(what, sizeof what, "%s scores hd %lld n %lld rows %d", level, (long long)hd, (long long)n, rows);
        assert_same(what, s, sr, rows * lds);
        g_free(q), g_free(kt), g_free(s), g_free(sr);
      }
}

static void check_softmax(const att_kernels *k, const att_kernels *ref, const char *level) {
  const int64_t vis[] = {1, 2, 15, 16, 17, 31, 33, 64, 100, 129};
  for (size_t a = 0; a < G_N_ELEMENTS(vis); a++)
    for (int variant = 0; variant < 5; variant++) {
      int64_t v = vis[a], n = att_pad16(v);
      /* Wide scores reach the exponential's zero; variant 4 holds a NaN. */
      float *s = random_floats(n, variant == 1 ? 400.0 : 6.0, 30 + a);
      uint8_t *pad = NULL;
      if (variant >= 2) {
        pad = g_new0(uint8_t, v);
        for (int64_t j = 0; j < v; j++) pad[j] = variant == 3 || (j * 7 + 3) % 5 == 0;
      }
      if (variant == 4) s[v / 2] = NAN;
      float *p = g_new(float, n), *pr = g_new(float, n), *dp = random_floats(n, 2.0, 40 + a);
      float *dpr = g_memdup2(dp, (gsize)n * sizeof *dp);
      k->softmax(s, v, pad, 0.17f, p);
      ref->softmax(s, v, pad, 0.17f, pr);
      char what[96];
      g_snprintf(what, sizeof what, "%s softmax vis %lld variant %d", level, (long long)v, variant);
      assert_same(what, p, pr, n);
      k->softmax_backward(pr, dp, v, 0.17f);
      ref->softmax_backward(pr, dpr, v, 0.17f);
      g_snprintf(what, sizeof what, "%s softmax backward vis %lld variant %d", level, (long long)v, variant);
      assert_same(what, dp, dpr, n);
      g_free(s), g_free(pad), g_free(p), g_free(pr), g_free(dp), g_free(dpr);
    }
}

static void check_mix(const att_kernels *k, const att_kernels *ref, const char *level) {
  const int64_t ws[] = {16, 32, 48, 64};
  const int64_t counts[][ATT_BLOCK] = {{1, 2, 3, 4}, {37, 38, 39, 40}, {0, 5, 0, 9}, {64, 64, 64, 64}, {17, 3, 50, 1}};
  const int64_t los[][ATT_BLOCK] = {{0, 1, 2, 3}, {30, 31, 32, 33}, {5, 0, 70, 2}, {0, 0, 0, 0}, {69, 68, 67, 66}};
  const int64_t rows_x = 70;
  for (size_t a = 0; a < G_N_ELEMENTS(ws); a++)
    for (size_t c = 0; c < G_N_ELEMENTS(counts); c++)
      for (int rows = 1; rows <= ATT_BLOCK; rows++) {
        int64_t w = ws[a], lda = 72, ldx = w + 7, ldo = w + 3;
        float *m = random_floats(rows_x * lda, 1.0, 50 + c), *x = random_floats(rows_x * ldx, 1.0, 60 + a);
        float *o = random_floats(rows_x * ldo, 1.0, 70), *orf = g_memdup2(o, (gsize)(rows_x * ldo) * sizeof *o);
        char what[96];
        k->mix(m, lda, rows, counts[c], x, ldx, w, o, ldo);
        ref->mix(m, lda, rows, counts[c], x, ldx, w, orf, ldo);
        g_snprintf(what, sizeof what, "%s mix w %lld case %zu rows %d", level, (long long)w, c, rows);
        assert_same(what, o, orf, rows_x * ldo);
        for (int acc = 0; acc < 2; acc++) {
          k->mix_t(m, lda, rows, los[c], rows_x, x, ldx, w, o, ldo, acc);
          ref->mix_t(m, lda, rows, los[c], rows_x, x, ldx, w, orf, ldo, acc);
          g_snprintf(what, sizeof what, "%s mix_t w %lld case %zu cols %d acc %d", level, (long long)w, c, rows, acc);
          assert_same(what, o, orf, rows_x * ldo);
        }
        g_free(m), g_free(x), g_free(o), g_free(orf);
      }
}

static void test_levels(void) {
  const att_kernels *ref = att_kernels_for(LOOM_KERNELS_REF);
  g_assert_nonnull(ref);
  int tested = 0;
  for (int level = LOOM_KERNELS_AVX2; level <= TEST_LAST_LEVEL; level++) {
    const att_kernels *k = att_kernels_for((loom_kernel_level)level);
    if (!k) continue;
    const char *name = loom_kernel_level_name((loom_kernel_level)level);
    check_scores(k, ref, name);
    check_softmax(k, ref, name);
    check_mix(k, ref, name);
    tested++;
  }
  if (!tested) g_test_skip("no vector level on this machine or build");
}

typedef struct att_case {
  int64_t d, heads, kv, head_dim, steps;
  bool causal, bias, qk_norm;
  const char *rope;
  bool pad;
} att_case;

/* head_dim 32 and 16 take the in-place path, 6, 5 and 12 the padded one. */
static const att_case cases[] = {
  {64, 2, 2, 32, 37, true, true, false, "none", false},
  {48, 4, 2, 16, 21, true, false, true, "half", true},
  {20, 4, 1, 6, 19, false, true, false, "interleaved", false},
  {15, 3, 3, 5, 9, true, true, true, "none", false},
  {24, 2, 1, 12, 18, false, false, false, "none", true},
};

static loom_layer *make_layer(const att_case *c, uint64_t seed) {
  loom_layer *l = lt_new("attention");
  lt_set_int(l, "d_model", c->d);
  lt_set_int(l, "heads", c->heads);
  lt_set_int(l, "kv_heads", c->kv);
  lt_set_int(l, "head_dim", c->head_dim);
  lt_set_bool(l, "causal", c->causal);
  lt_set_bool(l, "bias", c->bias);
  lt_set_bool(l, "qk_norm", c->qk_norm);
  lt_set_enum(l, "rope", c->rope);
  lt_build(l, 2, (const int64_t[]){c->steps, c->d}, seed);
  lt_randomize(l, 0.4, seed);
  if (c->pad) { /* sample 1 hides keys 0 and 3 */
    uint8_t mask[2 * 64] = {0};
    mask[c->steps + 0] = mask[c->steps + 3] = 1;
    g_assert_cmpint(loom_layer_set_key_padding_mask(l, mask, 2, c->steps, NULL), ==, LOOM_OK);
  }
  return l;
}

/* Output, input gradient and every weight gradient of a forward and backward. */
typedef struct run_out {
  float *y, *dx, *grads;
  int64_t ny, nx, ng;
} run_out;

static run_out run_layer(loom_layer *l, loom_pool *pool, const float *x, const float *dy, int64_t batch) {
  run_out r = {.ny = batch * lt_out_numel(l), .nx = batch * lt_in_numel(l)};
  for (int i = 0; i < loom_layer_n_weights(l); i++) r.ng += loom_weights_count(loom_layer_weights(l, i));
  r.y = g_new(float, r.ny);
  r.dx = g_new(float, r.nx);
  r.grads = g_new(float, r.ng);
  lt_forward(l, pool, x, r.y, batch);
  lt_backward(l, pool, x, r.y, dy, r.dx, batch);
  int64_t at = 0;
  for (int i = 0; i < loom_layer_n_weights(l); i++) {
    int64_t n = loom_weights_count(loom_layer_weights(l, i));
    memcpy(r.grads + at, loom_layer_grad(l, i), (size_t)n * sizeof(float));
    at += n;
  }
  return r;
}

static void assert_runs_equal(const char *what, const run_out *a, const run_out *b) {
  char label[128];
  g_snprintf(label, sizeof label, "%s y", what);
  assert_same(label, a->y, b->y, a->ny);
  g_snprintf(label, sizeof label, "%s dx", what);
  assert_same(label, a->dx, b->dx, a->nx);
  g_snprintf(label, sizeof label, "%s weight gradients", what);
  assert_same(label, a->grads, b->grads, a->ng);
}

static void free_run(run_out *r) { g_free(r->y), g_free(r->dx), g_free(r->grads); }

/* The layer at every kernel level gives the reference level's bits. */
static void test_layer_levels(void) {
  loom_kernel_level saved = loom_kernels_get()->level;
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    loom_layer *l = make_layer(&cases[c], 100 + c);
    int64_t nx = 2 * lt_in_numel(l), ny = 2 * lt_out_numel(l);
    float *x = random_floats(nx, 1.0, 110 + c), *dy = random_floats(ny, 1.0, 120 + c);
    g_assert_true(loom_kernels_force(LOOM_KERNELS_REF));
    run_out ref = run_layer(l, NULL, x, dy, 2);
    for (int level = LOOM_KERNELS_AVX2; level <= TEST_LAST_LEVEL; level++) {
      if (!loom_kernels_force((loom_kernel_level)level)) continue;
      run_out got = run_layer(l, NULL, x, dy, 2);
      char what[96];
      g_snprintf(what, sizeof what, "case %zu at %s", c, loom_kernel_level_name((loom_kernel_level)level));
      assert_runs_equal(what, &got, &ref);
      free_run(&got);
    }
    free_run(&ref);
    g_free(x), g_free(dy);
    loom_layer_free(l);
  }
  g_assert_true(loom_kernels_force(saved));
}

/* Bit-identical for 1, 2 and 7 threads, batch 3. */
static void test_threads(void) {
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    att_case one = cases[c];
    one.pad = false; /* the mask is for a batch of 2 */
    loom_layer *l = make_layer(&one, 200 + c);
    int64_t nx = 3 * lt_in_numel(l), ny = 3 * lt_out_numel(l);
    float *x = random_floats(nx, 1.0, 210 + c), *dy = random_floats(ny, 1.0, 220 + c);
    run_out first = {0};
    const int threads[] = {1, 2, 7};
    for (int t = 0; t < 3; t++) {
      loom_pool *pool = lt_pool(threads[t]);
      run_out got = run_layer(l, pool, x, dy, 3);
      loom_pool_free(pool);
      if (t == 0) {
        first = got;
        continue;
      }
      char what[96];
      g_snprintf(what, sizeof what, "case %zu at %d threads", c, threads[t]);
      assert_runs_equal(what, &got, &first);
      free_run(&got);
    }
    free_run(&first);
    g_free(x), g_free(dy);
    loom_layer_free(l);
  }
}

/* The parameters of a layer without RoPE or Q/K norm, in float64. */
typedef struct ref_params {
  const att_case *c;
  const uint8_t *pad; /* batch × steps, or NULL */
  double *w[8];       /* wq wk wv wo bq bk bv bo */
  int64_t n[8];
} ref_params;

static ref_params ref_params_of(loom_layer *l, const att_case *c, const uint8_t *pad) {
  ref_params r = {.c = c, .pad = pad};
  for (int i = 0; i < 8; i++) {
    loom_weights *w = loom_layer_weights(l, i);
    r.n[i] = loom_weights_count(w);
    r.w[i] = g_new(double, r.n[i]);
    for (int64_t j = 0; j < r.n[i]; j++) r.w[i][j] = loom_weights_master(w)[j];
  }
  return r;
}

/* Σ dy·y of the forward written out in float64: GQA, causal or not, biases, key padding. */
static double reference_loss(const ref_params *rp, const double *x, const float *dy, int64_t batch) {
  const att_case *c = rp->c;
  const int64_t T = c->steps, d = c->d, H = c->heads, hd = c->head_dim, qw = H * hd, kw = c->kv * hd;
  const double *const *w = (const double *const *)rp->w;
  double *q = g_new(double, T * qw), *k = g_new(double, T * kw), *v = g_new(double, T * kw), *o = g_new(double, T * qw),
         *p = g_new(double, T), loss = 0;
  for (int64_t b = 0; b < batch; b++) {
    const double *xb = x + b * T * d;
    for (int64_t t = 0; t < T; t++)
      for (int64_t j = 0; j < qw; j++) {
        double sq = w[4][j], sk = j < kw ? w[5][j] : 0, sv = j < kw ? w[6][j] : 0;
        for (int64_t i = 0; i < d; i++) {
          sq += xb[t * d + i] * w[0][j * d + i];
          if (j < kw) sk += xb[t * d + i] * w[1][j * d + i], sv += xb[t * d + i] * w[2][j * d + i];
        }
        q[t * qw + j] = sq;
        if (j < kw) k[t * kw + j] = sk, v[t * kw + j] = sv;
      }
    for (int64_t h = 0; h < H; h++) {
      const int64_t g = h / (H / c->kv);
      for (int64_t i = 0; i < T; i++) {
        double mx = -INFINITY, sum = 0;
        int64_t seen = c->causal ? i + 1 : T;
        for (int64_t j = 0; j < seen; j++) {
          double s = 0;
          for (int64_t e = 0; e < hd; e++) s += q[i * qw + h * hd + e] * k[j * kw + g * hd + e];
          p[j] = rp->pad && rp->pad[b * T + j] ? -INFINITY : s / sqrt((double)hd);
          mx = p[j] > mx ? p[j] : mx;
        }
        for (int64_t j = 0; j < seen; j++) sum += p[j] = mx == -INFINITY ? 0 : exp(p[j] - mx);
        for (int64_t e = 0; e < hd; e++) {
          double acc = 0;
          for (int64_t j = 0; j < seen && sum > 0; j++) acc += p[j] / sum * v[j * kw + g * hd + e];
          o[i * qw + h * hd + e] = acc;
        }
      }
    }
    for (int64_t t = 0; t < T; t++)
      for (int64_t j = 0; j < d; j++) {
        double acc = w[7][j];
        for (int64_t i = 0; i < qw; i++) acc += o[t * qw + i] * w[3][j * qw + i];
        loss += acc * dy[(b * T + t) * d + j];
      }
  }
  g_free(q), g_free(k), g_free(v), g_free(o), g_free(p);
  return loss;
}

/* Central difference of the float64 loss in one entry. */
static double numeric(const ref_params *rp, double *entry, const double *x, const float *dy, int64_t batch) {
  const double h = 1e-4, keep = *entry;
  *entry = keep + h;
  double up = reference_loss(rp, x, dy, batch);
  *entry = keep - h;
  double down = reference_loss(rp, x, dy, batch);
  *entry = keep;
  return (up - down) / (2 * h);
}

static void assert_gradient(const char *what, int64_t i, double analytic, double want, double scale) {
  if (!(fabs(analytic - want) <= 1e-3 * fabs(want) + 2e-5 * scale))
    g_error("%s[%lld]: %.9g, float64 finite difference %.9g", what, (long long)i, analytic, want);
}

/*
 * Case 0 (head_dim 32) and case 5 (head_dim 16, grouped keys, key padding;
 * both in place): the output against the float64 forward, the input and
 * weight gradients against its central differences (sampled entries).
 */
static void test_against_float64(void) {
  const att_case extra = {64, 4, 2, 16, 21, true, true, false, "none", true};
  const att_case *list[] = {&cases[0], &extra};
  for (size_t k = 0; k < G_N_ELEMENTS(list); k++) {
    const att_case *c = list[k];
    loom_layer *l = make_layer(c, 300 + k);
    int64_t n = 2 * lt_out_numel(l);
    float *x = random_floats(n, 1.0, 301 + k), *y = g_new(float, n), *dx = g_new(float, n);
    float *dy = random_floats(n, 1.0, 302 + k);
    uint8_t pad[2 * 64] = {0};
    pad[c->steps + 0] = pad[c->steps + 3] = 1; /* as make_layer sets it */
    ref_params rp = ref_params_of(l, c, c->pad ? pad : NULL);
    double *xd = g_new(double, n), loss = 0;
    for (int64_t i = 0; i < n; i++) xd[i] = x[i];
    lt_forward(l, NULL, x, y, 2);
    lt_backward(l, NULL, x, y, dy, dx, 2);
    for (int64_t i = 0; i < n; i++) loss += (double)y[i] * dy[i];
    double want = reference_loss(&rp, xd, dy, 2);
    g_test_message("case %zu: loss %.9g, float64 %.9g", k, loss, want);
    g_assert_cmpfloat(fabs(loss - want), <=, 1e-5 * fabs(want) + 1e-4);
    double dx_scale = parity_max_abs(dx, n);
    for (int64_t i = 0; i < n; i += n / 37 + 1)
      assert_gradient("dx", i, dx[i], numeric(&rp, xd + i, xd, dy, 2), dx_scale);
    double scale = 0; /* over every weight gradient: the key bias's is zero up to rounding */
    for (int t = 0; t < 8; t++) scale = fmax(scale, parity_max_abs(loom_layer_grad(l, t), rp.n[t]));
    for (int t = 0; t < 8; t++) {
      const float *grad = loom_layer_grad(l, t);
      for (int64_t i = 0; i < rp.n[t]; i += rp.n[t] / 11 + 1)
        assert_gradient(loom_layer_weights_name(l, t), i, grad[i], numeric(&rp, rp.w[t] + i, xd, dy, 2), scale);
    }
    for (int i = 0; i < 8; i++) g_free(rp.w[i]);
    g_free(x), g_free(y), g_free(dx), g_free(dy), g_free(xd);
    loom_layer_free(l);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/attention-kernels/exp", test_exp);
  g_test_add_func("/attention-kernels/levels", test_levels);
  g_test_add_func("/attention-kernels/layer-levels", test_layer_levels);
  g_test_add_func("/attention-kernels/threads", test_threads);
  g_test_add_func("/attention-kernels/against-float64", test_against_float64);
  return g_test_run();
}
