/*
 * loom eval MODEL --data NAME|FILE.csv [--loss NAME] [--regression] [--seed S] [--threads N] [--ticks N] [--json]
 *
 * Evaluates on the held-out 20% (the same seeded split `loom train` uses). A
 * systolic model runs --ticks ticks per batch; without it, the ticks of the
 * training settings the model carries (what `loom train` trained it with),
 * else one per slot.
 */
#include <errno.h>
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loom/model.h>
#include <loom/settings.h>

#include "cli-data.h"
#include "cli-model.h"
#include "commands.h"

int cmd_eval(int argc, char **argv);

int cmd_eval(int argc, char **argv) {
  const char *model = NULL, *data = NULL, *seed_t = NULL, *threads_t = NULL, *loss_t = NULL, *ticks_t = NULL;
  bool json = false, regression = false;
  for (int i = 1; i < argc; i++) {
    int r;
    if ((r = cli_option_value("--data", argc, argv, &i, &data)) ||
        (r = cli_option_value("--loss", argc, argv, &i, &loss_t)) ||
        (r = cli_option_value("--seed", argc, argv, &i, &seed_t)) ||
        (r = cli_option_value("--threads", argc, argv, &i, &threads_t)) ||
        (r = cli_option_value("--ticks", argc, argv, &i, &ticks_t))) {
      if (r < 0) return cli_usage_error("eval", _("option '%s' needs a value"), argv[i]);
      continue;
    }
    if (strcmp(argv[i], "--json") == 0) { json = true; continue; }
    if (strcmp(argv[i], "--regression") == 0) { regression = true; continue; }
    if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("eval", _("unknown option '%s'"), argv[i]);
    if (model) return cli_usage_error("eval", _("unexpected argument '%s'"), argv[i]);
    model = argv[i];
  }
  if (!model) return cli_usage_error("eval", _("missing MODEL"));
  if (!data) return cli_usage_error("eval", _("missing --data NAME|FILE.csv"));
  uint64_t seed = 1, threads = 0;
  if (seed_t && !cli_parse_uint64(seed_t, &seed)) return cli_usage_error("eval", _("--seed needs a non-negative integer, not '%s'"), seed_t);
  if (threads_t && (!cli_parse_uint64(threads_t, &threads) || threads < 1 || threads > 1024))
    return cli_usage_error("eval", _("--threads needs an integer from 1 to %d, not '%s'"), 1024, threads_t);
  uint64_t ticks = 0;
  if (ticks_t && (!cli_parse_uint64(ticks_t, &ticks) || ticks < 1 || ticks > LOOM_TRAIN_MAX_TICKS))
    return cli_usage_error("eval", _("--ticks needs an integer from 1 to %d, not '%s'"), LOOM_TRAIN_MAX_TICKS, ticks_t);
  loom_net *net = NULL;
  loom_model_extras extras = {0};
  loom_error err = {0};
  if (loom_model_load_ex(model, LOOM_MODEL_STRICT, &net, &extras, &err)) {
    cli_error("eval", "%s", err.message);
    return 1;
  }
  if (!ticks_t && extras.settings) ticks = (uint64_t)extras.settings->ticks; /* as it was trained */
  loom_model_extras_clear(&extras);
  loom_dataset *train = NULL, *test = NULL;
  loom_pool *pool = NULL;
  loom_loss_spec spec = {0};
  loom_eval_result r;
  int status = 1;
  loom_diag *diags = NULL;
  int nd = loom_net_infer_shapes(net, seed, &diags);
  if (nd != 0) {
    cli_error("eval", _("%s: the network cannot run: %s"), model, nd > 0 ? diags[0].message : _("shape inference failed"));
    free(diags);
    goto done;
  }
  free(diags);
  if (!cli_load_data("eval", data, net, seed, regression, &train, &test)) goto done;
  if (loom_train_pick_loss(net, test, &spec, &err)) {
    if (!loss_t) {
      cli_error("eval", _("%s with %s: %s"), model, data, err.message);
      goto done;
    }
    spec.heads = test->target_width;
  }
  if (loss_t && loom_loss_from_name(loss_t, &spec.kind, &err)) {
    status = cli_usage_error("eval", "%s", err.message);
    goto done;
  }
  if (!(pool = loom_pool_new((int)threads, &err)) || loom_evaluate_ticks(net, pool, test, &spec, 256, (int64_t)ticks, &r, &err)) {
    cli_error("eval", "%s: %s", model, err.message);
    goto done;
  }
  char loss[32], acc[32];
  cli_format_double(loss, sizeof loss, r.loss);
  if (isnan(r.accuracy)) snprintf(acc, sizeof acc, "null");
  else cli_format_double(acc, sizeof acc, r.accuracy);
  if (json)
    printf("{\"samples\": %lld, \"loss\": %s, \"accuracy\": %s}\n", (long long)r.samples, loss, acc);
  else {
    char pct[32];
    if (isnan(r.accuracy)) snprintf(pct, sizeof pct, "%s", _("n/a")); /* regression: no accuracy */
    else snprintf(pct, sizeof pct, "%.2f%%", 100 * r.accuracy);
    printf(_("%lld test samples: loss %.4f, accuracy %s\n"), (long long)r.samples, r.loss, pct);
  }
  status = 0;
done:
  loom_pool_free(pool);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_net_free(net);
  return status;
}
