/* softmax, softmax_temperature, grid_softmax, masked_softmax,
 * hierarchical_softmax (two levels; any depth in test-hierarchical-softmax.c)
 * and gumbel_softmax (engine/layers/softmax*.c). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "softmax-test-util.h"

/* ---- registry ------------------------------------------------------------ */

static void test_registry(void) {
  static const struct {
    const char *name;
    int id;
    int n_params;
    unsigned flags;
  } types[] = {
    {"softmax", 90, 0, LOOM_LAYER_OUTPUTS_PROBABILITIES},
    {"softmax_temperature", 91, 1, LOOM_LAYER_OUTPUTS_PROBABILITIES},
    {"grid_softmax", 92, 2, LOOM_LAYER_OUTPUTS_PROBABILITIES},
    {"masked_softmax", 93, 1, LOOM_LAYER_OUTPUTS_PROBABILITIES},
    {"hierarchical_softmax", 94, 2, LOOM_LAYER_OUTPUTS_PROBABILITIES},
    {"gumbel_softmax", 95, 3, LOOM_LAYER_STOCHASTIC | LOOM_LAYER_OUTPUTS_PROBABILITIES},
    {"sparsemax", 96, 0, LOOM_LAYER_OUTPUTS_PROBABILITIES},
    {"entmax15", 97, 0, LOOM_LAYER_OUTPUTS_PROBABILITIES},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(types); i++) {
    const loom_layer_type *t = loom_layer_type_find(types[i].name);
    g_assert_nonnull(t);
    g_assert_true(loom_layer_type_by_id(types[i].id) == t);
    g_assert_cmpint(loom_layer_type_id(t), ==, types[i].id);
    g_assert_cmpint(loom_layer_type_n_params(t), ==, types[i].n_params);
    g_assert_cmpuint(loom_layer_type_flags(t), ==, types[i].flags);
    g_assert_cmpstr(loom_layer_type_group(t), ==, "Softmax");
    g_assert_cmpuint(strlen(loom_layer_type_label(t)), >, 0);
    g_assert_true(g_str_has_suffix(loom_layer_type_description(t), "."));
    loom_layer *l = st_layer(types[i].name);
    g_assert_true(loom_layer_outputs_probabilities(l));
    loom_layer_free(l);
  }
  loom_layer *dense = st_layer("dense");
  g_assert_false(loom_layer_outputs_probabilities(dense));
  g_assert_false(loom_layer_outputs_probabilities(NULL));
  /* A sequential gives probabilities when its last layer does, and only then. */
  loom_layer *seq = st_layer("sequential");
  g_assert_false(loom_layer_outputs_probabilities(seq));
  g_assert_cmpint(loom_layer_add_child(seq, dense, NULL), ==, LOOM_OK);
  g_assert_false(loom_layer_outputs_probabilities(seq));
  g_assert_cmpint(loom_layer_add_child(seq, st_layer("softmax"), NULL), ==, LOOM_OK);
  g_assert_true(loom_layer_outputs_probabilities(seq));
  loom_layer *outer = st_layer("sequential");
  g_assert_cmpint(loom_layer_add_child(outer, seq, NULL), ==, LOOM_OK);
  g_assert_true(loom_layer_outputs_probabilities(outer));
  g_assert_cmpint(loom_layer_add_child(outer, st_layer("relu"), NULL), ==, LOOM_OK);
  g_assert_false(loom_layer_outputs_probabilities(outer));
  loom_layer_free(outer);
  const loom_layer_type *t = loom_layer_type_find("softmax_temperature");
  const loom_param_spec *s = loom_layer_type_param(t, 0);
  g_assert_cmpstr(s->name, ==, "temperature");
  g_assert_cmpfloat(s->def, ==, 1.0);
  g_assert_cmpfloat(s->min, >, 0.0);
}

/* ---- parity with PyTorch -------------------------------------------------- */

