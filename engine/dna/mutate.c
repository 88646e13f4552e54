/*
 * Mutation operators (loom/evolve.h, docs/dna.md "Evolution"). Each draw
 * works on a fresh copy of the parent and is kept only if the copy passes
 * shape inference with the parent's output size; otherwise the copy is
 * thrown away and the next draw from the same stream is tried, so a seed
 * always gives the same child (or the same refusal).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "core/rng.h"
#include "dna/evolve-internal.h"

static const char *const mutation_names[] = {"perturb", "dtype", "add-link", "add-layer", "remove-layer", "splice"};

LOOM_API const char *loom_mutation_name(loom_mutation_kind kind) {
  return (unsigned)kind < sizeof mutation_names / sizeof mutation_names[0] ? mutation_names[kind] : NULL;
}

LOOM_API loom_mutate_config loom_mutate_config_default(void) { return (loom_mutate_config){.sigma = 0.1, .attempts = 16}; }

int64_t evolve_out_numel(const loom_net *net) {
  loom_shape s = loom_net_output_shape(net);
  return loom_shape_numel(&s);
}

int evolve_check(loom_net *net, int64_t out_numel, uint64_t seed, loom_error *err) {
  loom_diag *diags = NULL;
  int nd = loom_net_infer_shapes(net, seed, &diags);
  int rc = LOOM_OK;
  char at[64];
  if (nd > 0)
    rc = loom_error_set(err, LOOM_ERR_SHAPE, "%s: %s", loom_coord_format(diags[0].at, at, sizeof at), diags[0].message);
  else if (nd < 0) rc = loom_error_set(err, LOOM_ERR_INVALID, _("shape inference failed"));
  else if (evolve_out_numel(net) != out_numel)
    rc = loom_error_set(err, LOOM_ERR_SHAPE, _("the network would give %lld outputs per sample instead of %lld"),
                        (long long)evolve_out_numel(net), (long long)out_numel);
  free(diags);
  return rc;
}

/* Counts the layers with trainable tensors; the want-th of them (flat
 * order, from 0) goes to *pick. */
static int64_t count_weighted(const loom_net *net, int64_t *pick, int64_t want) {
  int64_t n = 0;
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, i));
    if (loom_layer_n_weights(l) == 0) continue;
    if (n == want && pick) *pick = i;
    n++;
  }
  return n;
}

static loom_layer *draw_weighted(loom_net *net, loom_rng *rng, loom_coord *at) {
  int64_t n = count_weighted(net, NULL, -1), pick = -1;
  if (n == 0) return NULL;
  count_weighted(net, &pick, (int64_t)loom_rng_below(rng, (uint64_t)n));
  *at = loom_net_layer_coord(net, pick);
  return loom_net_layer_at(net, *at);
}

static double rms(const float *v, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += (double)v[i] * v[i];
  return n ? sqrt(s / (double)n) : 0;
}

/* Noise of std sigma·RMS on every tensor of the layer; a tensor of zeros
 * (a fresh bias) takes the RMS of the whole layer, a layer of zeros sigma. */
static int perturb(loom_net *net, loom_rng *rng, const loom_mutate_config *cfg, loom_mutation *m, loom_error *err) {
  loom_layer *l = draw_weighted(net, rng, &m->at);
  if (!l) return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("the network has no layer with weights to perturb"));
  m->type = loom_layer_get_type(l);
  double all = 0;
  int64_t total = 0;
  for (int k = 0; k < loom_layer_n_weights(l); k++) {
    loom_weights *w = loom_layer_weights(l, k);
    double r = rms(loom_weights_master_const(w), loom_weights_count(w));
    all += r * r * (double)loom_weights_count(w);
    total += loom_weights_count(w);
  }
  all = total ? sqrt(all / (double)total) : 0;
  for (int k = 0; k < loom_layer_n_weights(l); k++) {
    loom_weights *w = loom_layer_weights(l, k);
    float *v = loom_weights_master(w);
    int64_t n = loom_weights_count(w);
    double r = rms(v, n);
    double std = cfg->sigma * (r > 0 ? r : all > 0 ? all : 1.0);
    for (int64_t i = 0; i < n; i++) v[i] = (float)(v[i] + std * loom_rng_normal(rng));
    loom_weights_touch(w);
  }
  return LOOM_OK;
}

