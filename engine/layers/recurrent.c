/*
 * Recurrent layers in PyTorch's layouts, so a state dict imports without
 * reshaping (single layer, unidirectional, batch_first):
 *
 *   rnn   h_t = act(x_t·W_ihᵀ + b_ih + h_{t-1}·W_hhᵀ + b_hh), act = tanh or relu
 *   lstm  [i f g o] = x_t·W_ihᵀ + b_ih + h_{t-1}·W_hhᵀ + b_hh   (gate order i, f, g, o)
 *         c_t = σ(f)·c_{t-1} + σ(i)·tanh(g),  h_t = σ(o)·tanh(c_t)
 *
 * Weights: weight_ih_l0 [G·H × F], weight_hh_l0 [G·H × H], bias_ih_l0 and
 * bias_hh_l0 [G·H] (G = 1 for rnn, 4 for lstm), initialised like PyTorch
 * (U(−1/√H, 1/√H)). The input is [T × F] (or [F], one step); the output is
 * the whole sequence [T × H] or the last step [H]. The initial state is zero,
 * or given through loom_layer_set_initial_state(), or, with carry_state, the
 * final state of the previous call (step-based execution of a long sequence:
 * loom/sequence.h). Backward is backpropagation through time over the T steps
 * of the call and also yields the gradient of the initial state.
 *
 * Every product is a loom_sgemm (bit-identical for any thread count): the
 * input projection of all steps at once, then one B×GH×H product per step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "kernels/matmul.h"
#include "layers/registry.h"
#include "layers/sequence-impl.h"

enum { P_IN, P_HIDDEN, P_BIAS, P_OUTPUT, P_CARRY, P_ACT };
enum { W_IH, W_HH, W_BIH, W_BHH };
enum { OUT_SEQUENCE, OUT_LAST };
enum { ACT_TANH, ACT_RELU };

#define RNN_MAX_FEATURES 1048576.0

static const char *const output_choices[] = {"sequence", "last", NULL};
static const char *const act_choices[] = {"tanh", "relu", NULL};

#define COMMON_PARAMS                                                                                                 \
  {"input_size", N_("Input features"), N_("Features of each step of the input sequence"), LOOM_PARAM_INT, 1,        \
   RNN_MAX_FEATURES, 16, NULL, 0},                                                                                    \
    {"hidden_size", N_("Hidden size"), N_("Features of the hidden state and of each output step"), LOOM_PARAM_INT, 1, \
     RNN_MAX_FEATURES, 16, NULL, 0},                                                                                  \
    {"bias", N_("Bias"), N_("Learn the two bias vectors bias_ih and bias_hh"), LOOM_PARAM_BOOL, 0, 1, 1, NULL, 0},   \
    {"output", N_("Output"), N_("Every step's hidden state, or only the last one"), LOOM_PARAM_ENUM, 0, 1,          \
     OUT_SEQUENCE, output_choices, 0},                                                                                \
    {"carry_state", N_("Carry state"),                                                                                \
     N_("Start each call from the state the previous call ended in (feeding a long sequence step by step)"),         \
     LOOM_PARAM_BOOL, 0, 1, 0, NULL, 0, true}

static const loom_param_spec rnn_params[] = {
  COMMON_PARAMS,
  {"nonlinearity", N_("Nonlinearity"), N_("The activation of the hidden state"), LOOM_PARAM_ENUM, 0, 1, ACT_TANH,
   act_choices, 0},
};
static const loom_param_spec lstm_params[] = {COMMON_PARAMS};

typedef struct rec_state {
  int64_t batch, steps;         /* of the last forward */
  float *act;                   /* B×T×GH: rnn h; lstm σ(i) σ(f) tanh(g) σ(o) */
  float *h, *c, *tc;            /* B×T×H: hidden, cell and tanh(cell) (lstm) */
  float *init_h, *init_c;       /* B×H: the state the last forward started from */
  float *given_h, *given_c;     /* B×H: loom_layer_set_initial_state() */
  int64_t given_batch;          /* 0 = none given */
  float *carry_h, *carry_c;     /* B×H: the final state of the last forward (carry_state) */
  int64_t carry_batch;          /* 0 = nothing carried */
  float *da, *hprev, *dh, *dc;  /* backward scratch */
  float *grad_h0, *grad_c0;     /* B×H: gradient of the initial state from the last backward */
  int64_t grad_batch;
  int64_t cap_seq, cap_state, cap_init, cap_given, cap_carry, cap_grad; /* values allocated per buffer group */
} rec_state;

