/*
 * CSV import (docs/training.md, "CSV files"). The file is read through zlib,
 * which passes plain files through unchanged, so .csv and .csv.gz both work.
 * Numbers are parsed in the C locale whatever the process locale is (a GUI
 * may run with a decimal comma). Every error names the file, the line and,
 * for a field, the column (1-based, and its header name when there is one).
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/i18n.h"
#include "loom/dataset.h"
#include "train/dataset-impl.h"

#define CSV_MAX_BYTES ((size_t)1 << 30) /* decompressed */
#define CSV_MAX_LINE ((size_t)1 << 20)
#define CSV_MAX_CLASSES 1000000

LOOM_API loom_csv_options loom_csv_options_default(void) {
  return (loom_csv_options){.header = LOOM_CSV_HEADER_AUTO, .delimiter = ',', .label_index = -1,
                            .target = LOOM_TARGET_CLASS};
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

/* A whole field (already trimmed) as a finite double. */
static bool parse_number(const char *s, double *out) {
  pthread_once(&c_locale_once, make_c_locale);
  if (!*s || !c_locale) return false;
  char *end;
  errno = 0;
  double v = strtod_l(s, &end, c_locale);
  if (*end || end == s || !isfinite(v)) return false;
  *out = v;
  return true;
}

static bool parse_integer(const char *s, long long *out) {
  if (!*s) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end || errno == ERANGE) return false;
  *out = v;
  return true;
}

static int read_all(const char *path, char **data, size_t *len, loom_error *err) {
  gzFile f = gzopen(path, "rb");
  if (!f)
    return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot open: %s"), path, errno ? strerror(errno) : "zlib");
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      gzclose(f);
      return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory reading the file"), path);
    }
    if (cap - n < 1 + (1 << 15)) {
      if (cap >= CSV_MAX_BYTES) {
        free(buf);
        gzclose(f);
        return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: larger than %zu bytes"), path, CSV_MAX_BYTES);
      }
      char *grown = realloc(buf, cap * 2);
      if (!grown) free(buf);
      buf = grown;
      cap *= 2;
      continue;
    }
    int got = gzread(f, buf + n, (unsigned)(cap - n - 1));
    if (got < 0) {
      int zerr;
      const char *msg = gzerror(f, &zerr);
      loom_error_set(err, zerr == Z_ERRNO ? LOOM_ERR_IO : LOOM_ERR_FORMAT, _("%s: cannot read: %s"), path,
                     zerr == Z_ERRNO ? strerror(errno) : msg);
      free(buf);
      gzclose(f);
      return err ? err->code : LOOM_ERR_IO;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  gzclose(f);
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return LOOM_OK;
}

typedef struct csv_table {
  char **fields;   /* all fields, row after row (pointers into the buffer) */
  int64_t *lines;  /* per row: its 1-based line in the file */
  int64_t n_rows, n_cols, n_fields, cap_fields, cap_rows;
} csv_table;

static void table_clear(csv_table *t) {
  free(t->fields);
  free(t->lines);
}

static int push_field(csv_table *t, char *f, const char *path, loom_error *err) {
  if (t->n_fields == t->cap_fields) {
    int64_t cap = t->cap_fields ? t->cap_fields * 2 : 1024;
    char **grown = realloc(t->fields, (size_t)cap * sizeof *grown);
    if (!grown) return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), path);
    t->fields = grown;
    t->cap_fields = cap;
  }
  t->fields[t->n_fields++] = f;
  return LOOM_OK;
}

static char *trim(char *s, char *end) {
  while (s < end && (*s == ' ' || *s == '\t')) s++;
  while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) end--;
  *end = '\0';
  return s;
}

