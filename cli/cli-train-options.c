/*
 * `loom train --schedule NAME[:key=value,...] --warmup N[:start=F]` and the
 * optimizer options. Counts (step size, cycle length, warmup) are optimizer
 * updates, i.e. mini-batches, as in the engine and in torch's schedulers.
 * docs/training-settings.md ("Command line") describes the syntax.
 */
#include "cli-train-options.h"

#include <errno.h>
#include <glib.h>
#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

#define SCHEDULE_MAX_COUNT INT64_C(1000000000000)

static bool parse_count(const char *text, int64_t lo, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (end == text || *end || errno == ERANGE || v < lo || v > SCHEDULE_MAX_COUNT) return false;
  *out = v;
  return true;
}

static bool parse_number(const char *text, double *out) {
  char *end;
  errno = 0;
  double v = g_ascii_strtod(text, &end);
  if (end == text || *end || errno == ERANGE || !isfinite(v)) return false;
  *out = v;
  return true;
}

/* Schedule names the CLI accepts: the engine's and two short forms. */
static bool schedule_kind(const char *name, loom_schedule_kind *out) {
  if (strcmp(name, "exp") == 0) name = "exponential";
  else if (strcmp(name, "cosine") == 0) name = "cosine_restarts";
  return loom_schedule_from_name(name, out, NULL) == LOOM_OK;
}

/* The keys each schedule takes, for messages. */
static const char *schedule_keys(loom_schedule_kind kind) {
  switch (kind) {
  case LOOM_SCHEDULE_STEP: return "size, gamma";
  case LOOM_SCHEDULE_EXPONENTIAL: return "gamma";
  case LOOM_SCHEDULE_COSINE_RESTARTS: return "t0, tmult, eta_min";
  default: return "";
  }
}

/* Which keys one --schedule option gave, to refuse a key given twice. */
typedef struct {
  bool size, gamma, t0, tmult, eta_min;
} schedule_seen;

static int schedule_option(loom_schedule_settings *spec, schedule_seen *given, const char *key, const char *value) {
  const char *name = loom_schedule_name(spec->kind);
  bool *seen = NULL;
  if (spec->kind == LOOM_SCHEDULE_STEP && strcmp(key, "size") == 0) seen = &given->size;
  else if ((spec->kind == LOOM_SCHEDULE_STEP || spec->kind == LOOM_SCHEDULE_EXPONENTIAL) && strcmp(key, "gamma") == 0)
    seen = &given->gamma;
  else if (spec->kind == LOOM_SCHEDULE_COSINE_RESTARTS && strcmp(key, "t0") == 0) seen = &given->t0;
  else if (spec->kind == LOOM_SCHEDULE_COSINE_RESTARTS && strcmp(key, "tmult") == 0) seen = &given->tmult;
  else if (spec->kind == LOOM_SCHEDULE_COSINE_RESTARTS && strcmp(key, "eta_min") == 0) seen = &given->eta_min;
  if (!seen)
    return cli_usage_error("train", _("--schedule: unknown key '%s' for %s (expected %s)"), key, name,
                           schedule_keys(spec->kind));
  if (*seen) return cli_usage_error("train", _("--schedule: '%s' is given twice"), key);
  *seen = true;
  bool ok;
  if (strcmp(key, "size") == 0) ok = parse_count(value, 1, &spec->step_size);
  else if (strcmp(key, "t0") == 0) ok = parse_count(value, 1, &spec->t0);
  else if (strcmp(key, "tmult") == 0) ok = parse_count(value, 1, &spec->tmult);
  else if (strcmp(key, "gamma") == 0) ok = parse_number(value, &spec->gamma) && spec->gamma > 0;
  else ok = parse_number(value, &spec->eta_min) && spec->eta_min >= 0;
  if (ok) return 0;
  if (strcmp(key, "gamma") == 0)
    return cli_usage_error("train", _("--schedule: gamma needs a number > 0, not '%s'"), value);
  if (strcmp(key, "eta_min") == 0)
    return cli_usage_error("train", _("--schedule: eta_min needs a number >= 0, not '%s'"), value);
  return cli_usage_error("train", _("--schedule: %s needs an integer from 1 to %lld, not '%s'"), key,
                         (long long)SCHEDULE_MAX_COUNT, value);
}