static bool is_lstm(const loom_layer *l) { return l->type == &loom_layer_lstm; }
static int64_t gates(const loom_layer *l) { return is_lstm(l) ? 4 : 1; }

static int64_t sequence_steps(const loom_layer *l) {
  return l->in_shape.rank >= 2 ? l->in_shape.d[0] : 1;
}

static int rec_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  char where[128], shape[96];
  int64_t f = layer_int(l, P_IN), h = layer_int(l, P_HIDDEN), gh = gates(l) * h;
  bool fits = (in->rank == 2 && in->d[1] == f && in->d[0] >= 1) || (in->rank == 1 && in->d[0] == f);
  if (!fits)
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: expects a sequence [steps × %lld] (or one step [%lld]) but the input is %s"),
                          layer_where(l, where, sizeof where), (long long)f, (long long)f,
                          loom_shape_format(in, shape, sizeof shape));
  int64_t steps = in->rank == 2 ? in->d[0] : 1;
  l->out_shape = layer_int(l, P_OUTPUT) == OUT_LAST || in->rank == 1 ? loom_shape_1d(h)
                                                                       : loom_shape_make(2, (int64_t[]){steps, h});
  int rc = layer_weights_ensure(l, W_IH, "weight_ih_l0", gh, f, true, LAYER_INIT_KAIMING_UNIFORM, h, seed, err);
  if (!rc) rc = layer_weights_ensure(l, W_HH, "weight_hh_l0", gh, h, true, LAYER_INIT_KAIMING_UNIFORM, h, seed, err);
  if (rc) return rc;
  if (layer_int(l, P_BIAS)) {
    rc = layer_weights_ensure(l, W_BIH, "bias_ih_l0", 1, gh, false, LAYER_INIT_KAIMING_UNIFORM, h, seed, err);
    if (!rc) rc = layer_weights_ensure(l, W_BHH, "bias_hh_l0", 1, gh, false, LAYER_INIT_KAIMING_UNIFORM, h, seed, err);
    return rc;
  }
  layer_weights_truncate(l, 2);
  return LOOM_OK;
}

static void rec_free_state(loom_layer *l) {
  rec_state *s = l->state;
  if (!s) return;
  float *bufs[] = {s->act, s->h, s->c, s->tc, s->init_h, s->init_c, s->given_h, s->given_c, s->carry_h,
                   s->carry_c, s->da, s->hprev, s->dh, s->dc, s->grad_h0, s->grad_c0};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
  free(s);
  l->state = NULL;
}

static rec_state *get_state(loom_layer *l, loom_error *err) {
  if (!l->state) l->state = calloc(1, sizeof(rec_state));
  if (!l->state) loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory running a %s layer"), l->type->name);
  return l->state;
}

/* Grows every buffer of a group to `count` values (contents are not kept). */
static int grow(const loom_layer *l, int64_t *cap, int64_t count, float **bufs[], int n, loom_error *err) {
  char where[128];
  if (count <= *cap && *bufs[0]) return LOOM_OK;
  if (count > (int64_t)(SIZE_MAX / sizeof(float)) / 4)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: %lld values per buffer are too many"),
                          layer_where(l, where, sizeof where), (long long)count);
  for (int i = 0; i < n; i++) {
    free(*bufs[i]);
    *bufs[i] = malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
    if (!*bufs[i]) {
      *cap = 0;
      return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for %lld values"),
                            layer_where(l, where, sizeof where), (long long)count);
    }
  }
  *cap = count;
  return LOOM_OK;
}

