/* embedding, layernorm, rmsnorm: PyTorch parity, gradients, errors, dtypes, determinism. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gradcheck.h"
#include "layer-test-util.h"
#include "loom/loom.h"

static loom_npy norm_load(const char *name, const char *what) {
  char file[96];
  snprintf(file, sizeof file, "%s_%s", name, what);
  return parity_load("norm", file);
}

/* ---- parity ---------------------------------------------------------------- */

/* CASE_params: [kind, over_all, affine, eps, batch, rank, d0, d1, d2] (tests/parity/gen_norm.py). */
static void check_norm_parity(const char *name) {
  loom_npy p = norm_load(name, "params");
  g_assert_cmpint(loom_npy_numel(&p), ==, 9);
  const float *v = p.data;
  bool affine = v[2] != 0, layernorm = v[0] == 0;
  int64_t batch = (int64_t)v[4], dims[3] = {(int64_t)v[6], (int64_t)v[7], (int64_t)v[8]};
  loom_layer *l = lt_new(layernorm ? "layernorm" : "rmsnorm");
  lt_set_enum(l, "over", v[1] != 0 ? "all" : "last");
  lt_set_float(l, "eps", v[3]);
  lt_set_bool(l, "elementwise_affine", affine);
  lt_build(l, (int)v[5], dims, 1);
  loom_npy x = norm_load(name, "x"), y = norm_load(name, "y"), dy = norm_load(name, "dy"), dx = norm_load(name, "dx");
  loom_npy w = {0}, b = {0}, dw = {0}, db = {0};
  g_assert_cmpint(loom_layer_n_weights(l), ==, affine ? (layernorm ? 2 : 1) : 0);
  if (affine) {
    w = norm_load(name, "weight");
    dw = norm_load(name, "dweight");
    lt_set_master(l, 0, w.data, loom_npy_numel(&w));
    if (layernorm) {
      b = norm_load(name, "bias");
      db = norm_load(name, "dbias");
      lt_set_master(l, 1, b.data, loom_npy_numel(&b));
    }
  }
  g_assert_cmpint(loom_npy_numel(&x), ==, batch * lt_in_numel(l));
  float *got_y = g_new(float, loom_npy_numel(&y)), *got_dx = g_new(float, loom_npy_numel(&x));
  char what[128];
  lt_forward(l, NULL, x.data, got_y, batch);
  snprintf(what, sizeof what, "%s y", name);
  lt_assert_parity(what, got_y, &y);
  lt_backward(l, NULL, x.data, got_y, dy.data, got_dx, batch);
  snprintf(what, sizeof what, "%s dx", name);
  lt_assert_parity(what, got_dx, &dx);
  if (affine) {
    snprintf(what, sizeof what, "%s dweight", name);
    lt_assert_parity(what, loom_layer_grad(l, 0), &dw);
  }
  if (affine && layernorm) {
    snprintf(what, sizeof what, "%s dbias", name);
    lt_assert_parity(what, loom_layer_grad(l, 1), &db);
  }
  loom_npy *all[] = {&p, &x, &y, &dy, &dx, &w, &b, &dw, &db};
  for (size_t i = 0; i < G_N_ELEMENTS(all); i++) loom_npy_clear(all[i]);
  g_free(got_y);
  g_free(got_dx);
  loom_layer_free(l);
}

