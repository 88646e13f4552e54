/*
 * The training state of a run on the device (docs/gpu.md "The training
 * state on the device") and the multi-head losses on the device:
 *  - a device run paused, exported, taken up by a new trainer that imports
 *    the state, and continued ends bit for bit where the uninterrupted
 *    device run does (SGD with Nesterov momentum, Adam with amsgrad, AdamW,
 *    RMSprop centered with momentum, a Gumbel softmax drawing its noise by
 *    the step count), whether the state is imported before or after the
 *    device is chosen;
 *  - a CPU run's state continued on the device, and a device run's on the
 *    CPU, stay within the CPU/device training tolerance of the CPU run;
 *    loom_trainer_set_device after steps (either way) carries the state and
 *    gives the same bits as the export/import path;
 *  - a damaged state imported into a device run is refused and changes
 *    nothing;
 *  - multi_head_ce (label smoothing) and multi_head_nll (after a grid
 *    softmax), with a head mask whose masked labels are wrong or out of
 *    range, step for step against the CPU.
 */
#include "gpu-test.h"
#include "gpu/gpu-train-private.h"
#include "loom/loom.h"

static loom_gpu *gpu;

/* docs/gpu.md "Training on the device": the masters within WEIGHT_TOL of
 * each tensor's largest magnitude, the loss within 1e-5 relative. */
#define WEIGHT_TOL 2e-5
#define STEPS 20
#define PAUSE 9 /* in the second epoch of 7 batches (100 samples, batch 16) */

static loom_train_config config_for(loom_net *net, const loom_dataset *ds, loom_optim_kind kind) {
  loom_error err = {0};
  loom_train_config c = loom_train_config_default();
  c.optim = loom_optim_defaults(kind);
  if (kind == LOOM_OPTIM_SGD) {
    c.optim.momentum = 0.9;
    c.optim.nesterov = true;
    c.optim.weight_decay = 1e-3;
  }
  if (kind == LOOM_OPTIM_ADAM) c.optim.amsgrad = true;
  if (kind == LOOM_OPTIM_ADAMW) c.optim.weight_decay = 0.01;
  if (kind == LOOM_OPTIM_RMSPROP) {
    c.optim.momentum = 0.5;
    c.optim.centered = true;
  }
  /* as test-gpu-train.c: eps = 1e-3 keeps rounding noise from being amplified to ±lr */
  if (kind != LOOM_OPTIM_SGD) c.optim.eps = 1e-3;
  c.schedule = loom_schedule_constant(kind == LOOM_OPTIM_SGD ? 0.05 : 0.01);
  c.batch_size = 16;
  c.epochs = 1000;
  c.seed = 3;
  if (loom_train_pick_loss(net, ds, &c.loss, &err)) g_error("%s", err.message);
  return c;
}

typedef struct {
  loom_net *net;
  loom_trainer *tr;
  double loss[STEPS + 1]; /* by step number */
} run;

/* A trainer on a copy of `from`'s weights, on the device or the CPU. */
static run *run_new(loom_net *from, const loom_dataset *ds, const loom_train_config *cfg, bool device) {
  loom_error err = {0};
  run *r = g_new0(run, 1);
  r->net = loom_net_clone(from, &err);
  if (!r->net) g_error("%s", err.message);
  r->tr = loom_trainer_new(r->net, ds, NULL, cfg, NULL, &err);
  if (!r->tr) g_error("%s", err.message);
  if (device && loom_trainer_set_device(r->tr, gpu, &err)) g_error("%s", err.message);
  return r;
}

static void run_until(run *r, int64_t step) {
  loom_error err = {0};
  while (loom_trainer_steps(r->tr) < step) {
    loom_step_stats s;
    if (loom_trainer_step(r->tr, &s, &err)) g_error("step %lld: %s", (long long)s.step, err.message);
    r->loss[s.step] = s.loss;
  }
}

static void run_free(run *r) {
  loom_trainer_free(r->tr);
  loom_net_free(r->net);
  g_free(r);
}

static void *export_state(run *r, size_t *len) {
  loom_error err = {0};
  void *bytes = NULL;
  if (loom_trainer_export_state(r->tr, &bytes, len, &err)) g_error("export: %s", err.message);
  return bytes;
}

/* A new trainer on r's weights that imports r's state (before or after the
 * device is chosen: `device` 2 imports first, then moves to the device). */
