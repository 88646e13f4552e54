/*
 * The kernels as operations on device buffers: each fills its push constants
 * (the layout of the block in its shader) and records one dispatch. Shapes
 * are checked against the 32-bit indexing of the shaders here.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "gpu/gpu-internal.h"

#define GPU_MAX_INDEX ((int64_t)UINT32_MAX)
#define GPU_GEMV_MAX_ROWS 8

uint32_t gpu_decode_kind(loom_dtype d) {
  switch (d) {
  case LOOM_DTYPE_FLOAT64: return 9;
  case LOOM_DTYPE_FLOAT16: return 3;
  case LOOM_DTYPE_BFLOAT16: return 4;
  case LOOM_DTYPE_FP8_E4M3: return 5;
  case LOOM_DTYPE_FP8_E5M2: return 6;
  case LOOM_DTYPE_FP4: return 7;
  default: break;
  }
  switch (loom_dtype_traits_get(d)->kind) {
  case LOOM_DTYPE_KIND_UNSIGNED: return 1;
  case LOOM_DTYPE_KIND_BINARY: return 2;
  default: return 0; /* signed and ternary: two's complement (32/64 bits: decode.glsl's decode_wide) */
  }
}

bool gpu_wide_codes(loom_dtype d) { return d != LOOM_DTYPE_FLOAT32 && loom_dtype_traits_get(d)->bits >= 32; }

static int64_t row_bytes(loom_dtype d, int64_t cols) { return (int64_t)loom_dtype_row_bytes(d, cols); }

int gpu_weights_upload(loom_gpu *g, loom_weights *w, gpu_weights *out, loom_error *err) {
  loom_dtype d = loom_weights_dtype(w);
  int rc = loom_weights_morph(w, err);
  if (rc) return rc;
  int64_t rows = loom_weights_rows(w), cols = loom_weights_cols(w);
  size_t nbytes = 0;
  const uint8_t *packed = loom_weights_packed(w, &nbytes);
  int64_t nscales = 0;
  const float *scales = loom_weights_scales(w, &nscales);
  int64_t rb = row_bytes(d, cols);
  bool scaled = loom_dtype_traits_get(d)->scaled;
  if (!packed || (int64_t)nbytes != rows * rb || (scaled && (!scales || nscales < 1)))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: the packed copy is not the expected %lld × %lld bytes"),
                          loom_weights_label(w), (long long)rows, (long long)rb);
  if (rows * rb > GPU_MAX_INDEX)
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("%s: %lld bytes are more than the device kernels index"),
                          loom_weights_label(w), (long long)(rows * rb));
  bool fresh = !out->data.buffer || out->dtype != d || out->rows != rows || out->cols != cols;
  if (fresh) {
    gpu_weights_free(g, out);
    rc = gpu_buf_new(g, nbytes, loom_weights_label(w), &out->data, err);
    if (!rc) rc = gpu_buf_new(g, (size_t)(nscales > 0 ? nscales : 1) * sizeof(float), loom_weights_label(w),
                              &out->scales, err);
    if (rc) {
      gpu_weights_free(g, out);
      return rc;
    }
  }
  memcpy(out->data.map, packed, nbytes);
  if (nscales > 0) memcpy(out->scales.map, scales, (size_t)nscales * sizeof(float));
  out->dtype = d;
  out->rows = rows;
  out->cols = cols;
  out->ld = (uint32_t)(d == LOOM_DTYPE_FLOAT32 ? cols : rb);
  out->per_tensor = nscales == 1;
  return LOOM_OK;
}

void gpu_weights_free(loom_gpu *g, gpu_weights *w) {
  gpu_buf_free(g, &w->data);
  gpu_buf_free(g, &w->scales);
  memset(w, 0, sizeof *w);
}

gpu_weights gpu_weights_view(const gpu_buf *b, int64_t rows, int64_t cols) {
  return (gpu_weights){.data = *b, .dtype = LOOM_DTYPE_FLOAT32, .rows = rows, .cols = cols, .ld = (uint32_t)cols};
}

static int too_large(const char *what, int64_t n, loom_error *err) {
  return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("%s of %lld values is more than the device kernels index"),
                        what, (long long)n);
}

int gpu_too_large(const char *what, int64_t n, loom_error *err) { return too_large(what, n, err); }

