/*
 * The weight side of layers: the helpers type implementations use to declare
 * and initialise their tensors (layer-impl.h), the public accessors that see
 * a container's children as one flat list, totals, description and the
 * container bookkeeping.
 *
 * Flat weight order of a layer: its own slots, then each child's list in
 * child order (recursively), then the gate's list.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "core/rng.h"
#include "core/weights-internal.h"
#include "layers/layer-impl.h"

/* ---- helpers for type implementations ---------------------------------- */

const char *layer_where(const loom_layer *l, char *buf, size_t size) {
  if (l->has_coord)
    snprintf(buf, size, _("layer %s at (%d,%d,%d,%d)"), l->type->name, l->coord[0], l->coord[1], l->coord[2],
             l->coord[3]);
  else
    snprintf(buf, size, _("layer %s"), l->type->name);
  return buf;
}

static void label_weights(loom_layer *l) {
  char where[128], label[192];
  layer_where(l, where, sizeof where);
  for (int i = 0; i < l->n_weights; i++) {
    snprintf(label, sizeof label, "%s %s", where, l->weight_names[i]);
    loom_weights_set_label(l->weights[i], label);
  }
}

void layer_set_coord(loom_layer *l, const int coord[4], bool has_coord) {
  for (int i = 0; i < 4; i++) l->coord[i] = has_coord ? coord[i] : 0;
  l->has_coord = has_coord;
  label_weights(l);
  for (int c = 0; c < l->n_children; c++) layer_set_coord(l->children[c], coord, has_coord);
  if (l->gate) layer_set_coord(l->gate, coord, has_coord);
}

static void init_values(float *v, int64_t n, layer_init init, int64_t fan_in, uint64_t seed) {
  loom_rng rng;
  loom_rng_seed(&rng, seed);
  switch (init) {
  case LAYER_INIT_ZERO: memset(v, 0, (size_t)n * sizeof *v); break;
  case LAYER_INIT_ONE:
    for (int64_t i = 0; i < n; i++) v[i] = 1.0f;
    break;
  case LAYER_INIT_KAIMING_UNIFORM: {
    /* PyTorch's nn.Linear / nn.Conv default: U(-1/√fan_in, 1/√fan_in). */
    double bound = 1.0 / sqrt((double)fan_in);
    for (int64_t i = 0; i < n; i++) v[i] = (float)loom_rng_uniform_range(&rng, -bound, bound);
    break;
  }
  case LAYER_INIT_NORMAL:
    /* N(0, 1), like nn.Embedding; fan_in is not used. */
    for (int64_t i = 0; i < n; i++) v[i] = (float)loom_rng_normal(&rng);
    break;
  }
}

int layer_weights_ensure(loom_layer *l, int index, const char *name, int64_t rows, int64_t cols, bool quantized,
                         layer_init init, int64_t fan_in, uint64_t seed, loom_error *err) {
  char where[128];
  if (index < 0 || index >= LOOM_LAYER_MAX_WEIGHTS || index > l->n_weights)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: weight slot %d is out of order (the layer has %d)"),
                          layer_where(l, where, sizeof where), index, l->n_weights);
  if (init == LAYER_INIT_KAIMING_UNIFORM && fan_in < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: weight “%s” needs a positive fan-in, got %lld"),
                          layer_where(l, where, sizeof where), name, (long long)fan_in);
  loom_dtype want = quantized ? l->dtype : LOOM_DTYPE_FLOAT32;
  if (index < l->n_weights && loom_weights_rows(l->weights[index]) == rows &&
      loom_weights_cols(l->weights[index]) == cols) {
    l->weight_names[index] = name;
    l->weight_quantized[index] = quantized;
    label_weights(l);
    if (loom_weights_dtype(l->weights[index]) != want) return loom_weights_set_dtype(l->weights[index], want, err);
    return LOOM_OK;
  }
  loom_weights *w = loom_weights_new(rows, cols, err);
  if (!w) {
    loom_error_prefix(err, "%s: %s", layer_where(l, where, sizeof where), name);
    return err ? err->code : LOOM_ERR_NOMEM;
  }
  int64_t n = loom_weights_count(w);
  float *grad = calloc((size_t)n, sizeof *grad);
  if (!grad) {
    loom_weights_free(w);
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for the gradient of “%s” (%lld values)"),
                          layer_where(l, where, sizeof where), name, (long long)n);
  }
  init_values(loom_weights_master(w), n, init, fan_in, loom_rng_derive(seed, (uint64_t)index));
  loom_weights_touch(w);
  if (want != LOOM_DTYPE_FLOAT32) {
    int rc = loom_weights_set_dtype(w, want, err);
    if (rc) {
      loom_weights_free(w);
      free(grad);
      return rc;
    }
  }
  if (index < l->n_weights) {
    loom_weights_free(l->weights[index]);
    free(l->grad[index]);
  } else {
    l->n_weights = index + 1;
  }
  l->weights[index] = w;
  l->grad[index] = grad;
  l->weight_names[index] = name;
  l->weight_quantized[index] = quantized;
  label_weights(l);
  return LOOM_OK;
}

