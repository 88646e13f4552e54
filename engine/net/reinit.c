/*
 * Reinitialising a network's weights from a seed ("Reset" in the workbench's
 * training pane). Layers keep their weights across shape inference when the
 * shapes did not change (layer_weights_ensure), so a fresh draw first drops
 * every tensor, then lets inference build the layers again: the draw is the
 * one a newly placed layer would get from the same seed.
 */
#include <stdlib.h>

#include "core/i18n.h"
#include "layers/layer-impl.h"
#include "loom/net.h"
#include "net/net-internal.h"

static void drop_weights(loom_layer *l) {
  if (!l) return;
  layer_weights_truncate(l, 0);
  for (int i = 0; i < l->n_children; i++) drop_weights(l->children[i]);
  drop_weights(l->gate);
  l->built = false;
}

LOOM_API uint64_t loom_net_seed(const loom_net *net) { return net ? net->seed : 0; }

LOOM_API int loom_net_reinit_weights(loom_net *net, uint64_t seed, loom_error *err) {
  if (!net) return loom_error_set(err, LOOM_ERR_INVALID, "no network given");
  int64_t n = loom_net_n_layers(net);
  for (int64_t i = 0; i < n; i++) drop_weights(loom_net_layer_at(net, loom_net_layer_coord(net, i)));
  loom_diag *diags = NULL;
  int problems = loom_net_infer_shapes(net, seed, &diags);
  if (problems > 0) {
    int rc = loom_error_set(err, diags[0].code, "%s", diags[0].message);
    free(diags);
    return rc;
  }
  return LOOM_OK;
}

LOOM_API int loom_net_set_dtype_all(loom_net *net, loom_dtype d, loom_error *err) {
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_coord c = loom_net_layer_coord(net, i);
    int rc = loom_layer_set_dtype(loom_net_layer_at(net, c), d, err);
    if (rc) {
      char at[64];
      loom_error_prefix(err, _("slot %s"), loom_coord_format(c, at, sizeof at));
      return rc;
    }
  }
  return LOOM_OK;
}
