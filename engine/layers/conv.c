/*
 * Convolutions: conv1d/2d/3d and conv_transpose1d/2d/3d with PyTorch's
 * semantics (zero padding, stride, dilation, groups, output_padding, bias).
 * The arithmetic lives in conv-core.c; this file holds the hyperparameters,
 * shape rules and the mapping of each pass onto the three core products.
 * docs/layers.md describes the formulas and weight layouts.
 *
 * Weights: a convolution's weight is out_channels × (in_channels/groups ·
 * prod(kernel)) (PyTorch's [out, in/groups, k...] flattened per output
 * channel, so per-row scales are per output channel). A transposed
 * convolution keeps PyTorch's [in, out/groups, k...]: rows are input channels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "layers/conv-core.h"
#include "layers/registry.h"

enum { P_IN, P_OUT, P_KERNEL, P_STRIDE, P_PADDING, P_DILATION, P_GROUPS, P_BIAS, P_OUTPUT_PADDING };
enum { W_WEIGHT, W_BIAS };

#define MAX_CHANNELS 1048576.0 /* 2^20 */
#define MAX_KERNEL 1024.0
#define MAX_STRIDE 1024.0
#define MAX_PADDING 4096.0
#define MAX_DILATION 1024.0

/* The specs of one dimensionality; transposed convolutions append output_padding. */
#define CONV_PARAM_SPECS(dims)                                                                                        \
  {"in_channels", N_("Input channels"), N_("Channels of the incoming data"), LOOM_PARAM_INT, 1, MAX_CHANNELS, 1,     \
   NULL, 0},                                                                                                          \
    {"out_channels", N_("Output channels"), N_("Channels the layer produces"), LOOM_PARAM_INT, 1, MAX_CHANNELS, 8,    \
     NULL, 0},                                                                                                        \
    {"kernel", N_("Kernel size"), N_("Extent of the filter along each spatial dimension"), LOOM_PARAM_INTS, 1,        \
     MAX_KERNEL, 3, NULL, dims},                                                                                      \
    {"stride", N_("Stride"), N_("Step between neighbouring filter positions"), LOOM_PARAM_INTS, 1, MAX_STRIDE, 1,    \
     NULL, dims},                                                                                                     \
    {"padding", N_("Padding"), N_("Zeros added on both sides of each spatial dimension"), LOOM_PARAM_INTS, 0,         \
     MAX_PADDING, 0, NULL, dims},                                                                                     \
    {"dilation", N_("Dilation"), N_("Spacing between the taps of the filter"), LOOM_PARAM_INTS, 1, MAX_DILATION, 1,  \
     NULL, dims},                                                                                                     \
    {"groups", N_("Groups"), N_("Split channels into independent groups (channels must divide evenly)"),              \
     LOOM_PARAM_INT, 1, MAX_CHANNELS, 1, NULL, 0},                                                                    \
    {"bias", N_("Bias"), N_("Add a learned offset to every output channel"), LOOM_PARAM_BOOL, 0, 1, 1, NULL, 0}

#define OUTPUT_PADDING_SPEC(dims)                                                                                     \
  {"output_padding", N_("Output padding"),                                                                            \
   N_("Extra size added to one side of the output (smaller than the stride or the dilation)"), LOOM_PARAM_INTS, 0,   \
   MAX_STRIDE - 1, 0, NULL, dims}

static const loom_param_spec conv1d_params[] = {CONV_PARAM_SPECS(1)};
static const loom_param_spec conv2d_params[] = {CONV_PARAM_SPECS(2)};
static const loom_param_spec conv3d_params[] = {CONV_PARAM_SPECS(3)};
static const loom_param_spec conv_t1d_params[] = {CONV_PARAM_SPECS(1), OUTPUT_PADDING_SPEC(1)};
static const loom_param_spec conv_t2d_params[] = {CONV_PARAM_SPECS(2), OUTPUT_PADDING_SPEC(2)};
static const loom_param_spec conv_t3d_params[] = {CONV_PARAM_SPECS(3), OUTPUT_PADDING_SPEC(3)};

static bool is_transposed(const loom_layer *l) { return l->type->n_params > P_OUTPUT_PADDING; }
static int conv_dims(const loom_layer *l) { return l->type->params[P_KERNEL].count; }

/* Spatial dimension i of a dims-D layer, for messages. */
static const char *dim_name(int dims, int i) {
  static const char *const names[3][3] = {
    {N_("length"), NULL, NULL}, {N_("height"), N_("width"), NULL}, {N_("depth"), N_("height"), N_("width")}};
  return _(names[dims - 1][i]);
}