static run *resumed(run *r, const loom_dataset *ds, const loom_train_config *cfg, int device) {
  loom_error err = {0};
  size_t len;
  void *state = export_state(r, &len);
  run *n = run_new(r->net, ds, cfg, device == 1);
  if (loom_trainer_import_state(n->tr, state, len, &err)) g_error("import: %s", err.message);
  if (device == 2 && loom_trainer_set_device(n->tr, gpu, &err)) g_error("%s", err.message);
  g_assert_cmpint(loom_trainer_steps(n->tr), ==, loom_trainer_steps(r->tr));
  g_assert_cmpint(loom_trainer_epoch(n->tr), ==, loom_trainer_epoch(r->tr));
  free(state);
  return n;
}

static bool weights_identical(loom_net *a, loom_net *b) {
  for (int64_t i = 0; i < loom_net_n_layers(a); i++) {
    loom_layer *la = loom_net_layer_at(a, loom_net_layer_coord(a, i));
    loom_layer *lb = loom_net_layer_at(b, loom_net_layer_coord(b, i));
    for (int t = 0; t < loom_layer_n_weights(la); t++) {
      loom_weights *wa = loom_layer_weights(la, t), *wb = loom_layer_weights(lb, t);
      if (memcmp(loom_weights_master_const(wa), loom_weights_master_const(wb),
                 (size_t)loom_weights_count(wa) * sizeof(float)))
        return false;
    }
  }
  return true;
}

/* The worst |a − b| / max|b| over every tensor. */
static double weights_distance(loom_net *a, loom_net *b) {
  double worst = 0;
  for (int64_t i = 0; i < loom_net_n_layers(a); i++) {
    loom_layer *la = loom_net_layer_at(a, loom_net_layer_coord(a, i));
    loom_layer *lb = loom_net_layer_at(b, loom_net_layer_coord(b, i));
    for (int t = 0; t < loom_layer_n_weights(la); t++) {
      loom_weights *wa = loom_layer_weights(la, t), *wb = loom_layer_weights(lb, t);
      const float *ma = loom_weights_master_const(wa), *mb = loom_weights_master_const(wb);
      double scale = 1e-30, diff = 0;
      for (int64_t k = 0; k < loom_weights_count(wa); k++) {
        scale = MAX(scale, fabs(mb[k]));
        diff = MAX(diff, fabs((double)ma[k] - (double)mb[k]));
      }
      worst = MAX(worst, diff / scale);
    }
  }
  return worst;
}

static void assert_same_run(const char *what, run *a, run *b, int from) {
  if (!weights_identical(a->net, b->net)) g_error("%s: the weights differ after %d steps", what, STEPS);
  for (int s = from; s <= STEPS; s++)
    if (memcmp(&a->loss[s], &b->loss[s], sizeof(double)))
      g_error("%s: step %d's loss is %.17g, uninterrupted %.17g", what, s, b->loss[s], a->loss[s]);
}

static void assert_close(const char *what, run *ref, run *r, int from) {
  double w = weights_distance(r->net, ref->net);
  if (!(w <= WEIGHT_TOL)) g_error("%s: the weights differ by %.3g of their largest (tolerance %g)", what, w, WEIGHT_TOL);
  for (int s = from; s <= STEPS; s++)
    if (!(fabs(r->loss[s] - ref->loss[s]) <= 1e-5 * fabs(ref->loss[s]) + 1e-7))
      g_error("%s: step %d's loss is %.9g, the CPU's %.9g", what, s, r->loss[s], ref->loss[s]);
  g_test_message("%s: worst weight difference %.3g of the largest (tolerance %g)", what, w, WEIGHT_TOL);
}

/* Device: STEPS uninterrupted = PAUSE, export, a new trainer imports, the rest. */
static void resume_on_device(const char *what, loom_net *net, loom_dataset *ds, loom_optim_kind kind) {
  loom_train_config cfg = config_for(net, ds, kind);
  run *whole = run_new(net, ds, &cfg, true), *first = run_new(net, ds, &cfg, true);
  run_until(whole, STEPS);
  run_until(first, PAUSE);
  for (int order = 1; order <= 2; order++) {
    run *rest = resumed(first, ds, &cfg, order);
    g_assert_true(loom_trainer_on_device(rest->tr));
    run_until(rest, STEPS);
    assert_same_run(what, whole, rest, PAUSE + 1);
    run_free(rest);
  }
  run_free(whole);
  run_free(first);
  loom_dataset_free(ds);
  loom_net_free(net);
}

