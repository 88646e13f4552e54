/*
 * Snapshots: the signature of every occupied slot, copied out of a network
 * so that comparisons never touch the network again (docs/dna.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "dna/dna-internal.h"
#include "loom/layer.h"
#include "loom/weights.h"

/* A slot's weights are gathered into one buffer (plus twice that for the
 * sort); the bound keeps those sizes far from overflow and refuses absurd
 * containers before allocating. */
#define DNA_MAX_SLOT_VALUES ((int64_t)1 << 31)

static void sig_clear(dna_sig *s) {
  free(s->tensors);
  free(s->vec);
}

LOOM_API void loom_dna_snapshot_free(loom_dna_snapshot *s) {
  if (!s) return;
  for (int64_t i = 0; i < s->n; i++) sig_clear(&s->sigs[i]);
  free(s->sigs);
  free(s);
}

static int where_error(loom_error *err, loom_coord at, const char *path) {
  char c[64];
  loom_coord_format(at, c, sizeof c);
  if (path) loom_error_prefix(err, _("DNA of the layer at %s, tensor %s"), c, path);
  else loom_error_prefix(err, _("DNA of the layer at %s"), c);
  return err ? err->code : LOOM_ERR_INVALID;
}

/* Counts the tensors and values of a layer and records each tensor's shape
 * and path, checking the total before anything large is allocated. */
static int sig_layout(dna_sig *s, loom_layer *layer, loom_error *err) {
  int n = loom_layer_n_weights(layer);
  s->info.n_tensors = n;
  if (n == 0) return LOOM_OK;
  s->tensors = calloc((size_t)n, sizeof *s->tensors);
  if (!s->tensors) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory describing %d tensors"), n);
  int64_t total = 0;
  for (int k = 0; k < n; k++) {
    const loom_weights *w = loom_layer_weights(layer, k);
    dna_tensor *t = &s->tensors[k];
    loom_layer_weights_path(layer, k, t->path, sizeof t->path);
    t->rows = w ? loom_weights_rows(w) : 0;
    t->cols = w ? loom_weights_cols(w) : 0;
    total += t->rows * t->cols;
    if (total > DNA_MAX_SLOT_VALUES)
      return loom_error_set(err, LOOM_ERR_NOMEM, _("the layer has more than %lld weights, too many for a signature"),
                            (long long)DNA_MAX_SLOT_VALUES);
  }
  s->info.values = total;
  return LOOM_OK;
}

/* Fills vec (when kept), the norms and the profile from the gathered,
 * dequantized weights `v`. */
static int sig_numbers(dna_sig *s, float *v, bool keep_exact, loom_error *err) {
  int64_t n = s->info.values;
  double ss = dna_dot(v, v, n);
  s->zero = ss == 0;
  float *scratch = malloc((size_t)n * 2 * sizeof(float));
  if (!scratch) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory sorting %lld weights"), (long long)n);
  dna_quantiles(v, n, scratch, s->quant);
  free(scratch);
  dna_map(v, s->tensors[0].rows, s->tensors[0].cols, s->map);
  s->quant_self = dna_dot(s->quant, s->quant, LOOM_DNA_QUANTILES);
  s->map_self = dna_dot(s->map, s->map, DNA_MAP_CELLS);
  if (!keep_exact) return LOOM_OK;
  double inv = s->zero ? 0 : 1.0 / sqrt(ss);
  for (int64_t i = 0; i < n; i++) v[i] = (float)(v[i] * inv);
  s->vec = v; /* the gather buffer becomes the signature */
  s->vec_self = dna_dot(v, v, n);
  s->info.exact = true;
  return LOOM_OK;
}

