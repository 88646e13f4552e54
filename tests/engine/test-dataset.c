/* Datasets: generators, shuffles, splits, normalisation, batches, digits, CSV and .npy import. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <zlib.h>

#include "loom/loom.h"

static char *tmp_dir;

static char *tmp_file(const char *name, const char *contents) {
  char *path = g_build_filename(tmp_dir, name, NULL);
  g_assert_true(g_file_set_contents(path, contents, -1, NULL));
  return path;
}

static bool same_data(const loom_dataset *a, const loom_dataset *b) {
  if (a->n != b->n || a->input_numel != b->input_numel || a->target_width != b->target_width) return false;
  if (memcmp(a->inputs, b->inputs, (size_t)(a->n * a->input_numel) * sizeof(float))) return false;
  if (a->labels) return memcmp(a->labels, b->labels, (size_t)(a->n * a->target_width) * sizeof(int32_t)) == 0;
  return memcmp(a->targets, b->targets, (size_t)(a->n * a->target_width) * sizeof(float)) == 0;
}

/* ---- generators ----------------------------------------------------------------- */

typedef loom_dataset *(*gen_fn)(uint64_t seed);
static loom_dataset *gen_spiral(uint64_t seed) { return loom_gen_spiral(40, 3, 0.05, seed, NULL); }
static loom_dataset *gen_xor(uint64_t seed) { return loom_gen_xor(100, 0.1, seed, NULL); }
static loom_dataset *gen_circles(uint64_t seed) { return loom_gen_circles(90, 0.4, 0.05, seed, NULL); }
static loom_dataset *gen_clusters(uint64_t seed) { return loom_gen_clusters(60, 4, 3, 0.2, seed, NULL); }
static loom_dataset *gen_sine(uint64_t seed) { return loom_gen_sine(30, 8, 0.01, seed, NULL); }
static loom_dataset *gen_copy(uint64_t seed) { return loom_gen_copy(20, 5, 6, 0.0, seed, NULL); }

static void test_generators_deterministic(void) {
  gen_fn gens[] = {gen_spiral, gen_xor, gen_circles, gen_clusters, gen_sine, gen_copy};
  for (size_t i = 0; i < G_N_ELEMENTS(gens); i++) {
    loom_dataset *a = gens[i](42), *b = gens[i](42), *c = gens[i](43);
    g_assert_nonnull(a);
    g_assert_nonnull(c);
    g_assert_true(same_data(a, b));
    g_assert_false(same_data(a, c));
    g_assert_cmpint(loom_dataset_validate(a, NULL), ==, LOOM_OK);
    loom_dataset_free(a), loom_dataset_free(b), loom_dataset_free(c);
  }
}