static int change_dtype(loom_net *net, loom_rng *rng, loom_mutation *m, loom_error *err) {
  loom_layer *l = draw_weighted(net, rng, &m->at);
  if (!l) return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("the network has no layer with weights to change"));
  m->type = loom_layer_get_type(l);
  m->old_dtype = loom_layer_get_dtype(l);
  /* Any other dtype of the table, uniformly. */
  m->dtype = (loom_dtype)loom_rng_below(rng, LOOM_DTYPE_COUNT - 1);
  if (m->dtype >= m->old_dtype) m->dtype = (loom_dtype)(m->dtype + 1);
  return loom_layer_set_dtype(l, m->dtype, err);
}

static int add_link(loom_net *net, loom_rng *rng, loom_mutation *m, loom_error *err) {
  int64_t n = loom_net_n_layers(net);
  if (n < 2) return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("a link needs two layers, the network has %lld"), (long long)n);
  int64_t i = (int64_t)loom_rng_below(rng, (uint64_t)n), j = (int64_t)loom_rng_below(rng, (uint64_t)(n - 1));
  if (j >= i) j++;
  /* Forward links only: feed-forward execution refuses backward ones. */
  loom_link link = {loom_net_layer_coord(net, i < j ? i : j), loom_net_layer_coord(net, i < j ? j : i), LOOM_MERGE_ADD};
  m->from = link.src;
  m->at = link.dst;
  m->type = loom_layer_get_type(loom_net_layer_at(net, link.dst));
  return loom_net_add_link(net, &link, err);
}

/* Types a mutation may add: plain layers (no containers, nothing random,
 * no output distributions), in registry order. */
static int addable_types(const loom_layer_type **out) {
  int n = 0;
  for (int i = 0; i < loom_layer_type_count(); i++) {
    const loom_layer_type *t = loom_layer_type_at(i);
    unsigned f = loom_layer_type_flags(t);
    if (f & (LOOM_LAYER_CONTAINER | LOOM_LAYER_STOCHASTIC | LOOM_LAYER_OUTPUTS_PROBABILITIES)) continue;
    if (out) out[n] = t;
    n++;
  }
  return n;
}

static int add_layer(loom_net *net, loom_rng *rng, loom_mutation *m, loom_error *err) {
  int64_t free_slots = loom_net_n_slots(net) - loom_net_n_layers(net);
  if (free_slots <= 0) return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("the grid has no free slot for a new layer"));
  int64_t want = (int64_t)loom_rng_below(rng, (uint64_t)free_slots), flat = -1;
  for (int64_t f = 0, seen = 0; f < loom_net_n_slots(net); f++) {
    if (loom_net_layer_at(net, loom_net_coord_of(net, f))) continue;
    if (seen++ == want) {
      flat = f;
      break;
    }
  }
  m->at = loom_net_coord_of(net, flat);
  const loom_layer_type *types[256];
  int nt = addable_types(NULL);
  if (nt < 1 || nt > (int)(sizeof types / sizeof types[0]))
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("no layer type can be added by a mutation"));
  addable_types(types);
  m->type = types[loom_rng_below(rng, (uint64_t)nt)];
  /* A copy is not inferred yet, and the proposal reads the inferred shapes;
   * the net's own seed keeps every weight. */
  loom_diag *diags = NULL;
  int nd = loom_net_infer_shapes(net, loom_net_seed(net), &diags);
  free(diags);
  if (nd != 0) return loom_error_set(err, LOOM_ERR_SHAPE, _("the parent network does not pass shape inference"));
  loom_shape in;
  int rc = loom_net_propose_input(net, m->at, &in, err);
  loom_layer *l = rc ? NULL : loom_layer_new(m->type, err);
  if (!l) return rc ? rc : LOOM_ERR_INVALID;
  /* A layer with a width keeps the width it receives, so the layers after
   * it still fit. */
  if (!(rc = loom_layer_adapt_to_input(l, &in, err)) && loom_layer_type_param_index(m->type, "out_features") >= 0)
    rc = loom_layer_set_int(l, "out_features", loom_shape_numel(&in), err);
  if (!rc) rc = loom_net_place(net, m->at, l, err);
  else loom_layer_free(l);
  return rc;
}

