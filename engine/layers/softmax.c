/*
 * The softmax family, part 1: softmax over the last dimension, softmax with a
 * temperature, grid softmax (one softmax per row of a rows×cols logit grid:
 * the mixture-of-experts router) and masked softmax. All four share one row
 * kernel (softmax-rows.c) and the exact Jacobian-vector product
 * dx = (1/T) · y ⊙ (dy − ⟨y, dy⟩), computed from the output alone.
 */
#include <stdio.h>
#include <string.h>

#include "core/i18n.h"
#include "layers/registry.h"
#include "layers/softmax-rows.h"

/* Forward cost per entry: compare (max), subtract, exp, add (sum), multiply. */
#define SOFTMAX_FLOPS_PER_ENTRY 5

typedef struct softmax_job {
  const float *x, *y_in, *dy; /* y_in: the forward's output, for backward */
  float *y, *dx;
  int64_t n;    /* entries per row */
  int64_t rows; /* rows per sample */
  double scale; /* 1 / temperature */
  const float *keep;
  int64_t keep_len; /* n (one mask row for all) or rows·n (one per row) */
} softmax_job;

static void softmax_forward_range(void *arg, int64_t begin, int64_t end) {
  const softmax_job *j = arg;
  for (int64_t r = begin; r < end; r++) {
    const float *keep = NULL;
    if (j->keep) keep = j->keep + (j->keep_len == j->n ? 0 : (r % j->rows) * j->n);
    softmax_row_forward(j->x + r * j->n, j->y + r * j->n, j->n, j->scale, keep);
  }
}

static void softmax_backward_range(void *arg, int64_t begin, int64_t end) {
  const softmax_job *j = arg;
  for (int64_t r = begin; r < end; r++)
    softmax_row_backward(j->y_in + r * j->n, j->dy + r * j->n, j->dx + r * j->n, j->n, j->scale);
}

static double softmax_scale(const loom_layer *l) {
  if (l->type == &loom_layer_softmax_temperature) return 1.0 / layer_float(l, 0);
  return 1.0;
}

/* The row length and rows per sample of a built layer; grid softmax uses its
 * own rows×cols split of the sample, everything else the last dimension. */
static void softmax_geometry(const loom_layer *l, int64_t *n, int64_t *rows) {
  if (l->type == &loom_layer_grid_softmax) {
    *rows = layer_int(l, 0);
    *n = layer_int(l, 1);
  } else {
    *n = rows_last_dim(&l->in_shape);
    *rows = rows_per_sample(&l->in_shape);
  }
}

/* ---- masks --------------------------------------------------------------- */

/* Validates the mask of a masked_softmax against the built shape. On success
 * *keep is the mask (NULL when no mask is set: nothing is masked). */
static int mask_get(const loom_layer *l, const float **keep, int64_t *keep_len, loom_error *err) {
  char where[128], shape[96];
  int64_t len = 0;
  const float *mask = loom_layer_get_floats(l, "mask", &len);
  int64_t n = rows_last_dim(&l->in_shape), rows = rows_per_sample(&l->in_shape);
  *keep = NULL;
  *keep_len = 0;
  if (!mask || len == 0) return LOOM_OK;
  if (len != n && len != rows * n)
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: parameter “mask” has %lld entries; expected %lld (one per entry of a row) or %lld "
                            "(one per entry of a sample %s)"),
                          layer_where(l, where, sizeof where), (long long)len, (long long)n, (long long)(rows * n),
                          loom_shape_format(&l->in_shape, shape, sizeof shape));
  for (int64_t i = 0; i < len; i++)
    if (mask[i] != 0.0f && mask[i] != 1.0f)
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("%s: parameter “mask” entry %lld is %g; expected 0 (masked) or 1 (kept)"),
                            layer_where(l, where, sizeof where), (long long)i, (double)mask[i]);
  for (int64_t r = 0; r < len / n; r++) {
    bool any = false;
    for (int64_t i = 0; i < n && !any; i++) any = mask[r * n + i] != 0.0f;
    if (!any) {
      if (len == n)
        return loom_error_set(err, LOOM_ERR_INVALID,
                              _("%s: parameter “mask” masks all %lld entries of every row; at least one entry of "
                                "each row must be kept"),
                              layer_where(l, where, sizeof where), (long long)n);
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("%s: parameter “mask” masks all %lld entries of row %lld; at least one entry of "
                              "each row must be kept"),
                            layer_where(l, where, sizeof where), (long long)n, (long long)r);
    }
  }
  *keep = mask;
  *keep_len = len;
  return LOOM_OK;
}