static loom_net *example(const char *name) {
  loom_error err = {0};
  loom_net *net = NULL;
  if (loom_example_build(name, &net, &err)) g_error("%s", err.message);
  return net;
}

static loom_dataset *spiral(void) {
  loom_error err = {0};
  loom_dataset *ds = loom_gen_spiral(50, 2, 0.1, 7, &err);
  if (!ds) g_error("%s", err.message);
  return ds;
}

static void test_resume_sgd(void) { resume_on_device("spiral, sgd", example("spiral"), spiral(), LOOM_OPTIM_SGD); }
static void test_resume_adam(void) { resume_on_device("spiral, adam", example("spiral"), spiral(), LOOM_OPTIM_ADAM); }
static void test_resume_adamw(void) {
  resume_on_device("spiral, adamw", example("spiral"), spiral(), LOOM_OPTIM_ADAMW);
}
static void test_resume_rmsprop(void) {
  resume_on_device("spiral, rmsprop", example("spiral"), spiral(), LOOM_OPTIM_RMSPROP);
}
/* sparsemax, entmax15, a Gumbel softmax (noise by seed and step count) and a hierarchical softmax */
static void test_resume_gumbel(void) {
  resume_on_device("sparse family, adam", gpu_test_sparse_net(2, 2, false), spiral(), LOOM_OPTIM_ADAM);
}

/* CPU ↔ device: the state of one continued on the other, by export and
 * import or by loom_trainer_set_device after steps. */
static void test_cross_resume(void) {
  loom_error err = {0};
  loom_net *net = example("spiral");
  loom_dataset *ds = spiral();
  loom_train_config cfg = config_for(net, ds, LOOM_OPTIM_ADAM);
  run *cpu = run_new(net, ds, &cfg, false), *cpu_first = run_new(net, ds, &cfg, false);
  run *dev_first = run_new(net, ds, &cfg, true);
  run_until(cpu, STEPS);
  run_until(cpu_first, PAUSE);
  run_until(dev_first, PAUSE);
  /* CPU → device through a checkpoint */
  run *on_dev = resumed(cpu_first, ds, &cfg, 1);
  run_until(on_dev, STEPS);
  assert_close("CPU state resumed on the device", cpu, on_dev, PAUSE + 1);
  /* device → CPU through a checkpoint */
  run *on_cpu = resumed(dev_first, ds, &cfg, 0);
  g_assert_false(loom_trainer_on_device(on_cpu->tr));
  run_until(on_cpu, STEPS);
  assert_close("device state resumed on the CPU", cpu, on_cpu, PAUSE + 1);
  /* The same moves by loom_trainer_set_device: the same state, the same bits. */
  if (loom_trainer_set_device(cpu_first->tr, gpu, &err)) g_error("%s", err.message);
  run_until(cpu_first, STEPS);
  assert_same_run("CPU run moved to the device", on_dev, cpu_first, PAUSE + 1);
  if (loom_trainer_set_device(dev_first->tr, NULL, &err)) g_error("%s", err.message);
  g_assert_false(loom_trainer_on_device(dev_first->tr));
  run_until(dev_first, STEPS);
  assert_same_run("device run moved to the CPU", on_cpu, dev_first, PAUSE + 1);
  run_free(cpu);
  run_free(cpu_first);
  run_free(dev_first);
  run_free(on_dev);
  run_free(on_cpu);
  loom_dataset_free(ds);
  loom_net_free(net);
}

/* A damaged state, or one of another run, imported into a device run is
 * refused and changes nothing: the run goes on bit for bit as without it. */
