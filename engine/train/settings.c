/*
 * Training settings: defaults, copies, equality, validation and field access
 * by name (docs/training-settings.md). Every operation walks
 * the one table in settings-fields.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "train/settings-internal.h"

#define TEXT_MAX 4200

void settings_fix_csv_pointers(loom_train_settings *s) {
  s->data.csv.label_name = s->data.csv_label_name;
  s->data.csv.features = s->data.csv_features;
  s->data.csv.n_features = s->data.csv_features ? s->data.n_csv_features : 0;
}

LOOM_API loom_train_settings *loom_train_settings_new(void) {
  loom_train_settings *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  loom_data_settings *d = &s->data;
  snprintf(d->source, sizeof d->source, "spiral");
  d->noise = NAN;
  d->factor = NAN;
  d->test_fraction = 0.2;
  d->seed = 1;
  d->csv = loom_csv_options_default();
  d->normalize = LOOM_NORM_NONE;
  s->method = LOOM_TRAIN_BACKPROP;
  snprintf(s->loss, sizeof s->loss, "auto");
  snprintf(s->optimizer, sizeof s->optimizer, "adam");
  s->lr = 1e-3;
  s->weight_decay = s->momentum = s->dampening = s->beta1 = s->beta2 = s->eps = s->alpha = NAN;
  s->schedule = (loom_schedule_settings){.kind = LOOM_SCHEDULE_CONSTANT, .gamma = NAN, .eta_min = NAN,
                                         .warmup_start = 1.0 / 3.0};
  /* the trainer's own defaults, except the seed loom train has always used */
  loom_train_config c = loom_train_config_default();
  s->batch = c.batch_size;
  s->epochs = c.epochs;
  s->seed = 1;
  s->clip_norm = c.clip_norm;
  s->ticks = c.ticks;
  s->shuffle = c.shuffle;
  s->drop_last = c.drop_last;
  s->patience = c.patience;
  s->min_delta = c.min_delta;
  s->restore_best = c.restore_best;
  s->tween = c.tween;
  return s;
}

static bool dup_string(char **dst, const char *src) {
  *dst = NULL;
  if (!src) return true;
  size_t n = strlen(src) + 1;
  if (!(*dst = malloc(n))) return false;
  memcpy(*dst, src, n);
  return true;
}

LOOM_API loom_train_settings *loom_train_settings_copy(const loom_train_settings *s) {
  if (!s) return NULL;
  loom_train_settings *c = malloc(sizeof *c);
  if (!c) return NULL;
  *c = *s;
  c->data.csv_features = NULL;
  bool ok = dup_string(&c->data.csv_path, s->data.csv_path) &&
            dup_string(&c->data.csv_label_name, s->data.csv_label_name) &&
            dup_string(&c->data.base_dir, s->data.base_dir);
  if (ok && s->data.csv_features && s->data.n_csv_features > 0) {
    size_t bytes = (size_t)s->data.n_csv_features * sizeof *s->data.csv_features;
    if ((c->data.csv_features = malloc(bytes))) memcpy(c->data.csv_features, s->data.csv_features, bytes);
    else ok = false;
  }
  settings_fix_csv_pointers(c);
  if (!ok) {
    loom_train_settings_free(c);
    return NULL;
  }
  return c;
}

LOOM_API void loom_train_settings_free(loom_train_settings *s) {
  if (!s) return;
  free(s->data.csv_path);
  free(s->data.csv_label_name);
  free(s->data.csv_features);
  free(s->data.base_dir);
  free(s);
}

static bool field_equal(const loom_train_settings *a, const loom_train_settings *b, const settings_field *f) {
  if (f->kind == SK_INTS) {
    const int64_t *va = *(int64_t *const *)((const char *)a + f->offset);
    const int64_t *vb = *(int64_t *const *)((const char *)b + f->offset);
    int64_t na = *(const int64_t *)((const char *)a + f->count_offset);
    int64_t nb = *(const int64_t *)((const char *)b + f->count_offset);
    if (!va || !vb) return !va && !vb;
    return na == nb && memcmp(va, vb, (size_t)na * sizeof *va) == 0;
  }
  /* the text forms are equal exactly when the values are: doubles print
   * their shortest exact form, "default" stands for every unset state */
  static _Thread_local char ta[TEXT_MAX], tb[TEXT_MAX];
  settings_field_format(a, f, ta, sizeof ta);
  settings_field_format(b, f, tb, sizeof tb);
  return strcmp(ta, tb) == 0;
}

LOOM_API bool loom_train_settings_equal(const loom_train_settings *a, const loom_train_settings *b) {
  if (!a || !b) return a == b;
  for (int i = 0; i < settings_n_fields; i++)
    if (!field_equal(a, b, &settings_fields[i])) return false;
  return true;
}

/* A field's current value against its range and choices: read back through
 * the same parser set_field uses, into scratch settings. */
static int check_value(const loom_train_settings *s, const settings_field *f, loom_train_settings *scratch, char *why,
                       size_t size) {
  if (settings_field_is_unset(s, f)) return LOOM_OK;
  if (f->kind == SK_INTS) {
    const int64_t *v = s->data.csv_features;
    if (s->data.n_csv_features < 1)
      return snprintf(why, size, _("expected at least one column")), LOOM_ERR_INVALID;
    for (int64_t i = 0; i < s->data.n_csv_features; i++)
      if (v[i] < (int64_t)f->lo || v[i] > (int64_t)f->hi)
        return snprintf(why, size, _("column %lld is out of range 0..%lld"), (long long)v[i], (long long)f->hi),
               LOOM_ERR_RANGE;
    return LOOM_OK;
  }
  static _Thread_local char text[TEXT_MAX];
  settings_field_format(s, f, text, sizeof text);
  if (f->kind == SK_NAME && memchr((const char *)s + f->offset, '\0', LOOM_SETTINGS_NAME_MAX) == NULL)
    return snprintf(why, size, _("the name is not terminated")), LOOM_ERR_INVALID;
  return settings_field_store(scratch, f, text, false, why, size);
}

