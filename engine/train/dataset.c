/*
 * In-memory datasets: allocation, subsets, seeded shuffles and splits,
 * normalisation and mini-batches.
 */
#include "loom/dataset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "core/rng.h"
#include "train/dataset-impl.h"

/* Salt that separates shuffling streams from the generators' streams. */
#define SHUFFLE_SALT 0x53485546464c45ull /* "SHUFFLE" */

void *dataset_alloc_array(int64_t count, size_t elem, const char *what, loom_error *err) {
  if (count < 0 || (uint64_t)count > SIZE_MAX / 2 / elem) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("%s: %lld elements is too large"), what, (long long)count);
    return NULL;
  }
  void *p = calloc((size_t)count ? (size_t)count : 1, elem);
  if (!p) loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for %lld elements"), what, (long long)count);
  return p;
}

int dataset_mul(int64_t a, int64_t b, int64_t *out, const char *what, loom_error *err) {
  if (a < 0 || b < 0 || (b != 0 && a > INT64_MAX / b))
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: %lld × %lld is too large"), what, (long long)a, (long long)b);
  *out = a * b;
  return LOOM_OK;
}

LOOM_API loom_dataset *loom_dataset_new(int64_t n, const loom_shape *input_shape, loom_target_kind kind,
                                        int64_t target_width, int64_t n_classes, loom_error *err) {
  int64_t numel = loom_shape_numel(input_shape);
  if (n < 0 || numel < 1 || target_width < 1) {
    loom_error_set(err, LOOM_ERR_INVALID,
                   _("dataset: need n >= 0, a non-empty input shape and target width >= 1 (n %lld, input numel "
                     "%lld, target width %lld)"),
                   (long long)n, (long long)numel, (long long)target_width);
    return NULL;
  }
  if (kind == LOOM_TARGET_CLASS ? (n_classes < 1 || n_classes > INT32_MAX) : n_classes != 0) {
    loom_error_set(err, LOOM_ERR_INVALID, _("dataset: %lld classes for %s targets"), (long long)n_classes,
                   kind == LOOM_TARGET_CLASS ? "class" : "vector");
    return NULL;
  }
  int64_t n_in, n_t;
  if (dataset_mul(n, numel, &n_in, "dataset inputs", err) || dataset_mul(n, target_width, &n_t, "dataset targets", err))
    return NULL;
  loom_dataset *ds = calloc(1, sizeof *ds);
  if (!ds) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory"));
    return NULL;
  }
  ds->n = n;
  ds->input_shape = *input_shape;
  ds->input_numel = numel;
  ds->target_kind = kind;
  ds->target_width = target_width;
  ds->n_classes = n_classes;
  ds->inputs = dataset_alloc_array(n_in, sizeof(float), "dataset inputs", err);
  if (ds->inputs) {
    if (kind == LOOM_TARGET_CLASS)
      ds->labels = dataset_alloc_array(n_t, sizeof(int32_t), "dataset labels", err);
    else
      ds->targets = dataset_alloc_array(n_t, sizeof(float), "dataset targets", err);
  }
  if (!ds->inputs || (!ds->labels && !ds->targets)) {
    loom_dataset_free(ds);
    return NULL;
  }
  return ds;
}

static void free_class_names(loom_dataset *ds) {
  if (!ds->class_names) return;
  for (int64_t c = 0; c < ds->n_classes; c++) free(ds->class_names[c]);
  free(ds->class_names);
  ds->class_names = NULL;
}

LOOM_API void loom_dataset_free(loom_dataset *ds) {
  if (!ds) return;
  free(ds->inputs);
  free(ds->labels);
  free(ds->targets);
  free(ds->head_mask);
  free_class_names(ds);
  free(ds);
}

