/*
 * CSV import (docs/training.md, "CSV files"): rows split by
 * dataset-csv-parse.c become a dataset of the chosen feature columns and a
 * label column. Every error names the file, the line and, for a field, the
 * column (1-based, and its header name when there is one).
 */
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "loom/dataset.h"
#include "train/dataset-csv-impl.h"
#include "train/dataset-impl.h"

#define CSV_MAX_CLASSES 1000000

LOOM_API loom_csv_options loom_csv_options_default(void) {
  return (loom_csv_options){.header = LOOM_CSV_HEADER_AUTO, .delimiter = ',', .label_index = -1,
                            .target = LOOM_TARGET_CLASS};
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
      if (!csv_parse_number(f, &d)) all_numbers = false;
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

/* The input columns in order (opts->features, or every column but the
 * label), each checked: in range, not the label, not listed twice. */
static int resolve_features(const csv_table *t, bool header, int64_t label_col, const loom_csv_options *o,
                            const char *path, int64_t **features, int64_t *n_features, loom_error *err) {
  if (o->n_features < 0 || (o->n_features > 0 && !o->features))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: %lld feature columns given without their indices"), path,
                          (long long)o->n_features);
  if (o->n_features == 0 && t->n_cols < 2)
    return loom_error_set(err, LOOM_ERR_FORMAT,
                          dngettext(GETTEXT_PACKAGE, "%s: only %lld column; need input columns and a label column",
                                    "%s: only %lld columns; need input columns and a label column",
                                    (unsigned long)t->n_cols),
                          path, (long long)t->n_cols);
  int64_t n = o->n_features ? o->n_features : t->n_cols - 1;
  if (n > t->n_cols)
    return loom_error_set(err, LOOM_ERR_RANGE, _("%s: %lld feature columns listed but the file has %lld columns"),
                          path, (long long)n, (long long)t->n_cols);
  int64_t *list = dataset_alloc_array(n, sizeof *list, path, err);
  bool *used = list ? dataset_alloc_array(t->n_cols, sizeof *used, path, err) : NULL;
  if (!used) {
    free(list);
    return LOOM_ERR_NOMEM;
  }
  int rc = LOOM_OK;
  for (int64_t k = 0, c = 0; k < n && !rc; k++) {
    if (!o->n_features) {
      if (c == label_col) c++;
      list[k] = c++;
      continue;
    }
    int64_t f = o->features[k];
    if (f < 0 || f >= t->n_cols)
      rc = loom_error_set(err, LOOM_ERR_RANGE,
                          _("%s: feature column index %lld is out of range: expected 0 to %lld (the file has %lld "
                            "columns)"),
                          path, (long long)f, (long long)t->n_cols - 1, (long long)t->n_cols);
    else if (f == label_col && header)
      rc = loom_error_set(err, LOOM_ERR_INVALID,
                          _("%s: column %lld ('%s') is the label column; it cannot be a feature too"), path,
                          (long long)f + 1, t->fields[f]);
    else if (f == label_col)
      rc = loom_error_set(err, LOOM_ERR_INVALID, _("%s: column %lld is the label column; it cannot be a feature too"),
                          path, (long long)f + 1);
    else if (used[f])
      rc = loom_error_set(err, LOOM_ERR_INVALID, _("%s: column %lld is listed twice as a feature"), path,
                          (long long)f + 1);
    else
      list[k] = f;
    if (!rc) used[f] = true;
  }
  free(used);
  if (rc) {
    free(list);
    return rc;
  }
  *features = list;
  *n_features = n;
  return LOOM_OK;
}

/* Training a classifier on one class teaches nothing, and a loss over one
 * logit is degenerate; an import that looks fine would fail much later. */
static int check_two_classes(const csv_table *t, bool header, int64_t first, int64_t label_col,
                             const loom_dataset *ds, const char *path, loom_error *err) {
  for (int64_t s = 1; s < ds->n; s++)
    if (ds->labels[s] != ds->labels[0]) return LOOM_OK;
  const char *value = t->fields[first * t->n_cols + label_col];
  if (header)
    return loom_error_set(err, LOOM_ERR_FORMAT,
                          _("%s: column %lld ('%s'): every row has the class '%.40s'; classification needs at least "
                            "two classes"),
                          path, (long long)label_col + 1, t->fields[label_col], value);
  return loom_error_set(err, LOOM_ERR_FORMAT,
                        _("%s: column %lld: every row has the class '%.40s'; classification needs at least two "
                          "classes"),
                        path, (long long)label_col + 1, value);
}