/* ---- build / forward / backward --------------------------------------------- */

static int softmax_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  int rc = rows_check_shape(l, in, err);
  if (rc) return rc;
  if (l->type == &loom_layer_grid_softmax) {
    char where[128], shape[96];
    int64_t rows = layer_int(l, 0), cols = layer_int(l, 1);
    if (loom_shape_numel(in) != rows * cols)
      return loom_error_set(err, LOOM_ERR_SHAPE,
                            _("%s: input %s has %lld values per sample; parameters “rows” × “cols” = %lld × %lld "
                              "expect %lld"),
                            layer_where(l, where, sizeof where), loom_shape_format(in, shape, sizeof shape),
                            (long long)loom_shape_numel(in), (long long)rows, (long long)cols,
                            (long long)(rows * cols));
  }
  l->out_shape = *in;
  if (l->type == &loom_layer_masked_softmax) {
    /* Validate a mask set before the build now, so the error surfaces early;
     * forward validates again in case the mask changed since. */
    const float *keep;
    int64_t keep_len;
    rc = mask_get(l, &keep, &keep_len, err);
    if (rc) return rc;
  }
  return LOOM_OK;
}

static int softmax_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                           loom_error *err) {
  softmax_job j = {.x = x, .y = y, .scale = softmax_scale(l)};
  softmax_geometry(l, &j.n, &j.rows);
  if (l->type == &loom_layer_masked_softmax) {
    int rc = mask_get(l, &j.keep, &j.keep_len, err);
    if (rc) return rc;
  }
  int rc = rows_check_finite(l, x, batch, j.rows, j.n, j.keep, j.keep_len, err);
  if (rc) return rc;
  rows_parallel(ctx, batch * j.rows, rows_grain(j.n), softmax_forward_range, &j);
  return LOOM_OK;
}

static int softmax_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                            float *dx, int64_t batch, loom_error *err) {
  if (!dx) return LOOM_OK;
  softmax_job j = {.y_in = y, .dy = dy, .dx = dx, .scale = softmax_scale(l)};
  softmax_geometry(l, &j.n, &j.rows);
  rows_parallel(ctx, batch * j.rows, rows_grain(j.n), softmax_backward_range, &j);
  return LOOM_OK;
}

/* ---- adapt / flops / describe -------------------------------------------------- */

/* A grid softmax dropped on an input keeps its column count when it divides
 * the input, else becomes one row over the whole input. */
static int grid_softmax_adapt(loom_layer *l, const loom_shape *in, loom_error *err) {
  int64_t numel = loom_shape_numel(in);
  if (numel < 1) return rows_check_shape(l, in, err);
  int64_t cols = layer_int(l, 1);
  int64_t last = rows_last_dim(in);
  if (numel % cols != 0) cols = last;
  int rc = loom_layer_set_int(l, "cols", cols, err);
  if (rc) return rc;
  return loom_layer_set_int(l, "rows", numel / cols, err);
}

static int64_t softmax_flops(const loom_layer *l) {
  return SOFTMAX_FLOPS_PER_ENTRY * loom_shape_numel(&l->in_shape);
}

static char *softmax_describe(const loom_layer *l, char *buf, size_t size) {
  char t[32];
  int64_t n = rows_last_dim(&l->in_shape);
  if (l->type == &loom_layer_grid_softmax) {
    /* TRANSLATORS: layer summary: "grid_softmax" is the layer type name, then rows×columns. */
    snprintf(buf, size, _("grid_softmax %lld×%lld, softmax per row"), (long long)layer_int(l, 0),
             (long long)layer_int(l, 1));
  } else if (l->type == &loom_layer_softmax_temperature) {
    rows_format_number(layer_float(l, 0), t, sizeof t);
    /* TRANSLATORS: layer summary: "softmax_temperature" is the layer type name, T the temperature,
       %lld the length of the rows the softmax runs over. */
    if (l->built) snprintf(buf, size, _("softmax_temperature T=%s over %lld"), t, (long long)n);
    else snprintf(buf, size, "softmax_temperature T=%s", t);
  } else if (l->type == &loom_layer_masked_softmax) {
    int64_t len = 0, masked = 0;
    const float *mask = loom_layer_get_floats(l, "mask", &len);
    for (int64_t i = 0; mask && i < len; i++) masked += mask[i] == 0.0f;
    /* TRANSLATORS: layer summary: "masked_softmax" is the layer type name. */
    if (len == 0) snprintf(buf, size, "%s", _("masked_softmax, no mask"));
    else
      /* TRANSLATORS: layer summary: "masked_softmax" is the layer type name; how many of the
         row's entries the mask hides, e.g. "masked_softmax, 1 of 3 masked". */
      snprintf(buf, size, dngettext(GETTEXT_PACKAGE, "masked_softmax, %lld of %lld masked",
                                    "masked_softmax, %lld of %lld masked", (unsigned long)masked),
               (long long)masked, (long long)len);
  } else {
    /* TRANSLATORS: layer summary: "softmax" is the layer type name, %lld the row length. */
    if (l->built) snprintf(buf, size, _("softmax over %lld"), (long long)n);
    else snprintf(buf, size, "softmax");
  }
  return buf;
}

