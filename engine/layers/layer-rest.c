/*
 * A layer at rest (inference, issue 13 item 3): its weight stores keep only
 * their packed codes and scales (loom_weights_to_inference) and its gradient
 * buffers, which only training writes, are freed. Training (or a backward
 * pass, whichever comes first) brings both back; docs/dtypes.md, "At rest".
 */
#include <stdlib.h>

#include "core/i18n.h"
#include "layers/layer-impl.h"

LOOM_API int loom_layer_to_inference(loom_layer *l, loom_error *err) {
  if (!l) return LOOM_OK;
  for (int i = 0; i < l->n_weights; i++) {
    int rc = loom_weights_to_inference(l->weights[i], err);
    if (rc) return rc; /* the weights' label names the layer and the slot */
    free(l->grad[i]);
    l->grad[i] = NULL;
  }
  for (int c = 0; c < l->n_children; c++) {
    int rc = loom_layer_to_inference(l->children[c], err);
    if (rc) return rc;
  }
  return l->gate ? loom_layer_to_inference(l->gate, err) : LOOM_OK;
}

LOOM_API int loom_layer_prepare_training(loom_layer *l, loom_error *err) {
  if (!l) return LOOM_OK;
  for (int i = 0; i < l->n_weights; i++) {
    int rc = loom_weights_ensure_master(l->weights[i], err);
    if (rc) return rc;
    if (l->grad[i]) continue;
    int64_t n = loom_weights_count(l->weights[i]);
    if (!(l->grad[i] = calloc((size_t)n, sizeof(float))))
      return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for its gradient (%lld values)"),
                            loom_weights_label(l->weights[i]), (long long)n);
  }
  for (int c = 0; c < l->n_children; c++) {
    int rc = loom_layer_prepare_training(l->children[c], err);
    if (rc) return rc;
  }
  return l->gate ? loom_layer_prepare_training(l->gate, err) : LOOM_OK;
}

bool layer_ready_for_training(const loom_layer *l) {
  for (int i = 0; i < l->n_weights; i++)
    if (!l->grad[i] || !loom_weights_master_resident(l->weights[i])) return false;
  return true;
}

/* which: 0 = resident now, 1 = at rest, 2 = while training. Gradients are
 * counted with the weights: they are the layer's memory as much as the master. */
static size_t layer_bytes_kind(const loom_layer *l, int which) {
  if (!l) return 0;
  size_t n = 0;
  for (int i = 0; i < l->n_weights; i++) {
    const loom_weights *w = l->weights[i];
    const size_t grad = (size_t)loom_weights_count(w) * sizeof(float);
    if (which == 0) n += loom_weights_resident_bytes(w) + (l->grad[i] ? grad : 0);
    else if (which == 1) n += loom_weights_inference_bytes(w);
    else n += loom_weights_training_bytes(w) + grad;
  }
  for (int c = 0; c < l->n_children; c++) n += layer_bytes_kind(l->children[c], which);
  return n + layer_bytes_kind(l->gate, which);
}

LOOM_API size_t loom_layer_resident_bytes(const loom_layer *l) { return layer_bytes_kind(l, 0); }
LOOM_API size_t loom_layer_inference_bytes(const loom_layer *l) { return layer_bytes_kind(l, 1); }
LOOM_API size_t loom_layer_training_bytes(const loom_layer *l) { return layer_bytes_kind(l, 2); }
