/* Per-sample head masks of multi-head class data: carried through subsets,
 * splits and batches, passed to multi-head cross-entropy by the trainer, so a
 * masked head's label has no influence on training or on accuracy. */
#include "train-test-util.h"

enum { HEADS = 2, CLASSES = 3, IN = 3 };

/* Head 0 from the signs of x0 and x1, head 1 from x2. Head 1 is masked on
 * odd samples; with `scramble` those masked labels are wrong or out of range. */
static loom_dataset *heads_data(int64_t n, bool masked, bool scramble) {
  loom_error err = {0};
  loom_shape s = loom_shape_1d(IN);
  loom_dataset *ds = loom_dataset_new(n, &s, LOOM_TARGET_CLASS, HEADS, CLASSES, &err);
  g_assert_nonnull(ds);
  uint8_t *mask = g_new(uint8_t, n * HEADS);
  GRand *rng = g_rand_new_with_seed(5);
  for (int64_t i = 0; i < n; i++) {
    float *x = ds->inputs + i * IN;
    for (int j = 0; j < IN; j++) x[j] = (float)g_rand_double_range(rng, -1, 1);
    ds->labels[i * HEADS] = (x[0] > 0) + (x[1] > 0);
    ds->labels[i * HEADS + 1] = x[2] > 0 ? 2 : 0;
    mask[i * HEADS] = 1;
    mask[i * HEADS + 1] = i % 2 == 0;
    if (scramble && i % 2) ds->labels[i * HEADS + 1] = i % 4 == 1 ? -1 : (ds->labels[i * HEADS + 1] + 1) % CLASSES;
  }
  g_rand_free(rng);
  if (masked) g_assert_cmpint(loom_dataset_set_head_mask(ds, mask, &err), ==, 0);
  g_free(mask);
  g_assert_cmpint(loom_dataset_validate(ds, &err), ==, 0); /* masked labels are not checked */
  return ds;
}

typedef struct {
  double *losses;
  int64_t steps;
  float weights[IN * 8];
  loom_eval_result eval;
} run_result;

static run_result train_heads(const loom_dataset *train, const loom_dataset *test) {
  loom_error err = {0};
  int64_t hidden[1] = {8};
  loom_net *net = tt_mlp(IN, hidden, 1, "tanh", HEADS * CLASSES, NULL, 4);
  loom_train_config cfg = loom_train_config_default();
  g_assert_cmpint(loom_train_pick_loss(net, train, &cfg.loss, &err), ==, 0);
  g_assert_cmpint(cfg.loss.kind, ==, LOOM_LOSS_MULTI_HEAD_CE);
  g_assert_cmpint(cfg.loss.heads, ==, HEADS);
  cfg.schedule = loom_schedule_constant(0.05);
  cfg.epochs = 3;
  cfg.batch_size = 8;
  cfg.seed = 3;
  tt_result r = tt_train(net, train, test, &cfg, 1);
  run_result out = {.losses = r.losses, .steps = r.steps};
  memcpy(out.weights, loom_weights_master(loom_layer_weights(loom_net_layer_at(net, (loom_coord){0, 0, 0, 0}), 0)),
         sizeof out.weights);
  g_assert_cmpint(loom_evaluate(net, NULL, test, &cfg.loss, 16, &out.eval, &err), ==, 0);
  loom_net_free(net);
  return out;
}

static void test_masked_heads_do_not_train(void) {
  loom_dataset *clean = heads_data(96, true, false), *scrambled = heads_data(96, true, true);
  loom_dataset *unmasked = heads_data(96, false, false), *test = heads_data(40, true, true);
  run_result a = train_heads(clean, test), b = train_heads(scrambled, test), c = train_heads(unmasked, test);
  g_assert_cmpint(a.steps, ==, 3 * 12);
  g_assert_cmpint(b.steps, ==, a.steps);
  /* Wrong labels under the mask change nothing, bit for bit. */
  g_assert_true(memcmp(a.losses, b.losses, (size_t)a.steps * sizeof *a.losses) == 0);
  g_assert_true(memcmp(a.weights, b.weights, sizeof a.weights) == 0);
  /* The same heads unmasked do train: the mask is what kept them out. */
  g_assert_true(memcmp(a.weights, c.weights, sizeof a.weights) != 0);
  /* Accuracy counts the active heads only: 40 head-0 labels and 20 head-1 labels. */
  g_assert_cmpint(a.eval.counted, ==, 40 + 20);
  g_assert_cmpint(b.eval.counted, ==, 60);
  g_assert_cmpint(a.eval.correct, ==, b.eval.correct);
  g_free(a.losses);
  g_free(b.losses);
  g_free(c.losses);
  loom_dataset_free(clean);
  loom_dataset_free(scrambled);
  loom_dataset_free(unmasked);
  loom_dataset_free(test);
}