static int remove_layer(loom_net *net, loom_rng *rng, loom_mutation *m, loom_error *err) {
  int64_t n = loom_net_n_layers(net);
  if (n < 1) return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("the network has no layer to remove"));
  m->at = loom_net_layer_coord(net, (int64_t)loom_rng_below(rng, (uint64_t)n));
  loom_layer *l = loom_net_take(net, m->at, NULL, NULL);
  m->type = loom_layer_get_type(l);
  loom_layer_free(l);
  return LOOM_OK;
}

static int apply(loom_net *net, loom_mutation_kind kind, loom_rng *rng, const loom_mutate_config *cfg,
                 loom_mutation *m, loom_error *err) {
  switch (kind) {
  case LOOM_MUTATE_PERTURB: return perturb(net, rng, cfg, m, err);
  case LOOM_MUTATE_DTYPE: return change_dtype(net, rng, m, err);
  case LOOM_MUTATE_ADD_LINK: return add_link(net, rng, m, err);
  case LOOM_MUTATE_ADD_LAYER: return add_layer(net, rng, m, err);
  case LOOM_MUTATE_REMOVE_LAYER: return remove_layer(net, rng, m, err);
  case LOOM_MUTATE_SPLICE: break;
  }
  return loom_error_set(err, LOOM_ERR_INVALID, _("unknown mutation operator %d"), (int)kind);
}

LOOM_API loom_net *loom_mutate(const loom_net *parent, loom_mutation_kind kind, uint64_t seed,
                               const loom_mutate_config *cfg, loom_mutation *done, loom_error *err) {
  loom_mutate_config def = loom_mutate_config_default();
  if (!cfg) cfg = &def;
  if (!parent || (unsigned)kind >= LOOM_MUTATION_OPERATORS) {
    loom_error_set(err, LOOM_ERR_INVALID, _("no parent network or an unknown mutation operator %d"), (int)kind);
    return NULL;
  }
  if (!(cfg->sigma >= 0 && cfg->sigma <= 1e3) || cfg->attempts < 1 || cfg->attempts > 1 << 20) {
    loom_error_set(err, LOOM_ERR_INVALID, _("mutation settings out of range: sigma %g (0…1000), attempts %d (1…%d)"),
                   cfg->sigma, cfg->attempts, 1 << 20);
    return NULL;
  }
  int64_t out = evolve_out_numel(parent);
  if (out < 1) {
    loom_error_set(err, LOOM_ERR_INVALID, _("the parent network must pass shape inference before it is mutated"));
    return NULL;
  }
  loom_rng rng;
  loom_rng_seed(&rng, loom_rng_derive(seed, (uint64_t)kind));
  loom_error why = {0};
  for (int a = 0; a < cfg->attempts; a++) {
    loom_net *child = loom_net_clone(parent, err);
    if (!child) return NULL;
    loom_mutation m = {.kind = kind};
    int rc = apply(child, kind, &rng, cfg, &m, &why);
    if (!rc) rc = evolve_check(child, out, loom_rng_derive(seed, 0x100u + (uint64_t)a), &why);
    if (!rc) {
      if (done) *done = m;
      return child;
    }
    loom_net_free(child);
    /* Nothing to work on: no later draw can do better. */
    if (rc == LOOM_ERR_UNSUPPORTED || rc == LOOM_ERR_NOMEM) break;
  }
  if (why.code == LOOM_ERR_UNSUPPORTED || why.code == LOOM_ERR_NOMEM) loom_error_set(err, why.code, "%s", why.message);
  else
    loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("no valid %s mutation in %d draws (the last: %s)"),
                   loom_mutation_name(kind), cfg->attempts, why.message);
  return NULL;
}
