/*
 * Shape inference: walks the occupied slots in flat order, merges the links
 * arriving at each, builds every layer for the shape that reaches it and
 * records the plan exec.c runs. Every problem becomes a loom_diag naming the
 * slot (and the other end of a link), the expected and the actual sizes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "core/rng.h"
#include "net/net-internal.h"

void net_plan_free(loom_net *net) {
  for (int k = 0; k < net->n_nodes; k++) {
    net_node *n = &net->nodes[k];
    free(n->merges);
    free(n->feedback);
    free(n->in_buf);
    free(n->out_buf);
    free(n->grad_out);
  }
  free(net->nodes);
  net->nodes = NULL;
  net->n_nodes = 0;
  net->plan_valid = false;
  net->plan_ok = false;
  net->batch = 0;
}

typedef struct {
  loom_diag *items;
  int n, cap;
} diag_list;

static void diag_add(diag_list *d, loom_coord at, const loom_coord *other, loom_status code, const char *fmt, ...)
  __attribute__((format(printf, 5, 6)));

static void diag_add(diag_list *d, loom_coord at, const loom_coord *other, loom_status code, const char *fmt, ...) {
  if (d->n == d->cap) {
    int cap = d->cap ? d->cap * 2 : 8;
    loom_diag *grown = realloc(d->items, (size_t)cap * sizeof *grown);
    if (!grown) { /* keep counting so the caller still sees a failure */
      d->n++;
      return;
    }
    d->items = grown;
    d->cap = cap;
  }
  if (d->n >= d->cap) {
    d->n++;
    return;
  }
  loom_diag *g = &d->items[d->n++];
  memset(g, 0, sizeof *g);
  g->at = at;
  g->has_other = other != NULL;
  if (other) g->other = *other;
  g->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g->message, sizeof g->message, fmt, ap);
  va_end(ap);
}

