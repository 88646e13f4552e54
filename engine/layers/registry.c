/*
 * THE table of layer types. Order here is the order of menus and listings;
 * the stable identity of a type is its `id` (see registry.h for the blocks).
 * One line per type.
 */
#include "layers/registry.h"

#include <string.h>

#include "core/i18n.h"

static const loom_layer_type *const layer_types[] = {
  &loom_layer_dense,
  &loom_layer_relu,
  &loom_layer_leaky_relu,
  &loom_layer_elu,
  &loom_layer_gelu,
  &loom_layer_silu,
  &loom_layer_sigmoid,
  &loom_layer_tanh,
  &loom_layer_softplus,
  &loom_layer_relu2,
  &loom_layer_sequential,
  &loom_layer_parallel,
  &loom_layer_residual,
  &loom_layer_conv1d,
  &loom_layer_conv2d,
  &loom_layer_conv3d,
  &loom_layer_conv_transpose1d,
  &loom_layer_conv_transpose2d,
  &loom_layer_conv_transpose3d,
  &loom_layer_layernorm,
  &loom_layer_rmsnorm,
  &loom_layer_embedding,
  &loom_layer_softmax,
  &loom_layer_softmax_temperature,
  &loom_layer_grid_softmax,
  &loom_layer_masked_softmax,
  &loom_layer_hierarchical_softmax,
  &loom_layer_gumbel_softmax,
  &loom_layer_sparsemax,
  &loom_layer_entmax15,
  &loom_layer_kmeans,
  &loom_layer_rnn,
  &loom_layer_lstm,
  &loom_layer_attention,
  &loom_layer_swiglu,
};

#define N_LAYER_TYPES ((int)(sizeof layer_types / sizeof layer_types[0]))

LOOM_API int loom_layer_type_count(void) { return N_LAYER_TYPES; }

LOOM_API const loom_layer_type *loom_layer_type_at(int index) {
  return index >= 0 && index < N_LAYER_TYPES ? layer_types[index] : NULL;
}

LOOM_API const loom_layer_type *loom_layer_type_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < N_LAYER_TYPES; i++)
    if (strcmp(layer_types[i]->name, name) == 0) return layer_types[i];
  return NULL;
}

LOOM_API const loom_layer_type *loom_layer_type_by_id(int id) {
  for (int i = 0; i < N_LAYER_TYPES; i++)
    if (layer_types[i]->id == id) return layer_types[i];
  return NULL;
}

LOOM_API int loom_layer_type_id(const loom_layer_type *t) { return t ? t->id : -1; }
LOOM_API const char *loom_layer_type_name(const loom_layer_type *t) { return t ? t->name : NULL; }
LOOM_API const char *loom_layer_type_label(const loom_layer_type *t) { return t ? _(t->label) : NULL; }
LOOM_API const char *loom_layer_type_group(const loom_layer_type *t) { return t ? _(t->group) : NULL; }
LOOM_API const char *loom_layer_type_description(const loom_layer_type *t) {
  return t ? _(t->description) : NULL;
}
LOOM_API unsigned loom_layer_type_flags(const loom_layer_type *t) { return t ? t->flags : 0; }
LOOM_API int loom_layer_type_n_params(const loom_layer_type *t) { return t ? t->n_params : 0; }

LOOM_API const loom_param_spec *loom_layer_type_param(const loom_layer_type *t, int index) {
  return t && index >= 0 && index < t->n_params ? &t->params[index] : NULL;
}

LOOM_API int loom_layer_type_param_index(const loom_layer_type *t, const char *name) {
  if (!t || !name) return -1;
  for (int i = 0; i < t->n_params; i++)
    if (strcmp(t->params[i].name, name) == 0) return i;
  return -1;
}
