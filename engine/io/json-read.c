#include "io/json-read.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/i18n.h"

void jr_init(jr *r, const char *source, bool strict, loom_error *err) {
  r->source = source ? source : "<data>";
  r->strict = strict;
  r->err = err;
  r->path[0] = '$';
  r->path[1] = '\0';
  r->len = 1;
  r->tensors = NULL;
  r->weight_bytes = 0;
  r->at_rest = false;
}

static void path_append(jr *r, const char *text) {
  size_t n = strlen(text);
  if (r->len + n >= JR_PATH_MAX) {
    /* Deeper than any sane file; keep the path valid and mark the cut. */
    n = r->len + 3 < JR_PATH_MAX ? JR_PATH_MAX - r->len - 4 : 0;
    memcpy(r->path + r->len, text, n);
    r->len += n;
    if (r->len + 3 < JR_PATH_MAX) {
      memcpy(r->path + r->len, "...", 4);
      r->len += 3;
    }
    r->path[r->len] = '\0';
    return;
  }
  memcpy(r->path + r->len, text, n + 1);
  r->len += n;
}

static bool plain_key(const char *key) {
  if (!*key || (*key >= '0' && *key <= '9')) return false;
  for (const char *p = key; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  return true;
}

size_t jr_push_key(jr *r, const char *key) {
  size_t mark = r->len;
  if (plain_key(key)) {
    path_append(r, ".");
    path_append(r, key);
    return mark;
  }
  /* Bracket notation with the key quoted and control characters escaped. */
  char buf[160];
  size_t n = 0;
  buf[n++] = '[';
  buf[n++] = '"';
  for (const unsigned char *p = (const unsigned char *)key; *p && n + 8 < sizeof buf; p++) {
    if (*p < 0x20 || *p == '"' || *p == '\\') n += (size_t)snprintf(buf + n, sizeof buf - n, "\\u%04x", *p);
    else buf[n++] = (char)*p;
  }
  buf[n++] = '"';
  buf[n++] = ']';
  buf[n] = '\0';
  path_append(r, buf);
  return mark;
}

size_t jr_push_index(jr *r, int64_t index) {
  size_t mark = r->len;
  char buf[32];
  snprintf(buf, sizeof buf, "[%lld]", (long long)index);
  path_append(r, buf);
  return mark;
}

void jr_pop(jr *r, size_t mark) {
  r->len = mark;
  r->path[mark] = '\0';
}

int jr_fail(jr *r, loom_status code, const char *fmt, ...) {
  char msg[LOOM_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return loom_error_set(r->err, code, "%s: %s: %s", r->source, r->path, msg);
}

int jr_wrap(jr *r, int code) {
  if (r->err) loom_error_prefix(r->err, "%s: %s", r->source, r->path);
  return code;
}

/* What a JSON value is. The phrases are inserted into "expected an object, found %s"
 * and the like, so each one has to work after "found". */
const char *jr_kind(JsonNode *n) {
  switch (JSON_NODE_TYPE(n)) {
  /* TRANSLATORS: this and the next phrases name the kind of a JSON value and are inserted as
     %s into messages such as "expected an array, found %s" (a model file holds the wrong kind
     of value). Translate them so that they fit there. */
  case JSON_NODE_OBJECT: return _("an object");
  case JSON_NODE_ARRAY: return _("an array");
  case JSON_NODE_NULL: return _("null");
  case JSON_NODE_VALUE: break;
  }
  GType t = json_node_get_value_type(n);
  if (t == G_TYPE_INT64) return _("an integer");
  if (t == G_TYPE_DOUBLE) return _("a number with a fraction or exponent");
  if (t == G_TYPE_BOOLEAN) return _("true or false");
  if (t == G_TYPE_STRING) return _("a string");
  return _("a value of unknown type");
}

/*
 * A strict RFC 8259 syntax check run before json-glib sees the text:
 * json-glib accepts comments, hex and leading-zero numbers, single-quoted
 * strings and duplicate keys (the last wins), and wraps integers that do not
 * fit in 64 bits — a model file must not mean something other than it says.
 */
typedef struct {
  jr *r;
  const char *p, *end, *line_start;
  int line, depth, max_depth;
} lexer;

static int lex_fail(lexer *x, const char *what) {
  const char *at = x->p < x->end ? x->p : x->end;
  long col = g_utf8_pointer_to_offset(x->line_start, at) + 1;
  return loom_error_set(x->r->err, LOOM_ERR_FORMAT, _("%s:%d:%ld: %s"), x->r->source, x->line, col, what);
}

static void skip_ws(lexer *x) {
  while (x->p < x->end) {
    char c = *x->p;
    if (c == '\n') {
      x->line++;
      x->line_start = x->p + 1;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      return;
    }
    x->p++;
  }
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* A string at x->p (the opening quote); its decoded text goes to `out` when given. */
static int lex_string(lexer *x, GString *out) {
  x->p++;
  while (x->p < x->end && *x->p != '"') {
    unsigned char c = (unsigned char)*x->p;
    if (c < 0x20) return lex_fail(x, _("control character inside a string (write it as an escape)"));
    if (c != '\\') {
      if (out) g_string_append_c(out, (char)c);
      x->p++;
      continue;
    }
    if (x->end - x->p < 2) break;
    char e = x->p[1];
    const char *simple = strchr("\"\\/bfnrt", e);
    if (e && simple) {
      if (out) g_string_append_c(out, "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"]);
      x->p += 2;
      continue;
    }
    if (e != 'u') return lex_fail(x, _("invalid escape in a string"));
    if (x->end - x->p < 6) break;
    unsigned v = 0;
    for (int k = 2; k < 6; k++) {
      int h = hex_value(x->p[k]);
      if (h < 0) return lex_fail(x, _("invalid \\u escape in a string"));
      v = v << 4 | (unsigned)h;
    }
    if (out) g_string_append_unichar(out, v);
    x->p += 6;
  }
  if (x->p >= x->end) return lex_fail(x, _("unterminated string (is the file truncated?)"));
  x->p++;
  return LOOM_OK;
}

static int lex_number(lexer *x) {
  const char *start = x->p;
  bool negative = *x->p == '-', integer = true;
  if (negative) x->p++;
  if (x->p >= x->end || !g_ascii_isdigit(*x->p)) return lex_fail(x, _("invalid number"));
  if (*x->p == '0' && x->p + 1 < x->end && g_ascii_isdigit(x->p[1]))
    return lex_fail(x, _("invalid number (leading zero)"));
  const char *digits = x->p;
  while (x->p < x->end && g_ascii_isdigit(*x->p)) x->p++;
  size_t n_digits = (size_t)(x->p - digits);
  if (x->p < x->end && *x->p == '.') {
    integer = false;
    x->p++;
    if (x->p >= x->end || !g_ascii_isdigit(*x->p)) return lex_fail(x, _("invalid number (no digit after the point)"));
    while (x->p < x->end && g_ascii_isdigit(*x->p)) x->p++;
  }
  if (x->p < x->end && (*x->p == 'e' || *x->p == 'E')) {
    integer = false;
    x->p++;
    if (x->p < x->end && (*x->p == '+' || *x->p == '-')) x->p++;
    if (x->p >= x->end || !g_ascii_isdigit(*x->p)) return lex_fail(x, _("invalid number (no digit in the exponent)"));
    while (x->p < x->end && g_ascii_isdigit(*x->p)) x->p++;
  }
  if (integer) {
    /* Compare the digits with the int64 limit as text: no overflow possible. */
    const char *limit = negative ? "9223372036854775808" : "9223372036854775807";
    if (n_digits > 19 || (n_digits == 19 && memcmp(digits, limit, 19) > 0)) {
      const char *end = x->p;
      x->p = start;
      char msg[160];
      snprintf(msg, sizeof msg, _("the integer %.*s does not fit in 64 bits"), (int)MIN(end - start, 40), start);
      return lex_fail(x, msg);
    }
  }
  return LOOM_OK;
}

static int lex_value(lexer *x);

static int lex_container(lexer *x, bool object) {
  if (++x->depth > x->max_depth) {
    char msg[96];
    snprintf(msg, sizeof msg, _("arrays and objects nest deeper than %d levels"), x->max_depth);
    return lex_fail(x, msg);
  }
  x->p++;
  skip_ws(x);
  GHashTable *keys = object ? g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL) : NULL;
  int rc = LOOM_OK;
  char close = object ? '}' : ']';
  if (x->p < x->end && *x->p == close) {
    x->p++;
    goto done;
  }
  for (;;) {
    if (object) {
      if (x->p >= x->end || *x->p != '"') {
        rc = lex_fail(x, x->p >= x->end ? _("unexpected end of the text (is the file truncated?)")
                                        : _("expected a member name in double quotes"));
        goto done;
      }
      const char *key_at = x->p;
      GString *key = g_string_new(NULL);
      if ((rc = lex_string(x, key))) {
        g_string_free(key, TRUE);
        goto done;
      }
      if (g_hash_table_contains(keys, key->str)) {
        x->p = key_at;
        char msg[200];
        snprintf(msg, sizeof msg, _("duplicate member “%.100s”"), key->str);
        g_string_free(key, TRUE);
        rc = lex_fail(x, msg);
        goto done;
      }
      g_hash_table_add(keys, g_string_free(key, FALSE));
      skip_ws(x);
      if (x->p >= x->end || *x->p != ':') {
        rc = lex_fail(x, _("expected ':' after a member name"));
        goto done;
      }
      x->p++;
    }
    if ((rc = lex_value(x))) goto done;
    skip_ws(x);
    if (x->p < x->end && *x->p == ',') {
      x->p++;
      skip_ws(x);
      continue;
    }
    if (x->p < x->end && *x->p == close) {
      x->p++;
      break;
    }
    rc = lex_fail(x, x->p >= x->end ? _("unexpected end of the text (is the file truncated?)")
                                    : object ? _("expected ',' or '}'") : _("expected ',' or ']'"));
    goto done;
  }
done:
  if (keys) g_hash_table_destroy(keys);
  x->depth--;
  return rc;
}

static int lex_value(lexer *x) {
  skip_ws(x);
  if (x->p >= x->end) return lex_fail(x, _("unexpected end of the text (is the file truncated?)"));
  char c = *x->p;
  if (c == '{' || c == '[') return lex_container(x, c == '{');
  if (c == '"') return lex_string(x, NULL);
  if (c == '-' || g_ascii_isdigit(c)) return lex_number(x);
  static const char *const words[] = {"true", "false", "null"};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(words[i]);
    if ((size_t)(x->end - x->p) >= n && memcmp(x->p, words[i], n) == 0) {
      x->p += n;
      return LOOM_OK;
    }
  }
  return lex_fail(x, _("expected a value (object, array, string, number, true, false or null)"));
}

