/*
 * Internal: the training settings as one table of fields (settings-fields.c).
 * Validation, set_field/get_field, equality and the JSON reader and writer
 * (io/settings-json.c) iterate it; nothing else lists the fields (the table
 * in docs/training-settings.md describes them). A field's name is its JSON path without "$.": "optimizer.lr"
 * lives at $.optimizer.lr. Fields of one group are contiguous.
 */
#pragma once
#include <stddef.h>

#include "loom/settings.h"

typedef enum settings_kind {
  SK_INT64,  /* int64_t */
  SK_INT,    /* int */
  SK_UINT64, /* uint64_t; JSON: an integer, or a decimal string above INT64_MAX */
  SK_DOUBLE, /* double */
  SK_BOOL,   /* bool */
  SK_NAME,   /* char[LOOM_SETTINGS_NAME_MAX] holding one of a set of names */
  SK_ENUM,   /* an enum stored as int, written by name */
  SK_STRING, /* owned char *, NULL = not set */
  SK_CHAR,   /* char, one byte; 0 = detect, written "auto" */
  SK_INTS,   /* owned int64_t * with its count; NULL = not set */
} settings_kind;

/* What "not set" looks like for a knob that has that state. */
typedef enum settings_unset {
  SU_NONE = 0, /* always set */
  SU_NAN,      /* a double that is NaN */
  SU_ZERO,     /* an integer that is 0 */
  SU_NULL,     /* a pointer that is NULL */
} settings_unset;

/* Which choice a knob depends on; `mask` has bit i for the choice's value i. */
typedef enum settings_scope {
  SS_ALL = 0,
  SS_SOURCE,    /* data.source: bit = index in settings_sources */
  SS_OPTIMIZER, /* optimizer.name: bit = loom_optim_kind */
  SS_SCHEDULE,  /* schedule.kind: bit = loom_schedule_kind */
} settings_scope;

typedef struct settings_field {
  const char *name;
  settings_kind kind;
  size_t offset;
  size_t count_offset; /* SK_INTS: the int64_t count */
  settings_unset unset;
  double lo, hi; /* numbers: the range */
  bool lo_open, hi_open;
  settings_scope scope;
  unsigned mask;
  /* SK_NAME, SK_ENUM: the choices, NULL-terminated; an SK_ENUM's value is its index. */
  const char *const *choices;
  const char *label; /* for people, marked N_(): the workbench's form shows it translated */
} settings_field;

extern const settings_field settings_fields[];
extern const int settings_n_fields;
/* data.source choices, in the order of the SS_SOURCE bits. */
extern const char *const settings_sources[];

const settings_field *settings_field_find(const char *name);
/* The index of s->data.source in settings_sources, or -1. */
int settings_source_index(const loom_train_settings *s);

/* Whether the field holds its "not set" state (false for fields without one). */
bool settings_field_is_unset(const loom_train_settings *s, const settings_field *f);
/* Whether the field's choice (optimizer, schedule, source) has it. */
bool settings_field_applies(const loom_train_settings *s, const settings_field *f);
/*
 * Parses `text` and stores it (range and choices checked). With
 * allow_default, "default" puts a knob in its unset state. On failure
 * writes the reason (without the field's name) to why and leaves s alone.
 */
int settings_field_store(loom_train_settings *s, const settings_field *f, const char *text, bool allow_default,
                         char *why, size_t why_size);
/* The value as settings_field_store reads it back; "default" when unset. */
void settings_field_format(const loom_train_settings *s, const settings_field *f, char *buf, size_t size);
/* Puts the field back to its default (freeing owned memory). */
void settings_field_reset(loom_train_settings *s, const settings_field *f);

/*
 * The cross-field and range checks of loom_train_settings_validate. On
 * failure writes the offending field's name (a table name, or a group such
 * as "optimizer") and the reason, and returns the error code.
 */
int settings_check(const loom_train_settings *s, char *field, size_t field_size, char *why, size_t why_size);

/* Points csv.label_name and csv.features at the owned copies. */
void settings_fix_csv_pointers(loom_train_settings *s);
/* 0 when the field's choice has it, else the reason ("applies to sgd,
 * rmsprop only, not to adam") and an error code. */
int settings_field_check_applies(const loom_train_settings *s, const settings_field *f, char *why, size_t size);
