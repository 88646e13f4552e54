/*
 * loom bench MODEL [--dtypes all|LIST] [--batch B] [--runs N] [--threads N] [--json]
 *
 * Runs the model at each dtype side by side with float32: the median time of
 * a forward and of one training step (forward, MSE loss, backward, SGD
 * update, the weights marked for re-morphing) over N runs, the bytes of the
 * weights at that dtype, and how far its output lies from the float32
 * output on the same input batch. The columns are explained in
 * docs/dtypes.md ("Comparing dtypes: loom bench").
 *
 * Every dtype runs on its own clone of the model moved to that dtype, so the
 * rows share the master weights; the input and the training target are drawn
 * from a fixed seed, so deviations repeat from run to run (times do not).
 */
#include <errno.h>
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli-json.h"
#include "cli-model.h"
#include "cli-table.h"
#include "commands.h"

int cmd_bench(int argc, char **argv);

#define BENCH_MAX_THREADS 1024
#define BENCH_MAX_BATCH 65536
#define BENCH_MAX_RUNS 100000
#define BENCH_SEED 0x6c6f6f6d62656e63ull /* "loombenc": the input and the target */
#define BENCH_LR 1e-3

typedef struct bench_row {
  loom_dtype dtype;
  double forward_s, rest_forward_s, train_s; /* medians */
  size_t bytes;
  /* loom_net_resident_bytes: at rest (loom_net_to_inference), after the
   * plain forwards, after the training steps */
  size_t rest_resident, run_resident, train_resident;
  double max_abs, rel_rms;                 /* against the float32 output */
  double rest_max_abs, rest_rel_rms;       /* the forward at rest, against the same */
} bench_row;

typedef struct bench_setup {
  const char *model_path;
  const loom_net *net;
  loom_pool *pool;
  const float *x, *target;
  float *ref; /* the float32 output: the first forward of the float32 row writes it */
  int64_t batch, width;
  int runs;
} bench_setup;