void layer_weights_truncate(loom_layer *l, int n) {
  for (int i = n; i < l->n_weights; i++) {
    loom_weights_free(l->weights[i]);
    free(l->grad[i]);
    l->weights[i] = NULL;
    l->grad[i] = NULL;
    l->weight_names[i] = NULL;
    l->weight_quantized[i] = false;
  }
  if (n < l->n_weights) l->n_weights = n < 0 ? 0 : n;
}

const float *layer_weight_values_on(loom_layer *l, int index, loom_pool *pool, loom_error *err) {
  char where[128];
  if (index < 0 || index >= l->n_weights) {
    loom_error_set(err, LOOM_ERR_INVALID, _("%s has no weight slot %d"), layer_where(l, where, sizeof where), index);
    return NULL;
  }
  return loom_weights_effective_on(l->weights[index], pool, err);
}

const float *layer_weight_values(loom_layer *l, int index, loom_error *err) {
  return layer_weight_values_on(l, index, NULL, err);
}

int layer_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch, loom_error *err) {
  char where[128];
  if (!l->built)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s is not built for an input shape yet"),
                          layer_where(l, where, sizeof where));
  return l->type->forward(l, ctx, x, y, batch, err);
}

int layer_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy, float *dx,
                   int64_t batch, loom_error *err) {
  char where[128];
  if (!l->built)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s is not built for an input shape yet"),
                          layer_where(l, where, sizeof where));
  /* A layer at rest gets its masters and gradients back before anything writes them. */
  if (!layer_ready_for_training(l)) {
    int rc = loom_layer_prepare_training(l, err);
    if (rc) return rc;
  }
  return l->type->backward(l, ctx, x, y, dy, dx, batch, err);
}

void layer_zero_grad(loom_layer *l) {
  for (int i = 0; i < l->n_weights; i++)
    if (l->grad[i]) memset(l->grad[i], 0, (size_t)loom_weights_count(l->weights[i]) * sizeof(float));
  for (int c = 0; c < l->n_children; c++) layer_zero_grad(l->children[c]);
  if (l->gate) layer_zero_grad(l->gate);
}

/* ---- the flat weight list ---------------------------------------------- */

static int count_all(const loom_layer *l) {
  int n = l->n_weights;
  for (int c = 0; c < l->n_children; c++) n += count_all(l->children[c]);
  if (l->gate) n += count_all(l->gate);
  return n;
}

/* Finds the layer owning flat weight `index` and its local slot; writes the
 * path of the tensor ("children[1].gate.weight") when path is not NULL. */
static loom_layer *resolve(const loom_layer *l, int index, int *slot, char *path, size_t size) {
  if (index < 0) return NULL;
  if (index < l->n_weights) {
    *slot = index;
    if (path) snprintf(path, size, "%s", l->weight_names[index]);
    return (loom_layer *)l;
  }
  index -= l->n_weights;
  for (int c = 0; c <= l->n_children; c++) {
    const loom_layer *sub = c < l->n_children ? l->children[c] : l->gate;
    if (!sub) break;
    int n = count_all(sub);
    if (index < n) {
      char prefix[48];
      int used = c < l->n_children ? snprintf(prefix, sizeof prefix, "children[%d].", c)
                                   : snprintf(prefix, sizeof prefix, "gate.");
      if (path) {
        snprintf(path, size, "%s", prefix);
        size_t off = (size_t)used < size ? (size_t)used : size - 1;
        return resolve(sub, index, slot, path + off, size - off);
      }
      return resolve(sub, index, slot, NULL, 0);
    }
    index -= n;
  }
  return NULL;
}

LOOM_API int loom_layer_n_weights(const loom_layer *l) { return l ? count_all(l) : 0; }

LOOM_API loom_weights *loom_layer_weights(loom_layer *l, int index) {
  int slot;
  loom_layer *owner = l ? resolve(l, index, &slot, NULL, 0) : NULL;
  return owner ? owner->weights[slot] : NULL;
}

LOOM_API const char *loom_layer_weights_name(const loom_layer *l, int index) {
  int slot;
  loom_layer *owner = l ? resolve(l, index, &slot, NULL, 0) : NULL;
  return owner ? owner->weight_names[slot] : NULL;
}

LOOM_API char *loom_layer_weights_path(const loom_layer *l, int index, char *buf, size_t size) {
  int slot;
  if (size == 0) return buf;
  buf[0] = '\0';
  if (l) resolve(l, index, &slot, buf, size);
  return buf;
}

LOOM_API float *loom_layer_grad(loom_layer *l, int index) {
  int slot;
  loom_layer *owner = l ? resolve(l, index, &slot, NULL, 0) : NULL;
  return owner ? owner->grad[slot] : NULL;
}

