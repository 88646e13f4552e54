/*
 * The rest of the softmax family on the device (docs/gpu.md): sparsemax
 * and entmax15 (shaders/sparsemax.comp), gumbel_softmax
 * (shaders/gumbel.comp, its backward the softmax kernel's) and
 * hierarchical_softmax (shaders/hsoftmax.comp), forward and backward, with
 * the CPU layers' semantics (engine/layers/sparsemax.c, gumbel-softmax.c,
 * hierarchical-softmax.c).
 *
 * The Gumbel noise is the CPU's: counter-based on (seed, step, layer,
 * entry), drawn on the host by the CPU's own function before each
 * submission and uploaded, so the device adds the very same noise (to
 * float32 rounding of its two halves); what differs from the CPU is only
 * the float32 arithmetic of the softmax around it.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu-internal.h"
#include "layers/layer-impl.h"
#include "layers/softmax-rows.h"

#define GPU_MAX_INDEX ((int64_t)UINT32_MAX)

int gpu_op_sparsemax(gpu_rec *rec, bool entmax, int64_t rows, int64_t cols, const gpu_buf *in, const gpu_buf *dy,
                     gpu_buf *out, loom_error *err) {
  if (rows * cols > GPU_MAX_INDEX) return gpu_too_large(entmax ? "entmax15" : "sparsemax", rows * cols, err);
  struct {
    uint32_t rows, cols, entmax, backward;
  } push = {(uint32_t)rows, (uint32_t)cols, entmax, dy != NULL};
  const gpu_buf *bufs[3] = {in, dy ? dy : rec->g->dummy, out};
  uint32_t groups[3];
  gpu_groups_1d(rows, 1, groups);
  return gpu_rec_dispatch(rec, GPU_K_SPARSEMAX, bufs, &push, sizeof push, groups, err);
}

int gpu_op_gumbel(gpu_rec *rec, int64_t rows, int64_t cols, float scale, bool hard, const gpu_buf *x,
                  const gpu_buf *noise, gpu_buf *y, gpu_buf *soft, loom_error *err) {
  /* the noise buffer holds two floats an entry */
  if (2 * rows * cols > GPU_MAX_INDEX) return gpu_too_large("gumbel_softmax", rows * cols, err);
  struct {
    uint32_t rows, cols;
    float scale;
    uint32_t hard;
  } push = {(uint32_t)rows, (uint32_t)cols, scale, hard};
  const gpu_buf *bufs[4] = {x, noise, y, hard && soft ? soft : rec->g->dummy};
  uint32_t groups[3];
  gpu_groups_1d(rows, 1, groups);
  return gpu_rec_dispatch(rec, GPU_K_GUMBEL, bufs, &push, sizeof push, groups, err);
}

void gpu_gumbel_noise(const loom_layer *l, uint64_t seed, uint64_t step, int64_t n, float *out) {
  uint64_t key = gumbel_softmax_key(l, seed, step);
  for (int64_t e = 0; e < n; e++) {
    double g = gumbel_softmax_noise(key, e);
    float hi = (float)g;
    out[2 * e] = hi;
    out[2 * e + 1] = (float)(g - (double)hi);
  }
}

int gpu_op_hsoftmax(gpu_rec *rec, const gpu_hsoftmax *h, const gpu_buf *in, const gpu_buf *dy, gpu_buf *out,
                    loom_error *err) {
  /* aux holds three rows a row */
  if (3 * h->rows * h->logits > GPU_MAX_INDEX) return gpu_too_large("hierarchical_softmax", h->rows * h->logits, err);
  struct {
    uint32_t rows, logits, leaves, blocks, backward;
  } push = {(uint32_t)h->rows, (uint32_t)h->logits, (uint32_t)h->leaves, (uint32_t)h->blocks, dy != NULL};
  const gpu_buf *bufs[5] = {in ? in : rec->g->dummy, dy ? dy : rec->g->dummy, out, h->aux, h->tree};
  uint32_t groups[3];
  gpu_groups_1d(h->rows, 1, groups);
  return gpu_rec_dispatch(rec, GPU_K_HSOFTMAX, bufs, &push, sizeof push, groups, err);
}

