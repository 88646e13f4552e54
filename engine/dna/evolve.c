/*
 * The evolutionary search (loom/evolve.h, docs/dna.md "Evolution"): a
 * (1+λ) strategy. Every generation makes `population` children of the
 * current parent — some first spliced with the mate (the runner-up of the
 * previous generation), each then changed by one mutation operator —
 * trains each a few steps and evaluates it on the test set. The best child
 * replaces the parent only if it is fitter; the runner-up becomes the next
 * mate. Child k of generation g draws everything from
 * derive(derive(seed, g), k): children do not depend on each other's draws,
 * and the trainer and the evaluation are bit-identical for any thread count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "core/rng.h"
#include "dna/evolve-internal.h"

/* Batches of the test-set evaluation: a memory bound, not a result. */
#define EVOLVE_EVAL_BATCH 256

/* How often each operator is drawn (perturb, dtype, add-link, add-layer,
 * remove-layer): weights change most often, structure less, precision least. */
static const double op_weights[LOOM_MUTATION_OPERATORS] = {0.35, 0.10, 0.20, 0.20, 0.15};

typedef struct candidate {
  loom_net *net;
  loom_eval_result fit;
  int64_t index;
  int n_mut;
  loom_mutation mut[2];
} candidate;

struct loom_evolution {
  loom_evolve_config cfg;
  const loom_dataset *train, *test;
  loom_pool *pool;
  int64_t generation;
  loom_net *best, *previous; /* previous may be NULL: then it is `best` */
  loom_eval_result best_fit;
  candidate mate;            /* net NULL until a generation has run */
};

LOOM_API loom_evolve_config loom_evolve_config_default(void) {
  return (loom_evolve_config){
    .generations = 10,
    .population = 8,
    .seed = 0,
    .train_steps = 20,
    .train = loom_train_config_default(),
    .splice_rate = 0.25,
    .splice_threshold = 0.8,
    .mutate = loom_mutate_config_default(),
  };
}

/* p is fitter than q: higher accuracy, then lower loss; without accuracy
 * the loss alone. Equal fitness is not fitter (the earlier one stays). */
static bool fitter(const loom_eval_result *p, const loom_eval_result *q) {
  bool acc = !isnan(p->accuracy) && !isnan(q->accuracy);
  if (acc && p->accuracy != q->accuracy) return p->accuracy > q->accuracy;
  return p->loss < q->loss;
}

static int evaluate(loom_evolution *ev, loom_net *net, loom_eval_result *out, loom_error *err) {
  /* A systolic candidate is scored after the ticks it trains with. */
  int rc = loom_evaluate_ticks(net, ev->pool, ev->test, &ev->cfg.train.loss, EVOLVE_EVAL_BATCH, ev->cfg.train.ticks,
                               out, err);
  if (!rc && !isfinite(out->loss)) rc = loom_error_set(err, LOOM_ERR_NONFINITE, _("the test loss is not finite"));
  return rc;
}

static int check_config(const loom_evolve_config *c, loom_error *err) {
  if (c->generations < 1 || c->generations > 1000000)
    return loom_error_set(err, LOOM_ERR_INVALID, _("generations must lie between 1 and %d, got %lld"), 1000000,
                          (long long)c->generations);
  if (c->population < 1 || c->population > 100000)
    return loom_error_set(err, LOOM_ERR_INVALID, _("population must lie between 1 and %d, got %lld"), 100000,
                          (long long)c->population);
  if (c->train_steps < 0 || c->train_steps > 100000000)
    return loom_error_set(err, LOOM_ERR_INVALID, _("train_steps must lie between 0 and %d, got %lld"), 100000000,
                          (long long)c->train_steps);
  if (!(c->splice_rate >= 0 && c->splice_rate <= 1))
    return loom_error_set(err, LOOM_ERR_INVALID, _("splice_rate must lie between 0 and 1, got %g"), c->splice_rate);
  if (!(c->splice_threshold >= 0 && c->splice_threshold <= 1))
    return loom_error_set(err, LOOM_ERR_INVALID, _("splice_threshold must lie between 0 and 1, got %g"),
                          c->splice_threshold);
  if (!(c->mutate.sigma >= 0 && c->mutate.sigma <= 1e3) || c->mutate.attempts < 1 || c->mutate.attempts > 1 << 20)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("mutation settings out of range: sigma %g (0…1000), attempts %d (1…%d)"), c->mutate.sigma,
                          c->mutate.attempts, 1 << 20);
  return loom_train_config_validate(&c->train, err);
}

