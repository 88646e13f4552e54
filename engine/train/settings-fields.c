/*
 * The table of training settings fields (settings-internal.h) and the
 * per-field text conversions shared by set_field, get_field and the JSON
 * file. Numbers are read and written in the C locale whatever the process
 * locale is: a GUI may run with a decimal comma, the files must not change.
 */
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "train/dataset-csv-impl.h"
#include "train/settings-internal.h"

const char *const settings_sources[] = {"spiral", "xor", "circles", "clusters", "sine", "copy", "digits", "csv",
                                        "parity", "text", NULL};

/* SS_SOURCE bits */
#define SRC_SPIRAL (1u << 0)
#define SRC_XOR (1u << 1)
#define SRC_CIRCLES (1u << 2)
#define SRC_CLUSTERS (1u << 3)
#define SRC_SINE (1u << 4)
#define SRC_COPY (1u << 5)
#define SRC_CSV (1u << 7)
#define SRC_PARITY (1u << 8)
#define SRC_TEXT (1u << 9)
#define SRC_GENERATORS (SRC_SPIRAL | SRC_XOR | SRC_CIRCLES | SRC_CLUSTERS | SRC_SINE | SRC_COPY | SRC_PARITY)
/* SS_OPTIMIZER bits */
#define OPT_SGD (1u << LOOM_OPTIM_SGD)
#define OPT_ADAM (1u << LOOM_OPTIM_ADAM | 1u << LOOM_OPTIM_ADAMW)
#define OPT_RMSPROP (1u << LOOM_OPTIM_RMSPROP)
/* SS_SCHEDULE bits */
#define SCH_STEP (1u << LOOM_SCHEDULE_STEP)
#define SCH_EXP (1u << LOOM_SCHEDULE_EXPONENTIAL)
#define SCH_COS (1u << LOOM_SCHEDULE_COSINE_RESTARTS)

static const char *const method_names[] = {"backprop", "tween", NULL};
static const char *const schedule_names[] = {"constant", "step", "exponential", "cosine_restarts", NULL};
static const char *const norm_names[] = {"none", "minmax", "zscore", NULL};
static const char *const header_names[] = {"auto", "yes", "no", NULL};
static const char *const target_names[] = {"class", "vector", NULL};
static const char *const optim_names[] = {"sgd", "adam", "adamw", "rmsprop", NULL};
static const char *const loss_names[] = {"auto", "mse", "cross_entropy", "bce_logits", "multi_head_ce",
                                         "multi_head_nll", NULL};

_Static_assert(sizeof(loom_train_method) == sizeof(int), "enums are stored as int");
_Static_assert(sizeof(loom_schedule_kind) == sizeof(int), "enums are stored as int");
_Static_assert(sizeof(loom_norm_kind) == sizeof(int), "enums are stored as int");
_Static_assert(sizeof(loom_csv_header) == sizeof(int), "enums are stored as int");
_Static_assert(sizeof(loom_target_kind) == sizeof(int), "enums are stored as int");

#define OFF(member) offsetof(loom_train_settings, member)
#define INF INFINITY
#define COUNT_MAX 1e12
#define NUM(n, m, un, l, h, lo_o, hi_o, sc, mk, lb) \
  {n, SK_DOUBLE, OFF(m), 0, un, l, h, lo_o, hi_o, sc, mk, NULL, lb}
#define INT64(n, m, un, l, h, sc, mk, lb) {n, SK_INT64, OFF(m), 0, un, l, h, false, false, sc, mk, NULL, lb}
#define INT(n, m, l, h, lb) {n, SK_INT, OFF(m), 0, SU_NONE, l, h, false, false, SS_ALL, 0, NULL, lb}
#define U64(n, m, lb) {n, SK_UINT64, OFF(m), 0, SU_NONE, 0, 0, false, false, SS_ALL, 0, NULL, lb}
#define BOOL(n, m, sc, mk, lb) {n, SK_BOOL, OFF(m), 0, SU_NONE, 0, 0, false, false, sc, mk, NULL, lb}
#define CHOICE(n, k, m, ch, sc, mk, lb) {n, k, OFF(m), 0, SU_NONE, 0, 0, false, false, sc, mk, ch, lb}

/* The order is the order of the file; new fields go where they belong, a
 * file without them reads them as their defaults. */
