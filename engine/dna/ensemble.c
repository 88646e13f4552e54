/*
 * Ensembles: success patterns of several classifiers on one data set and
 * how they complement each other (loom/ensemble.h, docs/dna.md). Every
 * figure is an integer count over 0/1 vectors divided once at the end.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "loom/ensemble.h"
#include "loom/train.h"

/* Samples per forward pass: bounds the output buffer, not the result. */
#define ENSEMBLE_BATCH 256

struct loom_ensemble {
  int n_models;
  int64_t n_samples;
  uint8_t *patterns;   /* n_models × n_samples */
  int64_t *correct;    /* per model */
  loom_ensemble_pair *pairs; /* n·(n−1)/2, (0,1), (0,2), …, (1,2), … */
  int best;            /* index into pairs, -1 with one model */
};

static int64_t out_width(const loom_net *net) {
  loom_shape s = loom_net_output_shape(net);
  return loom_shape_numel(&s);
}

static int64_t in_width(const loom_net *net) {
  loom_shape s = loom_net_input_shape(net);
  return loom_shape_numel(&s);
}

static int infer(loom_net *net, loom_error *err) {
  loom_diag *diags = NULL;
  int nd = loom_net_infer_shapes(net, loom_net_seed(net), &diags);
  int rc = LOOM_OK;
  if (nd > 0) rc = loom_error_set(err, diags[0].code ? diags[0].code : LOOM_ERR_SHAPE, "%s", diags[0].message);
  else if (nd < 0) rc = loom_error_set(err, LOOM_ERR_INVALID, _("shape inference failed"));
  free(diags);
  return rc;
}

/* Whether sample row y (w outputs) answers labels (heads entries) right. */
static bool sample_right(const loom_loss_spec *spec, const float *y, int64_t w, const int32_t *labels,
                         const uint8_t *mask) {
  switch (spec->kind) {
  case LOOM_LOSS_MULTI_HEAD_CE:
  case LOOM_LOSS_MULTI_HEAD_NLL: {
    loom_head_counts hc = {0};
    loom_count_correct_heads(y, labels, mask, 1, spec->heads, w / spec->heads, &hc, NULL, NULL);
    return hc.samples == 0 || hc.samples_all_correct == 1;
  }
  case LOOM_LOSS_BCE_LOGITS:
  case LOOM_LOSS_MSE:
    if (w == 1) {
      float t = (float)labels[0];
      return loom_count_correct_binary(y, &t, 1, spec->kind == LOOM_LOSS_BCE_LOGITS ? 0.0 : 0.5) == 1;
    }
    return loom_count_correct_argmax(y, labels, 1, w) == 1;
  case LOOM_LOSS_CROSS_ENTROPY:
    return loom_count_correct_argmax(y, labels, 1, w) == 1;
  }
  return false;
}

LOOM_API int loom_ensemble_correct(loom_net *net, loom_pool *pool, const loom_dataset *ds, uint8_t *correct,
                                   loom_error *err) {
  if (!net || !ds || !correct) return loom_error_set(err, LOOM_ERR_INVALID, _("no network, data set or result given"));
  if (ds->target_kind != LOOM_TARGET_CLASS || !ds->labels)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("an ensemble needs a data set with class labels (right or wrong answers), but this one "
                            "has numeric targets"));
  /* A systolic network has no single forward pass: its answer depends on the
   * ticks it is run for, which an ensemble has no way to choose. */
  if (loom_net_execution(net) == LOOM_EXEC_SYSTOLIC)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("the network runs systolically; an ensemble compares feed-forward networks only"));
  int rc = infer(net, err);
  if (rc) return rc;
  if (in_width(net) != ds->input_numel)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("the model takes %lld inputs per sample but the data has %lld"),
                          (long long)in_width(net), (long long)ds->input_numel);
  loom_loss_spec spec;
  if ((rc = loom_train_pick_loss(net, ds, &spec, err))) return rc;
  int64_t w = out_width(net), heads = ds->target_width;
  int64_t bs = ds->n < ENSEMBLE_BATCH ? ds->n : ENSEMBLE_BATCH;
  float *y = malloc((size_t)(bs > 0 ? bs * w : 1) * sizeof *y);
  if (!y) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %lld outputs"), (long long)(bs * w));
  loom_ctx ctx = {.pool = pool, .training = false};
  for (int64_t s0 = 0; s0 < ds->n && !rc; s0 += bs) {
    int64_t b = ds->n - s0 < bs ? ds->n - s0 : bs;
    if ((rc = loom_net_forward(net, &ctx, ds->inputs + s0 * ds->input_numel, b, y, err))) break;
    for (int64_t i = 0; i < b; i++) {
      int64_t s = s0 + i;
      const uint8_t *mask = ds->head_mask ? ds->head_mask + s * heads : NULL;
      correct[s] = sample_right(&spec, y + i * w, w, ds->labels + s * heads, mask) ? 1 : 0;
    }
  }
  free(y);
  return rc;
}

