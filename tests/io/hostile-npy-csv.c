/* Hostile .npy and CSV files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile-cases.h"

static GByteArray *npy(int major, const char *dict, const void *data, size_t n) {
  GByteArray *b = g_byte_array_new();
  GString *d = g_string_new(dict);
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + d->len + 1) % 64) g_string_append_c(d, ' ');
  g_string_append_c(d, '\n');
  uint8_t head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (uint8_t)major, 0};
  for (int i = 0; i < (major == 1 ? 2 : 4); i++) head[8 + i] = (uint8_t)(d->len >> (8 * i));
  g_byte_array_append(b, head, (guint)prefix);
  g_byte_array_append(b, (const guint8 *)d->str, (guint)d->len);
  if (n) g_byte_array_append(b, data, (guint)n);
  g_string_free(d, TRUE);
  return b;
}

static void add_npy(GPtrArray *cases, const char *name, int major, const char *dict, size_t n, const char *expect) {
  uint8_t *zeros = g_malloc0(n ? n : 1);
  GByteArray *b = npy(major, dict, zeros, n);
  hostile_add(cases, HOSTILE_NPY, name, b->data, b->len, expect);
  g_byte_array_unref(b);
  g_free(zeros);
}

static void npy_cases(GPtrArray *cases) {
  float v[6] = {1, 2, 3, 4, 5, 6};
  GByteArray *good = npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, sizeof v);
  size_t header_end = 0;
  for (size_t i = 10; i < good->len; i++)
    if (good->data[i] == '\n') {
      header_end = i + 1;
      break;
    }
  /* truncated at every byte */
  for (size_t cut = 0; cut < good->len; cut++) {
    char name[48];
    snprintf(name, sizeof name, "npy-truncated-at-%zu", cut);
    const char *expect = cut < 10 ? "not a .npy file (bad magic)"
                         : cut < header_end ? "truncated .npy header"
                                            : "the shape needs 6 values but the file holds";
    hostile_add(cases, HOSTILE_NPY, name, good->data, cut, expect);
  }
  g_byte_array_unref(good);
  hostile_add(cases, HOSTILE_NPY, "npy-wrong-magic", "\x93NUMPZ\x01\x00\x10\x00{}", 12, "bad magic");
  hostile_add(cases, HOSTILE_NPY, "npy-json-given", "{\"format\": \"loom-model\"}", 24, "bad magic");
  add_npy(cases, "npy-version-4", 4, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4,
          "unsupported .npy version 4");
  add_npy(cases, "npy-version-0", 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4,
          "unsupported .npy version 0");
  add_npy(cases, "npy-fortran", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", 4,
          "Fortran-order arrays are not supported");
  static const char *const descrs[] = {">f4", "|O", "<c8", "<f2", "|b1", "<U4", "<M8"};
  for (size_t i = 0; i < G_N_ELEMENTS(descrs); i++) {
    char dict[128], name[48];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (1,), }", descrs[i]);
    snprintf(name, sizeof name, "npy-descr-%zu", i);
    add_npy(cases, name, 1, dict, 8, "is not supported (expected little-endian float32");
  }
  /* found by fuzz-npy: a header ending right after "'descr':" */
  static const char descr_last[] = "{'shape': (1,), 'fortran_order': False, 'descr':";
  GByteArray *b = g_byte_array_new();
  uint8_t head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, sizeof descr_last - 1, 0};
  g_byte_array_append(b, head, 10);
  g_byte_array_append(b, (const guint8 *)descr_last, sizeof descr_last - 1);
  g_byte_array_append(b, (const guint8 *)"\0\0\0\0", 4);
  hostile_add(cases, HOSTILE_NPY, "npy-descr-at-end", b->data, b->len, "array type  is not supported");
  g_byte_array_unref(b);
  add_npy(cases, "npy-no-shape", 1, "{'descr': '<f4', 'fortran_order': False, }", 4,
          "header lacks descr, fortran_order or shape");
  add_npy(cases, "npy-shape-overflow", 1,
          "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", 4,
          "array shape overflows");
  add_npy(cases, "npy-shape-negative", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 4,
          "malformed shape");
  add_npy(cases, "npy-shape-text", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }", 4,
          "malformed shape");
  add_npy(cases, "npy-rank-9", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4,
          "more than 8 dimensions");
  add_npy(cases, "npy-too-little-data", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000,), }", 16,
          "the shape needs 1000 values but the file holds 16 bytes");
  add_npy(cases, "npy-gigabytes", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824, 16), }", 64,
          "the shape needs 17179869184 values");
  uint8_t v2_huge[16] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0x7f, '{', '}', ' ', '\n'};
  hostile_add(cases, HOSTILE_NPY, "npy-v2-header-beyond-file", v2_huge, sizeof v2_huge, "truncated .npy header");
}

static void add_csv(GPtrArray *cases, const char *name, const char *text, const char *expect) {
  hostile_add(cases, HOSTILE_CSV, name, text, strlen(text), expect);
}

static void csv_cases(GPtrArray *cases) {
  add_csv(cases, "csv-empty", "", "empty file (no rows)");
  add_csv(cases, "csv-blank-lines", "\n\n  \n", "empty file (no rows)");
  add_csv(cases, "csv-header-only", "a,b,label\n", "no data rows after the header");
  add_csv(cases, "csv-wrong-count", "1,2,0\n3,4\n", "h.csv:2: 2 fields, expected 3 like line 1");
  add_csv(cases, "csv-too-many", "1,2,0\n3,4,5,1\n", "h.csv:2: 4 fields, expected 3 like line 1");
  add_csv(cases, "csv-not-number", "x,y,label\n1,2,0\n3,abc,1\n", "h.csv:3: column 2 ('y'): 'abc' is not a finite number");
  add_csv(cases, "csv-infinite", "1,2,0\n1e999,2,1\n", "is not a finite number");
  add_csv(cases, "csv-nan", "1,2,0\nnan,2,1\n", "is not a finite number");
  add_csv(cases, "csv-negative-label", "1,2,0\n3,4,-1\n", "class label -1 is negative");
  add_csv(cases, "csv-fraction-label", "1,2,0\n3,4,0.5\n", "is not a class label");
  add_csv(cases, "csv-unterminated-quote", "1,2,0\n\"3,4,1\n", "h.csv:2");
  add_csv(cases, "csv-nul-byte", "1,2,0\n3,\0004,1\n", "h.csv");
  GString *longline = g_string_new("1,2,0\n");
  for (int i = 0; i < (1 << 20) + 10; i++) g_string_append_c(longline, '7');
  g_string_append(longline, ",1,0\n");
  add_csv(cases, "csv-line-too-long", longline->str, "line longer than 1048576 bytes");
  g_string_free(longline, TRUE);
  hostile_add(cases, HOSTILE_CSV, "csv-broken-gzip", "\x1f\x8b\x08\x00garbage", 12, "h.csv");
}

void hostile_npy_csv_cases(GPtrArray *cases) {
  npy_cases(cases);
  csv_cases(cases);
}
