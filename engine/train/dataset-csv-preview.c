/*
 * The first rows of a CSV file, split and classified the way the loader
 * will read them, for an import dialog to show before the whole (possibly
 * huge) file is loaded. Lenient on purpose: a broken quote or a short row
 * further down should be visible in the preview and reported by the loader
 * with its line, not hide the whole preview.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "loom/dataset.h"
#include "train/dataset-csv-impl.h"
#include "train/dataset-impl.h"

#define PREVIEW_MAX_ROWS 100000

static int cmp_strings(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Copies the table's rows [first, first + n) into a rectangular array with
 * NULL for the cells a short row lacks. */
static char **copy_cells(const csv_table *t, const int64_t *starts, int64_t first, int64_t n, const char *path,
                         loom_error *err) {
  int64_t count = 0;
  if (dataset_mul(n, t->n_cols, &count, path, err)) return NULL;
  char **cells = dataset_alloc_array(count, sizeof *cells, path, err);
  if (!cells) return NULL;
  for (int64_t r = 0; r < n; r++)
    for (int64_t c = 0; c < t->widths[first + r]; c++) {
      char *copy = strdup(t->fields[starts[first + r] + c]);
      if (!copy) {
        for (int64_t i = 0; i < count; i++) free(cells[i]);
        free(cells);
        loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), path);
        return NULL;
      }
      cells[r * t->n_cols + c] = copy;
    }
  return cells;
}

static int classify_columns(loom_csv_preview *p, const char *path, loom_error *err) {
  p->numeric = dataset_alloc_array(p->n_columns, sizeof *p->numeric, path, err);
  p->distinct = p->numeric ? dataset_alloc_array(p->n_columns, sizeof *p->distinct, path, err) : NULL;
  const char **column = p->distinct ? dataset_alloc_array(p->n_rows, sizeof *column, path, err) : NULL;
  if (!column) return LOOM_ERR_NOMEM;
  for (int64_t c = 0; c < p->n_columns; c++) {
    bool numeric = p->n_rows > 0;
    int64_t k = 0;
    for (int64_t r = 0; r < p->n_rows; r++) {
      const char *cell = p->cells[r * p->n_columns + c];
      double v;
      if (!csv_parse_number(cell, &v)) numeric = false;
      if (cell) column[k++] = cell;
    }
    qsort(column, (size_t)k, sizeof *column, cmp_strings);
    int64_t distinct = 0;
    for (int64_t i = 0; i < k; i++)
      if (i == 0 || strcmp(column[i - 1], column[i]) != 0) distinct++;
    p->numeric[c] = numeric;
    p->distinct[c] = distinct;
  }
  free(column);
  return LOOM_OK;
}

static int fill_preview(const csv_table *t, const loom_csv_options *o, int64_t max_rows, loom_csv_preview *out,
                        const char *path, loom_error *err) {
  int64_t *starts = dataset_alloc_array(t->n_rows, sizeof *starts, path, err);
  if (!starts) return LOOM_ERR_NOMEM;
  for (int64_t r = 1; r < t->n_rows; r++) starts[r] = starts[r - 1] + t->widths[r - 1];
  out->n_columns = t->n_cols;
  /* Detection sees the first two rows as rectangular cells, like the loader. */
  char **top = copy_cells(t, starts, 0, t->n_rows < 2 ? t->n_rows : 2, path, err);
  int rc = top ? LOOM_OK : LOOM_ERR_NOMEM;
  if (top) {
    out->header_detected = csv_detect_header(top, t->n_rows < 2 ? t->n_rows : 2, t->n_cols);
    bool header = o->header == LOOM_CSV_HEADER_YES || (o->header == LOOM_CSV_HEADER_AUTO && out->header_detected);
    int64_t first = header ? 1 : 0;
    out->n_rows = t->n_rows - first < max_rows ? t->n_rows - first : max_rows;
    if (header) {
      out->header = top; /* its first row; the second row's copies are freed below */
      for (int64_t c = 0; t->n_rows > 1 && c < t->n_cols; c++) {
        free(top[t->n_cols + c]);
        top[t->n_cols + c] = NULL;
      }
      top = NULL;
    }
    out->cells = copy_cells(t, starts, first, out->n_rows, path, err);
    rc = out->cells ? classify_columns(out, path, err) : LOOM_ERR_NOMEM;
  }
  if (top)
    for (int64_t i = 0; i < 2 * t->n_cols && i < t->n_rows * t->n_cols; i++) free(top[i]);
  free(top);
  free(starts);
  return rc;
}

LOOM_API int loom_csv_preview_read(const char *path, const loom_csv_options *opts, int64_t max_rows,
                                   loom_csv_preview *out, loom_error *err) {
  memset(out, 0, sizeof *out);
  loom_csv_options defaults = loom_csv_options_default();
  const loom_csv_options *o = opts ? opts : &defaults;
  if (max_rows < 1 || max_rows > PREVIEW_MAX_ROWS)
    return loom_error_set(err, LOOM_ERR_RANGE, _("%s: preview of %lld rows, expected 1 to %d"), path,
                          (long long)max_rows, PREVIEW_MAX_ROWS);
  int rc = o->delimiter ? csv_check_delimiter(o->delimiter, path, err) : LOOM_OK;
  if (rc) return rc;
  char *buf = NULL;
  size_t len = 0;
  /* One line more than asked for in case the first is a header. */
  rc = csv_read(path, max_rows + 1, &buf, &len, err);
  if (rc) return rc;
  out->delimiter = o->delimiter ? o->delimiter : csv_detect_delimiter(buf, len);
  csv_table t = {0};
  rc = csv_tokenize(buf, len, out->delimiter, &t, path, max_rows + 1, true, err);
  if (!rc) rc = fill_preview(&t, o, max_rows, out, path, err);
  csv_table_clear(&t);
  free(buf);
  if (rc) loom_csv_preview_clear(out);
  return rc;
}

LOOM_API void loom_csv_preview_clear(loom_csv_preview *p) {
  if (!p) return;
  if (p->cells)
    for (int64_t i = 0; i < p->n_rows * p->n_columns; i++) free(p->cells[i]);
  if (p->header)
    for (int64_t c = 0; c < p->n_columns; c++) free(p->header[c]);
  free(p->cells);
  free(p->header);
  free(p->numeric);
  free(p->distinct);
  memset(p, 0, sizeof *p);
}