/* phi of a 2 × 2 table; see loom/ensemble.h for the constant-vector rule. */
static double phi(int64_t both, int64_t only_a, int64_t only_b, int64_t neither) {
  double ra = (double)(both + only_a), wa = (double)(only_b + neither);
  double rb = (double)(both + only_b), wb = (double)(only_a + neither);
  if (ra == 0 || wa == 0 || rb == 0 || wb == 0) return only_a == 0 && only_b == 0 ? 1.0 : 0.0;
  double num = (double)both * (double)neither - (double)only_a * (double)only_b;
  double r = num / sqrt(ra * wa * rb * wb);
  return r > 1 ? 1 : r < -1 ? -1 : r;
}

static loom_ensemble_pair make_pair(const loom_ensemble *e, int a, int b) {
  const uint8_t *pa = e->patterns + (size_t)a * (size_t)e->n_samples;
  const uint8_t *pb = e->patterns + (size_t)b * (size_t)e->n_samples;
  loom_ensemble_pair p = {.a = a, .b = b};
  for (int64_t s = 0; s < e->n_samples; s++) {
    if (pa[s] && pb[s]) p.both++;
    else if (pa[s]) p.only_a++;
    else if (pb[s]) p.only_b++;
    else p.neither++;
  }
  double n = (double)e->n_samples;
  int64_t uni = p.both + p.only_a + p.only_b;
  p.coverage = (double)uni / n;
  p.overlap = uni ? (double)p.both / (double)uni : 1.0;
  p.similarity = phi(p.both, p.only_a, p.only_b, p.neither);
  p.agreement = (double)(p.both + p.neither) / n;
  return p;
}

/* Pair p beats pair q: more coverage (compared as counts, exact), then less
 * alike; equal figures keep the earlier pair. */
static bool better(const loom_ensemble_pair *p, const loom_ensemble_pair *q) {
  int64_t up = p->both + p->only_a + p->only_b, uq = q->both + q->only_a + q->only_b;
  if (up != uq) return up > uq;
  return p->similarity < q->similarity;
}

LOOM_API void loom_ensemble_free(loom_ensemble *e) {
  if (!e) return;
  free(e->patterns);
  free(e->correct);
  free(e->pairs);
  free(e);
}

LOOM_API loom_ensemble *loom_ensemble_from_patterns(int n_models, int64_t n_samples, const uint8_t *const *correct,
                                                     loom_error *err) {
  /* The pair table grows with n²: a bound keeps it small and the counts in range. */
  enum { MAX_MODELS = 4096 };
  if (n_models < 1 || n_models > MAX_MODELS || n_samples < 1 || !correct) {
    loom_error_set(err, LOOM_ERR_INVALID, _("an ensemble needs 1 to %d models and at least one sample, got %d and %lld"),
                   MAX_MODELS, n_models, (long long)n_samples);
    return NULL;
  }
  if ((uint64_t)n_samples > SIZE_MAX / (size_t)n_models) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("%d success patterns of %lld samples are too large"), n_models,
                   (long long)n_samples);
    return NULL;
  }
  size_t n_pairs = (size_t)n_models * (size_t)(n_models - 1) / 2;
  loom_ensemble *e = calloc(1, sizeof *e);
  if (e) {
    e->patterns = malloc((size_t)n_models * (size_t)n_samples);
    e->correct = calloc((size_t)n_models, sizeof *e->correct);
    e->pairs = malloc((n_pairs ? n_pairs : 1) * sizeof *e->pairs);
  }
  if (!e || !e->patterns || !e->correct || !e->pairs) {
    loom_ensemble_free(e);
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %d success patterns of %lld samples"), n_models,
                   (long long)n_samples);
    return NULL;
  }
  e->n_models = n_models;
  e->n_samples = n_samples;
  for (int m = 0; m < n_models; m++) {
    uint8_t *dst = e->patterns + (size_t)m * (size_t)n_samples;
    for (int64_t s = 0; s < n_samples; s++) {
      dst[s] = correct[m][s] ? 1 : 0;
      e->correct[m] += dst[s];
    }
  }
  e->best = -1;
  size_t k = 0;
  for (int a = 0; a < n_models; a++)
    for (int b = a + 1; b < n_models; b++, k++) {
      e->pairs[k] = make_pair(e, a, b);
      if (e->best < 0 || better(&e->pairs[k], &e->pairs[e->best])) e->best = (int)k;
    }
  return e;
}

