/*
 * kmeans: differentiable (soft) k-means with K trainable centres c_k of
 * F = last-dimension features (weight "centres", K × F, quantizable). Every
 * row x of the input (the last dimension) is assigned softly:
 *
 *     a_k = −‖x − c_k‖² / T,   p = softmax(a)
 *
 * and the output is p ([..., K], "probabilities") or the soft reconstruction
 * Σ_k p_k c_k ([..., F], "features"). Backward is exact. With g the gradient
 * at a, g = p ⊙ (dp − ⟨p, dp⟩), where dp = dy (probabilities) or
 * dp_k = ⟨dy, c_k⟩ (features):
 *
 *     dx   = −(2/T) Σ_k g_k (x − c_k)
 *     dc_k += (2/T) Σ_rows g_k (x − c_k)   [+ Σ_rows p_k dy in "features" mode]
 *
 * The centre gradients are reduced over rows in ascending order, one cluster
 * per work item, so they are bit-identical for any thread count.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "layers/registry.h"
#include "layers/softmax-rows.h"

enum { P_CLUSTERS, P_TEMPERATURE, P_OUTPUT };
enum { OUTPUT_PROBABILITIES, OUTPUT_FEATURES };
enum { W_CENTRES };

#define KMEANS_MAX 16777216.0 /* 2^24 clusters or features */

typedef struct kmeans_job {
  const float *x, *dy, *c;
  float *y, *dx, *dc;
  int64_t f, k;     /* features per row, clusters */
  int64_t rows;     /* rows in the batch */
  double inv_t;     /* 1/T */
  bool features;    /* output mode */
  double *g, *p;    /* backward: rows × K gradients at a, and probabilities */
  float *owned_c;   /* at rest (forward only: a backward has the master) the centres dequantized for
                     * this call, freed by kmeans_job_done */
  atomic_int out_of_memory;
} kmeans_job;

/* p (K doubles) = the soft assignment of row x. */
static void kmeans_assign(const kmeans_job *j, const float *x, double *p) {
  double top = -INFINITY;
  for (int64_t k = 0; k < j->k; k++) {
    const float *c = j->c + k * j->f;
    double d = 0.0;
    for (int64_t i = 0; i < j->f; i++) {
      double diff = (double)x[i] - c[i];
      d += diff * diff;
    }
    p[k] = -d * j->inv_t;
    if (p[k] > top) top = p[k];
  }
  double sum = 0.0;
  for (int64_t k = 0; k < j->k; k++) {
    p[k] = exp(p[k] - top);
    sum += p[k];
  }
  for (int64_t k = 0; k < j->k; k++) p[k] /= sum;
}

static void kmeans_forward_range(void *arg, int64_t begin, int64_t end) {
  kmeans_job *j = arg;
  double *p = malloc((size_t)(j->k + j->f) * sizeof *p);
  if (!p) {
    atomic_store(&j->out_of_memory, 1);
    return;
  }
  double *acc = p + j->k;
  for (int64_t r = begin; r < end; r++) {
    kmeans_assign(j, j->x + r * j->f, p);
    if (!j->features) {
      float *y = j->y + r * j->k;
      for (int64_t k = 0; k < j->k; k++) y[k] = (float)p[k];
      continue;
    }
    for (int64_t i = 0; i < j->f; i++) acc[i] = 0.0;
    for (int64_t k = 0; k < j->k; k++) {
      const float *c = j->c + k * j->f;
      for (int64_t i = 0; i < j->f; i++) acc[i] += p[k] * c[i];
    }
    float *y = j->y + r * j->f;
    for (int64_t i = 0; i < j->f; i++) y[i] = (float)acc[i];
  }
  free(p);
}

/* Pass 1 of backward, per row: g (and p) into the job's buffers, and dx. */
static void kmeans_backward_rows(void *arg, int64_t begin, int64_t end) {
  kmeans_job *j = arg;
  double *acc = malloc((size_t)j->f * sizeof *acc);
  if (!acc) {
    atomic_store(&j->out_of_memory, 1);
    return;
  }
  for (int64_t r = begin; r < end; r++) {
    const float *x = j->x + r * j->f;
    double *p = j->p + r * j->k, *g = j->g + r * j->k;
    kmeans_assign(j, x, p);
    double dot = 0.0;
    for (int64_t k = 0; k < j->k; k++) {
      double dp;
      if (j->features) {
        const float *c = j->c + k * j->f, *dy = j->dy + r * j->f;
        dp = 0.0;
        for (int64_t i = 0; i < j->f; i++) dp += (double)dy[i] * c[i];
      } else {
        dp = j->dy[r * j->k + k];
      }
      g[k] = dp; /* dp for now; turned into the gradient at a below */
      dot += p[k] * dp;
    }
    for (int64_t k = 0; k < j->k; k++) g[k] = p[k] * (g[k] - dot);
    if (!j->dx) continue;
    for (int64_t i = 0; i < j->f; i++) acc[i] = 0.0;
    for (int64_t k = 0; k < j->k; k++) {
      const float *c = j->c + k * j->f;
      for (int64_t i = 0; i < j->f; i++) acc[i] += g[k] * ((double)x[i] - c[i]);
    }
    float *dx = j->dx + r * j->f;
    for (int64_t i = 0; i < j->f; i++) dx[i] = (float)(-2.0 * j->inv_t * acc[i]);
  }
  free(acc);
}