int settings_check(const loom_train_settings *s, char *field, size_t field_size, char *why, size_t why_size) {
  loom_train_settings *scratch = loom_train_settings_new(), *defaults = loom_train_settings_new();
  int rc = LOOM_OK;
  if (!scratch || !defaults) {
    snprintf(field, field_size, "settings");
    rc = LOOM_ERR_NOMEM;
    snprintf(why, why_size, _("out of memory"));
    goto done;
  }
  for (int i = 0; i < settings_n_fields && !rc; i++) {
    const settings_field *f = &settings_fields[i];
    snprintf(field, field_size, "%s", f->name);
    if ((rc = check_value(s, f, scratch, why, why_size))) break;
    /* a knob that the choice lacks may only hold its default */
    bool is_default = settings_field_is_unset(s, f) || field_equal(s, defaults, f);
    if (!is_default) rc = settings_field_check_applies(s, f, why, why_size);
  }
  if (rc) goto done;
  loom_error err = {0};
  if (strcmp(s->data.source, "csv") == 0 && !s->data.csv_path) {
    snprintf(field, field_size, "data.csv.path");
    rc = LOOM_ERR_INVALID;
    snprintf(why, why_size, _("a CSV data source needs the path of the file"));
  } else {
    loom_optim_config oc = loom_train_settings_optim_config(s);
    loom_schedule sched;
    if ((rc = loom_optim_config_validate(&oc, &err))) {
      snprintf(field, field_size, "optimizer");
      snprintf(why, why_size, "%s", err.message);
    } else if ((rc = loom_schedule_settings_resolve(&s->schedule, s->lr, 1, &sched, &err))) {
      snprintf(field, field_size, "schedule");
      snprintf(why, why_size, "%s", err.message);
    }
  }
done:
  loom_train_settings_free(scratch);
  loom_train_settings_free(defaults);
  return rc;
}

LOOM_API int loom_train_settings_validate(const loom_train_settings *s, loom_error *err) {
  if (!s) return loom_error_set(err, LOOM_ERR_INVALID, _("no training settings given"));
  char field[64], why[LOOM_ERROR_MESSAGE_MAX - 80];
  int rc = settings_check(s, field, sizeof field, why, sizeof why);
  if (rc) return loom_error_set(err, rc, "%s: %s", field, why);
  return LOOM_OK;
}

/* Short names for the fields people set most (UI entries, CLI flags). */
static const char *resolve_alias(const char *name) {
  static const char *const aliases[][2] = {
      {"lr", "optimizer.lr"},       {"optimizer", "optimizer.name"}, {"schedule", "schedule.kind"},
      {"warmup", "schedule.warmup"}, {"data", "data.source"},
  };
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(aliases[i][0], name) == 0) return aliases[i][1];
  return name;
}

static const settings_field *find_field(const char *name, loom_error *err) {
  const settings_field *f = name ? settings_field_find(resolve_alias(name)) : NULL;
  if (!f) loom_error_set(err, LOOM_ERR_INVALID, _("unknown training settings field “%s”"), name ? name : "(null)");
  return f;
}

LOOM_API int loom_train_settings_set_field(loom_train_settings *s, const char *field, const char *value,
                                           loom_error *err) {
  if (!s) return loom_error_set(err, LOOM_ERR_INVALID, _("no training settings given"));
  const settings_field *f = find_field(field, err);
  if (!f) return err ? err->code : LOOM_ERR_INVALID;
  char why[LOOM_ERROR_MESSAGE_MAX - 80];
  loom_train_settings *next = loom_train_settings_copy(s);
  if (!next) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory"));
  int rc = settings_field_store(next, f, value, true, why, sizeof why);
  if (!rc && !settings_field_is_unset(next, f)) rc = settings_field_check_applies(next, f, why, sizeof why);
  if (rc) {
    loom_train_settings_free(next);
    return loom_error_set(err, rc, "%s: %s", f->name, why);
  }
  /* a new choice forgets the knobs it does not have */
  settings_scope changed = strcmp(f->name, "data.source") == 0      ? SS_SOURCE
                           : strcmp(f->name, "optimizer.name") == 0 ? SS_OPTIMIZER
                           : strcmp(f->name, "schedule.kind") == 0  ? SS_SCHEDULE
                                                                    : SS_ALL;
  for (int i = 0; changed != SS_ALL && i < settings_n_fields; i++)
    if (settings_fields[i].scope == changed && !settings_field_applies(next, &settings_fields[i]))
      settings_field_reset(next, &settings_fields[i]);
  /* swap contents so the caller's pointer stays valid */
  loom_train_settings old = *s;
  *s = *next;
  *next = old;
  settings_fix_csv_pointers(s);
  settings_fix_csv_pointers(next);
  loom_train_settings_free(next);
  return LOOM_OK;
}

LOOM_API int loom_train_settings_get_field(const loom_train_settings *s, const char *field, char *buf, size_t size,
                                           loom_error *err) {
  if (!s || !buf || size == 0) return loom_error_set(err, LOOM_ERR_INVALID, _("no training settings or buffer given"));
  const settings_field *f = find_field(field, err);
  if (!f) return err ? err->code : LOOM_ERR_INVALID;
  settings_field_format(s, f, buf, size);
  return LOOM_OK;
}
