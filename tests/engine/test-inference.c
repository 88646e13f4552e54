/*
 * Weights at rest for inference (issue 13, item 3; docs/dtypes.md "At rest"):
 * only packed codes and scales stay resident, the dense forward reads them
 * within the documented tolerance of the plain forward and gives the same
 * bits for any thread count, training recreates the masters exactly.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "kernels/qgemm.h"
#include "loom/dna.h"
#include "loom/loom.h"
#include "loom/layer.h"
#include "loom/model.h"
#include "loom/onnx.h"
#include "loom/weights.h"
#include "train-test-util.h"

enum { N_IN = 37, N_OUT = 19, BATCH = 5 };

/* One dense layer N_IN → N_OUT with a bias, every layer at dtype d. */
static loom_net *dense_net(loom_dtype d, int64_t n_in, int64_t n_out, bool bias) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 1, 1, &err);
  g_assert_nonnull(net);
  loom_shape s = loom_shape_1d(n_in);
  g_assert_cmpint(loom_net_set_input_shape(net, &s, &err), ==, 0);
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  g_assert_nonnull(l);
  g_assert_cmpint(loom_layer_set_int(l, "in_features", n_in, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", n_out, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_bool(l, "bias", bias, &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, l, &err), ==, 0);
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(net, 17, &diags), ==, 0);
  g_free(diags);
  g_assert_cmpint(loom_net_set_dtype_all(net, d, &err), ==, 0);
  return net;
}

static void forward(loom_net *net, int threads, const float *x, int64_t batch, float *y) {
  loom_error err = {0};
  loom_pool *pool = loom_pool_new(threads, &err);
  g_assert_nonnull(pool);
  loom_ctx ctx = {.pool = pool};
  if (loom_net_forward(net, &ctx, x, batch, y, &err)) g_error("%s", err.message);
  loom_pool_free(pool);
}

static loom_weights *weight_of(loom_net *net, int index) {
  return loom_layer_weights(loom_net_layer_at(net, (loom_coord){0, 0, 0, 0}), index);
}

/* Every dtype: the forward at rest against the plain one, within the bound
 * of the kernel the dense layer takes (docs/kernels.md, docs/dtypes.md), plus
 * the plain path's own float32 rounding; the same bits at 1 and 3 threads;
 * no float32 copy of the weights left behind. */
