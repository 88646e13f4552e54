/*
 * The grid: dimensions, slots, enable flags and coordinates. Links live in
 * links.c, shape inference in infer.c, execution in exec.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "net/net-internal.h"

/* Grid sides and total slots: generous for a workbench, small enough that
 * every index fits an int64 product and allocation sizes stay sane. */
#define NET_MAX_SIDE 4096
#define NET_MAX_SLOTS ((int64_t)1 << 24)

LOOM_API char *loom_coord_format(loom_coord c, char *buf, size_t size) {
  snprintf(buf, size, "(%d,%d,%d,%d)", c.z, c.y, c.x, c.l);
  return buf;
}

static int check_dims(int depth, int rows, int cols, int lpc, loom_error *err) {
  const int v[4] = {depth, rows, cols, lpc};
  const char *names[4] = {"depth", "rows", "cols", "layers_per_cell"};
  for (int i = 0; i < 4; i++)
    if (v[i] < 1 || v[i] > NET_MAX_SIDE)
      return loom_error_set(err, LOOM_ERR_INVALID, _("grid %s must be between 1 and %d, got %d"), names[i],
                            NET_MAX_SIDE, v[i]);
  int64_t n = (int64_t)depth * rows * cols * lpc;
  if (n > NET_MAX_SLOTS)
    return loom_error_set(err, LOOM_ERR_INVALID, _("a %d×%d×%d grid with %d layers per cell has %lld slots, more than %lld"),
                          depth, rows, cols, lpc, (long long)n, (long long)NET_MAX_SLOTS);
  return LOOM_OK;
}

LOOM_API loom_net *loom_net_new(int depth, int rows, int cols, int layers_per_cell, loom_error *err) {
  if (check_dims(depth, rows, cols, layers_per_cell, err)) return NULL;
  loom_net *net = calloc(1, sizeof *net);
  if (!net) goto nomem;
  net->depth = depth, net->rows = rows, net->cols = cols, net->lpc = layers_per_cell;
  net->n_slots = (int64_t)depth * rows * cols * layers_per_cell;
  net->slots = calloc((size_t)net->n_slots, sizeof *net->slots);
  net->disabled = calloc((size_t)net->n_slots, sizeof *net->disabled);
  if (!net->slots || !net->disabled) goto nomem;
  return net;
nomem:
  loom_net_free(net);
  loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory creating a network"));
  return NULL;
}

LOOM_API void loom_net_free(loom_net *net) {
  if (!net) return;
  net_plan_free(net);
  if (net->slots)
    for (int64_t i = 0; i < net->n_slots; i++) loom_layer_free(net->slots[i]);
  free(net->slots);
  free(net->disabled);
  free(net->links);
  free(net->occupied);
  free(net->x_buf);
  free(net->gx_buf);
  free(net->scratch_a);
  free(net->scratch_b);
  free(net);
}

void net_invalidate(loom_net *net) {
  net->plan_valid = false;
  net->occupied_valid = false;
  net->batch = 0;
}

int64_t net_flat(const loom_net *net, loom_coord c) {
  if (c.z < 0 || c.z >= net->depth || c.y < 0 || c.y >= net->rows || c.x < 0 || c.x >= net->cols || c.l < 0 ||
      c.l >= net->lpc)
    return -1;
  return (((int64_t)c.z * net->rows + c.y) * net->cols + c.x) * net->lpc + c.l;
}

void net_occupied_refresh(loom_net *net) {
  if (net->occupied_valid) return;
  int64_t n = 0;
  for (int64_t i = 0; i < net->n_slots; i++) n += net->slots[i] != NULL;
  int64_t *list = realloc(net->occupied, (size_t)(n > 0 ? n : 1) * sizeof *list);
  if (!list) { /* keep the old cache invalid; callers then scan */
    net->n_occupied = 0;
    return;
  }
  net->occupied = list;
  n = 0;
  for (int64_t i = 0; i < net->n_slots; i++)
    if (net->slots[i]) list[n++] = i;
  net->n_occupied = n;
  net->occupied_valid = true;
}