const settings_field settings_fields[] = {
    CHOICE("data.source", SK_NAME, data.source, settings_sources, SS_ALL, 0, N_("Data set")),
    INT64("data.samples", data.samples, SU_ZERO, 1, 10000000, SS_SOURCE, SRC_GENERATORS, N_("Samples")),
    NUM("data.noise", data.noise, SU_NAN, 0, 1e6, false, false, SS_SOURCE, SRC_GENERATORS, N_("Noise")),
    INT64("data.classes", data.classes, SU_ZERO, 2, 1000, SS_SOURCE, SRC_SPIRAL | SRC_CLUSTERS, N_("Classes")),
    NUM("data.factor", data.factor, SU_NAN, 0, 1, true, true, SS_SOURCE, SRC_CIRCLES, N_("Inner radius")),
    INT64("data.length", data.length, SU_ZERO, 1, 1000, SS_SOURCE, SRC_COPY | SRC_PARITY | SRC_TEXT,
          N_("Sequence length")),
    INT64("data.symbols", data.symbols, SU_ZERO, 1, 1000, SS_SOURCE, SRC_COPY, N_("Symbols")),
    NUM("data.test_fraction", data.test_fraction, SU_NONE, 0, 1, true, true, SS_ALL, 0, N_("Test fraction")),
    U64("data.seed", data.seed, N_("Data seed")),
    CHOICE("data.normalize", SK_ENUM, data.normalize, norm_names, SS_ALL, 0, N_("Normalisation")),
    {"data.csv.path", SK_STRING, OFF(data.csv_path), 0, SU_NULL, 0, 0, false, false, SS_SOURCE, SRC_CSV, NULL, N_("CSV file")},
    CHOICE("data.csv.header", SK_ENUM, data.csv.header, header_names, SS_SOURCE, SRC_CSV, N_("Header row")),
    {"data.csv.delimiter", SK_CHAR, OFF(data.csv.delimiter), 0, SU_NONE, 0, 0, false, false, SS_SOURCE, SRC_CSV, NULL, N_("Delimiter")},
    INT64("data.csv.label_index", data.csv.label_index, SU_NONE, -1000000, 999999, SS_SOURCE, SRC_CSV, N_("Target column")),
    {"data.csv.label_name", SK_STRING, OFF(data.csv_label_name), 0, SU_NULL, 0, 0, false, false, SS_SOURCE, SRC_CSV,
     NULL, N_("Target column name")},
    CHOICE("data.csv.target", SK_ENUM, data.csv.target, target_names, SS_SOURCE, SRC_CSV, N_("Target kind")),
    {"data.csv.features", SK_INTS, OFF(data.csv_features), OFF(data.n_csv_features), SU_NULL, 0, 999999, false, false,
     SS_SOURCE, SRC_CSV, NULL, N_("Feature columns")},
    CHOICE("method", SK_ENUM, method, method_names, SS_ALL, 0, N_("Method")),
    CHOICE("loss", SK_NAME, loss, loss_names, SS_ALL, 0, N_("Loss")),
    NUM("label_smoothing", label_smoothing, SU_NONE, 0, 1, false, true, SS_ALL, 0, N_("Label smoothing")),
    CHOICE("optimizer.name", SK_NAME, optimizer, optim_names, SS_ALL, 0, N_("Optimizer")),
    NUM("optimizer.lr", lr, SU_NONE, 0, INF, false, false, SS_ALL, 0, N_("Learning rate")),
    NUM("optimizer.weight_decay", weight_decay, SU_NAN, 0, INF, false, false, SS_ALL, 0, N_("Weight decay")),
    NUM("optimizer.momentum", momentum, SU_NAN, 0, INF, false, false, SS_OPTIMIZER, OPT_SGD | OPT_RMSPROP, N_("Momentum")),
    NUM("optimizer.dampening", dampening, SU_NAN, -INF, INF, false, false, SS_OPTIMIZER, OPT_SGD, N_("Dampening")),
    BOOL("optimizer.nesterov", nesterov, SS_OPTIMIZER, OPT_SGD, N_("Nesterov momentum")),
    NUM("optimizer.beta1", beta1, SU_NAN, 0, 1, false, true, SS_OPTIMIZER, OPT_ADAM, N_("Beta 1")),
    NUM("optimizer.beta2", beta2, SU_NAN, 0, 1, false, true, SS_OPTIMIZER, OPT_ADAM, N_("Beta 2")),
    NUM("optimizer.eps", eps, SU_NAN, 0, INF, false, false, SS_OPTIMIZER, OPT_ADAM | OPT_RMSPROP, N_("Epsilon")),
    BOOL("optimizer.amsgrad", amsgrad, SS_OPTIMIZER, OPT_ADAM, N_("AMSGrad")),
    NUM("optimizer.alpha", alpha, SU_NAN, 0, INF, false, false, SS_OPTIMIZER, OPT_RMSPROP, N_("Smoothing (alpha)")),
    BOOL("optimizer.centered", centered, SS_OPTIMIZER, OPT_RMSPROP, N_("Centered")),
    BOOL("optimizer.maximize", maximize, SS_ALL, 0, N_("Maximize")),
    CHOICE("schedule.kind", SK_ENUM, schedule.kind, schedule_names, SS_ALL, 0, N_("Schedule")),
    INT64("schedule.step_size", schedule.step_size, SU_ZERO, 1, COUNT_MAX, SS_SCHEDULE, SCH_STEP, N_("Step size")),
    NUM("schedule.gamma", schedule.gamma, SU_NAN, 0, INF, true, false, SS_SCHEDULE, SCH_STEP | SCH_EXP, N_("Gamma")),
    INT64("schedule.t0", schedule.t0, SU_ZERO, 1, COUNT_MAX, SS_SCHEDULE, SCH_COS, N_("First cycle (T0)")),
    INT64("schedule.tmult", schedule.tmult, SU_ZERO, 1, COUNT_MAX, SS_SCHEDULE, SCH_COS, N_("Cycle growth (Tmult)")),
    NUM("schedule.eta_min", schedule.eta_min, SU_NAN, 0, INF, false, false, SS_SCHEDULE, SCH_COS, N_("Minimum rate")),
    INT64("schedule.warmup", schedule.warmup, SU_NONE, 0, COUNT_MAX, SS_ALL, 0, N_("Warmup steps")),
    NUM("schedule.warmup_start", schedule.warmup_start, SU_NONE, 0, 1, true, false, SS_ALL, 0, N_("Warmup start factor")),
    INT64("batch", batch, SU_NONE, 1, 1 << 24, SS_ALL, 0, N_("Batch size")),
    INT64("epochs", epochs, SU_NONE, 1, 1000000, SS_ALL, 0, N_("Epochs")),
    U64("seed", seed, N_("Seed")),
    INT("threads", threads, 0, 1024, N_("Threads")),
    NUM("clip_norm", clip_norm, SU_NONE, 0, INF, false, false, SS_ALL, 0, N_("Clip gradient norm")),
    INT64("ticks", ticks, SU_ZERO, 1, LOOM_TRAIN_MAX_TICKS, SS_ALL, 0, N_("Ticks (systolic)")),
    BOOL("shuffle", shuffle, SS_ALL, 0, N_("Shuffle")),
    BOOL("drop_last", drop_last, SS_ALL, 0, N_("Drop last batch")),
    INT("patience", patience, 0, 1000000, N_("Early-stopping patience")),
    NUM("min_delta", min_delta, SU_NONE, 0, INF, false, false, SS_ALL, 0, N_("Minimum improvement")),
    BOOL("restore_best", restore_best, SS_ALL, 0, N_("Restore best weights")),
    /* the ranges loom_train_config_validate accepts */
    NUM("tween.threshold", tween.threshold, SU_NONE, -1, 1, false, false, SS_ALL, 0, N_("Budget threshold")),
    NUM("tween.momentum", tween.momentum, SU_NONE, 0, 0.999999, false, false, SS_ALL, 0, N_("Target momentum")),
    NUM("tween.target_step", tween.target_step, SU_NONE, 1e-12, 1e6, false, false, SS_ALL, 0, N_("Target step")),
    NUM("tween.max_input_step", tween.max_input_step, SU_NONE, 1e-12, 1e6, false, false, SS_ALL, 0, N_("Maximum input step")),
    NUM("tween.explosion_factor", tween.explosion_factor, SU_NONE, 1.0 + 1e-12, 1e12, false, false, SS_ALL, 0, N_("Explosion factor")),
    NUM("tween.baseline_decay", tween.baseline_decay, SU_NONE, 0, 0.999999, false, false, SS_ALL, 0, N_("Baseline decay")),
    INT("tween.warmup_steps", tween.warmup_steps, 0, 1000000000, N_("Explosion warmup steps")),
    NUM("tween.damping", tween.damping, SU_NONE, 1e-12, 0.999999, false, false, SS_ALL, 0, N_("Damping")),
    NUM("tween.recovery", tween.recovery, SU_NONE, 1, 1e6, false, false, SS_ALL, 0, N_("Recovery factor")),
    NUM("tween.min_rate_scale", tween.min_rate_scale, SU_NONE, 1e-12, 1, false, false, SS_ALL, 0, N_("Minimum rate scale")),
    BOOL("tween.chain_rule", tween.chain_rule, SS_ALL, 0, N_("Chain rule")),
};
const int settings_n_fields = (int)(sizeof settings_fields / sizeof settings_fields[0]);