LOOM_API int64_t loom_layer_param_count(const loom_layer *l) {
  if (!l) return 0;
  int64_t n = 0;
  for (int i = 0; i < l->n_weights; i++) n += loom_weights_count(l->weights[i]);
  for (int c = 0; c < l->n_children; c++) n += loom_layer_param_count(l->children[c]);
  if (l->gate) n += loom_layer_param_count(l->gate);
  return n;
}

LOOM_API size_t loom_layer_bytes(const loom_layer *l) {
  if (!l) return 0;
  size_t n = 0;
  for (int i = 0; i < l->n_weights; i++) n += loom_weights_bytes(l->weights[i]);
  for (int c = 0; c < l->n_children; c++) n += loom_layer_bytes(l->children[c]);
  if (l->gate) n += loom_layer_bytes(l->gate);
  return n;
}

LOOM_API size_t loom_layer_bytes_at(const loom_layer *l, loom_dtype d) {
  if (!l) return 0;
  size_t n = 0;
  for (int i = 0; i < l->n_weights; i++)
    n += l->weight_quantized[i] ? loom_weights_bytes_at(l->weights[i], d) : loom_weights_bytes(l->weights[i]);
  for (int c = 0; c < l->n_children; c++) n += loom_layer_bytes_at(l->children[c], d);
  if (l->gate) n += loom_layer_bytes_at(l->gate, d);
  return n;
}

LOOM_API int64_t loom_layer_flops(const loom_layer *l) {
  if (!l) return 0;
  if (l->type->flops) return l->type->flops(l);
  /* Element-wise types: about one operation per output value. */
  return l->built ? loom_shape_numel(&l->out_shape) : 0;
}

LOOM_API char *loom_layer_describe(const loom_layer *l, char *buf, size_t size) {
  if (!buf || size == 0) return buf;
  if (!l) {
    buf[0] = '\0';
    return buf;
  }
  if (l->type->describe) return l->type->describe(l, buf, size);
  snprintf(buf, size, "%s", l->type->name);
  return buf;
}

/* ---- containers -------------------------------------------------------- */

LOOM_API int loom_layer_n_children(const loom_layer *l) { return l ? l->n_children : 0; }

LOOM_API loom_layer *loom_layer_child(const loom_layer *l, int index) {
  return l && index >= 0 && index < l->n_children ? l->children[index] : NULL;
}

/* Children cap: far beyond any sensible branch count, small enough that
 * n_children never overflows an int. */
#define LAYER_MAX_CHILDREN 65536

LOOM_API int loom_layer_add_child(loom_layer *l, loom_layer *child, loom_error *err) {
  char where[128];
  if (!l || !child) return loom_error_set(err, LOOM_ERR_INVALID, _("no container or child layer given"));
  if (!(l->type->flags & LOOM_LAYER_CONTAINER))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s is not a container and cannot hold child layers"),
                          layer_where(l, where, sizeof where));
  if (child == l) return loom_error_set(err, LOOM_ERR_INVALID, _("a layer cannot contain itself"));
  if (l->n_children >= LAYER_MAX_CHILDREN)
    return loom_error_set(err, LOOM_ERR_RANGE, _("%s already holds %d child layers, the most allowed"),
                          layer_where(l, where, sizeof where), l->n_children);
  loom_layer **grown = realloc(l->children, (size_t)(l->n_children + 1) * sizeof *grown);
  if (!grown) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory adding a child layer"));
  l->children = grown;
  l->children[l->n_children++] = child;
  if (l->has_coord) layer_set_coord(child, l->coord, true);
  l->built = false;
  return LOOM_OK;
}

LOOM_API loom_layer *loom_layer_remove_child(loom_layer *l, int index) {
  if (!l || index < 0 || index >= l->n_children) return NULL;
  loom_layer *child = l->children[index];
  memmove(l->children + index, l->children + index + 1, (size_t)(l->n_children - index - 1) * sizeof *l->children);
  l->n_children--;
  l->built = false;
  return child;
}

LOOM_API loom_layer *loom_layer_gate(const loom_layer *l) { return l ? l->gate : NULL; }

LOOM_API int loom_layer_set_gate(loom_layer *l, loom_layer *gate, loom_error *err) {
  char where[128];
  if (!l) return loom_error_set(err, LOOM_ERR_INVALID, _("no container given"));
  if (!(l->type->flags & LOOM_LAYER_CONTAINER))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s is not a container and cannot have a gate"),
                          layer_where(l, where, sizeof where));
  if (gate == l) return loom_error_set(err, LOOM_ERR_INVALID, _("a layer cannot be its own gate"));
  if (gate == l->gate) return LOOM_OK;
  loom_layer_free(l->gate);
  l->gate = gate;
  if (gate && l->has_coord) layer_set_coord(gate, l->coord, true);
  l->built = false;
  return LOOM_OK;
}
