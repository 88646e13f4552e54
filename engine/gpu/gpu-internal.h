/*
 * Internal to engine/gpu/: the device, buffers, the compute kernels and the
 * recording of dispatches into a command buffer (docs/gpu.md).
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "loom/gpu.h"
#include "loom/layer.h"
#include "loom/weights.h"

/* One entry per compute pipeline; gpu-shaders.c holds the table. */
typedef enum {
  GPU_K_GEMM_F32,
  GPU_K_GEMM_PACKED, /* B at any dtype but float32, decoded (shaders/decode.glsl) */
  GPU_K_GEMV_F32, /* the same products, one invocation per output (few rows) */
  GPU_K_GEMV_PACKED,
  GPU_K_ROWDOT_F32, /* few rows, B transposed: a workgroup per output column */
  GPU_K_ROWDOT_PACKED,
  GPU_K_ACT,
  GPU_K_SOFTMAX,
  GPU_K_COLSUM,
  GPU_K_SGD,
  GPU_K_ADAM,
  GPU_K_LOSS,
  GPU_K_NORM,
  GPU_K_EMBED,
  GPU_K_MERGE,
  GPU_K_CONV,
  GPU_K_RMSPROP,
  GPU_K_CLIP,
  GPU_K_GEMM_TILE, /* large float32 products whose operands read as vec4s: 128×128 tiles */
  GPU_K_SPARSEMAX, /* sparsemax and entmax15, forward and backward */
  GPU_K_GUMBEL,
  GPU_K_HSOFTMAX,
  GPU_K_MIX,       /* parallel's grid_scatter, filter and route (shaders/mix.comp) */
  /* The packed-weight kernels again for float64 and the 32/64-bit integer
   * codes (decode.glsl's WIDE_CODES), the rest kept free of their decode. */
  GPU_K_GEMM_WIDE,
  GPU_K_GEMV_WIDE,
  GPU_K_ROWDOT_WIDE,
  GPU_K_EMBED_WIDE,
  GPU_K_CONV_WIDE,
  GPU_K_COUNT
} gpu_kernel;

typedef struct {
  const char *name;
  const uint32_t *code;
  size_t code_bytes;
  int n_bindings;
} gpu_kernel_info;

extern const gpu_kernel_info gpu_kernels[GPU_K_COUNT];

#define GPU_PUSH_BYTES 128 /* the smallest maxPushConstantsSize Vulkan allows */

struct loom_gpu {
  VkInstance instance;
  VkPhysicalDevice phys;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  VkCommandPool cmd_pool;
  VkFence fence;
  uint32_t mem_type;   /* host-visible + coherent, device-local when there is one */
  bool mem_device_local;
  bool rowdot; /* few-row products with B transposed use the ROWDOT kernels */
  /* A float32 product of at least this many 128×128 tiles of C runs the
   * GEMM_TILE kernel (where its operands align); fewer, larger tiles leave
   * a big GPU idle on middling products. Tests lower it to reach the kernel
   * on small shapes. */
  int64_t tile_min_tiles;
  uint32_t mem_type_readback; /* host-visible + coherent, host-cached when there is one */
  VkDeviceSize max_buffer_bytes;
  VkDescriptorSetLayout set_layout[GPU_K_COUNT];
  VkPipelineLayout pipe_layout[GPU_K_COUNT];
  VkPipeline pipeline[GPU_K_COUNT];
  loom_gpu_device_info info;
  struct gpu_buf *dummy; /* bound where a kernel's optional buffer is unused */
};

/* Vulkan's result codes by name, for messages. */
const char *gpu_vk_result_name(VkResult r);
/* Sets err: "<what> failed on <device>: VK_ERROR_...". */
int gpu_vk_error(const loom_gpu *g, loom_error *err, VkResult r, const char *what);

/* A buffer mapped for the host for its whole life. */
typedef struct gpu_buf {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *map;
  size_t bytes;
} gpu_buf;

/* bytes >= 1; the size is checked against the device's limits first. `what`
 * names the buffer in messages ("the weights of layer dense at (0,0,0,0)"). */