/* splitmix64, mapped to [-1, 1): the deterministic input and target. */
static void fill_uniform(float *v, int64_t n, uint64_t seed) {
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    v[i] = (float)((double)(z >> 40) / (double)(1ull << 23) - 1.0);
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Every weight store of a layer, its children and its gate, with its gradient:
 * the tensors one SGD step updates. */
typedef struct tensors {
  GPtrArray *stores;
  GPtrArray *params, *grads;
  GArray *sizes;
} tensors;

static void collect_tensors(loom_layer *l, tensors *t) {
  for (int i = 0; i < loom_layer_n_weights(l); i++) {
    loom_weights *w = loom_layer_weights(l, i);
    g_ptr_array_add(t->stores, w);
    g_ptr_array_add(t->params, loom_weights_master(w));
    g_ptr_array_add(t->grads, loom_layer_grad(l, i));
    int64_t n = loom_weights_count(w);
    g_array_append_val(t->sizes, n);
  }
  for (int c = 0; c < loom_layer_n_children(l); c++) collect_tensors(loom_layer_child(l, c), t);
  if (loom_layer_gate(l)) collect_tensors(loom_layer_gate(l), t);
}

/* The clone at dtype d, built; NULL after printing an error naming the model and dtype. */
static loom_net *clone_at(const bench_setup *b, loom_dtype d) {
  loom_error err = {0};
  loom_net *net = loom_net_clone(b->net, &err);
  for (int64_t i = 0; net && i < loom_net_n_layers(net); i++) {
    loom_coord c = loom_net_layer_coord(net, i);
    if (loom_layer_set_dtype(loom_net_layer_at(net, c), d, &err)) {
      char at[64];
      loom_error_prefix(&err, _("slot %s"), loom_coord_format(c, at, sizeof at));
      loom_net_free(net);
      net = NULL;
    }
  }
  if (!net) cli_error("bench", _("%s: dtype %s: %s"), b->model_path, loom_dtype_name(d), err.message);
  return net;
}

/* max |y − ref| and √(Σ(y − ref)² / Σref²) over n outputs. */
static void deviation(const float *y, const float *ref, int64_t n, double *max_abs_out, double *rel_rms_out) {
  double max_abs = 0, dd = 0, rr = 0;
  for (int64_t i = 0; i < n; i++) {
    double diff = fabs((double)y[i] - (double)ref[i]);
    if (!(diff <= max_abs)) max_abs = diff; /* NaN sticks */
    dd += diff * diff;
    rr += (double)ref[i] * ref[i];
  }
  *max_abs_out = max_abs;
  /* An all-zero reference leaves no scale: any difference is infinitely large. */
  *rel_rms_out = rr > 0 ? sqrt(dd / rr) : dd == 0 ? 0 : INFINITY;
}

/* The median over b->runs of one forward of the batch into y. */
static int timed_forwards(const bench_setup *b, loom_net *net, const loom_ctx *ctx, float *y, double *times,
                          double *median_s, loom_error *err) {
  for (int r = 0; r < b->runs; r++) {
    double t0 = now_s();
    if (loom_net_forward(net, ctx, b->x, b->batch, y, err)) return 1;
    times[r] = now_s() - t0;
  }
  *median_s = median(times, b->runs);
  return 0;
}

/* The forward of a clone put at rest (packed codes and scales only, as
 * `loom forward --inference` runs): its median time, resident bytes and
 * deviation from the float32 output. */
static int bench_at_rest(const bench_setup *b, loom_dtype d, float *y, double *times, bench_row *row) {
  loom_net *net = clone_at(b, d);
  if (!net) return 1;
  loom_error err = {0};
  loom_ctx infer = {.pool = b->pool};
  int status = 0;
  if (loom_net_to_inference(net, &err) || loom_net_forward(net, &infer, b->x, b->batch, y, &err) ||
      timed_forwards(b, net, &infer, y, times, &row->rest_forward_s, &err))
    goto fail;
  row->rest_resident = loom_net_resident_bytes(net);
  deviation(y, b->ref, b->batch * b->width, &row->rest_max_abs, &row->rest_rel_rms);
  goto done;
fail:
  cli_error("bench", _("%s: dtype %s at rest: %s"), b->model_path, loom_dtype_name(d), err.message);
  status = 1;
done:
  loom_net_free(net);
  return status;
}

/* Forward timings and the output's deviation, then the same at rest, then
 * training-step timings (which change the weights, so they come last). */
static int bench_dtype(const bench_setup *b, loom_dtype d, float *y, bench_row *row) {
  loom_net *net = clone_at(b, d);
  if (!net) return 1;
  loom_error err = {0};
  int status = 0;
  int64_t n = b->batch * b->width;
  float *dy = g_new(float, n);
  double *times = g_new(double, b->runs);
  tensors t = {g_ptr_array_new(), g_ptr_array_new(), g_ptr_array_new(), g_array_new(FALSE, FALSE, sizeof(int64_t))};
  loom_optim *opt = NULL;
  loom_ctx infer = {.pool = b->pool}, train = {.pool = b->pool, .training = true, .seed = BENCH_SEED};
  *row = (bench_row){.dtype = d, .bytes = loom_net_bytes(net)};

  /* The first forward also packs the weights at d: it is not timed. The
   * float32 row keeps it as the reference, and its timed forwards are then
   * compared with it like every other row's (they must not differ). */
  if (loom_net_forward(net, &infer, b->x, b->batch, d == LOOM_DTYPE_FLOAT32 ? b->ref : y, &err) ||
      timed_forwards(b, net, &infer, y, times, &row->forward_s, &err))
    goto fail;
  row->run_resident = loom_net_resident_bytes(net);
  deviation(y, b->ref, n, &row->max_abs, &row->rel_rms);
  if (bench_at_rest(b, d, y, times, row)) {
    status = 1;
    goto done;
  }

  for (int64_t i = 0; i < loom_net_n_layers(net); i++)
    collect_tensors(loom_net_layer_at(net, loom_net_layer_coord(net, i)), &t);
  if (t.stores->len > 0) {
    loom_optim_config cfg = loom_optim_defaults(LOOM_OPTIM_SGD);
    opt = loom_optim_new(&cfg, (int)t.stores->len, (const int64_t *)(void *)t.sizes->data, &err);
    if (!opt) goto fail;
    loom_optim_set_pool(opt, b->pool);
  }
  for (int r = -1; r < b->runs; r++) { /* run -1 warms up, as above */
    double t0 = now_s(), loss;
    train.step = (uint64_t)(r + 1);
    loom_net_zero_grad(net);
    if (loom_net_forward(net, &train, b->x, b->batch, y, &err) ||
        loom_loss_mse(y, b->target, b->batch, b->width, &loss, dy, &err) ||
        loom_net_backward(net, &train, dy, NULL, &err))
      goto fail;
    if (opt && loom_optim_step(opt, (float *const *)t.params->pdata, (const float *const *)t.grads->pdata, BENCH_LR,
                               &err))
      goto fail;
    for (guint k = 0; k < t.stores->len; k++) loom_weights_touch(t.stores->pdata[k]);
    if (r >= 0) times[r] = now_s() - t0;
  }
  row->train_s = median(times, b->runs);
  row->train_resident = loom_net_resident_bytes(net);
  goto done;
fail:
  cli_error("bench", _("%s: dtype %s: %s"), b->model_path, loom_dtype_name(d), err.message);
  status = 1;
done:
  loom_optim_free(opt);
  g_ptr_array_free(t.stores, TRUE);
  g_ptr_array_free(t.params, TRUE);
  g_ptr_array_free(t.grads, TRUE);
  g_array_free(t.sizes, TRUE);
  g_free(times);
  g_free(dy);
  loom_net_free(net);
  return status;
}

static void print_json(const bench_setup *b, int threads, const bench_row *rows, int n_rows) {
  const bench_row *f32 = &rows[0];
  GString *s = g_string_new("{\"model\":");
  cli_json_string(s, b->model_path);
  g_string_append_printf(s, ",\"batch\":%lld,\"runs\":%d,\"threads\":%d,\"weights_float32_bytes\":%zu,\"dtypes\":[",
                         (long long)b->batch, b->runs, threads, f32->bytes);
  for (int i = 0; i < n_rows; i++) {
    const bench_row *r = &rows[i];
    g_string_append(s, i ? ",{\"dtype\":" : "{\"dtype\":");
    cli_json_string(s, loom_dtype_name(r->dtype));
    g_string_append_printf(s, ",\"bits\":%d,\"forward_s\":", loom_dtype_traits_get(r->dtype)->bits);
    cli_json_number(s, r->forward_s);
    g_string_append(s, ",\"forward_ratio\":");
    cli_json_number(s, r->forward_s / f32->forward_s);
    g_string_append(s, ",\"rest_forward_s\":");
    cli_json_number(s, r->rest_forward_s);
    g_string_append(s, ",\"rest_forward_ratio\":");
    cli_json_number(s, r->rest_forward_s / f32->forward_s);
    g_string_append(s, ",\"train_step_s\":");
    cli_json_number(s, r->train_s);
    g_string_append(s, ",\"train_step_ratio\":");
    cli_json_number(s, r->train_s / f32->train_s);
    g_string_append_printf(s, ",\"weight_bytes\":%zu,\"weight_bytes_ratio\":", r->bytes);
    cli_json_number(s, (double)r->bytes / (double)f32->bytes);
    g_string_append_printf(s, ",\"resident_bytes_at_rest\":%zu,\"resident_bytes_forward\":%zu,"
                           "\"resident_bytes_training\":%zu,\"max_abs_deviation\":",
                           r->rest_resident, r->run_resident, r->train_resident);
    cli_json_number(s, r->max_abs);
    g_string_append(s, ",\"relative_rms_deviation\":");
    cli_json_number(s, r->rel_rms);
    g_string_append(s, ",\"rest_max_abs_deviation\":");
    cli_json_number(s, r->rest_max_abs);
    g_string_append(s, ",\"rest_relative_rms_deviation\":");
    cli_json_number(s, r->rest_rel_rms);
    g_string_append(s, "}");
  }
  g_string_append(s, "]}\n");
  fputs(s->str, stdout);
  g_string_free(s, TRUE);
}

static void print_table(const bench_setup *b, int threads, const bench_row *rows, int n_rows) {
  const bench_row *f32 = &rows[0];
  printf(ngettext("%s: batch %lld, median of %d runs, %d thread\n", "%s: batch %lld, median of %d runs, %d threads\n",
                  (unsigned long)threads),
         b->model_path, (long long)b->batch, b->runs, threads);
  enum { N_COLS = 16 };
  /* A column is as wide as its title needs (cli-table.h); negative: left-aligned. */
  const char *titles[N_COLS] = {_("dtype"),     _("bits"),       _("forward ms"), "×f32",         _("at rest ms"),
                                "×f32",         _("train ms"),   "×f32",          _("weight bytes"), "×f32",
                                _("at rest B"), _("forward B"),  _("training B"), _("max |Δ|"),    _("rel. RMS"),
                                _("rest RMS")};
  int widths[N_COLS] = {-10, 4, 11, 6, 11, 6, 11, 6, 12, 6, 12, 12, 12, 9, 9, 9};
  cli_table_fit(widths, titles, N_COLS);
  char cells[N_COLS][48];
  cli_table_row("", titles, widths, N_COLS);
  for (int i = 0; i < n_rows; i++) {
    const bench_row *r = &rows[i];
    const char *row[N_COLS];
    snprintf(cells[0], sizeof cells[0], "%s", loom_dtype_name(r->dtype));
    snprintf(cells[1], sizeof cells[1], "%d", loom_dtype_traits_get(r->dtype)->bits);
    snprintf(cells[2], sizeof cells[2], "%.4g", r->forward_s * 1e3);
    snprintf(cells[3], sizeof cells[3], "%.2f", r->forward_s / f32->forward_s);
    snprintf(cells[4], sizeof cells[4], "%.4g", r->rest_forward_s * 1e3);
    snprintf(cells[5], sizeof cells[5], "%.2f", r->rest_forward_s / f32->forward_s);
    snprintf(cells[6], sizeof cells[6], "%.4g", r->train_s * 1e3);
    snprintf(cells[7], sizeof cells[7], "%.2f", r->train_s / f32->train_s);
    snprintf(cells[8], sizeof cells[8], "%zu", r->bytes);
    snprintf(cells[9], sizeof cells[9], "%.3f", (double)r->bytes / (double)f32->bytes);
    snprintf(cells[10], sizeof cells[10], "%zu", r->rest_resident);
    snprintf(cells[11], sizeof cells[11], "%zu", r->run_resident);
    snprintf(cells[12], sizeof cells[12], "%zu", r->train_resident);
    snprintf(cells[13], sizeof cells[13], "%.3g", r->max_abs);
    snprintf(cells[14], sizeof cells[14], "%.3g", r->rel_rms);
    snprintf(cells[15], sizeof cells[15], "%.3g", r->rest_rel_rms);
    for (int c = 0; c < N_COLS; c++) row[c] = cells[c];
    cli_table_row("", row, widths, N_COLS);
  }
}

/* "all" or a comma-separated list of canonical names; float32 always comes
 * first (the baseline) and a dtype named twice is run once. */
static int parse_dtypes(const char *text, loom_dtype *out, int *n) {
  out[0] = LOOM_DTYPE_FLOAT32;
  *n = 1;
  bool all = text == NULL || strcmp(text, "all") == 0;
  gchar **names = all ? NULL : g_strsplit(text, ",", -1);
  /* "all" walks the traits table in id order. */
  for (int i = 0; all ? loom_dtype_traits_get((loom_dtype)i) != NULL : names[i] != NULL; i++) {
    loom_dtype d = (loom_dtype)i;
    loom_error err = {0};
    if (!all && loom_dtype_from_name(names[i], &d, &err)) {
      g_strfreev(names);
      return cli_usage_error("bench", "--dtypes: %s", err.message);
    }
    bool seen = false;
    for (int k = 0; k < *n; k++) seen = seen || out[k] == d;
    if (!seen) out[(*n)++] = d;
  }
  g_strfreev(names);
  return 0;
}

static int parse_count(const char *option, const char *text, long max, long *out) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (end == text || *end || errno == ERANGE || v < 1 || v > max)
    return cli_usage_error("bench", _("%s needs an integer from 1 to %ld, not '%s'"), option, max, text);
  *out = v;
  return 0;
}

