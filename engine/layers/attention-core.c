/*
 * The inner work of attention.c: sizes, buffers, rotary embedding and the
 * attention itself (scores, masks, softmax, weighted values) with its
 * backward. The work is split into units of one sample and one key/value
 * head (with the query heads of its group, in ascending order); a unit packs
 * its keys and values once and runs blocks of ATT_BLOCK query rows through
 * the kernels of attention-kernels.h, skipping the keys a causal mask hides.
 * No unit reads another's outputs, so results do not depend on the thread
 * count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "layers/attention-impl.h"
#include "layers/attention-kernels.h"

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
  float *bufs[] = {s->q, s->q_raw, s->q_rstd, s->k_new, s->k_raw, s->k_rstd, s->v_new,    s->k,       s->v,
                   s->p, s->o,     s->d_o,    s->dq,    s->dk,    s->dv,     s->rope_cos, s->rope_sin, s->work};
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

/* The scratch of one unit: the larger of the forward's and the backward's
 * (see unit_forward and unit_backward). */
static bool att_work_size(int64_t steps, int64_t keys, int64_t hd, int64_t *out) {
  int64_t kp = att_pad16(keys), hp = att_pad16(hd), a, b, c, d, e;
  if (!(product(hd, kp, 1, &a) && product(keys, hp, 1, &b) && product(steps, hp, 1, &c) &&
        product(steps, kp, 1, &d) && product(ATT_BLOCK, kp + hp, 1, &e)))
    return false;
  const int64_t part = INT64_MAX / 16; /* the sum of 8 parts stays an int64 */
  if (a > part || b > part || c > part || d > part || e > part) return false;
  int64_t fwd = a + b + e, bwd = a + 3 * b + 2 * c + d + e;
  *out = fwd > bwd ? fwd : bwd;
  return true;
}

int att_reserve(loom_layer *l, att_state *s, int64_t batch, int64_t steps, int64_t keys, int64_t kv_steps,
                loom_error *err) {
  char where[128];
  att_dims g = att_dims_of(l);
  int64_t rows, nq, nk, nkv, np, nunit, nwork, nqr, nkr, nrope;
  bool ok = keys < INT64_MAX / 2 && g.hd < INT64_MAX / 2 && product(batch, steps, 1, &rows) &&
            product(rows, g.qw, 1, &nq) && product(rows, g.kw, 1, &nk) && product(batch, kv_steps, g.kw, &nkv) &&
            product(rows, g.h, att_pad16(keys), &np) && att_work_size(steps, keys, g.hd, &nunit) &&
            product(batch, g.kv, nunit, &nwork) && product(rows, g.h, 1, &nqr) && product(rows, g.kv, 1, &nkr) &&
            product(steps, g.hd, 1, &nrope);
  if (!ok)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: a batch of %lld sequences of %lld steps is too large"),
                          layer_where(l, where, sizeof where), (long long)batch, (long long)steps);
  int rc = grow(l, &s->cap_q, nq, (float **[]){&s->q, &s->q_raw, &s->o, &s->d_o, &s->dq}, 5, err);
  if (!rc) rc = grow(l, &s->cap_kn, nk, (float **[]){&s->k_new, &s->k_raw, &s->v_new, &s->dk, &s->dv}, 5, err);
  if (!rc) rc = grow(l, &s->cap_qr, nqr, (float **[]){&s->q_rstd}, 1, err);
  if (!rc) rc = grow(l, &s->cap_kr, nkr, (float **[]){&s->k_rstd}, 1, err);
  if (!rc) rc = grow(l, &s->cap_kv, nkv, (float **[]){&s->k, &s->v}, 2, err);
  if (!rc) rc = grow(l, &s->cap_p, np, (float **[]){&s->p}, 1, err);
  if (!rc) rc = grow(l, &s->cap_work, nwork, (float **[]){&s->work}, 1, err);
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

/* Where query row i (absolute position offset + i) stops seeing keys. */
static int64_t visible_keys(int64_t i, int64_t offset, int64_t keys, bool causal) {
  return causal && offset + i + 1 < keys ? offset + i + 1 : keys;
}

/* A head's rows [0, n) (stride *ld, hd values) as the kernels read them: in
 * place when hd is a multiple of 16, else copied into rows of hp zero-padded
 * values (then *ld = hp). */
static const float *head_rows(const float *src, int64_t *ld, int64_t n, int64_t hd, int64_t hp, float *buf) {
  if (hd == hp) return src;
  for (int64_t i = 0; i < n; i++) {
    memcpy(buf + i * hp, src + i * *ld, (size_t)hd * sizeof *buf);
    memset(buf + i * hp + hd, 0, (size_t)(hp - hd) * sizeof *buf);
  }
  *ld = hp;
  return buf;
}