int gpu_buf_new(loom_gpu *g, size_t bytes, const char *what, gpu_buf *out, loom_error *err);
/* The same in memory the host reads fast (cached): mapped device-local
 * memory is write-combined, and reading it from the host is slow. */
int gpu_buf_new_readback(loom_gpu *g, size_t bytes, const char *what, gpu_buf *out, loom_error *err);
void gpu_buf_free(loom_gpu *g, gpu_buf *b);

/* Dispatches recorded into one command buffer, each followed by a barrier
 * that makes its writes visible to the next. Descriptor sets come from a
 * pool sized at begin (max_dispatches). */
typedef struct {
  loom_gpu *g;
  VkCommandBuffer cmd;
  VkDescriptorPool pool;
  int n_dispatches, max_dispatches;
  bool ended;
} gpu_rec;

int gpu_rec_begin(loom_gpu *g, int max_dispatches, gpu_rec *rec, loom_error *err);
/* bufs: the kernel's n_bindings buffers in binding order. groups: x, y, z. */
int gpu_rec_dispatch(gpu_rec *rec, gpu_kernel k, const gpu_buf *const *bufs, const void *push, size_t push_bytes,
                     const uint32_t groups[3], loom_error *err);
/* Records a copy of `bytes` from src to dst after every dispatch before it. */
void gpu_rec_copy(gpu_rec *rec, const gpu_buf *src, gpu_buf *dst, size_t bytes);
int gpu_rec_end(gpu_rec *rec, loom_error *err);
/* Submits the ended command buffer and waits for it (may be called again). */
int gpu_rec_submit(gpu_rec *rec, loom_error *err);
void gpu_rec_free(gpu_rec *rec);

/* Workgroups for n items at `local` per group, as a 2-D grid (x ≤ 65535). */
void gpu_groups_1d(int64_t n, uint32_t local, uint32_t groups[3]);

/* ---- kernels (gpu-ops.c) -------------------------------------------------- */

/* A weight tensor on the device: its packed bytes exactly as the CPU's
 * store holds them (docs/dtypes.md) and its scales. */
typedef struct {
  gpu_buf data, scales;
  loom_dtype dtype;
  int64_t rows, cols;
  uint32_t ld; /* floats per row (float32) or bytes per row (packed) */
  bool per_tensor;
} gpu_weights;

/* decode.glsl's kind of a packed dtype (every dtype but float32, which the
 * kernels read as floats). */
uint32_t gpu_decode_kind(loom_dtype d);
/* Whether d's codes take the WIDE_CODES kernels: float64 and the 32/64-bit integers. */
bool gpu_wide_codes(loom_dtype d);
/* Morphs w and copies its packed bytes and scales; allocates on first use
 * (out zeroed) and reuses the buffers while the dtype and shape stay. */
int gpu_weights_upload(loom_gpu *g, loom_weights *w, gpu_weights *out, loom_error *err);
void gpu_weights_free(loom_gpu *g, gpu_weights *w);

/* C (M×N, ldc) = op(A)·op(B) [+ C] [+ bias]. A is float32 (lda floats a row,
 * transposed when ta); B is the stored tensor b (B = stored row-major when
 * !tb, its transpose when tb). bias may be NULL. */
typedef struct {
  const gpu_buf *a;
  uint32_t lda;
  bool ta;
  const gpu_weights *b;
  bool tb;
  const gpu_buf *bias;
  gpu_buf *c;
  uint32_t ldc;
  int64_t m, n, k;
  bool accumulate;
  const struct gpu_act *act; /* applied to each stored output (a forward's fused activation); NULL: none */
} gpu_gemm;
int gpu_op_gemm(gpu_rec *rec, const gpu_gemm *op, loom_error *err);
/* A float32 matrix viewed as a gpu_weights of dtype float32 (no copy). */
gpu_weights gpu_weights_view(const gpu_buf *b, int64_t rows, int64_t cols);

/* An activation layer's formula, or false when l is not one the device runs. */
typedef struct gpu_act {
  uint32_t kind, tanh_gelu;
  float p0, p1;
} gpu_act;
bool gpu_act_of(const loom_layer *l, gpu_act *out);
/* out = act(x) (dy NULL) or out = dy ⊙ act'(x), n values. */
int gpu_op_act(gpu_rec *rec, const gpu_act *a, const gpu_buf *x, const gpu_buf *dy, gpu_buf *out, int64_t n,
               loom_error *err);