/* Subsets, splits and shuffled batches keep each sample's mask with it. */
static void test_mask_follows_samples(void) {
  loom_error err = {0};
  loom_dataset *all = heads_data(30, true, true);
  for (int64_t i = 0; i < all->n; i++) all->inputs[i * IN] = (float)i; /* the sample's own index */
  loom_dataset *train = NULL, *test = NULL;
  g_assert_cmpint(loom_dataset_split(all, 0.3, 9, &train, &test, &err), ==, 0);
  loom_dataset *parts[2] = {train, test};
  for (int p = 0; p < 2; p++) {
    g_assert_nonnull(parts[p]->head_mask);
    loom_batcher *batches = loom_batcher_new(parts[p], 4, true, false, 2, &err);
    g_assert_nonnull(batches);
    loom_batcher_set_epoch(batches, 1);
    int64_t seen = 0;
    for (int64_t k = 0; k < loom_batcher_n_batches(batches); k++) {
      loom_batch b;
      g_assert_cmpint(loom_batcher_get(batches, k, &b, &err), ==, 0);
      g_assert_nonnull(b.head_mask);
      for (int64_t i = 0; i < b.size; i++, seen++) {
        int64_t s = (int64_t)b.inputs[i * IN];
        g_assert_cmpint(b.head_mask[i * HEADS], ==, 1);
        g_assert_cmpint(b.head_mask[i * HEADS + 1], ==, s % 2 == 0);
        g_assert_cmpint(b.labels[i * HEADS + 1], ==, all->labels[s * HEADS + 1]);
      }
    }
    g_assert_cmpint(seen, ==, parts[p]->n);
    loom_batcher_free(batches);
  }
  loom_dataset *copy = loom_dataset_clone(test, &err);
  g_assert_true(memcmp(copy->head_mask, test->head_mask, (size_t)(test->n * HEADS)) == 0);
  g_assert_cmpint(loom_dataset_set_head_mask(copy, NULL, &err), ==, 0);
  g_assert_null(copy->head_mask);
  loom_dataset_free(copy);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_dataset_free(all);
}

static void test_mask_errors(void) {
  loom_error err = {0};
  uint8_t mask[4] = {1, 0, 1, 1};
  loom_dataset *sine = loom_gen_sine(4, 2, 0.0, 1, NULL);
  g_assert_cmpint(loom_dataset_set_head_mask(sine, mask, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "dataset: a head mask needs class targets, not target vectors");
  g_assert_null(sine->head_mask);
  loom_dataset *xor = loom_gen_xor(4, 0.0, 1, NULL);
  g_assert_cmpint(loom_dataset_set_head_mask(xor, mask, &err), ==, 0);
  g_assert_cmpint(loom_dataset_labels_to_vectors(xor, true, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "dataset: labels with a head mask do not convert to vectors");
  /* One head with a mask: multi-head cross-entropy with one head; cross-entropy would ignore the mask. */
  int64_t hidden[1] = {3};
  loom_net *net = tt_mlp(2, hidden, 1, "tanh", 2, NULL, 1);
  loom_loss_spec spec;
  g_assert_cmpint(loom_train_pick_loss(net, xor, &spec, &err), ==, 0);
  g_assert_cmpint(spec.kind, ==, LOOM_LOSS_MULTI_HEAD_CE);
  g_assert_cmpint(spec.heads, ==, 1);
  loom_train_config cfg = loom_train_config_default();
  cfg.loss.kind = LOOM_LOSS_CROSS_ENTROPY;
  g_assert_null(loom_trainer_new(net, xor, NULL, &cfg, NULL, &err));
  g_assert_cmpstr(err.message, ==,
                  "training data: the data has a head mask, which only the losses multi_head_ce and multi_head_nll use "
                  "(the loss is cross_entropy)");
  loom_net_free(net);
  loom_dataset_free(xor);
  loom_dataset_free(sine);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/train/head-mask/masked-heads-do-not-train", test_masked_heads_do_not_train);
  g_test_add_func("/train/head-mask/follows-samples", test_mask_follows_samples);
  g_test_add_func("/train/head-mask/errors", test_mask_errors);
  return g_test_run();
}
