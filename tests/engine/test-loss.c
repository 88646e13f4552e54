/* Losses and accuracy counts: PyTorch parity, finite differences, errors. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "parity.h"


static int32_t *labels_of(const loom_npy *a) {
  int64_t n = loom_npy_numel(a);
  int32_t *l = g_new(int32_t, n);
  for (int64_t i = 0; i < n; i++) l[i] = (int32_t)a->data[i];
  return l;
}

static uint8_t *mask_of(const loom_npy *a) {
  int64_t n = loom_npy_numel(a);
  uint8_t *m = g_new(uint8_t, n);
  for (int64_t i = 0; i < n; i++) m[i] = a->data[i] != 0.0f;
  return m;
}

static void assert_loss(const char *what, double loss, const loom_npy *ref) {
  float got = (float)loss;
  parity_assert_matches(what, &got, ref->data, 1);
}

static void test_mse_parity(void) {
  loom_npy y = parity_load("train", "mse_y"), t = parity_load("train", "mse_target");
  loom_npy l = parity_load("train", "mse_loss"), g = parity_load("train", "mse_grad");
  float dy[15];
  double loss;
  loom_error err = {0};
  g_assert_cmpint(loom_loss_mse(y.data, t.data, 5, 3, &loss, dy, &err), ==, LOOM_OK);
  assert_loss("mse loss", loss, &l);
  parity_assert_matches("mse grad", dy, g.data, 15);
  loom_npy_clear(&y), loom_npy_clear(&t), loom_npy_clear(&l), loom_npy_clear(&g);
}

static void check_ce_case(const char *name, double eps) {
  char key[64];
  g_snprintf(key, sizeof key, "%s_logits", name);
  loom_npy z = parity_load("train", key);
  g_snprintf(key, sizeof key, "%s_labels", name);
  loom_npy lab = parity_load("train", key);
  g_snprintf(key, sizeof key, "%s_loss", name);
  loom_npy l = parity_load("train", key);
  g_snprintf(key, sizeof key, "%s_grad", name);
  loom_npy g = parity_load("train", key);
  int64_t batch = z.shape[0], classes = z.shape[1];
  int32_t *labels = labels_of(&lab);
  float *dy = g_new(float, batch * classes);
  double loss;
  loom_error err = {0};
  g_assert_cmpint(loom_loss_cross_entropy(z.data, labels, batch, classes, eps, &loss, dy, &err), ==, LOOM_OK);
  assert_loss(name, loss, &l);
  parity_assert_matches(name, dy, g.data, batch * classes);
  /* The same through the run-time dispatcher. */
  loom_loss_spec spec = {.kind = LOOM_LOSS_CROSS_ENTROPY, .label_smoothing = eps};
  double loss2;
  g_assert_cmpint(loom_loss_eval(&spec, z.data, batch, classes, labels, NULL, NULL, &loss2, NULL, &err), ==, 0);
  g_assert_cmpfloat(loss2, ==, loss);
  g_free(labels), g_free(dy);
  loom_npy_clear(&z), loom_npy_clear(&lab), loom_npy_clear(&l), loom_npy_clear(&g);
}

static void test_ce_parity(void) {
  check_ce_case("ce", 0.0);
  check_ce_case("ce_smooth", 0.15);
  check_ce_case("ce_one", 0.3);
}

static void test_bce_parity(void) {
  loom_npy z = parity_load("train", "bce_logits"), t = parity_load("train", "bce_target");
  loom_npy l = parity_load("train", "bce_loss"), g = parity_load("train", "bce_grad");
  float dy[18];
  double loss;
  loom_error err = {0};
  g_assert_cmpint(loom_loss_bce_logits(z.data, t.data, 6, 3, &loss, dy, &err), ==, LOOM_OK);
  g_assert_true(isfinite(loss));
  assert_loss("bce loss", loss, &l);
  parity_assert_matches("bce grad", dy, g.data, 18);
  loom_npy_clear(&z), loom_npy_clear(&t), loom_npy_clear(&l), loom_npy_clear(&g);
}