/* A softmax over rows (docs/gpu.md): plain, with a temperature (scale =
 * 1 / temperature), over a grid's rows, or masked. */
typedef struct {
  int64_t rows, cols;  /* rows of the whole batch, entries a row */
  float scale;
  const gpu_buf *keep; /* masked: 1 keeps an entry, 0 masks it; NULL: nothing masked */
  int64_t keep_rows;   /* rows of keep: row r of the batch uses row r % keep_rows */
} gpu_softmax;
int gpu_op_softmax(gpu_rec *rec, const gpu_softmax *s, const gpu_buf *x, gpu_buf *y, loom_error *err);
/* dx from the forward's output y (a masked entry's y is 0: no mask needed). */
int gpu_op_softmax_backward(gpu_rec *rec, const gpu_softmax *s, const gpu_buf *y, const gpu_buf *dy, gpu_buf *dx,
                            loom_error *err);
/* sums[c] += Σ_r x[r][c] (the dense bias gradient). */
int gpu_op_colsum(gpu_rec *rec, const gpu_buf *x, gpu_buf *sums, int64_t rows, int64_t cols, loom_error *err);

#include "loom/optim.h"
/* One optimizer step of one tensor of n values, the CPU's formulas
 * (engine/train/optim.c). SGD: first = no momentum buffer yet. Adam/AdamW:
 * step counts from 1; vmax is used with amsgrad only (may be NULL otherwise). */
int gpu_op_sgd(gpu_rec *rec, const loom_optim_config *c, bool first, double lr, gpu_buf *param, const gpu_buf *grad,
               gpu_buf *mom, int64_t n, loom_error *err);
int gpu_op_adam(gpu_rec *rec, const loom_optim_config *c, int64_t step, double lr, gpu_buf *param,
                const gpu_buf *grad, gpu_buf *m, gpu_buf *v, gpu_buf *vmax, int64_t n, loom_error *err);
/* Clipping by the global norm (shaders/clip.comp): mode 0 sums one tensor's
 * squares into sums[index], mode 1 makes scale = [coef, norm] from the
 * n_tensors sums, mode 2 multiplies one tensor's gradient by coef. */
int gpu_op_clip(gpu_rec *rec, int mode, gpu_buf *grad, int64_t n, int index, gpu_buf *sums, gpu_buf *scale,
                int n_tensors, double max_norm, loom_error *err);
/* RMSprop: mom used with momentum > 0, grad_avg when centered (else may be NULL). */
int gpu_op_rmsprop(gpu_rec *rec, const loom_optim_config *c, double lr, gpu_buf *param, const gpu_buf *grad,
                   gpu_buf *mom, gpu_buf *square_avg, gpu_buf *grad_avg, int64_t n, loom_error *err);

/* layernorm / rmsnorm over rows of d values (shaders/norm.comp). w, b
 * may be NULL (no affine, or rmsnorm's missing bias); stats holds 2 floats
 * a row, written by the forward and read by both backward passes. */
typedef struct {
  bool layernorm;
  float eps;
  int64_t rows, d;
  const gpu_buf *w, *b;
  gpu_buf *stats;
} gpu_norm;
int gpu_op_norm_forward(gpu_rec *rec, const gpu_norm *n, const gpu_buf *x, gpu_buf *y, loom_error *err);
int gpu_op_norm_backward(gpu_rec *rec, const gpu_norm *n, const gpu_buf *x, const gpu_buf *dy, gpu_buf *dx,
                         loom_error *err);
/* dw = Σ_rows dy·x̂ and db = Σ_rows dy, written whole (db may be NULL). */
int gpu_op_norm_params(gpu_rec *rec, const gpu_norm *n, const gpu_buf *x, const gpu_buf *dy, gpu_buf *dw,
                       gpu_buf *db, loom_error *err);

/* y = table[x[t]] for `tokens` indices (checked on the host), or with dy
 * the table gradient dtable[x[t]] += dy[t], tokens ascending (out: dtable,
 * zeroed by the caller for a fresh gradient). */
