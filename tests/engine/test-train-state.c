/* Training-state checkpoints (loom_trainer_export_state / _import_state):
 * pause → save → reopen → resume continues bit-identically to an
 * uninterrupted run (backprop with Adam, SGD with momentum, RMSprop, and
 * tween; at epoch boundaries and mid-epoch; weights through the model file),
 * hostile blobs are refused with clear errors and leave the trainer as it
 * was, and loom_trainer_set_config changes hyperparameters live while
 * refusing the fixed fields. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "train-test-util.h"

#define N_STEPS 17 /* 5 batches per epoch: 3 epochs and 2 steps */

static loom_dataset *train_data(void) { return loom_gen_spiral(40, 2, 0.05, 1, NULL); }
static loom_dataset *test_data(void) { return loom_gen_spiral(20, 2, 0.05, 2, NULL); }

static loom_net *make_net(int64_t width) {
  int64_t hidden[2] = {width, 6};
  return tt_mlp(2, hidden, 2, "tanh", 2, NULL, 3);
}

static loom_train_config base_config(void) {
  loom_train_config c = loom_train_config_default();
  c.batch_size = 16;
  c.epochs = 5;
  c.seed = 11;
  c.patience = 4; /* keeps the best epoch's weights: the BEST section */
  c.restore_best = true;
  c.schedule = loom_schedule_constant(0.02);
  return c;
}

static loom_train_config config_named(const char *name) {
  loom_train_config c = base_config();
  if (strcmp(name, "sgd-momentum") == 0) {
    c.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
    c.optim.momentum = 0.9;
    c.optim.weight_decay = 1e-3;
    c.clip_norm = 1.0;
  } else if (strcmp(name, "rmsprop") == 0) {
    c.optim = loom_optim_defaults(LOOM_OPTIM_RMSPROP);
    c.optim.momentum = 0.5;
    c.optim.centered = true;
    c.schedule = loom_schedule_constant(0.005);
  } else if (strcmp(name, "tween") == 0) {
    c.method = LOOM_TRAIN_TWEEN;
    c.schedule = loom_schedule_constant(0.1);
    c.tween.warmup_steps = 2;
  } else {
    g_assert_cmpstr(name, ==, "adam");
    c.optim.amsgrad = true;
  }
  return c;
}

static void weights_equal(loom_net *a, loom_net *b) {
  g_assert_cmpint(loom_net_n_layers(a), ==, loom_net_n_layers(b));
  for (int64_t i = 0; i < loom_net_n_layers(a); i++) {
    loom_layer *la = loom_net_layer_at(a, loom_net_layer_coord(a, i));
    loom_layer *lb = loom_net_layer_at(b, loom_net_layer_coord(b, i));
    g_assert_cmpint(loom_layer_n_weights(la), ==, loom_layer_n_weights(lb));
    for (int t = 0; t < loom_layer_n_weights(la); t++) {
      loom_weights *wa = loom_layer_weights(la, t), *wb = loom_layer_weights(lb, t);
      g_assert_cmpint(loom_weights_count(wa), ==, loom_weights_count(wb));
      g_assert_true(memcmp(loom_weights_master_const(wa), loom_weights_master_const(wb),
                           (size_t)loom_weights_count(wa) * sizeof(float)) == 0);
    }
  }
}

static void step_ok(loom_trainer *tr, double *loss) {
  loom_error err = {0};
  loom_step_stats st;
  if (loom_trainer_step(tr, &st, &err)) g_error("step: %s", err.message);
  *loss = st.loss;
}

/* The weights of `net` through the model file, as a reopened document has them. */
static loom_net *reopen(const loom_net *net) {
  loom_error err = {0};
  size_t len = 0;
  char *json = loom_model_to_json(net, &len, &err);
  g_assert_nonnull(json);
  loom_net *back = NULL;
  if (loom_model_load_data(json, len, "checkpoint", LOOM_MODEL_STRICT, &back, &err)) g_error("reload: %s", err.message);
  free(json);
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(back, loom_net_seed(net), &diags), ==, 0);
  free(diags);
  return back;
}