static int run_bench(bench_setup *b, int threads, const loom_dtype *dtypes, int n_dtypes, bool json) {
  loom_error err = {0};
  loom_net *net = (loom_net *)b->net; /* shape inference builds it; the rows run on clones */
  if (loom_net_execution(net) == LOOM_EXEC_SYSTOLIC) {
    /* A systolic network has no single forward pass to time (loom tick runs it). */
    cli_error("bench", _("%s: the network runs systolically; loom bench times feed-forward networks only"),
              b->model_path);
    return 1;
  }
  loom_diag *diags = NULL;
  int n_diags = loom_net_infer_shapes(net, 0, &diags);
  if (n_diags != 0) {
    char at[64];
    if (n_diags > 0)
      cli_error("bench", _("%s: the network cannot run: %s: %s"), b->model_path,
                loom_coord_format(diags[0].at, at, sizeof at), diags[0].message);
    else
      cli_error("bench", _("%s: shape inference failed"), b->model_path);
    free(diags);
    return 1;
  }
  free(diags);
  loom_shape in = loom_net_input_shape(net), out = loom_net_output_shape(net);
  int64_t n_in = loom_shape_numel(&in);
  b->width = loom_shape_numel(&out);
  if (n_in < 1 || b->width < 1 || n_in > INT64_MAX / (int64_t)sizeof(float) / b->batch / 2 ||
      b->width > INT64_MAX / (int64_t)sizeof(float) / b->batch / 4) {
    cli_error("bench", _("%s: a batch of %lld samples is too large for this model"), b->model_path,
              (long long)b->batch);
    return 1;
  }
  float *x = g_try_new(float, b->batch * n_in);
  float *bufs = g_try_new(float, 3 * b->batch * b->width); /* target, float32 output, output */
  bench_row *rows = g_new0(bench_row, n_dtypes);
  b->pool = loom_pool_new(threads, &err);
  int status = 0;
  if (!x || !bufs) {
    cli_error("bench", _("%s: out of memory for a batch of %lld samples"), b->model_path, (long long)b->batch);
    status = 1;
  } else if (!b->pool) {
    cli_error("bench", "%s", err.message);
    status = 1;
  } else {
    int64_t n = b->batch * b->width;
    fill_uniform(x, b->batch * n_in, BENCH_SEED);
    fill_uniform(bufs, n, BENCH_SEED + 1);
    b->x = x;
    b->target = bufs;
    /* Row 0 is float32: its first forward is the reference (see bench_dtype). */
    b->ref = bufs + n;
    /* The first row to run pays for starting the pool threads, faulting in
     * the buffers and warming the caches; an untimed float32 pass pays it
     * instead, so the baseline is not slowed down against the other rows. */
    status = bench_dtype(b, LOOM_DTYPE_FLOAT32, bufs + 2 * n, &rows[0]);
    for (int i = 0; status == 0 && i < n_dtypes; i++) status = bench_dtype(b, dtypes[i], bufs + 2 * n, &rows[i]);
  }
  if (status == 0) (json ? print_json : print_table)(b, threads, rows, n_dtypes);
  loom_pool_free(b->pool);
  g_free(rows);
  g_free(bufs);
  g_free(x);
  return status;
}

