/*
 * loom train MODEL [--config FILE] [--data NAME|FILE.csv] [--epochs N]
 *   [--batch B] [--optimizer NAME] [--lr X] [--schedule NAME[:key=value,...]]
 *   [--warmup N[:start=F]] [--momentum X] [--nesterov] [--weight-decay X]
 *   [--betas B1,B2] [--method backprop|tween] [--loss NAME] [--regression]
 *   [--seed S] [--threads N] [--ticks N] [--out FILE] [--save-config FILE] [--json]
 *   [--device cpu|vulkan[:N]]
 *
 * A thin front-end: the options become training settings (loom/settings.h)
 * — those of --config FILE, else those the model file carries when no --data
 * is given, else loom train's defaults — with every option given put over
 * them; the engine makes the data and the configuration from the settings.
 * One line per epoch (a JSON object per line with --json), the final test
 * accuracy last. 20% of the data (seeded) is held out for testing.
 * --device vulkan runs every step on a Vulkan device (docs/gpu.md "Training
 * on the device"); a network or configuration it cannot train is refused
 * with the slot or field named, never trained on the CPU instead.
 */
#include <errno.h>
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-data.h"
#include "cli-model.h"
#include "cli-train-options.h"
#include "commands.h"

#include <loom/settings.h>

int cmd_train(int argc, char **argv);

#define TRAIN_MAX_THREADS 1024

static bool parse_int(const char *text, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (end == text || *end || errno == ERANGE || v < lo || v > hi) return false;
  *out = v;
  return true;
}

static bool parse_double(const char *text, double *out) {
  char *end;
  errno = 0;
  double v = g_ascii_strtod(text, &end);
  if (end == text || *end || errno == ERANGE || !isfinite(v)) return false;
  *out = v;
  return true;
}

/* JSON: a number, or null when there is no accuracy (regression). */
static void print_accuracy(char *buf, size_t size, double acc) {
  if (isnan(acc)) snprintf(buf, size, "null");
  else cli_format_double(buf, size, acc);
}

/* Text: "97.50%", or "n/a" when there is no accuracy (regression). */
static void percent_accuracy(char *buf, size_t size, double acc) {
  if (isnan(acc)) snprintf(buf, size, "%s", _("n/a"));
  else snprintf(buf, size, "%.2f%%", 100 * acc);
}

static int train_loop(loom_trainer *tr, bool json) {
  loom_error err = {0};
  loom_epoch_stats e;
  while (!loom_trainer_finished(tr)) {
    if (loom_trainer_run_epoch(tr, &e, &err)) {
      cli_error("train", "%s", err.message);
      return 1;
    }
    char loss[32], tr_acc[32], te_acc[32], test_loss[32];
    cli_format_double(loss, sizeof loss, e.train.loss);
    cli_format_double(test_loss, sizeof test_loss, e.test.loss);
    print_accuracy(tr_acc, sizeof tr_acc, e.train.accuracy);
    print_accuracy(te_acc, sizeof te_acc, e.test.accuracy);
    if (json)
      printf("{\"epoch\": %lld, \"loss\": %s, \"test_loss\": %s, \"train_accuracy\": %s, \"test_accuracy\": %s, "
             "\"samples_per_second\": %.0f}\n",
             (long long)e.epoch + 1, loss, test_loss, tr_acc, te_acc, e.samples_per_second);
    else {
      char tr_pct[32], te_pct[32];
      percent_accuracy(tr_pct, sizeof tr_pct, e.train.accuracy);
      percent_accuracy(te_pct, sizeof te_pct, e.test.accuracy);
      printf(_("epoch %lld: loss %.4f, test loss %.4f, train accuracy %s, test accuracy %s, %.0f samples/s\n"),
             (long long)e.epoch + 1, e.train.loss, e.test.loss, tr_pct, te_pct, e.samples_per_second);
    }
    fflush(stdout);
  }
  return 0;
}