static void check_case(const char *type, const char *name) {
  st_case c = st_case_load(name);
  loom_layer *l = st_layer(type);
  loom_error err = {0};
  if (strcmp(type, "softmax_temperature") == 0) {
    loom_npy p = st_case_extra(&c, "params");
    g_assert_cmpint(loom_layer_set_float(l, "temperature", p.data[0], &err), ==, LOOM_OK);
    loom_npy_clear(&p);
  } else if (strcmp(type, "grid_softmax") == 0) {
    loom_npy p = st_case_extra(&c, "params");
    g_assert_cmpint(loom_layer_set_int(l, "rows", (int64_t)p.data[0], &err), ==, LOOM_OK);
    g_assert_cmpint(loom_layer_set_int(l, "cols", (int64_t)p.data[1], &err), ==, LOOM_OK);
    loom_npy_clear(&p);
  } else if (strcmp(type, "masked_softmax") == 0) {
    loom_npy m = st_case_extra(&c, "mask");
    g_assert_cmpint(loom_layer_set_floats(l, "mask", m.data, loom_npy_numel(&m), &err), ==, LOOM_OK);
    loom_npy_clear(&m);
  } else if (strcmp(type, "hierarchical_softmax") == 0) {
    loom_npy g = st_case_extra(&c, "groups");
    g_assert_cmpint(loom_layer_set_floats(l, "group_sizes", g.data, loom_npy_numel(&g), &err), ==, LOOM_OK);
    loom_npy_clear(&g);
  }
  st_build(l, c.shape);
  st_case_check(l, &c);
  loom_layer_free(l);
  st_case_free(&c);
}

static void test_parity(void) {
  check_case("softmax", "softmax_2x7");
  check_case("softmax", "softmax_n1");
  check_case("softmax", "softmax_3d");
  check_case("softmax_temperature", "temperature_sharp");
  check_case("softmax_temperature", "temperature_flat");
  check_case("grid_softmax", "grid_3x5");
  check_case("grid_softmax", "grid_2x3_of_3x2");
  check_case("masked_softmax", "masked_row");
  check_case("masked_softmax", "masked_elem");
  check_case("hierarchical_softmax", "hier_3_1_4");
  check_case("hierarchical_softmax", "hier_2_2");
}

/* ---- gradient checks -------------------------------------------------------- */

static void gradcheck_shape(loom_layer *l, loom_shape s, int64_t batch, uint64_t seed) {
  st_build(l, s);
  int64_t n = batch * loom_shape_numel(&s);
  float *x = g_new(float, n);
  gradcheck_fill_uniform(x, n, -3.0, 3.0, seed);
  double worst = gradcheck_layer(l, x, batch, 5e-4);
  g_test_message("%s: worst error %.3g", l->type->name, worst);
  g_free(x);
}