/* Whether GEMM_TILE can read every operand as whole vec4s: each leading
 * dimension, and the extent along which each operand is contiguous (K for
 * A untransposed and B transposed, else M or N), a multiple of 4. */
static bool tile_aligned(const gpu_gemm *op) {
  int64_t a_run = op->ta ? op->m : op->k, b_run = op->tb ? op->k : op->n;
  return op->lda % 4 == 0 && op->b->ld % 4 == 0 && a_run % 4 == 0 && b_run % 4 == 0;
}

int gpu_op_gemm(gpu_rec *rec, const gpu_gemm *op, loom_error *err) {
  if (op->m < 1 || op->n < 1 || op->k < 1) return LOOM_OK;
  if (op->m * op->n > GPU_MAX_INDEX || op->m * op->k > GPU_MAX_INDEX || op->n * op->k > GPU_MAX_INDEX)
    return too_large(_("a matrix product"), op->m * op->n, err);
  /* Few rows (a forward at a small batch): one invocation per output beats
   * the tiled kernel, whose 64×64 tiles would sit mostly idle. */
  bool small = op->m <= GPU_GEMV_MAX_ROWS;
  bool packed = op->b->dtype != LOOM_DTYPE_FLOAT32;
  /* With B transposed (a weight row per output), a workgroup per output
   * reads the row coalesced; A must not be transposed (rows of A contiguous). */
  bool rowdot = rec->g->rowdot && small && op->tb && !op->ta;
  int64_t tiles = ((op->m + 127) / 128) * ((op->n + 127) / 128);
  bool tile = !small && !packed && tiles >= rec->g->tile_min_tiles && tile_aligned(op);
  bool wide = gpu_wide_codes(op->b->dtype);
  gpu_kernel k = rowdot  ? (wide ? GPU_K_ROWDOT_WIDE : packed ? GPU_K_ROWDOT_PACKED : GPU_K_ROWDOT_F32)
               : small   ? (wide ? GPU_K_GEMV_WIDE : packed ? GPU_K_GEMV_PACKED : GPU_K_GEMV_F32)
               : tile    ? GPU_K_GEMM_TILE
                         : (wide ? GPU_K_GEMM_WIDE : packed ? GPU_K_GEMM_PACKED : GPU_K_GEMM_F32);
  struct {
    uint32_t m, n, k, lda, ldb, ldc, ta, tb, accumulate, has_bias, per_tensor, kind, nbits, act, tanh_gelu;
    float ap0, ap1;
  } push = {(uint32_t)op->m, (uint32_t)op->n, (uint32_t)op->k, op->lda, op->b->ld, op->ldc, op->ta, op->tb,
            op->accumulate, op->bias != NULL, op->b->per_tensor,
            packed ? gpu_decode_kind(op->b->dtype) : 0, packed ? (uint32_t)loom_dtype_traits_get(op->b->dtype)->bits : 0,
            op->act ? op->act->kind + 1 : 0, op->act ? op->act->tanh_gelu : 0, op->act ? op->act->p0 : 0.0f,
            op->act ? op->act->p1 : 0.0f};
  const gpu_buf *dummy = rec->g->dummy;
  const gpu_buf *bufs[5] = {op->a, &op->b->data, op->b->scales.buffer ? &op->b->scales : dummy,
                            op->bias ? op->bias : dummy, op->c};
  uint32_t groups[3] = {(uint32_t)((op->n + 63) / 64), (uint32_t)(small ? op->m : (op->m + 63) / 64), 1};
  if (rowdot) gpu_groups_1d(op->n, 1, groups);
  if (tile) {
    groups[0] = (uint32_t)((op->n + 127) / 128);
    groups[1] = (uint32_t)((op->m + 127) / 128);
  }
  if (groups[0] > 65535 || groups[1] > 65535) return too_large(_("a matrix product"), op->m * op->n, err);
  return gpu_rec_dispatch(rec, k, bufs, &push, sizeof push, groups, err);
}

/* The activation types the device runs, in the order of act.comp's kinds. */
static const char *const act_names[] = {"relu", "leaky-relu", "elu",      "gelu", "silu",
                                        "sigmoid", "tanh",     "softplus", "relu2"};