int cmd_bench(int argc, char **argv) {
  const char *model = NULL, *dtypes_text = NULL, *batch_text = NULL, *runs_text = NULL, *threads_text = NULL;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    int r;
    if ((r = cli_option_value("--dtypes", argc, argv, &i, &dtypes_text)) ||
        (r = cli_option_value("--batch", argc, argv, &i, &batch_text)) ||
        (r = cli_option_value("--runs", argc, argv, &i, &runs_text)) ||
        (r = cli_option_value("--threads", argc, argv, &i, &threads_text))) {
      if (r < 0) return cli_usage_error("bench", _("option '%s' needs a value"), argv[i]);
      continue;
    }
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("bench", _("unknown option '%s'"), argv[i]);
    if (model) return cli_usage_error("bench", _("unexpected argument '%s'"), argv[i]);
    model = argv[i];
  }
  if (!model) return cli_usage_error("bench", _("missing MODEL"));
  /* One thread by default: timings of a shared machine are steadiest there,
   * and the outputs do not depend on the thread count. */
  long batch = 32, runs = 5, threads = 1;
  int rc;
  if ((batch_text && (rc = parse_count("--batch", batch_text, BENCH_MAX_BATCH, &batch))) ||
      (runs_text && (rc = parse_count("--runs", runs_text, BENCH_MAX_RUNS, &runs))) ||
      (threads_text && (rc = parse_count("--threads", threads_text, BENCH_MAX_THREADS, &threads))))
    return rc;
  loom_dtype dtypes[LOOM_DTYPE_COUNT];
  int n_dtypes;
  if ((rc = parse_dtypes(dtypes_text, dtypes, &n_dtypes))) return rc;
  loom_net *net = cli_load_model("bench", model);
  if (!net) return 1;
  bench_setup b = {.model_path = model, .net = net, .batch = batch, .runs = (int)runs};
  int status = run_bench(&b, (int)threads, dtypes, n_dtypes, json);
  loom_net_free(net);
  return status;
}