static void check_resume(const char *name, int k) {
  loom_error err = {0};
  loom_train_config cfg = config_named(name);
  loom_dataset *train = train_data(), *test = test_data();
  double ref[N_STEPS], got[N_STEPS];

  loom_net *a = make_net(8);
  loom_trainer *ta = loom_trainer_new(a, train, test, &cfg, NULL, &err);
  g_assert_nonnull(ta);
  for (int i = 0; i < N_STEPS; i++) step_ok(ta, &ref[i]);

  loom_net *b = make_net(8);
  loom_trainer *tb = loom_trainer_new(b, train, test, &cfg, NULL, &err);
  g_assert_nonnull(tb);
  for (int i = 0; i < k; i++) step_ok(tb, &got[i]);
  void *blob = NULL;
  size_t len = 0;
  g_assert_cmpint(loom_trainer_export_state(tb, &blob, &len, &err), ==, 0);
  loom_net *c = reopen(b);
  loom_trainer_free(tb);
  loom_net_free(b);

  loom_trainer *tc = loom_trainer_new(c, train, test, &cfg, NULL, &err);
  g_assert_nonnull(tc);
  if (loom_trainer_import_state(tc, blob, len, &err)) g_error("%s, k=%d: import: %s", name, k, err.message);
  g_assert_cmpint(loom_trainer_steps(tc), ==, k);
  g_assert_cmpint(loom_trainer_epoch(tc), ==, k / loom_trainer_batches_per_epoch(tc));
  for (int i = k; i < N_STEPS; i++) step_ok(tc, &got[i]);
  if (memcmp(ref, got, sizeof ref) != 0)
    for (int i = 0; i < N_STEPS; i++)
      if (ref[i] != got[i]) g_error("%s, k=%d: step %d loss %.17g, uninterrupted %.17g", name, k, i, got[i], ref[i]);
  weights_equal(a, c);
  g_assert_cmpint(loom_trainer_best_epoch(ta), ==, loom_trainer_best_epoch(tc));
  g_assert_cmpint(loom_trainer_epoch(ta), ==, loom_trainer_epoch(tc));
  /* the best epoch's weights came along: restoring them gives the same network */
  g_assert_cmpint(loom_trainer_restore_best(ta, &err), ==, 0);
  g_assert_cmpint(loom_trainer_restore_best(tc, &err), ==, 0);
  weights_equal(a, c);

  free(blob);
  loom_trainer_free(ta);
  loom_trainer_free(tc);
  loom_net_free(a);
  loom_net_free(c);
  loom_dataset_free(train);
  loom_dataset_free(test);
}

static void test_resume(gconstpointer data) {
  const char *name = data;
  const int ks[] = {1, 5, 7, 13}; /* 5 and the end of an epoch; 7 and 13 mid-epoch */
  for (size_t i = 0; i < G_N_ELEMENTS(ks); i++) check_resume(name, ks[i]);
}

/* ---- hostile blobs -------------------------------------------------------- */

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/* Re-seals a modified blob (payload length and checksum) so that the parser
 * looks past the header. */
static void reseal(uint8_t *p, size_t len) {
  uint64_t payload = len - 32, sum = fnv1a(p + 32, len - 32);
  for (int i = 0; i < 8; i++) {
    p[16 + i] = (uint8_t)(payload >> (8 * i));
    p[24 + i] = (uint8_t)(sum >> (8 * i));
  }
}

static size_t find_tag(const uint8_t *p, size_t len, const char *tag) {
  for (size_t i = 32; i + 4 <= len; i++)
    if (memcmp(p + i, tag, 4) == 0) return i;
  g_error("no section %s", tag);
}

typedef struct fixture {
  loom_dataset *train, *test;
  loom_train_config cfg;
  void *blob;
  size_t len;
} fixture;