static int node_of_flat(const loom_net *net, int64_t flat) {
  int lo = 0, hi = net->n_nodes - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (net->nodes[mid].flat == flat) return mid;
    if (net->nodes[mid].flat < flat) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* Applies the merge of a link at `node`; returns false (after a diag) on a mismatch. */
static bool merge_shape(loom_shape *cur, const loom_shape *src, loom_merge mode, const loom_link *k, diag_list *d) {
  char a[48], b[48], sa[96], sb[96];
  loom_coord_format(k->src, a, sizeof a);
  loom_coord_format(k->dst, b, sizeof b);
  loom_shape_format(src, sa, sizeof sa);
  loom_shape_format(cur, sb, sizeof sb);
  switch (mode) {
  case LOOM_MERGE_REPLACE: *cur = *src; return true;
  case LOOM_MERGE_ADD:
    if (loom_shape_equal(cur, src)) return true;
    diag_add(d, k->dst, &k->src, LOOM_ERR_SHAPE,
             _("link %s → %s (add): the link carries %s but the input at %s is %s; add needs equal shapes"), a, b, sa,
             b, sb);
    return false;
  case LOOM_MERGE_CONCAT: {
    bool ok = cur->rank == src->rank;
    for (int i = 1; ok && i < cur->rank; i++) ok = cur->d[i] == src->d[i];
    if (ok) {
      cur->d[0] += src->d[0];
      return true;
    }
    diag_add(d, k->dst, &k->src, LOOM_ERR_SHAPE,
             _("link %s → %s (concat): the link carries %s but the input at %s is %s; concat needs equal shapes apart "
               "from the first dimension"),
             a, b, sa, b, sb);
    return false;
  }
  }
  return false;
}

/* Systolic networks: a feedback link (from the destination itself or a later
 * slot) reads the previous tick and must keep the shape at its destination,
 * so shapes stay those of the spine and forward links. */
static void infer_feedback(loom_net *net, diag_list *d) {
  for (int i = 0; i < net->n_links; i++) {
    const loom_link *lk = &net->links[i];
    int k = node_of_flat(net, net_flat(net, lk->dst)), s = node_of_flat(net, net_flat(net, lk->src));
    if (k < 0 || s < 0 || s < k) continue;
    net_node *n = &net->nodes[k];
    const loom_shape *src = &net->nodes[s].out;
    if (n->in.rank < 1 || src->rank < 1) continue; /* reported upstream */
    char a[48], b[48], sa[96], sb[96];
    loom_coord_format(lk->src, a, sizeof a);
    loom_coord_format(lk->dst, b, sizeof b);
    if (lk->merge == LOOM_MERGE_CONCAT || !loom_shape_equal(src, &n->in)) {
      diag_add(d, lk->dst, &lk->src, LOOM_ERR_SHAPE,
               _("feedback link %s → %s (%s): it carries %s but the input at %s is %s; a feedback link must keep the "
                 "shape (add or replace with equal shapes)"),
               a, b, loom_merge_name(lk->merge), loom_shape_format(src, sa, sizeof sa), b,
               loom_shape_format(&n->in, sb, sizeof sb));
      continue;
    }
    net_merge *grown = realloc(n->feedback, (size_t)(n->n_feedback + 1) * sizeof *grown);
    if (!grown) {
      diag_add(d, n->coord, NULL, LOOM_ERR_NOMEM, _("out of memory inferring shapes"));
      continue;
    }
    n->feedback = grown;
    n->feedback[n->n_feedback++] = (net_merge){.src_node = s, .mode = lk->merge,
                                               .before_numel = loom_shape_numel(&n->in),
                                               .src_numel = loom_shape_numel(src)};
  }
}

LOOM_API int loom_net_infer_shapes(loom_net *net, uint64_t seed, loom_diag **diags) {
  diag_list d = {0};
  if (diags) *diags = NULL;
  if (!net) return 0;
  net_plan_free(net);
  net->seed = seed;
  net_occupied_refresh(net);
  int64_t n_occ = loom_net_n_layers(net);
  if (n_occ > 0) {
    net->nodes = calloc((size_t)n_occ, sizeof *net->nodes);
    if (!net->nodes) {
      loom_coord origin = {0, 0, 0, 0};
      diag_add(&d, origin, NULL, LOOM_ERR_NOMEM, _("out of memory inferring shapes"));
      goto done;
    }
  }
  net->n_nodes = (int)n_occ;
  for (int k = 0; k < net->n_nodes; k++) {
    net_node *n = &net->nodes[k];
    n->coord = loom_net_layer_coord(net, k);
    n->flat = net_flat(net, n->coord);
    n->layer = net->slots[n->flat];
    n->enabled = !net->disabled[n->flat];
    n->pred = k - 1;
  }
  if (net->input.rank < 1) {
    loom_coord at = net->n_nodes ? net->nodes[0].coord : (loom_coord){0, 0, 0, 0};
    diag_add(&d, at, NULL, LOOM_ERR_SHAPE, _("the network's input shape is not set"));
  }
  for (int k = 0; k < net->n_nodes; k++) {
    net_node *n = &net->nodes[k];
    loom_shape none = {0};
    n->base_in = n->pred < 0 ? net->input : net->nodes[n->pred].out;
    loom_shape cur = n->base_in;
    bool known = cur.rank > 0;
    for (int i = 0; i < net->n_links; i++) {
      const loom_link *lk = &net->links[i];
      if (net_flat(net, lk->dst) != n->flat) continue;
      int s = node_of_flat(net, net_flat(net, lk->src));
      if (s >= k && net->execution == LOOM_EXEC_SYSTOLIC) continue; /* feedback: checked once every shape is known */
      if (s < 0 || s >= k) { /* add_link refuses these; a resize, move or load can still make one */
        char a[48], b[48];
        loom_coord_format(lk->src, a, sizeof a);
        loom_coord_format(lk->dst, b, sizeof b);
        if (s >= 0)
          diag_add(&d, lk->dst, &lk->src, LOOM_ERR_INVALID,
                   _("link %s → %s points backwards (the source comes after the destination); feedback links need "
                     "systolic execution"),
                   a, b);
        else
          diag_add(&d, lk->dst, &lk->src, LOOM_ERR_INVALID, _("link %s → %s does not come from an earlier layer"), a, b);
        known = false;
        continue;
      }
      const loom_shape *src = &net->nodes[s].out;
      if (src->rank < 1) {
        known = false; /* the problem upstream was reported there */
        continue;
      }
      if (!known) continue;
      net_merge m = {.src_node = s, .mode = lk->merge, .before_numel = loom_shape_numel(&cur),
                     .src_numel = loom_shape_numel(src)};
      if (!merge_shape(&cur, src, lk->merge, lk, &d)) {
        known = false;
        continue;
      }
      net_merge *grown = realloc(n->merges, (size_t)(n->n_merges + 1) * sizeof *grown);
      if (!grown) {
        diag_add(&d, n->coord, NULL, LOOM_ERR_NOMEM, _("out of memory inferring shapes"));
        known = false;
        continue;
      }
      n->merges = grown;
      n->merges[n->n_merges++] = m;
    }
    n->in = known ? cur : none;
    n->out = none;
    if (!known) continue;
    loom_error err = {0};
    int rc = loom_layer_build(n->layer, &cur, loom_rng_derive(seed, (uint64_t)n->flat), &err);
    if (!n->enabled) {
      n->out = cur; /* a disabled slot passes its input through; its own build problems wait until enabled */
    } else if (rc) {
      diag_add(&d, n->coord, NULL, (loom_status)rc, "%s", err.message);
    } else {
      n->out = n->layer->out_shape;
    }
  }
  if (net->execution == LOOM_EXEC_SYSTOLIC) infer_feedback(net, &d);
done:
  net->out_shape = net->n_nodes ? net->nodes[net->n_nodes - 1].out : net->input;
  net->plan_valid = true;
  net->plan_ok = d.n == 0;
  if (diags && d.n > 0)
    *diags = d.items;
  else
    free(d.items);
  return d.n;
}

/* A layer changed behind the net's back (a parameter set, a rebuild). */
static bool plan_stale(const loom_net *net) {
  if (!net->plan_valid) return true;
  for (int k = 0; k < net->n_nodes; k++) {
    const net_node *n = &net->nodes[k];
    if (!n->enabled) continue;
    if (!n->layer->built || !loom_shape_equal(&n->layer->in_shape, &n->in) ||
        !loom_shape_equal(&n->layer->out_shape, &n->out))
      return true;
  }
  return false;
}

int net_ensure_plan(loom_net *net, loom_error *err) {
  if (!plan_stale(net) && net->plan_ok) return LOOM_OK;
  loom_diag *diags = NULL;
  int n = loom_net_infer_shapes(net, net->seed, &diags);
  if (n == 0) return LOOM_OK;
  int code = diags ? diags[0].code : LOOM_ERR_NOMEM;
  if (code == LOOM_OK) code = LOOM_ERR_SHAPE;
  loom_error_set(err, (loom_status)code, "%s", diags ? diags[0].message : _("out of memory inferring shapes"));
  free(diags);
  return code;
}

LOOM_API int loom_net_propose_input(const loom_net *net, loom_coord c, loom_shape *out, loom_error *err) {
  char a[48];
  if (!net || !out) return loom_error_set(err, LOOM_ERR_INVALID, _("no network given"));
  int64_t f = net_flat(net, c);
  if (f < 0)
    return loom_error_set(err, LOOM_ERR_RANGE, _("slot %s is outside the grid"), loom_coord_format(c, a, sizeof a));
  if (!net->plan_valid)
    return loom_error_set(err, LOOM_ERR_INVALID, _("the network changed since its shapes were inferred"));
  int prev = -1;
  for (int k = 0; k < net->n_nodes && net->nodes[k].flat < f; k++) prev = k;
  loom_shape s = prev < 0 ? net->input : net->nodes[prev].out;
  if (s.rank < 1) {
    if (prev < 0) return loom_error_set(err, LOOM_ERR_SHAPE, _("the network's input shape is not set"));
    return loom_error_set(err, LOOM_ERR_SHAPE, _("the layer at %s before %s has no valid output shape"),
                          loom_coord_format(net->nodes[prev].coord, a, sizeof a),
                          loom_coord_format(c, (char[48]){0}, 48));
  }
  *out = s;
  return LOOM_OK;
}

LOOM_API loom_shape loom_net_output_shape(const loom_net *net) {
  loom_shape none = {0};
  return net && net->plan_valid && net->plan_ok ? net->out_shape : none;
}