int gpu_hsoftmax_tree(loom_gpu *g, const loom_layer *l, gpu_buf *tree, int64_t *blocks, loom_error *err) {
  int64_t *sizes = NULL, n_blocks = 0, logits = 0, leaves = 0;
  int rc = hsoftmax_tree(l, &sizes, &n_blocks, &logits, &leaves, err);
  if (rc) return rc;
  char where[128];
  /* hsoftmax_tree checked the logits and leaves against the built shapes,
   * which the prepared network keeps: the size cannot change */
  size_t bytes = (size_t)(n_blocks + logits) * sizeof(uint32_t);
  if (!tree->buffer) rc = gpu_buf_new(g, bytes, layer_where(l, where, sizeof where), tree, err);
  if (!rc) {
    /* the children counts, then each logit's parent: block k ≥ 1 holds the
     * children of the node with logit k − 1 */
    uint32_t *t = tree->map, *parent = t + n_blocks;
    int64_t start = 0;
    for (int64_t k = 0; k < n_blocks; k++) {
      t[k] = (uint32_t)sizes[k];
      for (int64_t c = start; c < start + sizes[k]; c++) parent[c] = k > 0 ? (uint32_t)(k - 1) : UINT32_MAX;
      start += sizes[k];
    }
    *blocks = n_blocks;
  }
  free(sizes);
  return rc;
}

static gpu_hsoftmax node_hsoftmax(gnode *n, int64_t batch) {
  return (gpu_hsoftmax){.rows = batch * n->rows, .logits = n->cols, .leaves = n->n, .blocks = n->blocks,
                        .tree = &n->tree, .aux = &n->aux};
}

/* A buffer of `floats` floats for node n, made on first use. */
static int node_buf(loom_gpu_net *gn, gnode *n, int64_t floats, gpu_buf *b, loom_error *err) {
  if (b->buffer) return LOOM_OK;
  char where[128];
  return gpu_buf_new(gn->g, (size_t)floats * sizeof(float), layer_where(n->layer, where, sizeof where), b, err);
}

int gpu_softmax_node_upload(loom_gpu_net *gn, gnode *n, loom_error *err) {
  int64_t entries = gn->batch * n->rows * n->cols;
  switch (n->kind) {
  case GN_GUMBEL: {
    int rc = node_buf(gn, n, 2 * entries, &n->noise, err);
    if (!rc && n->hard) rc = node_buf(gn, n, entries, &n->aux, err);
    return rc;
  }
  case GN_HSOFTMAX: {
    int rc = gpu_hsoftmax_tree(gn->g, n->layer, &n->tree, &n->blocks, err);
    if (!rc) rc = node_buf(gn, n, 3 * entries, &n->aux, err);
    return rc;
  }
  default: return LOOM_OK;
  }
}

int gpu_softmax_node_forward(gpu_rec *rec, gnode *n, const gpu_buf *x, gpu_buf *y, int64_t batch, loom_error *err) {
  int64_t rows = batch * n->rows;
  switch (n->kind) {
  case GN_SPARSE: return gpu_op_sparsemax(rec, n->entmax, rows, n->cols, x, NULL, y, err);
  case GN_GUMBEL: return gpu_op_gumbel(rec, rows, n->cols, n->scale, n->hard, x, &n->noise, y, &n->aux, err);
  case GN_HSOFTMAX: {
    gpu_hsoftmax h = node_hsoftmax(n, batch);
    return gpu_op_hsoftmax(rec, &h, x, NULL, y, err);
  }
  default: return LOOM_OK;
  }
}

int gpu_softmax_node_backward(gpu_rec *rec, gnode *n, const gpu_buf *y, const gpu_buf *dy, gpu_buf *dx,
                              int64_t batch, loom_error *err) {
  int64_t rows = batch * n->rows;
  switch (n->kind) {
  case GN_SPARSE: return gpu_op_sparsemax(rec, n->entmax, rows, n->cols, y, dy, dx, err);
  case GN_GUMBEL: {
    /* the exact Jacobian of the relaxed sample with the noise held fixed;
     * for hard, that of the relaxed sample (straight-through), as the CPU */
    gpu_softmax op = {.rows = rows, .cols = n->cols, .scale = n->scale};
    return gpu_op_softmax_backward(rec, &op, n->hard ? &n->aux : y, dy, dx, err);
  }
  case GN_HSOFTMAX: {
    gpu_hsoftmax h = node_hsoftmax(n, batch);
    return gpu_op_hsoftmax(rec, &h, NULL, dy, dx, err);
  }
  default: return LOOM_OK;
  }
}

static void fill_noise(loom_gpu_net *gn, gnode *nodes, int count, int64_t batch) {
  for (int i = 0; i < count; i++) {
    gnode *n = &nodes[i];
    if (n->kind == GN_CONTAINER) fill_noise(gn, n->sub, n->n_sub, batch);
    if (n->kind == GN_GUMBEL && n->noise.map)
      gpu_gumbel_noise(n->layer, gn->seed, gn->step, batch * n->rows * n->cols, n->noise.map);
  }
}

void gpu_softmax_fill_noise(loom_gpu_net *gn, int64_t batch) { fill_noise(gn, gn->nodes, gn->n_nodes, batch); }

void gpu_softmax_node_free(loom_gpu *g, gnode *n) {
  gpu_buf_free(g, &n->noise);
  gpu_buf_free(g, &n->aux);
  gpu_buf_free(g, &n->tree);
}
