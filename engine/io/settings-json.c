/*
 * The training settings file (docs/file-format.md "Training settings"): a
 * JSON object whose members follow the field table in
 * train/settings-fields.c, grouped by the dots in the field names
 * ("optimizer.lr" is $.optimizer.lr). Knobs that are not set, and knobs the
 * chosen optimizer, schedule or data source lacks, are not written; a field
 * absent from a file takes its default. Unknown members are errors.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/settings-json.h"
#include "loom/file.h"
#include "train/settings-internal.h"

#define GROUP_MAX 4
#define SEGMENT_MAX 32
#define FEATURES_MAX 1000000

/* ---- writing ----------------------------------------------------------- */

/* The group part of a field name ("data.csv" of "data.csv.path") and its leaf. */
static const char *leaf_of(const char *name) {
  const char *dot = strrchr(name, '.');
  return dot ? dot + 1 : name;
}

static void write_value(jw *w, const loom_train_settings *s, const settings_field *f) {
  const char *p = (const char *)s + f->offset;
  char text[128];
  switch (f->kind) {
  case SK_INT64: jw_int(w, *(const int64_t *)p); return;
  case SK_INT: jw_int(w, *(const int *)p); return;
  case SK_UINT64: {
    uint64_t v = *(const uint64_t *)p;
    /* JSON readers (json-glib too) hold integers as int64: larger seeds are written as text */
    if (v <= INT64_MAX) {
      jw_int(w, (int64_t)v);
    } else {
      snprintf(text, sizeof text, "%" PRIu64, v);
      jw_string(w, text);
    }
    return;
  }
  case SK_DOUBLE: jw_double(w, *(const double *)p); return;
  case SK_BOOL: jw_bool(w, *(const bool *)p); return;
  case SK_STRING: jw_string(w, *(char *const *)p); return;
  case SK_INTS: {
    const int64_t *v = *(int64_t *const *)p;
    int64_t n = *(const int64_t *)((const char *)s + f->count_offset);
    jw_begin_array(w, true);
    for (int64_t i = 0; i < n; i++) jw_int(w, v[i]);
    jw_end_array(w);
    return;
  }
  case SK_NAME:
  case SK_ENUM:
  case SK_CHAR: settings_field_format(s, f, text, sizeof text); jw_string(w, text); return;
  }
}

void settings_json_write(jw *w, const loom_train_settings *s) {
  char open[GROUP_MAX][SEGMENT_MAX];
  int depth = 0;
  jw_begin_object(w, false);
  jw_key(w, "format");
  jw_string(w, SETTINGS_FORMAT_NAME);
  jw_key(w, "version");
  jw_int(w, LOOM_SETTINGS_FORMAT_VERSION);
  for (int i = 0; i < settings_n_fields; i++) {
    const settings_field *f = &settings_fields[i];
    if (!settings_field_applies(s, f) || settings_field_is_unset(s, f)) continue;
    /* split "a.b.leaf" into its groups; close the open groups that differ, open the new ones */
    char segs[GROUP_MAX][SEGMENT_MAX];
    int n = 0;
    for (const char *p = f->name; n < GROUP_MAX;) {
      const char *dot = strchr(p, '.');
      if (!dot) break;
      snprintf(segs[n++], SEGMENT_MAX, "%.*s", (int)(dot - p), p);
      p = dot + 1;
    }
    int keep = 0;
    while (keep < depth && keep < n && strcmp(open[keep], segs[keep]) == 0) keep++;
    for (; depth > keep; depth--) jw_end_object(w);
    for (; depth < n; depth++) {
      jw_key(w, segs[depth]);
      jw_begin_object(w, false);
      memcpy(open[depth], segs[depth], SEGMENT_MAX);
    }
    jw_key(w, leaf_of(f->name));
    write_value(w, s, f);
  }
  for (; depth > 0; depth--) jw_end_object(w);
  jw_end_object(w);
}

LOOM_API char *loom_train_settings_to_json(const loom_train_settings *s, size_t *len, loom_error *err) {
  if (len) *len = 0;
  if (loom_train_settings_validate(s, err)) return NULL;
  jw w;
  jw_init(&w);
  settings_json_write(&w, s);
  return jw_finish(&w, len);
}

LOOM_API int loom_train_settings_save(const loom_train_settings *s, const char *path, loom_error *err) {
  if (!path) return loom_error_set(err, LOOM_ERR_INVALID, _("no settings file given"));
  size_t len;
  char *text = loom_train_settings_to_json(s, &len, err);
  if (!text) {
    loom_error_prefix(err, "%s", path);
    return err ? err->code : LOOM_ERR_INVALID;
  }
  int rc = loom_file_write_atomic(path, text, len, err);
  free(text);
  return rc;
}

/* ---- reading ----------------------------------------------------------- */