static void fixture_init(fixture *f) {
  loom_error err = {0};
  f->train = train_data();
  f->test = test_data();
  f->cfg = config_named("adam");
  loom_net *net = make_net(8);
  loom_trainer *tr = loom_trainer_new(net, f->train, f->test, &f->cfg, NULL, &err);
  double loss;
  for (int i = 0; i < 7; i++) step_ok(tr, &loss);
  g_assert_cmpint(loom_trainer_export_state(tr, &f->blob, &f->len, &err), ==, 0);
  loom_trainer_free(tr);
  loom_net_free(net);
}

static void fixture_clear(fixture *f) {
  free(f->blob);
  loom_dataset_free(f->train);
  loom_dataset_free(f->test);
}

/* Imports `blob` into a fresh trainer: expects failure with `needle` in the
 * message (NULL: any message), then checks that the trainer still trains
 * exactly like one that never saw the blob. */
static void expect_refused(fixture *f, const loom_train_config *cfg, int64_t width, const void *blob, size_t len,
                           const char *needle) {
  loom_error err = {0};
  loom_net *n1 = make_net(width), *n2 = make_net(width);
  loom_trainer *t1 = loom_trainer_new(n1, f->train, f->test, cfg, NULL, &err);
  loom_trainer *t2 = loom_trainer_new(n2, f->train, f->test, cfg, NULL, &err);
  g_assert_nonnull(t1);
  g_assert_nonnull(t2);
  int rc = loom_trainer_import_state(t1, blob, len, &err);
  g_assert_cmpint(rc, !=, 0);
  g_assert_cmpint(err.code, ==, rc);
  g_assert_cmpuint(strlen(err.message), >, 10);
  if (needle && !strstr(err.message, needle)) g_error("“%s” does not mention “%s”", err.message, needle);
  g_assert_cmpint(loom_trainer_steps(t1), ==, 0);
  for (int i = 0; i < 6; i++) {
    double l1, l2;
    step_ok(t1, &l1);
    step_ok(t2, &l2);
    g_assert_true(memcmp(&l1, &l2, sizeof l1) == 0);
  }
  weights_equal(n1, n2);
  loom_trainer_free(t1);
  loom_trainer_free(t2);
  loom_net_free(n1);
  loom_net_free(n2);
}