bool gpu_act_of(const loom_layer *l, gpu_act *out) {
  const char *name = loom_layer_type_name(loom_layer_get_type(l));
  for (uint32_t k = 0; k < sizeof act_names / sizeof act_names[0]; k++) {
    if (strcmp(name, act_names[k])) continue;
    *out = (gpu_act){.kind = k};
    if (k == 1) out->p0 = (float)loom_layer_get_float(l, "negative_slope");
    if (k == 2) out->p0 = (float)loom_layer_get_float(l, "alpha");
    if (k == 3) out->tanh_gelu = loom_layer_get_value(l, 0).i[0] == 1;
    if (k == 7) {
      out->p0 = (float)loom_layer_get_float(l, "beta");
      out->p1 = (float)loom_layer_get_float(l, "threshold");
    }
    return true;
  }
  return false;
}

int gpu_op_act(gpu_rec *rec, const gpu_act *a, const gpu_buf *x, const gpu_buf *dy, gpu_buf *out, int64_t n,
               loom_error *err) {
  if (n > GPU_MAX_INDEX) return too_large(_("an activation"), n, err);
  struct {
    uint32_t n, kind, backward, tanh_gelu;
    float p0, p1;
  } push = {(uint32_t)n, a->kind, dy != NULL, a->tanh_gelu, a->p0, a->p1};
  const gpu_buf *bufs[3] = {x, dy ? dy : rec->g->dummy, out};
  uint32_t groups[3];
  gpu_groups_1d(n, 256, groups);
  return gpu_rec_dispatch(rec, GPU_K_ACT, bufs, &push, sizeof push, groups, err);
}

static int softmax_dispatch(gpu_rec *rec, const gpu_softmax *s, const gpu_buf *in, const gpu_buf *dy, gpu_buf *out,
                            loom_error *err) {
  if (s->rows * s->cols > GPU_MAX_INDEX) return too_large(_("a softmax"), s->rows * s->cols, err);
  bool masked = s->keep && !dy;
  struct {
    uint32_t rows, cols;
    float scale;
    uint32_t backward, masked, keep_rows;
  } push = {(uint32_t)s->rows, (uint32_t)s->cols, s->scale, dy != NULL, masked, masked ? (uint32_t)s->keep_rows : 1};
  const gpu_buf *bufs[4] = {in, dy ? dy : rec->g->dummy, out, masked ? s->keep : rec->g->dummy};
  uint32_t groups[3];
  gpu_groups_1d(s->rows, 1, groups);
  return gpu_rec_dispatch(rec, GPU_K_SOFTMAX, bufs, &push, sizeof push, groups, err);
}

int gpu_op_softmax(gpu_rec *rec, const gpu_softmax *s, const gpu_buf *x, gpu_buf *y, loom_error *err) {
  return softmax_dispatch(rec, s, x, NULL, y, err);
}

int gpu_op_softmax_backward(gpu_rec *rec, const gpu_softmax *s, const gpu_buf *y, const gpu_buf *dy, gpu_buf *dx,
                            loom_error *err) {
  return softmax_dispatch(rec, s, y, dy, dx, err);
}

int gpu_op_colsum(gpu_rec *rec, const gpu_buf *x, gpu_buf *sums, int64_t rows, int64_t cols, loom_error *err) {
  if (rows * cols > GPU_MAX_INDEX) return too_large(_("a column sum"), rows * cols, err);
  struct {
    uint32_t rows, cols;
  } push = {(uint32_t)rows, (uint32_t)cols};
  const gpu_buf *bufs[2] = {x, sums};
  uint32_t groups[3] = {(uint32_t)((cols + 255) / 256), 1, 1};
  return gpu_rec_dispatch(rec, GPU_K_COLSUM, bufs, &push, sizeof push, groups, err);
}

int gpu_op_sgd(gpu_rec *rec, const loom_optim_config *c, bool first, double lr, gpu_buf *param, const gpu_buf *grad,
               gpu_buf *mom, int64_t n, loom_error *err) {
  if (n > GPU_MAX_INDEX) return too_large(_("an optimizer step"), n, err);
  /* The same float32 constants as sgd_tensor(). */
  struct {
    uint32_t n, flags;
    float neg_lr, wd, mom, damp1;
  } push = {(uint32_t)n, (first ? 1u : 0u) | (c->nesterov ? 2u : 0u) | (c->maximize ? 4u : 0u), (float)-lr,
            (float)c->weight_decay, (float)c->momentum, (float)(1.0 - c->dampening)};
  const gpu_buf *bufs[3] = {param, grad, mom ? mom : rec->g->dummy};
  uint32_t groups[3];
  gpu_groups_1d(n, 256, groups);
  return gpu_rec_dispatch(rec, GPU_K_SGD, bufs, &push, sizeof push, groups, err);
}

