/*
 * The public view of the settings table (settings-fields.c) for forms that
 * build themselves from it, so no user interface lists the fields again.
 */
#include <string.h>

#include "core/i18n.h"
#include "train/settings-internal.h"

int loom_train_settings_n_fields(void) { return settings_n_fields; }

static loom_setting_kind kind_of(settings_kind k) {
  switch (k) {
  case SK_DOUBLE: return LOOM_SETTING_NUMBER;
  case SK_INT64:
  case SK_INT:
  case SK_UINT64: return LOOM_SETTING_INTEGER;
  case SK_BOOL: return LOOM_SETTING_BOOL;
  case SK_NAME:
  case SK_ENUM: return LOOM_SETTING_CHOICE;
  case SK_STRING:
  case SK_CHAR:
  case SK_INTS: break;
  }
  return LOOM_SETTING_TEXT;
}

bool loom_train_settings_field_info(int index, loom_setting_info *out) {
  if (index < 0 || index >= settings_n_fields || !out) return false;
  const settings_field *f = &settings_fields[index];
  *out = (loom_setting_info){
      .name = f->name,
      .label = f->label ? _(f->label) : f->name,
      .kind = kind_of(f->kind),
      .choices = f->choices,
      .min = f->lo,
      .max = f->hi,
      .min_open = f->lo_open,
      .max_open = f->hi_open,
      .has_default = f->unset != SU_NONE,
  };
  if (f->kind == SK_UINT64) {
    out->min = 0;
    out->max = 18446744073709551615.0;
  }
  return true;
}

bool loom_train_settings_field_applies(const loom_train_settings *s, const char *name) {
  const settings_field *f = settings_field_find(name);
  if (!s || !f || !settings_field_applies(s, f)) return false;
  /* Validation accepts tween knobs under backprop (a file may keep them for
   * later); a form shows them only where they act. */
  if (strncmp(name, "tween.", 6) == 0) return s->method == LOOM_TRAIN_TWEEN;
  if (strcmp(name, "clip_norm") == 0) return s->method == LOOM_TRAIN_BACKPROP;
  /* systolic networks train by backprop through time only */
  if (strcmp(name, "ticks") == 0) return s->method == LOOM_TRAIN_BACKPROP;
  return true;
}
