/* Internal helpers shared by the dataset files of engine/train/. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "loom/dataset.h"

/* calloc of count elements after an overflow check; error names `what`. */
void *dataset_alloc_array(int64_t count, size_t elem, const char *what, loom_error *err);
/* *out = a·b, or LOOM_ERR_NOMEM naming `what` when it overflows. */
int dataset_mul(int64_t a, int64_t b, int64_t *out, const char *what, loom_error *err);
/* Deep-copies dst->n_classes names into dst (names may be NULL). */
int dataset_copy_class_names(loom_dataset *dst, char *const *names, loom_error *err);

/* Reads a CSV file (plain or gzip) into a dataset; when `lines` is not NULL
 * it receives (malloc'd) the 1-based file line of every sample, for callers
 * that check values further and must name the line. */
loom_dataset *dataset_read_csv(const char *path, const loom_csv_options *opts, int64_t **lines, loom_error *err);