static void test_generator_shapes(void) {
  loom_dataset *s = loom_gen_spiral(40, 3, 0.0, 1, NULL);
  g_assert_cmpint(s->n, ==, 120);
  g_assert_cmpint(s->n_classes, ==, 3);
  int counts[3] = {0};
  for (int64_t i = 0; i < s->n; i++) {
    counts[s->labels[i]]++;
    g_assert_cmpfloat(hypot(s->inputs[2 * i], s->inputs[2 * i + 1]), <=, 1.0 + 1e-6);
  }
  g_assert_cmpint(counts[0], ==, 40);
  g_assert_cmpint(counts[2], ==, 40);
  loom_dataset_free(s);

  loom_dataset *x = loom_gen_xor(200, 0.0, 5, NULL);
  for (int64_t i = 0; i < x->n; i++)
    g_assert_cmpint(x->labels[i], ==, (x->inputs[2 * i] > 0) != (x->inputs[2 * i + 1] > 0));
  loom_dataset_free(x);

  loom_dataset *c = loom_gen_circles(10, 0.3, 0.0, 5, NULL);
  for (int64_t i = 0; i < c->n; i++)
    g_assert_cmpfloat_with_epsilon(hypot(c->inputs[2 * i], c->inputs[2 * i + 1]), c->labels[i] ? 0.3 : 1.0, 1e-6);
  loom_dataset_free(c);

  /* Without noise every point of a cluster sits on its centre. */
  loom_dataset *k = loom_gen_clusters(12, 3, 2, 0.0, 9, NULL);
  g_assert_cmpint(k->input_shape.d[0], ==, 2);
  for (int64_t i = 3; i < k->n; i++) {
    g_assert_cmpint(k->labels[i], ==, i % 3);
    g_assert_cmpfloat(k->inputs[2 * i], ==, k->inputs[2 * (i - 3)]);
  }
  loom_dataset_free(k);

  /* A clean sine obeys s(t+1) = 2cos(ω)s(t) - s(t-1); the target continues it. */
  loom_dataset *w = loom_gen_sine(5, 10, 0.0, 3, NULL);
  g_assert_cmpint(w->input_shape.rank, ==, 2);
  g_assert_cmpint(w->input_shape.d[0], ==, 10);
  g_assert_cmpint(w->target_kind, ==, LOOM_TARGET_VECTOR);
  for (int64_t s2 = 0; s2 < w->n; s2++) {
    const float *v = w->inputs + s2 * 10;
    double num = 0, den = 0;
    for (int t = 1; t < 9; t++) {
      num += ((double)v[t + 1] + v[t - 1]) * v[t];
      den += 2.0 * v[t] * v[t];
    }
    double c2 = num / den;
    g_assert_cmpfloat_with_epsilon(w->targets[s2], 2.0 * c2 * v[9] - v[8], 1e-5);
  }
  loom_dataset_free(w);

  loom_dataset *cp = loom_gen_copy(3, 4, 5, 0.0, 8, NULL);
  g_assert_cmpint(cp->input_shape.d[0], ==, 9);
  g_assert_cmpint(cp->input_shape.d[1], ==, 7);
  g_assert_cmpint(cp->target_width, ==, 4);
  g_assert_cmpint(cp->n_classes, ==, 5);
  for (int64_t s2 = 0; s2 < cp->n; s2++) {
    const float *v = cp->inputs + s2 * 63;
    for (int t = 0; t < 4; t++) g_assert_cmpfloat(v[t * 7 + cp->labels[s2 * 4 + t]], ==, 1.0f);
    g_assert_cmpfloat(v[4 * 7 + 6], ==, 1.0f); /* delimiter */
    for (int t = 5; t < 9; t++) g_assert_cmpfloat(v[t * 7 + 5], ==, 1.0f); /* blanks */
    float sum = 0;
    for (int k2 = 0; k2 < 63; k2++) sum += v[k2];
    g_assert_cmpfloat(sum, ==, 9.0f);
  }
  loom_dataset_free(cp);

  loom_error err = {0};
  g_assert_null(loom_gen_spiral(10, 1, 0.1, 1, &err));
  g_assert_cmpstr(err.message, ==, "spiral: classes is 1, expected 2 to 1000");
  g_assert_null(loom_gen_xor(10, -1.0, 1, &err));
  g_assert_cmpstr(err.message, ==, "xor: noise is -1, expected a finite value >= 0");
  g_assert_null(loom_gen_circles(10, 1.0, 0.1, 1, &err));
  g_assert_cmpstr(err.message, ==, "circles: factor is 1, expected a value in (0, 1)");
}

/* ---- shuffles, splits, normalisation, batches ----------------------------------- */

static loom_dataset *indexed(int64_t n) {
  loom_shape in = loom_shape_1d(1);
  loom_dataset *ds = loom_dataset_new(n, &in, LOOM_TARGET_CLASS, 1, 2, NULL);
  for (int64_t i = 0; i < n; i++) {
    ds->inputs[i] = (float)i;
    ds->labels[i] = (int32_t)(i % 2);
  }
  return ds;
}

static void assert_permutation(const int64_t *p, int64_t n) {
  g_autofree bool *seen = g_new0(bool, n);
  for (int64_t i = 0; i < n; i++) {
    g_assert_true(p[i] >= 0 && p[i] < n && !seen[p[i]]);
    seen[p[i]] = true;
  }
}