static void test_forward_every_dtype(void) {
  float x[BATCH * N_IN];
  GRand *rng = g_rand_new_with_seed(3);
  for (int i = 0; i < BATCH * N_IN; i++) x[i] = (float)g_rand_double_range(rng, -2, 2);
  x[3] = 0; /* a zero and one large activation: the int8 activation scale follows the maximum */
  x[N_IN + 5] = 7.5f;
  g_rand_free(rng);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    loom_error err = {0};
    loom_net *net = dense_net((loom_dtype)d, N_IN, N_OUT, true);
    float y0[BATCH * N_OUT], y1[BATCH * N_OUT], y3[BATCH * N_OUT];
    forward(net, 1, x, BATCH, y0);
    float w[N_OUT * N_IN], b[N_OUT];
    memcpy(w, loom_weights_effective(weight_of(net, 0), &err), sizeof w);
    memcpy(b, loom_weights_effective(weight_of(net, 1), &err), sizeof b);

    g_assert_cmpint(loom_net_to_inference(net, &err), ==, 0);
    const bool rests_as_master = d == LOOM_DTYPE_FLOAT32;
    g_assert_true(loom_weights_master_resident(weight_of(net, 0)) == rests_as_master);
    g_assert_null(loom_layer_grad(loom_net_layer_at(net, (loom_coord){0, 0, 0, 0}), 0));
    forward(net, 1, x, BATCH, y1);
    forward(net, 3, x, BATCH, y3);
    g_assert_cmpmem(y1, sizeof y1, y3, sizeof y3);
    /* One sample at a time takes the GEMV where a batch takes blocks: the
     * per-sample results must pass the same check, so fill y1 that way when
     * the sample index is odd (not at float32: the plain path it matches
     * bit for bit is the batch product). */
    for (int s = 1; !rests_as_master && s < BATCH; s += 2) {
      forward(net, 2, x + s * N_IN, 1, y3);
      memcpy(y1 + s * N_OUT, y3, N_OUT * sizeof *y3);
    }
    /* Nothing was dequantized into a resident copy by the forward. */
    g_assert_cmpuint(loom_net_resident_bytes(net), ==, loom_net_inference_bytes(net));
    if (rests_as_master) { /* the same loom_sgemm on the same values */
      g_assert_cmpmem(y0, sizeof y0, y1, sizeof y1);
    } else {
      const bool integer = loom_qgemm_supports((loom_dtype)d);
      for (int s = 0; s < BATCH; s++) {
        double xmax = 0;
        for (int c = 0; c < N_IN; c++) xmax = fmax(xmax, fabs(x[s * N_IN + c]));
        const double sx = (double)(float)(xmax / 127);
        for (int r = 0; r < N_OUT; r++) {
          double abs_w = 0, abs_wx = 0;
          for (int c = 0; c < N_IN; c++) {
            abs_w += fabs(w[r * N_IN + c]);
            abs_wx += fabs((double)w[r * N_IN + c] * x[s * N_IN + c]);
          }
          /* The float formats: the GEMV's bound at one sample, loom_sgemm's
           * on dequantized blocks of rows for the batch (the larger). */
          double kernel = integer ? sx * abs_w * (0.5 + 0x1p-20) + 0x1p-22 * abs_wx + 0x1p-140
                                  : (N_IN + 8) * 0x1p-24 * abs_wx;
          /* loom_sgemm's rounding (any order) and the two bias additions. */
          double plain = (N_IN + 2) * 0x1p-24 * abs_wx + 0x1p-23 * (abs_wx + fabs(b[r]));
          double diff = fabs((double)y1[s * N_OUT + r] - y0[s * N_OUT + r]);
          if (diff > kernel + plain)
            g_error("%s: sample %d, row %d: at rest %.9g, plain %.9g (bound %.3g)", loom_dtype_name((loom_dtype)d), s,
                    r, (double)y1[s * N_OUT + r], (double)y0[s * N_OUT + r], kernel + plain);
        }
      }
    }
    loom_net_free(net);
  }
}

/* A batch at a float format takes dequantized blocks of rows
 * (layer-product.c: 262144 floats, 13 rows of 20011 here, so 29 rows make
 * three blocks, the last one short, with per-row and per-tensor scales): the
 * same values as the plain forward up to loom_sgemm's rounding, the same bits
 * for any thread count. */
static void test_forward_blocks(void) {
  enum { IN = 20011, OUT = 29, B = 4 };
  const loom_dtype dts[] = {LOOM_DTYPE_FP8_E5M2, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_INT16, LOOM_DTYPE_UINT32};
  float *x = g_new(float, B * IN), y0[B * OUT], y1[B * OUT], y2[B * OUT];
  for (int i = 0; i < B * IN; i++) x[i] = (float)((i * 7919) % 83 - 41) / 17.0f;
  for (size_t k = 0; k < G_N_ELEMENTS(dts); k++) {
    loom_error err = {0};
    loom_net *net = dense_net(dts[k], IN, OUT, false);
    if (k == 2) g_assert_cmpint(loom_weights_set_scale_mode(weight_of(net, 0), LOOM_SCALE_PER_TENSOR, &err), ==, 0);
    /* Rows of very different sizes: a block reading another block's per-row scales shows. */
    float *m = loom_weights_master(weight_of(net, 0));
    for (int i = 0; i < OUT * IN; i++) m[i] *= (float)(1 + i / IN * i / IN);
    loom_weights_touch(weight_of(net, 0));
    forward(net, 1, x, B, y0);
    const float *w = loom_weights_effective(weight_of(net, 0), &err);
    double abs_wx[B * OUT] = {0};
    for (int s = 0; s < B; s++)
      for (int r = 0; r < OUT; r++)
        for (int c = 0; c < IN; c++) abs_wx[s * OUT + r] += fabs((double)w[r * IN + c] * x[s * IN + c]);
    g_assert_cmpint(loom_net_to_inference(net, &err), ==, 0);
    forward(net, 1, x, B, y1);
    forward(net, 2, x, B, y2);
    g_assert_cmpmem(y1, sizeof y1, y2, sizeof y2);
    for (int i = 0; i < B * OUT; i++)
      g_assert_cmpfloat(fabs((double)y1[i] - y0[i]), <=, 2 * (IN + 2) * 0x1p-24 * abs_wx[i]);
    loom_net_free(net);
  }
  g_free(x);
}