/* The options as given (NULL / false when absent). */
typedef struct {
  const char *model, *config, *save_config, *data, *epochs, *batch, *optim, *lr, *sched, *method, *seed, *threads,
    *out, *loss, *warmup, *momentum, *decay, *betas, *device, *ticks;
  bool json, regression, nesterov;
} train_args;

static int parse_args(int argc, char **argv, train_args *a) {
  for (int i = 1; i < argc; i++) {
    int r;
    if ((r = cli_option_value("--config", argc, argv, &i, &a->config)) ||
        (r = cli_option_value("--save-config", argc, argv, &i, &a->save_config)) ||
        (r = cli_option_value("--data", argc, argv, &i, &a->data)) ||
        (r = cli_option_value("--epochs", argc, argv, &i, &a->epochs)) ||
        (r = cli_option_value("--batch", argc, argv, &i, &a->batch)) ||
        (r = cli_option_value("--optimizer", argc, argv, &i, &a->optim)) ||
        (r = cli_option_value("--lr", argc, argv, &i, &a->lr)) ||
        (r = cli_option_value("--schedule", argc, argv, &i, &a->sched)) ||
        (r = cli_option_value("--warmup", argc, argv, &i, &a->warmup)) ||
        (r = cli_option_value("--momentum", argc, argv, &i, &a->momentum)) ||
        (r = cli_option_value("--weight-decay", argc, argv, &i, &a->decay)) ||
        (r = cli_option_value("--betas", argc, argv, &i, &a->betas)) ||
        (r = cli_option_value("--method", argc, argv, &i, &a->method)) ||
        (r = cli_option_value("--loss", argc, argv, &i, &a->loss)) ||
        (r = cli_option_value("--seed", argc, argv, &i, &a->seed)) ||
        (r = cli_option_value("--threads", argc, argv, &i, &a->threads)) ||
        (r = cli_option_value("--ticks", argc, argv, &i, &a->ticks)) ||
        (r = cli_option_value("--out", argc, argv, &i, &a->out)) ||
        (r = cli_option_value("--device", argc, argv, &i, &a->device))) {
      if (r < 0) return cli_usage_error("train", _("option '%s' needs a value"), argv[i]);
      continue;
    }
    if (strcmp(argv[i], "--json") == 0) a->json = true;
    else if (strcmp(argv[i], "--regression") == 0) a->regression = true;
    else if (strcmp(argv[i], "--nesterov") == 0) a->nesterov = true;
    else if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("train", _("unknown option '%s'"), argv[i]);
    else if (a->model) return cli_usage_error("train", _("unexpected argument '%s'"), argv[i]);
    else a->model = argv[i];
  }
  if (!a->model) return cli_usage_error("train", _("missing MODEL"));
  return 0;
}

/* The options that stand alone, checked before anything is loaded. */
typedef struct {
  int64_t epochs, batch, ticks;
  int threads;
  uint64_t seed;
  double lr;
  loom_train_method method;
  bool use_gpu;
  int device;
} train_values;

