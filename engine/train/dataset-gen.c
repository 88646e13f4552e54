/*
 * Synthetic datasets for teaching and tests. Each generator draws from its
 * own stream, derived from (seed, generator), in a fixed order, so a seed
 * reproduces the data bit for bit. `noise` is the standard deviation of
 * Gaussian noise added to every input value (it must be finite and >= 0).
 */
#include <math.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "core/rng.h"
#include "loom/dataset.h"
#include "train/dataset-impl.h"

enum { GEN_SPIRAL = 1, GEN_XOR, GEN_CIRCLES, GEN_CLUSTERS, GEN_SINE, GEN_COPY };

static int check_common(const char *gen, int64_t n, double noise, loom_error *err) {
  if (n < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: the number of samples is %lld, expected at least 1"), gen,
                          (long long)n);
  if (!(noise >= 0.0 && isfinite(noise)))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: noise is %g, expected a finite value >= 0"), gen, noise);
  return LOOM_OK;
}

static int check_count(const char *gen, const char *name, int64_t v, int64_t lo, int64_t hi, loom_error *err) {
  if (v < lo || v > hi)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: %s is %lld, expected %lld to %lld"), gen, name, (long long)v,
                          (long long)lo, (long long)hi);
  return LOOM_OK;
}

static loom_dataset *new_points(int64_t n, int64_t dims, int64_t classes, loom_error *err) {
  loom_shape in = loom_shape_1d(dims);
  return loom_dataset_new(n, &in, LOOM_TARGET_CLASS, 1, classes, err);
}

static void seed_stream(loom_rng *r, uint64_t seed, int generator) {
  loom_rng_seed(r, loom_rng_derive(seed, (uint64_t)generator));
}

LOOM_API loom_dataset *loom_gen_spiral(int64_t n_per_class, int64_t classes, double noise, uint64_t seed,
                                       loom_error *err) {
  if (check_common("spiral", n_per_class, noise, err) ||
      check_count("spiral", "classes", classes, 2, 1000, err) ||
      check_count("spiral", "n_per_class", n_per_class, 1, INT64_MAX / classes, err))
    return NULL;
  loom_dataset *ds = new_points(n_per_class * classes, 2, classes, err);
  if (!ds) return NULL;
  loom_rng r;
  seed_stream(&r, seed, GEN_SPIRAL);
  for (int64_t c = 0; c < classes; c++)
    for (int64_t i = 0; i < n_per_class; i++) {
      int64_t s = c * n_per_class + i;
      /* Radius grows from 0 to 1 along the arm; each arm turns 4 radians. */
      double radius = n_per_class > 1 ? (double)i / (double)(n_per_class - 1) : 1.0;
      double angle = 2.0 * M_PI * (double)c / (double)classes + 4.0 * radius;
      ds->inputs[2 * s] = (float)(radius * sin(angle) + noise * loom_rng_normal(&r));
      ds->inputs[2 * s + 1] = (float)(radius * cos(angle) + noise * loom_rng_normal(&r));
      ds->labels[s] = (int32_t)c;
    }
  return ds;
}

LOOM_API loom_dataset *loom_gen_xor(int64_t n, double noise, uint64_t seed, loom_error *err) {
  if (check_common("xor", n, noise, err)) return NULL;
  loom_dataset *ds = new_points(n, 2, 2, err);
  if (!ds) return NULL;
  loom_rng r;
  seed_stream(&r, seed, GEN_XOR);
  for (int64_t s = 0; s < n; s++) {
    double x = loom_rng_uniform_range(&r, -1.0, 1.0), y = loom_rng_uniform_range(&r, -1.0, 1.0);
    ds->labels[s] = (x > 0.0) != (y > 0.0);
    ds->inputs[2 * s] = (float)(x + noise * loom_rng_normal(&r));
    ds->inputs[2 * s + 1] = (float)(y + noise * loom_rng_normal(&r));
  }
  return ds;
}