LOOM_API void loom_evolution_free(loom_evolution *ev) {
  if (!ev) return;
  loom_net_free(ev->best);
  loom_net_free(ev->previous);
  loom_net_free(ev->mate.net);
  free(ev);
}

LOOM_API loom_evolution *loom_evolution_new(const loom_net *start, const loom_dataset *train,
                                            const loom_dataset *test, const loom_evolve_config *cfg,
                                            loom_pool *pool, loom_error *err) {
  if (!start || !train || !test || !cfg) {
    loom_error_set(err, LOOM_ERR_INVALID, _("an evolution needs a network, training and test data and a configuration"));
    return NULL;
  }
  if (check_config(cfg, err)) return NULL;
  loom_evolution *ev = calloc(1, sizeof *ev);
  if (!ev) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for an evolution"));
    return NULL;
  }
  ev->cfg = *cfg;
  ev->train = train;
  ev->test = test;
  ev->pool = pool;
  if (!(ev->best = loom_net_clone(start, err))) goto fail;
  /* The start keeps its weights: its own seed only builds what it lacks. */
  loom_net *b = ev->best;
  loom_diag *diags = NULL;
  int nd = loom_net_infer_shapes(b, loom_net_seed(b), &diags);
  if (nd != 0) {
    char at[64];
    if (nd > 0)
      loom_error_set(err, LOOM_ERR_SHAPE, _("the network cannot run: %s: %s"),
                     loom_coord_format(diags[0].at, at, sizeof at), diags[0].message);
    else loom_error_set(err, LOOM_ERR_INVALID, _("shape inference failed"));
    free(diags);
    goto fail;
  }
  free(diags);
  if (loom_train_check_data(b, train, &cfg->train.loss, err) || evaluate(ev, b, &ev->best_fit, err)) goto fail;
  return ev;
fail:
  loom_evolution_free(ev);
  return NULL;
}

/* The operator drawn by weight, then the others in order when one has
 * nothing to work on (a full grid cannot take a layer). */
static loom_net *mutate_child(const loom_evolution *ev, const loom_net *base, loom_rng *rng, uint64_t cs,
                              candidate *c, loom_error *err) {
  double u = loom_rng_uniform(rng), acc = 0;
  int first = LOOM_MUTATION_OPERATORS - 1;
  for (int k = 0; k < LOOM_MUTATION_OPERATORS; k++) {
    acc += op_weights[k];
    if (u < acc) {
      first = k;
      break;
    }
  }
  for (int t = 0; t < LOOM_MUTATION_OPERATORS; t++) {
    loom_mutation_kind kind = (loom_mutation_kind)((first + t) % LOOM_MUTATION_OPERATORS);
    loom_error why = {0};
    loom_net *child = loom_mutate(base, kind, loom_rng_derive(cs, 0x10u + (uint64_t)kind), &ev->cfg.mutate,
                                  &c->mut[c->n_mut], &why);
    if (child) {
      c->n_mut++;
      return child;
    }
    if (why.code != LOOM_ERR_UNSUPPORTED) {
      if (err) *err = why;
      return NULL;
    }
  }
  return loom_net_clone(base, err); /* no operator applies: an unchanged copy */
}

/* Trains c->net train_steps steps. A failure of the child (a NaN, a layer
 * that cannot train) is returned as a status like any other; the caller
 * tells them from fatal ones. */
static int train_child(loom_evolution *ev, candidate *c, uint64_t cs, loom_error *err) {
  if (ev->cfg.train_steps == 0) return LOOM_OK;
  loom_train_config tc = ev->cfg.train;
  tc.seed = loom_rng_derive(cs, 3);
  tc.epochs = ev->cfg.train_steps; /* every epoch has a batch at least: enough epochs */
  tc.patience = 0;
  tc.restore_best = false;
  loom_trainer *tr = loom_trainer_new(c->net, ev->train, NULL, &tc, ev->pool, err);
  if (!tr) return err ? err->code : LOOM_ERR_INVALID;
  int rc = LOOM_OK;
  for (int64_t s = 0; s < ev->cfg.train_steps && !rc; s++) {
    loom_step_stats st;
    rc = loom_trainer_step(tr, &st, err);
  }
  loom_trainer_free(tr);
  return rc;
}

/* Makes, trains and evaluates child k. Returns a fatal status (out of
 * memory); a child that is merely unfit to run is left with net NULL. */
