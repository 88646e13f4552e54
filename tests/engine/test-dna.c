/* Network DNA: the kernels (fixed-order dot, quantiles, resampled map), a
 * network against itself, its moved copy, its int8/ternary morphs and
 * differently sized layers; the memory budget; errors; and a layer moved in
 * the middle of training showing up as a logic shift. */
#include <stdio.h>

#include "dna/dna-internal.h"
#include "train-test-util.h"

#define C(z, y, x, l) ((loom_coord){z, y, x, l})

static void place(loom_net *net, loom_coord at, loom_layer *l) {
  loom_error err = {0};
  if (loom_net_place(net, at, l, &err)) g_error("%s", err.message);
}

static loom_layer *dense(int64_t n_in, int64_t n_out) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  g_assert_nonnull(l);
  g_assert_cmpint(loom_layer_set_int(l, "in_features", n_in, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", n_out, &err), ==, 0);
  return l;
}

/* widths[0] → widths[1] → … with a relu after every hidden dense, one layer
 * per cell along x in slot l = 0 of a grid with two slots per cell, so a
 * layer can move to slot 1 of its cell without changing the spine order. */
static loom_net *mlp(const int64_t *widths, int n, uint64_t seed) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 2 * n, 2, &err);
  g_assert_nonnull(net);
  loom_shape in = loom_shape_1d(widths[0]);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, &err), ==, 0);
  int x = 0;
  for (int i = 0; i + 1 < n; i++) {
    place(net, C(0, 0, x++, 0), dense(widths[i], widths[i + 1]));
    if (i + 2 < n) place(net, C(0, 0, x++, 0), loom_layer_new_by_name("relu", &err));
  }
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(net, seed, &diags), ==, 0);
  free(diags);
  return net;
}

static loom_dna_result *compare(const loom_net *a, const loom_net *b) {
  loom_error err = {0};
  loom_dna_result *r = loom_dna_compare_nets(a, b, LOOM_DNA_DEFAULT_THRESHOLD, &err);
  if (!r) g_error("%s", err.message);
  return r;
}

static bool coord_eq(loom_coord p, loom_coord q) { return p.z == q.z && p.y == q.y && p.x == q.x && p.l == q.l; }

/* ---- kernels ----------------------------------------------------------- */

static void test_dot(void) {
  enum { N = 5003 };
  float *a = g_new(float, N), *b = g_new(float, N);
  double ref = 0;
  for (int i = 0; i < N; i++) {
    a[i] = sinf((float)i * 0.37f);
    b[i] = cosf((float)i * 0.11f) + 0.25f;
    ref += (double)a[i] * b[i];
  }
  double got = dna_dot(a, b, N);
  g_assert_cmpfloat(fabs(got - ref), <, 1e-5 * fabs(ref) + 1e-6);
  /* Every length below one block of lanes takes the tail path. */
  for (int n = 0; n < 40; n++) {
    double r = 0;
    for (int i = 0; i < n; i++) r += (double)a[i] * b[i];
    g_assert_cmpfloat(fabs(dna_dot(a, b, n) - r), <, 1e-5);
  }
  g_free(a);
  g_free(b);
}

static void test_quantiles(void) {
  /* -32..31 in reverse: the k-th of 32 quantiles of 64 sorted values sits
   * at position 2k + 0.5, halfway between -32 + 2k and -31 + 2k. */
  float v[64], scratch[128], q[LOOM_DNA_QUANTILES];
  for (int i = 0; i < 64; i++) v[i] = (float)(31 - i);
  dna_quantiles(v, 64, scratch, q);
  for (int k = 0; k < LOOM_DNA_QUANTILES; k++) g_assert_cmpfloat(q[k], ==, -31.5f + 2.0f * (float)k);
  /* One value: every quantile is that value (negative zero sorts too). */
  float one = -0.0f;
  dna_quantiles(&one, 1, scratch, q);
  for (int k = 0; k < LOOM_DNA_QUANTILES; k++) g_assert_cmpfloat(q[k], ==, 0.0f);
}

