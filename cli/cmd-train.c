/*
 * loom train MODEL --data NAME|FILE.csv --epochs N --batch B --optimizer NAME
 *   --lr X [--schedule NAME[:key=value,...]] [--warmup N[:start=F]]
 *   [--momentum X] [--nesterov] [--weight-decay X] [--betas B1,B2]
 *   [--method backprop|tween] [--loss NAME] [--seed S] [--threads N]
 *   [--out FILE] [--json]
 *
 * One line per epoch (a JSON object per line with --json), the final test
 * accuracy last. 20% of the data (seeded) is held out for testing.
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

int cmd_train(int argc, char **argv) {
  const char *model = NULL, *data = NULL, *epochs_t = NULL, *batch_t = NULL, *optim_t = NULL, *lr_t = NULL,
             *sched_t = NULL, *method_t = NULL, *seed_t = NULL, *threads_t = NULL, *out = NULL, *loss_t = NULL,
             *warmup_t = NULL, *momentum_t = NULL, *decay_t = NULL, *betas_t = NULL;
  bool json = false, regression = false, nesterov = false;
  for (int i = 1; i < argc; i++) {
    int r;
    if ((r = cli_option_value("--data", argc, argv, &i, &data)) ||
        (r = cli_option_value("--epochs", argc, argv, &i, &epochs_t)) ||
        (r = cli_option_value("--batch", argc, argv, &i, &batch_t)) ||
        (r = cli_option_value("--optimizer", argc, argv, &i, &optim_t)) ||
        (r = cli_option_value("--lr", argc, argv, &i, &lr_t)) ||
        (r = cli_option_value("--schedule", argc, argv, &i, &sched_t)) ||
        (r = cli_option_value("--warmup", argc, argv, &i, &warmup_t)) ||
        (r = cli_option_value("--momentum", argc, argv, &i, &momentum_t)) ||
        (r = cli_option_value("--weight-decay", argc, argv, &i, &decay_t)) ||
        (r = cli_option_value("--betas", argc, argv, &i, &betas_t)) ||
        (r = cli_option_value("--method", argc, argv, &i, &method_t)) ||
        (r = cli_option_value("--loss", argc, argv, &i, &loss_t)) ||
        (r = cli_option_value("--seed", argc, argv, &i, &seed_t)) ||
        (r = cli_option_value("--threads", argc, argv, &i, &threads_t)) ||
        (r = cli_option_value("--out", argc, argv, &i, &out))) {
      if (r < 0) return cli_usage_error("train", _("option '%s' needs a value"), argv[i]);
      continue;
    }
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
      continue;
    }
    if (strcmp(argv[i], "--regression") == 0) {
      regression = true;
      continue;
    }
    if (strcmp(argv[i], "--nesterov") == 0) {
      nesterov = true;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("train", _("unknown option '%s'"), argv[i]);
    if (model) return cli_usage_error("train", _("unexpected argument '%s'"), argv[i]);
    model = argv[i];
  }
  if (!model) return cli_usage_error("train", _("missing MODEL"));
  if (!data) return cli_usage_error("train", _("missing --data NAME|FILE.csv"));
  loom_error err = {0};
  loom_train_config cfg = loom_train_config_default();
  int64_t v;
  double lr = 1e-3;
  uint64_t seed = 1;
  int threads = 0;
  if (epochs_t) {
    if (!parse_int(epochs_t, 1, 1000000, &v)) return cli_usage_error("train", _("--epochs needs an integer from 1 to 1000000, not '%s'"), epochs_t);
    cfg.epochs = v;
  }
  if (batch_t) {
    if (!parse_int(batch_t, 1, 1 << 24, &v)) return cli_usage_error("train", _("--batch needs an integer from 1 to 16777216, not '%s'"), batch_t);
    cfg.batch_size = v;
  }
  if (threads_t) {
    if (!parse_int(threads_t, 1, TRAIN_MAX_THREADS, &v)) return cli_usage_error("train", _("--threads needs an integer from 1 to %d, not '%s'"), TRAIN_MAX_THREADS, threads_t);
    threads = (int)v;
  }
  if (seed_t && !cli_parse_uint64(seed_t, &seed)) return cli_usage_error("train", _("--seed needs a non-negative integer, not '%s'"), seed_t);
  if (lr_t && (!parse_double(lr_t, &lr) || lr < 0)) return cli_usage_error("train", _("--lr needs a finite number >= 0, not '%s'"), lr_t);
  if (method_t && loom_train_method_from_name(method_t, &cfg.method, &err)) return cli_usage_error("train", "%s", err.message);
  if (optim_t) {
    loom_optim_kind k;
    if (loom_optim_from_name(optim_t, &k, &err)) return cli_usage_error("train", "%s", err.message);
    cfg.optim = loom_optim_defaults(k);
  }
  int rc;
  if ((rc = cli_optim_apply(momentum_t, nesterov, decay_t, betas_t, &cfg.optim))) return rc;
  cli_schedule_spec sched = cli_schedule_spec_default();
  if (sched_t && (rc = cli_schedule_parse(sched_t, &sched))) return rc;
  if (warmup_t && (rc = cli_warmup_parse(warmup_t, &sched))) return rc;
  /* Checked before anything is loaded; resolved once the batch count is known. */
  if ((rc = cli_schedule_resolve(&sched, lr, 1, &cfg.schedule))) return rc;
  cfg.seed = seed;
  loom_net *net = cli_load_model("train", model);
  if (!net) return 1;
  loom_diag *diags = NULL;
  int nd = loom_net_infer_shapes(net, seed, &diags);
  if (nd != 0) {
    char at[64];
    if (nd > 0) cli_error("train", _("%s: the network cannot run: %s: %s"), model, loom_coord_format(diags[0].at, at, sizeof at), diags[0].message);
    else cli_error("train", _("%s: shape inference failed"), model);
    free(diags);
    loom_net_free(net);
    return 1;
  }
  free(diags);
  loom_dataset *train = NULL, *test = NULL;
  int status = 1;
  loom_pool *pool = NULL;
  loom_trainer *tr = NULL;
  if (!cli_load_data("train", data, net, seed, regression, &train, &test)) goto done;
  if (loom_train_pick_loss(net, train, &cfg.loss, &err)) {
    if (!loss_t) {
      cli_error("train", _("%s with %s: %s"), model, data, err.message);
      goto done;
    }
    cfg.loss.heads = train->target_width;
  }
  if (loss_t && loom_loss_from_name(loss_t, &cfg.loss.kind, &err)) {
    status = cli_usage_error("train", "%s", err.message);
    goto done;
  }
  int64_t total = cfg.epochs * ((train->n + cfg.batch_size - 1) / cfg.batch_size);
  if ((rc = cli_schedule_resolve(&sched, lr, total, &cfg.schedule))) {
    status = rc;
    goto done;
  }
  if (!(pool = loom_pool_new(threads, &err)) ||
      !(tr = loom_trainer_new(net, train, test, &cfg, pool, &err))) {
    cli_error("train", "%s: %s", model, err.message);
    goto done;
  }
  if (train_loop(tr, json)) goto done;
  const loom_epoch_stats *e = loom_trainer_last_epoch(tr);
  char acc[32];
  print_accuracy(acc, sizeof acc, e->test.accuracy);
  if (json) printf("{\"final_test_accuracy\": %s}\n", acc);
  else {
    percent_accuracy(acc, sizeof acc, e->test.accuracy);
    printf(_("final test accuracy: %s\n"), acc);
  }
  if (out && loom_model_save(net, out, &err)) {
    cli_error("train", "%s", err.message);
    goto done;
  }
  status = 0;
done:
  loom_trainer_free(tr);
  loom_pool_free(pool);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_net_free(net);
  return status;
}