const settings_field *settings_field_find(const char *name) {
  for (int i = 0; name && i < settings_n_fields; i++)
    if (strcmp(settings_fields[i].name, name) == 0) return &settings_fields[i];
  return NULL;
}

static int name_index(const char *const *names, const char *v) {
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], v) == 0) return i;
  return -1;
}

int settings_source_index(const loom_train_settings *s) { return name_index(settings_sources, s->data.source); }

static void *at(const loom_train_settings *s, size_t offset) { return (char *)s + offset; }

bool settings_field_is_unset(const loom_train_settings *s, const settings_field *f) {
  void *p = at(s, f->offset);
  switch (f->unset) {
  case SU_NAN: return isnan(*(double *)p);
  case SU_ZERO: return *(int64_t *)p == 0;
  case SU_NULL: return *(void **)p == NULL;
  case SU_NONE: break;
  }
  return false;
}

bool settings_field_applies(const loom_train_settings *s, const settings_field *f) {
  int choice;
  switch (f->scope) {
  case SS_ALL: return true;
  case SS_SOURCE: choice = settings_source_index(s); break;
  case SS_OPTIMIZER: choice = name_index(optim_names, s->optimizer); break;
  case SS_SCHEDULE: choice = (int)s->schedule.kind; break;
  default: return false;
  }
  return choice >= 0 && choice < 32 && (f->mask >> choice & 1u);
}