static void test_hostile(void) {
  fixture f;
  fixture_init(&f);
  uint8_t *p = g_memdup2(f.blob, f.len);
  const size_t cuts[] = {0, 7, 31, 32, 40, f.len / 2, f.len - 1};
  for (size_t i = 0; i < G_N_ELEMENTS(cuts); i++) expect_refused(&f, &f.cfg, 8, p, cuts[i], NULL);
  /* a cut blob re-sealed: the sections themselves run short */
  for (size_t cut = 40; cut < f.len; cut += f.len / 7) {
    uint8_t *q = g_memdup2(f.blob, cut);
    reseal(q, cut);
    expect_refused(&f, &f.cfg, 8, q, cut, "training state");
    g_free(q);
  }
  memcpy(p, f.blob, f.len);
  p[0] ^= 0x20;
  expect_refused(&f, &f.cfg, 8, p, f.len, "not a Loom training state");
  memcpy(p, f.blob, f.len);
  p[8] = 2;
  expect_refused(&f, &f.cfg, 8, p, f.len, "version 2");
  memcpy(p, f.blob, f.len);
  p[f.len - 3] ^= 1;
  expect_refused(&f, &f.cfg, 8, p, f.len, "checksum");
  /* a size in the optimizer section that disagrees with the network */
  memcpy(p, f.blob, f.len);
  size_t optm = find_tag(p, f.len, "OPTM");
  p[optm + 16 + 8] += 1; /* tensor 0's size: 2×8 = 16 → 17 */
  reseal(p, f.len);
  expect_refused(&f, &f.cfg, 8, p, f.len, "optimizer state for tensor 0 of slot (0,0,0,0) has 17 values, the network has 16");
  /* a network of another size */
  expect_refused(&f, &f.cfg, 9, f.blob, f.len, "tensor 0 of slot (0,0,0,0) has 16 values in the training state, the network has 18");
  /* another configuration */
  loom_train_config other = f.cfg;
  other.batch_size = 8;
  expect_refused(&f, &other, 8, f.blob, f.len, "batch_size 16, this trainer has 8");
  other = f.cfg;
  other.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  expect_refused(&f, &other, 8, f.blob, f.len, "optim.kind adam, this trainer has sgd");
  other = f.cfg;
  other.seed = 12;
  expect_refused(&f, &other, 8, f.blob, f.len, "seed 11");
  other = f.cfg;
  other.method = LOOM_TRAIN_TWEEN;
  expect_refused(&f, &other, 8, f.blob, f.len, "method backprop, this trainer has tween");

  /* random bytes: raw, behind a valid header, and a valid blob with bytes
   * changed (re-sealed); each either imports or fails cleanly */
  GRand *r = g_rand_new_with_seed(5);
  loom_error err = {0};
  for (int it = 0; it < 300; it++) {
    memcpy(p, f.blob, f.len);
    size_t len = f.len;
    if (it % 3 == 0) {
      len = (size_t)g_rand_int_range(r, 0, (gint32)f.len + 1);
      for (size_t i = 0; i < len; i++) p[i] = (uint8_t)g_rand_int(r);
      if (it % 2 && len >= 32) reseal(p, len);
    } else {
      int flips = g_rand_int_range(r, 1, 4);
      for (int i = 0; i < flips; i++) p[g_rand_int_range(r, 32, (gint32)f.len)] = (uint8_t)g_rand_int(r);
      if (it % 3 == 1) reseal(p, len);
    }
    loom_net *net = make_net(8);
    loom_trainer *tr = loom_trainer_new(net, f.train, f.test, &f.cfg, NULL, &err);
    if (loom_trainer_import_state(tr, p, len, &err)) g_assert_cmpuint(strlen(err.message), >, 10);
    loom_trainer_free(tr);
    loom_net_free(net);
  }
  g_rand_free(r);
  g_free(p);
  fixture_clear(&f);
}

/* ---- live configuration ---------------------------------------------------- */

static void refused_live(loom_trainer *tr, loom_train_config c, const char *field) {
  loom_error err = {0};
  loom_train_config before = *loom_trainer_config(tr);
  g_assert_cmpint(loom_trainer_set_config(tr, &c, &err), ==, LOOM_ERR_INVALID);
  if (!strstr(err.message, field)) g_error("“%s” does not name %s", err.message, field);
  g_assert_true(memcmp(&before, loom_trainer_config(tr), sizeof before) == 0);
}

