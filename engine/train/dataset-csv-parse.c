/*
 * CSV splitting and the two detection rules (header, delimiter) shared by
 * the loader and the preview (docs/training.md, "CSV files"). Files are read
 * through zlib, which passes plain files through unchanged, so .csv and
 * .csv.gz both work. Numbers are
 * parsed in the C locale whatever the process locale is (a GUI may run with a
 * decimal comma).
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/i18n.h"
#include "train/dataset-csv-impl.h"

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

bool csv_parse_number(const char *s, double *out) {
  pthread_once(&c_locale_once, make_c_locale);
  if (!s || !*s || !c_locale) return false;
  char *end;
  errno = 0;
  double v = strtod_l(s, &end, c_locale);
  if (*end || end == s || !isfinite(v)) return false;
  *out = v;
  return true;
}

/* Counts the non-blank lines completed in buf[from..n) and returns where to
 * cut the buffer once max_lines are complete or a line is too long to matter
 * (the tokenizer then reports it), else 0. */
static size_t head_end(const char *buf, size_t from, size_t n, int64_t max_lines, int64_t *done, size_t *line_start,
                       bool *has_text) {
  for (size_t i = from; i < n; i++) {
    if (buf[i] == '\n') {
      if (*has_text && ++*done >= max_lines) return i + 1;
      *has_text = false;
      *line_start = i + 1;
    } else if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r') {
      *has_text = true;
    }
  }
  if (n - *line_start > CSV_MAX_LINE) return n;
  return 0;
}

int csv_read(const char *path, int64_t max_lines, char **data, size_t *len, loom_error *err) {
  gzFile f = gzopen(path, "rb");
  if (!f)
    return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot open: %s"), path, errno ? strerror(errno) : "zlib");
  size_t cap = 1 << 16, n = 0, line_start = 0;
  int64_t done = 0;
  bool has_text = false;
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
    size_t from = n;
    n += (size_t)got;
    size_t cut = max_lines >= 0 ? head_end(buf, from, n, max_lines, &done, &line_start, &has_text) : 0;
    if (cut) {
      n = cut;
      break;
    }
  }
  gzclose(f);
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return LOOM_OK;
}

void csv_table_clear(csv_table *t) {
  free(t->fields);
  free(t->lines);
  free(t->widths);
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
static int split_line(csv_table *t, char *line, char delim, bool lenient, const char *path, int64_t lineno,
                      loom_error *err) {
  char *p = line;
  for (long long col = 1;; col++) {
    /* A tab delimiter must not be skipped as a blank. */
    while ((*p == ' ' || *p == '\t') && *p != delim) p++;
    char *field, *next;
    if (*p == '"') {
      /* Quoted: "" is a quote; the closing quote may only be followed by blanks. */
      field = ++p;
      char *w = p;
      bool closed = false;
      while (*p) {
        if (*p == '"' && p[1] == '"') {
          *w++ = '"';
          p += 2;
        } else if (*p == '"') {
          p++;
          closed = true;
          break;
        } else {
          *w++ = *p++;
        }
      }
      if (!closed && !lenient)
        return loom_error_set(err, LOOM_ERR_FORMAT,
                              _("%s:%lld: column %lld: unterminated quoted field, expected a closing '\"' "
                                "before the end of the line"),
                              path, (long long)lineno, col);
      while ((*p == ' ' || *p == '\t' || *p == '\r') && *p != delim) p++;
      if (*p && *p != delim) {
        if (!lenient)
          return loom_error_set(err, LOOM_ERR_FORMAT,
                                _("%s:%lld: column %lld: text after a closing quote, expected the delimiter or "
                                  "the end of the line"),
                                path, (long long)lineno, col);
        char *d = strchr(p, delim); /* the preview drops the stray text */
        p = d ? d : p + strlen(p);
      }
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

static int push_row(csv_table *t, int64_t lineno, int64_t width, bool lenient, const char *path, loom_error *err) {
  if (t->n_rows == t->cap_rows) {
    int64_t cap = t->cap_rows ? t->cap_rows * 2 : 256;
    int64_t *grown = realloc(t->lines, (size_t)cap * sizeof *grown);
    if (!grown) return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), path);
    t->lines = grown;
    if (lenient) {
      grown = realloc(t->widths, (size_t)cap * sizeof *grown);
      if (!grown) return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), path);
      t->widths = grown;
    }
    t->cap_rows = cap;
  }
  if (lenient) t->widths[t->n_rows] = width;
  t->lines[t->n_rows++] = lineno;
  return LOOM_OK;
}