static void test_map(void) {
  /* A 4×4 matrix and its 2× nearest-neighbour enlargement (8×8) and 16×16
   * version resample to the same map. */
  float small[16], big[64], huge[256], m1[DNA_MAP_CELLS], m2[DNA_MAP_CELLS], m3[DNA_MAP_CELLS];
  for (int i = 0; i < 16; i++) small[i] = (float)(i * 7 % 5) - 2.0f;
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 8; c++) big[r * 8 + c] = small[(r / 2) * 4 + c / 2];
  for (int r = 0; r < 16; r++)
    for (int c = 0; c < 16; c++) huge[r * 16 + c] = small[(r / 4) * 4 + c / 4];
  dna_map(small, 4, 4, m1);
  dna_map(big, 8, 8, m2);
  dna_map(huge, 16, 16, m3);
  for (int k = 0; k < DNA_MAP_CELLS; k++) {
    g_assert_cmpfloat(m1[k], ==, m2[k]);
    g_assert_cmpfloat(fabsf(m1[k] - m3[k]), <, 1e-6f);
  }
  /* Odd sizes: a constant stays constant (every cell averages its area). */
  float ones[3 * 11];
  for (int i = 0; i < 33; i++) ones[i] = 1.5f;
  dna_map(ones, 3, 11, m1);
  for (int k = 0; k < DNA_MAP_CELLS; k++) g_assert_cmpfloat(fabsf(m1[k] - 1.5f), <, 1e-6f);
  /* A left/right split keeps its sign pattern per column of the map. */
  float split[5 * 6];
  for (int r = 0; r < 5; r++)
    for (int c = 0; c < 6; c++) split[r * 6 + c] = c < 3 ? -1.0f : 1.0f;
  dna_map(split, 5, 6, m1);
  for (int i = 0; i < 8; i++) {
    g_assert_cmpfloat(m1[i * 8 + 0], ==, -1.0f);
    g_assert_cmpfloat(m1[i * 8 + 7], ==, 1.0f);
    g_assert_cmpfloat(fabsf(m1[i * 8 + 3] + m1[i * 8 + 4]), <, 1e-6f);
  }
}

/* ---- networks ---------------------------------------------------------- */

static void check_self(const loom_net *net, const char *name) {
  loom_dna_result *r = compare(net, net);
  int64_t n = loom_net_n_layers(net);
  g_assert_cmpint(loom_dna_result_n_a(r), ==, n);
  g_assert_cmpint(loom_dna_result_n_b(r), ==, n);
  g_assert_cmpint(loom_dna_result_n_shared(r), ==, n);
  for (int64_t k = 0; k < n; k++) {
    loom_dna_pair p = loom_dna_result_shared(r, k);
    if (p.score != 1.0) g_error("%s: slot %lld scores %.17g against itself", name, (long long)k, p.score);
    g_assert_cmpint(p.a, ==, k);
    g_assert_cmpint(p.b, ==, k);
    g_assert_cmpfloat(loom_dna_result_at(r, k, k), ==, 1.0);
  }
  g_assert_cmpfloat(loom_dna_result_similarity(r), ==, 1.0);
  g_assert_cmpint(loom_dna_result_n_shifts(r), ==, 0);
  for (int64_t i = 0; i < n * n; i++) {
    double v = loom_dna_result_matrix(r)[i];
    g_assert_true(v >= 0 && v <= 1);
  }
  loom_dna_result_free(r);
}