int jr_precheck(jr *r, const char *text, size_t len, int max_depth) {
  const char *bad = NULL;
  if (!g_utf8_validate_len(text, len, &bad)) {
    size_t off = (size_t)(bad - text);
    return loom_error_set(r->err, LOOM_ERR_FORMAT, _("%s: not valid UTF-8 text (byte %zu)"), r->source, off);
  }
  lexer x = {r, text, text + len, text, 1, 0, max_depth};
  skip_ws(&x);
  if (x.p == x.end) return loom_error_set(r->err, LOOM_ERR_FORMAT, _("%s: the file is empty"), r->source);
  int rc = lex_value(&x);
  if (rc) return rc;
  skip_ws(&x);
  if (x.p != x.end) return lex_fail(&x, _("unexpected text after the end of the document"));
  return LOOM_OK;
}

int jr_member(jr *r, JsonObject *o, const char *key, bool required, JsonNode **out) {
  *out = json_object_get_member(o, key);
  if (!*out && required) {
    size_t mark = jr_push_key(r, key);
    int rc = jr_fail(r, LOOM_ERR_FORMAT, _("required member is missing"));
    jr_pop(r, mark);
    return rc;
  }
  return LOOM_OK;
}

int jr_object(jr *r, JsonNode *n, JsonObject **out) {
  if (!JSON_NODE_HOLDS_OBJECT(n)) return jr_fail(r, LOOM_ERR_FORMAT, _("expected an object, found %s"), jr_kind(n));
  *out = json_node_get_object(n);
  return LOOM_OK;
}