/* The transpose of a head's rows [0, n): hd rows of kp values, zero-padded.
 * Tiles of 8 × 8 through a local block keep both the reads and the writes
 * within a few cache lines at a time. */
static void head_columns(const float *restrict src, int64_t ld, int64_t n, int64_t hd, int64_t kp,
                         float *restrict dst) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    int64_t d = 0;
    for (; d + 8 <= hd; d += 8) {
      float tile[8][8];
      for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) tile[b][a] = src[(j + a) * ld + d + b];
      for (int b = 0; b < 8; b++) memcpy(dst + (d + b) * kp + j, tile[b], sizeof tile[b]);
    }
    for (; d < hd; d++)
      for (int a = 0; a < 8; a++) dst[d * kp + j + a] = src[(j + a) * ld + d];
  }
  for (; j < n; j++)
    for (int64_t d = 0; d < hd; d++) dst[d * kp + j] = src[j * ld + d];
  for (int64_t d = 0; d < hd; d++) memset(dst + d * kp + n, 0, (size_t)(kp - n) * sizeof *dst);
}

/* Where the kernels write rows of a head: in place when hd is a multiple of
 * 16, else into buf (rows of hp), which flush_rows copies out. */
static float *out_rows(float *dst, int64_t *ld, int64_t hd, int64_t hp, float *buf) {
  if (hd == hp) return dst;
  *ld = hp;
  return buf;
}

static void flush_rows(const float *buf, int64_t hp, int64_t n, int64_t hd, float *dst, int64_t ld) {
  if (buf == dst) return;
  for (int64_t i = 0; i < n; i++) memcpy(dst + i * ld, buf + i * hp, (size_t)hd * sizeof *dst);
}

typedef struct att_job {
  const loom_layer *l;
  att_state *s;
  const att_kernels *k;
  att_dims g;
  int64_t unit_size, kp, hp;
  float scale;
  bool causal;
} att_job;

static int block_rows(int64_t i0, int64_t n) { return n - i0 < ATT_BLOCK ? (int)(n - i0) : ATT_BLOCK; }

/* Sample b, key/value head kv: the queries of its heads against its keys. */
static void unit_forward(const att_job *job, int64_t b, int64_t kv) {
  const att_state *s = job->s;
  const att_dims g = job->g;
  const int64_t steps = s->steps, keys = s->keys, kp = job->kp, hp = job->hp, group = g.h / g.kv;
  const uint8_t *pad = s->mask_batch > 0 ? s->mask + b * s->mask_keys : NULL;
  float *kt = s->work + (b * g.kv + kv) * job->unit_size, *vbuf = kt + g.hd * kp, *sb = vbuf + keys * hp,
        *obuf = sb + ATT_BLOCK * kp;
  const float *kh = s->k + b * s->kv_steps * g.kw + kv * g.hd;
  int64_t ldv = g.kw;
  head_columns(kh, g.kw, keys, g.hd, kp, kt);
  const float *vh = head_rows(s->v + b * s->kv_steps * g.kw + kv * g.hd, &ldv, keys, g.hd, hp, vbuf);
  for (int64_t h = kv * group; h < (kv + 1) * group; h++) {
    float *ph = s->p + (b * g.h + h) * steps * kp;
    for (int64_t i0 = 0; i0 < steps; i0 += ATT_BLOCK) {
      int rows = block_rows(i0, steps);
      int64_t vis[ATT_BLOCK], ldo = g.qw;
      for (int r = 0; r < rows; r++) vis[r] = visible_keys(i0 + r, s->offset, keys, job->causal);
      job->k->scores(s->q + (b * steps + i0) * g.qw + h * g.hd, g.qw, rows, kt, kp, g.hd, att_pad16(vis[rows - 1]),
                     sb, kp);
      for (int r = 0; r < rows; r++) job->k->softmax(sb + r * kp, vis[r], pad, job->scale, ph + (i0 + r) * kp);
      float *oh = s->o + (b * steps + i0) * g.qw + h * g.hd, *o = out_rows(oh, &ldo, g.hd, hp, obuf);
      job->k->mix(ph + i0 * kp, kp, rows, vis, vh, ldv, hp, o, ldo);
      flush_rows(o, hp, rows, g.hd, oh, g.qw);
    }
  }
}

static void units_forward(void *arg, int64_t begin, int64_t end) {
  const att_job *job = arg;
  for (int64_t u = begin; u < end; u++) unit_forward(job, u / job->g.kv, u % job->g.kv);
}

static att_job make_job(const loom_layer *l, att_state *s) {
  att_dims g = att_dims_of(l);
  int64_t unit = 0;
  att_work_size(s->steps, s->keys, g.hd, &unit); /* checked by att_reserve */
  return (att_job){.l = l, .s = s, .k = att_kernels_get(), .g = g, .unit_size = unit, .kp = att_pad16(s->keys),
                   .hp = att_pad16(g.hd), .scale = (float)(1.0 / sqrt((double)g.hd)),
                   .causal = layer_int(l, P_CAUSAL) != 0};
}