/* "3×5" */
static char *format_ints(const int64_t *v, int n, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < n && used < size; i++) {
    int w = snprintf(buf + used, size - used, i ? "×%lld" : "%lld", (long long)v[i]);
    if (w < 0) break;
    used += (size_t)w;
  }
  return buf;
}

static const char *shape_hint(int dims) {
  switch (dims) {
  case 1: return _("[channels×length]");
  case 2: return _("[channels×height×width]");
  default: return _("[channels×depth×height×width]");
  }
}

/* Checks rank, channels and groups; the spatial rules differ per direction. */
static int check_channels(const loom_layer *l, const loom_shape *in, loom_error *err) {
  char where[128], shape[96];
  int dims = conv_dims(l);
  int64_t cin = layer_int(l, P_IN), cout = layer_int(l, P_OUT), groups = layer_int(l, P_GROUPS);
  layer_where(l, where, sizeof where);
  /* With one input channel the channel axis may be left out (conv_image_shape). */
  if (in->rank != dims + 1 && !(in->rank == dims && cin == 1))
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: expects an input of rank %d %s; got %s"), where, dims + 1,
                          shape_hint(dims), loom_shape_format(in, shape, sizeof shape));
  if (in->rank == dims + 1 && in->d[0] != cin)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: in_channels is %lld but the input %s has %lld channels"), where,
                          (long long)cin, loom_shape_format(in, shape, sizeof shape), (long long)in->d[0]);
  if (cin % groups)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: in_channels %lld is not divisible by groups %lld"), where,
                          (long long)cin, (long long)groups);
  if (cout % groups)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: out_channels %lld is not divisible by groups %lld"), where,
                          (long long)cout, (long long)groups);
  return LOOM_OK;
}

/* Output spatial sizes of a convolution; errors name the dimension and sizes. */
static int conv_out_sizes(const loom_layer *l, const int64_t *in_sp, int64_t *out_sp, loom_error *err) {
  char where[128];
  int dims = conv_dims(l);
  const loom_param_value *k = &l->values[P_KERNEL], *s = &l->values[P_STRIDE], *p = &l->values[P_PADDING],
                         *d = &l->values[P_DILATION];
  for (int i = 0; i < dims; i++) {
    int64_t span = d->i[i] * (k->i[i] - 1) + 1, padded = in_sp[i] + 2 * p->i[i];
    if (span > padded)
      return loom_error_set(err, LOOM_ERR_SHAPE,
                            _("%s: along %s the kernel spans %lld (kernel %lld, dilation %lld) but the padded input "
                              "is only %lld (input %lld + 2×padding %lld)"),
                            layer_where(l, where, sizeof where), dim_name(dims, i), (long long)span,
                            (long long)k->i[i], (long long)d->i[i], (long long)padded, (long long)in_sp[i],
                            (long long)p->i[i]);
    out_sp[i] = (padded - span) / s->i[i] + 1;
  }
  return LOOM_OK;
}

/* Output spatial sizes of a transposed convolution. */
static int conv_t_out_sizes(const loom_layer *l, const int64_t *in_sp, int64_t *out_sp, loom_error *err) {
  char where[128];
  int dims = conv_dims(l);
  const loom_param_value *k = &l->values[P_KERNEL], *s = &l->values[P_STRIDE], *p = &l->values[P_PADDING],
                         *d = &l->values[P_DILATION], *op = &l->values[P_OUTPUT_PADDING];
  for (int i = 0; i < dims; i++) {
    if (op->i[i] >= s->i[i] && op->i[i] >= d->i[i])
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("%s: along %s output_padding %lld must be smaller than the stride %lld or the "
                              "dilation %lld"),
                            layer_where(l, where, sizeof where), dim_name(dims, i), (long long)op->i[i],
                            (long long)s->i[i], (long long)d->i[i]);
    int64_t out = (in_sp[i] - 1) * s->i[i] - 2 * p->i[i] + d->i[i] * (k->i[i] - 1) + op->i[i] + 1;
    if (out < 1)
      return loom_error_set(err, LOOM_ERR_SHAPE,
                            _("%s: along %s the output size would be %lld = (input %lld − 1)×stride %lld − "
                              "2×padding %lld + dilation %lld×(kernel %lld − 1) + output_padding %lld + 1; it must "
                              "be at least 1"),
                            layer_where(l, where, sizeof where), dim_name(dims, i), (long long)out,
                            (long long)in_sp[i], (long long)s->i[i], (long long)p->i[i], (long long)d->i[i],
                            (long long)k->i[i], (long long)op->i[i]);
    out_sp[i] = out;
  }
  return LOOM_OK;
}