/* CASE_params: [2, num_embeddings, embedding_dim, batch, tokens]. */
static void check_embedding_parity(const char *name) {
  loom_npy p = norm_load(name, "params");
  int64_t num = (int64_t)p.data[1], dim = (int64_t)p.data[2], batch = (int64_t)p.data[3], tokens = (int64_t)p.data[4];
  loom_layer *l = lt_new("embedding");
  lt_set_int(l, "num_embeddings", num);
  lt_set_int(l, "embedding_dim", dim);
  lt_build(l, 1, (const int64_t[]){tokens}, 1);
  loom_npy x = norm_load(name, "x"), w = norm_load(name, "weight"), y = norm_load(name, "y"),
           dy = norm_load(name, "dy"), dw = norm_load(name, "dweight");
  lt_set_master(l, 0, w.data, loom_npy_numel(&w));
  float *got_y = g_new(float, loom_npy_numel(&y)), *got_dx = g_new(float, batch * tokens);
  lt_forward(l, NULL, x.data, got_y, batch);
  /* A lookup copies: exact. */
  g_assert_cmpmem(got_y, loom_npy_numel(&y) * sizeof(float), y.data, loom_npy_numel(&y) * sizeof(float));
  memset(got_dx, 0xff, (size_t)(batch * tokens) * sizeof(float));
  lt_backward(l, NULL, x.data, got_y, dy.data, got_dx, batch);
  for (int64_t i = 0; i < batch * tokens; i++) g_assert_cmpfloat(got_dx[i], ==, 0.0f);
  lt_assert_parity(name, loom_layer_grad(l, 0), &dw);
  loom_npy *all[] = {&p, &x, &w, &y, &dy, &dw};
  for (size_t i = 0; i < G_N_ELEMENTS(all); i++) loom_npy_clear(all[i]);
  g_free(got_y);
  g_free(got_dx);
  loom_layer_free(l);
}

static void test_parity(void) {
  const char *norms[] = {"ln_last", "ln_last_noaffine", "ln_all", "ln_last_3d", "rms_last", "rms_last_noaffine",
                         "rms_all"};
  for (size_t i = 0; i < G_N_ELEMENTS(norms); i++) check_norm_parity(norms[i]);
  check_embedding_parity("emb_small");
  check_embedding_parity("emb_repeat");
}

/* ---- gradients --------------------------------------------------------------- */

static loom_layer *norm_layer(const char *type, const char *over, bool affine, int rank, const int64_t *dims,
                              uint64_t seed) {
  loom_layer *l = lt_new(type);
  lt_set_enum(l, "over", over);
  lt_set_bool(l, "elementwise_affine", affine);
  lt_build(l, rank, dims, seed);
  /* Non-trivial affine parameters so their gradients are exercised. */
  for (int i = 0; i < loom_layer_n_weights(l); i++) {
    loom_weights *w = loom_layer_weights(l, i);
    gradcheck_fill_uniform(loom_weights_master(w), loom_weights_count(w), -1.5, 1.5, seed + (uint64_t)i);
    loom_weights_touch(w);
  }
  return l;
}

static void test_gradients(void) {
  const struct {
    const char *type, *over;
    bool affine;
    int rank;
    int64_t dims[3];
  } cfgs[] = {
    {"layernorm", "last", true, 2, {3, 7}},   {"layernorm", "all", true, 3, {2, 3, 5}},
    {"layernorm", "last", false, 1, {9}},     {"rmsnorm", "last", true, 2, {4, 5}},
    {"rmsnorm", "all", true, 2, {3, 3}},      {"rmsnorm", "last", false, 3, {2, 2, 6}},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cfgs); i++) {
    loom_layer *l = norm_layer(cfgs[i].type, cfgs[i].over, cfgs[i].affine, cfgs[i].rank, cfgs[i].dims, 40 + i);
    int64_t n = 2 * lt_in_numel(l);
    float *x = g_new(float, n);
    gradcheck_fill_uniform(x, n, -2.0, 2.0, 50 + i);
    gradcheck_layer(l, x, 2, 2e-3);
    g_free(x);
    loom_layer_free(l);
  }

  loom_layer *l = lt_new("embedding");
  lt_set_int(l, "num_embeddings", 6);
  lt_set_int(l, "embedding_dim", 4);
  lt_build(l, 1, (const int64_t[]){5}, 3);
  const float tokens[] = {0, 5, 2, 2, 1, 3, 3, 3, 0, 4};
  gradcheck_options o = {.skip_dx = true, .tolerance = 2e-3};
  gradcheck_report rep;
  lt_assert_gradcheck("embedding", gradcheck_layer_measure(l, tokens, 2, &o, &rep), &rep, 2e-3);
  loom_layer_free(l);
}