static int make_child(loom_evolution *ev, int64_t k, candidate *c, loom_error *err) {
  memset(c, 0, sizeof *c);
  c->index = k;
  uint64_t cs = loom_rng_derive(loom_rng_derive(ev->cfg.seed, (uint64_t)ev->generation + 1), (uint64_t)k);
  loom_rng rng;
  loom_rng_seed(&rng, cs);
  loom_error why = {0};
  loom_net *spliced = NULL;
  /* The splice draw is made whether or not there is a mate, so the rest of
   * the child's stream does not depend on it. */
  bool splice = loom_rng_uniform(&rng) < ev->cfg.splice_rate;
  if (splice && ev->mate.net) {
    int64_t taken = 0;
    spliced = loom_splice(ev->best, ev->mate.net, loom_rng_derive(cs, 1), ev->cfg.splice_threshold, &taken, &why);
    if (!spliced && why.code == LOOM_ERR_NOMEM) goto fatal;
    if (spliced) c->mut[c->n_mut++] = (loom_mutation){.kind = LOOM_MUTATE_SPLICE, .taken = taken};
  }
  c->net = mutate_child(ev, spliced ? spliced : ev->best, &rng, cs, c, &why);
  loom_net_free(spliced);
  if (!c->net) goto fatal_or_unfit;
  if (train_child(ev, c, cs, &why) || evaluate(ev, c->net, &c->fit, &why)) goto fatal_or_unfit;
  return LOOM_OK;
fatal_or_unfit:
  loom_net_free(c->net);
  c->net = NULL;
  if (why.code != LOOM_ERR_NOMEM) return LOOM_OK;
fatal:
  if (err) *err = why;
  return why.code;
}

static void keep_top_two(candidate *first, candidate *second, candidate *c) {
  if (!c->net) return;
  if (!first->net || fitter(&c->fit, &first->fit)) {
    loom_net_free(second->net);
    *second = *first;
    *first = *c;
  } else if (!second->net || fitter(&c->fit, &second->fit)) {
    loom_net_free(second->net);
    *second = *c;
  } else {
    loom_net_free(c->net);
  }
  c->net = NULL;
}

LOOM_API int loom_evolution_step(loom_evolution *ev, loom_evolve_report *report, loom_error *err) {
  if (!ev) return loom_error_set(err, LOOM_ERR_INVALID, _("no evolution given"));
  if (ev->generation >= ev->cfg.generations)
    return loom_error_set(err, LOOM_ERR_CANCELLED, _("the evolution has run all of its %lld generations"),
                          (long long)ev->cfg.generations);
  loom_evolve_report r = {.generation = ev->generation + 1, .children = ev->cfg.population, .best_child = -1,
                          .parent = ev->best_fit};
  candidate first = {0}, second = {0};
  for (int64_t k = 0; k < ev->cfg.population; k++) {
    candidate c;
    int rc = make_child(ev, k, &c, err);
    if (rc) {
      loom_net_free(first.net);
      loom_net_free(second.net);
      return rc;
    }
    if (c.net) r.valid++;
    keep_top_two(&first, &second, &c);
  }
  if (first.net) {
    r.best_child = first.index;
    r.best = first.fit;
    r.n_mutations = first.n_mut;
    memcpy(r.mutations, first.mut, sizeof r.mutations);
  }
  loom_net_free(ev->previous);
  ev->previous = NULL;
  loom_net_free(ev->mate.net);
  ev->mate = (candidate){0};
  if (first.net && fitter(&first.fit, &ev->best_fit)) {
    r.improved = true;
    /* The old parent and the second child compete for the mate. */
    candidate old = {.net = ev->best, .fit = ev->best_fit, .index = -1};
    ev->previous = loom_net_clone(ev->best, err);
    if (!ev->previous) {
      loom_net_free(first.net);
      loom_net_free(second.net);
      return err ? err->code : LOOM_ERR_NOMEM;
    }
    ev->best = first.net;
    ev->best_fit = first.fit;
    if (second.net && fitter(&second.fit, &old.fit)) {
      ev->mate = second;
      loom_net_free(old.net);
    } else {
      ev->mate = old;
      loom_net_free(second.net);
    }
  } else {
    ev->mate = first; /* the parent stays; its best child is the runner-up */
    loom_net_free(second.net);
  }
  ev->generation++;
  if (report) *report = r;
  return LOOM_OK;
}

LOOM_API int64_t loom_evolution_generation(const loom_evolution *ev) { return ev ? ev->generation : 0; }
LOOM_API const loom_net *loom_evolution_best(const loom_evolution *ev) { return ev ? ev->best : NULL; }

LOOM_API const loom_net *loom_evolution_previous(const loom_evolution *ev) {
  return ev ? (ev->previous ? ev->previous : ev->best) : NULL;
}

LOOM_API loom_eval_result loom_evolution_best_fitness(const loom_evolution *ev) {
  return ev ? ev->best_fit : (loom_eval_result){0};
}