int gpu_op_adam(gpu_rec *rec, const loom_optim_config *c, int64_t step, double lr, gpu_buf *param,
                const gpu_buf *grad, gpu_buf *m, gpu_buf *v, gpu_buf *vmax, int64_t n, loom_error *err) {
  if (n > GPU_MAX_INDEX) return too_large(_("an optimizer step"), n, err);
  /* The same float32 constants as adam_tensor(), made in double. */
  double bias1 = 1.0 - pow(c->beta1, (double)step), bias2 = 1.0 - pow(c->beta2, (double)step);
  struct {
    uint32_t n, flags;
    float step_size, bias2_sqrt, b1, b2, one_b1, one_b2, eps, wd, decay;
  } push = {(uint32_t)n,
            (c->kind == LOOM_OPTIM_ADAMW ? 1u : 0u) | (c->maximize ? 2u : 0u) | (c->amsgrad ? 4u : 0u),
            (float)(lr / bias1),
            (float)sqrt(bias2),
            (float)c->beta1,
            (float)c->beta2,
            (float)(1.0 - c->beta1),
            (float)(1.0 - c->beta2),
            (float)c->eps,
            (float)c->weight_decay,
            (float)(1.0 - lr * c->weight_decay)};
  const gpu_buf *bufs[5] = {param, grad, m, v, vmax ? vmax : rec->g->dummy};
  uint32_t groups[3];
  gpu_groups_1d(n, 256, groups);
  return gpu_rec_dispatch(rec, GPU_K_ADAM, bufs, &push, sizeof push, groups, err);
}

int gpu_op_loss_grad(gpu_rec *rec, const loom_loss_spec *spec, const gpu_buf *y, const gpu_buf *targets, gpu_buf *dy,
                     int64_t rows, int64_t valid, int64_t cols, loom_error *err) {
  if (rows * cols > GPU_MAX_INDEX) return too_large(_("a loss gradient"), rows * cols, err);
  uint32_t kind;
  switch (spec->kind) {
  case LOOM_LOSS_MSE: kind = 0; break;
  case LOOM_LOSS_CROSS_ENTROPY: kind = 1; break;
  case LOOM_LOSS_BCE_LOGITS: kind = 2; break;
  default:
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                          _("loss: the Vulkan backend does not compute the %s loss yet (mse, cross_entropy and "
                            "bce_logits)"),
                          loom_loss_name(spec->kind));
  }
  /* The CPU scales by 1/n in double and rounds the product once; the
   * float32 inverse here adds at most one rounding. */
  double inv = kind == 1 ? 1.0 / (double)valid : 1.0 / (double)(valid * cols);
  struct {
    uint32_t rows, cols, kind, valid;
    float inv, eps;
  } push = {(uint32_t)rows, (uint32_t)cols, kind, (uint32_t)valid, (float)inv,
            kind == 1 ? (float)spec->label_smoothing : 0.0f};
  const gpu_buf *bufs[3] = {y, targets, dy};
  uint32_t groups[3];
  gpu_groups_1d(rows, 1, groups);
  return gpu_rec_dispatch(rec, GPU_K_LOSS, bufs, &push, sizeof push, groups, err);
}

static int norm_dispatch(gpu_rec *rec, const gpu_norm *n, uint32_t mode, const gpu_buf *x, const gpu_buf *dy,
                         gpu_buf *out, gpu_buf *db, loom_error *err) {
  if (n->rows * n->d > GPU_MAX_INDEX) return too_large(_("a normalization"), n->rows * n->d, err);
  struct {
    uint32_t rows, d, mode, layernorm, has_w, has_b;
    float eps;
  } push = {(uint32_t)n->rows, (uint32_t)n->d, mode, n->layernorm, n->w != NULL, mode == 2 ? db != NULL : n->b != NULL,
            n->eps};
  const gpu_buf *dummy = rec->g->dummy;
  const gpu_buf *bufs[7] = {x, dy ? dy : dummy, n->w ? n->w : dummy, n->b ? n->b : dummy, n->stats, out,
                            db ? db : dummy};
  uint32_t groups[3];
  gpu_groups_1d(mode == 2 ? (n->d + 63) / 64 : n->rows, 1, groups);
  return gpu_rec_dispatch(rec, GPU_K_NORM, bufs, &push, sizeof push, groups, err);
}