/* The core plan of a built layer (see conv-core.h for the image/positions roles). */
static void make_plan(const loom_layer *l, conv_plan *p) {
  int dims = conv_dims(l), lead = CONV_MAX_DIMS - dims;
  bool t = is_transposed(l);
  const loom_shape *img = t ? &l->out_shape : &l->in_shape, *pos = t ? &l->in_shape : &l->out_shape;
  memset(p, 0, sizeof *p);
  for (int i = 0; i < CONV_MAX_DIMS; i++) {
    bool used = i >= lead;
    p->img[i] = used ? img->d[1 + i - lead] : 1;
    p->pos[i] = used ? pos->d[1 + i - lead] : 1;
    p->kernel[i] = used ? l->values[P_KERNEL].i[i - lead] : 1;
    p->stride[i] = used ? l->values[P_STRIDE].i[i - lead] : 1;
    p->padding[i] = used ? l->values[P_PADDING].i[i - lead] : 0;
    p->dilation[i] = used ? l->values[P_DILATION].i[i - lead] : 1;
  }
  p->groups = layer_int(l, P_GROUPS);
  p->rows_per_group = (t ? layer_int(l, P_IN) : layer_int(l, P_OUT)) / p->groups;
  p->img_channels = t ? layer_int(l, P_OUT) : layer_int(l, P_IN);
  conv_plan_finish(p);
}

/* An input of rank dims (checked: one input channel) is one channel without
 * its axis: a [height × width] grid for conv2d, so the layer can share an
 * input with sequence layers ([steps × features]) in a parallel container.
 * The same values in the same order as [1 × height × width]: the layer keeps
 * that as its in_shape and computes as usual. */
static loom_shape conv_image_shape(int dims, const loom_shape *in) {
  loom_shape img = *in;
  if (in->rank == dims) {
    img.rank = dims + 1;
    img.d[0] = 1;
    for (int i = 0; i < dims; i++) img.d[1 + i] = in->d[i];
  }
  return img;
}

static int conv_build(loom_layer *l, const loom_shape *given, uint64_t seed, loom_error *err) {
  int dims = conv_dims(l);
  bool t = is_transposed(l);
  int rc = check_channels(l, given, err);
  if (rc) return rc;
  loom_shape img = conv_image_shape(dims, given);
  const loom_shape *in = &img;
  l->in_shape = img;
  int64_t out_sp[CONV_MAX_DIMS];
  rc = t ? conv_t_out_sizes(l, in->d + 1, out_sp, err) : conv_out_sizes(l, in->d + 1, out_sp, err);
  if (rc) return rc;

  int64_t cin = layer_int(l, P_IN), cout = layer_int(l, P_OUT), groups = layer_int(l, P_GROUPS);
  int64_t k = 1, numel = cout;
  for (int i = 0; i < dims; i++) {
    k *= l->values[P_KERNEL].i[i]; /* ≤ 1024³: no overflow */
    if (__builtin_mul_overflow(numel, out_sp[i], &numel) || numel > ((int64_t)1 << 40)) {
      char where[128];
      return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: the output of %lld channels is too large"),
                            layer_where(l, where, sizeof where), (long long)cout);
    }
  }
  /* The column workspace of one sample: image channels × taps × positions. */
  int64_t positions = numel / cout, columns;
  if (__builtin_mul_overflow((t ? cout : cin) * k, t ? loom_shape_numel(in) / cin : positions, &columns) ||
      columns > ((int64_t)1 << 40)) {
    char where[128];
    return loom_error_set(err, LOOM_ERR_NOMEM,
                          _("%s: one sample needs more than 2^40 column values (%lld channels × %lld kernel taps × "
                            "%lld positions)"),
                          layer_where(l, where, sizeof where), (long long)(t ? cout : cin), (long long)k,
                          (long long)(t ? loom_shape_numel(in) / cin : positions));
  }
  l->out_shape.rank = dims + 1;
  l->out_shape.d[0] = cout;
  for (int i = 0; i < dims; i++) l->out_shape.d[1 + i] = out_sp[i];

  /* Weight rows: output channels for a convolution, input channels for a
   * transposed one (PyTorch's layouts); the fan-in is the columns per row. */
  int64_t rows = t ? cin : cout, cols = (t ? cout : cin) / groups * k;
  rc = layer_weights_ensure(l, W_WEIGHT, "weight", rows, cols, true, LAYER_INIT_KAIMING_UNIFORM, cols, seed, err);
  if (rc) return rc;
  if (layer_int(l, P_BIAS)) {
    rc = layer_weights_ensure(l, W_BIAS, "bias", 1, cout, false, LAYER_INIT_KAIMING_UNIFORM, cols, seed, err);
    if (rc) return rc;
  } else {
    layer_weights_truncate(l, 1);
  }
  return LOOM_OK;
}