static void test_self(void) {
  for (int e = 0; e < loom_example_count(); e++) {
    loom_net *net = NULL;
    loom_error err = {0};
    g_assert_cmpint(loom_example_build(loom_example_name(e), &net, &err), ==, 0);
    check_self(net, loom_example_name(e));
    loom_net_free(net);
  }
  int64_t w[] = {3, 8, 12, 2};
  loom_net *net = mlp(w, 4, 5);
  check_self(net, "mlp");
  /* A snapshot that kept only profiles still finds every slot itself. */
  loom_error err = {0};
  loom_dna_snapshot *full = loom_dna_snapshot_new(net, 7, &err);
  loom_dna_snapshot *lean = loom_dna_snapshot_new_ex(net, 8, 0, &err);
  g_assert_nonnull(full);
  g_assert_nonnull(lean);
  g_assert_cmpint(loom_dna_snapshot_step(full), ==, 7);
  g_assert_cmpint(loom_dna_snapshot_n_slots(lean), ==, 5);
  g_assert_true(loom_dna_snapshot_slot(full, 0).exact);
  g_assert_false(loom_dna_snapshot_slot(lean, 0).exact);
  g_assert_cmpuint(loom_dna_snapshot_bytes(lean) + (3 * 8 + 8 + 8 * 12 + 12 + 12 * 2 + 2) * sizeof(float), ==,
                   loom_dna_snapshot_bytes(full));
  loom_dna_result *r = loom_dna_compare(lean, lean, 0.8, &err);
  g_assert_cmpfloat(loom_dna_result_similarity(r), ==, 1.0);
  g_assert_cmpint(loom_dna_result_n_shifts(r), ==, 0);
  loom_dna_result_free(r);
  loom_dna_snapshot_free(full);
  loom_dna_snapshot_free(lean);
  loom_net_free(net);
}

static void test_snapshot_fields(void) {
  int64_t w[] = {3, 8, 2};
  loom_net *net = mlp(w, 3, 1);
  loom_error err = {0};
  g_assert_cmpint(loom_layer_set_dtype(loom_net_layer_at(net, C(0, 0, 2, 0)), LOOM_DTYPE_INT8, &err), ==, 0);
  loom_dna_snapshot *s = loom_dna_snapshot_new(net, 0, &err);
  loom_net_free(net); /* the snapshot owns copies */
  g_assert_cmpint(loom_dna_snapshot_n_slots(s), ==, 3);
  loom_dna_slot d0 = loom_dna_snapshot_slot(s, 0), act = loom_dna_snapshot_slot(s, 1), d1 = loom_dna_snapshot_slot(s, 2);
  g_assert_true(coord_eq(d0.at, C(0, 0, 0, 0)) && coord_eq(act.at, C(0, 0, 1, 0)) && coord_eq(d1.at, C(0, 0, 2, 0)));
  g_assert_cmpstr(loom_layer_type_name(d0.type), ==, "dense");
  g_assert_cmpstr(loom_layer_type_name(act.type), ==, "relu");
  g_assert_cmpint(d0.dtype, ==, LOOM_DTYPE_FLOAT32);
  g_assert_cmpint(d1.dtype, ==, LOOM_DTYPE_INT8);
  g_assert_cmpint(d0.values, ==, 3 * 8 + 8);
  g_assert_cmpint(act.values, ==, 0);
  g_assert_cmpint(d0.n_tensors, ==, 2);
  g_assert_cmpstr(loom_dna_snapshot_tensor_path(s, 0, 0), ==, "weight");
  g_assert_cmpstr(loom_dna_snapshot_tensor_path(s, 0, 1), ==, "bias");
  g_assert_null(loom_dna_snapshot_tensor_path(s, 0, 2));
  g_assert_null(loom_dna_snapshot_tensor_path(s, 3, 0));
  g_assert_null(loom_dna_snapshot_slot(s, 3).type);
  loom_dna_snapshot_free(s);
}