void att_scores(const loom_layer *l, att_state *s, loom_pool *pool) {
  att_job job = make_job(l, s);
  loom_pool_for(pool, s->batch * job.g.kv, 1, units_forward, &job);
}

/*
 * Per head of the unit: dP = dO·Vᵀ, dS = P∘(dP − rowsum(P∘dP))·scale in
 * place, dQ = dS·K; then dK += dSᵀ·Q and dV += Pᵀ·dO over the query rows
 * that see each key, the heads of the group adding in ascending order.
 */
static void unit_backward(const att_job *job, int64_t b, int64_t kv) {
  const att_state *s = job->s;
  const att_dims g = job->g;
  const int64_t steps = s->steps, keys = s->keys, kp = job->kp, hp = job->hp, group = g.h / g.kv;
  float *vt = s->work + (b * g.kv + kv) * job->unit_size, *kbuf = vt + g.hd * kp, *dkbuf = kbuf + keys * hp,
        *dvbuf = dkbuf + keys * hp, *qbuf = dvbuf + keys * hp, *dobuf = qbuf + steps * hp, *dp = dobuf + steps * hp,
        *obuf = dp + steps * kp;
  int64_t ldk = g.kw, lddk = g.kw, lddv = g.kw;
  head_columns(s->v + b * s->kv_steps * g.kw + kv * g.hd, g.kw, keys, g.hd, kp, vt);
  const float *kh = head_rows(s->k + b * s->kv_steps * g.kw + kv * g.hd, &ldk, keys, g.hd, hp, kbuf);
  float *dkh = s->dk + b * keys * g.kw + kv * g.hd, *dvh = s->dv + b * keys * g.kw + kv * g.hd;
  float *dk = out_rows(dkh, &lddk, g.hd, hp, dkbuf), *dv = out_rows(dvh, &lddv, g.hd, hp, dvbuf);
  for (int64_t h = kv * group; h < (kv + 1) * group; h++) {
    const float *ph = s->p + (b * g.h + h) * steps * kp, *doh = s->d_o + b * steps * g.qw + h * g.hd;
    int64_t ldq = g.qw, lddo = g.qw;
    const float *qh = head_rows(s->q + b * steps * g.qw + h * g.hd, &ldq, steps, g.hd, hp, qbuf);
    const float *dor = head_rows(doh, &lddo, steps, g.hd, hp, dobuf);
    for (int64_t i0 = 0; i0 < steps; i0 += ATT_BLOCK) {
      int rows = block_rows(i0, steps);
      int64_t vis[ATT_BLOCK], ldo = g.qw;
      for (int r = 0; r < rows; r++) vis[r] = visible_keys(i0 + r, s->offset, keys, job->causal);
      job->k->scores(doh + i0 * g.qw, g.qw, rows, vt, kp, g.hd, att_pad16(vis[rows - 1]), dp + i0 * kp, kp);
      for (int r = 0; r < rows; r++) job->k->softmax_backward(ph + (i0 + r) * kp, dp + (i0 + r) * kp, vis[r], job->scale);
      float *dqh = s->dq + (b * steps + i0) * g.qw + h * g.hd, *dq = out_rows(dqh, &ldo, g.hd, hp, obuf);
      job->k->mix(dp + i0 * kp, kp, rows, vis, kh, ldk, hp, dq, ldo);
      flush_rows(dq, hp, rows, g.hd, dqh, g.qw);
    }
    bool more = h > kv * group;
    for (int64_t j0 = 0; j0 < keys; j0 += ATT_BLOCK) {
      int cols = block_rows(j0, keys);
      int64_t lo[ATT_BLOCK];
      for (int c = 0; c < cols; c++) { /* the first query row that sees key j0 + c */
        int64_t first = job->causal ? j0 + c - s->offset : 0;
        lo[c] = first > 0 ? first : 0;
      }
      job->k->mix_t(dp + j0, kp, cols, lo, steps, qh, ldq, hp, dk + j0 * lddk, lddk, more);
      job->k->mix_t(ph + j0, kp, cols, lo, steps, dor, lddo, hp, dv + j0 * lddv, lddv, more);
    }
  }
  flush_rows(dk, hp, keys, g.hd, dkh, g.kw);
  flush_rows(dv, hp, keys, g.hd, dvh, g.kw);
}

static void units_backward(void *arg, int64_t begin, int64_t end) {
  const att_job *job = arg;
  for (int64_t u = begin; u < end; u++) unit_backward(job, u / job->g.kv, u % job->g.kv);
}

void att_scores_backward(const loom_layer *l, att_state *s, loom_pool *pool) {
  att_job job = make_job(l, s);
  loom_pool_for(pool, s->batch * job.g.kv, 1, units_backward, &job);
}