/* Splits one line (NUL-terminated, no newline) into fields in place. */
static int split_line(csv_table *t, char *line, char delim, const char *path, int64_t lineno, loom_error *err) {
  char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t') p++;
    char *field, *next;
    if (*p == '"') {
      /* Quoted: "" is a quote; the closing quote may only be followed by blanks. */
      field = ++p;
      char *w = p;
      for (;;) {
        if (!*p)
          return loom_error_set(err, LOOM_ERR_FORMAT, _("%s:%lld: unterminated quoted field"), path,
                                (long long)lineno);
        if (*p == '"' && p[1] == '"') {
          *w++ = '"';
          p += 2;
        } else if (*p == '"') {
          p++;
          break;
        } else {
          *w++ = *p++;
        }
      }
      while (*p == ' ' || *p == '\t' || *p == '\r') p++;
      if (*p && *p != delim)
        return loom_error_set(err, LOOM_ERR_FORMAT, _("%s:%lld: text after a closing quote"), path,
                              (long long)lineno);
      next = *p ? p + 1 : NULL;
      *w = '\0';
    } else {
      char *end = strchr(p, delim);
      next = end ? end + 1 : NULL;
      field = trim(p, end ? end : p + strlen(p));
    }
    int rc = push_field(t, field, path, err);
    if (rc) return rc;
    if (!next) return LOOM_OK;
    p = next;
  }
}

static int tokenize(char *buf, size_t len, char delim, csv_table *t, const char *path, loom_error *err) {
  int64_t lineno = 0;
  char *p = buf, *end = buf + len;
  while (p < end) {
    lineno++;
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *line_end = nl ? nl : end;
    if ((size_t)(line_end - p) > CSV_MAX_LINE)
      return loom_error_set(err, LOOM_ERR_FORMAT, _("%s:%lld: line longer than %zu bytes"), path,
                            (long long)lineno, CSV_MAX_LINE);
    *line_end = '\0';
    char *q = p;
    while (*q == ' ' || *q == '\t' || *q == '\r') q++;
    if (*q) {
      int64_t before = t->n_fields;
      int rc = split_line(t, p, delim, path, lineno, err);
      if (rc) return rc;
      int64_t n = t->n_fields - before;
      if (t->n_rows == 0) {
        t->n_cols = n;
      } else if (n != t->n_cols) {
        return loom_error_set(err, LOOM_ERR_FORMAT, _("%s:%lld: %lld fields, expected %lld like line %lld"), path,
                              (long long)lineno, (long long)n, (long long)t->n_cols, (long long)t->lines[0]);
      }
      if (t->n_rows == t->cap_rows) {
        int64_t cap = t->cap_rows ? t->cap_rows * 2 : 256;
        int64_t *grown = realloc(t->lines, (size_t)cap * sizeof *grown);
        if (!grown) return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), path);
        t->lines = grown;
        t->cap_rows = cap;
      }
      t->lines[t->n_rows++] = lineno;
    }
    p = line_end + 1;
  }
  if (t->n_rows == 0) return loom_error_set(err, LOOM_ERR_FORMAT, _("%s: empty file (no rows)"), path);
  return LOOM_OK;
}

static bool detect_header(const csv_table *t) {
  double v;
  for (int64_t c = 0; c < t->n_cols; c++) {
    bool first_numeric = parse_number(t->fields[c], &v);
    if (first_numeric) continue;
    if (t->n_rows == 1 || parse_number(t->fields[t->n_cols + c], &v)) return true;
  }
  return false;
}

static int resolve_label(const csv_table *t, bool header, const loom_csv_options *o, const char *path,
                         int64_t *label, loom_error *err) {
  if (o->label_name) {
    if (!header)
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("%s: label column '%s' is given by name but the file has no header row"), path,
                            o->label_name);
    for (int64_t c = 0; c < t->n_cols; c++)
      if (strcmp(t->fields[c], o->label_name) == 0) {
        *label = c;
        return LOOM_OK;
      }
    char list[256] = "";
    size_t used = 0;
    for (int64_t c = 0; c < t->n_cols && used < sizeof list - 1; c++)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s'%s'", c ? ", " : "", t->fields[c]);
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: no column named '%s' in the header (columns: %s)"), path,
                          o->label_name, list);
  }
  int64_t idx = o->label_index < 0 ? t->n_cols + o->label_index : o->label_index;
  if (idx < 0 || idx >= t->n_cols)
    return loom_error_set(err, LOOM_ERR_RANGE, _("%s: label column index %lld is out of range: the file has %lld columns"),
                          path, (long long)o->label_index, (long long)t->n_cols);
  *label = idx;
  return LOOM_OK;
}