LOOM_API int loom_dataset_set_head_mask(loom_dataset *ds, const uint8_t *mask, loom_error *err) {
  if (!ds) return loom_error_set(err, LOOM_ERR_INVALID, _("no dataset given"));
  if (mask && ds->target_kind != LOOM_TARGET_CLASS)
    return loom_error_set(err, LOOM_ERR_INVALID, _("dataset: a head mask needs class targets, not target vectors"));
  uint8_t *copy = NULL;
  if (mask) {
    int64_t count;
    if (dataset_mul(ds->n, ds->target_width, &count, "dataset head mask", err)) return LOOM_ERR_NOMEM;
    if (!(copy = dataset_alloc_array(count, 1, "dataset head mask", err))) return LOOM_ERR_NOMEM;
    memcpy(copy, mask, (size_t)count);
  }
  free(ds->head_mask);
  ds->head_mask = copy;
  return LOOM_OK;
}

int dataset_copy_class_names(loom_dataset *dst, char *const *names, loom_error *err) {
  if (!names) return LOOM_OK;
  dst->class_names = calloc((size_t)dst->n_classes, sizeof *dst->class_names);
  if (!dst->class_names) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory"));
  for (int64_t c = 0; c < dst->n_classes; c++)
    if (!(dst->class_names[c] = strdup(names[c]))) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory"));
  return LOOM_OK;
}

LOOM_API loom_dataset *loom_dataset_subset(const loom_dataset *ds, const int64_t *indices, int64_t count,
                                           loom_error *err) {
  for (int64_t i = 0; i < count; i++)
    if (indices[i] < 0 || indices[i] >= ds->n) {
      loom_error_set(err, LOOM_ERR_RANGE, _("dataset subset: index %lld (entry %lld) outside [0, %lld)"),
                     (long long)indices[i], (long long)i, (long long)ds->n);
      return NULL;
    }
  loom_dataset *out =
    loom_dataset_new(count, &ds->input_shape, ds->target_kind, ds->target_width, ds->n_classes, err);
  if (!out) return NULL;
  int64_t in = ds->input_numel, tw = ds->target_width;
  if (ds->head_mask && !(out->head_mask = dataset_alloc_array(count * tw, 1, "dataset head mask", err))) {
    loom_dataset_free(out);
    return NULL;
  }
  for (int64_t i = 0; i < count; i++) {
    int64_t s = indices[i];
    memcpy(out->inputs + i * in, ds->inputs + s * in, (size_t)in * sizeof(float));
    if (ds->labels) memcpy(out->labels + i * tw, ds->labels + s * tw, (size_t)tw * sizeof(int32_t));
    if (ds->targets) memcpy(out->targets + i * tw, ds->targets + s * tw, (size_t)tw * sizeof(float));
    if (ds->head_mask) memcpy(out->head_mask + i * tw, ds->head_mask + s * tw, (size_t)tw);
  }
  if (dataset_copy_class_names(out, ds->class_names, err)) {
    loom_dataset_free(out);
    return NULL;
  }
  return out;
}

LOOM_API loom_dataset *loom_dataset_clone(const loom_dataset *ds, loom_error *err) {
  int64_t *all = dataset_alloc_array(ds->n, sizeof(int64_t), "dataset clone", err);
  if (!all) return NULL;
  for (int64_t i = 0; i < ds->n; i++) all[i] = i;
  loom_dataset *out = loom_dataset_subset(ds, all, ds->n, err);
  free(all);
  return out;
}

LOOM_API int loom_dataset_validate(const loom_dataset *ds, loom_error *err) {
  if (loom_shape_numel(&ds->input_shape) != ds->input_numel)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("dataset: input shape has %lld elements, input_numel says %lld"),
                          (long long)loom_shape_numel(&ds->input_shape), (long long)ds->input_numel);
  for (int64_t s = 0; s < ds->n; s++) {
    for (int64_t k = 0; k < ds->input_numel; k++)
      if (!isfinite(ds->inputs[s * ds->input_numel + k]))
        return loom_error_set(err, LOOM_ERR_NONFINITE, _("dataset: sample %lld, input %lld is %g"), (long long)s,
                              (long long)k, (double)ds->inputs[s * ds->input_numel + k]);
    for (int64_t k = 0; k < ds->target_width; k++) {
      int64_t i = s * ds->target_width + k;
      if (ds->labels && (!ds->head_mask || ds->head_mask[i]) && (ds->labels[i] < 0 || ds->labels[i] >= ds->n_classes))
        return loom_error_set(err, LOOM_ERR_RANGE, _("dataset: sample %lld, label %lld is %d, outside [0, %lld)"),
                              (long long)s, (long long)k, (int)ds->labels[i], (long long)ds->n_classes);
      if (ds->targets && !isfinite(ds->targets[i]))
        return loom_error_set(err, LOOM_ERR_NONFINITE, _("dataset: sample %lld, target %lld is %g"), (long long)s,
                              (long long)k, (double)ds->targets[i]);
    }
  }
  return LOOM_OK;
}