static void test_moved(void) {
  int64_t w[] = {3, 8, 12, 5, 2};
  loom_net *a = mlp(w, 5, 2);
  loom_error err = {0};
  loom_net *b = loom_net_clone(a, &err);
  /* A dense to the other slot of its cell, a relu (distinct widths make it
   * unambiguous) and another dense far away to a cell nobody used. */
  g_assert_cmpint(loom_net_move(b, C(0, 0, 2, 0), C(0, 0, 2, 1), &err), ==, 0);
  g_assert_cmpint(loom_net_move(b, C(0, 0, 3, 0), C(0, 0, 9, 1), &err), ==, 0);
  g_assert_cmpint(loom_net_move(b, C(0, 0, 6, 0), C(0, 0, 8, 0), &err), ==, 0);
  loom_dna_result *r = compare(a, b);
  g_assert_cmpint(loom_dna_result_n_shifts(r), ==, 3);
  loom_coord from[] = {C(0, 0, 2, 0), C(0, 0, 3, 0), C(0, 0, 6, 0)};
  loom_coord to[] = {C(0, 0, 2, 1), C(0, 0, 9, 1), C(0, 0, 8, 0)};
  for (int k = 0; k < 3; k++) {
    loom_dna_shift s = loom_dna_result_shift(r, k);
    g_assert_true(coord_eq(s.from, from[k]));
    g_assert_true(coord_eq(s.to, to[k]));
    g_assert_cmpfloat(s.score, ==, 1.0);
    g_assert_cmpfloat(s.own, ==, 0.0);
    g_assert_true(coord_eq(loom_dna_result_slot_b(r, s.b).at, to[k]));
  }
  /* Moves change nothing about what is in the network. */
  g_assert_cmpfloat(loom_dna_result_similarity(r), ==, 1.0);
  g_assert_cmpint(loom_dna_result_n_shared(r), ==, 4);
  loom_dna_result_free(r);
  /* Two identical relus: a moved one has no unique best match, so nothing
   * can say where it went and no shift is reported. */
  int64_t same[] = {3, 8, 8, 2};
  loom_net *c = mlp(same, 4, 2), *d = loom_net_clone(c, &err);
  g_assert_cmpint(loom_net_move(d, C(0, 0, 1, 0), C(0, 0, 1, 1), &err), ==, 0);
  r = compare(c, d);
  g_assert_cmpint(loom_dna_result_n_shifts(r), ==, 0);
  loom_dna_result_free(r);
  loom_net_free(a);
  loom_net_free(b);
  loom_net_free(c);
  loom_net_free(d);
}

static double morph_similarity(loom_net *net, loom_dtype d, int64_t *shifts, double *worst) {
  loom_error err = {0};
  loom_net *m = loom_net_clone(net, &err);
  for (int64_t i = 0; i < loom_net_n_layers(m); i++)
    g_assert_cmpint(loom_layer_set_dtype(loom_net_layer_at(m, loom_net_layer_coord(m, i)), d, &err), ==, 0);
  loom_dna_result *r = compare(net, m);
  double s = loom_dna_result_similarity(r);
  *shifts = loom_dna_result_n_shifts(r);
  *worst = 1;
  for (int64_t k = 0; k < loom_dna_result_n_shared(r); k++) *worst = fmin(*worst, loom_dna_result_shared(r, k).score);
  g_assert_cmpint(loom_dna_result_slot_b(r, 0).dtype, ==, d);
  loom_dna_result_free(r);
  loom_net_free(m);
  return s;
}

static void check_dtypes(loom_net *net, const char *name) {
  int64_t shifts;
  double worst;
  double s8 = morph_similarity(net, LOOM_DTYPE_INT8, &shifts, &worst);
  g_test_message("%s int8: %.6f (worst slot %.6f)", name, s8, worst);
  g_assert_cmpfloat(s8, >, 0.99);
  g_assert_cmpint(shifts, ==, 0);
  double s3 = morph_similarity(net, LOOM_DTYPE_TERNARY, &shifts, &worst);
  g_test_message("%s ternary: %.6f (worst slot %.6f)", name, s3, worst);
  g_assert_cmpfloat(s3, >, 0.8);
  g_assert_cmpfloat(s3, <, s8);
  double s16 = morph_similarity(net, LOOM_DTYPE_FLOAT16, &shifts, &worst);
  g_assert_cmpfloat(s16, >, 0.9999);
  g_assert_cmpint(shifts, ==, 0);
}