int gpu_op_embed(gpu_rec *rec, const gpu_weights *table, const gpu_buf *x, const gpu_buf *dy, gpu_buf *out,
                 int64_t tokens, loom_error *err);

/* A segment of a merge: for every sample b < batch,
 * dst[b·dst_stride + dst_off + j] (= or +=) src[b·src_stride + src_off + j], j < len. */
typedef struct {
  const gpu_buf *src;
  gpu_buf *dst;
  int64_t batch, len, src_stride, src_off, dst_stride, dst_off;
  bool add;
  uint32_t divide; /* > 0: the result divided by it (a parallel container's avg) */
} gpu_segment;
int gpu_op_segment(gpu_rec *rec, const gpu_segment *s, loom_error *err);

/* shaders/mix.comp: the combine modes of a parallel container beyond
 * concat/add/avg, for branch i of n. The fields each mode reads are named
 * in the shader; unused buffers may be NULL. */
typedef enum { GPU_MIX, GPU_MIX_DOT, GPU_MIX_FILTER_DZ, GPU_MIX_SCATTER, GPU_MIX_GATHER } gpu_mix_mode;
typedef struct {
  gpu_mix_mode mode;
  const gpu_buf *src, *w, *dy;
  gpu_buf *dst;
  int64_t batch, len, n, i, heads, part, src_stride, dst_stride, w_stride;
  bool add;
  int64_t tile_w, tile_h, skip, pitch, off;
} gpu_mix;
int gpu_op_mix(gpu_rec *rec, const gpu_mix *m, loom_error *err);

/* A convolution (conv1d/2d/3d), spatial sizes padded to 3 dimensions with
 * leading 1s (shaders/conv.comp): cin, img are the image side (a
 * convolution's input, a transposed one's output), cout, pos the positions
 * side whose channels are the weight's rows. */
typedef struct {
  uint32_t cin, cout, groups;
  uint32_t img[3], pos[3], k[3], s[3], pad[3], d[3];
} gpu_conv;
typedef enum { GPU_CONV_FORWARD, GPU_CONV_DX, GPU_CONV_DW, GPU_CONV_DB } gpu_conv_mode;
/* FORWARD: out = conv(in) [+ bias]; DX: out = the input gradient of dy;
 * DW: out = the weight gradient from in (x) and dy; DB: out = the bias
 * gradient of dy. Gradients are written whole. */
int gpu_op_conv(gpu_rec *rec, const gpu_conv *c, gpu_conv_mode mode, int64_t batch, const gpu_weights *w,
                const gpu_buf *bias, const gpu_buf *in, const gpu_buf *dy, gpu_buf *out, loom_error *err);

#include "loom/loss.h"
/* dy = ∂loss/∂y of the network output y (rows × cols) for mse, cross_entropy
 * (targets: int32 labels, one a row) or bce_logits (float targets), mean
 * reduction over `valid` rows; rows from valid on get dy = 0. Other losses
 * are refused naming the loss. */
int gpu_op_loss_grad(gpu_rec *rec, const loom_loss_spec *spec, const gpu_buf *y, const gpu_buf *targets, gpu_buf *dy,
                     int64_t rows, int64_t valid, int64_t cols, loom_error *err);

/* ---- a network on the device (gpu-net.c) ---------------------------------- */

typedef enum {
  GN_PASS,
  GN_DENSE,
  GN_ACT,
  GN_SOFTMAX,
  GN_NORM,
  GN_EMBED,
  GN_CONV,
  GN_CONTAINER,
  GN_SPARSE,   /* sparsemax, entmax15 (gpu-softmax.c) */
  GN_GUMBEL,   /* gumbel_softmax */
  GN_HSOFTMAX, /* hierarchical_softmax */
} gnode_kind;

/* One plan node, or a container's child. Sizes are per sample, so one
 * preparation serves every batch up to the one its buffers were made for. */
