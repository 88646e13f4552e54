/*
 * A parallel container's combine on the device, every mode of
 * engine/layers/parallel.c:
 *   concat, add, avg  merge segments (shaders/merge.comp)
 *   grid_scatter      the output zeroed, each branch copied to its tile
 *   filter            the gate's logits through a softmax (shaders/softmax.comp,
 *                     float32 where the CPU's is double), the branches added
 *                     up weighted by it in branch order
 *   route             the gate's own probabilities, head h weighting the h-th
 *                     of `heads` equal parts of every branch
 * The gate is a node of its own (any layer or container the device runs),
 * recorded after the branches as the CPU runs it. Its output being finite
 * is checked on the host after the submission (gpu-check.c), as the CPU
 * checks it; the device computes with whatever it holds meanwhile.
 *
 * The backward (called by gpu-train.c) follows parallel_backward: each
 * branch's share of the output gradient, its backward, its input gradient
 * added to the container's; then for filter and route the gradient of each
 * branch's weights (dL/dp = ⟨dy, out_i⟩ over its part, summed compensated:
 * the CPU sums in double), through the softmax for filter, into the gate.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "gpu/gpu-internal.h"
#include "layers/layer-impl.h"

enum { CONCAT, ADD, AVG, GRID_SCATTER, FILTER, ROUTE };

#define MAX_INDEX ((int64_t)UINT32_MAX)

int gpu_parallel_classify(const loom_layer *l, gnode *out, loom_error *err) {
  char where[128];
  int n = l->n_children;
  out->kind = GN_CONTAINER;
  out->parallel = true;
  out->combine = (int)loom_layer_get_int(l, "combine");
  bool gated = out->combine == FILTER || out->combine == ROUTE;
  /* parallel_build refuses these; a layer that is not built is not run */
  if (n < 1 || out->combine < CONCAT || out->combine > ROUTE || gated != (l->gate != NULL) || !l->built)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: the Vulkan backend needs the network's shapes inferred first"),
                          layer_where(l, where, sizeof where));
  const loom_shape *s0 = &l->children[0]->out_shape;
  if (out->combine == GRID_SCATTER) {
    out->tile_c = s0->d[0];
    out->tile_h = s0->rank == 3 ? s0->d[1] : 1;
    out->tile_w = s0->rank == 1 ? 1 : s0->d[s0->rank - 1];
    out->grid_rows = loom_layer_get_int(l, "grid_rows");
    out->grid_cols = loom_layer_get_int(l, "grid_cols");
  } else if (gated) {
    int64_t m = loom_shape_numel(s0), g = loom_shape_numel(&l->gate->out_shape);
    out->heads = out->combine == FILTER ? 1 : g / n;
    out->part = out->heads > 0 ? m / out->heads : 0;
    if (out->heads < 1 || out->heads * n != g || out->part * out->heads != m)
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("%s: the Vulkan backend needs the network's shapes inferred first"),
                            layer_where(l, where, sizeof where));
  }
  return LOOM_OK;
}

static int new_buf(loom_gpu_net *gn, int64_t numel, const loom_layer *l, int *index, loom_error *err) {
  char where[128];
  *index = gn->n_bufs;
  int rc = gpu_buf_new(gn->g, (size_t)(gn->batch * numel) * sizeof(float), layer_where(l, where, sizeof where),
                       &gn->bufs[gn->n_bufs], err);
  if (!rc) gn->n_bufs++;
  return rc;
}

int gpu_parallel_setup(loom_gpu_net *gn, gnode *n, loom_error *err) {
  const loom_layer *l = n->layer;
  /* the gradient at a branch's (or the gate's) input, before it is added to the others' */
  int rc = new_buf(gn, n->in_numel, l, &n->scratch, err);
  if (!rc && l->gate) {
    n->gate = calloc(1, sizeof *n->gate);
    if (!n->gate) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a network on the device"));
    rc = gpu_container_child(gn, l->gate, n->in, n->gate, err);
    if (!rc && n->combine == FILTER) rc = new_buf(gn, n->n_sub, l, &n->probs, err);
    if (!rc && n->combine == ROUTE) n->probs = n->gate->out;
    if (!rc)
      rc = gpu_net_add_check(gn, n->combine == FILTER ? GPU_CHECK_FILTER_GATE : GPU_CHECK_ROUTE_GATE, n, err);
  }
  if (!rc) rc = new_buf(gn, n->numel, l, &n->out, err);
  return rc;
}

int gpu_parallel_dispatches(const gnode *n) {
  /* a segment, tile or weighted sum a branch; the gate and a filter's softmax */
  return n->n_sub + (n->gate ? gpu_node_dispatches(n->gate) + (n->combine == FILTER) : 0);
}

