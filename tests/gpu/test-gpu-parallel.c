/*
 * Parallel containers on the device beyond concat/add/avg — grid_scatter,
 * filter and route (gated mixtures of experts) — with branches that pass
 * their input through, and embeddings whose token indices a layer computed
 * or that sit in a container: the forward and every parameter gradient
 * (the gates' included) of one step against the CPU's loom_net_forward /
 * loom_net_backward, gates that tie, and the CPU's errors for bad token
 * indices and a gate output that is not finite, message for message,
 * without a crash and without a weight changed by a refused step.
 * Tolerances: docs/gpu.md "Tolerances against the CPU".
 */
#include "gpu-test.h"
#include "gpu/gpu-train.h"
#include "loom/loom.h"

static loom_gpu *gpu;

/* One step of mse at learning rate 0 on a clone on the device (the
 * weights stay, the gradients are its), the same on the CPU. Every plan
 * node is one occupied, enabled slot (node k = layer k). x NULL: values
 * in [-2, 2). */
static void compare_grads(loom_net *net, const char *what, int64_t batch, const float *x_in) {
  loom_error err = {0};
  loom_shape in = loom_net_input_shape(net), outs = loom_net_output_shape(net);
  int64_t ni = batch * loom_shape_numel(&in), width = loom_shape_numel(&outs), no = batch * width;
  float *x = g_new(float, ni), *target = g_new(float, no), *y = g_new(float, no), *dy = g_new(float, no);
  if (x_in) memcpy(x, x_in, (size_t)ni * sizeof *x);
  else gpu_test_fill(x, ni, -2, 2, 42);
  gpu_test_fill(target, no, -1, 1, 43);
  loom_net *dev = loom_net_clone(net, &err);
  g_assert_nonnull(dev);

  loom_ctx ctx = {.training = true};
  double loss = 0;
  loom_net_zero_grad(net);
  if (loom_net_forward(net, &ctx, x, batch, y, &err) || loom_loss_mse(y, target, batch, width, &loss, dy, &err) ||
      loom_net_backward(net, &ctx, dy, NULL, &err))
    g_error("%s on the CPU: %s", what, err.message);

  loom_train_config cfg = loom_train_config_default();
  cfg.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  cfg.loss.kind = LOOM_LOSS_MSE;
  gpu_train *t = gpu_train_new(gpu, dev, batch, &cfg, &err);
  if (!t) g_error("%s: %s", what, err.message);
  if (gpu_train_step(t, &cfg, x, batch, NULL, NULL, target, 0.0, &err)) g_error("%s: %s", what, err.message);

  /* the forward: as compare_forward in test-gpu-net.c */
  double scale = 1e-30, *tol = g_new(double, no);
  for (int64_t i = 0; i < no; i++) scale = MAX(scale, fabs(y[i]));
  for (int64_t i = 0; i < no; i++) tol[i] = 2e-5 * fabs(y[i]) + 2e-6 * scale;
  char label[160];
  snprintf(label, sizeof label, "%s: output", what);
  double worst_y = gpu_test_compare(label, gpu_train_output(t), y, tol, no), worst_g = 0;
  g_free(tol);

  /* every gradient: within 1e-4 of its tensor's largest magnitude, plus 1e-5 relative */
  int tensors = 0;
  for (int64_t k = 0; k < loom_net_n_layers(net); k++) {
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, k));
    for (int i = 0; i < loom_layer_n_weights(l); i++, tensors++) {
      int64_t n = loom_weights_count(loom_layer_weights(l, i));
      const float *want = loom_layer_grad(l, i), *got = gpu_train_tensor_grad(t, (int)k, i);
      char path[96];
      snprintf(label, sizeof label, "%s: layer %lld, gradient of %s", what, (long long)k,
               loom_layer_weights_path(l, i, path, sizeof path));
      if (!got) g_error("%s: not on the device", label);
      double big = 1e-30;
      for (int64_t j = 0; j < n; j++) big = MAX(big, fabs(want[j]));
      double *gt = g_new(double, n);
      for (int64_t j = 0; j < n; j++) gt[j] = 1e-4 * big + 1e-5 * fabs(want[j]);
      worst_g = MAX(worst_g, gpu_test_compare(label, got, want, gt, n));
      g_free(gt);
    }
  }
  g_test_message("%s: %d gradients; worst %.3f of the output's tolerance, %.3f of the gradients'", what, tensors,
                 worst_y, worst_g);
  gpu_train_free(t);
  loom_net_free(dev);
  g_free(x);
  g_free(target);
  g_free(y);
  g_free(dy);
}

