/*
 * What the CPU checks during a forward and the device cannot stop on:
 * the token indices of an embedding that reads a layer's output (a float
 * activation, so not known before the submission), and a filter's or
 * route's gate output being finite. The device never reads through a bad
 * index (shaders/embed.comp gives zeros); the host runs the CPU's checks on
 * the mapped buffers after the submission, in the CPU's order of execution,
 * and reports the first failure with the CPU's message, code and container
 * prefixes. A training step with such checks submits its forward first and
 * goes on only when they pass (gpu-train.c), so a bad batch changes no
 * weight, as on the CPU.
 */
#include <math.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "gpu/gpu-internal.h"
#include "layers/containers.h"
#include "layers/layer-impl.h"

/* engine/layers/embedding.c's own check, message for message. */
int gpu_check_tokens(const loom_layer *l, const float *x, int64_t count, int64_t t_len, int64_t vocab,
                     loom_error *err) {
  return embedding_check_tokens(l, x, count, t_len, vocab, err);
}

int gpu_net_add_check(loom_gpu_net *gn, gpu_check_kind kind, const gnode *n, loom_error *err) {
  if (gn->n_checks == gn->checks_cap) {
    int cap = gn->checks_cap ? 2 * gn->checks_cap : 4;
    gpu_check *grown = realloc(gn->checks, (size_t)cap * sizeof *grown);
    if (!grown) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a network on the device"));
    gn->checks = grown;
    gn->checks_cap = cap;
  }
  gn->checks[gn->n_checks++] = (gpu_check){.kind = kind, .node = n};
  return LOOM_OK;
}

/* Whether target is root or inside it; on the way back out, each
 * container adds the prefix its CPU forward adds to a child's error. */
static bool prefix_path(const gnode *root, const gnode *target, loom_error *err) {
  if (root == target) return true;
  if (root->kind != GN_CONTAINER) return false;
  for (int c = 0; c < root->n_sub; c++)
    if (prefix_path(&root->sub[c], target, err)) {
      container_child_error(root->layer, root->parallel ? _("branch") : _("child"), c, err);
      return true;
    }
  if (root->gate && prefix_path(root->gate, target, err)) {
    container_child_error(root->layer, NULL, -1, err);
    return true;
  }
  return false;
}

/* parallel_forward's checks of the gate's output. */
static int check_gate(const loom_gpu_net *gn, const gpu_check *k, int64_t batch, loom_error *err) {
  const gnode *n = k->node;
  int64_t width = n->heads * n->n_sub;
  const float *z = gn->bufs[n->gate->out].map;
  char where[128];
  for (int64_t b = 0; b < batch; b++) {
    bool bad = false;
    if (k->kind == GPU_CHECK_FILTER_GATE) {
      /* the CPU's maximum: a NaN after the first entry is not seen */
      double mx = z[b * width];
      for (int64_t i = 1; i < width; i++) mx = z[b * width + i] > mx ? z[b * width + i] : mx;
      bad = !isfinite(mx);
    } else {
      for (int64_t i = 0; i < width && !bad; i++) bad = !isfinite(z[b * width + i]);
    }
    if (bad)
      return loom_error_set(err, LOOM_ERR_NONFINITE, _("%s: the gate's output for sample %lld is not finite"),
                            layer_where(n->layer, where, sizeof where), (long long)b);
  }
  return LOOM_OK;
}

int gpu_net_run_checks(const loom_gpu_net *gn, int64_t batch, loom_error *err) {
  for (int i = 0; i < gn->n_checks; i++) {
    const gpu_check *k = &gn->checks[i];
    const gnode *n = k->node;
    int rc = k->kind == GPU_CHECK_TOKENS
               ? gpu_check_tokens(n->layer, gn->bufs[n->in].map, batch * n->pos, n->pos, n->k, err)
               : check_gate(gn, k, batch, err);
    if (!rc) continue;
    for (int t = 0; t < gn->n_nodes; t++)
      if (prefix_path(&gn->nodes[t], n, err)) break;
    return rc;
  }
  return LOOM_OK;
}

int gpu_net_forward_checked(loom_gpu_net *gn, gpu_rec *rec, int64_t batch, loom_error *err) {
  gpu_rec_free(rec);
  int rc = gpu_rec_begin(gn->g, gpu_net_forward_dispatches(gn), rec, err);
  if (!rc) rc = gpu_net_record_forward(gn, rec, batch, false, err);
  if (!rc) rc = gpu_rec_end(rec, err);
  if (!rc) rc = gpu_rec_submit(rec, err);
  if (!rc) rc = gpu_net_run_checks(gn, batch, err);
  return rc;
}