static int field_error(const csv_table *t, bool header, const char *path, int64_t row, int64_t col, const char *what,
                       loom_error *err) {
  const char *field = t->fields[row * t->n_cols + col];
  if (header)
    return loom_error_set(err, LOOM_ERR_FORMAT, _("%s:%lld: column %lld ('%s'): '%.40s' is not %s"), path,
                          (long long)t->lines[row], (long long)col + 1, t->fields[col], field, what);
  return loom_error_set(err, LOOM_ERR_FORMAT, _("%s:%lld: column %lld: '%.40s' is not %s"), path,
                        (long long)t->lines[row], (long long)col + 1, field, what);
}

static int cmp_strings(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Text labels: classes are the distinct names in sorted order. */
static int text_labels(const csv_table *t, int64_t first, int64_t label_col, loom_dataset *ds, const char *path,
                       char ***names_out, int64_t *n_names, loom_error *err) {
  int64_t n = ds->n;
  char **sorted = dataset_alloc_array(n, sizeof *sorted, path, err);
  if (!sorted) return LOOM_ERR_NOMEM;
  for (int64_t s = 0; s < n; s++) sorted[s] = t->fields[(first + s) * t->n_cols + label_col];
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_strings);
  int64_t k = 0;
  for (int64_t s = 0; s < n; s++)
    if (k == 0 || strcmp(sorted[k - 1], sorted[s]) != 0) sorted[k++] = sorted[s];
  for (int64_t s = 0; s < n; s++) {
    char *key = t->fields[(first + s) * t->n_cols + label_col];
    char **hit = bsearch(&key, sorted, (size_t)k, sizeof *sorted, cmp_strings);
    ds->labels[s] = (int32_t)(hit - sorted);
  }
  *names_out = sorted;
  *n_names = k;
  return LOOM_OK;
}

static int fill_labels(const csv_table *t, bool header, int64_t first, int64_t label_col, loom_dataset **dsp,
                       const char *path, loom_error *err) {
  loom_dataset *ds = *dsp;
  int64_t n = ds->n;
  bool all_integers = true, all_numbers = true;
  long long max_label = 0;
  for (int64_t s = 0; s < n; s++) {
    const char *f = t->fields[(first + s) * t->n_cols + label_col];
    long long v;
    double d;
    if (parse_integer(f, &v)) {
      if (v < 0)
        return loom_error_set(err, LOOM_ERR_RANGE, _("%s:%lld: class label %lld is negative"), path,
                              (long long)t->lines[first + s], v);
      if (v >= CSV_MAX_CLASSES)
        return loom_error_set(err, LOOM_ERR_RANGE, _("%s:%lld: class label %lld is not below %d"), path,
                              (long long)t->lines[first + s], v, CSV_MAX_CLASSES);
      if (v > max_label) max_label = v;
      ds->labels[s] = (int32_t)v;
    } else {
      all_integers = false;
      if (!parse_number(f, &d)) all_numbers = false;
    }
  }
  if (all_integers) {
    ds->n_classes = max_label + 1;
    return LOOM_OK;
  }
  if (all_numbers) {
    for (int64_t s = 0; s < n; s++) {
      long long v;
      if (!parse_integer(t->fields[(first + s) * t->n_cols + label_col], &v))
        return field_error(t, header, path, first + s, label_col, _("a class label (an integer or a name)"), err);
    }
  }
  char **names = NULL;
  int64_t k = 0;
  int rc = text_labels(t, first, label_col, ds, path, &names, &k, err);
  if (rc) return rc;
  ds->n_classes = k;
  rc = dataset_copy_class_names(ds, names, err);
  free(names);
  return rc;
}