/* ---- numbers in the C locale ----------------------------------------- */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

/* The shortest %.Ng text that reads back as the same double. */
static void format_double(double v, char *buf, size_t size) {
  pthread_once(&c_locale_once, make_c_locale);
  locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  if (old) uselocale(old);
}

static bool parse_int64(const char *text, int64_t *out) {
  if (!*text) return false;
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (*end || errno == ERANGE) return false;
  *out = v;
  return true;
}

static bool parse_uint64(const char *text, uint64_t *out) {
  if (!*text || *text == '-' || *text == '+') return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (*end || errno == ERANGE) return false;
  *out = v;
  return true;
}

static const char *range_text(const settings_field *f, char *buf, size_t size) {
  char lo[40], hi[40];
  format_double(f->lo, lo, sizeof lo);
  format_double(f->hi, hi, sizeof hi);
  if (isinf(f->hi) && isinf(f->lo)) snprintf(buf, size, _("a finite number"));
  else if (isinf(f->hi)) snprintf(buf, size, f->lo_open ? _("a number > %s") : _("a number >= %s"), lo);
  /* TRANSLATORS: an interval such as "a number in [0, 1)"; the brackets say whether the ends belong to it. */
  else snprintf(buf, size, _("a number in %s%s, %s%s"), f->lo_open ? "(" : "[", lo, hi, f->hi_open ? ")" : "]");
  return buf;
}

static bool in_range(const settings_field *f, double v) {
  return (f->lo_open ? v > f->lo : v >= f->lo) && (f->hi_open ? v < f->hi : v <= f->hi);
}

static void list_names(const char *const *names, char *buf, size_t size) {
  buf[0] = '\0';
  for (int i = 0; names[i]; i++) {
    if (i) strncat(buf, ", ", size - strlen(buf) - 1);
    strncat(buf, names[i], size - strlen(buf) - 1);
  }
}

