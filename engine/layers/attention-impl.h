/* Internal to attention.c and attention-core.c: parameters, weights, the
 * per-layer state (caches for backward and the KV cache) and the kernels. */
#pragma once
#include <stdint.h>

#include "layers/layer-impl.h"
#include "loom/pool.h"

enum { P_D, P_HEADS, P_KV_HEADS, P_HEAD_DIM, P_CAUSAL, P_BIAS, P_ROPE, P_ROPE_BASE, P_QK_NORM, P_QK_EPS, P_CACHE };
/* Weights: the four projections, then (bias) their biases q k v o, then (qk_norm) q_norm, k_norm. */
enum { W_Q, W_K, W_V, W_O };
enum { ATT_ROPE_NONE, ATT_ROPE_HALF, ATT_ROPE_INTERLEAVED };

#define ATT_MAX_W 10
#define ATT_MAX_FEATURES 1048576.0

typedef struct att_dims {
  int64_t d, h, kv, hd, qw, kw; /* qw = h·hd, kw = kv·hd */
} att_dims;

typedef struct att_state {
  int64_t batch, steps, offset, keys, kv_steps; /* of the last forward */
  int64_t len, cache_batch;                     /* KV cache: steps held, for this batch */
  float *q, *q_raw, *q_rstd, *k_new, *k_raw, *k_rstd, *v_new; /* rows of the last call */
  float *k, *v;                                 /* batch × kv_steps × kw: the cache, or this call's keys */
  float *p;                                     /* batch × heads × steps × pad16(keys): probabilities */
  float *o, *d_o, *dq, *dk, *dv;
  float *rope_cos, *rope_sin;                   /* steps × head_dim/2 */
  float *work;                                  /* att_work_size() values per batch × kv_heads unit */
  int64_t cap_q, cap_qr, cap_kn, cap_kr, cap_kv, cap_p, cap_work, cap_rope;
  uint8_t *mask;                                /* key padding: mask_batch × mask_keys */
  int64_t mask_batch, mask_keys;
} att_state;

int64_t att_kv_heads(const loom_layer *l);
int64_t att_head_dim(const loom_layer *l);
att_dims att_dims_of(const loom_layer *l);
int64_t att_steps(const loom_layer *l);
int att_bias_index(const loom_layer *l); /* first bias weight, or -1 */
int att_norm_index(const loom_layer *l); /* q_norm weight, or -1 */
att_state *att_get_state(loom_layer *l, loom_error *err);
void att_free_state(loom_layer *l);
int att_reserve(loom_layer *l, att_state *s, int64_t batch, int64_t steps, int64_t keys, int64_t kv_steps,
                loom_error *err);
void att_rope_table(const loom_layer *l, att_state *s, int64_t offset, int64_t steps);
/* Rotates every head vector of batch × steps rows by its position; sign −1 rotates back. */
void att_rope_apply(const loom_layer *l, const att_state *s, float *v, int64_t batch, int64_t steps, int64_t nh,
                    float sign);
/* Scores, masks, softmax into s->p and the heads' outputs into s->o. */
void att_scores(const loom_layer *l, att_state *s, loom_pool *pool);
/* From s->d_o: s->dq, s->dk, s->dv (rows of the last call). */
void att_scores_backward(const loom_layer *l, att_state *s, loom_pool *pool);