static void test_dtypes(void) {
  int64_t w[] = {16, 32, 32, 32, 4};
  loom_net *net = mlp(w, 5, 9);
  check_dtypes(net, "mlp");
  loom_net_free(net);
  for (int e = 0; e < loom_example_count(); e++) {
    loom_error err = {0};
    g_assert_cmpint(loom_example_build(loom_example_name(e), &net, &err), ==, 0);
    /* the morphs are measured from float32 weights (playground-int4 is built at int4) */
    for (int64_t i = 0; i < loom_net_n_layers(net); i++)
      g_assert_cmpint(loom_layer_set_dtype(loom_net_layer_at(net, loom_net_layer_coord(net, i)), LOOM_DTYPE_FLOAT32,
                                           &err), ==, 0);
    check_dtypes(net, loom_example_name(e));
    loom_net_free(net);
  }
}

static void test_sizes(void) {
  /* The same architecture at two widths: every dense pair differs in shape. */
  int64_t wa[] = {4, 16, 16, 3}, wb[] = {4, 24, 12, 3};
  loom_net *a = mlp(wa, 4, 1), *b = mlp(wb, 4, 2);
  loom_dna_result *r = compare(a, b);
  int64_t n = loom_dna_result_n_shared(r);
  g_assert_cmpint(n, ==, 5);
  for (int64_t k = 0; k < n; k++) {
    loom_dna_pair p = loom_dna_result_shared(r, k);
    g_assert_cmpfloat(p.score, >, 0);
    g_assert_cmpfloat(p.score, <, 1);
  }
  /* Independent weights: alike in distribution, not in layout, so no pair
   * reaches the threshold and nothing is called a shift. */
  g_assert_cmpint(loom_dna_result_n_shifts(r), ==, 0);
  g_assert_cmpfloat(loom_dna_result_at(r, 0, 0), <, LOOM_DNA_DEFAULT_THRESHOLD);
  g_assert_cmpfloat(loom_dna_result_similarity(r), >, 0);
  g_assert_cmpfloat(loom_dna_result_similarity(r), <, 1);
  /* Weights against a presence marker: nothing in common. */
  g_assert_cmpfloat(loom_dna_result_at(r, 0, 1), ==, 0);
  loom_dna_result_free(r);

  /* A layer and its enlargement (every weight repeated 2 × 2) match through
   * the profile: same distribution, same resampled layout. */
  loom_error err = {0};
  loom_net *s = loom_net_new(1, 1, 1, 1, &err), *l = loom_net_new(1, 1, 1, 1, &err);
  place(s, C(0, 0, 0, 0), dense(4, 6));
  place(l, C(0, 0, 0, 0), dense(8, 12));
  loom_shape in4 = loom_shape_1d(4), in8 = loom_shape_1d(8);
  loom_net_set_input_shape(s, &in4, &err);
  loom_net_set_input_shape(l, &in8, &err);
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(s, 3, &diags), ==, 0);
  free(diags);
  g_assert_cmpint(loom_net_infer_shapes(l, 3, &diags), ==, 0);
  free(diags);
  loom_weights *ws = loom_layer_weights(loom_net_layer_at(s, C(0, 0, 0, 0)), 0);
  loom_weights *wl = loom_layer_weights(loom_net_layer_at(l, C(0, 0, 0, 0)), 0);
  loom_weights *bs = loom_layer_weights(loom_net_layer_at(s, C(0, 0, 0, 0)), 1);
  loom_weights *bl = loom_layer_weights(loom_net_layer_at(l, C(0, 0, 0, 0)), 1);
  for (int rr = 0; rr < 12; rr++) {
    for (int cc = 0; cc < 8; cc++) loom_weights_master(wl)[rr * 8 + cc] = loom_weights_master(ws)[(rr / 2) * 4 + cc / 2];
    loom_weights_master(bl)[rr] = loom_weights_master(bs)[rr / 2];
  }
  loom_weights_touch(wl);
  loom_weights_touch(bl);
  r = compare(s, l);
  g_test_message("enlarged: %.6f", loom_dna_result_at(r, 0, 0));
  /* The shape factor cbrt(6/12 · 4/8 · 30/108) times a profile agreement
   * near 1: quantiles and map are the same up to rounding. */
  double factor = cbrt(0.5 * 0.5 * 30.0 / 108.0);
  g_assert_cmpfloat(loom_dna_result_at(r, 0, 0), >, 0.99 * factor);
  g_assert_cmpfloat(loom_dna_result_at(r, 0, 0), <=, factor + 1e-12);
  loom_dna_result_free(r);
  loom_net_free(s);
  loom_net_free(l);
  loom_net_free(a);
  loom_net_free(b);
}

