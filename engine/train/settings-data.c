/*
 * From training settings to a run: the data sets exactly as `loom train
 * --data NAME` has always made them (same generator sizes and seeds, same
 * reshape and split), the optimizer, the schedule spread over the run, the
 * trainer configuration. The CLI and the workbench both come through here,
 * so the same settings give the same curve in both.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "train/settings-internal.h"

/* The sizes `loom train --data NAME` used before settings existed. */
#define DEFAULT_SAMPLES 400
#define DEFAULT_SPIRAL_PER_ARM 200
#define DIGITS_FILE "optdigits-8x8.csv.gz"
#define TEXT_FILE "loom-tale.txt" /* the character-level text task (data/datasets/README.md) */

LOOM_API loom_optim_config loom_train_settings_optim_config(const loom_train_settings *s) {
  loom_optim_kind kind = LOOM_OPTIM_ADAM;
  loom_optim_from_name(s->optimizer, &kind, NULL);
  loom_optim_config c = loom_optim_defaults(kind);
  if (!isnan(s->weight_decay)) c.weight_decay = s->weight_decay;
  if (!isnan(s->momentum)) c.momentum = s->momentum;
  if (!isnan(s->dampening)) c.dampening = s->dampening;
  if (!isnan(s->beta1)) c.beta1 = s->beta1;
  if (!isnan(s->beta2)) c.beta2 = s->beta2;
  if (!isnan(s->eps)) c.eps = s->eps;
  if (!isnan(s->alpha)) c.alpha = s->alpha;
  c.nesterov = c.nesterov || s->nesterov;
  c.amsgrad = c.amsgrad || s->amsgrad;
  c.centered = c.centered || s->centered;
  c.maximize = c.maximize || s->maximize;
  return c;
}

LOOM_API int loom_schedule_settings_resolve(const loom_schedule_settings *spec, double lr, int64_t total,
                                            loom_schedule *out, loom_error *err) {
  if (!spec || !out) return loom_error_set(err, LOOM_ERR_INVALID, _("no schedule or result given"));
  int64_t rest = total - spec->warmup; /* the wrapped schedule counts from the end of the warmup */
  if (rest < 1) rest = 1;
  loom_schedule s = loom_schedule_constant(lr);
  s.kind = spec->kind;
  switch (spec->kind) {
  case LOOM_SCHEDULE_STEP: /* ×0.1 at each third */
    s.step_size = spec->step_size ? spec->step_size : (rest / 3 > 0 ? rest / 3 : 1);
    s.gamma = !isnan(spec->gamma) ? spec->gamma : 0.1;
    break;
  case LOOM_SCHEDULE_EXPONENTIAL: /* to 1% at the end */
    s.gamma = !isnan(spec->gamma) ? spec->gamma : pow(0.01, 1.0 / (double)rest);
    break;
  case LOOM_SCHEDULE_COSINE_RESTARTS: /* one cycle over the run */
    s.t_0 = spec->t0 ? spec->t0 : rest;
    s.t_mult = spec->tmult ? spec->tmult : 1;
    s.eta_min = !isnan(spec->eta_min) ? spec->eta_min : 0.0;
    break;
  default: break;
  }
  s.warmup_steps = spec->warmup;
  s.warmup_start_factor = spec->warmup_start;
  int rc = loom_schedule_validate(&s, err);
  if (rc) return rc;
  *out = s;
  return LOOM_OK;
}

static int64_t pick(int64_t set, int64_t fallback) { return set ? set : fallback; }
static double pick_d(double set, double fallback) { return isnan(set) ? fallback : set; }