/* ---- errors ---------------------------------------------------------------------- */

static void expect_forward_error(loom_layer *l, const float *x, int64_t batch, loom_status code, const char *msg) {
  loom_error err = {0};
  loom_ctx ctx = {.training = true};
  float *y = g_new(float, batch * lt_out_numel(l));
  g_assert_cmpint(layer_forward(l, &ctx, x, y, batch, &err), ==, code);
  g_assert_cmpstr(err.message, ==, msg);
  g_free(y);
}

static void test_errors(void) {
  loom_layer *l = lt_new("embedding");
  lt_set_int(l, "num_embeddings", 5);
  lt_set_int(l, "embedding_dim", 3);
  lt_build_fails(l, 2, (const int64_t[]){3, 4}, LOOM_ERR_SHAPE,
                 "layer embedding: expects an input of rank 1 [tokens] of token indices; got [3×4]");
  lt_build(l, 1, (const int64_t[]){3}, 1);
  expect_forward_error(l, (const float[]){0, 1, 4, 4, 3, 5}, 2, LOOM_ERR_RANGE,
                       "layer embedding: sample 1, position 2: token index 5 is outside 0…4 (num_embeddings 5)");
  expect_forward_error(l, (const float[]){0, -1, 4}, 1, LOOM_ERR_RANGE,
                       "layer embedding: sample 0, position 1: token index -1 is outside 0…4 (num_embeddings 5)");
  expect_forward_error(l, (const float[]){0, 2.5f, 4}, 1, LOOM_ERR_INVALID,
                       "layer embedding: sample 0, position 1: token index 2.5 is not an integer");
  expect_forward_error(l, (const float[]){0, 1, 2, 3, NAN, 1}, 2, LOOM_ERR_INVALID,
                       "layer embedding: sample 1, position 1: token index nan is not an integer");
  /* backward checks too: the gradient never lands outside the table. */
  loom_error err = {0};
  loom_ctx ctx = {.training = true};
  float dy[9] = {0};
  g_assert_cmpint(layer_backward(l, &ctx, (const float[]){0, 7, 1}, NULL, dy, NULL, 1, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==,
                  "layer embedding: sample 0, position 1: token index 7 is outside 0…4 (num_embeddings 5)");
  loom_layer_free(l);

  l = lt_new("layernorm");
  g_assert_cmpint(loom_layer_set_float(l, "eps", 0.0, &err), !=, LOOM_OK);
  g_assert_nonnull(strstr(err.message, "eps"));
  g_assert_cmpint(loom_layer_set_enum(l, "over", "rows", &err), !=, LOOM_OK);
  loom_layer_free(l);
}

/* ---- dtypes, shapes, registry ------------------------------------------------------ */

static void test_dtypes(void) {
  /* Norm parameters stay float32 at any layer dtype: same bits as float32. */
  const char *types[] = {"layernorm", "rmsnorm"};
  for (size_t t = 0; t < G_N_ELEMENTS(types); t++) {
    loom_error err = {0};
    loom_layer *f = norm_layer(types[t], "last", true, 2, (const int64_t[]){3, 6}, 7);
    loom_layer *q = loom_layer_clone(f, &err);
    g_assert_nonnull(q);
    g_assert_cmpint(loom_layer_set_dtype(q, LOOM_DTYPE_INT4, &err), ==, LOOM_OK);
    for (int i = 0; i < loom_layer_n_weights(q); i++)
      g_assert_cmpint(loom_weights_dtype(loom_layer_weights(q, i)), ==, LOOM_DTYPE_FLOAT32);
    float x[36], yf[36], yq[36];
    gradcheck_fill_uniform(x, 36, -1.0, 1.0, 8);
    lt_forward(f, NULL, x, yf, 2);
    lt_forward(q, NULL, x, yq, 2);
    g_assert_cmpmem(yf, sizeof yf, yq, sizeof yq);
    loom_layer_free(f);
    loom_layer_free(q);
  }

  /* The embedding table follows the dtype (per-token scales) and the lookup
   * returns exactly the dequantized rows. */
  const loom_dtype dtypes[] = {LOOM_DTYPE_INT8, LOOM_DTYPE_INT4};
  for (size_t d = 0; d < G_N_ELEMENTS(dtypes); d++) {
    loom_error err = {0};
    loom_layer *l = lt_new("embedding");
    lt_set_int(l, "num_embeddings", 9);
    lt_set_int(l, "embedding_dim", 5);
    lt_build(l, 1, (const int64_t[]){4}, 2);
    g_assert_cmpint(loom_layer_set_dtype(l, dtypes[d], &err), ==, LOOM_OK);
    loom_weights *w = loom_layer_weights(l, 0);
    g_assert_cmpint(loom_weights_dtype(w), ==, dtypes[d]);
    const float *deq = loom_weights_effective(w, &err);
    g_assert_nonnull(deq);
    g_assert_true(memcmp(deq, loom_weights_master_const(w), 45 * sizeof(float)) != 0);
    const float tok[] = {8, 0, 3, 8};
    float y[20];
    lt_forward(l, NULL, tok, y, 1);
    for (int t = 0; t < 4; t++) g_assert_cmpmem(y + 5 * t, 5 * sizeof(float), deq + 5 * (int)tok[t], 5 * sizeof(float));
    loom_layer_free(l);
  }
}

static void test_shapes_and_registry(void) {
  const struct {
    const char *name;
    int id;
    const char *group;
  } types[] = {{"layernorm", 60, "Normalization"}, {"rmsnorm", 61, "Normalization"}, {"embedding", 80, "Embedding"}};
  for (size_t i = 0; i < G_N_ELEMENTS(types); i++) {
    const loom_layer_type *t = loom_layer_type_find(types[i].name);
    g_assert_nonnull(t);
    g_assert_cmpint(loom_layer_type_id(t), ==, types[i].id);
    g_assert_cmpstr(loom_layer_type_group(t), ==, types[i].group);
  }
  char buf[256];
  loom_layer *l = lt_new("layernorm");
  g_assert_cmpfloat(loom_layer_get_float(l, "eps"), ==, 1e-5);
  lt_build(l, 2, (const int64_t[]){4, 7}, 1);
  g_assert_cmpint(loom_weights_cols(loom_layer_weights(l, 0)), ==, 7);
  g_assert_cmpfloat(loom_weights_master_const(loom_layer_weights(l, 0))[3], ==, 1.0f);
  g_assert_cmpfloat(loom_weights_master_const(loom_layer_weights(l, 1))[3], ==, 0.0f);
  g_assert_cmpint(loom_layer_flops(l), ==, 28 * 7);
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "layernorm over last 7, eps 1e-05, affine");
  lt_set_enum(l, "over", "all");
  lt_build(l, 2, (const int64_t[]){4, 7}, 1);
  g_assert_cmpint(loom_weights_cols(loom_layer_weights(l, 0)), ==, 28);
  g_assert_cmpint(loom_layer_out_shape(l).d[1], ==, 7);
  loom_layer_free(l);

  l = lt_new("rmsnorm");
  g_assert_cmpfloat(loom_layer_get_float(l, "eps"), ==, 1e-6);
  lt_set_bool(l, "elementwise_affine", false);
  lt_build(l, 1, (const int64_t[]){10}, 1);
  g_assert_cmpint(loom_layer_n_weights(l), ==, 0);
  g_assert_cmpint(loom_layer_flops(l), ==, 30);
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "rmsnorm over last 10, eps 1e-06");
  loom_layer_free(l);

  l = lt_new("embedding");
  lt_build(l, 1, (const int64_t[]){12}, 1);
  loom_shape out = loom_layer_out_shape(l);
  g_assert_cmpint(out.rank, ==, 2);
  g_assert_cmpint(out.d[0], ==, 12);
  g_assert_cmpint(out.d[1], ==, 64);
  g_assert_cmpint(loom_weights_rows(loom_layer_weights(l, 0)), ==, 256);
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "embedding 256×64");
  loom_layer_free(l);
}