static void test_errors(void) {
  loom_error err = {0};
  g_assert_null(loom_dna_snapshot_new(NULL, 0, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_INVALID);
  int64_t w[] = {3, 4, 2};
  loom_net *net = mlp(w, 3, 1);
  loom_dna_snapshot *s = loom_dna_snapshot_new(net, 0, &err);
  g_assert_null(loom_dna_compare(s, s, 1.5, &err));
  g_assert_cmpstr(err.message, ==, "the shift threshold must lie between 0 and 1, got 1.5");
  g_assert_null(loom_dna_compare(s, s, NAN, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_INVALID);
  g_assert_null(loom_dna_compare(s, NULL, 0.8, &err));
  g_assert_cmpstr(err.message, ==, "two DNA snapshots are needed for a comparison");
  loom_dna_snapshot_free(s);
  loom_weights *bias = loom_layer_weights(loom_net_layer_at(net, C(0, 0, 2, 0)), 1);
  loom_weights_master(bias)[1] = NAN;
  loom_weights_touch(bias);
  g_assert_null(loom_dna_snapshot_new(net, 0, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_NONFINITE);
  g_test_message("%s", err.message);
  g_assert_true(g_str_has_prefix(err.message, "DNA of the layer at (0,0,2,0), tensor bias: "));
  loom_net_free(net);
  /* Empty networks are identical to each other and unlike anything else. */
  loom_net *e1 = loom_net_new(1, 1, 1, 1, &err), *e2 = loom_net_new(2, 1, 1, 1, &err);
  net = mlp(w, 3, 1);
  loom_dna_result *r = compare(e1, e2);
  g_assert_cmpfloat(loom_dna_result_similarity(r), ==, 1);
  g_assert_null(loom_dna_result_matrix(NULL));
  g_assert_true(isnan(loom_dna_result_at(r, 0, 0)));
  loom_dna_result_free(r);
  r = compare(e1, net);
  g_assert_cmpfloat(loom_dna_result_similarity(r), ==, 0);
  g_assert_cmpint(loom_dna_result_n_b(r), ==, 3);
  loom_dna_result_free(r);
  loom_net_free(e1);
  loom_net_free(e2);
  loom_net_free(net);
}

/* Results do not depend on anything but the two snapshots. */
static void test_deterministic(void) {
  loom_net *net = NULL;
  loom_error err = {0};
  g_assert_cmpint(loom_example_build("moe", &net, &err), ==, 0);
  loom_net *other = loom_net_clone(net, &err);
  g_assert_cmpint(loom_net_reinit_weights(other, 99, &err), ==, 0);
  loom_dna_result *r1 = compare(net, other), *r2 = compare(net, other);
  int64_t n = loom_dna_result_n_a(r1) * loom_dna_result_n_b(r1);
  g_assert_cmpint(memcmp(loom_dna_result_matrix(r1), loom_dna_result_matrix(r2), (size_t)n * sizeof(double)), ==, 0);
  g_assert_cmpfloat(loom_dna_result_similarity(r1), ==, loom_dna_result_similarity(r2));
  g_assert_cmpfloat(loom_dna_result_similarity(r1), <, 1);
  loom_dna_result_free(r1);
  loom_dna_result_free(r2);
  loom_net_free(net);
  loom_net_free(other);
}

/* ---- logic migration --------------------------------------------------- */

static void train_epochs(loom_net *net, const loom_dataset *train, int64_t epochs) {
  loom_train_config cfg = loom_train_config_default();
  cfg.loss.kind = LOOM_LOSS_CROSS_ENTROPY;
  cfg.schedule = loom_schedule_constant(0.01);
  cfg.epochs = epochs;
  cfg.batch_size = 16;
  cfg.seed = 4;
  tt_result r = tt_train(net, train, train, &cfg, 1);
  g_free(r.losses);
}

static void test_migration(void) {
  loom_error err = {0};
  loom_dataset *data = loom_gen_spiral(100, 2, 0.02, 3, &err);
  g_assert_nonnull(data);
  int64_t w[] = {2, 16, 16, 2};
  loom_net *net = mlp(w, 4, 6);
  loom_dna_snapshot *initial = loom_dna_snapshot_new(net, 0, &err);
  train_epochs(net, data, 5);
  loom_dna_snapshot *before = loom_dna_snapshot_new(net, 5, &err);
  g_assert_cmpint(loom_net_move(net, C(0, 0, 2, 0), C(0, 0, 2, 1), &err), ==, 0);
  train_epochs(net, data, 5);
  loom_dna_snapshot *after = loom_dna_snapshot_new(net, 10, &err);
  g_assert_nonnull(after);

  loom_dna_result *r = loom_dna_compare(before, after, LOOM_DNA_DEFAULT_THRESHOLD, &err);
  g_assert_cmpint(loom_dna_result_n_shifts(r), ==, 1);
  loom_dna_shift s = loom_dna_result_shift(r, 0);
  g_assert_true(coord_eq(s.from, C(0, 0, 2, 0)));
  g_assert_true(coord_eq(s.to, C(0, 0, 2, 1)));
  g_test_message("shift score after 5 more epochs: %.6f", s.score);
  g_assert_cmpfloat(s.score, >, LOOM_DNA_DEFAULT_THRESHOLD);
  g_assert_cmpfloat(s.score, <, 1); /* training went on */
  /* The layers that stayed keep their coordinates and changed as well. */
  for (int64_t k = 0; k < loom_dna_result_n_shared(r); k++) {
    loom_dna_pair p = loom_dna_result_shared(r, k);
    if (loom_dna_result_slot_a(r, p.a).values > 0) g_assert_cmpfloat(p.score, <, 1);
  }
  loom_dna_result_free(r);
  /* Against the untrained network (A and B swapped) the moved layer has
   * drifted below the default threshold, but it is still closest to its
   * own beginning: a lower threshold finds it. */
  r = loom_dna_compare(after, initial, LOOM_DNA_DEFAULT_THRESHOLD, &err);
  double drift = loom_dna_result_at(r, 2, 2);
  g_test_message("moved layer against its initial weights: %.6f", drift);
  g_assert_cmpfloat(drift, <, LOOM_DNA_DEFAULT_THRESHOLD);
  g_assert_cmpint(loom_dna_result_n_shifts(r), ==, 0);
  loom_dna_result_free(r);
  r = loom_dna_compare(after, initial, 0.4, &err);
  g_assert_cmpint(loom_dna_result_n_shifts(r), ==, 1);
  s = loom_dna_result_shift(r, 0);
  g_assert_true(coord_eq(s.from, C(0, 0, 2, 1)));
  g_assert_true(coord_eq(s.to, C(0, 0, 2, 0)));
  g_assert_cmpfloat(s.score, ==, drift);
  g_assert_cmpfloat(loom_dna_result_threshold(r), ==, 0.4);
  loom_dna_result_free(r);
  loom_dna_snapshot_free(initial);
  loom_dna_snapshot_free(before);
  loom_dna_snapshot_free(after);
  loom_net_free(net);
  loom_dataset_free(data);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/dna/dot", test_dot);
  g_test_add_func("/dna/quantiles", test_quantiles);
  g_test_add_func("/dna/map", test_map);
  g_test_add_func("/dna/self", test_self);
  g_test_add_func("/dna/snapshot-fields", test_snapshot_fields);
  g_test_add_func("/dna/moved", test_moved);
  g_test_add_func("/dna/dtypes", test_dtypes);
  g_test_add_func("/dna/sizes", test_sizes);
  g_test_add_func("/dna/errors", test_errors);
  g_test_add_func("/dna/deterministic", test_deterministic);
  g_test_add_func("/dna/migration", test_migration);
  return g_test_run();
}