typedef struct gnode {
  gnode_kind kind;
  loom_layer *layer;
  int in, out; /* activation buffers: 0 is the network input */
  gpu_weights w, b;
  bool has_bias;
  int64_t pos, n, k; /* dense: rows per sample (positions), out, in features;
                        embedding: tokens per sample, dim, vocab */
  gpu_act act;
  int64_t numel;        /* values of the output per sample */
  int64_t rows, cols;   /* softmax, norm: rows per sample, entries a row */
  float scale;          /* softmax: 1 / temperature */
  gpu_buf keep;         /* masked softmax: the mask, keep_rows rows of cols (none: no buffer) */
  int64_t keep_rows;
  bool layernorm, has_weight; /* norm */
  float eps;
  gpu_buf stats;        /* norm: mean and rstd of every row of the batch */
  gpu_conv conv;        /* conv1d/2d/3d; transposed: the image side is the output */
  bool transposed;
  /* gpu-softmax.c: entmax15 (else sparsemax); a hard Gumbel softmax; the
   * Gumbel noise (two floats an entry), a hard one's relaxed sample or a
   * hierarchical softmax's q, P and U (aux); the tree (blocks inner nodes) */
  bool entmax, hard;
  gpu_buf noise, aux, tree;
  int64_t blocks;
  /* Remote links: the node reads buffer `in`, its own, made from the spine
   * input (buffer `base`) and the merges that take effect: those after the
   * last replace (a replace discards what came before it, on the CPU too),
   * the replace itself first. */
  int base;
  int64_t in_numel, base_numel; /* per sample */
  int n_merges;
  struct gmerge {
    int src;           /* activation buffer of the link's source */
    loom_merge mode;
    int64_t src_numel, before_numel;
  } *merges;
  bool base_used;      /* no replace: the spine input is the merge's start */
  /* Forward only (gpu_net_record_forward with fuse): a dense layer whose
   * output only an activation reads stores that activation's output itself
   * (fuse_act: the activation's node, else -1), and the activation's node
   * records nothing (fused). */
  int fuse_act;
  bool fused;
  /* Containers (gpu-container.c): a node for each child, and whether the
   * container adds its input to their chain's output (residual), or runs
   * them as branches on its input (parallel: combine as parallel.c, 0
   * concat, 1 add, 2 avg, 3 grid_scatter, 4 filter, 5 route; the gradient
   * of a branch's input goes through buffer `scratch`). */
  struct gnode *sub;
  int n_sub;
  bool residual, parallel;
  int combine, scratch;
  /* filter and route (gpu-parallel.c): the gate's node, the buffer of the
   * branches' weights (filter: the softmax of the gate's logits, a buffer
   * of its own; route: the gate's output), heads rows of n_sub weights a
   * sample, each mixing `part` consecutive outputs. */
  struct gnode *gate;
  int probs;
  int64_t heads, part;
  /* grid_scatter: a branch's output as tile_c × tile_h × tile_w, the grid
   * grid_rows × grid_cols of them */
  int64_t tile_c, tile_h, tile_w, grid_rows, grid_cols;
} gnode;

/* What the host checks after a submission, in the CPU's order of execution
 * (gpu-check.c): the token indices of an embedding that a layer computed,
 * and a filter's or route's gate output being finite. */
typedef enum { GPU_CHECK_TOKENS, GPU_CHECK_FILTER_GATE, GPU_CHECK_ROUTE_GATE } gpu_check_kind;
typedef struct {
  gpu_check_kind kind;
  const gnode *node;
} gpu_check;

struct loom_gpu_net {
  loom_gpu *g;
  loom_net *net;
  int64_t batch, in_numel, out_numel;
  int n_nodes;
  gnode *nodes;
  int n_bufs, out_buf;
  gpu_buf *bufs;
  gpu_buf readback; /* the output, copied here by the command buffer */
  gpu_rec rec;
  uint64_t seed, step; /* the Gumbel softmax's noise: the CPU context's seed and step */
  gpu_check *checks; /* after each submission, in order */
  int n_checks, checks_cap;
};

/* gpu-check.c. The CPU's embedding check (engine/layers/embedding.c) of
 * count indices, t_len a sample, for the layer l: the first index that is
 * no integer, or is outside [0, vocab), is an error naming l, the sample
 * and the position, with the CPU's message and code. */
