/* Ensembles: every figure against an independent computation written here
 * (sets, Pearson from means, a brute-force best pair), success patterns
 * against a forward pass and an argmax done here and against loom_evaluate,
 * and the errors for mismatched models and numeric targets. */
#include <math.h>

#include "train-test-util.h"

/* The reference: figures straight from the definitions in loom/ensemble.h,
 * computed another way than the engine (means and set sizes). */
typedef struct ref_pair {
  double coverage, overlap, similarity, agreement;
  int64_t inter, uni;
} ref_pair;

static ref_pair reference(const uint8_t *a, const uint8_t *b, int64_t n) {
  ref_pair r = {0};
  double ma = 0, mb = 0, mab = 0;
  int64_t same = 0;
  for (int64_t s = 0; s < n; s++) {
    r.inter += a[s] & b[s];
    r.uni += a[s] | b[s];
    same += a[s] == b[s];
    ma += a[s];
    mb += b[s];
    mab += a[s] * b[s];
  }
  ma /= (double)n;
  mb /= (double)n;
  mab /= (double)n;
  r.coverage = (double)r.uni / (double)n;
  r.overlap = r.uni ? (double)r.inter / (double)r.uni : 1.0;
  r.agreement = (double)same / (double)n;
  double va = ma - ma * ma, vb = mb - mb * mb; /* variances of 0/1 vectors */
  if (va <= 0 || vb <= 0) r.similarity = same == n ? 1.0 : 0.0;
  else r.similarity = (mab - ma * mb) / sqrt(va * vb);
  return r;
}

static void check_against_reference(int n_models, int64_t n, uint8_t **patterns) {
  loom_error err = {0};
  loom_ensemble *e = loom_ensemble_from_patterns(n_models, n, (const uint8_t *const *)patterns, &err);
  if (!e) g_error("%s", err.message);
  g_assert_cmpint(loom_ensemble_n_models(e), ==, n_models);
  g_assert_cmpint(loom_ensemble_n_samples(e), ==, n);
  for (int m = 0; m < n_models; m++) {
    int64_t c = 0;
    for (int64_t s = 0; s < n; s++) c += patterns[m][s] != 0;
    g_assert_cmpint(loom_ensemble_correct_count(e, m), ==, c);
    g_assert_cmpfloat(loom_ensemble_accuracy(e, m), ==, (double)c / (double)n);
  }
  int best_a = -1, best_b = -1;
  ref_pair best = {0};
  for (int a = 0; a < n_models; a++)
    for (int b = a + 1; b < n_models; b++) {
      ref_pair r = reference(patterns[a], patterns[b], n);
      loom_ensemble_pair p = loom_ensemble_pair_of(e, b, a); /* either order */
      g_assert_cmpint(p.a, ==, a);
      g_assert_cmpint(p.b, ==, b);
      g_assert_cmpint(p.both, ==, r.inter);
      g_assert_cmpint(p.both + p.only_a + p.only_b, ==, r.uni);
      g_assert_cmpint(p.both + p.only_a + p.only_b + p.neither, ==, n);
      g_assert_cmpfloat(p.coverage, ==, r.coverage);
      g_assert_cmpfloat(p.overlap, ==, r.overlap);
      g_assert_cmpfloat(p.agreement, ==, r.agreement);
      g_assert_cmpfloat_with_epsilon(p.similarity, r.similarity, 1e-12);
      /* the documented rule by brute force: coverage, then less alike, then first */
      if (best_a < 0 || r.uni > best.uni || (r.uni == best.uni && r.similarity < best.similarity - 1e-12)) {
        best = r;
        best_a = a;
        best_b = b;
      }
    }
  loom_ensemble_pair bp = loom_ensemble_best_pair(e);
  g_assert_cmpint(bp.a, ==, best_a);
  g_assert_cmpint(bp.b, ==, best_b);
  loom_ensemble_free(e);
}