static int mul_checked(const loom_layer *l, int64_t a, int64_t b, int64_t *out, loom_error *err) {
  char where[128];
  if (a > 0 && b > INT64_MAX / a)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: %lld × %lld values are too many"),
                          layer_where(l, where, sizeof where), (long long)a, (long long)b);
  *out = a * b;
  return LOOM_OK;
}

static float sigmoidf(float v) { return 1.0f / (1.0f + expf(-v)); }

/* a[r] += Σ_j m[r·n + j]·v[j] for every row r: eight partial sums per row
 * (over j mod 8) and the tail, added in a fixed tree, so the bits depend
 * only on n, never on the batch or the thread count; the fixed width lets
 * -O2 vectorize it. */
static void add_mat_vec(float *restrict a, const float *restrict m, const float *restrict v, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++) {
    const float *row = m + r * n;
    float acc[8] = {0}, tail = 0.0f;
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
      for (int u = 0; u < 8; u++) acc[u] += row[j + u] * v[j + u];
    for (; j < n; j++) tail += row[j] * v[j];
    a[r] += (((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))) + tail;
  }
}

/* a[0..n) += Σ_p v[p] · m[p·n .. p·n + n), p ascending: every output keeps one
 * running sum in a fixed order, so the bits depend neither on the vector
 * width the compiler picks nor on the batch. Four rows of m per pass keep
 * each output in a register for four of its additions (the same additions in
 * the same order as one row at a time); the fixed inner width lets -O2
 * vectorize it. */
static void add_rows(float *restrict a, const float *restrict v, const float *restrict m, int64_t k, int64_t n) {
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    const float v0 = v[p], v1 = v[p + 1], v2 = v[p + 2], v3 = v[p + 3];
    const float *r0 = m + p * n, *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
      for (int u = 0; u < 8; u++) {
        float t = a[j + u];
        t += v0 * r0[j + u];
        t += v1 * r1[j + u];
        t += v2 * r2[j + u];
        t += v3 * r3[j + u];
        a[j + u] = t;
      }
    for (; j < n; j++) {
      float t = a[j];
      t += v0 * r0[j];
      t += v1 * r1[j];
      t += v2 * r2[j];
      t += v3 * r3[j];
      a[j] = t;
    }
  }
  for (; p < k; p++) {
    const float vp = v[p], *row = m + p * n;
    for (int64_t j = 0; j < n; j++) a[j] += vp * row[j];
  }
}

/* Where the initial state comes from: given, carried or zero. */
static int pick_initial_state(loom_layer *l, rec_state *s, int64_t batch, int64_t hsz, loom_error *err) {
  char where[128];
  size_t bytes = (size_t)(batch * hsz) * sizeof(float);
  if (s->given_batch > 0) {
    if (s->given_batch != batch)
      return loom_error_set(err, LOOM_ERR_SHAPE,
                            _("%s: the initial state was given for a batch of %lld but the input has %lld samples"),
                            layer_where(l, where, sizeof where), (long long)s->given_batch, (long long)batch);
    memcpy(s->init_h, s->given_h, bytes);
    if (is_lstm(l)) memcpy(s->init_c, s->given_c, bytes);
  } else if (layer_int(l, P_CARRY) && s->carry_batch == batch) {
    memcpy(s->init_h, s->carry_h, bytes);
    if (is_lstm(l)) memcpy(s->init_c, s->carry_c, bytes);
  } else {
    memset(s->init_h, 0, bytes);
    if (is_lstm(l)) memset(s->init_c, 0, bytes);
  }
  return LOOM_OK;
}