/* Pass 2 of backward, per cluster: dc_k += Σ_rows (in order) of its terms. */
static void kmeans_backward_centres(void *arg, int64_t begin, int64_t end) {
  kmeans_job *j = arg;
  double *acc = malloc((size_t)j->f * sizeof *acc);
  if (!acc) {
    atomic_store(&j->out_of_memory, 1);
    return;
  }
  for (int64_t k = begin; k < end; k++) {
    const float *c = j->c + k * j->f;
    for (int64_t i = 0; i < j->f; i++) acc[i] = 0.0;
    for (int64_t r = 0; r < j->rows; r++) {
      const float *x = j->x + r * j->f;
      double gk = 2.0 * j->inv_t * j->g[r * j->k + k];
      for (int64_t i = 0; i < j->f; i++) acc[i] += gk * ((double)x[i] - c[i]);
      if (j->features) {
        const float *dy = j->dy + r * j->f;
        double pk = j->p[r * j->k + k];
        for (int64_t i = 0; i < j->f; i++) acc[i] += pk * dy[i];
      }
    }
    float *dc = j->dc + k * j->f;
    for (int64_t i = 0; i < j->f; i++) dc[i] += (float)acc[i];
  }
  free(acc);
}

static int kmeans_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  int rc = rows_check_shape(l, in, err);
  if (rc) return rc;
  int64_t f = rows_last_dim(in), k = layer_int(l, P_CLUSTERS);
  char where[128], shape[96];
  if (f > (int64_t)KMEANS_MAX)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: input %s has %lld features per row; at most %lld supported"),
                          layer_where(l, where, sizeof where), loom_shape_format(in, shape, sizeof shape),
                          (long long)f, (long long)KMEANS_MAX);
  l->out_shape = *in;
  if (layer_int(l, P_OUTPUT) == OUTPUT_PROBABILITIES) l->out_shape.d[in->rank - 1] = k;
  /* Centres start as standard normal draws: on the scale of normalised inputs. */
  return layer_weights_ensure(l, W_CENTRES, "centres", k, f, true, LAYER_INIT_NORMAL, f, seed, err);
}

static int kmeans_job_init(loom_layer *l, kmeans_job *j, int64_t batch, loom_error *err) {
  j->f = rows_last_dim(&l->in_shape);
  j->k = layer_int(l, P_CLUSTERS);
  j->rows = batch * rows_per_sample(&l->in_shape);
  j->inv_t = 1.0 / layer_float(l, P_TEMPERATURE);
  j->features = layer_int(l, P_OUTPUT) == OUTPUT_FEATURES;
  atomic_init(&j->out_of_memory, 0);
  j->c = layer_weight_values_for_call(l, W_CENTRES, &j->owned_c, err);
  return j->c ? LOOM_OK : (err ? err->code : LOOM_ERR_INVALID);
}

static int kmeans_job_done(kmeans_job *j, int rc) {
  free(j->owned_c);
  return rc;
}

static int kmeans_out_of_memory(const loom_layer *l, kmeans_job *j, loom_error *err) {
  if (!atomic_load(&j->out_of_memory)) return LOOM_OK;
  char where[128];
  return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for a row buffer of %lld values"),
                        layer_where(l, where, sizeof where), (long long)(j->k + j->f));
}

static int kmeans_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                          loom_error *err) {
  kmeans_job j = {.x = x, .y = y};
  int rc = kmeans_job_init(l, &j, batch, err);
  if (rc) return rc;
  rc = rows_check_finite(l, x, batch, rows_per_sample(&l->in_shape), j.f, NULL, 0, err);
  if (rc) return kmeans_job_done(&j, rc);
  rows_parallel(ctx, j.rows, rows_grain(j.k * j.f), kmeans_forward_range, &j);
  return kmeans_job_done(&j, kmeans_out_of_memory(l, &j, err));
}

