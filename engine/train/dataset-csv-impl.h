/* Internal CSV pieces shared by the loader (dataset-csv.c) and the preview
 * (dataset-csv-preview.c), so both split, detect and parse alike. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/dataset.h"

#define CSV_MAX_BYTES ((size_t)1 << 30) /* decompressed */
#define CSV_MAX_LINE ((size_t)1 << 20)
/* Non-blank lines that delimiter detection looks at. */
#define CSV_DETECT_LINES 20

typedef struct csv_table {
  char **fields;   /* all fields, row after row (pointers into the buffer) */
  int64_t *lines;  /* per row: its 1-based line in the file */
  int64_t *widths; /* per row: its field count (lenient tables only, else NULL) */
  int64_t n_rows, n_cols, n_fields, cap_fields, cap_rows;
} csv_table;

/* Reads the file (plain or gzip) into a NUL-terminated buffer: all of it
 * when max_lines < 0, else only up to the end of its first max_lines
 * non-blank lines (and at most one over-long line). */
int csv_read(const char *path, int64_t max_lines, char **data, size_t *len, loom_error *err);

void csv_table_clear(csv_table *t);

/* A whole field (already trimmed) as a finite double, in the C locale. */
bool csv_parse_number(const char *s, double *out);

/* Splits buf (NUL-terminated at buf[len], modified in place) into rows of
 * fields, skipping blank lines, stopping after max_rows rows (< 0: all).
 * Strict: every row has the first row's field count and quotes must be
 * well formed, else an error naming the line (and column). Lenient (for the
 * preview): rows may differ in length (n_cols is the longest, widths[] holds
 * each) and a broken quote ends its field instead of failing. */
int csv_tokenize(char *buf, size_t len, char delim, csv_table *t, const char *path, int64_t max_rows, bool lenient,
                 loom_error *err);

/* The header rule of docs/training.md on a row-major table whose cells may be
 * NULL (missing): the first row is a header when one of its fields is not a
 * number while the field below it is; with one row, when any field is not a
 * number. */
bool csv_detect_header(char *const *cells, int64_t n_rows, int64_t n_cols);

/* The delimiter rule of docs/training.md, from the first CSV_DETECT_LINES
 * non-blank lines of buf[0..len). */
char csv_detect_delimiter(const char *buf, size_t len);

/* LOOM_OK when d may separate fields; an error naming path otherwise. */
int csv_check_delimiter(char d, const char *path, loom_error *err);