LOOM_API loom_ensemble *loom_ensemble_evaluate(loom_net *const *nets, int n_models, loom_pool *pool,
                                               const loom_dataset *ds, loom_error *err) {
  if (!nets || n_models < 1 || !ds || ds->n < 1) {
    loom_error_set(err, LOOM_ERR_INVALID, _("an ensemble needs at least one model and a non-empty data set"));
    return NULL;
  }
  /* Sizes first, so a mismatch is reported before any model runs. */
  for (int m = 0; m < n_models; m++) {
    if (infer(nets[m], err)) {
      loom_error_prefix(err, _("model %d"), m);
      return NULL;
    }
    if (m && (in_width(nets[m]) != in_width(nets[0]) || out_width(nets[m]) != out_width(nets[0]))) {
      loom_error_set(err, LOOM_ERR_SHAPE,
                     _("model %d takes %lld inputs and gives %lld outputs per sample, but model 0 takes %lld and "
                       "gives %lld; the models of an ensemble must agree in both"),
                     m, (long long)in_width(nets[m]), (long long)out_width(nets[m]), (long long)in_width(nets[0]),
                     (long long)out_width(nets[0]));
      return NULL;
    }
  }
  if ((uint64_t)ds->n > SIZE_MAX / (size_t)n_models) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("%d success patterns of %lld samples are too large"), n_models,
                   (long long)ds->n);
    return NULL;
  }
  uint8_t *flat = malloc((size_t)n_models * (size_t)ds->n);
  const uint8_t **rows = malloc((size_t)n_models * sizeof *rows);
  loom_ensemble *e = NULL;
  if (!flat || !rows) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %d success patterns of %lld samples"), n_models,
                   (long long)ds->n);
    goto done;
  }
  for (int m = 0; m < n_models; m++) {
    rows[m] = flat + (size_t)m * (size_t)ds->n;
    if (loom_ensemble_correct(nets[m], pool, ds, flat + (size_t)m * (size_t)ds->n, err)) {
      loom_error_prefix(err, _("model %d"), m);
      goto done;
    }
  }
  e = loom_ensemble_from_patterns(n_models, ds->n, rows, err);
done:
  free(flat);
  free(rows);
  return e;
}

LOOM_API int loom_ensemble_n_models(const loom_ensemble *e) { return e ? e->n_models : 0; }
LOOM_API int64_t loom_ensemble_n_samples(const loom_ensemble *e) { return e ? e->n_samples : 0; }

LOOM_API int64_t loom_ensemble_correct_count(const loom_ensemble *e, int m) {
  return e && m >= 0 && m < e->n_models ? e->correct[m] : -1;
}

LOOM_API double loom_ensemble_accuracy(const loom_ensemble *e, int m) {
  return e && m >= 0 && m < e->n_models ? (double)e->correct[m] / (double)e->n_samples : NAN;
}

LOOM_API const uint8_t *loom_ensemble_pattern(const loom_ensemble *e, int m) {
  return e && m >= 0 && m < e->n_models ? e->patterns + (size_t)m * (size_t)e->n_samples : NULL;
}

LOOM_API loom_ensemble_pair loom_ensemble_pair_of(const loom_ensemble *e, int a, int b) {
  if (!e || a == b || a < 0 || b < 0 || a >= e->n_models || b >= e->n_models)
    return (loom_ensemble_pair){.a = -1, .b = -1};
  if (a > b) {
    int t = a;
    a = b;
    b = t;
  }
  /* Pairs are stored row by row: row a starts after a·n − a(a+1)/2 pairs. */
  size_t k = (size_t)a * (size_t)e->n_models - (size_t)a * (size_t)(a + 1) / 2 + (size_t)(b - a - 1);
  return e->pairs[k];
}

LOOM_API loom_ensemble_pair loom_ensemble_best_pair(const loom_ensemble *e) {
  if (!e || e->best < 0) return (loom_ensemble_pair){.a = -1, .b = -1};
  return e->pairs[e->best];
}