/* int4 at rest: the codes (half a byte each) and one scale per row; before,
 * the master, the packed copy, the dequantized copy and the gradient. */
static void test_int4_resident_bytes(void) {
  loom_error err = {0};
  const int64_t rows = 64, cols = 96;
  loom_net *net = dense_net(LOOM_DTYPE_INT4, cols, rows, false);
  float x[96] = {0}, y[64];
  forward(net, 1, x, 1, y); /* builds the dequantized copy of the plain path */
  const size_t f32 = (size_t)(rows * cols) * 4, packed = (size_t)(rows * cols) / 2 + (size_t)rows * 4;
  g_assert_cmpuint(loom_net_resident_bytes(net), ==, f32 + packed + f32 + f32);
  g_assert_cmpuint(loom_net_training_bytes(net), ==, f32 + packed + f32 + f32);
  g_assert_cmpuint(loom_net_inference_bytes(net), ==, packed);
  g_assert_cmpint(loom_net_to_inference(net, &err), ==, 0);
  g_assert_cmpuint(loom_net_resident_bytes(net), ==, packed);
  g_assert_cmpuint(loom_net_resident_bytes(net), <=, f32 / 8 + (size_t)rows * 4);
  forward(net, 1, x, 1, y);
  g_assert_cmpuint(loom_net_resident_bytes(net), ==, packed);
  loom_net_free(net);
}

/* Training a net at rest: masters come back as the dequantized codes (the
 * values the net computed with), gradients come back, and a step trains. */
static void test_train_after_inference(void) {
  loom_error err = {0};
  loom_dtype dt[2] = {LOOM_DTYPE_INT4, LOOM_DTYPE_TERNARY};
  loom_net *net = tt_mlp(2, (int64_t[]){7, 5}, 2, "tanh", 2, dt, 9);
  loom_weights *w = loom_layer_weights(loom_net_layer_at(net, (loom_coord){0, 0, 0, 0}), 0);
  float eff[14];
  memcpy(eff, loom_weights_effective(w, &err), sizeof eff);
  g_assert_cmpint(loom_net_to_inference(net, &err), ==, 0);
  g_assert_false(loom_weights_master_resident(w));
  const size_t rest = loom_net_resident_bytes(net);

  loom_dataset *ds = loom_gen_spiral(10, 2, 0.0, 1, NULL);
  loom_train_config cfg = loom_train_config_default();
  cfg.loss.kind = LOOM_LOSS_CROSS_ENTROPY;
  cfg.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  cfg.schedule = loom_schedule_constant(0.5);
  cfg.batch_size = 16;
  cfg.seed = 11;
  loom_trainer *tr = loom_trainer_new(net, ds, NULL, &cfg, NULL, &err);
  if (!tr) g_error("%s", err.message);
  g_assert_true(loom_weights_master_resident(w));
  g_assert_cmpmem(loom_weights_master_const(w), sizeof eff, eff, sizeof eff);
  g_assert_nonnull(loom_layer_grad(loom_net_layer_at(net, (loom_coord){0, 0, 0, 0}), 0));
  g_assert_cmpuint(loom_net_resident_bytes(net), >, rest);
  loom_step_stats st;
  g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, 0);
  g_assert_true(isfinite(st.loss));
  g_assert_true(memcmp(loom_weights_master_const(w), eff, sizeof eff) != 0);
  g_assert_nonnull(loom_weights_packed(w, NULL)); /* re-morphed from the updated master */
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

/* Changing what the packed copy means recreates the master first; a clone
 * of a resting store rests too; a non-finite master is refused by name. */