static void test_bad_import(void) {
  loom_error err = {0};
  loom_net *net = example("spiral");
  loom_dataset *ds = spiral();
  loom_train_config cfg = config_for(net, ds, LOOM_OPTIM_ADAM);
  run *whole = run_new(net, ds, &cfg, true), *r = run_new(net, ds, &cfg, true), *other = run_new(net, ds, &cfg, true);
  run_until(whole, STEPS);
  run_until(r, PAUSE);
  run_until(other, 3);
  size_t len;
  uint8_t *state = export_state(r, &len);
  state[len - 1] ^= 0x40; /* a bit of the last optimizer value */
  g_assert_cmpint(loom_trainer_import_state(r->tr, state, len, &err), ==, LOOM_ERR_FORMAT);
  g_assert_nonnull(strstr(err.message, "checksum"));
  g_assert_cmpint(loom_trainer_import_state(r->tr, state, len / 2, &err), ==, LOOM_ERR_FORMAT);
  free(state);
  /* another run's state of another batch size is refused naming the field */
  loom_train_config c2 = cfg;
  c2.batch_size = 10;
  run *small = run_new(net, ds, &c2, true);
  run_until(small, 2);
  state = export_state(small, &len);
  g_assert_cmpint(loom_trainer_import_state(r->tr, state, len, &err), ==, LOOM_ERR_INVALID);
  g_assert_nonnull(strstr(err.message, "batch_size"));
  free(state);
  g_assert_true(loom_trainer_on_device(r->tr));
  g_assert_cmpint(loom_trainer_steps(r->tr), ==, PAUSE);
  run_until(r, STEPS);
  assert_same_run("after refused imports", whole, r, PAUSE + 1);
  run_free(whole);
  run_free(r);
  run_free(other);
  run_free(small);
  loom_dataset_free(ds);
  loom_net_free(net);
}

/* ---- multi-head losses --------------------------------------------------- */

enum { HEADS = 2, CLASSES = 3, IN = 3 };

/* Head 0 from the signs of x0 and x1, head 1 from x2; head 1 masked on odd
 * samples, where its label is wrong or out of range (never read). */
static loom_dataset *heads_data(int64_t n) {
  loom_error err = {0};
  loom_shape s = loom_shape_1d(IN);
  loom_dataset *ds = loom_dataset_new(n, &s, LOOM_TARGET_CLASS, HEADS, CLASSES, &err);
  if (!ds) g_error("%s", err.message);
  uint8_t *mask = g_new(uint8_t, n * HEADS);
  gpu_test_fill(ds->inputs, n * IN, -1, 1, 31);
  for (int64_t i = 0; i < n; i++) {
    const float *x = ds->inputs + i * IN;
    ds->labels[i * HEADS] = (x[0] > 0) + (x[1] > 0);
    ds->labels[i * HEADS + 1] = i % 2 == 0 ? (x[2] > 0 ? 2 : 0) : i % 4 == 1 ? -1 : 7;
    mask[i * HEADS] = 1;
    mask[i * HEADS + 1] = i % 2 == 0;
  }
  if (loom_dataset_set_head_mask(ds, mask, &err) || loom_dataset_validate(ds, &err)) g_error("%s", err.message);
  g_free(mask);
  return ds;
}

/* dense → tanh → dense to heads × classes logits, then (last) nothing or
 * a grid softmax (one distribution a head). */
enum { LOGITS, GRID };
static loom_net *heads_net(int last) {
  loom_error err = {0};
  loom_shape in = loom_shape_1d(IN);
  loom_layer *tail = gpu_test_layer("grid_softmax", 0, 0);
  if (last == GRID && (loom_layer_set_int(tail, "rows", HEADS, &err) || loom_layer_set_int(tail, "cols", CLASSES, &err)))
    g_error("%s", err.message);
  loom_layer *layers[] = {gpu_test_layer("dense", IN, 8), gpu_test_layer("tanh", 0, 0),
                          gpu_test_layer("dense", 8, HEADS * CLASSES), tail};
  if (last == LOGITS) loom_layer_free(tail);
  return gpu_test_net_of(&in, layers, last == LOGITS ? 3 : 4);
}

#define HEAD_STEPS 40