LOOM_API int loom_dataset_reshape_inputs(loom_dataset *ds, const loom_shape *shape, loom_error *err) {
  if (loom_shape_numel(shape) != ds->input_numel) {
    char a[64], b[64];
    return loom_error_set(err, LOOM_ERR_SHAPE, _("dataset: cannot view inputs %s as %s (different sizes)"),
                          loom_shape_format(&ds->input_shape, a, sizeof a), loom_shape_format(shape, b, sizeof b));
  }
  ds->input_shape = *shape;
  return LOOM_OK;
}

LOOM_API int loom_dataset_labels_to_vectors(loom_dataset *ds, bool one_hot, loom_error *err) {
  if (ds->head_mask)
    return loom_error_set(err, LOOM_ERR_INVALID, _("dataset: labels with a head mask do not convert to vectors"));
  if (ds->target_kind != LOOM_TARGET_CLASS || ds->target_width != 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("dataset: only single-label class targets convert to vectors"));
  int64_t width = one_hot ? ds->n_classes : 1, total;
  if (dataset_mul(ds->n, width, &total, "dataset targets", err)) return LOOM_ERR_NOMEM;
  float *t = dataset_alloc_array(total, sizeof(float), "dataset targets", err);
  if (!t) return LOOM_ERR_NOMEM;
  for (int64_t s = 0; s < ds->n; s++) {
    if (one_hot)
      t[s * width + ds->labels[s]] = 1.0f;
    else
      t[s] = (float)ds->labels[s];
  }
  free(ds->labels);
  ds->labels = NULL;
  ds->targets = t;
  ds->target_kind = LOOM_TARGET_VECTOR;
  ds->target_width = width;
  ds->n_classes = 0;
  free_class_names(ds);
  return LOOM_OK;
}

/* ---- shuffling and splitting --------------------------------------------- */

LOOM_API void loom_permutation(int64_t n, uint64_t seed, uint64_t epoch, int64_t *perm) {
  loom_rng r;
  loom_rng_seed(&r, loom_rng_derive(loom_rng_derive(seed, SHUFFLE_SALT), epoch));
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = (int64_t)loom_rng_below(&r, (uint64_t)i + 1);
    int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

LOOM_API int loom_dataset_split(const loom_dataset *ds, double test_fraction, uint64_t seed, loom_dataset **train,
                                loom_dataset **test, loom_error *err) {
  *train = *test = NULL;
  if (!(test_fraction > 0.0 && test_fraction < 1.0))
    return loom_error_set(err, LOOM_ERR_INVALID, _("dataset split: test fraction is %g, expected a value in (0, 1)"),
                          test_fraction);
  /* ceil, but 0.1 × 30 (= 3.0000000000000004 in binary) must give 3, not 4. */
  double want = test_fraction * (double)ds->n, nearest = round(want);
  int64_t n_test = (int64_t)(fabs(want - nearest) <= 1e-9 * fmax(1.0, want) ? nearest : ceil(want));
  if (n_test < 1 || n_test >= ds->n)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("dataset split: %lld samples with test fraction %g leave an empty train or test part"),
                          (long long)ds->n, test_fraction);
  int64_t *perm = dataset_alloc_array(ds->n, sizeof(int64_t), "dataset split", err);
  if (!perm) return LOOM_ERR_NOMEM;
  /* Epoch index UINT64_MAX keeps the split's order apart from every epoch's. */
  loom_permutation(ds->n, seed, UINT64_MAX, perm);
  *test = loom_dataset_subset(ds, perm, n_test, err);
  if (*test) *train = loom_dataset_subset(ds, perm + n_test, ds->n - n_test, err);
  free(perm);
  if (!*train) {
    loom_dataset_free(*test);
    *test = NULL;
    return err ? err->code : LOOM_ERR_NOMEM;
  }
  return LOOM_OK;
}

