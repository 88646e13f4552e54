/*
 * Internal: a small JSON emitter for the model file. Containers are either
 * pretty (one member per line, indented two spaces) or inline ("[0, 1, 2, 0]")
 * so that files stay readable and diffs stay small. The output depends only
 * on the calls made, which makes save → load → save byte-identical.
 */
#pragma once
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define JW_MAX_DEPTH 64

typedef struct jw {
  GString *s;
  int depth;
  bool inline_mode[JW_MAX_DEPTH];
  bool has_items[JW_MAX_DEPTH];
  bool after_key;
} jw;

void jw_init(jw *w);
/* Returns the text (caller g_free()s it, or frees w->s). */
char *jw_finish(jw *w, size_t *len);

void jw_begin_object(jw *w, bool inline_mode);
void jw_end_object(jw *w);
void jw_begin_array(jw *w, bool inline_mode);
void jw_end_array(jw *w);
void jw_key(jw *w, const char *key);
void jw_string(jw *w, const char *v);
/* Appends a string value whose characters need no escaping (base64). */
void jw_raw_string(jw *w, const char *v, size_t len);
void jw_int(jw *w, int64_t v);
/* Shortest text that reads back as the same double; v must be finite. */
void jw_double(jw *w, double v);
/* Shortest text that reads back as the same float32 (0.1f is "0.1"). */
void jw_float(jw *w, float v);
void jw_bool(jw *w, bool v);
/* A string value holding the base64 of data[0..n), encoded in place. */
void jw_base64(jw *w, const void *data, size_t n);