static loom_dataset *build_dataset(const csv_table *t, bool header, int64_t label_col, const loom_csv_options *o,
                                   const char *path, loom_error *err) {
  int64_t first = header ? 1 : 0, n = t->n_rows - first, n_in = t->n_cols - 1;
  if (n < 1) {
    loom_error_set(err, LOOM_ERR_FORMAT, _("%s: no data rows after the header"), path);
    return NULL;
  }
  if (n_in < 1) {
    loom_error_set(err, LOOM_ERR_FORMAT,
                   dngettext(GETTEXT_PACKAGE, "%s: only %lld column; need input columns and a label column",
                             "%s: only %lld columns; need input columns and a label column", (unsigned long)t->n_cols),
                   path, (long long)t->n_cols);
    return NULL;
  }
  loom_shape in = loom_shape_1d(n_in);
  /* Class count is known after reading the labels; 1 is a placeholder for the allocation. */
  loom_dataset *ds = loom_dataset_new(n, &in, o->target, 1, o->target == LOOM_TARGET_CLASS ? 1 : 0, err);
  if (!ds) return NULL;
  for (int64_t s = 0; s < n; s++) {
    int64_t k = 0;
    for (int64_t c = 0; c < t->n_cols; c++) {
      double v = 0.0;
      bool ok = c == label_col && o->target == LOOM_TARGET_CLASS;
      if (!ok && !parse_number(t->fields[(first + s) * t->n_cols + c], &v)) {
        field_error(t, header, path, first + s, c, _("a finite number"), err);
        loom_dataset_free(ds);
        return NULL;
      }
      if (c == label_col) {
        if (o->target == LOOM_TARGET_VECTOR) ds->targets[s] = (float)v;
      } else {
        ds->inputs[s * n_in + k++] = (float)v;
      }
    }
  }
  if (o->target == LOOM_TARGET_CLASS && fill_labels(t, header, first, label_col, &ds, path, err)) {
    loom_dataset_free(ds);
    return NULL;
  }
  return ds;
}

loom_dataset *dataset_read_csv(const char *path, const loom_csv_options *o, int64_t **lines, loom_error *err) {
  if (lines) *lines = NULL;
  if (o->target != LOOM_TARGET_CLASS && o->target != LOOM_TARGET_VECTOR) {
    loom_error_set(err, LOOM_ERR_INVALID, _("%s: unknown target kind %d"), path, (int)o->target);
    return NULL;
  }
  char delim = o->delimiter ? o->delimiter : ',';
  if (delim == '"' || delim == '\n' || delim == '\r') {
    loom_error_set(err, LOOM_ERR_INVALID, _("%s: '%c' cannot be a delimiter"), path, delim);
    return NULL;
  }
  char *buf = NULL;
  size_t len = 0;
  if (read_all(path, &buf, &len, err)) return NULL;
  csv_table t = {0};
  loom_dataset *ds = NULL;
  if (tokenize(buf, len, delim, &t, path, err) == LOOM_OK) {
    bool header = o->header == LOOM_CSV_HEADER_YES || (o->header == LOOM_CSV_HEADER_AUTO && detect_header(&t));
    int64_t label_col = 0;
    if (resolve_label(&t, header, o, path, &label_col, err) == LOOM_OK)
      ds = build_dataset(&t, header, label_col, o, path, err);
    if (ds && lines) {
      *lines = dataset_alloc_array(ds->n, sizeof(int64_t), path, err);
      if (*lines) {
        memcpy(*lines, t.lines + (header ? 1 : 0), (size_t)ds->n * sizeof(int64_t));
      } else {
        loom_dataset_free(ds);
        ds = NULL;
      }
    }
  }
  table_clear(&t);
  free(buf);
  return ds;
}

LOOM_API loom_dataset *loom_dataset_load_csv(const char *path, const loom_csv_options *opts, loom_error *err) {
  loom_csv_options defaults = loom_csv_options_default();
  return dataset_read_csv(path, opts ? opts : &defaults, NULL, err);
}