int jr_array(jr *r, JsonNode *n, JsonArray **out) {
  if (!JSON_NODE_HOLDS_ARRAY(n)) return jr_fail(r, LOOM_ERR_FORMAT, _("expected an array, found %s"), jr_kind(n));
  *out = json_node_get_array(n);
  return LOOM_OK;
}

int jr_int(jr *r, JsonNode *n, int64_t min, int64_t max, int64_t *out) {
  if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_INT64)
    return jr_fail(r, LOOM_ERR_FORMAT, _("expected an integer in %lld..%lld, found %s"), (long long)min,
                   (long long)max, jr_kind(n));
  int64_t v = json_node_get_int(n);
  if (v < min || v > max)
    return jr_fail(r, LOOM_ERR_RANGE, _("expected an integer in %lld..%lld, found %lld"), (long long)min,
                   (long long)max, (long long)v);
  *out = v;
  return LOOM_OK;
}

int jr_double(jr *r, JsonNode *n, double min, double max, double *out) {
  GType t = JSON_NODE_HOLDS_VALUE(n) ? json_node_get_value_type(n) : G_TYPE_INVALID;
  if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE)
    return jr_fail(r, LOOM_ERR_FORMAT, _("expected a number in %.9g..%.9g, found %s"), min, max, jr_kind(n));
  double v = t == G_TYPE_INT64 ? (double)json_node_get_int(n) : json_node_get_double(n);
  if (!isfinite(v)) return jr_fail(r, LOOM_ERR_NONFINITE, _("the number is not finite"));
  if (v < min || v > max)
    return jr_fail(r, LOOM_ERR_RANGE, _("expected a number in %.9g..%.9g, found %.17g"), min, max, v);
  *out = v;
  return LOOM_OK;
}