static loom_dataset *generate(const loom_data_settings *d, int source, const loom_net *net, loom_error *err) {
  loom_shape in = loom_net_input_shape(net), out = loom_net_output_shape(net);
  int64_t numel = loom_shape_numel(&in), outputs = loom_shape_numel(&out);
  int64_t classes = d->classes ? d->classes : (outputs >= 2 ? outputs : 2);
  int64_t n = pick(d->samples, DEFAULT_SAMPLES);
  switch (source) {
  case 0: /* spiral: samples counts every arm's points */
    if (d->samples && d->samples % classes != 0) {
      loom_error_set(err, LOOM_ERR_INVALID, _("data.samples: %lld samples do not split evenly into %lld spiral arms"),
                     (long long)d->samples, (long long)classes);
      return NULL;
    }
    return loom_gen_spiral(d->samples ? d->samples / classes : DEFAULT_SPIRAL_PER_ARM, classes,
                           pick_d(d->noise, 0.02), d->seed, err);
  case 1: return loom_gen_xor(n, pick_d(d->noise, 0.02), d->seed, err);
  case 2: return loom_gen_circles(n, pick_d(d->factor, 0.5), pick_d(d->noise, 0.05), d->seed, err);
  case 3: return loom_gen_clusters(n, classes, numel, pick_d(d->noise, 0.2), d->seed, err);
  case 4: return loom_gen_sine(n, numel, pick_d(d->noise, 0.01), d->seed, err);
  case 5: return loom_gen_copy(n, pick(d->length, 4), pick(d->symbols, 6), pick_d(d->noise, 0.0), d->seed, err);
  case 8: return loom_gen_parity(n, pick(d->length, in.rank == 2 ? in.d[0] : 8), d->seed, err);
  default: break;
  }
  loom_error_set(err, LOOM_ERR_INVALID, _("data.source: “%s” is not a generator"), d->source);
  return NULL;
}

/* dir/name, or name alone when dir is NULL or name is absolute. */
static char *join_path(const char *dir, const char *name, loom_error *err) {
  bool keep = !dir || !*dir || name[0] == '/';
  size_t n = (keep ? 0 : strlen(dir) + 1) + strlen(name) + 1;
  char *p = malloc(n);
  if (!p) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory"));
    return NULL;
  }
  if (keep) snprintf(p, n, "%s", name);
  else snprintf(p, n, "%s/%s", dir, name);
  return p;
}

static loom_dataset *load(const loom_train_settings *s, int source, const loom_net *net, const char *datasets_dir,
                          loom_error *err) {
  const loom_data_settings *d = &s->data;
  if (strcmp(d->source, "digits") == 0) {
    if (!datasets_dir) {
      loom_error_set(err, LOOM_ERR_IO, _("data.source: the digits data set needs the directory holding %s"),
                     DIGITS_FILE);
      return NULL;
    }
    char *path = join_path(datasets_dir, DIGITS_FILE, err);
    if (!path) return NULL;
    loom_shape in = loom_net_input_shape(net);
    loom_dataset *ds = loom_dataset_load_digits(path, in.rank == 3, err);
    free(path);
    return ds;
  }
  if (strcmp(d->source, "text") == 0) {
    if (!datasets_dir) {
      loom_error_set(err, LOOM_ERR_IO, _("data.source: the text data set needs the directory holding %s"), TEXT_FILE);
      return NULL;
    }
    char *path = join_path(datasets_dir, TEXT_FILE, err);
    if (!path) return NULL;
    /* Windows as long as the network's sequence, one-hot for [steps × vocabulary] inputs, indices for [steps]. */
    loom_shape in = loom_net_input_shape(net);
    int64_t window = pick(d->length, in.rank >= 1 ? in.d[0] : 32);
    loom_dataset *ds = loom_dataset_load_text(path, window, window > 1 ? window / 2 : 1, in.rank == 2, err);
    free(path);
    return ds;
  }
  if (strcmp(d->source, "csv") == 0) {
    char *path = join_path(d->base_dir, d->csv_path, err);
    if (!path) return NULL;
    loom_csv_options o = d->csv;
    o.label_name = d->csv_label_name;
    o.features = d->csv_features;
    o.n_features = d->csv_features ? d->n_csv_features : 0;
    loom_dataset *ds = loom_dataset_load_csv(path, &o, err);
    free(path);
    return ds;
  }
  return generate(d, source, net, err);
}