static int kmeans_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                           float *dx, int64_t batch, loom_error *err) {
  kmeans_job j = {.x = x, .dy = dy, .dx = dx, .dc = l->grad[W_CENTRES]};
  int rc = kmeans_job_init(l, &j, batch, err);
  if (rc) return rc;
  char where[128];
  if (j.rows > 0 && (uint64_t)j.rows > SIZE_MAX / 2 / sizeof(double) / (uint64_t)j.k)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: a backward buffer of %lld rows × %lld clusters is too large"),
                          layer_where(l, where, sizeof where), (long long)j.rows, (long long)j.k);
  size_t cells = (size_t)j.rows * (size_t)j.k;
  j.g = malloc(2 * cells * sizeof *j.g);
  if (!j.g && cells > 0)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for a backward buffer of %lld rows × %lld clusters"),
                          layer_where(l, where, sizeof where), (long long)j.rows, (long long)j.k);
  j.p = j.g + cells;
  rows_parallel(ctx, j.rows, rows_grain(j.k * j.f), kmeans_backward_rows, &j);
  if (!atomic_load(&j.out_of_memory))
    rows_parallel(ctx, j.k, rows_grain(j.rows * j.f), kmeans_backward_centres, &j);
  free(j.g);
  return kmeans_out_of_memory(l, &j, err);
}

static int64_t kmeans_flops(const loom_layer *l) {
  /* Distances (3 per cluster and feature), the softmax (5 per cluster) and,
   * for features, the reconstruction (2 per cluster and feature). */
  int64_t f = rows_last_dim(&l->in_shape), k = layer_int(l, P_CLUSTERS);
  int64_t rows = l->built ? rows_per_sample(&l->in_shape) : 0;
  int64_t per_row = 3 * k * f + 5 * k + (layer_int(l, P_OUTPUT) == OUTPUT_FEATURES ? 2 * k * f : 0);
  return rows * per_row;
}

static char *kmeans_describe(const loom_layer *l, char *buf, size_t size) {
  char t[32];
  rows_format_number(layer_float(l, P_TEMPERATURE), t, sizeof t);
  const char *mode = layer_int(l, P_OUTPUT) == OUTPUT_FEATURES ? "features" : "probabilities";
  long long k = (long long)layer_int(l, P_CLUSTERS);
  if (l->built)
    /* TRANSLATORS: layer summary, e.g. "kmeans 4 clusters of 3, T=0.5, probabilities": "kmeans"
       is the layer type name, then the number of centres and their length, the temperature T
       and the output mode ("probabilities" or "features", the option's stable name). */
    snprintf(buf, size, dngettext(GETTEXT_PACKAGE, "kmeans %lld cluster of %lld, T=%s, %s",
                                  "kmeans %lld clusters of %lld, T=%s, %s", (unsigned long)k),
             k, (long long)rows_last_dim(&l->in_shape), t, mode);
  else
    /* TRANSLATORS: layer summary, e.g. "kmeans 4 clusters, T=0.5, probabilities": "kmeans" is the
       layer type name, then the number of centres, the temperature T and the output mode. */
    snprintf(buf, size, dngettext(GETTEXT_PACKAGE, "kmeans %lld cluster, T=%s, %s", "kmeans %lld clusters, T=%s, %s",
                                  (unsigned long)k),
             k, t, mode);
  return buf;
}

static bool kmeans_outputs_probabilities(const loom_layer *l) {
  return layer_int(l, P_OUTPUT) == OUTPUT_PROBABILITIES;
}

static const char *const kmeans_outputs[] = {"probabilities", "features", NULL};

static const loom_param_spec kmeans_params[] = {
  {.name = "n_clusters", .label = N_("Clusters"), .tooltip = N_("Number of trainable centres"),
   .kind = LOOM_PARAM_INT, .min = 1, .max = 65536, .def = 8},
  {.name = "temperature", .label = N_("Temperature"),
   .tooltip = N_("Squared distances are divided by this before the softmax: small values give hard assignments"),
   .kind = LOOM_PARAM_FLOAT, .min = 1e-6, .max = 1e6, .def = 1.0},
  {.name = "output", .label = N_("Output"),
   .tooltip = N_("probabilities: the soft assignment to each centre; features: the weighted mix of the centres"),
   .kind = LOOM_PARAM_ENUM, .min = 0, .max = 1, .def = OUTPUT_PROBABILITIES, .choices = kmeans_outputs},
};

const loom_layer_type loom_layer_kmeans = {
  .id = 110,
  .name = "kmeans",
  .label = N_("K-means"),
  .group = N_("Clustering"),
  .description = N_("Soft assignment of each row to trainable centres by a softmax over negative squared "
                    "distances."),
  .flags = LOOM_LAYER_WEIGHTED,
  .params = kmeans_params,
  .n_params = (int)(sizeof kmeans_params / sizeof kmeans_params[0]),
  .build = kmeans_build,
  .forward = kmeans_forward,
  .backward = kmeans_backward,
  .flops = kmeans_flops,
  .describe = kmeans_describe,
  .outputs_probabilities = kmeans_outputs_probabilities,
};