int gpu_op_norm_forward(gpu_rec *rec, const gpu_norm *n, const gpu_buf *x, gpu_buf *y, loom_error *err) {
  return norm_dispatch(rec, n, 0, x, NULL, y, NULL, err);
}

int gpu_op_norm_backward(gpu_rec *rec, const gpu_norm *n, const gpu_buf *x, const gpu_buf *dy, gpu_buf *dx,
                         loom_error *err) {
  return norm_dispatch(rec, n, 1, x, dy, dx, NULL, err);
}

int gpu_op_norm_params(gpu_rec *rec, const gpu_norm *n, const gpu_buf *x, const gpu_buf *dy, gpu_buf *dw,
                       gpu_buf *db, loom_error *err) {
  return norm_dispatch(rec, n, 2, x, dy, dw, db, err);
}

int gpu_op_embed(gpu_rec *rec, const gpu_weights *table, const gpu_buf *x, const gpu_buf *dy, gpu_buf *out,
                 int64_t tokens, loom_error *err) {
  int64_t dim = table->cols;
  if (tokens * dim > GPU_MAX_INDEX || table->rows * dim > GPU_MAX_INDEX)
    return too_large(_("an embedding"), tokens * dim, err);
  bool f32 = table->dtype == LOOM_DTYPE_FLOAT32;
  struct {
    uint32_t tokens, dim, mode, ldb, kind, nbits, per_tensor, vocab;
  } push = {(uint32_t)tokens, (uint32_t)dim, dy != NULL, table->ld, f32 ? 8u : gpu_decode_kind(table->dtype),
            f32 ? 32u : (uint32_t)loom_dtype_traits_get(table->dtype)->bits, table->per_tensor, (uint32_t)table->rows};
  const gpu_buf *dummy = rec->g->dummy;
  const gpu_buf *bufs[5] = {x, &table->data, table->scales.buffer ? &table->scales : dummy, dy ? dy : dummy, out};
  uint32_t groups[3];
  gpu_groups_1d(dy ? dim : tokens * dim, 256, groups);
  return gpu_rec_dispatch(rec, gpu_wide_codes(table->dtype) ? GPU_K_EMBED_WIDE : GPU_K_EMBED, bufs, &push, sizeof push,
                          groups, err);
}

int gpu_op_segment(gpu_rec *rec, const gpu_segment *s, loom_error *err) {
  if (s->batch * s->len < 1) return LOOM_OK;
  if (s->batch * s->dst_stride > GPU_MAX_INDEX || s->batch * s->src_stride > GPU_MAX_INDEX)
    return too_large(_("a link's merge"), s->batch * s->dst_stride, err);
  struct {
    uint32_t batch, len, src_stride, src_off, dst_stride, dst_off, add, divide;
  } push = {(uint32_t)s->batch, (uint32_t)s->len, (uint32_t)s->src_stride, (uint32_t)s->src_off,
            (uint32_t)s->dst_stride, (uint32_t)s->dst_off, s->add, s->divide};
  const gpu_buf *bufs[2] = {s->src, s->dst};
  uint32_t groups[3];
  gpu_groups_1d(s->batch * s->len, 256, groups);
  return gpu_rec_dispatch(rec, GPU_K_MERGE, bufs, &push, sizeof push, groups, err);
}

