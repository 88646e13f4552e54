/*
 * The hostile-file suite's case list (test-hostile-files.c builds it, the
 * generators in hostile-*.c fill it): each case is a file's bytes, the
 * reader to feed it to, and a substring its error message must contain.
 */
#pragma once
#include <glib.h>
#include <stdint.h>

typedef enum { HOSTILE_SAFETENSORS, HOSTILE_JSON, HOSTILE_NPY, HOSTILE_CSV } hostile_kind;

typedef struct {
  hostile_kind kind;
  char *name;
  GBytes *bytes;
  char *expect;
} hostile_case;

/* Appends a case (copies data). */
void hostile_add(GPtrArray *cases, hostile_kind kind, const char *name, const void *data, size_t len,
                 const char *expect);

void hostile_safetensors_cases(GPtrArray *cases);
void hostile_model_cases(GPtrArray *cases);
void hostile_npy_csv_cases(GPtrArray *cases);