static void test_grid_scatter(void) {
  loom_net *net = gpu_test_grid_net();
  compare_grads(net, "grid_scatter", 5, NULL);
  compare_grads(net, "grid_scatter", 1, NULL);
  loom_net_free(net);
  net = gpu_test_grid3_net();
  compare_grads(net, "grid_scatter of rank 3", 3, NULL);
  loom_net_free(net);
}

static void test_filter(void) {
  loom_net *net = gpu_test_filter_net(7, 5);
  compare_grads(net, "filter", 6, NULL);
  compare_grads(net, "filter", 1, NULL);
  loom_net_free(net);
}

/* Gated mixtures nested and passing through: dense 3→3 (its gradient
 * takes in every share of the container's input gradient) → parallel filter
 * [parallel route [dense 3→3, sequential []], gate sequential [dense 3→2,
 * softmax]; sequential []; dense 3→3], its gate sequential [] (the input
 * itself is the logits) → dense 3→2. */
static void test_nested(void) {
  loom_shape in = loom_shape_1d(3);
  loom_layer *inner = gpu_test_gated("route", (loom_layer *[]){gpu_test_layer("dense", 3, 3), gpu_test_empty()}, 2,
                                     gpu_test_seq2(gpu_test_layer("dense", 3, 2), gpu_test_layer("softmax", 0, 0)));
  loom_layer *layers[] = {
    gpu_test_layer("dense", 3, 3),
    gpu_test_gated("filter", (loom_layer *[]){inner, gpu_test_empty(), gpu_test_layer("dense", 3, 3)}, 3,
                   gpu_test_empty()),
    gpu_test_layer("dense", 3, 2),
  };
  loom_net *net = gpu_test_net_of(&in, layers, 3);
  compare_grads(net, "nested gates, a gate passing its input through", 5, NULL);
  loom_net_free(net);
}

static void test_route(void) {
  loom_net *net = gpu_test_route_net(5, 3);
  compare_grads(net, "route", 7, NULL);
  compare_grads(net, "route", 1, NULL);
  loom_net_free(net);
  loom_error err = {0};
  if (loom_example_build("moe", &net, &err)) g_error("%s", err.message);
  compare_grads(net, "moe example", 9, NULL);
  loom_net_free(net);
}

/* Gates whose outputs tie for every sample (zero weights, equal biases):
 * the weights of the tied branches are equal on both sides, the maximum of
 * a softmax is one of equal values, so the same inputs mix the same way.
 * (parallel.c selects no top k: every branch is weighted.) */
static void test_ties(void) {
  loom_net *net = gpu_test_route_net(5, 3);
  gpu_test_tie_gate(loom_net_layer_at(net, (loom_coord){0, 0, 2, 0}), (const float[]){0.5f, 0.5f, -1, 0.7f, 0.7f, 0.7f},
                    6);
  gpu_test_tie_gate(loom_net_layer_at(net, (loom_coord){0, 0, 3, 0}), (const float[]){0.25f, 0.25f}, 2);
  compare_grads(net, "route, tied gates", 4, NULL);
  loom_net_free(net);
  net = gpu_test_filter_net(7, 5);
  gpu_test_tie_gate(loom_net_layer_at(net, (loom_coord){0, 0, 1, 0}), (const float[]){1, 1, -0.5f}, 3);
  compare_grads(net, "filter, tied gate", 4, NULL);
  loom_net_free(net);
}