/* ---- normalisation ------------------------------------------------------- */

static const char *const norm_names[] = {"none", "minmax", "zscore"};

LOOM_API const char *loom_norm_name(loom_norm_kind kind) {
  return (int)kind >= 0 && (int)kind < 3 ? norm_names[kind] : "unknown";
}

LOOM_API int loom_norm_from_name(const char *name, loom_norm_kind *out, loom_error *err) {
  for (int i = 0; name && i < 3; i++)
    if (strcmp(name, norm_names[i]) == 0) {
      *out = (loom_norm_kind)i;
      return LOOM_OK;
    }
  return loom_error_set(err, LOOM_ERR_INVALID, _("unknown normalization '%s' (expected none, minmax or zscore)"),
                        name ? name : "(null)");
}

LOOM_API void loom_normalizer_clear(loom_normalizer *norm) {
  free(norm->offset);
  free(norm->scale);
  memset(norm, 0, sizeof *norm);
}

LOOM_API int loom_normalizer_fit(const loom_dataset *train, loom_norm_kind kind, loom_normalizer *out,
                                 loom_error *err) {
  memset(out, 0, sizeof *out);
  if ((int)kind < 0 || (int)kind > 2)
    return loom_error_set(err, LOOM_ERR_INVALID, _("unknown normalization kind %d"), (int)kind);
  if (kind != LOOM_NORM_NONE && train->n < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("normalization: the train split is empty"));
  int64_t f = train->input_numel;
  out->kind = kind;
  out->n_features = f;
  out->offset = dataset_alloc_array(f, sizeof(double), "normalization", err);
  out->scale = out->offset ? dataset_alloc_array(f, sizeof(double), "normalization", err) : NULL;
  if (!out->scale) {
    loom_normalizer_clear(out);
    return LOOM_ERR_NOMEM;
  }
  for (int64_t k = 0; k < f; k++) {
    double offset = 0.0, spread = 1.0;
    if (kind == LOOM_NORM_MINMAX) {
      double lo = INFINITY, hi = -INFINITY;
      for (int64_t s = 0; s < train->n; s++) {
        double v = train->inputs[s * f + k];
        lo = fmin(lo, v);
        hi = fmax(hi, v);
      }
      offset = lo;
      spread = hi - lo;
    } else if (kind == LOOM_NORM_ZSCORE) {
      double sum = 0.0, sq = 0.0;
      for (int64_t s = 0; s < train->n; s++) sum += train->inputs[s * f + k];
      double mean = sum / (double)train->n;
      for (int64_t s = 0; s < train->n; s++) {
        double d = train->inputs[s * f + k] - mean;
        sq += d * d;
      }
      offset = mean;
      spread = sqrt(sq / (double)train->n);
    }
    out->offset[k] = offset;
    /* A constant feature carries no information; scale 1 maps it to 0. */
    out->scale[k] = spread > 0.0 ? 1.0 / spread : 1.0;
  }
  return LOOM_OK;
}

LOOM_API int loom_normalizer_apply(const loom_normalizer *norm, loom_dataset *ds, loom_error *err) {
  if (norm->n_features != ds->input_numel)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("normalization fitted on %lld features, dataset has %lld"),
                          (long long)norm->n_features, (long long)ds->input_numel);
  if (norm->kind == LOOM_NORM_NONE) return LOOM_OK;
  int64_t f = ds->input_numel;
  for (int64_t s = 0; s < ds->n; s++)
    for (int64_t k = 0; k < f; k++) {
      float *v = &ds->inputs[s * f + k];
      *v = (float)(((double)*v - norm->offset[k]) * norm->scale[k]);
    }
  return LOOM_OK;
}

/* ---- mini-batches -------------------------------------------------------- */

struct loom_batcher {
  const loom_dataset *ds;
  int64_t batch_size;
  bool shuffle, drop_last;
  uint64_t seed;
  int64_t *order;
  float *inputs;
  int32_t *labels;
  float *targets;
  uint8_t *head_mask;
};