static int check_values(const train_args *a, train_values *v) {
  loom_error err = {0};
  int64_t n;
  if (a->epochs) {
    if (!parse_int(a->epochs, 1, 1000000, &n)) return cli_usage_error("train", _("--epochs needs an integer from 1 to 1000000, not '%s'"), a->epochs);
    v->epochs = n;
  }
  if (a->batch) {
    if (!parse_int(a->batch, 1, 1 << 24, &n)) return cli_usage_error("train", _("--batch needs an integer from 1 to 16777216, not '%s'"), a->batch);
    v->batch = n;
  }
  if (a->threads) {
    if (!parse_int(a->threads, 1, TRAIN_MAX_THREADS, &n)) return cli_usage_error("train", _("--threads needs an integer from 1 to %d, not '%s'"), TRAIN_MAX_THREADS, a->threads);
    v->threads = (int)n;
  }
  if (a->ticks) {
    if (!parse_int(a->ticks, 1, LOOM_TRAIN_MAX_TICKS, &n))
      return cli_usage_error("train", _("--ticks needs an integer from 1 to %d, not '%s'"), LOOM_TRAIN_MAX_TICKS, a->ticks);
    v->ticks = n;
  }
  if (a->seed && !cli_parse_uint64(a->seed, &v->seed)) return cli_usage_error("train", _("--seed needs a non-negative integer, not '%s'"), a->seed);
  if (a->lr && (!parse_double(a->lr, &v->lr) || v->lr < 0)) return cli_usage_error("train", _("--lr needs a finite number >= 0, not '%s'"), a->lr);
  if (a->method && loom_train_method_from_name(a->method, &v->method, &err)) return cli_usage_error("train", "%s", err.message);
  loom_optim_kind k;
  if (a->optim && loom_optim_from_name(a->optim, &k, &err)) return cli_usage_error("train", "%s", err.message);
  loom_loss_kind lk;
  if (a->loss && loom_loss_from_name(a->loss, &lk, &err)) return cli_usage_error("train", "%s", err.message);
  v->device = -1;
  if (a->device && loom_gpu_parse_device(a->device, &v->use_gpu, &v->device, &err))
    return cli_usage_error("train", "%s", err.message);
  return 0;
}

/* The settings the run starts from: --config, else the model's own unless
 * --data is given, else loom train's defaults. */
static int base_settings(const train_args *a, loom_model_extras *extras, loom_train_settings **out) {
  loom_error err = {0};
  if (a->config) {
    if (loom_train_settings_load(a->config, out, &err)) {
      cli_error("train", "%s", err.message);
      return 1;
    }
    return 0;
  }
  if (!a->data && extras->settings) {
    *out = extras->settings;
    extras->settings = NULL;
    return 0;
  }
  if (!a->data) return cli_usage_error("train", _("missing --data NAME|FILE.csv (or --config FILE)"));
  if (!(*out = loom_train_settings_new())) {
    cli_error("train", "%s", g_strerror(ENOMEM));
    return 1;
  }
  return 0;
}

/* The options given, put over the settings (each replaces one field). */
static int apply_options(const train_args *a, const train_values *v, loom_train_settings *s) {
  loom_error err = {0};
  int rc;
  if (a->data && cli_data_source(s, a->data, a->regression, &err)) {
    cli_error("train", "%s", err.message);
    return 1;
  }
  if (a->regression && !a->data && strcmp(s->data.source, "csv") == 0) s->data.csv.target = LOOM_TARGET_VECTOR;
  if (a->epochs) s->epochs = v->epochs;
  if (a->batch) s->batch = v->batch;
  if (a->threads) s->threads = v->threads;
  if (a->ticks) s->ticks = v->ticks;
  if (a->seed) s->seed = s->data.seed = v->seed; /* one seed for data, split and training, as always */
  if (a->lr) s->lr = v->lr;
  if (a->method) s->method = v->method;
  if (a->loss) snprintf(s->loss, sizeof s->loss, "%s", a->loss);
  if (a->optim) {
    /* a new optimizer starts from its own defaults */
    snprintf(s->optimizer, sizeof s->optimizer, "%s", a->optim);
    s->weight_decay = s->momentum = s->dampening = s->beta1 = s->beta2 = s->eps = s->alpha = NAN;
    s->nesterov = s->amsgrad = s->centered = s->maximize = false;
  }
  if ((rc = cli_optim_apply(a->momentum, a->nesterov, a->decay, a->betas, s))) return rc;
  if (a->sched && (rc = cli_schedule_parse(a->sched, &s->schedule))) return rc;
  if (a->warmup && (rc = cli_warmup_parse(a->warmup, &s->schedule))) return rc;
  if (loom_train_settings_validate(s, &err)) return cli_usage_error("train", "%s", err.message);
  return 0;
}