/* One step's nonlinearity for sample rows of `a` (pre-activations in, activations out). */
static void step_cells(loom_layer *l, rec_state *s, int64_t batch, int64_t t) {
  int64_t hsz = layer_int(l, P_HIDDEN), steps = s->steps, gh = gates(l) * hsz;
  bool relu = !is_lstm(l) && layer_int(l, P_ACT) == ACT_RELU;
  for (int64_t b = 0; b < batch; b++) {
    float *a = s->act + (b * steps + t) * gh;
    float *h = s->h + (b * steps + t) * hsz;
    if (!is_lstm(l)) {
      for (int64_t j = 0; j < hsz; j++) h[j] = a[j] = relu ? (a[j] > 0.0f ? a[j] : 0.0f) : tanhf(a[j]);
      continue;
    }
    const float *cprev = t == 0 ? s->init_c + b * hsz : s->c + (b * steps + t - 1) * hsz;
    float *c = s->c + (b * steps + t) * hsz, *tc = s->tc + (b * steps + t) * hsz;
    for (int64_t j = 0; j < hsz; j++) {
      float i = sigmoidf(a[j]), f = sigmoidf(a[hsz + j]), g = tanhf(a[2 * hsz + j]), o = sigmoidf(a[3 * hsz + j]);
      a[j] = i;
      a[hsz + j] = f;
      a[2 * hsz + j] = g;
      a[3 * hsz + j] = o;
      c[j] = f * cprev[j] + i * g;
      tc[j] = tanhf(c[j]);
      h[j] = o * tc[j];
    }
  }
}

/* The input projection goes through layer_weight_product (layer-product.c:
 * at rest from the packed codes). The recurrent one with W_hh's values at
 * hand, or with w_hh NULL at rest: then a GEMV of one row per sample and step
 * into `hh` (gh floats), added to the pre-activations. */
static int rec_forward_values(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                              const float *w_hh, float *hh, loom_error *err) {
  loom_pool *pool = ctx ? ctx->pool : NULL;
  rec_state *s = get_state(l, err);
  if (!s) return LOOM_ERR_NOMEM;
  int64_t f = layer_int(l, P_IN), hsz = layer_int(l, P_HIDDEN), gh = gates(l) * hsz, steps = sequence_steps(l);
  int64_t rows = 0, n_act = 0, n_h = 0, n_state = 0; /* set by mul_checked; -O3 cannot see it */
  int rc = mul_checked(l, batch, steps, &rows, err);
  if (!rc) rc = mul_checked(l, rows, gh, &n_act, err);
  if (!rc) rc = mul_checked(l, rows, hsz, &n_h, err);
  if (!rc) rc = mul_checked(l, batch, hsz, &n_state, err);
  if (rc) return rc;
  if ((rc = grow(l, &s->cap_seq, n_act, (float **[]){&s->act, &s->da}, 2, err))) return rc;
  if ((rc = grow(l, &s->cap_state, n_h, (float **[]){&s->h, &s->c, &s->tc, &s->hprev}, 4, err))) return rc;
  if ((rc = grow(l, &s->cap_init, n_state, (float **[]){&s->init_h, &s->init_c, &s->dh, &s->dc}, 4, err)))
    return rc;
  s->batch = batch;
  s->steps = steps;
  if ((rc = pick_initial_state(l, s, batch, hsz, err))) return rc;
  /* Per sample, never over the batch: a product's tiling (and BLAS's kernel
   * choice) follows its row count, so a sample computed beside others gives
   * the bits it gives alone. */
  for (int64_t b = 0; b < batch; b++)
    if ((rc = layer_weight_product(l, W_IH, pool, x + b * steps * f, steps, s->act + b * steps * gh, err))) return rc;
  if (l->n_weights > W_BHH) {
    const float *b_ih = layer_weight_values(l, W_BIH, err), *b_hh = b_ih ? layer_weight_values(l, W_BHH, err) : NULL;
    if (!b_hh) return err ? err->code : LOOM_ERR_INVALID;
    for (int64_t r = 0; r < rows; r++)
      for (int64_t j = 0; j < gh; j++) s->act[r * gh + j] += b_ih[j] + b_hh[j];
  }
  /* The recurrent product of one sample and step, a += W_hh·h_{t−1}, as row
   * dot products here: a one-row BLAS call would repack W_hh on every step. */
  for (int64_t t = 0; t < steps; t++) {
    for (int64_t b = 0; b < batch; b++) {
      const float *hprev = t == 0 ? s->init_h + b * hsz : s->h + (b * steps + t - 1) * hsz;
      float *a = s->act + (b * steps + t) * gh;
      if (w_hh) {
        add_mat_vec(a, w_hh, hprev, gh, hsz);
        continue;
      }
      if ((rc = layer_weight_product(l, W_HH, pool, hprev, 1, hh, err))) return rc;
      for (int64_t j = 0; j < gh; j++) a[j] += hh[j];
    }
    step_cells(l, s, batch, t);
  }
  bool last = loom_shape_numel(&l->out_shape) == hsz && steps > 1;
  for (int64_t b = 0; b < batch; b++) {
    if (last) memcpy(y + b * hsz, s->h + (b * steps + steps - 1) * hsz, (size_t)hsz * sizeof *y);
    else memcpy(y + b * steps * hsz, s->h + b * steps * hsz, (size_t)(steps * hsz) * sizeof *y);
  }
  if (layer_int(l, P_CARRY)) {
    if ((rc = grow(l, &s->cap_carry, n_state, (float **[]){&s->carry_h, &s->carry_c}, 2, err))) return rc;
    for (int64_t b = 0; b < batch; b++) {
      memcpy(s->carry_h + b * hsz, s->h + (b * steps + steps - 1) * hsz, (size_t)hsz * sizeof(float));
      if (is_lstm(l)) memcpy(s->carry_c + b * hsz, s->c + (b * steps + steps - 1) * hsz, (size_t)hsz * sizeof(float));
    }
    s->carry_batch = batch;
  }
  return LOOM_OK;
}