int gpu_check_tokens(const loom_layer *l, const float *x, int64_t count, int64_t t_len, int64_t vocab,
                     loom_error *err);
/* Appends a check (the node lives as long as gn). */
int gpu_net_add_check(loom_gpu_net *gn, gpu_check_kind kind, const gnode *n, loom_error *err);
/* Runs gn's checks on the buffers of the last submission of `batch`
 * samples; an error carries the prefixes the CPU's containers add
 * ("layer parallel at (0,1,0,0), branch 2: …"). */
int gpu_net_run_checks(const loom_gpu_net *gn, int64_t batch, loom_error *err);
/* A training step's forward alone (unfused, into rec, recorded anew),
 * submitted, then the checks: the step goes on only when they pass. */
int gpu_net_forward_checked(loom_gpu_net *gn, gpu_rec *rec, int64_t batch, loom_error *err);

/* Checks the token indices of every embedding that reads the network input
 * x (batch samples) before a submission, as gpu_check_tokens (the CPU's
 * check); embeddings whose indices a layer computed are checked after it
 * (gpu_net_run_checks). */
int gpu_net_check_input(const loom_gpu_net *gn, const float *x, int64_t batch, loom_error *err);
/* The norm operation of a GN_NORM node at `batch` samples. */
gpu_softmax gpu_node_softmax(const gnode *n, int64_t batch);
gpu_norm gpu_node_norm(gnode *n, int64_t batch);
struct net_node;
/* What node nd is (its kind and sizes), or an error naming its slot. */
int gpu_net_classify(const struct net_node *nd, gnode *out, loom_error *err);
/* One node's forward (not its merges); fuse as gpu_net_record_forward. */
int gpu_net_record_node(loom_gpu_net *gn, gpu_rec *rec, gnode *n, int64_t batch, bool fuse, loom_error *err);
/* One node's weights (and a masked softmax's mask) onto the device. */
int gpu_net_upload_node(loom_gpu_net *gn, gnode *n, loom_error *err);
void gpu_gnode_free(loom_gpu *g, gnode *n);

/* Containers (gpu-container.c). The buffers a layer's children need (0 for
 * a layer that is no container), to size gn->bufs. */
int gpu_container_buffers(const loom_layer *l);
/* After classification: the children's nodes and buffers, from n->in; sets n->out. */
int gpu_container_setup(loom_gpu_net *gn, gnode *n, loom_error *err);
int gpu_container_dispatches(const gnode *n);
/* The forward dispatches of any node (0 for a pass-through). */
int gpu_node_dispatches(const gnode *n);
int gpu_container_record(loom_gpu_net *gn, gpu_rec *rec, gnode *n, int64_t batch, loom_error *err);
int gpu_container_upload(loom_gpu_net *gn, gnode *n, loom_error *err);
void gpu_container_free(loom_gpu *g, gnode *n);
/* A child (or gate) of a container, from buffer `in`: classified, its
 * buffers made and its checks added. */
int gpu_container_child(loom_gpu_net *gn, loom_layer *child, int in, gnode *s, loom_error *err);

/* Parallel containers (gpu-parallel.c): the sizes of the combine modes
 * after classification, the forward's combine (the branches and the gate
 * recorded before it), and the backward (gpu-train.c's, through the
 * callback that records one child's backward). */
int gpu_parallel_classify(const loom_layer *l, gnode *out, loom_error *err);
int gpu_parallel_setup(loom_gpu_net *gn, gnode *n, loom_error *err);
int gpu_parallel_record(loom_gpu_net *gn, gpu_rec *rec, gnode *n, int64_t batch, loom_error *err);
int gpu_parallel_dispatches(const gnode *n);
/* The gradient of a node's input, given the gradient at its output. */
typedef int (*gpu_backward_fn)(void *ctx, gnode *n, int base, gpu_buf *dx, bool need_input_grad, loom_error *err);
typedef struct {
  loom_gpu_net *gn;
  gpu_rec *rec;
  gpu_buf *grads; /* per activation buffer */
  int64_t rows;
  gpu_backward_fn backward;
  void *ctx;
} gpu_parallel_bw;
int gpu_parallel_backward(const gpu_parallel_bw *bw, gnode *n, int base, gpu_buf *dx, bool need_input_grad,
                          loom_error *err);