int csv_tokenize(char *buf, size_t len, char delim, csv_table *t, const char *path, int64_t max_rows, bool lenient,
                 loom_error *err) {
  int64_t lineno = 0;
  char *p = buf, *end = buf + len;
  while (p < end && (max_rows < 0 || t->n_rows < max_rows)) {
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
      int rc = split_line(t, p, delim, lenient, path, lineno, err);
      if (rc) return rc;
      int64_t n = t->n_fields - before;
      if (t->n_rows == 0 || (lenient && n > t->n_cols)) {
        t->n_cols = n;
      } else if (n != t->n_cols && !lenient) {
        return loom_error_set(err, LOOM_ERR_FORMAT, _("%s:%lld: %lld fields, expected %lld like line %lld"), path,
                              (long long)lineno, (long long)n, (long long)t->n_cols, (long long)t->lines[0]);
      }
      rc = push_row(t, lineno, n, lenient, path, err);
      if (rc) return rc;
    }
    p = line_end + 1;
  }
  if (t->n_rows == 0) return loom_error_set(err, LOOM_ERR_FORMAT, _("%s: empty file (no rows)"), path);
  return LOOM_OK;
}

bool csv_detect_header(char *const *cells, int64_t n_rows, int64_t n_cols) {
  double v;
  for (int64_t c = 0; c < n_cols; c++) {
    const char *top = cells[c];
    if (!top || csv_parse_number(top, &v)) continue;
    if (n_rows == 1 || csv_parse_number(cells[n_cols + c], &v)) return true;
  }
  return false;
}

/* Fields of one line for a delimiter, counting only delimiters outside quotes. */
static int64_t count_fields(const char *p, const char *end, char delim) {
  int64_t n = 1;
  bool quoted = false;
  for (; p < end; p++) {
    if (*p == '"') quoted = !quoted;
    else if (*p == delim && !quoted) n++;
  }
  return n;
}

char csv_detect_delimiter(const char *buf, size_t len) {
  /* Tab and semicolon come first: a file separated by them often holds
   * decimal commas, while a comma-separated file seldom holds a steady
   * number of tabs or semicolons on every line. */
  static const char candidates[] = {'\t', ';', ','};
  int64_t first_count[3] = {0, 0, 0};
  bool steady[3] = {true, true, true};
  const char *p = buf, *end = buf + len;
  int lines = 0;
  while (p < end && lines < CSV_DETECT_LINES) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *line_end = nl ? nl : end;
    const char *q = p;
    while (q < line_end && (*q == ' ' || *q == '\r')) q++;
    if (q < line_end) {
      for (int k = 0; k < 3; k++) {
        int64_t n = count_fields(p, line_end, candidates[k]);
        if (lines == 0) first_count[k] = n;
        else if (n != first_count[k]) steady[k] = false;
      }
      lines++;
    }
    p = line_end + 1;
  }
  for (int k = 0; k < 3; k++)
    if (steady[k] && first_count[k] >= 2) return candidates[k];
  int best = 2; /* ',' when nothing splits the first line */
  for (int k = 0; k < 3; k++)
    if (first_count[k] > first_count[best]) best = k;
  return candidates[best];
}

int csv_check_delimiter(char d, const char *path, loom_error *err) {
  if (d == '"' || d == '\n' || d == '\r')
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: '%c' cannot be a delimiter"), path, d);
  return LOOM_OK;
}