static int fail(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, size, fmt, ap);
  va_end(ap);
  return LOOM_ERR_INVALID;
}

static int store_ints(loom_train_settings *s, const settings_field *f, const char *text, char *why, size_t size) {
  int64_t n = 0, cap = 0, *v = NULL;
  const char *p = text;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char item[32];
    int64_t x;
    if (len == 0 || len >= sizeof item) goto bad;
    memcpy(item, p, len);
    item[len] = '\0';
    if (!parse_int64(item, &x) || x < (int64_t)f->lo || x > (int64_t)f->hi) goto bad;
    for (int64_t i = 0; i < n; i++)
      if (v[i] == x) {
        free(v);
        return fail(why, size, _("column %lld is listed twice"), (long long)x);
      }
    if (n == cap) {
      int64_t *grown = realloc(v, (size_t)(cap ? 2 * cap : 8) * sizeof *v);
      if (!grown) {
        free(v);
        return fail(why, size, _("out of memory"));
      }
      v = grown;
      cap = cap ? 2 * cap : 8;
    }
    v[n++] = x;
    p = comma ? comma + 1 : p + len;
    if (comma && !*p) goto bad;
  }
  if (n == 0) goto bad;
  free(*(int64_t **)at(s, f->offset));
  *(int64_t **)at(s, f->offset) = v;
  *(int64_t *)at(s, f->count_offset) = n;
  settings_fix_csv_pointers(s);
  return LOOM_OK;
bad:
  free(v);
  return fail(why, size, _("expected column indices from %lld to %lld separated by commas, found “%s”"),
              (long long)f->lo, (long long)f->hi, text);
}

int settings_field_store(loom_train_settings *s, const settings_field *f, const char *text, bool allow_default,
                         char *why, size_t size) {
  void *p = at(s, f->offset);
  if (!text) return fail(why, size, _("no value given"));
  if (allow_default && f->unset != SU_NONE && strcmp(text, "default") == 0) {
    settings_field_reset(s, f);
    return LOOM_OK;
  }
  char range[96];
  switch (f->kind) {
  case SK_INT64:
  case SK_INT: {
    int64_t v;
    if (!parse_int64(text, &v) || v < (int64_t)f->lo || v > (int64_t)f->hi)
      return fail(why, size, _("expected an integer from %lld to %lld, found “%s”"), (long long)f->lo,
                  (long long)f->hi, text);
    if (f->kind == SK_INT) *(int *)p = (int)v;
    else *(int64_t *)p = v;
    return LOOM_OK;
  }
  case SK_UINT64:
    if (!parse_uint64(text, (uint64_t *)p))
      return fail(why, size, _("expected a non-negative integer below 2^64, found “%s”"), text);
    return LOOM_OK;
  case SK_DOUBLE: {
    double v;
    if (!csv_parse_number(text, &v) || !in_range(f, v))
      return fail(why, size, _("expected %s, found “%s”"), range_text(f, range, sizeof range), text);
    *(double *)p = v;
    return LOOM_OK;
  }
  case SK_BOOL:
    if (strcmp(text, "true") != 0 && strcmp(text, "false") != 0)
      return fail(why, size, _("expected true or false, found “%s”"), text);
    *(bool *)p = text[0] == 't';
    return LOOM_OK;
  case SK_NAME:
  case SK_ENUM: {
    int i = name_index(f->choices, text);
    if (i < 0) {
      char names[160];
      list_names(f->choices, names, sizeof names);
      return fail(why, size, _("unknown value “%s” (expected one of: %s)"), text, names);
    }
    if (f->kind == SK_ENUM) *(int *)p = i;
    else snprintf((char *)p, LOOM_SETTINGS_NAME_MAX, "%s", f->choices[i]);
    return LOOM_OK;
  }
  case SK_STRING: {
    size_t len = strlen(text);
    if (len == 0 || len > 4096) return fail(why, size, _("expected a text of 1 to 4096 bytes"));
    char *copy = malloc(len + 1);
    if (!copy) return fail(why, size, _("out of memory"));
    memcpy(copy, text, len + 1);
    free(*(char **)p);
    *(char **)p = copy;
    settings_fix_csv_pointers(s);
    return LOOM_OK;
  }
  case SK_CHAR:
    if (strcmp(text, "auto") == 0) *(char *)p = 0;
    else if (strlen(text) == 1 && text[0] != '"' && text[0] != '\n' && text[0] != '\r') *(char *)p = text[0];
    else return fail(why, size, _("expected one character or “auto”, found “%s”"), text);
    return LOOM_OK;
  case SK_INTS: return store_ints(s, f, text, why, size);
  }
  return fail(why, size, _("unknown field kind"));
}