/* The most dispatches gpu_net_record_forward records. */
int gpu_net_forward_dispatches(const loom_gpu_net *gn);
/* Records the forward of `batch` samples (≤ gn->batch) into rec: one
 * dispatch per enabled node, or with fuse a dense layer and the activation
 * after it as one (the dense layer's own output is then not stored: a
 * training step, whose backward reads it, records without fusing). */
int gpu_net_record_forward(loom_gpu_net *gn, gpu_rec *rec, int64_t batch, bool fuse, loom_error *err);
/* Records a fill of a whole buffer with zeros, visible to later dispatches. */
void gpu_rec_zero(gpu_rec *rec, gpu_buf *b);

/* ---- the rest of the softmax family (gpu-softmax.c) ------------------------ */

/* "<what> of <n> values is more than the device kernels index" (gpu-ops.c). */
int gpu_too_large(const char *what, int64_t n, loom_error *err);
/* sparsemax / entmax15 over rows of cols (shaders/sparsemax.comp): the
 * forward y from x (dy NULL), or the backward dx from the forward's y and dy. */
int gpu_op_sparsemax(gpu_rec *rec, bool entmax, int64_t rows, int64_t cols, const gpu_buf *in, const gpu_buf *dy,
                     gpu_buf *out, loom_error *err);
/* gumbel_softmax's forward (shaders/gumbel.comp): noise holds two floats an
 * entry (gpu_gumbel_noise); hard: the relaxed sample into soft and the
 * one-hot argmax into y (soft unused otherwise, may be NULL). The backward
 * is gpu_op_softmax_backward of the relaxed sample with scale 1/τ. */
int gpu_op_gumbel(gpu_rec *rec, int64_t rows, int64_t cols, float scale, bool hard, const gpu_buf *x,
                  const gpu_buf *noise, gpu_buf *y, gpu_buf *soft, loom_error *err);
/* The noise of gumbel_softmax layer l for entries [0, n) of a batch at a
 * context's seed and step, drawn by the CPU's generator: out[2e] = float(g),
 * out[2e + 1] = float(g − out[2e]). */
void gpu_gumbel_noise(const loom_layer *l, uint64_t seed, uint64_t step, int64_t n, float *out);
/* hierarchical_softmax (shaders/hsoftmax.comp) over `rows` rows; tree and
 * aux as made by gpu_hsoftmax_tree (aux: 3·logits floats a row). The
 * backward (dy non-NULL) reads the q and P its forward left in aux. */
typedef struct {
  int64_t rows, logits, leaves, blocks;
  const gpu_buf *tree;
  gpu_buf *aux;
} gpu_hsoftmax;
int gpu_op_hsoftmax(gpu_rec *rec, const gpu_hsoftmax *h, const gpu_buf *in, const gpu_buf *dy, gpu_buf *out,
                    loom_error *err);
/* Fills the tree buffer of hierarchical_softmax layer l (made on first
 * use; its size follows from the built shapes, which hsoftmax_tree checks
 * the tree against); *blocks: its inner nodes. */
int gpu_hsoftmax_tree(loom_gpu *g, const loom_layer *l, gpu_buf *tree, int64_t *blocks, loom_error *err);

/* Node level, for gpu-net.c and gpu-train.c: the buffers a node of these
 * kinds needs (made on first use), its forward, its backward (dx from y and
 * dy), and the noise of every Gumbel softmax in gn (containers' children
 * too) for `batch` samples at gn->seed and gn->step. */
int gpu_softmax_node_upload(loom_gpu_net *gn, gnode *n, loom_error *err);
int gpu_softmax_node_forward(gpu_rec *rec, gnode *n, const gpu_buf *x, gpu_buf *y, int64_t batch, loom_error *err);
int gpu_softmax_node_backward(gpu_rec *rec, gnode *n, const gpu_buf *y, const gpu_buf *dy, gpu_buf *dx,
                              int64_t batch, loom_error *err);
void gpu_softmax_fill_noise(loom_gpu_net *gn, int64_t batch);
void gpu_softmax_node_free(loom_gpu *g, gnode *n);
