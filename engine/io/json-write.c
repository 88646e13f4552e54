#include "io/json-write.h"

#include "io/base64.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jw_init(jw *w) {
  w->s = g_string_sized_new(4096);
  w->depth = 0;
  w->after_key = false;
  w->inline_mode[0] = false;
  w->has_items[0] = false;
}

char *jw_finish(jw *w, size_t *len) {
  g_string_append_c(w->s, '\n');
  if (len) *len = w->s->len;
  return g_string_free(w->s, FALSE);
}

static void newline(jw *w) {
  g_string_append_c(w->s, '\n');
  for (int i = 0; i < w->depth; i++) g_string_append(w->s, "  ");
}

/* Separator before a value or key at the current level. */
static void before_item(jw *w) {
  if (w->after_key) {
    w->after_key = false;
    return;
  }
  if (w->depth == 0) return;
  if (w->has_items[w->depth]) g_string_append_c(w->s, ',');
  w->has_items[w->depth] = true;
  if (w->inline_mode[w->depth]) {
    if (w->s->str[w->s->len - 1] == ',') g_string_append_c(w->s, ' ');
  } else {
    newline(w);
  }
}

static void begin(jw *w, char open, bool inline_mode) {
  before_item(w);
  g_string_append_c(w->s, open);
  g_assert(w->depth + 1 < JW_MAX_DEPTH);
  w->depth++;
  /* Everything inside an inline container is inline too. */
  w->inline_mode[w->depth] = inline_mode || (w->depth > 1 && w->inline_mode[w->depth - 1]);
  w->has_items[w->depth] = false;
}

static void end(jw *w, char close) {
  bool pretty_with_items = !w->inline_mode[w->depth] && w->has_items[w->depth];
  w->depth--;
  if (pretty_with_items) newline(w);
  g_string_append_c(w->s, close);
}

void jw_begin_object(jw *w, bool inline_mode) { begin(w, '{', inline_mode); }
void jw_end_object(jw *w) { end(w, '}'); }
void jw_begin_array(jw *w, bool inline_mode) { begin(w, '[', inline_mode); }
void jw_end_array(jw *w) { end(w, ']'); }

static void append_escaped(GString *s, const char *v) {
  g_string_append_c(s, '"');
  for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
    switch (*p) {
    case '"': g_string_append(s, "\\\""); break;
    case '\\': g_string_append(s, "\\\\"); break;
    case '\n': g_string_append(s, "\\n"); break;
    case '\r': g_string_append(s, "\\r"); break;
    case '\t': g_string_append(s, "\\t"); break;
    default:
      if (*p < 0x20) g_string_append_printf(s, "\\u%04x", *p);
      else g_string_append_c(s, (char)*p);
    }
  }
  g_string_append_c(s, '"');
}

void jw_key(jw *w, const char *key) {
  before_item(w);
  append_escaped(w->s, key);
  g_string_append(w->s, ": ");
  w->after_key = true;
}

void jw_string(jw *w, const char *v) {
  before_item(w);
  append_escaped(w->s, v);
}

void jw_raw_string(jw *w, const char *v, size_t len) {
  before_item(w);
  g_string_append_c(w->s, '"');
  g_string_append_len(w->s, v, (gssize)len);
  g_string_append_c(w->s, '"');
}

void jw_int(jw *w, int64_t v) {
  before_item(w);
  g_string_append_printf(w->s, "%lld", (long long)v);
}

/* The shortest %.Ng (N = 1..max_prec) that reads back as v, as a double or,
 * when as_float, as a float32. */
static void append_shortest(jw *w, double v, bool as_float) {
  before_item(w);
  g_assert(isfinite(v));
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  for (int prec = 1; prec <= 17; prec++) {
    char fmt[16];
    snprintf(fmt, sizeof fmt, "%%.%dg", prec);
    g_ascii_formatd(buf, sizeof buf, fmt, v);
    double back = g_ascii_strtod(buf, NULL);
    if (as_float ? (float)back == (float)v : back == v) break;
  }
  /* Keep floats recognisable as floats ("1.0", not "1"), so a reader sees
   * the kind at a glance; the loader accepts either for float parameters. */
  if (!strpbrk(buf, ".eEn")) g_strlcat(buf, ".0", sizeof buf);
  g_string_append(w->s, buf);
}

void jw_double(jw *w, double v) { append_shortest(w, v, false); }
void jw_float(jw *w, float v) { append_shortest(w, v, true); }

void jw_base64(jw *w, const void *data, size_t n) {
  before_item(w);
  size_t enc;
  g_assert(base64_encoded_len(n, &enc));
  g_string_append_c(w->s, '"');
  size_t at = w->s->len;
  g_string_set_size(w->s, at + enc);
  base64_encode(data, n, w->s->str + at);
  g_string_append_c(w->s, '"');
}

void jw_bool(jw *w, bool v) {
  before_item(w);
  g_string_append(w->s, v ? "true" : "false");
}