int gpu_op_conv(gpu_rec *rec, const gpu_conv *c, gpu_conv_mode mode, int64_t batch, const gpu_weights *w,
                const gpu_buf *bias, const gpu_buf *in, const gpu_buf *dy, gpu_buf *out, loom_error *err) {
  int64_t n_img = (int64_t)c->img[0] * c->img[1] * c->img[2], n_pos = (int64_t)c->pos[0] * c->pos[1] * c->pos[2];
  int64_t taps = (int64_t)c->k[0] * c->k[1] * c->k[2];
  int64_t work = mode == GPU_CONV_FORWARD ? batch * c->cout * n_pos
               : mode == GPU_CONV_DX      ? batch * c->cin * n_img
               : mode == GPU_CONV_DW      ? (int64_t)c->cout * (c->cin / c->groups) * taps
                                          : c->cout;
  if (batch * c->cout * n_pos > GPU_MAX_INDEX || batch * c->cin * n_img > GPU_MAX_INDEX)
    return too_large(_("a convolution"), batch * c->cout * n_pos, err);
  bool f32 = w->dtype == LOOM_DTYPE_FLOAT32;
  struct {
    uint32_t batch, cin, cout, groups, img[3], pos[3], k[3], s[3], pad[3], d[3];
    uint32_t mode, has_bias, ldb, kind, nbits, per_tensor;
  } push = {(uint32_t)batch, c->cin, c->cout, c->groups,
            {c->img[0], c->img[1], c->img[2]}, {c->pos[0], c->pos[1], c->pos[2]},
            {c->k[0], c->k[1], c->k[2]}, {c->s[0], c->s[1], c->s[2]},
            {c->pad[0], c->pad[1], c->pad[2]}, {c->d[0], c->d[1], c->d[2]},
            (uint32_t)mode, bias != NULL, w->ld, f32 ? 8u : gpu_decode_kind(w->dtype),
            f32 ? 32u : (uint32_t)loom_dtype_traits_get(w->dtype)->bits, w->per_tensor};
  const gpu_buf *dummy = rec->g->dummy;
  const gpu_buf *bufs[6] = {in ? in : dummy, &w->data, w->scales.buffer ? &w->scales : dummy,
                            bias ? bias : dummy, dy ? dy : dummy, out};
  uint32_t groups[3];
  gpu_groups_1d(work, 256, groups);
  return gpu_rec_dispatch(rec, gpu_wide_codes(w->dtype) ? GPU_K_CONV_WIDE : GPU_K_CONV, bufs, &push, sizeof push,
                          groups, err);
}

int gpu_op_rmsprop(gpu_rec *rec, const loom_optim_config *c, double lr, gpu_buf *param, const gpu_buf *grad,
                   gpu_buf *mom, gpu_buf *square_avg, gpu_buf *grad_avg, int64_t n, loom_error *err) {
  if (n > GPU_MAX_INDEX) return too_large(_("an optimizer step"), n, err);
  /* The same float32 constants as rmsprop_tensor(). */
  struct {
    uint32_t n, flags;
    float a, one_a, eps, wd, mom, neg_lr;
  } push = {(uint32_t)n,          (c->maximize ? 1u : 0u) | (c->centered ? 2u : 0u),
            (float)c->alpha,      (float)(1.0 - c->alpha),
            (float)c->eps,        (float)c->weight_decay,
            (float)c->momentum,   (float)-lr};
  const gpu_buf *dummy = rec->g->dummy;
  const gpu_buf *bufs[5] = {param, grad, mom ? mom : dummy, square_avg, grad_avg ? grad_avg : dummy};
  uint32_t groups[3];
  gpu_groups_1d(n, 256, groups);
  return gpu_rec_dispatch(rec, GPU_K_RMSPROP, bufs, &push, sizeof push, groups, err);
}

int gpu_op_clip(gpu_rec *rec, int mode, gpu_buf *grad, int64_t n, int index, gpu_buf *sums, gpu_buf *scale,
                int n_tensors, double max_norm, loom_error *err) {
  if (n > GPU_MAX_INDEX) return too_large(_("a gradient"), n, err);
  struct {
    uint32_t n, index, mode, n_tensors;
    float max_norm;
  } push = {(uint32_t)n, (uint32_t)index, (uint32_t)mode, (uint32_t)n_tensors, (float)max_norm};
  const gpu_buf *bufs[3] = {grad ? grad : rec->g->dummy, sums, scale};
  uint32_t groups[3] = {1, 1, 1};
  if (mode == 2) gpu_groups_1d(n, 256, groups);
  return gpu_rec_dispatch(rec, GPU_K_CLIP, bufs, &push, sizeof push, groups, err);
}