int gpu_op_mix(gpu_rec *rec, const gpu_mix *m, loom_error *err) {
  int64_t items = m->mode == GPU_MIX_DOT         ? m->batch * m->heads
                : m->mode == GPU_MIX_FILTER_DZ ? m->batch
                                               : m->batch * m->len;
  int64_t widest = m->src_stride > m->dst_stride ? m->src_stride : m->dst_stride;
  if (widest < m->w_stride) widest = m->w_stride;
  if (widest < m->len) widest = m->len;
  if (items < 1) return LOOM_OK;
  if (m->batch * widest > MAX_INDEX || m->batch * m->heads * m->n > MAX_INDEX)
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("%s of %lld values is more than the device kernels index"),
                          _("a parallel container's combine"), (long long)(m->batch * widest));
  struct {
    uint32_t mode, batch, len, n, i, heads, part, src_stride, dst_stride, w_stride, add;
    uint32_t tile_w, tile_h, skip, pitch, off;
  } push = {(uint32_t)m->mode, (uint32_t)m->batch, (uint32_t)m->len, (uint32_t)m->n, (uint32_t)m->i,
            (uint32_t)m->heads, (uint32_t)m->part, (uint32_t)m->src_stride, (uint32_t)m->dst_stride,
            (uint32_t)m->w_stride, m->add, (uint32_t)m->tile_w, (uint32_t)m->tile_h, (uint32_t)m->skip,
            (uint32_t)m->pitch, (uint32_t)m->off};
  const gpu_buf *dummy = rec->g->dummy;
  const gpu_buf *bufs[4] = {m->src ? m->src : dummy, m->w ? m->w : dummy, m->dy ? m->dy : dummy, m->dst};
  uint32_t groups[3];
  gpu_groups_1d(items, 256, groups);
  return gpu_rec_dispatch(rec, GPU_K_MIX, bufs, &push, sizeof push, groups, err);
}

/* grid_scatter: branch i's tile (parallel.c's tile_offset as mix.comp's tile()). */
static gpu_mix tile_of(const gnode *n, int i, gpu_mix_mode mode, int64_t batch) {
  int64_t h = n->tile_h, w = n->tile_w, rows = n->grid_rows, cols = n->grid_cols;
  return (gpu_mix){.mode = mode, .batch = batch, .len = n->sub[i].numel, .tile_w = w, .tile_h = h,
                   .skip = (rows - 1) * h, .pitch = cols * w, .off = (i / cols) * h * cols * w + (i % cols) * w};
}

/* filter, route: branch i's output (or output gradient) weighted. */
static gpu_mix weighted(const loom_gpu_net *gn, const gnode *n, int i, int64_t batch) {
  return (gpu_mix){.mode = GPU_MIX, .w = &gn->bufs[n->probs], .batch = batch, .len = n->numel, .n = n->n_sub,
                   .i = i, .heads = n->heads, .part = n->part, .src_stride = n->numel, .dst_stride = n->numel,
                   .w_stride = n->heads * n->n_sub};
}

int gpu_parallel_record(loom_gpu_net *gn, gpu_rec *rec, gnode *n, int64_t batch, loom_error *err) {
  int rc = LOOM_OK;
  gpu_buf *out = &gn->bufs[n->out];
  if (n->gate) rc = gpu_net_record_node(gn, rec, n->gate, batch, false, err);
  if (!rc && n->combine == FILTER) {
    gpu_softmax sm = {.rows = batch, .cols = n->n_sub, .scale = 1.0f};
    rc = gpu_op_softmax(rec, &sm, &gn->bufs[n->gate->out], &gn->bufs[n->probs], err);
  }
  if (!rc && n->combine == GRID_SCATTER) gpu_rec_zero(rec, out); /* empty tiles are 0 */
  int64_t offset = 0;
  for (int c = 0; !rc && c < n->n_sub; c++) {
    const gnode *s = &n->sub[c];
    if (n->combine == GRID_SCATTER) {
      gpu_mix m = tile_of(n, c, GPU_MIX_SCATTER, batch);
      m.src = &gn->bufs[s->out];
      m.dst = out;
      m.src_stride = s->numel;
      m.dst_stride = n->numel;
      rc = gpu_op_mix(rec, &m, err);
    } else if (n->gate) {
      /* y = p₀·out₀, then y += p_i·out_i: the CPU's acc from 0 in branch order */
      gpu_mix m = weighted(gn, n, c, batch);
      m.src = &gn->bufs[s->out];
      m.dst = out;
      m.add = c > 0;
      rc = gpu_op_mix(rec, &m, err);
    } else {
      /* concat places the branches one after another in each sample; add
       * and avg sum them in branch order, avg dividing the sum by the
       * branch count */
      gpu_segment seg = {.src = &gn->bufs[s->out], .dst = out, .batch = batch, .len = s->numel,
                         .src_stride = s->numel, .dst_stride = n->numel};
      if (n->combine == CONCAT) {
        seg.dst_off = offset;
        offset += s->numel;
      } else {
        seg.add = c > 0;
        seg.divide = n->combine == AVG && c == n->n_sub - 1 ? (uint32_t)n->n_sub : 0;
      }
      rc = gpu_op_segment(rec, &seg, err);
    }
  }
  return rc;
}

