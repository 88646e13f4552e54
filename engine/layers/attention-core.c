/*
 * The inner work of attention.c: sizes, buffers, rotary embedding and the
 * attention itself (scores, masks, softmax, weighted values) with its
 * backward. Per (sample, head) everything is a loom_sgemm over strided rows,
 * and heads of a group add their key/value gradients in ascending order, so
 * results do not depend on the thread count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "kernels/matmul.h"
#include "layers/attention-impl.h"

int64_t att_kv_heads(const loom_layer *l) {
  int64_t kv = layer_int(l, P_KV_HEADS);
  return kv > 0 ? kv : layer_int(l, P_HEADS);
}

int64_t att_head_dim(const loom_layer *l) {
  int64_t hd = layer_int(l, P_HEAD_DIM);
  return hd > 0 ? hd : layer_int(l, P_D) / layer_int(l, P_HEADS);
}

att_dims att_dims_of(const loom_layer *l) {
  att_dims g = {layer_int(l, P_D), layer_int(l, P_HEADS), att_kv_heads(l), att_head_dim(l), 0, 0};
  if (g.hd < 1) g.hd = 1;
  g.qw = g.h * g.hd;
  g.kw = g.kv * g.hd;
  return g;
}

int64_t att_steps(const loom_layer *l) { return l->in_shape.rank == 2 ? l->in_shape.d[0] : 1; }

int att_bias_index(const loom_layer *l) { return layer_int(l, P_BIAS) ? 4 : -1; }

int att_norm_index(const loom_layer *l) {
  if (!layer_int(l, P_QK_NORM)) return -1;
  return layer_int(l, P_BIAS) ? 8 : 4;
}

att_state *att_get_state(loom_layer *l, loom_error *err) {
  if (!l->state) l->state = calloc(1, sizeof(att_state));
  if (!l->state) loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory running a %s layer"), l->type->name);
  return l->state;
}

void att_free_state(loom_layer *l) {
  att_state *s = l->state;
  if (!s) return;
  float *bufs[] = {s->q,  s->q_raw, s->q_rstd, s->k_new, s->k_raw, s->k_rstd, s->v_new,    s->k,       s->v,
                   s->p,  s->o,     s->d_o,    s->dq,    s->dk,    s->dv,     s->dp,       s->rope_cos, s->rope_sin};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
  free(s->mask);
  free(s);
  l->state = NULL;
}

/* Grows a group of buffers to n values each; realloc keeps the contents (the KV cache relies on it). */
static int grow(const loom_layer *l, int64_t *cap, int64_t n, float **bufs[], int count, loom_error *err) {
  char where[128];
  if (n <= *cap && *bufs[0]) return LOOM_OK;
  for (int i = 0; i < count; i++) {
    float *p = realloc(*bufs[i], (size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!p) {
      *cap = 0;
      return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for %lld values"),
                            layer_where(l, where, sizeof where), (long long)n);
    }
    *bufs[i] = p;
  }
  *cap = n;
  return LOOM_OK;
}

/* a·b·c with an overflow check against the largest buffer a float count may have. */
static bool product(int64_t a, int64_t b, int64_t c, int64_t *out) {
  const int64_t lim = (int64_t)(SIZE_MAX / sizeof(float) / 2);
  if (a < 0 || b < 0 || c < 0) return false;
  if (a && b > lim / a) return false;
  if (a * b != 0 && c > lim / (a * b)) return false;
  *out = a * b * c;
  return true;
}

int att_reserve(loom_layer *l, att_state *s, int64_t batch, int64_t steps, int64_t keys, int64_t kv_steps,
                loom_error *err) {
  char where[128];
  att_dims g = att_dims_of(l);
  int64_t rows, nq, nk, nkv, np, ndp, nqr, nkr, nrope;
  bool ok = product(batch, steps, 1, &rows) && product(rows, g.qw, 1, &nq) && product(rows, g.kw, 1, &nk) &&
            product(batch, kv_steps, g.kw, &nkv) && product(rows, g.h, keys, &np) && product(steps, keys, 1, &ndp) &&
            product(rows, g.h, 1, &nqr) && product(rows, g.kv, 1, &nkr) && product(steps, g.hd, 1, &nrope);
  if (!ok)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: a batch of %lld sequences of %lld steps is too large"),
                          layer_where(l, where, sizeof where), (long long)batch, (long long)steps);
  int rc = grow(l, &s->cap_q, nq, (float **[]){&s->q, &s->q_raw, &s->o, &s->d_o, &s->dq}, 5, err);
  if (!rc) rc = grow(l, &s->cap_kn, nk, (float **[]){&s->k_new, &s->k_raw, &s->v_new, &s->dk, &s->dv}, 5, err);
  if (!rc) rc = grow(l, &s->cap_qr, nqr, (float **[]){&s->q_rstd}, 1, err);
  if (!rc) rc = grow(l, &s->cap_kr, nkr, (float **[]){&s->k_rstd}, 1, err);
  if (!rc) rc = grow(l, &s->cap_kv, nkv, (float **[]){&s->k, &s->v}, 2, err);
  if (!rc) rc = grow(l, &s->cap_p, np, (float **[]){&s->p}, 1, err);
  if (!rc) rc = grow(l, &s->cap_dp, ndp, (float **[]){&s->dp}, 1, err);
  if (!rc) rc = grow(l, &s->cap_rope, nrope, (float **[]){&s->rope_cos, &s->rope_sin}, 2, err);
  return rc;
}

