/*
 * The model file's optional "training" section (docs/file-format.md):
 * {"settings": {...the settings file's object...}, "state": "<base64>",
 * "steps": N}. Every member is optional. The state is the trainer's opaque
 * blob; its size is checked against LOOM_MODEL_MAX_TRAIN_STATE_BYTES before
 * anything is decoded.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/base64.h"
#include "io/model-training.h"
#include "io/settings-json.h"

LOOM_API void loom_model_extras_clear(loom_model_extras *x) {
  if (!x) return;
  loom_train_settings_free(x->settings);
  free(x->train_state);
  memset(x, 0, sizeof *x);
}

bool model_training_present(const loom_model_extras *x) {
  return x && (x->settings || x->train_state || x->train_steps != 0);
}

static int read_state(jr *r, JsonObject *o, loom_model_extras *out) {
  JsonNode *n;
  const char *text;
  int rc = jr_member(r, o, "state", false, &n);
  if (rc || !n) return rc;
  size_t mark = jr_push_key(r, "state");
  if ((rc = jr_string(r, n, &text))) return rc;
  size_t len = strlen(text);
  /* 4 characters carry 3 bytes; the limit is checked on the text's length */
  if (len % 4 != 0)
    return jr_fail(r, LOOM_ERR_FORMAT, _("base64 text of %zu characters is not a multiple of 4"), len);
  size_t bytes = len / 4 * 3;
  if (len >= 1 && text[len - 1] == '=') bytes--;
  if (len >= 2 && text[len - 2] == '=') bytes--;
  if (bytes > LOOM_MODEL_MAX_TRAIN_STATE_BYTES)
    return jr_fail(r, LOOM_ERR_NOMEM, _("a training state of %zu bytes is more than the limit of %zu bytes"), bytes,
                   LOOM_MODEL_MAX_TRAIN_STATE_BYTES);
  if (bytes == 0) return jr_fail(r, LOOM_ERR_FORMAT, _("the training state is empty"));
  void *blob = malloc(bytes);
  if (!blob) return jr_fail(r, LOOM_ERR_NOMEM, _("out of memory"));
  char why[256];
  if (!base64_decode_exact(text, len, blob, bytes, why, sizeof why)) {
    free(blob);
    return jr_fail(r, LOOM_ERR_FORMAT, "%s", why);
  }
  out->train_state = blob;
  out->train_state_len = bytes;
  jr_pop(r, mark);
  return LOOM_OK;
}

int model_read_training(jr *r, JsonNode *node, loom_model_extras *out) {
  static const char *const members[] = {"settings", "state", "steps", NULL};
  memset(out, 0, sizeof *out);
  JsonObject *o;
  JsonNode *n;
  /* the section is new: it is checked strictly even when the rest of the file is not */
  bool strict = r->strict;
  r->strict = true;
  int rc = jr_object(r, node, &o);
  if (!rc) rc = jr_check_members(r, o, members);
  r->strict = strict;
  if (rc) return rc;
  if (!(rc = jr_member(r, o, "settings", false, &n)) && n) {
    size_t mark = jr_push_key(r, "settings");
    rc = settings_json_read(r, n, &out->settings);
    jr_pop(r, mark);
  }
  if (!rc) rc = read_state(r, o, out);
  if (!rc && json_object_has_member(o, "steps")) rc = jr_get_int(r, o, "steps", 0, INT64_MAX, &out->train_steps);
  if (rc) loom_model_extras_clear(out);
  return rc;
}

int model_write_training(jw *w, const loom_model_extras *x, loom_error *err) {
  if (x->train_state && (x->train_state_len == 0 || x->train_state_len > LOOM_MODEL_MAX_TRAIN_STATE_BYTES))
    return loom_error_set(err, LOOM_ERR_RANGE, _("training state: %zu bytes, expected 1 to %zu"), x->train_state_len,
                          LOOM_MODEL_MAX_TRAIN_STATE_BYTES);
  if (x->train_steps < 0)
    return loom_error_set(err, LOOM_ERR_RANGE, _("training steps: %lld, expected a count >= 0"),
                          (long long)x->train_steps);
  int rc;
  if (x->settings && (rc = loom_train_settings_validate(x->settings, err))) {
    loom_error_prefix(err, _("training settings"));
    return rc;
  }
  jw_key(w, "training");
  jw_begin_object(w, false);
  if (x->settings) {
    jw_key(w, "settings");
    settings_json_write(w, x->settings);
  }
  if (x->train_state) {
    jw_key(w, "state");
    jw_base64(w, x->train_state, x->train_state_len);
  }
  jw_key(w, "steps");
  jw_int(w, x->train_steps);
  jw_end_object(w);
  return LOOM_OK;
}