static void heads_parity(const char *what, int last, double smoothing, loom_optim_kind kind) {
  loom_net *net = heads_net(last);
  loom_dataset *ds = heads_data(100);
  loom_train_config cfg = config_for(net, ds, kind);
  bool nll = last != LOGITS;

  g_assert_cmpint(cfg.loss.kind, ==, nll ? LOOM_LOSS_MULTI_HEAD_NLL : LOOM_LOSS_MULTI_HEAD_CE);
  g_assert_cmpint(cfg.loss.heads, ==, HEADS);
  cfg.loss.label_smoothing = smoothing;
  run *cpu = run_new(net, ds, &cfg, false), *dev = run_new(net, ds, &cfg, true), *again = run_new(net, ds, &cfg, true);
  loom_error err = {0};
  double worst_w = 0, worst_l = 0;
  for (int s = 1; s <= HEAD_STEPS; s++) {
    loom_step_stats sc, sd, sa;
    if (loom_trainer_step(cpu->tr, &sc, &err) || loom_trainer_step(dev->tr, &sd, &err) ||
        loom_trainer_step(again->tr, &sa, &err))
      g_error("%s step %d: %s", what, s, err.message);
    double dl = fabs(sc.loss - sd.loss), tl = 1e-5 * fabs(sc.loss) + 1e-7;
    if (!(dl <= tl)) g_error("%s step %d: loss %.9g on the device, %.9g on the CPU", what, s, sd.loss, sc.loss);
    worst_l = MAX(worst_l, dl / tl);
    g_assert_cmpint(sc.correct, ==, sd.correct);
    g_assert_cmpint(sc.counted, ==, sd.counted);
    double w = weights_distance(dev->net, cpu->net);
    if (!(w <= WEIGHT_TOL))
      g_error("%s step %d: the weights differ by %.3g of their largest (tolerance %g)", what, s, w, WEIGHT_TOL);
    worst_w = MAX(worst_w, w);
    g_assert_cmpmem(&sa.loss, sizeof sa.loss, &sd.loss, sizeof sd.loss);
  }
  g_assert_true(weights_identical(dev->net, again->net));
  g_test_message("%s: %d steps, worst weight difference %.3g of the largest (tolerance %g), loss %.3f of its "
                 "tolerance",
                 what, HEAD_STEPS, worst_w, WEIGHT_TOL, worst_l);
  run_free(cpu);
  run_free(dev);
  run_free(again);
  loom_dataset_free(ds);
  loom_net_free(net);
}

static void test_multi_head_ce(void) { heads_parity("multi_head_ce", LOGITS, 0.0, LOOM_OPTIM_ADAM); }
static void test_multi_head_ce_smoothed(void) {
  heads_parity("multi_head_ce, label smoothing 0.1", LOGITS, 0.1, LOOM_OPTIM_SGD);
}
static void test_multi_head_nll(void) { heads_parity("multi_head_nll", GRID, 0.0, LOOM_OPTIM_ADAM); }
static void test_multi_head_nll_smoothed(void) {
  heads_parity("multi_head_nll, label smoothing 0.05", GRID, 0.05, LOOM_OPTIM_SGD);
}

/* The loss gradient alone against loom_loss_eval's, on chosen outputs:
 * logits far apart and tied (CE), probabilities of exactly 0, a denormal,
 * and the floats on both sides of the CPU's clamp at 1e-12 (NLL), masked
 * heads, every row of the last sample masked. CE: the softmax's tolerance
 * (1e-5 relative, docs/gpu.md); NLL: −q/p·inv in float32 is within 5 float32
 * roundings of the CPU's double, and exactly 0 where the CPU's is. */
static void loss_kernel(loom_loss_kind kind, double smoothing) {
  enum { B = 6, C = 3, W = HEADS * C };
  loom_error err = {0};
  loom_shape in = loom_shape_1d(W);
  loom_net *net = gpu_test_net_of(&in, (loom_layer *[]){gpu_test_layer("dense", W, W)}, 1);
  loom_train_config cfg = loom_train_config_default();
  cfg.loss = (loom_loss_spec){.kind = kind, .label_smoothing = smoothing, .heads = HEADS};
  gpu_train *t = gpu_train_new(gpu, net, B, &cfg, &err);
  if (!t) g_error("%s", err.message);
  float *y = t->gn->bufs[t->gn->out_buf].map;
  const float below = 9.99999996e-13f, above = 1.0000001e-12f; /* around the double 1e-12 */
  static const float logits[B * W] = {30, -30, 0, 1e4f, 1e4f, 0, -5, 2, 2, 0.5f, 0.25f, -1, 88, 87, -88, 0, 0, 0,
                                      1, 2, 3, 3, 2, 1, -1e4f, 0, 1e4f, 7, 7, 7, 4, 5, 6, 6, 5, 4};
  const float probs[B * W] = {0, 0.3f, 0.7f, 1e-12f, 0.5f, 0.5f, below, 0.25f, 0.75f, above, 0.5f, 0.5f,
                              1e-40f, 0.5f, 0.5f, 1, 0, 0, 0.2f, 0.3f, 0.5f, 0, 0, 1, 0.1f, 0, 0.9f,
                              0.6f, 0.4f, 0, 0.5f, 0.5f, 0, 0.3f, 0.3f, 0.4f};
  memcpy(y, kind == LOOM_LOSS_MULTI_HEAD_NLL ? probs : logits, sizeof logits);
  const int32_t labels[B * HEADS] = {0, 0, 0, 0, 2, 0, 1, 2, 0, 1, 99, -3};
  const uint8_t mask[B * HEADS] = {1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0};
  t->rows = B;
  if (gpu_train_head_labels(t, &cfg.loss, labels, mask, B, &err) || gpu_rec_begin(gpu, 2, &t->rec, &err) ||
      gpu_train_record_head_loss(t, &cfg.loss, &err) || gpu_rec_end(&t->rec, &err) || gpu_rec_submit(&t->rec, &err))
    g_error("%s", err.message);
  const float *dy = t->grads[t->gn->out_buf].map;
  float want[B * W];
  double loss;
  if (loom_loss_eval(&cfg.loss, y, B, W, labels, NULL, mask, &loss, want, &err)) g_error("%s", err.message);
  double worst = 0;
  for (int i = 0; i < B * W; i++) {
    double d = fabs((double)dy[i] - want[i]);
    double tol = kind == LOOM_LOSS_MULTI_HEAD_NLL ? 5 * 0x1p-24 * fabs(want[i]) : 1e-5 * fabs(want[i]) + 1e-9;
    if (want[i] == 0 ? dy[i] != 0 : !(d <= tol))
      g_error("%s: dy[%d] is %.9g on the device, %.9g on the CPU", loom_loss_name(kind), i, dy[i], want[i]);
    if (want[i] != 0) worst = MAX(worst, d / tol);
  }
  g_test_message("%s, smoothing %g: worst %.3f of the tolerance", loom_loss_name(kind), smoothing, worst);
  gpu_train_free(t);
  loom_net_free(net);
}