void att_rope_table(const loom_layer *l, att_state *s, int64_t offset, int64_t steps) {
  int64_t hd = att_head_dim(l), half = hd / 2;
  double base = layer_float(l, P_ROPE_BASE);
  for (int64_t t = 0; t < steps; t++)
    for (int64_t j = 0; j < half; j++) {
      double angle = (double)(offset + t) * pow(base, -2.0 * (double)j / (double)hd);
      s->rope_cos[t * half + j] = (float)cos(angle);
      s->rope_sin[t * half + j] = (float)sin(angle);
    }
}

void att_rope_apply(const loom_layer *l, const att_state *s, float *v, int64_t batch, int64_t steps, int64_t nh,
                    float sign) {
  int64_t hd = att_head_dim(l), half = hd / 2;
  bool interleaved = layer_int(l, P_ROPE) == ATT_ROPE_INTERLEAVED;
  for (int64_t b = 0; b < batch; b++)
    for (int64_t t = 0; t < steps; t++) {
      const float *c = s->rope_cos + t * half, *sn = s->rope_sin + t * half;
      for (int64_t h = 0; h < nh; h++) {
        float *p = v + ((b * steps + t) * nh + h) * hd;
        for (int64_t j = 0; j < half; j++) {
          int64_t i1 = interleaved ? 2 * j : j, i2 = interleaved ? 2 * j + 1 : j + half;
          float x1 = p[i1], x2 = p[i2], sj = sign * sn[j];
          p[i1] = x1 * c[j] - x2 * sj;
          p[i2] = x1 * sj + x2 * c[j];
        }
      }
    }
}

/* Row softmax over `keys` scores of query i (absolute position pos), with the
 * causal and key-padding masks; a row with no visible key becomes zeros. */
static void softmax_row(float *row, int64_t keys, int64_t pos, bool causal, const uint8_t *pad, float scale) {
  int64_t visible = causal ? (pos + 1 < keys ? pos + 1 : keys) : keys;
  float mx = -INFINITY;
  for (int64_t j = 0; j < visible; j++)
    if (!(pad && pad[j]) && row[j] * scale > mx) mx = row[j] * scale;
  if (mx == -INFINITY) {
    memset(row, 0, (size_t)keys * sizeof *row);
    return;
  }
  double sum = 0.0;
  for (int64_t j = 0; j < keys; j++) {
    float e = j < visible && !(pad && pad[j]) ? expf(row[j] * scale - mx) : 0.0f;
    row[j] = e;
    sum += e;
  }
  float inv = (float)(1.0 / sum);
  for (int64_t j = 0; j < keys; j++) row[j] *= inv;
}

void att_scores(const loom_layer *l, att_state *s, loom_pool *pool) {
  att_dims g = att_dims_of(l);
  int64_t steps = s->steps, keys = s->keys, group = g.h / g.kv;
  float scale = (float)(1.0 / sqrt((double)g.hd));
  bool causal = layer_int(l, P_CAUSAL) != 0;
  for (int64_t b = 0; b < s->batch; b++) {
    const uint8_t *pad = s->mask_batch > 0 ? s->mask + b * s->mask_keys : NULL;
    for (int64_t h = 0; h < g.h; h++) {
      const float *qh = s->q + b * steps * g.qw + h * g.hd;
      const float *kg = s->k + b * s->kv_steps * g.kw + (h / group) * g.hd;
      const float *vg = s->v + b * s->kv_steps * g.kw + (h / group) * g.hd;
      float *p = s->p + (b * g.h + h) * steps * keys;
      loom_sgemm(pool, false, true, steps, keys, g.hd, qh, g.qw, kg, g.kw, false, p, keys);
      for (int64_t i = 0; i < steps; i++) softmax_row(p + i * keys, keys, s->offset + i, causal, pad, scale);
      loom_sgemm(pool, false, false, steps, g.hd, keys, p, keys, vg, g.kw, false, s->o + b * steps * g.qw + h * g.hd,
                 g.qw);
    }
  }
}

void att_scores_backward(const loom_layer *l, att_state *s, loom_pool *pool) {
  att_dims g = att_dims_of(l);
  int64_t steps = s->steps, keys = s->keys, group = g.h / g.kv;
  float scale = (float)(1.0 / sqrt((double)g.hd));
  for (int64_t b = 0; b < s->batch; b++)
    for (int64_t h = 0; h < g.h; h++) {
      int64_t kvh = h / group;
      bool first = h % group == 0;
      const float *qh = s->q + b * steps * g.qw + h * g.hd;
      const float *kg = s->k + b * s->kv_steps * g.kw + kvh * g.hd;
      const float *vg = s->v + b * s->kv_steps * g.kw + kvh * g.hd;
      const float *doh = s->d_o + b * steps * g.qw + h * g.hd;
      const float *p = s->p + (b * g.h + h) * steps * keys;
      float *dp = s->dp;
      loom_sgemm(pool, false, true, steps, keys, g.hd, doh, g.qw, vg, g.kw, false, dp, keys);
      for (int64_t i = 0; i < steps; i++) {
        const float *pi = p + i * keys;
        float *di = dp + i * keys;
        double dot = 0.0;
        for (int64_t j = 0; j < keys; j++) dot += (double)pi[j] * di[j];
        for (int64_t j = 0; j < keys; j++) di[j] = pi[j] * (di[j] - (float)dot) * scale;
      }
      loom_sgemm(pool, false, false, steps, g.hd, keys, dp, keys, kg, g.kw, false, s->dq + b * steps * g.qw + h * g.hd,
                 g.qw);
      loom_sgemm(pool, true, false, keys, g.hd, steps, dp, keys, qh, g.qw, !first, s->dk + b * steps * g.kw + kvh * g.hd,
                 g.kw);
      loom_sgemm(pool, true, false, keys, g.hd, steps, p, keys, doh, g.qw, !first, s->dv + b * steps * g.kw + kvh * g.hd,
                 g.kw);
    }
}