static void test_set_config(void) {
  loom_error err = {0};
  loom_dataset *train = train_data(), *test = test_data();
  loom_train_config cfg = config_named("adam");
  cfg.epochs = 1;
  loom_train_config changed = cfg;
  changed.schedule = loom_schedule_constant(0.004);
  changed.optim.beta1 = 0.8;
  changed.optim.weight_decay = 1e-2;
  changed.clip_norm = 0.5;
  changed.epochs = 3;

  /* A: 3 steps, then the new hyperparameters; B: the same with an export,
   * a reopen and an import after the change; C: set_config with the same
   * configuration changes nothing (the state is kept, not reset). */
  double la[10], lb[10], lc[10], ld[10];
  loom_net *na = make_net(8), *nb = make_net(8), *nc = make_net(8), *nd = make_net(8);
  loom_trainer *ta = loom_trainer_new(na, train, test, &cfg, NULL, &err);
  loom_trainer *tb = loom_trainer_new(nb, train, test, &cfg, NULL, &err);
  loom_trainer *tc = loom_trainer_new(nc, train, test, &cfg, NULL, &err);
  loom_trainer *td = loom_trainer_new(nd, train, test, &cfg, NULL, &err);
  for (int i = 0; i < 3; i++) {
    step_ok(ta, &la[i]);
    step_ok(tb, &lb[i]);
    step_ok(tc, &lc[i]);
    step_ok(td, &ld[i]);
  }
  refused_live(ta, (loom_train_config){0}, "batch_size"); /* invalid as a whole: validation names the field */
  loom_train_config bad = cfg;
  bad.batch_size = 8;
  refused_live(ta, bad, "batch_size");
  bad = cfg;
  bad.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  refused_live(ta, bad, "optim.kind");
  bad = cfg;
  bad.seed = 99;
  refused_live(ta, bad, "seed");
  bad = cfg;
  bad.shuffle = false;
  refused_live(ta, bad, "shuffle");
  bad = cfg;
  bad.method = LOOM_TRAIN_TWEEN;
  refused_live(ta, bad, "method");
  bad = cfg;
  bad.loss.kind = LOOM_LOSS_MSE;
  refused_live(ta, bad, "loss.kind");
  bad = cfg;
  bad.optim.beta1 = 1.5;
  refused_live(ta, bad, "beta1");

  g_assert_cmpint(loom_trainer_set_config(ta, &changed, &err), ==, 0);
  g_assert_cmpint(loom_trainer_set_config(tb, &changed, &err), ==, 0);
  g_assert_cmpint(loom_trainer_set_config(tc, &cfg, &err), ==, 0);
  void *blob = NULL;
  size_t len = 0;
  g_assert_cmpint(loom_trainer_export_state(tb, &blob, &len, &err), ==, 0);
  loom_net *nb2 = reopen(nb);
  loom_trainer_free(tb);
  /* a trainer made with the original configuration takes the live fields from the blob */
  tb = loom_trainer_new(nb2, train, test, &cfg, NULL, &err);
  g_assert_cmpint(loom_trainer_import_state(tb, blob, len, &err), ==, 0);
  g_assert_cmpfloat(loom_trainer_config(tb)->optim.beta1, ==, 0.8);
  free(blob);
  for (int i = 3; i < 10; i++) {
    loom_step_stats st;
    g_assert_cmpint(loom_trainer_step(ta, &st, &err), ==, 0);
    la[i] = st.loss;
    g_assert_cmpfloat(st.lr, ==, 0.004);
    step_ok(tb, &lb[i]);
    if (i < 5) step_ok(tc, &lc[i]); /* C and D have 1 epoch of 5 steps */
    if (i < 5) step_ok(td, &ld[i]);
  }
  g_assert_true(memcmp(la, lb, sizeof la) == 0);
  weights_equal(na, nb2);
  /* C is D, uninterrupted, for the first epoch: set_config kept Adam's moments */
  g_assert_true(memcmp(lc, ld, 5 * sizeof *lc) == 0);
  /* and A's change mattered */
  g_assert_true(memcmp(la + 3, lc + 3, 2 * sizeof *la) != 0);

  /* epochs: D (1 epoch) finished at step 5; raising epochs continues it */
  g_assert_true(loom_trainer_finished(td));
  loom_train_config more = cfg;
  more.epochs = 2;
  g_assert_cmpint(loom_trainer_set_config(td, &more, &err), ==, 0);
  g_assert_false(loom_trainer_finished(td));
  for (int i = 5; i < 10; i++) step_ok(td, &ld[i]);
  g_assert_true(loom_trainer_finished(td));
  g_assert_cmpint(loom_trainer_steps(td), ==, 10);

  loom_trainer_free(ta);
  loom_trainer_free(tb);
  loom_trainer_free(tc);
  loom_trainer_free(td);
  loom_net_free(na);
  loom_net_free(nb);
  loom_net_free(nb2);
  loom_net_free(nc);
  loom_net_free(nd);
  loom_dataset_free(train);
  loom_dataset_free(test);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_data_func("/train-state/resume/adam", "adam", test_resume);
  g_test_add_data_func("/train-state/resume/sgd-momentum", "sgd-momentum", test_resume);
  g_test_add_data_func("/train-state/resume/rmsprop", "rmsprop", test_resume);
  g_test_add_data_func("/train-state/resume/tween", "tween", test_resume);
  g_test_add_func("/train-state/hostile", test_hostile);
  g_test_add_func("/train-state/set-config", test_set_config);
  return g_test_run();
}