int cli_schedule_parse(const char *text, loom_schedule_settings *out) {
  char *copy = g_strdup(text);
  char *options = strchr(copy, ':');
  if (options) *options++ = '\0';
  int rc = 0;
  /* a new schedule: its knobs start unset, the warmup stays */
  loom_schedule_settings fresh = {.gamma = NAN, .eta_min = NAN, .warmup = out->warmup,
                                  .warmup_start = out->warmup_start};
  loom_schedule_settings *spec = &fresh;
  schedule_seen given = {0};
  if (!schedule_kind(copy, &spec->kind)) {
    rc = cli_usage_error("train", _("--schedule: unknown schedule '%s' (expected constant, step, exponential (exp) or "
                                    "cosine_restarts (cosine))"),
                         copy);
  } else if (options && spec->kind == LOOM_SCHEDULE_CONSTANT) {
    rc = cli_usage_error("train", _("--schedule: constant takes no options, not '%s'"), options);
  } else if (options && !*options) {
    rc = cli_usage_error("train", _("--schedule: expected key=value, not '%s'"), options);
  } else if (options) {
    char **items = g_strsplit(options, ",", -1);
    for (int i = 0; items[i] && !rc; i++) {
      char *eq = strchr(items[i], '=');
      if (!eq || eq == items[i] || !eq[1]) {
        rc = cli_usage_error("train", _("--schedule: expected key=value, not '%s'"), items[i]);
        break;
      }
      *eq = '\0';
      rc = schedule_option(spec, &given, items[i], eq + 1);
    }
    g_strfreev(items);
  }
  g_free(copy);
  if (!rc) *out = fresh;
  return rc;
}

int cli_warmup_parse(const char *text, loom_schedule_settings *spec) {
  char *copy = g_strdup(text);
  char *options = strchr(copy, ':');
  if (options) *options++ = '\0';
  int rc = 0;
  if (!parse_count(copy, 0, &spec->warmup)) {
    rc = cli_usage_error("train", _("--warmup needs a number of updates from 0 to %lld, not '%s'"),
                         (long long)SCHEDULE_MAX_COUNT, copy);
  } else if (options) {
    const char *value = g_str_has_prefix(options, "start=") ? options + strlen("start=") : NULL;
    if (!value)
      rc = cli_usage_error("train", _("--warmup: unknown option '%s' (expected start=F)"), options);
    else if (!parse_number(value, &spec->warmup_start) || spec->warmup_start <= 0 || spec->warmup_start > 1)
      rc = cli_usage_error("train", _("--warmup: start needs a number in (0, 1], not '%s'"), value);
  }
  g_free(copy);
  return rc;
}

int cli_optim_apply(const char *momentum, bool nesterov, const char *weight_decay, const char *betas,
                    loom_train_settings *s) {
  loom_optim_config c = loom_train_settings_optim_config(s), *cfg = &c;
  const char *name = loom_optim_name(cfg->kind);
  bool sgd = cfg->kind == LOOM_OPTIM_SGD, adam = cfg->kind == LOOM_OPTIM_ADAM || cfg->kind == LOOM_OPTIM_ADAMW;
  if (momentum) {
    if (!sgd && cfg->kind != LOOM_OPTIM_RMSPROP)
      return cli_usage_error("train", _("--momentum applies to sgd and rmsprop, not %s"), name);
    if (!parse_number(momentum, &cfg->momentum) || cfg->momentum < 0)
      return cli_usage_error("train", _("--momentum needs a number >= 0, not '%s'"), momentum);
  }
  if (nesterov) {
    if (!sgd) return cli_usage_error("train", _("--nesterov applies to sgd, not %s"), name);
    cfg->nesterov = true;
  }
  if (weight_decay && (!parse_number(weight_decay, &cfg->weight_decay) || cfg->weight_decay < 0))
    return cli_usage_error("train", _("--weight-decay needs a number >= 0, not '%s'"), weight_decay);
  if (betas) {
    if (!adam) return cli_usage_error("train", _("--betas applies to adam and adamw, not %s"), name);
    char **parts = g_strsplit(betas, ",", -1);
    bool ok = g_strv_length(parts) == 2 && parse_number(parts[0], &cfg->beta1) && parse_number(parts[1], &cfg->beta2);
    g_strfreev(parts);
    if (!ok) return cli_usage_error("train", _("--betas needs two numbers B1,B2, not '%s'"), betas);
  }
  loom_error err = {0};
  if (loom_optim_config_validate(cfg, &err)) return cli_usage_error("train", "%s", err.message);
  /* only the options given become settings: the rest stay "the optimizer's default" */
  if (momentum) s->momentum = cfg->momentum;
  if (nesterov) s->nesterov = true;
  if (weight_decay) s->weight_decay = cfg->weight_decay;
  if (betas) {
    s->beta1 = cfg->beta1;
    s->beta2 = cfg->beta2;
  }
  return 0;
}