static int rec_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch, loom_error *err) {
  if (layer_weight_at_rest(l, W_HH)) {
    /* At rest: no float32 copy of W_hh (layer-product.c). */
    const int64_t gh = gates(l) * layer_int(l, P_HIDDEN);
    float *hh = malloc((size_t)gh * sizeof *hh);
    if (!hh) {
      char where[128];
      return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for a row buffer of %lld values"),
                            layer_where(l, where, sizeof where), (long long)gh);
    }
    int rc = rec_forward_values(l, ctx, x, y, batch, NULL, hh, err);
    free(hh);
    return rc;
  }
  const float *w_hh = layer_weight_values_on(l, W_HH, ctx ? ctx->pool : NULL, err);
  if (!w_hh) return err ? err->code : LOOM_ERR_INVALID;
  return rec_forward_values(l, ctx, x, y, batch, w_hh, NULL, err);
}

/* d(pre-activation) of step t from dh (and, for lstm, the running dc). */
static void step_backward(loom_layer *l, rec_state *s, const float *dy, int64_t batch, int64_t t, bool last) {
  int64_t hsz = layer_int(l, P_HIDDEN), steps = s->steps, gh = gates(l) * hsz;
  bool relu = !is_lstm(l) && layer_int(l, P_ACT) == ACT_RELU;
  for (int64_t b = 0; b < batch; b++) {
    float *dh = s->dh + b * hsz;
    const float *dyt = last ? (t == steps - 1 ? dy + b * hsz : NULL) : dy + (b * steps + t) * hsz;
    if (dyt)
      for (int64_t j = 0; j < hsz; j++) dh[j] += dyt[j];
    const float *a = s->act + (b * steps + t) * gh;
    float *da = s->da + (b * steps + t) * gh;
    if (!is_lstm(l)) {
      for (int64_t j = 0; j < hsz; j++)
        da[j] = relu ? (a[j] > 0.0f ? dh[j] : 0.0f) : dh[j] * (1.0f - a[j] * a[j]);
      continue;
    }
    const float *cprev = t == 0 ? s->init_c + b * hsz : s->c + (b * steps + t - 1) * hsz;
    const float *tc = s->tc + (b * steps + t) * hsz;
    float *dc = s->dc + b * hsz;
    for (int64_t j = 0; j < hsz; j++) {
      float i = a[j], f = a[hsz + j], g = a[2 * hsz + j], o = a[3 * hsz + j];
      float dcj = dc[j] + dh[j] * o * (1.0f - tc[j] * tc[j]);
      da[j] = dcj * g * i * (1.0f - i);
      da[hsz + j] = dcj * cprev[j] * f * (1.0f - f);
      da[2 * hsz + j] = dcj * i * (1.0f - g * g);
      da[3 * hsz + j] = dh[j] * tc[j] * o * (1.0f - o);
      dc[j] = dcj * f;
    }
  }
}