/* ---- determinism --------------------------------------------------------------------- */

typedef struct {
  float *y, *dx, *g[2];
} run_out;

static run_out run_layer(loom_layer *l, loom_pool *pool, const float *x, const float *dy, int64_t batch) {
  run_out r = {.y = g_new(float, batch * lt_out_numel(l)), .dx = g_new(float, batch * lt_in_numel(l))};
  lt_forward(l, pool, x, r.y, batch);
  lt_backward(l, pool, x, r.y, dy, r.dx, batch);
  for (int i = 0; i < loom_layer_n_weights(l); i++)
    r.g[i] = g_memdup2(loom_layer_grad(l, i), (gsize)loom_weights_count(loom_layer_weights(l, i)) * sizeof(float));
  return r;
}

static void free_run(run_out *r) {
  g_free(r->y);
  g_free(r->dx);
  g_free(r->g[0]);
  g_free(r->g[1]);
}

static void check_determinism(loom_layer *l, const float *x, int64_t batch) {
  int64_t ny = batch * lt_out_numel(l), nx = batch * lt_in_numel(l);
  float *dy = g_new(float, ny);
  gradcheck_fill_uniform(dy, ny, -1.0, 1.0, 77);
  run_out ref = run_layer(l, NULL, x, dy, batch);
  const int threads[] = {1, 2, 7};
  for (size_t t = 0; t < G_N_ELEMENTS(threads); t++) {
    loom_pool *pool = lt_pool(threads[t]);
    run_out r = run_layer(l, pool, x, dy, batch);
    g_assert_cmpmem(ref.y, ny * sizeof(float), r.y, ny * sizeof(float));
    g_assert_cmpmem(ref.dx, nx * sizeof(float), r.dx, nx * sizeof(float));
    for (int i = 0; i < loom_layer_n_weights(l); i++) {
      gsize n = (gsize)loom_weights_count(loom_layer_weights(l, i)) * sizeof(float);
      g_assert_cmpmem(ref.g[i], n, r.g[i], n);
    }
    free_run(&r);
    loom_pool_free(pool);
  }
  free_run(&ref);
  g_free(dy);
}