static void test_permutation(void) {
  int64_t a[50], b[50], c[50];
  loom_permutation(50, 7, 0, a);
  loom_permutation(50, 7, 0, b);
  loom_permutation(50, 7, 1, c);
  assert_permutation(a, 50);
  assert_permutation(c, 50);
  g_assert_cmpmem(a, sizeof a, b, sizeof b);
  g_assert_true(memcmp(a, c, sizeof a) != 0);
}

static void test_split(void) {
  loom_dataset *ds = indexed(10), *train, *test, *train2, *test2, *train3, *test3;
  loom_error err = {0};
  g_assert_cmpint(loom_dataset_split(ds, 0.25, 3, &train, &test, &err), ==, LOOM_OK);
  g_assert_cmpint(test->n, ==, 3); /* ceil(2.5) */
  g_assert_cmpint(train->n, ==, 7);
  bool seen[10] = {false};
  for (int64_t i = 0; i < test->n; i++) seen[(int)test->inputs[i]] = true;
  for (int64_t i = 0; i < train->n; i++) {
    g_assert_false(seen[(int)train->inputs[i]]);
    seen[(int)train->inputs[i]] = true;
    g_assert_cmpint(train->labels[i], ==, (int)train->inputs[i] % 2);
  }
  for (int i = 0; i < 10; i++) g_assert_true(seen[i]);
  g_assert_cmpint(loom_dataset_split(ds, 0.25, 3, &train2, &test2, &err), ==, LOOM_OK);
  g_assert_true(same_data(test, test2));
  g_assert_cmpint(loom_dataset_split(ds, 0.25, 4, &train3, &test3, &err), ==, LOOM_OK);
  g_assert_false(same_data(train, train3));
  loom_dataset *tr, *te;
  loom_dataset *thirty = indexed(30);
  g_assert_cmpint(loom_dataset_split(thirty, 0.1, 3, &tr, &te, &err), ==, LOOM_OK);
  g_assert_cmpint(te->n, ==, 3); /* 0.1 × 30 is 3.0000000000000004 in binary */
  g_assert_cmpint(tr->n, ==, 27);
  loom_dataset_free(thirty), loom_dataset_free(tr), loom_dataset_free(te);
  g_assert_cmpint(loom_dataset_split(ds, 1.0, 3, &tr, &te, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "dataset split: test fraction is 1, expected a value in (0, 1)");
  g_assert_null(tr);
  g_assert_cmpint(loom_dataset_split(ds, 0.95, 3, &tr, &te, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "dataset split: 10 samples with test fraction 0.95 leave an empty train or test part");
  loom_dataset_free(ds), loom_dataset_free(train), loom_dataset_free(test), loom_dataset_free(train2);
  loom_dataset_free(test2), loom_dataset_free(train3), loom_dataset_free(test3);
}

static void test_normalization(void) {
  loom_shape in = loom_shape_1d(2);
  loom_dataset *train = loom_dataset_new(4, &in, LOOM_TARGET_VECTOR, 1, 0, NULL);
  float values[8] = {0, 5, 2, 5, 4, 5, 6, 5};
  memcpy(train->inputs, values, sizeof values);
  loom_dataset *test = loom_dataset_new(1, &in, LOOM_TARGET_VECTOR, 1, 0, NULL);
  test->inputs[0] = 12.0f;
  test->inputs[1] = 7.0f;
  loom_normalizer norm;
  loom_error err = {0};
  g_assert_cmpint(loom_normalizer_fit(train, LOOM_NORM_MINMAX, &norm, &err), ==, LOOM_OK);
  loom_dataset *t2 = loom_dataset_clone(test, NULL);
  g_assert_cmpint(loom_normalizer_apply(&norm, t2, &err), ==, LOOM_OK);
  /* The test split uses the train statistics: 12 maps beyond 1; a constant feature maps to x - 5. */
  g_assert_cmpfloat(t2->inputs[0], ==, 2.0f);
  g_assert_cmpfloat(t2->inputs[1], ==, 2.0f);
  loom_normalizer_clear(&norm);
  loom_dataset_free(t2);

  g_assert_cmpint(loom_normalizer_fit(train, LOOM_NORM_ZSCORE, &norm, &err), ==, LOOM_OK);
  g_assert_cmpfloat(norm.offset[0], ==, 3.0);
  g_assert_cmpfloat_with_epsilon(norm.scale[0], 1.0 / sqrt(5.0), 1e-15);
  g_assert_cmpint(loom_normalizer_apply(&norm, train, &err), ==, LOOM_OK);
  g_assert_cmpfloat_with_epsilon(train->inputs[0], -3.0 / sqrt(5.0), 1e-6);
  g_assert_cmpfloat(train->inputs[1], ==, 0.0f);
  g_assert_cmpint(loom_normalizer_apply(&norm, test, &err), ==, LOOM_OK);
  g_assert_cmpfloat_with_epsilon(test->inputs[0], 9.0 / sqrt(5.0), 1e-6);
  loom_normalizer_clear(&norm);

  loom_norm_kind k;
  g_assert_cmpint(loom_norm_from_name("zscore", &k, &err), ==, LOOM_OK);
  g_assert_cmpint(k, ==, LOOM_NORM_ZSCORE);
  g_assert_cmpint(loom_norm_from_name("robust", &k, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "unknown normalization 'robust' (expected none, minmax or zscore)");
  loom_dataset_free(train), loom_dataset_free(test);
}

static void test_batches(void) {
  loom_dataset *ds = indexed(10);
  loom_error err = {0};
  loom_batcher *b = loom_batcher_new(ds, 4, true, false, 11, &err);
  g_assert_cmpint(loom_batcher_n_batches(b), ==, 3);
  int64_t order0[10], order1[10], again[10];
  int64_t *orders[3] = {order0, order1, again};
  uint64_t epochs[3] = {0, 1, 0};
  for (int e = 0; e < 3; e++) {
    loom_batcher_set_epoch(b, epochs[e]);
    int64_t at = 0;
    for (int64_t i = 0; i < 3; i++) {
      loom_batch batch;
      g_assert_cmpint(loom_batcher_get(b, i, &batch, &err), ==, LOOM_OK);
      g_assert_cmpint(batch.size, ==, i < 2 ? 4 : 2);
      g_assert_null(batch.targets);
      for (int64_t k = 0; k < batch.size; k++) {
        orders[e][at++] = (int64_t)batch.inputs[k];
        g_assert_cmpint(batch.labels[k], ==, (int)batch.inputs[k] % 2);
      }
    }
    assert_permutation(orders[e], 10);
  }
  g_assert_true(memcmp(order0, order1, sizeof order0) != 0);
  g_assert_cmpmem(order0, sizeof order0, again, sizeof again);
  loom_batch batch;
  g_assert_cmpint(loom_batcher_get(b, 3, &batch, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "batches: batch 3 outside [0, 3)");
  loom_batcher_free(b);

  b = loom_batcher_new(ds, 4, false, true, 0, &err);
  g_assert_cmpint(loom_batcher_n_batches(b), ==, 2);
  g_assert_cmpint(loom_batcher_get(b, 1, &batch, &err), ==, LOOM_OK);
  for (int k = 0; k < 4; k++) g_assert_cmpfloat(batch.inputs[k], ==, (float)(4 + k));
  loom_batcher_free(b);
  g_assert_null(loom_batcher_new(ds, 11, false, true, 0, &err));
  g_assert_cmpstr(err.message, ==, "batches: batch size 11 over 10 samples (dropping the last) gives no batch");
  loom_dataset_free(ds);
}

static void test_labels_to_vectors(void) {
  loom_dataset *ds = indexed(3);
  loom_dataset *one_hot = loom_dataset_clone(ds, NULL);
  g_assert_cmpint(loom_dataset_labels_to_vectors(one_hot, true, NULL), ==, LOOM_OK);
  g_assert_cmpint(one_hot->target_width, ==, 2);
  float expect[6] = {1, 0, 0, 1, 1, 0};
  g_assert_cmpmem(one_hot->targets, sizeof expect, expect, sizeof expect);
  g_assert_cmpint(loom_dataset_labels_to_vectors(ds, false, NULL), ==, LOOM_OK);
  g_assert_cmpfloat(ds->targets[1], ==, 1.0f);
  loom_error err = {0};
  g_assert_cmpint(loom_dataset_labels_to_vectors(ds, false, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "dataset: only single-label class targets convert to vectors");
  loom_dataset_free(ds), loom_dataset_free(one_hot);
}

/* ---- digits ------------------------------------------------------------------------- */

static char *digits_path(void) {
  return g_build_filename(g_getenv("LOOM_SOURCE_DIR"), "data", "datasets", "optdigits-8x8.csv.gz", NULL);
}

static void test_digits(void) {
  g_autofree char *path = digits_path();
  loom_error err = {0};
  loom_dataset *ds = loom_dataset_load_digits(path, true, &err);
  if (!ds) g_error("%s", err.message);
  g_assert_cmpint(ds->n, ==, 1797);
  g_assert_cmpint(ds->n_classes, ==, 10);
  g_assert_cmpint(ds->input_shape.rank, ==, 3);
  g_assert_cmpint(ds->input_shape.d[0], ==, 1);
  g_assert_cmpint(ds->input_shape.d[2], ==, 8);
  /* Pixel sums of the first rows (raw 294, 313, 344) and of the last (392), ÷16. */
  const int64_t rows[4] = {0, 1, 2, 1796};
  const double sums[4] = {294, 313, 344, 392};
  const int labels[4] = {0, 1, 2, 8};
  for (int r = 0; r < 4; r++) {
    double sum = 0;
    for (int k = 0; k < 64; k++) sum += ds->inputs[rows[r] * 64 + k];
    g_assert_cmpfloat(sum, ==, sums[r] / 16.0);
    g_assert_cmpint(ds->labels[rows[r]], ==, labels[r]);
  }
  g_assert_cmpfloat(ds->inputs[2], ==, 5.0f / 16.0f);
  int counts[10] = {0};
  for (int64_t i = 0; i < ds->n; i++) counts[ds->labels[i]]++;
  g_assert_cmpint(counts[0], ==, 178);
  g_assert_cmpint(counts[3], ==, 183);
  g_assert_cmpint(counts[8], ==, 174);
  loom_dataset_free(ds);

  ds = loom_dataset_load_digits(path, false, &err);
  g_assert_cmpint(ds->input_shape.rank, ==, 1);
  g_assert_cmpint(ds->input_shape.d[0], ==, 64);
  loom_dataset_free(ds);

  g_autofree char *bad = tmp_file("bad-digits.csv", "0,1,2\n");
  g_assert_null(loom_dataset_load_digits(bad, true, &err));
  g_autofree char *expect = g_strdup_printf("%s: 3 columns, expected 65 (64 pixels, then the label)", bad);
  g_assert_cmpstr(err.message, ==, expect);
}

/* ---- CSV ------------------------------------------------------------------------------ */

static void test_csv_good(void) {
  loom_error err = {0};
  g_autofree char *p1 = tmp_file("iris.csv", "a,b,species\r\n1,2,setosa\r\n\r\n3.5, 4 ,virginica\n-1e2,\"5\",setosa\n");
  loom_dataset *ds = loom_dataset_load_csv(p1, NULL, &err);
  if (!ds) g_error("%s", err.message);
  g_assert_cmpint(ds->n, ==, 3);
  g_assert_cmpint(ds->n_classes, ==, 2);
  g_assert_cmpstr(ds->class_names[0], ==, "setosa");
  g_assert_cmpstr(ds->class_names[1], ==, "virginica");
  const float in[6] = {1, 2, 3.5f, 4, -100, 5};
  const int32_t lab[3] = {0, 1, 0};
  g_assert_cmpmem(ds->inputs, sizeof in, in, sizeof in);
  g_assert_cmpmem(ds->labels, sizeof lab, lab, sizeof lab);
  loom_dataset_free(ds);

  /* Label by name in the middle; semicolons; gzip'ed. */
  g_autofree char *p2 = g_build_filename(tmp_dir, "mid.csv.gz", NULL);
  gzFile gz = gzopen(p2, "wb");
  const char *text = "x;label;y\n1;0;2\n3;2;4\n";
  g_assert_cmpint(gzwrite(gz, text, (unsigned)strlen(text)), ==, (int)strlen(text));
  gzclose(gz);
  loom_csv_options o = loom_csv_options_default();
  o.delimiter = ';';
  o.label_name = "label";
  ds = loom_dataset_load_csv(p2, &o, &err);
  if (!ds) g_error("%s", err.message);
  const float in2[4] = {1, 2, 3, 4};
  g_assert_cmpmem(ds->inputs, sizeof in2, in2, sizeof in2);
  g_assert_cmpint(ds->n_classes, ==, 3);
  g_assert_null(ds->class_names);
  loom_dataset_free(ds);

  /* No header detected; first column as a regression target. */
  g_autofree char *p3 = tmp_file("plain.csv", "0.5,1,2\n1.5,3,4\n");
  o = loom_csv_options_default();
  o.label_index = 0;
  o.target = LOOM_TARGET_VECTOR;
  ds = loom_dataset_load_csv(p3, &o, &err);
  g_assert_cmpint(ds->n, ==, 2);
  g_assert_cmpfloat(ds->targets[1], ==, 1.5f);
  g_assert_cmpfloat(ds->inputs[3], ==, 4.0f);
  loom_dataset_free(ds);
  /* Forcing a header takes the first row as names. */
  o.header = LOOM_CSV_HEADER_YES;
  ds = loom_dataset_load_csv(p3, &o, &err);
  g_assert_cmpint(ds->n, ==, 1);
  loom_dataset_free(ds);
}

static void expect_csv_error(const char *name, const char *contents, const loom_csv_options *o, loom_status code,
                             const char *message_after_path) {
  g_autofree char *path = tmp_file(name, contents);
  loom_error err = {0};
  loom_dataset *ds = loom_dataset_load_csv(path, o, &err);
  if (ds) g_error("%s: loaded, expected an error", name);
  g_autofree char *expect = g_strdup_printf("%s%s", path, message_after_path);
  g_assert_cmpstr(err.message, ==, expect);
  g_assert_cmpint(err.code, ==, code);
}

static void test_csv_hostile(void) {
  expect_csv_error("ragged.csv", "a,b,c\n1,2,0\n3,4\n", NULL, LOOM_ERR_FORMAT, ":3: 2 fields, expected 3 like line 1");
  expect_csv_error("word.csv", "a,b,c\n1,2,0\n\n3,x4,1\n", NULL, LOOM_ERR_FORMAT,
                   ":4: column 2 ('b'): 'x4' is not a finite number");
  expect_csv_error("word-noheader.csv", "1,2,0\n3,x4,1\n", NULL, LOOM_ERR_FORMAT,
                   ":2: column 2: 'x4' is not a finite number");
  expect_csv_error("nan.csv", "1,2,0\n1,nan,0\n", NULL, LOOM_ERR_FORMAT, ":2: column 2: 'nan' is not a finite number");
  expect_csv_error("emptyfield.csv", "1,2,0\n1,,0\n", NULL, LOOM_ERR_FORMAT, ":2: column 2: '' is not a finite number");
  expect_csv_error("empty.csv", "", NULL, LOOM_ERR_FORMAT, ": empty file (no rows)");
  expect_csv_error("blank.csv", "\n  \r\n\n", NULL, LOOM_ERR_FORMAT, ": empty file (no rows)");
  expect_csv_error("header-only.csv", "a,b,c\n", NULL, LOOM_ERR_FORMAT, ": no data rows after the header");
  expect_csv_error("one-column.csv", "1\n2\n", NULL, LOOM_ERR_FORMAT,
                   ": only 1 column; need input columns and a label column");
  loom_csv_options o = loom_csv_options_default();
  o.label_name = "target";
  expect_csv_error("nolabel.csv", "a,b,c\n1,2,0\n", &o, LOOM_ERR_INVALID,
                   ": no column named 'target' in the header (columns: 'a', 'b', 'c')");
  expect_csv_error("nolabel-noheader.csv", "1,2,0\n", &o, LOOM_ERR_INVALID,
                   ": label column 'target' is given by name but the file has no header row");
  o = loom_csv_options_default();
  o.label_index = 5;
  expect_csv_error("index.csv", "1,2,0\n", &o, LOOM_ERR_RANGE,
                   ": label column index 5 is out of range: the file has 3 columns");
  expect_csv_error("halflabel.csv", "1,2,0\n1,2,0.5\n", NULL, LOOM_ERR_FORMAT,
                   ":2: column 3: '0.5' is not a class label (an integer or a name)");
  expect_csv_error("negative.csv", "1,2,0\n1,2,-3\n", NULL, LOOM_ERR_RANGE, ":2: class label -3 is negative");
  expect_csv_error("quote.csv", "1,\"2,0\n", NULL, LOOM_ERR_FORMAT,
                   ":1: column 2: unterminated quoted field, expected a closing '\"' before the end of the line");

  size_t huge = ((size_t)1 << 20) + 10;
  g_autofree char *big = g_malloc(huge + 16);
  memcpy(big, "1,2,0\n", 6);
  memset(big + 6, '7', huge);
  big[6 + huge] = '\0';
  expect_csv_error("huge.csv", big, NULL, LOOM_ERR_FORMAT, ":2: line longer than 1048576 bytes");

  loom_error err = {0};
  g_autofree char *missing = g_build_filename(tmp_dir, "missing.csv", NULL);
  g_assert_null(loom_dataset_load_csv(missing, NULL, &err));
  g_autofree char *expect = g_strdup_printf("%s: cannot open: No such file or directory", missing);
  g_assert_cmpstr(err.message, ==, expect);
  g_assert_cmpint(err.code, ==, LOOM_ERR_IO);
}

/* ---- .npy ------------------------------------------------------------------------------ */

static char *write_npy(const char *name, int ndim, const int64_t *shape, const float *data) {
  loom_npy a = {.ndim = ndim};
  memcpy(a.shape, shape, (size_t)ndim * sizeof(int64_t));
  a.data = (float *)data;
  char *path = g_build_filename(tmp_dir, name, NULL);
  loom_error err = {0};
  if (loom_npy_write(path, &a, &err)) g_error("%s", err.message);
  return path;
}

static void test_npy(void) {
  float x[30], y[5] = {0, 3, 1, 1, 2}, yv[10], yfrac[5] = {0, 1, 1.5f, 0, 0};
  for (int i = 0; i < 30; i++) x[i] = (float)i;
  for (int i = 0; i < 10; i++) yv[i] = (float)i * 0.5f;
  g_autofree char *px = write_npy("x.npy", 3, (int64_t[]){5, 2, 3}, x);
  g_autofree char *py = write_npy("y.npy", 1, (int64_t[]){5}, y);
  g_autofree char *pyv = write_npy("yv.npy", 2, (int64_t[]){5, 2}, yv);
  g_autofree char *py4 = write_npy("y4.npy", 1, (int64_t[]){4}, y);
  g_autofree char *py3d = write_npy("y3d.npy", 3, (int64_t[]){5, 1, 1}, y);
  g_autofree char *px1 = write_npy("x1.npy", 1, (int64_t[]){5}, y);
  g_autofree char *pfrac = write_npy("yfrac.npy", 1, (int64_t[]){5}, yfrac);
  loom_error err = {0};
  loom_dataset *ds = loom_dataset_load_npy(px, py, LOOM_TARGET_CLASS, &err);
  if (!ds) g_error("%s", err.message);
  g_assert_cmpint(ds->n, ==, 5);
  g_assert_cmpint(ds->input_shape.rank, ==, 2);
  g_assert_cmpint(ds->input_shape.d[1], ==, 3);
  g_assert_cmpint(ds->n_classes, ==, 4);
  g_assert_cmpint(ds->labels[1], ==, 3);
  g_assert_cmpfloat(ds->inputs[29], ==, 29.0f);
  loom_dataset_free(ds);
  ds = loom_dataset_load_npy(px, pyv, LOOM_TARGET_VECTOR, &err);
  g_assert_cmpint(ds->target_width, ==, 2);
  g_assert_cmpfloat(ds->targets[9], ==, 4.5f);
  loom_dataset_free(ds);

  g_assert_null(loom_dataset_load_npy(px, py4, LOOM_TARGET_CLASS, &err));
  g_autofree char *e1 = g_strdup_printf(
    "%s has 5 samples (5, 2, 3) but %s has 4 (4,); the first dimensions must agree", px, py4);
  g_assert_cmpstr(err.message, ==, e1);
  g_assert_cmpint(err.code, ==, LOOM_ERR_SHAPE);
  g_assert_null(loom_dataset_load_npy(px, py3d, LOOM_TARGET_CLASS, &err));
  g_autofree char *e2 = g_strdup_printf("%s: targets have shape (5, 1, 1); expected (samples,) or (samples, k)", py3d);
  g_assert_cmpstr(err.message, ==, e2);
  g_assert_null(loom_dataset_load_npy(px1, py, LOOM_TARGET_CLASS, &err));
  g_autofree char *e3 = g_strdup_printf(
    "%s: inputs have shape (5,); expected (samples, ...) with 1 to 4 dimensions per sample", px1);
  g_assert_cmpstr(err.message, ==, e3);
  g_assert_null(loom_dataset_load_npy(px, pfrac, LOOM_TARGET_CLASS, &err));
  g_autofree char *e4 = g_strdup_printf(
    "%s: sample 2, element 0 is 1.5; expected a class index, an integer 0..999999", pfrac);
  g_assert_cmpstr(err.message, ==, e4);
  g_autofree char *missing = g_build_filename(tmp_dir, "nope.npy", NULL);
  g_assert_null(loom_dataset_load_npy(px, missing, LOOM_TARGET_CLASS, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_IO);
  g_assert_nonnull(strstr(err.message, missing));
}

static void remove_tmp_dir(void) {
  GDir *d = g_dir_open(tmp_dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name(d))) {
    g_autofree char *p = g_build_filename(tmp_dir, name, NULL);
    g_unlink(p);
  }
  g_dir_close(d);
  g_rmdir(tmp_dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-dataset-XXXXXX", NULL);
  g_assert_nonnull(tmp_dir);
  g_test_add_func("/train/dataset/generators-deterministic", test_generators_deterministic);
  g_test_add_func("/train/dataset/generator-shapes", test_generator_shapes);
  g_test_add_func("/train/dataset/permutation", test_permutation);
  g_test_add_func("/train/dataset/split", test_split);
  g_test_add_func("/train/dataset/normalization", test_normalization);
  g_test_add_func("/train/dataset/batches", test_batches);
  g_test_add_func("/train/dataset/labels-to-vectors", test_labels_to_vectors);
  g_test_add_func("/train/dataset/digits", test_digits);
  g_test_add_func("/train/dataset/csv-good", test_csv_good);
  g_test_add_func("/train/dataset/csv-hostile", test_csv_hostile);
  g_test_add_func("/train/dataset/npy", test_npy);
  int rc = g_test_run();
  remove_tmp_dir();
  g_free(tmp_dir);
  return rc;
}