/* Whether some field lives below the group "prefix" ("data.csv"). */
static bool is_group(const char *prefix) {
  size_t n = strlen(prefix);
  for (int i = 0; i < settings_n_fields; i++)
    if (strncmp(settings_fields[i].name, prefix, n) == 0 && settings_fields[i].name[n] == '.') return true;
  return false;
}

/* The members a group may have, for the message about an unknown one. */
static void group_members(const char *prefix, bool root, char *buf, size_t size) {
  size_t n = prefix ? strlen(prefix) : 0;
  buf[0] = '\0';
  if (root) g_strlcat(buf, "format, version", size);
  for (int i = 0; i < settings_n_fields; i++) {
    const char *name = settings_fields[i].name;
    if (prefix && (strncmp(name, prefix, n) != 0 || name[n] != '.')) continue;
    const char *rest = prefix ? name + n + 1 : name;
    size_t seg = strcspn(rest, ".");
    char item[SEGMENT_MAX];
    snprintf(item, sizeof item, "%.*s", (int)seg, rest);
    /* list each subgroup once: only where it first appears */
    bool seen = false;
    for (int k = 0; k < i && !seen; k++) {
      const char *other = settings_fields[k].name;
      const char *orest = prefix ? other + n + 1 : other;
      seen = (!prefix || (strncmp(other, prefix, n) == 0 && other[n] == '.')) && strncmp(orest, item, seg) == 0 &&
             (orest[seg] == '.' || orest[seg] == '\0');
    }
    if (seen) continue;
    if (buf[0]) g_strlcat(buf, ", ", size);
    g_strlcat(buf, item, size);
  }
}

static int read_value(jr *r, JsonNode *n, const settings_field *f, loom_train_settings *s) {
  char text[64], why[LOOM_ERROR_MESSAGE_MAX / 2];
  const char *value = text;
  GString *list = NULL;
  int rc;
  switch (f->kind) {
  case SK_INT64:
  case SK_INT: {
    int64_t v;
    if ((rc = jr_int(r, n, (int64_t)f->lo, (int64_t)f->hi, &v))) return rc;
    snprintf(text, sizeof text, "%" PRId64, v);
    break;
  }
  case SK_UINT64:
    if (JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING) {
      value = json_node_get_string(n);
    } else {
      int64_t v;
      if ((rc = jr_int(r, n, 0, INT64_MAX, &v))) return rc;
      snprintf(text, sizeof text, "%" PRId64, v);
    }
    break;
  case SK_DOUBLE: {
    double v;
    if ((rc = jr_double(r, n, -G_MAXDOUBLE, G_MAXDOUBLE, &v))) return rc;
    g_ascii_dtostr(text, sizeof text, v);
    break;
  }
  case SK_BOOL: {
    bool v;
    if ((rc = jr_bool(r, n, &v))) return rc;
    value = v ? "true" : "false";
    break;
  }
  case SK_NAME:
  case SK_ENUM:
  case SK_CHAR:
  case SK_STRING:
    if ((rc = jr_string(r, n, &value))) return rc;
    break;
  case SK_INTS: {
    JsonArray *a;
    if ((rc = jr_array(r, n, &a))) return rc;
    guint len = json_array_get_length(a);
    if (len == 0 || len > FEATURES_MAX)
      return jr_fail(r, LOOM_ERR_RANGE, _("expected 1 to %d column indices, found %u"), FEATURES_MAX, len);
    list = g_string_new(NULL);
    for (guint i = 0; i < len; i++) {
      int64_t v;
      size_t m = jr_push_index(r, i);
      if ((rc = jr_int(r, json_array_get_element(a, i), (int64_t)f->lo, (int64_t)f->hi, &v))) {
        g_string_free(list, TRUE);
        return rc;
      }
      jr_pop(r, m);
      g_string_append_printf(list, "%s%" PRId64, i ? "," : "", v);
    }
    value = list->str;
    break;
  }
  }
  rc = settings_field_store(s, f, value, false, why, sizeof why);
  if (list) g_string_free(list, TRUE);
  if (rc) return jr_fail(r, rc, "%s", why);
  return LOOM_OK;
}

static int read_group(jr *r, JsonObject *o, const char *prefix, loom_train_settings *s) {
  GList *members = json_object_get_members(o);
  int rc = LOOM_OK;
  for (GList *m = members; m && !rc; m = m->next) {
    const char *key = m->data;
    if (!prefix && (strcmp(key, "format") == 0 || strcmp(key, "version") == 0)) continue;
    char *full = prefix ? g_strconcat(prefix, ".", key, NULL) : g_strdup(key);
    const settings_field *f = settings_field_find(full);
    JsonNode *node = json_object_get_member(o, key);
    size_t mark = jr_push_key(r, key);
    if (f) {
      rc = read_value(r, node, f, s);
    } else if (is_group(full)) {
      JsonObject *sub;
      if (!(rc = jr_object(r, node, &sub))) rc = read_group(r, sub, full, s);
    } else {
      char list[512];
      group_members(prefix, !prefix, list, sizeof list);
      rc = jr_fail(r, LOOM_ERR_FORMAT, _("unknown member (expected one of: %s)"), list);
    }
    jr_pop(r, mark);
    g_free(full);
  }
  g_list_free(members);
  return rc;
}