int jr_bool(jr *r, JsonNode *n, bool *out) {
  if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_BOOLEAN)
    return jr_fail(r, LOOM_ERR_FORMAT, _("expected true or false, found %s"), jr_kind(n));
  *out = json_node_get_boolean(n);
  return LOOM_OK;
}

int jr_string(jr *r, JsonNode *n, const char **out) {
  if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING)
    return jr_fail(r, LOOM_ERR_FORMAT, _("expected a string, found %s"), jr_kind(n));
  *out = json_node_get_string(n);
  return LOOM_OK;
}

/* Runs `getter` on member `key` of `o` with the path extended by it. */
#define WITH_MEMBER(r, o, key, call)                  \
  do {                                                \
    JsonNode *node_;                                  \
    int rc_ = jr_member(r, o, key, true, &node_);     \
    if (rc_) return rc_;                              \
    size_t mark_ = jr_push_key(r, key);               \
    rc_ = call;                                       \
    jr_pop(r, mark_);                                 \
    return rc_;                                       \
  } while (0)

int jr_get_object(jr *r, JsonObject *o, const char *key, JsonObject **out) {
  WITH_MEMBER(r, o, key, jr_object(r, node_, out));
}
int jr_get_array(jr *r, JsonObject *o, const char *key, JsonArray **out) {
  WITH_MEMBER(r, o, key, jr_array(r, node_, out));
}
int jr_get_int(jr *r, JsonObject *o, const char *key, int64_t min, int64_t max, int64_t *out) {
  WITH_MEMBER(r, o, key, jr_int(r, node_, min, max, out));
}
int jr_get_bool(jr *r, JsonObject *o, const char *key, bool *out) { WITH_MEMBER(r, o, key, jr_bool(r, node_, out)); }
int jr_get_string(jr *r, JsonObject *o, const char *key, const char **out) {
  WITH_MEMBER(r, o, key, jr_string(r, node_, out));
}

int jr_check_members(jr *r, JsonObject *o, const char *const *allowed) {
  if (!r->strict) return LOOM_OK;
  /* Members in file order, so the first unknown one in the text is reported. */
  GList *members = json_object_get_members(o);
  int rc = LOOM_OK;
  for (GList *m = members; m && rc == LOOM_OK; m = m->next) {
    const char *name = m->data;
    bool known = false;
    for (const char *const *a = allowed; *a && !known; a++) known = strcmp(*a, name) == 0;
    if (known) continue;
    char list[256] = "";
    for (const char *const *a = allowed; *a; a++) {
      if (a != allowed) g_strlcat(list, ", ", sizeof list);
      g_strlcat(list, *a, sizeof list);
    }
    size_t mark = jr_push_key(r, name);
    rc = jr_fail(r, LOOM_ERR_FORMAT, _("unknown member (expected one of: %s)"), list);
    jr_pop(r, mark);
  }
  g_list_free(members);
  return rc;
}