LOOM_API loom_net *loom_net_clone(const loom_net *src, loom_error *err) {
  if (!src) {
    loom_error_set(err, LOOM_ERR_INVALID, _("no network to copy"));
    return NULL;
  }
  loom_net *net = loom_net_new(src->depth, src->rows, src->cols, src->lpc, err);
  if (!net) return NULL;
  net->input = src->input;
  net->execution = src->execution;
  net->seed = src->seed;
  memcpy(net->disabled, src->disabled, (size_t)src->n_slots * sizeof *net->disabled);
  for (int64_t i = 0; i < src->n_slots; i++) {
    if (!src->slots[i]) continue;
    net->slots[i] = loom_layer_clone(src->slots[i], err);
    if (!net->slots[i]) {
      loom_net_free(net);
      return NULL;
    }
  }
  if (src->n_links > 0) {
    net->links = malloc((size_t)src->n_links * sizeof *net->links);
    if (!net->links) {
      loom_net_free(net);
      loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory copying a network"));
      return NULL;
    }
    memcpy(net->links, src->links, (size_t)src->n_links * sizeof *net->links);
    net->n_links = net->links_cap = src->n_links;
  }
  return net;
}

LOOM_API int loom_net_resize(loom_net *net, int depth, int rows, int cols, int layers_per_cell, loom_error *err) {
  char a[48];
  if (!net) return loom_error_set(err, LOOM_ERR_INVALID, _("no network given"));
  int rc = check_dims(depth, rows, cols, layers_per_cell, err);
  if (rc) return rc;
  loom_net probe = {.depth = depth, .rows = rows, .cols = cols, .lpc = layers_per_cell};
  for (int64_t i = 0; i < net->n_slots; i++) {
    if (!net->slots[i]) continue;
    loom_coord c = loom_net_coord_of(net, i);
    if (net_flat(&probe, c) < 0)
      return loom_error_set(err, LOOM_ERR_RANGE, _("the layer at %s would fall outside a %d×%d×%d grid with %d layers per cell"),
                            loom_coord_format(c, a, sizeof a), depth, rows, cols, layers_per_cell);
  }
  /* Links join occupied slots, which were all checked above. */
  int64_t n = (int64_t)depth * rows * cols * layers_per_cell;
  loom_layer **slots = calloc((size_t)n, sizeof *slots);
  bool *disabled = calloc((size_t)n, sizeof *disabled);
  if (!slots || !disabled) {
    free(slots);
    free(disabled);
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory resizing the network"));
  }
  for (int64_t i = 0; i < net->n_slots; i++) {
    if (!net->slots[i]) continue;
    int64_t j = net_flat(&probe, loom_net_coord_of(net, i));
    slots[j] = net->slots[i];
    disabled[j] = net->disabled[i];
  }
  free(net->slots);
  free(net->disabled);
  net->slots = slots;
  net->disabled = disabled;
  net->depth = depth, net->rows = rows, net->cols = cols, net->lpc = layers_per_cell;
  net->n_slots = n;
  net_invalidate(net);
  return LOOM_OK;
}

LOOM_API int loom_net_depth(const loom_net *net) { return net ? net->depth : 0; }
LOOM_API int loom_net_rows(const loom_net *net) { return net ? net->rows : 0; }
LOOM_API int loom_net_cols(const loom_net *net) { return net ? net->cols : 0; }
LOOM_API int loom_net_layers_per_cell(const loom_net *net) { return net ? net->lpc : 0; }
LOOM_API int64_t loom_net_n_slots(const loom_net *net) { return net ? net->n_slots : 0; }
LOOM_API bool loom_net_contains(const loom_net *net, loom_coord c) { return net && net_flat(net, c) >= 0; }
LOOM_API int64_t loom_net_flat_index(const loom_net *net, loom_coord c) { return net ? net_flat(net, c) : -1; }

LOOM_API loom_coord loom_net_coord_of(const loom_net *net, int64_t flat) {
  loom_coord c = {-1, -1, -1, -1};
  if (!net || flat < 0 || flat >= net->n_slots) return c;
  c.l = (int)(flat % net->lpc);
  flat /= net->lpc;
  c.x = (int)(flat % net->cols);
  flat /= net->cols;
  c.y = (int)(flat % net->rows);
  c.z = (int)(flat / net->rows);
  return c;
}