static int read_header(jr *r, JsonObject *o) {
  const char *format;
  int64_t version;
  int rc;
  if ((rc = jr_get_string(r, o, "format", &format))) return rc;
  if (strcmp(format, SETTINGS_FORMAT_NAME) != 0) {
    size_t mark = jr_push_key(r, "format");
    rc = jr_fail(r, LOOM_ERR_FORMAT, _("expected “%s”, found “%s”"), SETTINGS_FORMAT_NAME, format);
    jr_pop(r, mark);
    return rc;
  }
  if ((rc = jr_get_int(r, o, "version", INT64_MIN, INT64_MAX, &version))) return rc;
  if (version >= 1 && version <= LOOM_SETTINGS_FORMAT_VERSION) return LOOM_OK;
  size_t mark = jr_push_key(r, "version");
  rc = version > LOOM_SETTINGS_FORMAT_VERSION
         ? jr_fail(r, LOOM_ERR_UNSUPPORTED, _("format version %lld is newer than this loom reads (up to %d)"),
                   (long long)version, LOOM_SETTINGS_FORMAT_VERSION)
         : jr_fail(r, LOOM_ERR_FORMAT, _("format version %lld does not exist"), (long long)version);
  jr_pop(r, mark);
  return rc;
}

int settings_json_read(jr *r, JsonNode *node, loom_train_settings **out) {
  *out = NULL;
  JsonObject *o;
  int rc;
  if ((rc = jr_object(r, node, &o)) || (rc = read_header(r, o))) return rc;
  loom_train_settings *s = loom_train_settings_new();
  if (!s) return jr_fail(r, LOOM_ERR_NOMEM, _("out of memory"));
  if ((rc = read_group(r, o, NULL, s))) {
    loom_train_settings_free(s);
    return rc;
  }
  /* the combinations, reported at the member that breaks them */
  char field[64], why[LOOM_ERROR_MESSAGE_MAX / 2];
  if ((rc = settings_check(s, field, sizeof field, why, sizeof why))) {
    size_t mark = r->len;
    char **segs = g_strsplit(field, ".", -1);
    for (int i = 0; segs[i]; i++) jr_push_key(r, segs[i]);
    g_strfreev(segs);
    rc = jr_fail(r, rc, "%s", why);
    jr_pop(r, mark);
    loom_train_settings_free(s);
    return rc;
  }
  *out = s;
  return LOOM_OK;
}

LOOM_API int loom_train_settings_from_json(const char *json, size_t len, const char *source_name,
                                           loom_train_settings **out, loom_error *err) {
  if (out) *out = NULL;
  const char *source = source_name ? source_name : "<data>";
  if (!json || !out) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: no settings text or result given"), source);
  if (len > LOOM_SETTINGS_MAX_FILE_BYTES)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: %zu bytes is more than the limit of %zu bytes"), source, len,
                          LOOM_SETTINGS_MAX_FILE_BYTES);
  jr r;
  jr_init(&r, source, true, err);
  int rc = jr_precheck(&r, json, len, SETTINGS_MAX_JSON_DEPTH);
  if (rc) return rc;
  JsonParser *parser = json_parser_new_immutable();
  GError *gerr = NULL;
  if (!json_parser_load_from_data(parser, json, (gssize)len, &gerr)) {
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: %s (not valid JSON; is the file truncated?)"), source,
                        gerr->message);
    g_error_free(gerr);
  } else if (!json_parser_get_root(parser)) {
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: the file is empty"), source);
  } else {
    rc = settings_json_read(&r, json_parser_get_root(parser), out);
  }
  g_object_unref(parser);
  return rc;
}

LOOM_API int loom_train_settings_load(const char *path, loom_train_settings **out, loom_error *err) {
  if (out) *out = NULL;
  if (!path || !out) return loom_error_set(err, LOOM_ERR_INVALID, _("no settings file given"));
  char *text;
  size_t len;
  int rc = loom_file_read_all(path, LOOM_SETTINGS_MAX_FILE_BYTES, &text, &len, err);
  if (rc) return rc;
  rc = loom_train_settings_from_json(text, len, path, out, err);
  free(text);
  if (rc) return rc;
  /* a relative CSV path is relative to the settings file */
  (*out)->data.base_dir = g_path_get_dirname(path);
  return LOOM_OK;
}