static loom_dataset *build_dataset(const csv_table *t, bool header, int64_t label_col, const int64_t *features,
                                   int64_t n_in, const loom_csv_options *o, const char *path, loom_error *err) {
  int64_t first = header ? 1 : 0, n = t->n_rows - first;
  if (n < 1) {
    loom_error_set(err, LOOM_ERR_FORMAT, _("%s: no data rows after the header"), path);
    return NULL;
  }
  if (n_in < 1) {
    loom_error_set(err, LOOM_ERR_INVALID, _("%s: no feature columns chosen"), path);
    return NULL;
  }
  /* Where each column goes: a feature position, or -1 (label or unused).
   * Cells are checked in column order so the leftmost bad one is named. */
  int64_t *slot = dataset_alloc_array(t->n_cols, sizeof *slot, path, err);
  if (!slot) return NULL;
  for (int64_t c = 0; c < t->n_cols; c++) slot[c] = -1;
  for (int64_t k = 0; k < n_in; k++) slot[features[k]] = k;
  loom_shape in = loom_shape_1d(n_in);
  /* Class count is known after reading the labels; 1 is a placeholder for the allocation. */
  loom_dataset *ds = loom_dataset_new(n, &in, o->target, 1, o->target == LOOM_TARGET_CLASS ? 1 : 0, err);
  for (int64_t s = 0; ds && s < n; s++) {
    for (int64_t c = 0; c < t->n_cols; c++) {
      bool vector_label = c == label_col && o->target == LOOM_TARGET_VECTOR;
      if (slot[c] < 0 && !vector_label) continue;
      double v = 0.0;
      if (!csv_parse_number(t->fields[(first + s) * t->n_cols + c], &v)) {
        field_error(t, header, path, first + s, c, _("a finite number"), err);
        loom_dataset_free(ds);
        ds = NULL;
        break;
      }
      if (vector_label) ds->targets[s] = (float)v;
      else ds->inputs[s * n_in + slot[c]] = (float)v;
    }
  }
  free(slot);
  return ds;
}

static loom_dataset *read_csv(const char *path, const loom_csv_options *o, bool need_two_classes, int64_t **lines,
                              loom_error *err) {
  if (lines) *lines = NULL;
  if (o->target != LOOM_TARGET_CLASS && o->target != LOOM_TARGET_VECTOR) {
    loom_error_set(err, LOOM_ERR_INVALID, _("%s: unknown target kind %d"), path, (int)o->target);
    return NULL;
  }
  if (o->delimiter && csv_check_delimiter(o->delimiter, path, err)) return NULL;
  char *buf = NULL;
  size_t len = 0;
  if (csv_read(path, -1, &buf, &len, err)) return NULL;
  char delim = o->delimiter ? o->delimiter : csv_detect_delimiter(buf, len);
  csv_table t = {0};
  loom_dataset *ds = NULL;
  int64_t *features = NULL, n_features = 0, label_col = 0;
  if (csv_tokenize(buf, len, delim, &t, path, -1, false, err) == LOOM_OK) {
    bool header = o->header == LOOM_CSV_HEADER_YES ||
                  (o->header == LOOM_CSV_HEADER_AUTO && csv_detect_header(t.fields, t.n_rows, t.n_cols));
    int64_t first = header ? 1 : 0;
    if (resolve_label(&t, header, o, path, &label_col, err) == LOOM_OK &&
        resolve_features(&t, header, label_col, o, path, &features, &n_features, err) == LOOM_OK)
      ds = build_dataset(&t, header, label_col, features, n_features, o, path, err);
    if (ds && o->target == LOOM_TARGET_CLASS &&
        (fill_labels(&t, header, first, label_col, &ds, path, err) ||
         (need_two_classes && check_two_classes(&t, header, first, label_col, ds, path, err)))) {
      loom_dataset_free(ds);
      ds = NULL;
    }
    if (ds && lines) {
      *lines = dataset_alloc_array(ds->n, sizeof(int64_t), path, err);
      if (*lines) {
        memcpy(*lines, t.lines + first, (size_t)ds->n * sizeof(int64_t));
      } else {
        loom_dataset_free(ds);
        ds = NULL;
      }
    }
  }
  free(features);
  csv_table_clear(&t);
  free(buf);
  return ds;
}

/* The digits loader fixes its class count itself, so a sample file with a
 * single digit stays valid there. */
loom_dataset *dataset_read_csv(const char *path, const loom_csv_options *o, int64_t **lines, loom_error *err) {
  return read_csv(path, o, false, lines, err);
}

LOOM_API loom_dataset *loom_dataset_load_csv(const char *path, const loom_csv_options *opts, loom_error *err) {
  loom_csv_options defaults = loom_csv_options_default();
  return read_csv(path, opts ? opts : &defaults, true, NULL, err);
}
