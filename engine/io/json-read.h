/*
 * Internal: typed access to a parsed JSON document with errors that name the
 * source and the JSON path of the offending value ("model.json: $.slots[3].
 * layer.params.kernel: expected an integer in 1..64, found a string"). Every
 * getter checks the node's type and range; nothing is defaulted silently.
 */
#pragma once
#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "loom/error.h"

#define JR_PATH_MAX 480

typedef struct jr {
  const char *source; /* file name or caller-given label */
  bool strict;        /* unknown members are errors */
  loom_error *err;
  char path[JR_PATH_MAX];
  size_t len;
  struct model_tensors *tensors; /* model reader: weights come from a safetensors file (NULL: base64) */
  uint64_t weight_bytes;         /* model reader: memory the weights read so far take */
  bool at_rest;                  /* model reader: LOOM_MODEL_AT_REST */
} jr;

void jr_init(jr *r, const char *source, bool strict, loom_error *err);

/* Path segments; each returns a mark to restore with jr_pop. */
size_t jr_push_key(jr *r, const char *key);
size_t jr_push_index(jr *r, int64_t index);
void jr_pop(jr *r, size_t mark);

/* "SOURCE: PATH: message"; returns code. */
int jr_fail(jr *r, loom_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prefixes an engine error (already in r->err) with source and path. */
int jr_wrap(jr *r, int code);

/* Translated description of a node's JSON type: "a string", "an integer", ... */
const char *jr_kind(JsonNode *n);

/*
 * Checks a text before parsing: valid UTF-8, and nesting of arrays/objects at
 * most `max_depth` deep (json-glib's parser recurses, so hostile nesting would
 * exhaust the stack). Errors give the line and column.
 */
int jr_precheck(jr *r, const char *text, size_t len, int max_depth);

/* Getters for a member of `o`: the path gets ".key" while checking. A missing
 * required member is an error; a missing optional one returns false in *present. */
int jr_member(jr *r, JsonObject *o, const char *key, bool required, JsonNode **out);
int jr_object(jr *r, JsonNode *n, JsonObject **out);
int jr_array(jr *r, JsonNode *n, JsonArray **out);
int jr_int(jr *r, JsonNode *n, int64_t min, int64_t max, int64_t *out);
int jr_double(jr *r, JsonNode *n, double min, double max, double *out); /* finite; integers accepted */
int jr_bool(jr *r, JsonNode *n, bool *out);
int jr_string(jr *r, JsonNode *n, const char **out);

int jr_get_object(jr *r, JsonObject *o, const char *key, JsonObject **out);
int jr_get_array(jr *r, JsonObject *o, const char *key, JsonArray **out);
int jr_get_int(jr *r, JsonObject *o, const char *key, int64_t min, int64_t max, int64_t *out);
int jr_get_bool(jr *r, JsonObject *o, const char *key, bool *out);
int jr_get_string(jr *r, JsonObject *o, const char *key, const char **out);

/* In strict mode, any member of `o` not in the NULL-terminated `allowed`
 * list is an error naming it. */
int jr_check_members(jr *r, JsonObject *o, const char *const *allowed);