/* ---- the types ---------------------------------------------------------------- */

static const loom_param_spec temperature_params[] = {
  {.name = "temperature", .label = N_("Temperature"),
   .tooltip = N_("Logits are divided by this before the softmax: below 1 sharpens, above 1 flattens"),
   .kind = LOOM_PARAM_FLOAT, .min = 1e-6, .max = 1e6, .def = 1.0},
};

static const loom_param_spec grid_params[] = {
  {.name = "rows", .label = N_("Rows"), .tooltip = N_("Number of independent softmaxes (e.g. tokens routed)"),
   .kind = LOOM_PARAM_INT, .min = 1, .max = 1 << 24, .def = 1},
  {.name = "cols", .label = N_("Columns"), .tooltip = N_("Entries per softmax (e.g. experts)"),
   .kind = LOOM_PARAM_INT, .min = 1, .max = 1 << 24, .def = 4},
};

static const loom_param_spec mask_params[] = {
  {.name = "mask", .label = N_("Mask"),
   .tooltip = N_("1 keeps an entry, 0 masks it (probability 0); one row for all rows, or one value per input "
                 "value; empty masks nothing"),
   .kind = LOOM_PARAM_FLOATS, .min = 0, .max = 1, .runtime = true},
};

const loom_layer_type loom_layer_softmax = {
  .id = 90, .name = "softmax", .label = N_("Softmax"), .group = N_("Softmax"),
  .flags = LOOM_LAYER_OUTPUTS_PROBABILITIES,
  .description = N_("Turns each row of the last dimension into probabilities that sum to 1."),
  .build = softmax_build, .forward = softmax_forward, .backward = softmax_backward,
  .flops = softmax_flops, .describe = softmax_describe,
};

const loom_layer_type loom_layer_softmax_temperature = {
  .id = 91, .name = "softmax_temperature", .label = N_("Softmax with temperature"), .group = N_("Softmax"),
  .flags = LOOM_LAYER_OUTPUTS_PROBABILITIES,
  .description = N_("Softmax of the logits divided by a temperature."),
  .params = temperature_params, .n_params = 1,
  .build = softmax_build, .forward = softmax_forward, .backward = softmax_backward,
  .flops = softmax_flops, .describe = softmax_describe,
};

const loom_layer_type loom_layer_grid_softmax = {
  .id = 92, .name = "grid_softmax", .label = N_("Grid softmax"), .group = N_("Softmax"),
  .flags = LOOM_LAYER_OUTPUTS_PROBABILITIES,
  .description = N_("Reads each sample as a rows × columns grid of logits and applies one softmax per row "
                    "(a mixture-of-experts router)."),
  .params = grid_params, .n_params = 2,
  .build = softmax_build, .forward = softmax_forward, .backward = softmax_backward,
  .adapt = grid_softmax_adapt, .flops = softmax_flops, .describe = softmax_describe,
};

const loom_layer_type loom_layer_masked_softmax = {
  .id = 93, .name = "masked_softmax", .label = N_("Masked softmax"), .group = N_("Softmax"),
  .flags = LOOM_LAYER_OUTPUTS_PROBABILITIES,
  .description = N_("Softmax over the entries a mask keeps; masked entries get probability 0 and no gradient."),
  .params = mask_params, .n_params = 1,
  .build = softmax_build, .forward = softmax_forward, .backward = softmax_backward,
  .flops = softmax_flops, .describe = softmax_describe,
};