LOOM_API int loom_net_set_input_shape(loom_net *net, const loom_shape *in, loom_error *err) {
  char s[96];
  if (!net || !in) return loom_error_set(err, LOOM_ERR_INVALID, _("no network or shape given"));
  if (in->rank < 1 || in->rank > LOOM_MAX_DIMS)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("the network's input shape %s has no dimensions"),
                          loom_shape_format(in, s, sizeof s));
  for (int i = 0; i < in->rank; i++)
    if (in->d[i] < 1 || in->d[i] > ((int64_t)1 << 31))
      return loom_error_set(err, LOOM_ERR_SHAPE, _("dimension %d of the network's input shape %s is out of range"), i,
                            loom_shape_format(in, s, sizeof s));
  net->input = *in;
  net_invalidate(net);
  return LOOM_OK;
}

LOOM_API loom_shape loom_net_input_shape(const loom_net *net) {
  loom_shape none = {0};
  return net ? net->input : none;
}

/* ---- slots ------------------------------------------------------------- */

static int slot_or_error(const loom_net *net, loom_coord c, loom_error *err) {
  char a[48];
  int64_t f = net_flat(net, c);
  if (f < 0)
    return loom_error_set(err, LOOM_ERR_RANGE, _("slot %s is outside the %d×%d×%d grid with %d layers per cell"),
                          loom_coord_format(c, a, sizeof a), net->depth, net->rows, net->cols, net->lpc);
  return LOOM_OK;
}

LOOM_API int loom_net_place(loom_net *net, loom_coord c, loom_layer *layer, loom_error *err) {
  char a[48];
  if (!net || !layer) return loom_error_set(err, LOOM_ERR_INVALID, _("no network or layer given"));
  int rc = slot_or_error(net, c, err);
  if (rc) return rc;
  int64_t f = net_flat(net, c);
  if (net->slots[f])
    return loom_error_set(err, LOOM_ERR_INVALID, _("slot %s already holds a %s layer"), loom_coord_format(c, a, sizeof a),
                          net->slots[f]->type->name);
  for (int64_t i = 0; i < net->n_slots; i++)
    if (net->slots[i] == layer)
      return loom_error_set(err, LOOM_ERR_INVALID, _("this layer is already placed at %s"),
                            loom_coord_format(loom_net_coord_of(net, i), a, sizeof a));
  net->slots[f] = layer;
  net->disabled[f] = false;
  int coord[4] = {c.z, c.y, c.x, c.l};
  layer_set_coord(layer, coord, true);
  net_invalidate(net);
  return LOOM_OK;
}

LOOM_API loom_layer *loom_net_layer_at(const loom_net *net, loom_coord c) {
  int64_t f = net ? net_flat(net, c) : -1;
  return f < 0 ? NULL : net->slots[f];
}


LOOM_API loom_layer *loom_net_take(loom_net *net, loom_coord c, loom_link *removed_links, int *n_removed) {
  int cap = n_removed ? *n_removed : 0, count = 0;
  if (n_removed) *n_removed = 0;
  int64_t f = net ? net_flat(net, c) : -1;
  if (f < 0 || !net->slots[f]) return NULL;
  int kept = 0;
  for (int i = 0; i < net->n_links; i++) {
    const loom_link *k = &net->links[i];
    if (loom_coord_equal(k->src, c) || loom_coord_equal(k->dst, c)) {
      if (removed_links && count < cap) removed_links[count] = *k;
      count++;
    } else {
      net->links[kept++] = *k;
    }
  }
  net->n_links = kept;
  if (n_removed) *n_removed = count;
  loom_layer *layer = net->slots[f];
  net->slots[f] = NULL;
  net->disabled[f] = false;
  layer_set_coord(layer, NULL, false);
  net_invalidate(net);
  return layer;
}

LOOM_API int loom_net_clear(loom_net *net, loom_coord c, loom_error *err) {
  char a[48];
  if (!net) return loom_error_set(err, LOOM_ERR_INVALID, _("no network given"));
  int rc = slot_or_error(net, c, err);
  if (rc) return rc;
  if (!loom_net_layer_at(net, c))
    return loom_error_set(err, LOOM_ERR_INVALID, _("slot %s is empty"), loom_coord_format(c, a, sizeof a));
  loom_layer_free(loom_net_take(net, c, NULL, NULL));
  return LOOM_OK;
}