static void test_loss_kernel(void) {
  loss_kernel(LOOM_LOSS_MULTI_HEAD_CE, 0.0);
  loss_kernel(LOOM_LOSS_MULTI_HEAD_CE, 0.2);
  loss_kernel(LOOM_LOSS_MULTI_HEAD_NLL, 0.0);
  loss_kernel(LOOM_LOSS_MULTI_HEAD_NLL, 0.2);
}

/* A label out of range on an active head is refused before anything moves,
 * with the CPU loss's message. */
static void test_head_label_refused(void) {
  loom_error err = {0};
  loom_net *net = heads_net(LOGITS);
  loom_dataset *ds = heads_data(20);
  loom_train_config cfg = config_for(net, ds, LOOM_OPTIM_ADAM);
  cfg.shuffle = false;
  run *dev = run_new(net, ds, &cfg, true);
  /* after the trainer checked the data: sample 2's head 1 is active */
  ds->labels[2 * HEADS + 1] = 5;
  g_assert_cmpint(loom_trainer_step(dev->tr, NULL, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "multi_head_ce: sample 2, head 1: label 5 outside [0, 3)");
  g_assert_true(weights_identical(dev->net, net));
  g_assert_cmpint(loom_trainer_steps(dev->tr), ==, 0);
  run_free(dev);
  loom_dataset_free(ds);
  loom_net_free(net);
}

int main(int argc, char **argv) {
  gpu = gpu_test_init(&argc, &argv);
  g_test_add_func("/gpu/train-state/resume-sgd", test_resume_sgd);
  g_test_add_func("/gpu/train-state/resume-adam", test_resume_adam);
  g_test_add_func("/gpu/train-state/resume-adamw", test_resume_adamw);
  g_test_add_func("/gpu/train-state/resume-rmsprop", test_resume_rmsprop);
  g_test_add_func("/gpu/train-state/resume-gumbel", test_resume_gumbel);
  g_test_add_func("/gpu/train-state/cross-resume", test_cross_resume);
  g_test_add_func("/gpu/train-state/bad-import", test_bad_import);
  g_test_add_func("/gpu/train-state/multi-head-ce", test_multi_head_ce);
  g_test_add_func("/gpu/train-state/multi-head-ce-smoothed", test_multi_head_ce_smoothed);
  g_test_add_func("/gpu/train-state/multi-head-nll", test_multi_head_nll);
  g_test_add_func("/gpu/train-state/multi-head-nll-smoothed", test_multi_head_nll_smoothed);
  g_test_add_func("/gpu/train-state/loss-kernel", test_loss_kernel);
  g_test_add_func("/gpu/train-state/head-label-refused", test_head_label_refused);
  int rc = g_test_run();
  loom_gpu_free(gpu);
  return rc;
}