/* Runs x on the CPU and through `gn`: both fail with the same code and message. */
static void expect_same_error(loom_net *net, loom_gpu_net *gn, const float *x, int64_t batch, int code,
                              const char *needle) {
  loom_error ec = {0}, ed = {0};
  loom_shape out = loom_net_output_shape(net);
  float *y = g_new(float, batch * loom_shape_numel(&out));
  g_assert_cmpint(loom_net_forward(net, NULL, x, batch, y, &ec), ==, code);
  g_assert_cmpint(loom_gpu_net_forward(gn, x, y, &ed), ==, code);
  g_assert_cmpstr(ed.message, ==, ec.message);
  if (!strstr(ed.message, needle)) g_error("expected “%s” in: %s", needle, ed.message);
  g_test_message("%s", ed.message);
  g_free(y);
}

/* Embeddings inside a container (one after a relu, one on the input
 * through the container) and after a layer: forward and the tables'
 * gradients; bad indices give the CPU's error, naming the slot, the
 * container path, the sample and the position; a good batch runs after. */
static void test_embedding(void) {
  loom_net *nets[2] = {gpu_test_embed_container_net(), gpu_test_embed_after_net()};
  const char *names[2] = {"embedding in a container", "embedding after a layer"};
  for (int k = 0; k < 2; k++) {
    loom_net *net = nets[k];
    int64_t batch = 5;
    float x[5 * 4];
    gpu_test_tokens(x, 20, 11);
    compare_grads(net, names[k], batch, x);
    loom_error err = {0};
    loom_gpu_net *gn = loom_gpu_net_new(gpu, net, batch, &err);
    if (!gn) g_error("%s: %s", names[k], err.message);
    const char *at = k == 0 ? "layer parallel at (0,0,0,0), branch 0: layer sequential at (0,0,0,0), child 1: "
                              "layer embedding at (0,0,0,0): sample 3, position 1"
                            : "layer embedding at (0,0,1,0): sample 3, position 1";
    x[13] = 9.0f; /* relu keeps it: out of range */
    expect_same_error(net, gn, x, batch, LOOM_ERR_RANGE, at);
    x[13] = 2.5f;
    expect_same_error(net, gn, x, batch, LOOM_ERR_INVALID, at);
    x[13] = 1e30f;
    expect_same_error(net, gn, x, batch, LOOM_ERR_RANGE, at);
    if (k == 0) {
      /* relu turns −1 into 0 for branch 0; branch 1 reads −1 itself */
      x[13] = -1.0f;
      expect_same_error(net, gn, x, batch, LOOM_ERR_RANGE,
                        "layer parallel at (0,0,0,0), branch 1: layer embedding at (0,0,0,0): sample 3, position 1");
    }
    gpu_test_tokens(x, 20, 11);
    float *y = g_new(float, 5 * 24), *y_cpu = g_new(float, 5 * 24);
    if (loom_gpu_net_forward(gn, x, y, &err) || loom_net_forward(net, NULL, x, batch, y_cpu, &err))
      g_error("%s", err.message);
    loom_shape out = loom_net_output_shape(net);
    int64_t no = batch * loom_shape_numel(&out);
    double tol[5 * 24];
    for (int64_t j = 0; j < no; j++) tol[j] = 2e-5 * fabs(y_cpu[j]) + 2e-6;
    gpu_test_compare("after the errors", y, y_cpu, tol, no);
    g_free(y);
    g_free(y_cpu);
    loom_gpu_net_free(gn);

    /* A training step on a bad batch is refused before any update: a good
     * step after it ends where a good step alone does, bit for bit (weights
     * and Adam's state). */
    loom_net *dev = loom_net_clone(net, &err), *alone = loom_net_clone(net, &err);
    loom_train_config cfg = loom_train_config_default();
    cfg.optim = loom_optim_defaults(LOOM_OPTIM_ADAM);
    cfg.loss.kind = LOOM_LOSS_MSE;
    gpu_train *t = gpu_train_new(gpu, dev, batch, &cfg, &err), *t_alone = gpu_train_new(gpu, alone, batch, &cfg, &err);
    if (!t || !t_alone) g_error("%s", err.message);
    float target[5 * 24];
    gpu_test_fill(target, no, -1, 1, 5);
    x[13] = 9.0f;
    g_assert_cmpint(gpu_train_step(t, &cfg, x, batch, NULL, NULL, target, 0.1, &err), ==, LOOM_ERR_RANGE);
    if (!strstr(err.message, at)) g_error("expected “%s” in: %s", at, err.message);
    x[13] = 4.0f;
    for (int r = 0; r < 2; r++)
      if (gpu_train_step(t, &cfg, x, batch, NULL, NULL, target, 0.1, &err) ||
          gpu_train_step(t_alone, &cfg, x, batch, NULL, NULL, target, 0.1, &err))
        g_error("%s", err.message);
    g_assert_cmpint(gpu_train_download(t, &err), ==, 0);
    g_assert_cmpint(gpu_train_download(t_alone, &err), ==, 0);
    bool moved = false;
    for (int64_t i = 0; i < loom_net_n_layers(dev); i++) {
      loom_layer *la = loom_net_layer_at(dev, loom_net_layer_coord(dev, i));
      loom_layer *lb = loom_net_layer_at(alone, loom_net_layer_coord(alone, i));
      loom_layer *l0 = loom_net_layer_at(net, loom_net_layer_coord(net, i));
      for (int w = 0; w < loom_layer_n_weights(la); w++) {
        size_t bytes = (size_t)loom_weights_count(loom_layer_weights(la, w)) * sizeof(float);
        const float *a = loom_weights_master_const(loom_layer_weights(la, w));
        g_assert_cmpmem(a, bytes, loom_weights_master_const(loom_layer_weights(lb, w)), bytes);
        moved = moved || memcmp(a, loom_weights_master_const(loom_layer_weights(l0, w)), bytes);
      }
    }
    g_assert_true(moved);
    gpu_train_free(t);
    gpu_train_free(t_alone);
    loom_net_free(dev);
    loom_net_free(alone);
    loom_net_free(net);
  }
}