LOOM_API int loom_train_settings_make_data(const loom_train_settings *s, const loom_net *net,
                                           const char *datasets_dir, loom_dataset **train, loom_dataset **test,
                                           loom_error *err) {
  if (train) *train = NULL;
  if (test) *test = NULL;
  if (!s || !net || !train || !test)
    return loom_error_set(err, LOOM_ERR_INVALID, _("no settings, network or result given"));
  int rc = loom_train_settings_validate(s, err);
  if (rc) return rc;
  loom_dataset *all = load(s, settings_source_index(s), net, datasets_dir, err);
  if (!all) return err ? err->code : LOOM_ERR_INVALID;
  /* a generator's flat samples fit an image input of the same size ([64] → [1×8×8]) */
  loom_shape in = loom_net_input_shape(net);
  if (loom_shape_numel(&in) == all->input_numel && !loom_shape_equal(&in, &all->input_shape))
    loom_dataset_reshape_inputs(all, &in, NULL);
  rc = loom_dataset_split(all, s->data.test_fraction, s->data.seed, train, test, err);
  loom_dataset_free(all);
  if (rc) {
    loom_error_prefix(err, "%s", strcmp(s->data.source, "csv") == 0 ? s->data.csv_path : s->data.source);
    return rc;
  }
  if (s->data.normalize != LOOM_NORM_NONE) {
    loom_normalizer norm = {0};
    rc = loom_normalizer_fit(*train, s->data.normalize, &norm, err);
    if (!rc) rc = loom_normalizer_apply(&norm, *train, err);
    if (!rc) rc = loom_normalizer_apply(&norm, *test, err);
    loom_normalizer_clear(&norm);
    if (rc) {
      loom_dataset_free(*train);
      loom_dataset_free(*test);
      *train = *test = NULL;
      return rc;
    }
  }
  return LOOM_OK;
}

LOOM_API int loom_train_settings_make_config(const loom_train_settings *s, const loom_net *net,
                                             const loom_dataset *train, loom_train_config *out, loom_error *err) {
  if (!s || !net || !train || !out)
    return loom_error_set(err, LOOM_ERR_INVALID, _("no settings, network, data or result given"));
  int rc = loom_train_settings_validate(s, err);
  if (rc) return rc;
  loom_train_config c = loom_train_config_default();
  c.method = s->method;
  c.optim = loom_train_settings_optim_config(s);
  if (strcmp(s->loss, "auto") == 0) {
    if ((rc = loom_train_pick_loss(net, train, &c.loss, err))) return rc;
  } else {
    /* a named loss keeps what the data say about heads when they fit */
    if (loom_train_pick_loss(net, train, &c.loss, NULL)) c.loss.heads = train->target_width;
    if ((rc = loom_loss_from_name(s->loss, &c.loss.kind, err))) return rc;
  }
  c.loss.label_smoothing = s->label_smoothing;
  c.batch_size = s->batch;
  c.epochs = s->epochs;
  c.seed = s->seed;
  c.clip_norm = s->clip_norm;
  c.ticks = s->ticks;
  c.shuffle = s->shuffle;
  c.drop_last = s->drop_last;
  c.patience = s->patience;
  c.min_delta = s->min_delta;
  c.restore_best = s->restore_best;
  c.tween = s->tween;
  int64_t batches = s->drop_last ? train->n / s->batch : (train->n + s->batch - 1) / s->batch;
  if (batches < 1) batches = 1;
  if ((rc = loom_schedule_settings_resolve(&s->schedule, s->lr, s->epochs * batches, &c.schedule, err))) return rc;
  if ((rc = loom_train_config_validate(&c, err))) return rc;
  *out = c;
  return LOOM_OK;
}