static void test_determinism(void) {
  /* 600 values per row: three column blocks of the parameter gradient. */
  const char *types[] = {"layernorm", "rmsnorm"};
  for (size_t t = 0; t < G_N_ELEMENTS(types); t++) {
    loom_layer *l = norm_layer(types[t], "last", true, 2, (const int64_t[]){9, 600}, 3);
    float *x = g_new(float, 4 * 9 * 600);
    gradcheck_fill_uniform(x, 4 * 9 * 600, -3.0, 3.0, 4);
    check_determinism(l, x, 4);
    g_free(x);
    loom_layer_free(l);
  }
  loom_layer *l = lt_new("embedding");
  lt_set_int(l, "num_embeddings", 7);
  lt_set_int(l, "embedding_dim", 600);
  lt_build(l, 1, (const int64_t[]){40}, 1);
  float tok[120];
  for (int i = 0; i < 120; i++) tok[i] = (float)((i * 5 + i / 7) % 7); /* every token repeats */
  check_determinism(l, tok, 3);
  loom_layer_free(l);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/embedding-norm/parity", test_parity);
  g_test_add_func("/embedding-norm/gradients", test_gradients);
  g_test_add_func("/embedding-norm/errors", test_errors);
  g_test_add_func("/embedding-norm/dtypes", test_dtypes);
  g_test_add_func("/embedding-norm/shapes-and-registry", test_shapes_and_registry);
  g_test_add_func("/embedding-norm/determinism", test_determinism);
  return g_test_run();
}