static int rec_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy, float *dx,
                        int64_t batch, loom_error *err) {
  loom_pool *pool = ctx ? ctx->pool : NULL;
  rec_state *s = l->state;
  char where[128];
  if (!s || s->batch != batch || s->steps != sequence_steps(l))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: backward needs the forward pass of the same batch first"),
                          layer_where(l, where, sizeof where));
  int64_t f = layer_int(l, P_IN), hsz = layer_int(l, P_HIDDEN), gh = gates(l) * hsz, steps = s->steps;
  int64_t rows = batch * steps;
  const float *w_ih = layer_weight_values_on(l, W_IH, pool, err),
              *w_hh = w_ih ? layer_weight_values_on(l, W_HH, pool, err) : NULL;
  if (!w_hh) return err ? err->code : LOOM_ERR_INVALID;
  bool last = loom_shape_numel(&l->out_shape) == hsz && steps > 1;
  memset(s->dh, 0, (size_t)(batch * hsz) * sizeof(float));
  memset(s->dc, 0, (size_t)(batch * hsz) * sizeof(float));
  for (int64_t t = steps - 1; t >= 0; t--) {
    step_backward(l, s, dy, batch, t, last);
    /* dh_{t-1} = da_t · W_hh (replaces dh: its share of step t is spent); per sample as in forward. */
    memset(s->dh, 0, (size_t)(batch * hsz) * sizeof(float));
    for (int64_t b = 0; b < batch; b++) add_rows(s->dh + b * hsz, s->da + (b * steps + t) * gh, w_hh, gh, hsz);
  }
  int rc = grow(l, &s->cap_grad, batch * hsz, (float **[]){&s->grad_h0, &s->grad_c0}, 2, err);
  if (rc) return rc;
  memcpy(s->grad_h0, s->dh, (size_t)(batch * hsz) * sizeof(float));
  memcpy(s->grad_c0, s->dc, (size_t)(batch * hsz) * sizeof(float));
  s->grad_batch = batch;
  for (int64_t b = 0; b < batch; b++) {
    memcpy(s->hprev + b * steps * hsz, s->init_h + b * hsz, (size_t)hsz * sizeof(float));
    memcpy(s->hprev + (b * steps + 1) * hsz, s->h + b * steps * hsz, (size_t)((steps - 1) * hsz) * sizeof(float));
  }
  loom_sgemm(pool, true, false, gh, f, rows, s->da, gh, x, f, true, l->grad[W_IH], f);
  loom_sgemm(pool, true, false, gh, hsz, rows, s->da, gh, s->hprev, hsz, true, l->grad[W_HH], hsz);
  if (l->n_weights > W_BHH) {
    float *db_ih = l->grad[W_BIH], *db_hh = l->grad[W_BHH];
    for (int64_t r = 0; r < rows; r++)
      for (int64_t j = 0; j < gh; j++) {
        db_ih[j] += s->da[r * gh + j];
        db_hh[j] += s->da[r * gh + j];
      }
  }
  for (int64_t b = 0; dx && b < batch; b++)
    loom_sgemm(pool, false, false, steps, f, gh, s->da + b * steps * gh, gh, w_ih, f, false, dx + b * steps * f, f);
  return LOOM_OK;
}

static int rec_adapt(loom_layer *l, const loom_shape *in, loom_error *err) {
  char where[128], shape[96];
  if (in->rank < 1 || in->rank > 2)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: expects a sequence [steps × features], got %s"),
                          layer_where(l, where, sizeof where), loom_shape_format(in, shape, sizeof shape));
  return loom_layer_set_int(l, "input_size", in->d[in->rank - 1], err);
}