static int add_into(const gpu_parallel_bw *bw, const gnode *n, gpu_buf *dx, loom_error *err) {
  gpu_segment sum = {.src = &bw->grads[n->scratch], .dst = dx, .batch = bw->rows, .len = n->in_numel,
                     .src_stride = n->in_numel, .dst_stride = n->in_numel, .add = true};
  return gpu_op_segment(bw->rec, &sum, err);
}

/* Branch c's share of the gradient at the output into dst. */
static int record_share(const gpu_parallel_bw *bw, const gnode *n, int c, int64_t offset, gpu_buf *dst,
                        loom_error *err) {
  const gnode *s = &n->sub[c];
  gpu_buf *dy = &bw->grads[n->out];
  if (n->combine == GRID_SCATTER || n->gate) {
    gpu_mix m = n->gate ? weighted(bw->gn, n, c, bw->rows) : tile_of(n, c, GPU_MIX_GATHER, bw->rows);
    m.src = dy;
    m.dst = dst;
    m.src_stride = n->numel;
    m.dst_stride = s->numel;
    return gpu_op_mix(bw->rec, &m, err);
  }
  gpu_segment share = {.src = dy, .dst = dst, .batch = bw->rows, .len = s->numel, .src_stride = n->numel,
                       .src_off = n->combine == CONCAT ? offset : 0, .dst_stride = s->numel,
                       .divide = n->combine == AVG ? (uint32_t)n->n_sub : 0};
  return gpu_op_segment(bw->rec, &share, err);
}

/* The gate's part: dL/dp of every weight, through the softmax for filter,
 * then the gate's own backward, its input gradient added to dx. A gate
 * that passes its input through (filter on an empty sequential) gets its
 * logits' gradient straight into the scratch buffer. */
static int record_gate_backward(const gpu_parallel_bw *bw, gnode *n, int base, gpu_buf *dx, bool need_input_grad,
                                loom_error *err) {
  gnode *gt = n->gate;
  bool pass = gt->out == n->in;
  gpu_buf *scratch = &bw->grads[n->scratch];
  gpu_buf *dgate = pass ? scratch : &bw->grads[gt->out];
  gpu_buf *dp = n->combine == FILTER ? &bw->grads[n->probs] : dgate;
  int rc = LOOM_OK;
  for (int c = 0; !rc && c < n->n_sub; c++) {
    gpu_mix m = {.mode = GPU_MIX_DOT, .src = &bw->gn->bufs[n->sub[c].out], .dy = &bw->grads[n->out], .dst = dp,
                 .batch = bw->rows, .n = n->n_sub, .i = c, .heads = n->heads, .part = n->part,
                 .src_stride = n->numel};
    rc = gpu_op_mix(bw->rec, &m, err);
  }
  if (!rc && n->combine == FILTER) {
    gpu_mix m = {.mode = GPU_MIX_FILTER_DZ, .w = &bw->gn->bufs[n->probs], .dy = dp, .dst = dgate, .batch = bw->rows,
                 .n = n->n_sub};
    rc = gpu_op_mix(bw->rec, &m, err);
  }
  if (!rc && !pass) rc = bw->backward(bw->ctx, gt, base, scratch, need_input_grad, err);
  if (!rc && need_input_grad) rc = add_into(bw, n, dx, err);
  return rc;
}

int gpu_parallel_backward(const gpu_parallel_bw *bw, gnode *n, int base, gpu_buf *dx, bool need_input_grad,
                          loom_error *err) {
  int64_t offset = 0;
  int rc = LOOM_OK;
  for (int c = 0; !rc && c < n->n_sub; c++) {
    gnode *s = &n->sub[c];
    gpu_buf *branch_dx = c == 0 ? dx : &bw->grads[n->scratch];
    /* a branch that passes its input through: its share is its input's gradient */
    bool pass = s->out == n->in;
    if (!pass) rc = record_share(bw, n, c, offset, &bw->grads[s->out], err);
    else if (need_input_grad) rc = record_share(bw, n, c, offset, branch_dx, err);
    if (!rc && !pass) rc = bw->backward(bw->ctx, s, base, branch_dx, need_input_grad, err);
    offset += s->numel;
    base += loom_layer_n_weights(s->layer);
    if (!rc && c > 0 && need_input_grad) rc = add_into(bw, n, dx, err);
  }
  if (!rc && n->gate) rc = record_gate_backward(bw, n, base, dx, need_input_grad, err);
  return rc;
}
