/*
 * embedding: a lookup table of num_embeddings rows × embedding_dim (PyTorch's
 * nn.Embedding layout; rows follow the layer dtype with per-row scales, i.e.
 * one scale per token). The per-sample input is [T] token indices carried as
 * float32 (exact for indices below 2^24); the output is [T, embedding_dim].
 * Indices are not differentiable: the input gradient is all zeros.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/i18n.h"
#include "layers/registry.h"

enum { P_NUM, P_DIM };
enum { W_WEIGHT };

/* float32 represents every integer up to 2^24 exactly. */
#define MAX_EMBEDDINGS 16777216.0
#define MAX_EMBEDDING_DIM 1048576.0
/* Columns of the table gradient handled by one range. */
#define COL_BLOCK 256

static const loom_param_spec embedding_params[] = {
  {"num_embeddings", N_("Vocabulary size"), N_("Number of distinct token indices (rows of the table)"),
   LOOM_PARAM_INT, 1, MAX_EMBEDDINGS, 256, NULL, 0},
  {"embedding_dim", N_("Embedding size"), N_("Values per token (columns of the table)"), LOOM_PARAM_INT, 1,
   MAX_EMBEDDING_DIM, 64, NULL, 0},
};

static int embedding_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  char where[128], shape[96];
  int64_t num = layer_int(l, P_NUM), dim = layer_int(l, P_DIM);
  if (in->rank != 1 || in->d[0] < 1)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: expects an input of rank 1 [tokens] of token indices; got %s"),
                          layer_where(l, where, sizeof where), loom_shape_format(in, shape, sizeof shape));
  int64_t out;
  if (__builtin_mul_overflow(in->d[0], dim, &out) || out > ((int64_t)1 << 40))
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: an output of %lld tokens × %lld values is too large"),
                          layer_where(l, where, sizeof where), (long long)in->d[0], (long long)dim);
  l->out_shape.rank = 2;
  l->out_shape.d[0] = in->d[0];
  l->out_shape.d[1] = dim;
  return layer_weights_ensure(l, W_WEIGHT, "weight", num, dim, true, LAYER_INIT_NORMAL, dim, seed, err);
}

/* Every index must be an integer in [0, vocab); the first bad one is
 * reported with its sample and position. The Vulkan backend checks the
 * indices it reads with this too (engine/gpu/gpu-check.c). */
int embedding_check_tokens(const loom_layer *l, const float *x, int64_t count, int64_t t_len, int64_t vocab,
                           loom_error *err) {
  char where[128];
  for (int64_t i = 0; i < count; i++) {
    float v = x[i];
    if (!isfinite(v) || v != floorf(v))
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("%s: sample %lld, position %lld: token index %g is not an integer"),
                            layer_where(l, where, sizeof where), (long long)(i / t_len), (long long)(i % t_len),
                            (double)v);
    if (v < 0.0f || v >= (float)vocab)
      return loom_error_set(err, LOOM_ERR_RANGE,
                            _("%s: sample %lld, position %lld: token index %.0f is outside 0…%lld (num_embeddings "
                              "%lld)"),
                            layer_where(l, where, sizeof where), (long long)(i / t_len), (long long)(i % t_len),
                            (double)v, (long long)(vocab - 1), (long long)vocab);
  }
  return LOOM_OK;
}

static int check_indices(const loom_layer *l, const float *x, int64_t batch, loom_error *err) {
  int64_t t_len = l->in_shape.d[0];
  return embedding_check_tokens(l, x, batch * t_len, t_len, layer_int(l, P_NUM), err);
}

typedef struct embedding_job {
  const float *x, *table, *dy;
  float *y, *dtable;
  int64_t tokens, dim;
  const loom_layer *rest; /* at rest: each token's row dequantized from its codes */
} embedding_job;

static void lookup_range(void *arg, int64_t begin, int64_t end) {
  const embedding_job *j = arg;
  for (int64_t t = begin; t < end; t++) {
    float *dst = j->y + t * j->dim;
    if (!j->rest)
      memcpy(dst, j->table + (int64_t)j->x[t] * j->dim, (size_t)j->dim * sizeof *j->y);
    else /* the first token's row validated the store (embedding_forward); rows differ only in their codes */
      (void)layer_weight_row(j->rest, W_WEIGHT, (int64_t)j->x[t], dst, NULL);
  }
}

/* Column blocks of the table gradient; tokens in ascending order, so repeated
 * tokens sum in a fixed order. */
static void table_grad_range(void *arg, int64_t begin, int64_t end) {
  const embedding_job *j = arg;
  for (int64_t blk = begin; blk < end; blk++) {
    int64_t c0 = blk * COL_BLOCK, c1 = c0 + COL_BLOCK < j->dim ? c0 + COL_BLOCK : j->dim;
    for (int64_t t = 0; t < j->tokens; t++) {
      float *row = j->dtable + (int64_t)j->x[t] * j->dim;
      const float *g = j->dy + t * j->dim;
      for (int64_t c = c0; c < c1; c++) row[c] += g[c];
    }
  }
}

static int embedding_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                             loom_error *err) {
  int rc = check_indices(l, x, batch, err);
  if (rc) return rc;
  embedding_job j = {.x = x, .y = y, .tokens = batch * l->in_shape.d[0], .dim = layer_int(l, P_DIM)};
  /* At rest only the rows looked up are dequantized (layer-product.c): a
   * vocabulary's table is not copied to float32 for a few tokens. */
  if (layer_weight_at_rest(l, W_WEIGHT)) {
    if (j.tokens > 0 && (rc = layer_weight_row(l, W_WEIGHT, (int64_t)x[0], y, err))) return rc;
    j.rest = l;
  } else if (!(j.table = layer_weight_values_on(l, W_WEIGHT, ctx ? ctx->pool : NULL, err))) {
    return err ? err->code : LOOM_ERR_INVALID;
  }
  loom_pool_for(ctx ? ctx->pool : NULL, j.tokens, 1 + 4096 / j.dim, lookup_range, &j);
  return LOOM_OK;
}

static int embedding_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                              float *dx, int64_t batch, loom_error *err) {
  int rc = check_indices(l, x, batch, err);
  if (rc) return rc;
  embedding_job j = {.x = x, .dy = dy, .dtable = l->grad[W_WEIGHT], .tokens = batch * l->in_shape.d[0],
                     .dim = layer_int(l, P_DIM)};
  loom_pool_for(ctx ? ctx->pool : NULL, (j.dim + COL_BLOCK - 1) / COL_BLOCK, 1, table_grad_range, &j);
  /* Token indices are discrete: no gradient flows into them. */
  if (dx) memset(dx, 0, (size_t)j.tokens * sizeof *dx);
  return LOOM_OK;
}

/* A lookup copies; it does no arithmetic. */
static int64_t embedding_flops(const loom_layer *l) { return 0; }

static char *embedding_describe(const loom_layer *l, char *buf, size_t size) {
  snprintf(buf, size, "embedding %lld×%lld", (long long)layer_int(l, P_NUM), (long long)layer_int(l, P_DIM));
  return buf;
}

const loom_layer_type loom_layer_embedding = {
  .id = 80,
  .name = "embedding",
  .label = N_("Embedding"),
  .group = N_("Embedding"),
  .description = N_("Looks up a learned vector for each token index."),
  .flags = LOOM_LAYER_WEIGHTED,
  .params = embedding_params,
  .n_params = (int)(sizeof embedding_params / sizeof embedding_params[0]),
  .build = embedding_build,
  .forward = embedding_forward,
  .backward = embedding_backward,
  .flops = embedding_flops,
  .describe = embedding_describe,
};