static void test_multi_head_parity(void) {
  loom_npy z = parity_load("train", "mhce_logits"), lab = parity_load("train", "mhce_labels");
  loom_npy m = parity_load("train", "mhce_mask"), l = parity_load("train", "mhce_loss");
  loom_npy g = parity_load("train", "mhce_grad");
  int32_t *labels = labels_of(&lab);
  uint8_t *mask = mask_of(&m);
  float dy[4 * 3 * 5];
  double loss;
  loom_error err = {0};
  g_assert_cmpint(loom_loss_multi_head_ce(z.data, labels, mask, 4, 3, 5, 0.2, &loss, dy, &err), ==, LOOM_OK);
  assert_loss("multi-head loss", loss, &l);
  parity_assert_matches("multi-head grad", dy, g.data, 60);
  /* Masked heads get exactly zero gradient. */
  for (int c = 0; c < 5; c++) g_assert_cmpfloat(dy[(0 * 3 + 1) * 5 + c], ==, 0.0f);
  loom_loss_spec spec = {.kind = LOOM_LOSS_MULTI_HEAD_CE, .label_smoothing = 0.2, .heads = 3};
  double loss2;
  g_assert_cmpint(loom_loss_eval(&spec, z.data, 4, 15, labels, NULL, mask, &loss2, NULL, &err), ==, 0);
  g_assert_cmpfloat(loss2, ==, loss);
  spec.heads = 4;
  g_assert_cmpint(loom_loss_eval(&spec, z.data, 4, 15, labels, NULL, mask, &loss2, NULL, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "multi_head_ce: 15 outputs per sample do not split into 4 heads");
  /* Every head masked: loss 0, zero gradient. */
  uint8_t none[12] = {0};
  memset(dy, 0xff, sizeof dy);
  g_assert_cmpint(loom_loss_multi_head_ce(z.data, labels, none, 4, 3, 5, 0.0, &loss, dy, &err), ==, LOOM_OK);
  g_assert_cmpfloat(loss, ==, 0.0);
  for (int i = 0; i < 60; i++) g_assert_cmpfloat(dy[i], ==, 0.0f);
  g_free(labels), g_free(mask);
  loom_npy_clear(&z), loom_npy_clear(&lab), loom_npy_clear(&m), loom_npy_clear(&l), loom_npy_clear(&g);
}

/* multi_head_nll against torch: −Σ q·log p over each active head of softmax
 * probabilities (label smoothing 0.1, two heads masked), loss and gradient. */
static void test_multi_head_nll_parity(void) {
  loom_npy p = parity_load("train", "mhnll_probs"), lab = parity_load("train", "mhnll_labels");
  loom_npy m = parity_load("train", "mhnll_mask"), l = parity_load("train", "mhnll_loss");
  loom_npy g = parity_load("train", "mhnll_grad");
  int32_t *labels = labels_of(&lab);
  uint8_t *mask = mask_of(&m);
  float dy[3 * 4 * 5];
  double loss;
  loom_error err = {0};
  g_assert_cmpint(loom_loss_multi_head_nll(p.data, labels, mask, 3, 4, 5, 0.1, &loss, dy, &err), ==, LOOM_OK);
  assert_loss("multi-head nll", loss, &l);
  parity_assert_matches("multi-head nll grad", dy, g.data, 60);
  g_free(labels), g_free(mask);
  loom_npy_clear(&p), loom_npy_clear(&lab), loom_npy_clear(&m), loom_npy_clear(&l), loom_npy_clear(&g);
}

/* ---- finite differences ---------------------------------------------------- */

typedef double (*loss_fn)(const float *y, void *ctx, float *dy);

typedef struct fd_ctx {
  const float *target;
  const int32_t *labels;
  const uint8_t *mask;
  int64_t batch, width, heads;
  double eps;
  loom_loss_kind kind;
} fd_ctx;

static double eval_kind(const float *y, void *p, float *dy) {
  fd_ctx *c = p;
  loom_loss_spec spec = {.kind = c->kind, .label_smoothing = c->eps, .heads = c->heads};
  double loss;
  loom_error err = {0};
  if (loom_loss_eval(&spec, y, c->batch, c->width, c->labels, c->target, c->mask, &loss, dy, &err))
    g_error("%s", err.message);
  return loss;
}

/* Central differences in float32 inputs, loss in double: the step actually
 * taken is measured after rounding, so the only error is O(h²). */
static void gradcheck_in(const char *what, fd_ctx *c, double lo_value, double hi_value) {
  int64_t n = c->batch * c->width;
  float *y = g_new(float, n), *dy = g_new(float, n);
  GRand *r = g_rand_new_with_seed(7);
  for (int64_t i = 0; i < n; i++) y[i] = (float)g_rand_double_range(r, lo_value, hi_value);
  eval_kind(y, c, dy);
  for (int64_t i = 0; i < n; i++) {
    float orig = y[i];
    float hi = orig + 1e-2f, lo = orig - 1e-2f;
    y[i] = hi;
    double fhi = eval_kind(y, c, NULL);
    y[i] = lo;
    double flo = eval_kind(y, c, NULL);
    y[i] = orig;
    double fd = (fhi - flo) / ((double)hi - (double)lo);
    if (fabs(fd - dy[i]) > 1e-4 + 1e-3 * fabs(fd))
      g_error("%s: element %lld: analytic %.9g, finite difference %.9g", what, (long long)i, (double)dy[i], fd);
  }
  g_rand_free(r);
  g_free(y), g_free(dy);
}

static void gradcheck(const char *what, fd_ctx *c) { gradcheck_in(what, c, -2.0, 2.0); }

static void test_gradients_by_finite_differences(void) {
  float target[4 * 6];
  int32_t labels[4 * 3] = {0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1};
  uint8_t mask[4 * 3] = {1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1};
  for (int i = 0; i < 24; i++) target[i] = (float)((i * 7) % 10) / 9.0f;
  fd_ctx mse = {.target = target, .batch = 4, .width = 6, .kind = LOOM_LOSS_MSE};
  gradcheck("mse", &mse);
  fd_ctx bce = {.target = target, .batch = 4, .width = 6, .kind = LOOM_LOSS_BCE_LOGITS};
  gradcheck("bce", &bce);
  int32_t ce_labels[4] = {5, 0, 3, 2};
  fd_ctx ce = {.labels = ce_labels, .batch = 4, .width = 6, .eps = 0.1, .kind = LOOM_LOSS_CROSS_ENTROPY};
  gradcheck("cross-entropy", &ce);
  fd_ctx mh = {.labels = labels, .mask = mask, .batch = 4, .width = 6, .heads = 3, .eps = 0.05,
               .kind = LOOM_LOSS_MULTI_HEAD_CE};
  gradcheck("multi-head", &mh);
  /* NLL takes probabilities: values in [0.2, 1], where the step of 1e-2 stays
   * far above the clamp and −log p is flat enough for central differences
   * (the loss does not need rows that sum to 1) */
  fd_ctx nll = {.labels = labels, .mask = mask, .batch = 4, .width = 6, .heads = 3, .eps = 0.05,
                .kind = LOOM_LOSS_MULTI_HEAD_NLL};
  gradcheck_in("multi-head nll", &nll, 0.2, 1.0);
  nll.eps = 0.0;
  gradcheck_in("multi-head nll, no smoothing", &nll, 0.2, 1.0);
}

/* NLL on softmax(z) is multi-head CE on z (whose torch parity is committed):
 * the same loss, and NLL's gradient through the softmax Jacobian is CE's. */
static void test_multi_head_nll(void) {
  enum { B = 3, H = 2, C = 4 };
  float z[B * H * C], p[B * H * C], dce[B * H * C], dnll[B * H * C];
  int32_t labels[B * H] = {0, 3, 2, 1, 3, 0};
  uint8_t mask[B * H] = {1, 1, 0, 1, 1, 1};
  for (int i = 0; i < B * H * C; i++) z[i] = (float)sin(1.7 * i) * 3.0f;
  for (int r = 0; r < B * H; r++) {
    double mx = -INFINITY, sum = 0.0;
    for (int c = 0; c < C; c++) mx = fmax(mx, z[r * C + c]);
    for (int c = 0; c < C; c++) sum += exp(z[r * C + c] - mx);
    for (int c = 0; c < C; c++) p[r * C + c] = (float)(exp(z[r * C + c] - mx) / sum);
  }
  loom_error err = {0};
  for (int k = 0; k < 2; k++) {
    double eps = k ? 0.1 : 0.0, ce, nll;
    g_assert_cmpint(loom_loss_multi_head_ce(z, labels, mask, B, H, C, eps, &ce, dce, &err), ==, LOOM_OK);
    loom_loss_spec spec = {.kind = LOOM_LOSS_MULTI_HEAD_NLL, .label_smoothing = eps, .heads = H};
    g_assert_cmpint(loom_loss_eval(&spec, p, B, H * C, labels, NULL, mask, &nll, dnll, &err), ==, LOOM_OK);
    g_assert_cmpfloat(fabs(nll - ce), <=, 1e-6 * fabs(ce));
    for (int r = 0; r < B * H; r++) {
      double dot = 0.0;
      for (int c = 0; c < C; c++) dot += (double)dnll[r * C + c] * p[r * C + c];
      for (int c = 0; c < C; c++) {
        double through = p[r * C + c] * (dnll[r * C + c] - dot); /* softmax backward */
        g_assert_cmpfloat(fabs(through - dce[r * C + c]), <=, 1e-6);
      }
    }
    /* masked heads: zero gradient */
    for (int c = 0; c < C; c++) g_assert_cmpfloat(dnll[2 * C + c], ==, 0.0f);
  }
  /* a zero probability at the label: a large finite loss and no gradient through the clamp */
  float zero[C] = {0.0f, 0.5f, 0.25f, 0.25f};
  int32_t first = 0;
  float g[C];
  double loss;
  g_assert_cmpint(loom_loss_multi_head_nll(zero, &first, NULL, 1, 1, C, 0.0, &loss, g, &err), ==, LOOM_OK);
  g_assert_cmpfloat(fabs(loss + log(LOOM_NLL_MIN_PROB)), <=, 1e-9);
  for (int c = 0; c < C; c++) g_assert_cmpfloat(g[c], ==, 0.0f);
  first = 7;
  g_assert_cmpint(loom_loss_multi_head_nll(zero, &first, NULL, 1, 1, C, 0.0, &loss, g, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "multi_head_nll: sample 0, head 0: label 7 outside [0, 4)");
  loom_loss_spec odd = {.kind = LOOM_LOSS_MULTI_HEAD_NLL, .heads = 3};
  g_assert_cmpint(loom_loss_eval(&odd, p, B, H * C, labels, NULL, NULL, &loss, NULL, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "multi_head_nll: 8 outputs per sample do not split into 3 heads");
  g_assert_true(loom_loss_uses_labels(LOOM_LOSS_MULTI_HEAD_NLL));
  loom_loss_kind kind;
  g_assert_cmpint(loom_loss_from_name("multi_head_nll", &kind, &err), ==, LOOM_OK);
  g_assert_cmpint(kind, ==, LOOM_LOSS_MULTI_HEAD_NLL);
}

/* ---- numerics and errors ------------------------------------------------------- */

static void test_bce_extremes(void) {
  float z[4] = {100.0f, -100.0f, 100.0f, -100.0f}, t[4] = {1.0f, 0.0f, 0.0f, 1.0f}, dy[4];
  double loss;
  g_assert_cmpint(loom_loss_bce_logits(z, t, 1, 4, &loss, dy, NULL), ==, LOOM_OK);
  /* Two confident right answers cost ~0, two confident wrong ones 100 each. */
  g_assert_cmpfloat_with_epsilon(loss, 200.0 / 4.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(dy[0], 0.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(dy[2], 0.25, 1e-7);
  g_assert_cmpfloat_with_epsilon(dy[3], -0.25, 1e-7);
}

static void test_ce_extremes_and_uniform(void) {
  float z[3] = {1000.0f, -1000.0f, 0.0f}, dy[3];
  int32_t right = 0, wrong = 1;
  double loss;
  g_assert_cmpint(loom_loss_cross_entropy(z, &right, 1, 3, 0.0, &loss, dy, NULL), ==, LOOM_OK);
  g_assert_cmpfloat(loss, ==, 0.0);
  g_assert_cmpint(loom_loss_cross_entropy(z, &wrong, 1, 3, 0.0, &loss, dy, NULL), ==, LOOM_OK);
  g_assert_cmpfloat(loss, ==, 2000.0);
  /* Uniform logits: loss log(C) whatever the smoothing. */
  float u[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  g_assert_cmpint(loom_loss_cross_entropy(u, &wrong, 1, 4, 0.3, &loss, NULL, NULL), ==, LOOM_OK);
  g_assert_cmpfloat_with_epsilon(loss, log(4.0), 1e-12);
}

static void test_errors(void) {
  loom_error err = {0};
  float z[12] = {0};
  int32_t bad[2] = {1, 3};
  double loss;
  g_assert_cmpint(loom_loss_cross_entropy(z, bad, 2, 3, 0.0, &loss, NULL, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "cross_entropy: sample 1, head 0: label 3 outside [0, 3)");
  int32_t ok[2] = {0, 1};
  g_assert_cmpint(loom_loss_cross_entropy(z, ok, 2, 3, 1.5, &loss, NULL, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "cross_entropy: label_smoothing must be in [0, 1], got 1.5");
  g_assert_cmpint(loom_loss_mse(z, z, 0, 3, &loss, NULL, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "mse: batch and width must be at least 1, got 0 and 3");
  float t[2] = {0.5f, 1.5f};
  g_assert_cmpint(loom_loss_bce_logits(z, t, 1, 2, &loss, NULL, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "bce_logits: sample 0, element 1: target 1.5 outside [0, 1]");
  int32_t heads[4] = {0, 1, 2, -1};
  uint8_t mask[4] = {1, 1, 1, 0};
  /* A masked head's label is not looked at; an active one is. */
  g_assert_cmpint(loom_loss_multi_head_ce(z, heads, mask, 2, 2, 3, 0.0, &loss, NULL, &err), ==, LOOM_OK);
  mask[3] = 1;
  g_assert_cmpint(loom_loss_multi_head_ce(z, heads, mask, 2, 2, 3, 0.0, &loss, NULL, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "multi_head_ce: sample 1, head 1: label -1 outside [0, 3)");
  loom_loss_kind k;
  g_assert_cmpint(loom_loss_from_name("huber", &k, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "unknown loss 'huber' (expected mse, cross_entropy, bce_logits, multi_head_ce or multi_head_nll)");
  for (int i = 0; i < 4; i++) {
    g_assert_cmpint(loom_loss_from_name(loom_loss_name((loom_loss_kind)i), &k, NULL), ==, LOOM_OK);
    g_assert_cmpint(k, ==, i);
  }
  g_assert_true(loom_loss_uses_labels(LOOM_LOSS_MULTI_HEAD_CE));
  g_assert_false(loom_loss_uses_labels(LOOM_LOSS_BCE_LOGITS));
}

static void test_accuracy(void) {
  /* Row 1 ties between classes 0 and 2: the first maximum wins. */
  float z[9] = {0.1f, 0.9f, 0.0f, 0.5f, 0.2f, 0.5f, -1.0f, -2.0f, -0.5f};
  int32_t labels[3] = {1, 0, 0};
  g_assert_cmpint(loom_count_correct_argmax(z, labels, 3, 3), ==, 2);
  float y[5] = {-0.1f, 0.1f, 0.0f, 3.0f, -3.0f}, t[5] = {0.0f, 1.0f, 1.0f, 0.6f, 0.4f};
  g_assert_cmpint(loom_count_correct_binary(y, t, 5, 0.0), ==, 4);
  g_assert_cmpint(loom_count_correct_binary(y, t, 5, 0.5), ==, 3);

  /* 2 samples × 2 heads × 3 classes. */
  float h[12] = {1, 0, 0, 0, 1, 0, /* sample 0: predicts 0, 1 */ 0, 0, 1, 1, 0, 0 /* sample 1: predicts 2, 0 */};
  int32_t hl[4] = {0, 1, 2, 1};
  loom_head_counts c = {0};
  int64_t per_correct[2] = {0}, per_active[2] = {0};
  loom_count_correct_heads(h, hl, NULL, 2, 2, 3, &c, per_correct, per_active);
  g_assert_cmpint(c.correct, ==, 3);
  g_assert_cmpint(c.active, ==, 4);
  g_assert_cmpint(c.samples_all_correct, ==, 1);
  g_assert_cmpint(c.samples, ==, 2);
  g_assert_cmpint(per_correct[0], ==, 2);
  g_assert_cmpint(per_correct[1], ==, 1);
  /* Masking the wrong head makes sample 1 fully right; counts accumulate. */
  uint8_t mask[4] = {1, 1, 1, 0};
  loom_count_correct_heads(h, hl, mask, 2, 2, 3, &c, per_correct, per_active);
  g_assert_cmpint(c.correct, ==, 6);
  g_assert_cmpint(c.active, ==, 7);
  g_assert_cmpint(c.samples_all_correct, ==, 3);
  g_assert_cmpint(per_active[1], ==, 3);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/train/loss/mse-parity", test_mse_parity);
  g_test_add_func("/train/loss/cross-entropy-parity", test_ce_parity);
  g_test_add_func("/train/loss/bce-parity", test_bce_parity);
  g_test_add_func("/train/loss/multi-head-parity", test_multi_head_parity);
  g_test_add_func("/train/loss/multi-head-nll-parity", test_multi_head_nll_parity);
  g_test_add_func("/train/loss/finite-differences", test_gradients_by_finite_differences);
  g_test_add_func("/train/loss/multi-head-nll", test_multi_head_nll);
  g_test_add_func("/train/loss/bce-extremes", test_bce_extremes);
  g_test_add_func("/train/loss/ce-extremes", test_ce_extremes_and_uniform);
  g_test_add_func("/train/loss/errors", test_errors);
  g_test_add_func("/train/loss/accuracy", test_accuracy);
  return g_test_run();
}