/* The network must run: shape inference with the run's seed (it only
 * initialises layers the file holds no weights for). */
static int check_runs(const char *path, loom_net *net, uint64_t seed) {
  loom_diag *diags = NULL;
  int nd = loom_net_infer_shapes(net, seed, &diags);
  if (nd != 0) {
    char at[64];
    if (nd > 0) cli_error("train", _("%s: the network cannot run: %s: %s"), path, loom_coord_format(diags[0].at, at, sizeof at), diags[0].message);
    else cli_error("train", _("%s: shape inference failed"), path);
  }
  free(diags);
  return nd != 0;
}

static int run(const train_args *a, const train_values *v, loom_net *net, loom_train_settings *s) {
  loom_error err = {0};
  loom_gpu *gpu = NULL;
  loom_dataset *train = NULL, *test = NULL;
  loom_pool *pool = NULL;
  loom_trainer *tr = NULL;
  loom_train_config cfg;
  int status = 1;
  const char *data = strcmp(s->data.source, "csv") == 0 ? s->data.csv_path : s->data.source;
  if (!cli_make_data("train", s, net, &train, &test)) goto done;
  if (loom_train_settings_make_config(s, net, train, &cfg, &err)) {
    cli_error("train", _("%s with %s: %s"), a->model, data, err.message);
    goto done;
  }
  if (a->save_config && loom_train_settings_save(s, a->save_config, &err)) {
    cli_error("train", "%s", err.message);
    goto done;
  }
  if (!(pool = loom_pool_new(s->threads, &err)) || !(tr = loom_trainer_new(net, train, test, &cfg, pool, &err))) {
    cli_error("train", "%s: %s", a->model, err.message);
    goto done;
  }
  if (v->use_gpu) {
    if (!(gpu = loom_gpu_new(v->device, &err))) {
      cli_error("train", "%s", err.message);
      goto done;
    }
    if (loom_trainer_set_device(tr, gpu, &err)) {
      cli_error("train", "%s: %s", a->model, err.message);
      goto done;
    }
  }
  if (train_loop(tr, a->json)) goto done;
  const loom_epoch_stats *e = loom_trainer_last_epoch(tr);
  char acc[32];
  print_accuracy(acc, sizeof acc, e->test.accuracy);
  if (a->json) printf("{\"final_test_accuracy\": %s}\n", acc);
  else {
    percent_accuracy(acc, sizeof acc, e->test.accuracy);
    printf(_("final test accuracy: %s\n"), acc);
  }
  /* the trained model keeps the settings it was trained with: `loom train OUT` trains it the same way again */
  loom_model_extras keep = {.settings = s, .train_steps = loom_trainer_steps(tr)};
  if (a->out && loom_model_save_ex(net, &keep, a->out, &err)) {
    cli_error("train", "%s", err.message);
    goto done;
  }
  status = 0;
done:
  loom_trainer_free(tr);
  loom_gpu_free(gpu);
  loom_pool_free(pool);
  loom_dataset_free(train);
  loom_dataset_free(test);
  return status;
}

int cmd_train(int argc, char **argv) {
  train_args a = {0};
  train_values v = {0};
  int rc;
  if ((rc = parse_args(argc, argv, &a)) || (rc = check_values(&a, &v))) return rc;
  loom_model_extras extras = {0};
  loom_train_settings *s = NULL;
  loom_net *net = NULL;
  loom_error err = {0};
  if (loom_model_load_ex(a.model, LOOM_MODEL_STRICT, &net, &extras, &err)) {
    cli_error("train", "%s", err.message);
    return 1;
  }
  if (!(rc = base_settings(&a, &extras, &s)) && !(rc = apply_options(&a, &v, s)) &&
      !(rc = check_runs(a.model, net, s->seed)))
    rc = run(&a, &v, net, s);
  loom_net_free(net);
  loom_model_extras_clear(&extras);
  loom_train_settings_free(s);
  return rc;
}