LOOM_API loom_dataset *loom_gen_circles(int64_t n, double factor, double noise, uint64_t seed, loom_error *err) {
  if (check_common("circles", n, noise, err)) return NULL;
  if (!(factor > 0.0 && factor < 1.0)) {
    loom_error_set(err, LOOM_ERR_INVALID, _("%s: factor is %g, expected a value in (0, 1)"), "circles", factor);
    return NULL;
  }
  loom_dataset *ds = new_points(n, 2, 2, err);
  if (!ds) return NULL;
  loom_rng r;
  seed_stream(&r, seed, GEN_CIRCLES);
  for (int64_t s = 0; s < n; s++) {
    int inner = (int)(s % 2);
    double radius = inner ? factor : 1.0, angle = loom_rng_uniform_range(&r, 0.0, 2.0 * M_PI);
    ds->labels[s] = inner;
    ds->inputs[2 * s] = (float)(radius * cos(angle) + noise * loom_rng_normal(&r));
    ds->inputs[2 * s + 1] = (float)(radius * sin(angle) + noise * loom_rng_normal(&r));
  }
  return ds;
}

LOOM_API loom_dataset *loom_gen_clusters(int64_t n, int64_t classes, int64_t dims, double noise, uint64_t seed,
                                         loom_error *err) {
  if (check_common("clusters", n, noise, err) || check_count("clusters", "classes", classes, 1, 100000, err) ||
      check_count("clusters", "dims", dims, 1, 100000, err))
    return NULL;
  loom_dataset *ds = new_points(n, dims, classes, err);
  if (!ds) return NULL;
  double *centres = dataset_alloc_array(classes * dims, sizeof(double), "clusters", err);
  if (!centres) {
    loom_dataset_free(ds);
    return NULL;
  }
  loom_rng r;
  seed_stream(&r, seed, GEN_CLUSTERS);
  for (int64_t k = 0; k < classes * dims; k++) centres[k] = loom_rng_uniform_range(&r, -1.0, 1.0);
  for (int64_t s = 0; s < n; s++) {
    int64_t c = s % classes; /* balanced classes */
    ds->labels[s] = (int32_t)c;
    for (int64_t d = 0; d < dims; d++)
      ds->inputs[s * dims + d] = (float)(centres[c * dims + d] + noise * loom_rng_normal(&r));
  }
  free(centres);
  return ds;
}

LOOM_API loom_dataset *loom_gen_sine(int64_t n, int64_t window, double noise, uint64_t seed, loom_error *err) {
  if (check_common("sine", n, noise, err) || check_count("sine", "window", window, 1, 1000000, err)) return NULL;
  loom_shape in = loom_shape_make(2, (int64_t[]){window, 1});
  loom_dataset *ds = loom_dataset_new(n, &in, LOOM_TARGET_VECTOR, 1, 0, err);
  if (!ds) return NULL;
  loom_rng r;
  seed_stream(&r, seed, GEN_SINE);
  for (int64_t s = 0; s < n; s++) {
    double omega = loom_rng_uniform_range(&r, 0.1, 0.5), phase = loom_rng_uniform_range(&r, 0.0, 2.0 * M_PI);
    for (int64_t t = 0; t < window; t++)
      ds->inputs[s * window + t] = (float)(sin(omega * (double)t + phase) + noise * loom_rng_normal(&r));
    ds->targets[s] = (float)sin(omega * (double)window + phase);
  }
  return ds;
}

LOOM_API loom_dataset *loom_gen_copy(int64_t n, int64_t length, int64_t symbols, double noise, uint64_t seed,
                                     loom_error *err) {
  if (check_common("copy", n, noise, err) || check_count("copy", "length", length, 1, 100000, err) ||
      check_count("copy", "symbols", symbols, 1, 100000, err))
    return NULL;
  int64_t steps = 2 * length + 1, vocab = symbols + 2;
  int64_t blank = symbols, delimiter = symbols + 1;
  loom_shape in = loom_shape_make(2, (int64_t[]){steps, vocab});
  loom_dataset *ds = loom_dataset_new(n, &in, LOOM_TARGET_CLASS, length, symbols, err);
  if (!ds) return NULL;
  loom_rng r;
  seed_stream(&r, seed, GEN_COPY);
  for (int64_t s = 0; s < n; s++) {
    float *x = ds->inputs + s * steps * vocab;
    for (int64_t t = 0; t < length; t++) {
      int64_t sym = (int64_t)loom_rng_below(&r, (uint64_t)symbols);
      ds->labels[s * length + t] = (int32_t)sym;
      x[t * vocab + sym] = 1.0f;
    }
    x[length * vocab + delimiter] = 1.0f;
    for (int64_t t = length + 1; t < steps; t++) x[t * vocab + blank] = 1.0f;
    if (noise > 0.0)
      for (int64_t k = 0; k < steps * vocab; k++) x[k] = (float)((double)x[k] + noise * loom_rng_normal(&r));
  }
  return ds;
}