static void test_store_at_rest(void) {
  loom_error err = {0};
  loom_weights *w = loom_weights_new(3, 5, &err);
  loom_weights_set_label(w, "layer (0,0,4,0) weight");
  for (int i = 0; i < 15; i++) loom_weights_master(w)[i] = (float)(i - 7) / 3.0f;
  loom_weights_touch(w);
  g_assert_cmpint(loom_weights_set_dtype(w, LOOM_DTYPE_INT4, &err), ==, 0);
  float eff[15];
  memcpy(eff, loom_weights_effective(w, &err), sizeof eff);
  g_assert_cmpint(loom_weights_to_inference(w, &err), ==, 0);
  g_assert_cmpuint(loom_weights_resident_bytes(w), ==, 3 * 3 + 3 * 4);
  g_assert_cmpmem(loom_weights_effective(w, &err), sizeof eff, eff, sizeof eff); /* from the codes */
  g_assert_cmpint(loom_weights_to_inference(w, &err), ==, 0);                    /* frees that copy again */

  loom_weights *c = loom_weights_clone(w, &err);
  g_assert_nonnull(c);
  g_assert_false(loom_weights_master_resident(c));
  size_t n1, n2;
  const uint8_t *p1 = loom_weights_packed(w, &n1), *p2 = loom_weights_packed(c, &n2);
  g_assert_cmpmem(p1, n1, p2, n2);
  loom_weights_touch(c); /* nothing can have been written: the codes stay */
  g_assert_nonnull(loom_weights_packed(c, NULL));
  loom_weights_free(c);

  g_assert_cmpint(loom_weights_set_dtype(w, LOOM_DTYPE_INT8, &err), ==, 0);
  g_assert_true(loom_weights_master_resident(w));
  g_assert_cmpmem(loom_weights_master_const(w), sizeof eff, eff, sizeof eff);

  loom_weights_master(w)[7] = NAN;
  loom_weights_touch(w);
  g_assert_cmpint(loom_weights_to_inference(w, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_nonnull(strstr(err.message, "layer (0,0,4,0) weight"));
  g_assert_nonnull(strstr(err.message, "row 1, column 2"));
  g_assert_true(loom_weights_master_resident(w));
  loom_weights_free(w);
}

/* A net at rest saves the codes it computes with, and a clone rests too and
 * computes the same bits: nothing is re-quantized on the way. */
static void test_save_and_clone_at_rest(void) {
  const loom_dtype dts[] = {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_INT4, LOOM_DTYPE_FP8_E4M3};
  float x[2 * N_IN];
  for (int i = 0; i < 2 * N_IN; i++) x[i] = (float)((i * 7919) % 41 - 20) / 9.0f;
  for (size_t k = 0; k < G_N_ELEMENTS(dts); k++) {
    loom_error err = {0};
    loom_net *net = dense_net(dts[k], N_IN, N_OUT, true);
    float plain[2 * N_OUT], again[2 * N_OUT], rest[2 * N_OUT], cloned[2 * N_OUT];
    forward(net, 1, x, 2, plain);
    g_assert_cmpint(loom_net_to_inference(net, &err), ==, 0);
    forward(net, 2, x, 2, rest);
    loom_net *c = loom_net_clone(net, &err);
    if (!c) g_error("%s", err.message);
    g_assert_cmpuint(loom_net_resident_bytes(c), ==, loom_net_resident_bytes(net));
    forward(c, 1, x, 2, cloned);
    g_assert_cmpmem(rest, sizeof rest, cloned, sizeof cloned);
    loom_net_free(c);

    size_t len = 0;
    char *json = loom_model_to_json(net, &len, &err);
    if (!json) g_error("%s", err.message);
    loom_net *back = NULL;
    if (loom_model_load_data(json, len, "rest.loom.json", 0, &back, &err)) g_error("%s", err.message);
    loom_diag *diags = NULL;
    g_assert_cmpint(loom_net_infer_shapes(back, 0, &diags), ==, 0);
    g_free(diags);
    forward(back, 1, x, 2, again); /* the plain forward of what was saved */
    g_assert_cmpmem(plain, sizeof plain, again, sizeof again);
    loom_net_free(back);

    /* Loaded at rest: each tensor rests as soon as it is read. */
    if (loom_model_load_data(json, len, "rest.loom.json", LOOM_MODEL_STRICT | LOOM_MODEL_AT_REST, &back, &err))
      g_error("%s", err.message);
    g_assert_true(loom_weights_master_resident(weight_of(back, 0)) == (dts[k] == LOOM_DTYPE_FLOAT32));
    g_assert_cmpint(loom_net_infer_shapes(back, 0, &diags), ==, 0);
    g_free(diags);
    g_assert_cmpint(loom_net_to_inference(back, &err), ==, 0);
    g_assert_cmpuint(loom_net_resident_bytes(back), ==, loom_net_inference_bytes(back));
    forward(back, 3, x, 2, again);
    g_assert_cmpmem(rest, sizeof rest, again, sizeof again);
    loom_net_free(back);
    g_assert_cmpint(loom_model_load_data(json, len, "rest.loom.json", 1u << 7, &back, &err), ==, LOOM_ERR_INVALID);
    g_assert_nonnull(strstr(err.message, "unknown load flags 0x80"));
    free(json); /* malloc'd (model.h) */
    loom_net_free(net);
  }
}

/* A DNA snapshot of a net at rest dequantizes into the snapshot itself: no
 * copy is left in the stores, and the snapshot holds the values the net
 * computed with before it went to rest (the same bytes, compared whole). */
static void test_dna_at_rest(void) {
  loom_error err = {0};
  loom_net *net = dense_net(LOOM_DTYPE_INT4, 40, 24, true);
  loom_dna_snapshot *before = loom_dna_snapshot_new(net, 0, &err);
  g_assert_nonnull(before);
  g_assert_cmpint(loom_net_to_inference(net, &err), ==, 0);
  loom_dna_snapshot *after = loom_dna_snapshot_new(net, 0, &err);
  g_assert_nonnull(after);
  g_assert_cmpuint(loom_net_resident_bytes(net), ==, loom_net_inference_bytes(net));
  g_assert_cmpuint(loom_dna_snapshot_bytes(before), ==, loom_dna_snapshot_bytes(after));
  loom_dna_result *r = loom_dna_compare(before, after, 0.5, &err);
  g_assert_nonnull(r);
  g_assert_cmpfloat(loom_dna_result_similarity(r), ==, 1.0);
  g_assert_cmpfloat(loom_dna_result_matrix(r)[0], ==, 1.0);
  loom_dna_result_free(r);
  loom_dna_snapshot_free(before);
  loom_dna_snapshot_free(after);
  loom_net_free(net);
}

/* The ONNX export of a net at rest writes each weight from a copy it frees
 * (onnx-layers.c, onnx-recurrent.c): afterwards the stores still hold only
 * their codes and scales. A dense net and an lstm at int4. */
static void test_onnx_export_at_rest(void) {
  loom_error err = {0};
  loom_net *nets[2] = {dense_net(LOOM_DTYPE_INT4, 12, 7, true), loom_net_new(1, 1, 1, 1, &err)};
  g_assert_nonnull(nets[1]);
  loom_shape s = loom_shape_make(2, (const int64_t[]){5, 6});
  g_assert_cmpint(loom_net_set_input_shape(nets[1], &s, &err), ==, 0);
  loom_layer *l = loom_layer_new_by_name("lstm", &err);
  g_assert_nonnull(l);
  g_assert_cmpint(loom_layer_set_int(l, "input_size", 6, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(l, "hidden_size", 4, &err), ==, 0);
  g_assert_cmpint(loom_net_place(nets[1], (loom_coord){0, 0, 0, 0}, l, &err), ==, 0);
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(nets[1], 17, &diags), ==, 0);
  g_free(diags);
  g_assert_cmpint(loom_net_set_dtype_all(nets[1], LOOM_DTYPE_INT4, &err), ==, 0);
  for (int i = 0; i < 2; i++) {
    g_assert_cmpint(loom_net_to_inference(nets[i], &err), ==, 0);
    void *data = NULL;
    size_t len = 0;
    if (loom_onnx_export_bytes(nets[i], &data, &len, &err)) g_error("%s", err.message);
    g_assert_cmpuint(len, >, 0);
    free(data);
    g_assert_cmpuint(loom_net_resident_bytes(nets[i]), ==, loom_net_inference_bytes(nets[i]));
    loom_net_free(nets[i]);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/inference/forward-every-dtype", test_forward_every_dtype);
  g_test_add_func("/inference/forward-blocks", test_forward_blocks);
  g_test_add_func("/inference/int4-resident-bytes", test_int4_resident_bytes);
  g_test_add_func("/inference/train-after-inference", test_train_after_inference);
  g_test_add_func("/inference/store-at-rest", test_store_at_rest);
  g_test_add_func("/inference/save-and-clone-at-rest", test_save_and_clone_at_rest);
  g_test_add_func("/inference/dna-at-rest", test_dna_at_rest);
  g_test_add_func("/inference/onnx-export-at-rest", test_onnx_export_at_rest);
  return g_test_run();
}
