/* The public face of loom/sequence.h: dispatches to the layer families that
 * keep state between calls (recurrent.c, attention.c). */
#include "loom/sequence.h"

#include "core/i18n.h"
#include "layers/registry.h"
#include "layers/sequence-impl.h"

static bool is_recurrent(const loom_layer *l) { return l && (l->type == &loom_layer_rnn || l->type == &loom_layer_lstm); }

LOOM_API int loom_layer_set_initial_state(loom_layer *l, const float *h0, const float *c0, int64_t batch,
                                          loom_error *err) {
  char where[128];
  if (!is_recurrent(l))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s has no recurrent state (only rnn and lstm layers do)"),
                          l ? layer_where(l, where, sizeof where) : _("no layer"));
  if (h0 && batch < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: the initial state needs a batch of at least 1, got %lld"),
                          layer_where(l, where, sizeof where), (long long)batch);
  return recurrent_set_initial_state(l, h0, c0, batch, err);
}

LOOM_API int loom_layer_initial_state_grad(const loom_layer *l, const float **dh0, const float **dc0, int64_t *batch,
                                           loom_error *err) {
  char where[128];
  if (!is_recurrent(l) || !dh0 || !batch)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s has no recurrent state (only rnn and lstm layers do)"),
                          l ? layer_where(l, where, sizeof where) : _("no layer"));
  if (recurrent_state_grad(l, dh0, dc0, batch))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: the gradient of the initial state needs a backward pass first"),
                          layer_where(l, where, sizeof where));
  return LOOM_OK;
}

LOOM_API int loom_layer_set_key_padding_mask(loom_layer *l, const uint8_t *mask, int64_t batch, int64_t keys,
                                             loom_error *err) {
  char where[128];
  if (!l || l->type != &loom_layer_attention)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s takes no key padding mask (only attention layers do)"),
                          l ? layer_where(l, where, sizeof where) : _("no layer"));
  return attention_set_key_padding(l, mask, batch, keys, err);
}

LOOM_API int64_t loom_layer_cached_steps(const loom_layer *l) {
  return l && l->type == &loom_layer_attention ? attention_cache_length(l) : 0;
}

LOOM_API bool loom_layer_keeps_state(const loom_layer *l) {
  if (!l) return false;
  if (is_recurrent(l) && loom_layer_get_int(l, "carry_state")) return true;
  if (l->type == &loom_layer_attention && loom_layer_get_int(l, "cache_capacity") > 0) return true;
  for (int i = 0; i < l->n_children; i++)
    if (loom_layer_keeps_state(l->children[i])) return true;
  return l->gate && loom_layer_keeps_state(l->gate);
}

LOOM_API void loom_layer_reset_state(loom_layer *l) {
  if (!l) return;
  if (is_recurrent(l)) recurrent_reset(l);
  if (l->type == &loom_layer_attention) attention_reset(l);
  for (int i = 0; i < l->n_children; i++) loom_layer_reset_state(l->children[i]);
  if (l->gate) loom_layer_reset_state(l->gate);
}