void settings_field_format(const loom_train_settings *s, const settings_field *f, char *buf, size_t size) {
  const void *p = at(s, f->offset);
  if (settings_field_is_unset(s, f)) {
    snprintf(buf, size, "default");
    return;
  }
  switch (f->kind) {
  case SK_INT64: snprintf(buf, size, "%" PRId64, *(const int64_t *)p); return;
  case SK_INT: snprintf(buf, size, "%d", *(const int *)p); return;
  case SK_UINT64: snprintf(buf, size, "%" PRIu64, *(const uint64_t *)p); return;
  case SK_DOUBLE: format_double(*(const double *)p, buf, size); return;
  case SK_BOOL: snprintf(buf, size, "%s", *(const bool *)p ? "true" : "false"); return;
  case SK_NAME: snprintf(buf, size, "%s", (const char *)p); return;
  case SK_ENUM: {
    int v = *(const int *)p, n = 0;
    while (f->choices[n]) n++;
    snprintf(buf, size, "%s", v >= 0 && v < n ? f->choices[v] : "?");
    return;
  }
  case SK_STRING: snprintf(buf, size, "%s", *(char *const *)p); return;
  case SK_CHAR:
    if (*(const char *)p) snprintf(buf, size, "%c", *(const char *)p);
    else snprintf(buf, size, "auto");
    return;
  case SK_INTS: {
    const int64_t *v = *(int64_t *const *)p;
    int64_t n = *(const int64_t *)at(s, f->count_offset);
    size_t used = 0;
    buf[0] = '\0';
    for (int64_t i = 0; i < n && used < size; i++)
      used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, i ? "," : "", v[i]);
    return;
  }
  }
}

void settings_field_reset(loom_train_settings *s, const settings_field *f) {
  loom_train_settings *d = loom_train_settings_new();
  void *p = at(s, f->offset);
  if (f->kind == SK_STRING || f->kind == SK_INTS) {
    free(*(void **)p);
    *(void **)p = NULL;
    if (f->kind == SK_INTS) *(int64_t *)at(s, f->count_offset) = 0;
    settings_fix_csv_pointers(s);
  } else if (d) {
    size_t n = f->kind == SK_INT64 || f->kind == SK_UINT64 || f->kind == SK_DOUBLE ? 8
               : f->kind == SK_INT || f->kind == SK_ENUM                         ? sizeof(int)
               : f->kind == SK_NAME                                              ? LOOM_SETTINGS_NAME_MAX
                                                                                 : 1;
    memcpy(p, at(d, f->offset), n);
  }
  loom_train_settings_free(d);
}

int settings_field_check_applies(const loom_train_settings *s, const settings_field *f, char *why, size_t size) {
  if (settings_field_applies(s, f)) return LOOM_OK;
  const char *const *names = f->scope == SS_SOURCE      ? settings_sources
                             : f->scope == SS_OPTIMIZER ? optim_names
                                                        : schedule_names;
  const char *current = f->scope == SS_SOURCE      ? s->data.source
                        : f->scope == SS_OPTIMIZER ? s->optimizer
                        : (int)s->schedule.kind >= 0 && (int)s->schedule.kind < 4 ? schedule_names[s->schedule.kind]
                                                                                 : "?";
  char list[160] = "";
  for (int i = 0; names[i]; i++) {
    if (!(f->mask >> i & 1u)) continue;
    if (list[0]) strncat(list, ", ", sizeof list - strlen(list) - 1);
    strncat(list, names[i], sizeof list - strlen(list) - 1);
  }
  /* TRANSLATORS: "applies to sgd, rmsprop only, not to adam": a knob the chosen optimizer, schedule or data source
     does not have. */
  return fail(why, size, _("applies to %s only, not to %s"), list, current);
}