LOOM_API int loom_net_move(loom_net *net, loom_coord from, loom_coord to, loom_error *err) {
  char a[48], b[48];
  if (!net) return loom_error_set(err, LOOM_ERR_INVALID, _("no network given"));
  int rc = slot_or_error(net, from, err);
  if (!rc) rc = slot_or_error(net, to, err);
  if (rc) return rc;
  int64_t f = net_flat(net, from), t = net_flat(net, to);
  if (!net->slots[f])
    return loom_error_set(err, LOOM_ERR_INVALID, _("slot %s is empty; there is nothing to move"),
                          loom_coord_format(from, a, sizeof a));
  if (f == t) return LOOM_OK;
  if (net->slots[t])
    return loom_error_set(err, LOOM_ERR_INVALID, _("cannot move to %s: it already holds a %s layer"),
                          loom_coord_format(to, a, sizeof a), net->slots[t]->type->name);
  /* Links follow the layer; none may end up pointing backwards. */
  for (int i = 0; i < net->n_links; i++) {
    loom_link k = net->links[i];
    if (loom_coord_equal(k.src, from)) k.src = to;
    if (loom_coord_equal(k.dst, from)) k.dst = to;
    if (net->execution != LOOM_EXEC_SYSTOLIC && net_flat(net, k.src) >= net_flat(net, k.dst))
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("moving %s to %s would turn its link %s → %s backwards, which feed-forward execution "
                              "cannot run"),
                            loom_coord_format(from, a, sizeof a), loom_coord_format(to, b, sizeof b),
                            loom_coord_format(k.src, (char[48]){0}, 48), loom_coord_format(k.dst, (char[48]){0}, 48));
  }
  for (int i = 0; i < net->n_links; i++) {
    if (loom_coord_equal(net->links[i].src, from)) net->links[i].src = to;
    if (loom_coord_equal(net->links[i].dst, from)) net->links[i].dst = to;
  }
  net->slots[t] = net->slots[f];
  net->disabled[t] = net->disabled[f];
  net->slots[f] = NULL;
  net->disabled[f] = false;
  int coord[4] = {to.z, to.y, to.x, to.l};
  layer_set_coord(net->slots[t], coord, true);
  net_invalidate(net);
  return LOOM_OK;
}

LOOM_API int loom_net_set_enabled(loom_net *net, loom_coord c, bool enabled, loom_error *err) {
  char a[48];
  if (!net) return loom_error_set(err, LOOM_ERR_INVALID, _("no network given"));
  int rc = slot_or_error(net, c, err);
  if (rc) return rc;
  int64_t f = net_flat(net, c);
  if (!net->slots[f])
    return loom_error_set(err, LOOM_ERR_INVALID, _("slot %s is empty; only a layer can be enabled or disabled"),
                          loom_coord_format(c, a, sizeof a));
  if (net->disabled[f] != !enabled) {
    net->disabled[f] = !enabled;
    net_invalidate(net);
  }
  return LOOM_OK;
}

LOOM_API bool loom_net_is_enabled(const loom_net *net, loom_coord c) {
  int64_t f = net ? net_flat(net, c) : -1;
  return f >= 0 && net->slots[f] && !net->disabled[f];
}

LOOM_API int64_t loom_net_n_layers(const loom_net *net) {
  if (!net) return 0;
  net_occupied_refresh((loom_net *)net);
  if (net->occupied_valid) return net->n_occupied;
  int64_t n = 0;
  for (int64_t i = 0; i < net->n_slots; i++) n += net->slots[i] != NULL;
  return n;
}

LOOM_API loom_coord loom_net_layer_coord(const loom_net *net, int64_t i) {
  loom_coord none = {-1, -1, -1, -1};
  if (!net || i < 0) return none;
  net_occupied_refresh((loom_net *)net);
  if (net->occupied_valid) return i < net->n_occupied ? loom_net_coord_of(net, net->occupied[i]) : none;
  for (int64_t f = 0; f < net->n_slots; f++)
    if (net->slots[f] && i-- == 0) return loom_net_coord_of(net, f);
  return none;
}