static void test_figures(void) {
  enum { N_MODELS = 7, N = 1000 };
  uint8_t *p[N_MODELS];
  uint64_t x = 88172645463325252u; /* xorshift: patterns of different accuracies, partly correlated */
  for (int m = 0; m < N_MODELS; m++) p[m] = g_malloc(N);
  for (int64_t s = 0; s < N; s++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    bool hard = (x & 7) == 0; /* a shared hard sample: most models fail it */
    for (int m = 0; m < 4; m++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      double u = (double)(x >> 11) / 9007199254740992.0;
      p[m][s] = u < (hard ? 0.2 : 0.6 + 0.1 * m);
    }
    p[4][s] = 1;                    /* always right: constant vector */
    p[5][s] = 0;                    /* never right */
    p[6][s] = (uint8_t)!p[0][s];    /* exactly complementary to model 0 */
  }
  check_against_reference(N_MODELS, N, p);
  /* (0, 6) and every pair with model 4 cover everything; 4 is constant, so
   * its pairs have similarity 0, while phi(0, 6) = -1: (0, 6) wins the tie. */
  loom_error err = {0};
  loom_ensemble *e = loom_ensemble_from_patterns(N_MODELS, N, (const uint8_t *const *)p, &err);
  loom_ensemble_pair best = loom_ensemble_best_pair(e);
  g_assert_cmpint(best.a, ==, 0);
  g_assert_cmpint(best.b, ==, 6);
  g_assert_cmpfloat(best.coverage, ==, 1.0);
  g_assert_cmpfloat(best.similarity, ==, -1.0);
  g_assert_cmpfloat(best.overlap, ==, 0.0);
  /* constant vectors: equal → 1, else 0; two never-right models overlap 1 (empty sets) */
  g_assert_cmpfloat(loom_ensemble_pair_of(e, 4, 5).similarity, ==, 0.0);
  g_assert_cmpfloat(loom_ensemble_pair_of(e, 1, 4).similarity, ==, 0.0);
  loom_ensemble_free(e);
  uint8_t *twice[2] = {p[5], p[5]};
  e = loom_ensemble_from_patterns(2, N, (const uint8_t *const *)twice, &err);
  g_assert_cmpfloat(loom_ensemble_pair_of(e, 0, 1).similarity, ==, 1.0);
  g_assert_cmpfloat(loom_ensemble_pair_of(e, 0, 1).overlap, ==, 1.0);
  g_assert_cmpint(loom_ensemble_pair_of(e, 0, 0).a, ==, -1);
  g_assert_cmpint(loom_ensemble_pair_of(e, 0, 2).a, ==, -1);
  loom_ensemble_free(e);
  /* a tie on coverage and similarity goes to the first pair */
  uint8_t *same[3] = {p[1], p[1], p[1]};
  e = loom_ensemble_from_patterns(3, N, (const uint8_t *const *)same, &err);
  g_assert_cmpint(loom_ensemble_best_pair(e).a, ==, 0);
  g_assert_cmpint(loom_ensemble_best_pair(e).b, ==, 1);
  loom_ensemble_free(e);
  e = loom_ensemble_from_patterns(1, N, (const uint8_t *const *)p, &err);
  g_assert_nonnull(e);
  g_assert_cmpint(loom_ensemble_best_pair(e).a, ==, -1);
  loom_ensemble_free(e);
  g_assert_null(loom_ensemble_from_patterns(0, N, (const uint8_t *const *)p, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_INVALID);
  for (int m = 0; m < N_MODELS; m++) g_free(p[m]);
}

/* The success pattern of a network, recomputed here: one forward pass of
 * the whole set and the rule written out per loss. */
static uint8_t *pattern_by_hand(loom_net *net, const loom_dataset *ds, bool logits) {
  loom_error err = {0};
  loom_shape os = loom_net_output_shape(net);
  int64_t w = loom_shape_numel(&os);
  float *y = g_new(float, ds->n * w);
  loom_ctx ctx = {0};
  g_assert_cmpint(loom_net_forward(net, &ctx, ds->inputs, ds->n, y, &err), ==, 0);
  uint8_t *p = g_malloc(ds->n);
  for (int64_t s = 0; s < ds->n; s++) {
    const float *row = y + s * w;
    int64_t pick;
    if (w == 1) {
      pick = row[0] > (logits ? 0.0f : 0.5f);
    } else {
      pick = 0;
      for (int64_t k = 1; k < w; k++)
        if (row[k] > row[pick]) pick = k;
    }
    p[s] = pick == ds->labels[s];
  }
  g_free(y);
  return p;
}

static void check_network(loom_net *net, const loom_dataset *ds, bool logits) {
  loom_error err = {0};
  uint8_t *got = g_malloc(ds->n);
  g_assert_cmpint(loom_ensemble_correct(net, NULL, ds, got, &err), ==, 0);
  uint8_t *want = pattern_by_hand(net, ds, logits);
  int64_t right = 0;
  for (int64_t s = 0; s < ds->n; s++) {
    g_assert_cmpint(got[s], ==, want[s]);
    right += got[s];
  }
  /* and the same accuracy `loom eval` reports */
  loom_loss_spec spec;
  g_assert_cmpint(loom_train_pick_loss(net, ds, &spec, &err), ==, 0);
  loom_eval_result r;
  g_assert_cmpint(loom_evaluate(net, NULL, ds, &spec, 64, &r, &err), ==, 0);
  g_assert_cmpint(r.correct, ==, right);
  g_free(got);
  g_free(want);
}

static void test_patterns(void) {
  loom_error err = {0};
  loom_dataset *spiral = loom_gen_spiral(150, 3, 0.1, 5, &err); /* 450 samples: two batches */
  g_assert_nonnull(spiral);
  int64_t hidden[] = {12};
  loom_net *a = tt_mlp(2, hidden, 1, "tanh", 3, NULL, 1);
  loom_net *b = tt_mlp(2, hidden, 1, "relu", 3, NULL, 2);
  check_network(a, spiral, true);
  check_network(b, spiral, true);
  /* two classes through one logit (bce), and through a sigmoid (mse at 0.5) */
  loom_dataset *xor = loom_gen_xor(300, 0.1, 3, &err);
  loom_net *x = tt_mlp(2, hidden, 1, "tanh", 1, NULL, 3);
  check_network(x, xor, true);
  loom_net *xs = tt_mlp(2, hidden, 1, "tanh", 1, NULL, 3);
  g_assert_cmpint(loom_net_resize(xs, 1, 1, 4, 1, &err), ==, 0);
  g_assert_cmpint(loom_net_place(xs, (loom_coord){0, 0, 3, 0}, loom_layer_new_by_name("sigmoid", &err), &err), ==, 0);
  check_network(xs, xor, false);

  /* evaluate = correct per model + from_patterns */
  loom_net *nets[] = {a, b};
  loom_ensemble *e = loom_ensemble_evaluate(nets, 2, NULL, spiral, &err);
  g_assert_nonnull(e);
  uint8_t *pa = pattern_by_hand(a, spiral, true), *pb = pattern_by_hand(b, spiral, true);
  g_assert_cmpmem(loom_ensemble_pattern(e, 0), spiral->n, pa, spiral->n);
  g_assert_cmpmem(loom_ensemble_pattern(e, 1), spiral->n, pb, spiral->n);
  ref_pair r = reference(pa, pb, spiral->n);
  g_assert_cmpfloat(loom_ensemble_pair_of(e, 0, 1).coverage, ==, r.coverage);
  loom_ensemble_free(e);

  /* models of other sizes: a clear error naming the model */
  loom_net *mixed[] = {a, x};
  g_assert_null(loom_ensemble_evaluate(mixed, 2, NULL, spiral, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_SHAPE);
  g_assert_nonnull(strstr(err.message, "model 1"));
  g_assert_nonnull(strstr(err.message, "must agree"));
  /* numeric targets have no right or wrong */
  loom_dataset *sine = loom_gen_sine(50, 2, 0.0, 1, &err);
  uint8_t *tmp = g_malloc(sine->n);
  g_assert_cmpint(loom_ensemble_correct(x, NULL, sine, tmp, &err), ==, LOOM_ERR_INVALID);
  g_assert_nonnull(strstr(err.message, "class labels"));
  /* the wrong input width */
  loom_dataset *clusters = loom_gen_clusters(40, 3, 5, 0.1, 1, &err);
  g_assert_cmpint(loom_ensemble_correct(a, NULL, clusters, tmp, &err), ==, LOOM_ERR_SHAPE);
  g_free(tmp);
  g_free(pa);
  g_free(pb);
  loom_dataset_free(clusters);
  loom_dataset_free(sine);
  loom_dataset_free(spiral);
  loom_dataset_free(xor);
  loom_net_free(a);
  loom_net_free(b);
  loom_net_free(x);
  loom_net_free(xs);
}

/* A systolic network is refused with the reason, not with a complaint about
 * its feedback link (which systolic execution allows). */
static void test_systolic_refused(void) {
  loom_error err = {0};
  loom_net *fb = NULL;
  g_assert_cmpint(loom_example_build("feedback", &fb, &err), ==, 0);
  loom_dataset *ds = loom_gen_clusters(10, 2, 4, 0.4, 1, &err);
  uint8_t correct[10];
  g_assert_cmpint(loom_ensemble_correct(fb, NULL, ds, correct, &err), ==, LOOM_ERR_INVALID);
  g_assert_nonnull(strstr(err.message, "runs systolically"));
  loom_dataset_free(ds);
  loom_net_free(fb);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/ensemble/figures", test_figures);
  g_test_add_func("/ensemble/patterns", test_patterns);
  g_test_add_func("/ensemble/systolic-refused", test_systolic_refused);
  return g_test_run();
}