static void test_gradcheck(void) {
  const int64_t one[] = {1}, five[] = {5}, two_seven[] = {2, 7}, three_one[] = {3, 1}, fifteen[] = {15};
  loom_error err = {0};
  loom_layer *l = st_layer("softmax");
  gradcheck_shape(l, loom_shape_make(1, one), 3, 1);
  gradcheck_shape(l, loom_shape_make(1, five), 2, 2);
  gradcheck_shape(l, loom_shape_make(2, two_seven), 2, 3);
  gradcheck_shape(l, loom_shape_make(2, three_one), 2, 4);
  loom_layer_free(l);

  l = st_layer("softmax_temperature");
  g_assert_cmpint(loom_layer_set_float(l, "temperature", 0.5, &err), ==, LOOM_OK);
  gradcheck_shape(l, loom_shape_make(1, five), 3, 5);
  g_assert_cmpint(loom_layer_set_float(l, "temperature", 3.0, &err), ==, LOOM_OK);
  gradcheck_shape(l, loom_shape_make(2, two_seven), 1, 6);
  gradcheck_shape(l, loom_shape_make(1, one), 2, 7);
  loom_layer_free(l);

  l = st_layer("grid_softmax");
  g_assert_cmpint(loom_layer_set_int(l, "rows", 3, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_int(l, "cols", 5, &err), ==, LOOM_OK);
  gradcheck_shape(l, loom_shape_make(1, fifteen), 2, 8);
  g_assert_cmpint(loom_layer_set_int(l, "rows", 1, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_int(l, "cols", 1, &err), ==, LOOM_OK);
  gradcheck_shape(l, loom_shape_make(1, one), 2, 9);
  loom_layer_free(l);

  l = st_layer("masked_softmax");
  const float mask[] = {1, 0, 1, 1, 0, 0, 1};
  g_assert_cmpint(loom_layer_set_floats(l, "mask", mask, 7, &err), ==, LOOM_OK);
  gradcheck_shape(l, loom_shape_make(2, two_seven), 2, 10);
  loom_layer_free(l);

  l = st_layer("hierarchical_softmax");
  const float groups[] = {2, 1, 4};
  const int64_t hier_shape[] = {2, 10};
  g_assert_cmpint(loom_layer_set_floats(l, "group_sizes", groups, 3, &err), ==, LOOM_OK);
  gradcheck_shape(l, loom_shape_make(2, hier_shape), 2, 11);
  const float single[] = {1};
  const int64_t two[] = {2};
  g_assert_cmpint(loom_layer_set_floats(l, "group_sizes", single, 1, &err), ==, LOOM_OK);
  gradcheck_shape(l, loom_shape_make(1, two), 2, 12);
  loom_layer_free(l);

  l = st_layer("gumbel_softmax");
  g_assert_cmpint(loom_layer_set_float(l, "temperature", 0.7, &err), ==, LOOM_OK);
  gradcheck_shape(l, loom_shape_make(2, two_seven), 2, 13);
  gradcheck_shape(l, loom_shape_make(1, one), 2, 14);
  loom_layer_free(l);
}

/* ---- properties -------------------------------------------------------------- */

static void test_extreme_logits(void) {
  const int64_t four[] = {4};
  const float x[] = {1000.0f, 0.0f, -1000.0f, 999.0f, -80.0f, -80.0f, -80.0f, -80.0f};
  loom_layer *l = st_layer("softmax");
  st_build(l, loom_shape_make(1, four));
  loom_ctx ctx = {0};
  float *y = st_forward(l, &ctx, x, 2);
  st_assert_rows_sum_to_one(y, 2, 4, 1e-6);
  g_assert_cmpfloat_with_epsilon(y[0], 1.0 / (1.0 + exp(-1.0)), 1e-7);
  g_assert_cmpfloat(y[1], ==, 0.0f);
  g_assert_cmpfloat(y[2], ==, 0.0f);
  for (int i = 4; i < 8; i++) g_assert_cmpfloat(y[i], ==, 0.25f);
  g_free(y);
  loom_layer_free(l);
}

static void test_temperature_definition(void) {
  /* softmax(x / T): with x = [0, T·ln 3] the probabilities are 1/4, 3/4. */
  const int64_t two[] = {2};
  const double t = 0.25;
  const float x[] = {0.0f, (float)(t * log(3.0))};
  loom_error err = {0};
  loom_layer *l = st_layer("softmax_temperature");
  g_assert_cmpint(loom_layer_set_float(l, "temperature", t, &err), ==, LOOM_OK);
  st_build(l, loom_shape_make(1, two));
  loom_ctx ctx = {0};
  float *y = st_forward(l, &ctx, x, 1);
  g_assert_cmpfloat_with_epsilon(y[0], 0.25, 1e-6);
  g_assert_cmpfloat_with_epsilon(y[1], 0.75, 1e-6);
  g_free(y);
  g_assert_cmpint(loom_layer_set_float(l, "temperature", 0.0, &err), ==, LOOM_ERR_INVALID);
  loom_layer_free(l);
}

static void test_grid(void) {
  loom_error err = {0};
  loom_layer *l = st_layer("grid_softmax");
  const int64_t twelve[] = {12}, three_four[] = {3, 4};
  g_assert_cmpint(loom_layer_set_int(l, "rows", 2, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_int(l, "cols", 5, &err), ==, LOOM_OK);
  loom_shape s = loom_shape_make(1, twelve);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==,
                  "layer grid_softmax: input [12] has 12 values per sample; parameters “rows” × “cols” = 2 × 5 "
                  "expect 10");
  /* adapt keeps cols when it divides the input... */
  g_assert_cmpint(loom_layer_set_int(l, "cols", 4, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_adapt_to_input(l, &s, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_get_int(l, "rows"), ==, 3);
  g_assert_cmpint(loom_layer_get_int(l, "cols"), ==, 4);
  /* ...else takes the last dimension as the row length. */
  g_assert_cmpint(loom_layer_set_int(l, "cols", 5, &err), ==, LOOM_OK);
  s = loom_shape_make(2, three_four);
  g_assert_cmpint(loom_layer_adapt_to_input(l, &s, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_get_int(l, "rows"), ==, 3);
  g_assert_cmpint(loom_layer_get_int(l, "cols"), ==, 4);
  /* A [3×4] input read as a 2×6 grid: rows cross the input's own rows. */
  g_assert_cmpint(loom_layer_set_int(l, "rows", 2, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_int(l, "cols", 6, &err), ==, LOOM_OK);
  st_build(l, s);
  loom_shape out = loom_layer_out_shape(l);
  g_assert_true(loom_shape_equal(&out, &s));
  float x[12];
  for (int i = 0; i < 12; i++) x[i] = (float)i * 0.1f;
  loom_ctx ctx = {0};
  float *y = st_forward(l, &ctx, x, 1);
  st_assert_rows_sum_to_one(y, 2, 6, 1e-6);
  for (int i = 0; i < 6; i++) /* the same logits up to a shift */
    g_assert_cmpfloat_with_epsilon(y[i], y[6 + i], 1e-6);
  char buf[128];
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "grid_softmax 2×6, softmax per row");
  g_assert_cmpint(loom_layer_flops(l), ==, 60);
  g_free(y);
  loom_layer_free(l);
}

static void test_masked(void) {
  loom_error err = {0};
  loom_layer *l = st_layer("masked_softmax");
  const int64_t two_three[] = {2, 3};
  loom_shape s = loom_shape_make(2, two_three);
  char buf[128];
  st_build(l, s); /* no mask: a plain softmax */
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "masked_softmax, no mask");
  /* Masked entries are never read: infinities and NaN there are fine. */
  const float x[] = {1.0f, NAN, 2.0f, 0.5f, INFINITY, 0.5f};
  const float keep_row[] = {1, 0, 1};
  g_assert_cmpint(loom_layer_set_floats(l, "mask", keep_row, 3, &err), ==, LOOM_OK);
  st_build(l, s);
  loom_ctx ctx = {0};
  float *y = st_forward(l, &ctx, x, 1);
  g_assert_cmpfloat_with_epsilon(y[0], 1.0 / (1.0 + exp(1.0)), 1e-7);
  g_assert_cmpfloat(y[1], ==, 0.0f);
  g_assert_cmpfloat(y[3], ==, 0.5f);
  g_assert_cmpfloat(y[4], ==, 0.0f);
  g_assert_cmpfloat(y[5], ==, 0.5f);
  const float dy[] = {1, 2, 3, 4, 5, 6};
  float *dx = st_backward(l, &ctx, x, y, dy, 1);
  g_assert_cmpfloat(dx[1], ==, 0.0f);
  g_assert_cmpfloat(dx[3], ==, -0.5f);
  g_assert_cmpfloat(dx[4], ==, 0.0f);
  g_assert_cmpfloat(dx[5], ==, 0.5f);
  g_free(dx);
  g_free(y);
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "masked_softmax, 1 of 3 masked");

  /* A new mask between calls takes effect at the next forward: the mask is a
   * run-time parameter, so the layer stays built. */
  const float keep_elem[] = {0, 1, 1, 1, 1, 0};
  const float x2[] = {1.0f, 2.0f, 2.0f, 0.0f, 0.0f, 7.0f};
  g_assert_cmpint(loom_layer_set_floats(l, "mask", keep_elem, 6, &err), ==, LOOM_OK);
  g_assert_true(loom_layer_is_built(l));
  y = st_forward(l, &ctx, x2, 1);
  const float want[] = {0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0.0f};
  g_assert_cmpmem(y, sizeof want, want, sizeof want);
  g_free(y);

  /* Errors name the row, the entry, the lengths. */
  const float full_row[] = {1, 1, 1, 0, 0, 0};
  g_assert_cmpint(loom_layer_set_floats(l, "mask", full_row, 6, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer masked_softmax: parameter “mask” masks all 3 entries of row 1; at least one entry of each "
                  "row must be kept");
  const float none[] = {0, 0, 0};
  g_assert_cmpint(loom_layer_set_floats(l, "mask", none, 3, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer masked_softmax: parameter “mask” masks all 3 entries of every row; at least one entry of "
                  "each row must be kept");
  const float half[] = {1, 0.5f, 1};
  g_assert_cmpint(loom_layer_set_floats(l, "mask", half, 3, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer masked_softmax: parameter “mask” entry 1 is 0.5; expected 0 (masked) or 1 (kept)");
  const float four[] = {1, 1, 1, 1};
  g_assert_cmpint(loom_layer_set_floats(l, "mask", four, 4, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==,
                  "layer masked_softmax: parameter “mask” has 4 entries; expected 3 (one per entry of a row) or 6 "
                  "(one per entry of a sample [2×3])");
  const float two_five = 2.5f;
  g_assert_cmpint(loom_layer_set_floats(l, "mask", &two_five, 1, &err), ==, LOOM_ERR_INVALID);
  loom_layer_free(l);
}

static void test_hierarchical(void) {
  loom_error err = {0};
  loom_layer *l = st_layer("hierarchical_softmax");
  const int64_t five[] = {5}, twelve[] = {12}, seven[] = {7};
  loom_shape s = loom_shape_make(1, five);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer hierarchical_softmax: parameters “group_sizes” and “levels” are both empty; expected leaves "
                  "per group (two levels, e.g. [4, 4, 2]) or children per node for each level (e.g. [2, 3, 4])");
  const float bad[] = {2, 1.5f};
  g_assert_cmpint(loom_layer_set_floats(l, "group_sizes", bad, 2, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer hierarchical_softmax: parameter “group_sizes” entry 1 is 1.5; expected a whole number from 1 "
                  "to 16777216");
  const float groups[] = {2, 1};
  g_assert_cmpint(loom_layer_set_floats(l, "group_sizes", groups, 2, &err), ==, LOOM_OK);
  s = loom_shape_make(1, seven);
  g_assert_cmpint(loom_layer_build(l, &s, 0, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==,
                  "layer hierarchical_softmax: input [7] has a last dimension of 7; expected 5 (2 group logits + 3 "
                  "leaf logits from “group_sizes”)");
  /* P = softmax([0, ln 3]) = [1/4, 3/4]; Q_0 = [1/2, 1/2]; Q_1 = [1]. */
  s = loom_shape_make(1, five);
  st_build(l, s);
  loom_shape out = loom_layer_out_shape(l);
  g_assert_cmpint(out.rank, ==, 1);
  g_assert_cmpint(out.d[0], ==, 3);
  const float x[] = {0.0f, (float)log(3.0), 0.7f, 0.7f, -5.0f};
  loom_ctx ctx = {0};
  float *y = st_forward(l, &ctx, x, 1);
  g_assert_cmpfloat_with_epsilon(y[0], 0.125, 1e-7);
  g_assert_cmpfloat_with_epsilon(y[1], 0.125, 1e-7);
  g_assert_cmpfloat_with_epsilon(y[2], 0.75, 1e-7);
  g_free(y);
  char buf[128];
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "hierarchical_softmax 2 groups, 3 leaves");
  g_assert_cmpint(loom_layer_flops(l), ==, 5 * 5 + 3);
  /* adapt: 12 = 3 groups × (1 + 3 leaves); 7 (prime) = one group of 6. */
  s = loom_shape_make(1, twelve);
  g_assert_cmpint(loom_layer_adapt_to_input(l, &s, &err), ==, LOOM_OK);
  int64_t n = 0;
  const float *g = loom_layer_get_floats(l, "group_sizes", &n);
  g_assert_cmpint(n, ==, 3);
  for (int i = 0; i < 3; i++) g_assert_cmpfloat(g[i], ==, 3.0f);
  st_build(l, s);
  s = loom_shape_make(1, seven);
  g_assert_cmpint(loom_layer_adapt_to_input(l, &s, &err), ==, LOOM_OK);
  g = loom_layer_get_floats(l, "group_sizes", &n);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpfloat(g[0], ==, 6.0f);
  st_build(l, s);
  loom_layer_free(l);
}

/* ---- gumbel ---------------------------------------------------------------------- */

static float *gumbel_run(loom_layer *l, uint64_t seed, uint64_t step, const float *x, int64_t batch) {
  loom_ctx ctx = {.seed = seed, .step = step, .training = true};
  return st_forward(l, &ctx, x, batch);
}

static void test_gumbel_reproducible(void) {
  const int64_t six[] = {6};
  loom_error err = {0};
  loom_layer *l = st_layer("gumbel_softmax");
  st_build(l, loom_shape_make(1, six));
  float x[18];
  gradcheck_fill_uniform(x, 18, -1.0, 1.0, 42);
  gsize bytes = sizeof x;
  float *a = gumbel_run(l, 5, 0, x, 3), *b = gumbel_run(l, 5, 0, x, 3);
  g_assert_cmpmem(a, bytes, b, bytes);
  st_assert_rows_sum_to_one(a, 3, 6, 1e-6);
  float *other_seed = gumbel_run(l, 6, 0, x, 3), *other_step = gumbel_run(l, 5, 1, x, 3);
  g_assert_true(memcmp(a, other_seed, bytes) != 0);
  g_assert_true(memcmp(a, other_step, bytes) != 0);
  /* Samples of a batch get their own noise: equal logits, different samples. */
  float same[12] = {0};
  float *c = gumbel_run(l, 5, 0, same, 2);
  g_assert_true(memcmp(c, c + 6, 6 * sizeof(float)) != 0);
  g_free(c);
  g_assert_cmpint(loom_layer_set_int(l, "stream", 1, &err), ==, LOOM_OK);
  st_build(l, loom_shape_make(1, six));
  float *other_stream = gumbel_run(l, 5, 0, x, 3);
  g_assert_true(memcmp(a, other_stream, bytes) != 0);
  g_assert_cmpint(loom_layer_set_int(l, "stream", 0, &err), ==, LOOM_OK);
  st_build(l, loom_shape_make(1, six));
  const int coord[4] = {0, 1, 2, 0};
  layer_set_coord(l, coord, true);
  float *other_place = gumbel_run(l, 5, 0, x, 3);
  g_assert_true(memcmp(a, other_place, bytes) != 0);
  layer_set_coord(l, coord, false);
  float *back = gumbel_run(l, 5, 0, x, 3);
  g_assert_cmpmem(a, bytes, back, bytes);
  g_free(a);
  g_free(b);
  g_free(other_seed);
  g_free(other_step);
  g_free(other_stream);
  g_free(other_place);
  g_free(back);
  /* No context, no noise. */
  float y[6];
  g_assert_cmpint(layer_forward(l, NULL, x, y, 1, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "layer gumbel_softmax: a Gumbel softmax draws noise from the context's seed and step; no context "
                  "was given");
  loom_layer_free(l);
}

/* The Gumbel-max trick: argmax(x + g) is distributed as softmax(x). */
static void test_gumbel_frequencies(void) {
  enum { N = 20000, K = 4 };
  const double p[K] = {0.1, 0.2, 0.3, 0.4};
  const int64_t k[] = {K};
  loom_error err = {0};
  loom_layer *l = st_layer("gumbel_softmax");
  g_assert_cmpint(loom_layer_set_bool(l, "hard", true, &err), ==, LOOM_OK);
  st_build(l, loom_shape_make(1, k));
  float *x = g_new(float, N * K);
  for (int i = 0; i < N * K; i++) x[i] = (float)log(p[i % K]);
  float *y = gumbel_run(l, 11, 3, x, N);
  double count[K] = {0};
  for (int i = 0; i < N; i++) {
    int ones = 0;
    for (int j = 0; j < K; j++) {
      g_assert_true(y[i * K + j] == 0.0f || y[i * K + j] == 1.0f);
      ones += y[i * K + j] == 1.0f;
      count[j] += y[i * K + j];
    }
    g_assert_cmpint(ones, ==, 1);
  }
  /* 0.015 is more than four standard deviations of a frequency over N draws. */
  for (int j = 0; j < K; j++) g_assert_cmpfloat_with_epsilon(count[j] / N, p[j], 0.015);
  g_free(x);
  g_free(y);
  loom_layer_free(l);
}

/* hard: one-hot forward, straight-through backward = the soft sample's Jacobian. */
static void test_gumbel_hard(void) {
  const int64_t five[] = {5};
  loom_error err = {0};
  loom_layer *soft = st_layer("gumbel_softmax"), *hard = st_layer("gumbel_softmax");
  g_assert_cmpint(loom_layer_set_bool(hard, "hard", true, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_float(hard, "temperature", 0.5, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_float(soft, "temperature", 0.5, &err), ==, LOOM_OK);
  st_build(soft, loom_shape_make(1, five));
  st_build(hard, loom_shape_make(1, five));
  float x[10], dy[10];
  gradcheck_fill_uniform(x, 10, -2.0, 2.0, 1);
  gradcheck_fill_uniform(dy, 10, -1.0, 1.0, 2);
  loom_ctx ctx = {.seed = 9, .step = 4, .training = true};
  float *ys = st_forward(soft, &ctx, x, 2), *yh = st_forward(hard, &ctx, x, 2);
  for (int r = 0; r < 2; r++) {
    int best = 0;
    for (int i = 1; i < 5; i++)
      if (ys[r * 5 + i] > ys[r * 5 + best]) best = i;
    for (int i = 0; i < 5; i++) g_assert_cmpfloat(yh[r * 5 + i], ==, i == best ? 1.0f : 0.0f);
  }
  float *dxs = st_backward(soft, &ctx, x, ys, dy, 2), *dxh = st_backward(hard, &ctx, x, yh, dy, 2);
  g_assert_cmpmem(dxs, sizeof x, dxh, sizeof x);
  char buf[128];
  g_assert_cmpstr(loom_layer_describe(hard, buf, sizeof buf), ==, "gumbel_softmax τ=0.5, hard");
  g_assert_cmpint(loom_layer_flops(hard), ==, 45);
  g_free(ys);
  g_free(yh);
  g_free(dxs);
  g_free(dxh);
  loom_layer_free(soft);
  loom_layer_free(hard);
}

/* ---- errors, descriptions, threads ------------------------------------------------ */

static void test_nonfinite(void) {
  const int64_t two_three[] = {2, 3};
  loom_error err = {0};
  loom_layer *l = st_layer("softmax");
  st_build(l, loom_shape_make(2, two_three));
  const int coord[4] = {1, 0, 2, 1};
  layer_set_coord(l, coord, true);
  float x[12] = {0}, y[12];
  x[10] = NAN;
  loom_ctx ctx = {0};
  g_assert_cmpint(layer_forward(l, &ctx, x, y, 2, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==,
                  "layer softmax at (1,0,2,1): input sample 1, row 1, entry 1 is nan; expected a finite value");
  loom_layer_free(l);
}

static void test_describe(void) {
  const int64_t shape[] = {3, 10};
  loom_error err = {0};
  char buf[128];
  loom_layer *l = st_layer("softmax");
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "softmax");
  st_build(l, loom_shape_make(2, shape));
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "softmax over 10");
  g_assert_cmpint(loom_layer_flops(l), ==, 150);
  loom_layer_free(l);
  l = st_layer("softmax_temperature");
  g_assert_cmpint(loom_layer_set_float(l, "temperature", 0.25, &err), ==, LOOM_OK);
  st_build(l, loom_shape_make(2, shape));
  g_assert_cmpstr(loom_layer_describe(l, buf, sizeof buf), ==, "softmax_temperature T=0.25 over 10");
  loom_layer_free(l);
}

static void test_threads(void) {
  /* Enough rows for several ranges of the pool. */
  const int64_t shape[] = {3, 7}, batch = 400;
  const char *types[] = {"softmax", "softmax_temperature", "masked_softmax", "gumbel_softmax"};
  int64_t n = batch * 21;
  float *x = g_new(float, n), *dy = g_new(float, n);
  gradcheck_fill_uniform(x, n, -4.0, 4.0, 21);
  gradcheck_fill_uniform(dy, n, -1.0, 1.0, 22);
  for (size_t t = 0; t < G_N_ELEMENTS(types); t++) {
    loom_layer *l = st_layer(types[t]);
    if (strcmp(types[t], "masked_softmax") == 0) {
      const float mask[] = {1, 1, 0, 1, 0, 1, 1};
      loom_error err = {0};
      g_assert_cmpint(loom_layer_set_floats(l, "mask", mask, 7, &err), ==, LOOM_OK);
    }
    st_build(l, loom_shape_make(2, shape));
    st_assert_thread_independent(l, x, dy, batch);
    loom_layer_free(l);
  }
  loom_layer *l = st_layer("hierarchical_softmax");
  const float groups[] = {3, 1};
  loom_error err = {0};
  g_assert_cmpint(loom_layer_set_floats(l, "group_sizes", groups, 2, &err), ==, LOOM_OK);
  const int64_t hshape[] = {3, 6};
  st_build(l, loom_shape_make(2, hshape));
  st_assert_thread_independent(l, x, dy, 400);
  loom_layer_free(l);
  g_free(x);
  g_free(dy);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/softmax/registry", test_registry);
  g_test_add_func("/softmax/parity", test_parity);
  g_test_add_func("/softmax/gradcheck", test_gradcheck);
  g_test_add_func("/softmax/extreme-logits", test_extreme_logits);
  g_test_add_func("/softmax/temperature", test_temperature_definition);
  g_test_add_func("/softmax/grid", test_grid);
  g_test_add_func("/softmax/masked", test_masked);
  g_test_add_func("/softmax/hierarchical", test_hierarchical);
  g_test_add_func("/softmax/gumbel/reproducible", test_gumbel_reproducible);
  g_test_add_func("/softmax/gumbel/frequencies", test_gumbel_frequencies);
  g_test_add_func("/softmax/gumbel/hard", test_gumbel_hard);
  g_test_add_func("/softmax/nonfinite", test_nonfinite);
  g_test_add_func("/softmax/describe", test_describe);
  g_test_add_func("/softmax/threads", test_threads);
  return g_test_run();
}