static int64_t spatial_numel(const loom_shape *s) { return loom_shape_numel(s) / s->d[0]; }

static int conv_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                        loom_error *err) {
  loom_pool *pool = ctx ? ctx->pool : NULL;
  conv_plan plan;
  make_plan(l, &plan);
  /* At rest a dequantized copy for this call only (layer-product.c). */
  float *owned;
  const float *w = layer_weight_values_for_call(l, W_WEIGHT, &owned, err);
  if (!w) return err ? err->code : LOOM_ERR_INVALID;
  int rc = is_transposed(l) ? conv_image_from_positions(&plan, pool, w, x, y, batch, err)
                            : conv_positions_from_image(&plan, pool, w, x, y, batch, err);
  free(owned);
  if (rc) return rc;
  if (l->n_weights > W_BIAS) {
    const float *b = layer_weight_values(l, W_BIAS, err);
    if (!b) return err ? err->code : LOOM_ERR_INVALID;
    conv_add_bias(pool, b, y, batch, l->out_shape.d[0], spatial_numel(&l->out_shape));
  }
  return LOOM_OK;
}

static int conv_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                         float *dx, int64_t batch, loom_error *err) {
  loom_pool *pool = ctx ? ctx->pool : NULL;
  bool t = is_transposed(l);
  conv_plan plan;
  make_plan(l, &plan);
  if (l->n_weights > W_BIAS)
    conv_bias_gradient(pool, dy, l->grad[W_BIAS], batch, l->out_shape.d[0], spatial_numel(&l->out_shape));
  /* The positions side is dy for a convolution and x for a transposed one. */
  int rc = t ? conv_weight_gradient(&plan, pool, x, dy, l->grad[W_WEIGHT], batch, err)
             : conv_weight_gradient(&plan, pool, dy, x, l->grad[W_WEIGHT], batch, err);
  if (rc || !dx) return rc;
  const float *w = layer_weight_values_on(l, W_WEIGHT, pool, err);
  if (!w) return err ? err->code : LOOM_ERR_INVALID;
  return t ? conv_positions_from_image(&plan, pool, w, dy, dx, batch, err)
           : conv_image_from_positions(&plan, pool, w, dy, dx, batch, err);
}

static int conv_adapt(loom_layer *l, const loom_shape *in, loom_error *err) {
  char where[128], shape[96];
  int dims = conv_dims(l);
  if (in->rank == dims) return loom_layer_set_int(l, "in_channels", 1, err); /* one channel, axis left out */
  if (in->rank != dims + 1)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: expects an input of rank %d %s; got %s"),
                          layer_where(l, where, sizeof where), dims + 1, shape_hint(dims),
                          loom_shape_format(in, shape, sizeof shape));
  return loom_layer_set_int(l, "in_channels", in->d[0], err);
}

/* Per sample: 2 flops per multiply-add of the products plus one per bias
 * addition. Unbuilt layers count one filter position. */
static int64_t conv_flops(const loom_layer *l) {
  int dims = conv_dims(l);
  bool t = is_transposed(l);
  int64_t k = 1;
  for (int i = 0; i < dims; i++) k *= l->values[P_KERNEL].i[i];
  int64_t cin = layer_int(l, P_IN), cout = layer_int(l, P_OUT), groups = layer_int(l, P_GROUPS);
  int64_t in_sp = l->built ? spatial_numel(&l->in_shape) : 1, out_sp = l->built ? spatial_numel(&l->out_shape) : 1;
  int64_t macs = t ? cin * in_sp * (cout / groups) * k : cout * out_sp * (cin / groups) * k;
  return 2 * macs + (layer_int(l, P_BIAS) ? cout * out_sp : 0);
}