static int64_t rec_flops(const loom_layer *l) {
  int64_t f = layer_int(l, P_IN), hsz = layer_int(l, P_HIDDEN), gh = gates(l) * hsz;
  int64_t steps = l->built ? sequence_steps(l) : 1;
  return steps * (2 * gh * (f + hsz) + (is_lstm(l) ? 10 : 1) * hsz);
}

static char *rec_describe(const loom_layer *l, char *buf, size_t size) {
  const char *bias = layer_int(l, P_BIAS) ? _(", bias") : "";
  const char *act = is_lstm(l) ? "" : layer_int(l, P_ACT) == ACT_RELU ? " relu" : " tanh";
  snprintf(buf, size, "%s%s %lld→%lld, %s%s", l->type->name, act, (long long)layer_int(l, P_IN),
           (long long)layer_int(l, P_HIDDEN), output_choices[layer_int(l, P_OUTPUT)], bias);
  return buf;
}

/* ---- state across calls (loom/sequence.h via sequence-state.c) ---------- */

int recurrent_set_initial_state(loom_layer *l, const float *h0, const float *c0, int64_t batch, loom_error *err) {
  char where[128];
  rec_state *s = get_state(l, err);
  if (!s) return LOOM_ERR_NOMEM;
  if (!h0) {
    s->given_batch = 0;
    return LOOM_OK;
  }
  if (is_lstm(l) && !c0)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: an lstm's initial state needs both h0 and c0"),
                          layer_where(l, where, sizeof where));
  int64_t hsz = layer_int(l, P_HIDDEN), n = 0;
  int rc = mul_checked(l, batch, hsz, &n, err);
  if (!rc) rc = grow(l, &s->cap_given, n, (float **[]){&s->given_h, &s->given_c}, 2, err);
  if (rc) return rc;
  memcpy(s->given_h, h0, (size_t)n * sizeof(float));
  if (is_lstm(l)) memcpy(s->given_c, c0, (size_t)n * sizeof(float));
  s->given_batch = batch;
  return LOOM_OK;
}

int recurrent_state_grad(const loom_layer *l, const float **dh0, const float **dc0, int64_t *batch) {
  const rec_state *s = l->state;
  if (!s || s->grad_batch < 1) return LOOM_ERR_INVALID;
  *dh0 = s->grad_h0;
  if (dc0) *dc0 = is_lstm(l) ? s->grad_c0 : NULL;
  *batch = s->grad_batch;
  return LOOM_OK;
}

void recurrent_reset(loom_layer *l) {
  rec_state *s = l->state;
  if (s) s->carry_batch = 0;
}

const loom_layer_type loom_layer_rnn = {
  .id = 120,
  .name = "rnn",
  .label = N_("RNN"),
  .group = N_("Recurrent"),
  .description = N_("Elman recurrent layer: each step's hidden state is tanh or relu of the input and the previous "
                    "state (PyTorch's nn.RNN layout)."),
  .flags = LOOM_LAYER_WEIGHTED,
  .params = rnn_params,
  .n_params = (int)(sizeof rnn_params / sizeof rnn_params[0]),
  .build = rec_build,
  .forward = rec_forward,
  .backward = rec_backward,
  .adapt = rec_adapt,
  .flops = rec_flops,
  .free_state = rec_free_state,
  .describe = rec_describe,
};

const loom_layer_type loom_layer_lstm = {
  .id = 121,
  .name = "lstm",
  .label = N_("LSTM"),
  .group = N_("Recurrent"),
  .description = N_("Long short-term memory: gated recurrent layer with a cell state (PyTorch's nn.LSTM layout, "
                    "gates i, f, g, o)."),
  .flags = LOOM_LAYER_WEIGHTED,
  .params = lstm_params,
  .n_params = (int)(sizeof lstm_params / sizeof lstm_params[0]),
  .build = rec_build,
  .forward = rec_forward,
  .backward = rec_backward,
  .adapt = rec_adapt,
  .flops = rec_flops,
  .free_state = rec_free_state,
  .describe = rec_describe,
};
