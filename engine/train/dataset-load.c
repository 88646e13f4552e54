/*
 * Datasets from files: the 8×8 digits (data/datasets/optdigits-8x8.csv.gz,
 * see data/datasets/README.md) and pairs of .npy arrays.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "loom/dataset.h"
#include "loom/npy.h"
#include "train/dataset-impl.h"

#define DIGITS_PIXELS 64
#define DIGITS_MAX_VALUE 16
#define DIGITS_CLASSES 10
#define NPY_MAX_CLASSES 1000000

LOOM_API loom_dataset *loom_dataset_load_digits(const char *path, bool image_shape, loom_error *err) {
  loom_csv_options o = loom_csv_options_default();
  o.header = LOOM_CSV_HEADER_NO;
  o.label_index = -1; /* the column count is checked below, with a clearer message */
  int64_t *lines = NULL;
  loom_dataset *ds = dataset_read_csv(path, &o, &lines, err);
  if (!ds) return NULL;
  int rc = LOOM_OK;
  if (ds->input_numel != DIGITS_PIXELS)
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: %lld columns, expected %d (64 pixels, then the label)"), path,
                        (long long)ds->input_numel + 1, DIGITS_PIXELS + 1);
  for (int64_t s = 0; !rc && s < ds->n; s++) {
    for (int64_t k = 0; !rc && k < DIGITS_PIXELS; k++) {
      float v = ds->inputs[s * DIGITS_PIXELS + k];
      if (!(v >= 0.0f && v <= DIGITS_MAX_VALUE && v == floorf(v)))
        rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s:%lld: column %lld: pixel value %g is not an integer 0..16"),
                            path, (long long)lines[s], (long long)k + 1, (double)v);
      ds->inputs[s * DIGITS_PIXELS + k] = v / (float)DIGITS_MAX_VALUE;
    }
    if (!rc && ds->labels[s] >= DIGITS_CLASSES)
      rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s:%lld: label %d is not a digit 0..9"), path,
                          (long long)lines[s], (int)ds->labels[s]);
  }
  free(lines);
  loom_shape shape = image_shape ? loom_shape_make(3, (int64_t[]){1, 8, 8}) : loom_shape_1d(DIGITS_PIXELS);
  if (!rc) {
    ds->n_classes = DIGITS_CLASSES; /* even if a sample file lacks some digit */
    rc = loom_dataset_reshape_inputs(ds, &shape, err);
  }
  if (rc) {
    loom_dataset_free(ds);
    return NULL;
  }
  return ds;
}

static char *npy_shape_text(const loom_npy *a, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "(");
  for (int i = 0; i < a->ndim && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)a->shape[i]);
  if (used < size) snprintf(buf + used, size - used, a->ndim == 1 ? ",)" : ")");
  return buf;
}

static int check_arrays(const loom_npy *x, const loom_npy *y, const char *xpath, const char *ypath,
                        loom_error *err) {
  char a[96], b[96];
  if (x->ndim < 2 || x->ndim > 1 + LOOM_MAX_DIMS)
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: inputs have shape %s; expected (samples, ...) with 1 to %d dimensions per sample"),
                          xpath, npy_shape_text(x, a, sizeof a), LOOM_MAX_DIMS);
  if (y->ndim < 1 || y->ndim > 2)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: targets have shape %s; expected (samples,) or (samples, k)"),
                          ypath, npy_shape_text(y, b, sizeof b));
  if (x->shape[0] != y->shape[0])
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s has %lld samples %s but %s has %lld %s; the first dimensions must agree"), xpath,
                          (long long)x->shape[0], npy_shape_text(x, a, sizeof a), ypath, (long long)y->shape[0],
                          npy_shape_text(y, b, sizeof b));
  if (x->shape[0] < 1 || loom_npy_numel(x) < 1 || loom_npy_numel(y) < 1)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s, %s: no samples (shapes %s and %s)"), xpath, ypath,
                          npy_shape_text(x, a, sizeof a), npy_shape_text(y, b, sizeof b));
  return LOOM_OK;
}

static int fill_from_npy(loom_dataset *ds, const loom_npy *x, const loom_npy *y, const char *xpath,
                         const char *ypath, loom_error *err) {
  int64_t n_in = ds->n * ds->input_numel, n_t = ds->n * ds->target_width;
  for (int64_t i = 0; i < n_in; i++) {
    if (!isfinite(x->data[i]))
      return loom_error_set(err, LOOM_ERR_NONFINITE, _("%s: sample %lld, element %lld is %g"), xpath,
                            (long long)(i / ds->input_numel), (long long)(i % ds->input_numel), (double)x->data[i]);
  }
  memcpy(ds->inputs, x->data, (size_t)n_in * sizeof(float));
  if (ds->target_kind == LOOM_TARGET_VECTOR) {
    for (int64_t i = 0; i < n_t; i++)
      if (!isfinite(y->data[i]))
        return loom_error_set(err, LOOM_ERR_NONFINITE, _("%s: sample %lld, element %lld is %g"), ypath,
                              (long long)(i / ds->target_width), (long long)(i % ds->target_width),
                              (double)y->data[i]);
    memcpy(ds->targets, y->data, (size_t)n_t * sizeof(float));
    return LOOM_OK;
  }
  int64_t max_label = 0;
  for (int64_t i = 0; i < n_t; i++) {
    float v = y->data[i];
    if (!(v >= 0.0f && v < (float)NPY_MAX_CLASSES && v == floorf(v)))
      return loom_error_set(err, LOOM_ERR_FORMAT,
                            _("%s: sample %lld, element %lld is %g; expected a class index, an integer 0..%d"), ypath,
                            (long long)(i / ds->target_width), (long long)(i % ds->target_width), (double)v,
                            NPY_MAX_CLASSES - 1);
    ds->labels[i] = (int32_t)v;
    if (ds->labels[i] > max_label) max_label = ds->labels[i];
  }
  ds->n_classes = max_label + 1;
  return LOOM_OK;
}

LOOM_API loom_dataset *loom_dataset_load_npy(const char *inputs_path, const char *targets_path,
                                             loom_target_kind kind, loom_error *err) {
  if (kind != LOOM_TARGET_CLASS && kind != LOOM_TARGET_VECTOR) {
    loom_error_set(err, LOOM_ERR_INVALID, _("unknown target kind %d"), (int)kind);
    return NULL;
  }
  loom_npy x = {0}, y = {0};
  loom_dataset *ds = NULL;
  if (loom_npy_read(inputs_path, &x, err) || loom_npy_read(targets_path, &y, err) ||
      check_arrays(&x, &y, inputs_path, targets_path, err))
    goto done;
  loom_shape in = loom_shape_make(x.ndim - 1, x.shape + 1);
  int64_t width = y.ndim == 2 ? y.shape[1] : 1;
  ds = loom_dataset_new(x.shape[0], &in, kind, width, kind == LOOM_TARGET_CLASS ? 1 : 0, err);
  if (ds && fill_from_npy(ds, &x, &y, inputs_path, targets_path, err)) {
    loom_dataset_free(ds);
    ds = NULL;
  }
done:
  loom_npy_clear(&x);
  loom_npy_clear(&y);
  return ds;
}