static char *conv_describe(const loom_layer *l, char *buf, size_t size) {
  int dims = conv_dims(l);
  char k[64], s[64], p[64], d[64], op[64], extra[320] = "";
  size_t used = 0;
  format_ints(l->values[P_KERNEL].i, dims, k, sizeof k);
  const struct {
    int index;
    int64_t neutral;
    const char *format;
    char *text;
  } opt[] = {
    /* TRANSLATORS: appended to a layer summary such as "conv2d 3→8, kernel 3×3"; %s is
       a size such as "2×2". The same for the other ", … %s" parts below. */
    {P_STRIDE, 1, N_(", stride %s"), s},
    {P_PADDING, 0, N_(", padding %s"), p},
    {P_DILATION, 1, N_(", dilation %s"), d},
    /* TRANSLATORS: "output_padding" is the parameter's name; it may be translated like the
       inspector's "Output padding". */
    {P_OUTPUT_PADDING, 0, N_(", output_padding %s"), op}};
  for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++) {
    if (opt[i].index >= l->type->n_params) continue;
    bool neutral = true;
    for (int j = 0; j < dims; j++) neutral = neutral && l->values[opt[i].index].i[j] == opt[i].neutral;
    if (neutral) continue;
    format_ints(l->values[opt[i].index].i, dims, opt[i].text, 64);
    int w = snprintf(extra + used, sizeof extra - used, _(opt[i].format), opt[i].text);
    if (w > 0 && (size_t)w < sizeof extra - used) used += (size_t)w;
  }
  if (layer_int(l, P_GROUPS) > 1) {
    /* TRANSLATORS: appended to a layer summary; %lld is the number of channel groups. */
    int w = snprintf(extra + used, sizeof extra - used, _(", groups %lld"), (long long)layer_int(l, P_GROUPS));
    if (w > 0 && (size_t)w < sizeof extra - used) used += (size_t)w;
  }
  /* TRANSLATORS: layer summary, e.g. "conv2d 3→8, kernel 3×3, padding 1×1, bias": the layer
     type name (kept as is), input→output channels, the kernel size, the optional parts
     above, then ", bias" when the layer has one. */
  snprintf(buf, size, _("%s %lld→%lld, kernel %s%s%s"), l->type->name, (long long)layer_int(l, P_IN),
           (long long)layer_int(l, P_OUT), k, extra, layer_int(l, P_BIAS) ? _(", bias") : "");
  return buf;
}

#define CONV_TYPE(ident, type_id, type_name, type_label, type_description, params_table)                              \
  const loom_layer_type ident = {                                                                                     \
    .id = type_id,                                                                                                    \
    .name = type_name,                                                                                                \
    .label = type_label,                                                                                              \
    .group = N_("Convolution"),                                                                                       \
    .description = type_description,                                                                                  \
    .flags = LOOM_LAYER_WEIGHTED,                                                                                     \
    .params = params_table,                                                                                           \
    .n_params = (int)(sizeof params_table / sizeof params_table[0]),                                                  \
    .build = conv_build,                                                                                              \
    .forward = conv_forward,                                                                                          \
    .backward = conv_backward,                                                                                        \
    .adapt = conv_adapt,                                                                                              \
    .flops = conv_flops,                                                                                              \
    .describe = conv_describe,                                                                                        \
  }

CONV_TYPE(loom_layer_conv1d, 40, "conv1d", N_("1-D convolution"),
          N_("Slides learned filters along a sequence of channels × length."), conv1d_params);
CONV_TYPE(loom_layer_conv2d, 41, "conv2d", N_("2-D convolution"),
          N_("Slides learned filters over an image of channels × height × width."), conv2d_params);
CONV_TYPE(loom_layer_conv3d, 42, "conv3d", N_("3-D convolution"),
          N_("Slides learned filters through a volume of channels × depth × height × width."), conv3d_params);
CONV_TYPE(loom_layer_conv_transpose1d, 43, "conv_transpose1d", N_("1-D transposed convolution"),
          N_("Spreads each input position through learned filters, growing a sequence (upsampling)."),
          conv_t1d_params);
CONV_TYPE(loom_layer_conv_transpose2d, 44, "conv_transpose2d", N_("2-D transposed convolution"),
          N_("Spreads each input pixel through learned filters, growing an image (upsampling)."), conv_t2d_params);
CONV_TYPE(loom_layer_conv_transpose3d, 45, "conv_transpose3d", N_("3-D transposed convolution"),
          N_("Spreads each input voxel through learned filters, growing a volume (upsampling)."), conv_t3d_params);