/* Sets every weight of the first dense layer at or under l to w, its bias to b. */
static void set_dense(loom_layer *l, float w, float b) {
  while (loom_layer_n_children(l) > 0) l = loom_layer_child(l, 0);
  for (int t = 0; t < loom_layer_n_weights(l); t++) {
    loom_weights *ws = loom_layer_weights(l, t);
    float *m = loom_weights_master(ws);
    for (int64_t i = 0; i < loom_weights_count(ws); i++) m[i] = t == 0 ? w : b;
    loom_weights_touch(ws);
  }
}

/* A filter gate whose output is not finite (its logits overflow: the
 * inputs all 1, its weights 3e38): the CPU's error. (A route gate ends in
 * a softmax-family layer, whose input the CPU checks itself: docs/gpu.md
 * "Not done yet".) */
static void test_nonfinite_gate(void) {
  loom_net *net = gpu_test_filter_net(7, 5);
  set_dense(loom_net_layer_at(net, (loom_coord){0, 0, 0, 0}), 0, 1);
  set_dense(loom_layer_gate(loom_net_layer_at(net, (loom_coord){0, 0, 1, 0})), 3e38f, 0);
  loom_error err = {0};
  loom_gpu_net *gn = loom_gpu_net_new(gpu, net, 3, &err);
  if (!gn) g_error("%s", err.message);
  float x[3 * 7];
  gpu_test_fill(x, 21, -1, 1, 9);
  expect_same_error(net, gn, x, 3, LOOM_ERR_NONFINITE,
                    "layer parallel at (0,0,1,0): the gate's output for sample 0 is not finite");
  loom_gpu_net_free(gn);
  loom_net_free(net);
}

int main(int argc, char **argv) {
  gpu = gpu_test_init(&argc, &argv);
  g_test_add_func("/gpu/parallel/grid-scatter", test_grid_scatter);
  g_test_add_func("/gpu/parallel/filter", test_filter);
  g_test_add_func("/gpu/parallel/route", test_route);
  g_test_add_func("/gpu/parallel/ties", test_ties);
  g_test_add_func("/gpu/parallel/nested", test_nested);
  g_test_add_func("/gpu/parallel/embedding", test_embedding);
  g_test_add_func("/gpu/parallel/nonfinite-gate", test_nonfinite_gate);
  int rc = g_test_run();
  loom_gpu_free(gpu);
  return rc;
}