LOOM_API void loom_batcher_free(loom_batcher *b) {
  if (!b) return;
  free(b->order);
  free(b->inputs);
  free(b->labels);
  free(b->targets);
  free(b->head_mask);
  free(b);
}

LOOM_API loom_batcher *loom_batcher_new(const loom_dataset *ds, int64_t batch_size, bool shuffle, bool drop_last,
                                        uint64_t seed, loom_error *err) {
  if (batch_size < 1 || ds->n < 1 || (drop_last && batch_size > ds->n)) {
    loom_error_set(err, LOOM_ERR_INVALID, _("batches: batch size %lld over %lld samples%s gives no batch"),
                   (long long)batch_size, (long long)ds->n, drop_last ? _(" (dropping the last)") : "");
    return NULL;
  }
  if (batch_size > ds->n) batch_size = ds->n;
  loom_batcher *b = calloc(1, sizeof *b);
  if (!b) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory"));
    return NULL;
  }
  *b = (loom_batcher){.ds = ds, .batch_size = batch_size, .shuffle = shuffle, .drop_last = drop_last, .seed = seed};
  int64_t n_in, n_t;
  bool ok = !dataset_mul(batch_size, ds->input_numel, &n_in, "batch inputs", err) &&
            !dataset_mul(batch_size, ds->target_width, &n_t, "batch targets", err) &&
            (b->order = dataset_alloc_array(ds->n, sizeof(int64_t), "batch order", err)) &&
            (b->inputs = dataset_alloc_array(n_in, sizeof(float), "batch inputs", err)) &&
            (ds->labels ? (b->labels = dataset_alloc_array(n_t, sizeof(int32_t), "batch labels", err)) != NULL
                        : (b->targets = dataset_alloc_array(n_t, sizeof(float), "batch targets", err)) != NULL) &&
            (!ds->head_mask || (b->head_mask = dataset_alloc_array(n_t, 1, "batch head mask", err)) != NULL);
  if (!ok) {
    loom_batcher_free(b);
    return NULL;
  }
  loom_batcher_set_epoch(b, 0);
  return b;
}

LOOM_API int64_t loom_batcher_n_batches(const loom_batcher *b) {
  int64_t n = b->ds->n;
  return b->drop_last ? n / b->batch_size : (n + b->batch_size - 1) / b->batch_size;
}

LOOM_API void loom_batcher_set_epoch(loom_batcher *b, uint64_t epoch) {
  if (b->shuffle)
    loom_permutation(b->ds->n, b->seed, epoch, b->order);
  else
    for (int64_t i = 0; i < b->ds->n; i++) b->order[i] = i;
}

LOOM_API int loom_batcher_get(loom_batcher *b, int64_t index, loom_batch *out, loom_error *err) {
  int64_t n_batches = loom_batcher_n_batches(b);
  if (index < 0 || index >= n_batches)
    return loom_error_set(err, LOOM_ERR_RANGE, _("batches: batch %lld outside [0, %lld)"), (long long)index,
                          (long long)n_batches);
  const loom_dataset *ds = b->ds;
  int64_t start = index * b->batch_size, size = ds->n - start < b->batch_size ? ds->n - start : b->batch_size;
  int64_t in = ds->input_numel, tw = ds->target_width;
  for (int64_t i = 0; i < size; i++) {
    int64_t s = b->order[start + i];
    memcpy(b->inputs + i * in, ds->inputs + s * in, (size_t)in * sizeof(float));
    if (b->labels) memcpy(b->labels + i * tw, ds->labels + s * tw, (size_t)tw * sizeof(int32_t));
    if (b->targets) memcpy(b->targets + i * tw, ds->targets + s * tw, (size_t)tw * sizeof(float));
    if (b->head_mask) memcpy(b->head_mask + i * tw, ds->head_mask + s * tw, (size_t)tw);
  }
  *out = (loom_batch){
    .size = size, .inputs = b->inputs, .labels = b->labels, .targets = b->targets, .head_mask = b->head_mask};
  return LOOM_OK;
}