/* Reads one slot. *budget is what is left for exact signatures. */
static int sig_fill(dna_sig *s, const loom_net *net, loom_coord at, size_t *budget, loom_error *err) {
  loom_layer *layer = loom_net_layer_at(net, at);
  s->info.at = at;
  s->info.type = loom_layer_get_type(layer);
  s->info.dtype = loom_layer_get_dtype(layer);
  loom_shape out = loom_layer_out_shape(layer);
  s->out_numel = loom_shape_numel(&out);
  if (sig_layout(s, layer, err)) return where_error(err, at, NULL);
  int64_t n = s->info.values;
  if (n == 0) return LOOM_OK; /* a presence marker */
  float *v = malloc((size_t)n * sizeof(float));
  if (!v) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory copying %lld weights"), (long long)n);
    return where_error(err, at, NULL);
  }
  /* Every tensor in loom_layer_weights order (the layer's own, then each
   * child's, then the gate's), dequantized at the dtype it computes with. */
  int64_t off = 0;
  for (int k = 0; k < s->info.n_tensors; k++) {
    /* Written straight into the snapshot: at rest nothing is left resident. */
    if (loom_weights_values_into(loom_layer_weights(layer, k), v + off, err)) {
      free(v);
      return where_error(err, at, s->tensors[k].path);
    }
    off += s->tensors[k].rows * s->tensors[k].cols;
  }
  size_t need = (size_t)n * sizeof(float);
  bool keep = need <= *budget;
  if (sig_numbers(s, v, keep, err)) {
    free(v);
    return where_error(err, at, NULL);
  }
  if (keep) *budget -= need;
  else free(v);
  return LOOM_OK;
}

LOOM_API loom_dna_snapshot *loom_dna_snapshot_new_ex(const loom_net *net, int64_t step, size_t max_bytes,
                                                     loom_error *err) {
  if (!net) {
    loom_error_set(err, LOOM_ERR_INVALID, _("no network to take the DNA of"));
    return NULL;
  }
  int64_t n = loom_net_n_layers(net);
  loom_dna_snapshot *s = calloc(1, sizeof *s);
  if (!s || (n > 0 && !(s->sigs = calloc((size_t)n, sizeof *s->sigs)))) {
    free(s);
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory taking the DNA of %lld layers"), (long long)n);
    return NULL;
  }
  s->step = step;
  size_t budget = max_bytes;
  s->bytes = sizeof *s + (size_t)n * sizeof *s->sigs;
  for (int64_t i = 0; i < n; i++) {
    dna_sig *sig = &s->sigs[i];
    s->n = i + 1; /* so a failure frees what was filled */
    if (sig_fill(sig, net, loom_net_layer_coord(net, i), &budget, err)) {
      loom_dna_snapshot_free(s);
      return NULL;
    }
    s->bytes += (size_t)sig->info.n_tensors * sizeof(dna_tensor);
    if (sig->vec) s->bytes += (size_t)sig->info.values * sizeof(float);
  }
  return s;
}

LOOM_API loom_dna_snapshot *loom_dna_snapshot_new(const loom_net *net, int64_t step, loom_error *err) {
  return loom_dna_snapshot_new_ex(net, step, LOOM_DNA_DEFAULT_MAX_BYTES, err);
}

LOOM_API int64_t loom_dna_snapshot_step(const loom_dna_snapshot *s) { return s ? s->step : 0; }
LOOM_API int64_t loom_dna_snapshot_n_slots(const loom_dna_snapshot *s) { return s ? s->n : 0; }
LOOM_API size_t loom_dna_snapshot_bytes(const loom_dna_snapshot *s) { return s ? s->bytes : 0; }

LOOM_API loom_dna_slot loom_dna_snapshot_slot(const loom_dna_snapshot *s, int64_t i) {
  if (!s || i < 0 || i >= s->n) return (loom_dna_slot){0};
  return s->sigs[i].info;
}

LOOM_API const char *loom_dna_snapshot_tensor_path(const loom_dna_snapshot *s, int64_t i, int k) {
  if (!s || i < 0 || i >= s->n || k < 0 || k >= s->sigs[i].info.n_tensors) return NULL;
  return s->sigs[i].tensors[k].path;
}
