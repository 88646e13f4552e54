/*
 * loom ensemble MODEL… --data NAME|FILE.csv [--seed S] [--threads N] [--json]
 *
 * How well several classifiers complement each other on the held-out 20% of
 * a data set (the seeded split `loom train` and `loom eval` use): each
 * model's accuracy, and for every pair the coverage, the overlap of their
 * correct sets, the similarity of their success patterns and the best
 * complementary pair (definitions in loom/ensemble.h and docs/dna.md).
 */
#include <glib/gi18n.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-data.h"
#include "cli-json.h"
#include "cli-model.h"
#include "cli-table.h"
#include "commands.h"

#include <loom/ensemble.h>

int cmd_ensemble(int argc, char **argv);

#define ENSEMBLE_MAX_THREADS 1024

static int64_t numel_in(const loom_net *net) {
  loom_shape s = loom_net_input_shape(net);
  return loom_shape_numel(&s);
}

static int64_t numel_out(const loom_net *net) {
  loom_shape s = loom_net_output_shape(net);
  return loom_shape_numel(&s);
}

/* Infers every model and checks that all agree with the first in input and
 * output size, naming both files when one does not. */
static bool check_models(loom_net **nets, char **paths, int n, uint64_t seed) {
  for (int m = 0; m < n; m++) {
    loom_diag *diags = NULL;
    int nd = loom_net_infer_shapes(nets[m], seed, &diags);
    if (nd != 0) {
      char at[64];
      if (nd > 0)
        cli_error("ensemble", _("%s: the network cannot run: %s: %s"), paths[m],
                  loom_coord_format(diags[0].at, at, sizeof at), diags[0].message);
      else cli_error("ensemble", _("%s: shape inference failed"), paths[m]);
      free(diags);
      return false;
    }
    free(diags);
    if (m && (numel_in(nets[m]) != numel_in(nets[0]) || numel_out(nets[m]) != numel_out(nets[0]))) {
      cli_error("ensemble",
                _("%s takes %lld inputs and gives %lld outputs per sample, but %s takes %lld and gives %lld; the "
                  "models of an ensemble must agree in both"),
                paths[m], (long long)numel_in(nets[m]), (long long)numel_out(nets[m]), paths[0],
                (long long)numel_in(nets[0]), (long long)numel_out(nets[0]));
      return false;
    }
  }
  return true;
}

static void json_pair(GString *s, const loom_ensemble_pair *p) {
  g_string_append_printf(s, "{\"a\": %d, \"b\": %d, \"coverage\": ", p->a, p->b);
  cli_json_number(s, p->coverage);
  g_string_append(s, ", \"overlap\": ");
  cli_json_number(s, p->overlap);
  g_string_append(s, ", \"similarity\": ");
  cli_json_number(s, p->similarity);
  g_string_append(s, ", \"agreement\": ");
  cli_json_number(s, p->agreement);
  g_string_append_printf(s, ", \"both\": %lld, \"only_a\": %lld, \"only_b\": %lld, \"neither\": %lld}",
                         (long long)p->both, (long long)p->only_a, (long long)p->only_b, (long long)p->neither);
}

static void print_json(const loom_ensemble *e, char **paths) {
  int n = loom_ensemble_n_models(e);
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "{\"samples\": %lld,\n  \"models\": [", (long long)loom_ensemble_n_samples(e));
  for (int m = 0; m < n; m++) {
    g_string_append(s, m ? ",\n    {\"path\": " : "\n    {\"path\": ");
    cli_json_string(s, paths[m]);
    g_string_append_printf(s, ", \"correct\": %lld, \"accuracy\": ", (long long)loom_ensemble_correct_count(e, m));
    cli_json_number(s, loom_ensemble_accuracy(e, m));
    g_string_append(s, "}");
  }
  g_string_append(s, "\n  ],\n  \"pairs\": [");
  for (int a = 0, k = 0; a < n; a++)
    for (int b = a + 1; b < n; b++, k++) {
      loom_ensemble_pair p = loom_ensemble_pair_of(e, a, b);
      g_string_append(s, k ? ",\n    " : "\n    ");
      json_pair(s, &p);
    }
  g_string_append(s, "\n  ],\n  \"best_pair\": ");
  loom_ensemble_pair best = loom_ensemble_best_pair(e);
  json_pair(s, &best);
  g_string_append(s, "}\n");
  fputs(s->str, stdout);
  g_string_free(s, TRUE);
}

static void print_table(const loom_ensemble *e, char **paths, const char *data) {
  int n = loom_ensemble_n_models(e);
  printf(_("%lld test samples of %s\n\n"), (long long)loom_ensemble_n_samples(e), data);
  char cells[6][64];
  const char *row[6];
  for (int c = 0; c < 6; c++) row[c] = cells[c];
  /* TRANSLATORS: column headers of the model table of `loom ensemble` */
  const char *model_titles[4] = {"#", _("accuracy"), _("correct"), _("model")};
  int model_widths[4] = {-3, 10, -8, -1};
  cli_table_fit(model_widths, model_titles, 4);
  cli_table_row("  ", model_titles, model_widths, 4);
  for (int m = 0; m < n; m++) {
    snprintf(cells[0], sizeof cells[0], "%d", m);
    snprintf(cells[1], sizeof cells[1], "%.2f%%", 100 * loom_ensemble_accuracy(e, m));
    snprintf(cells[2], sizeof cells[2], "%lld", (long long)loom_ensemble_correct_count(e, m));
    const char *model_row[4] = {cells[0], cells[1], cells[2], paths[m]};
    cli_table_row("  ", model_row, model_widths, 4);
  }
  printf("\n");
  /* TRANSLATORS: column headers of the pair table of `loom ensemble` */
  const char *pair_titles[6] = {_("pair"),       _("coverage"),  _("overlap"),
                                _("similarity"), _("agreement"), _("both / only first / only second / neither")};
  int pair_widths[6] = {-7, 9, 8, 10, 9, -1};
  cli_table_fit(pair_widths, pair_titles, 6);
  cli_table_row("  ", pair_titles, pair_widths, 6);
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++) {
      loom_ensemble_pair p = loom_ensemble_pair_of(e, a, b);
      snprintf(cells[0], sizeof cells[0], "%d+%d", a, b);
      snprintf(cells[1], sizeof cells[1], "%.2f%%", 100 * p.coverage);
      snprintf(cells[2], sizeof cells[2], "%.4f", p.overlap);
      snprintf(cells[3], sizeof cells[3], "%.4f", p.similarity);
      snprintf(cells[4], sizeof cells[4], "%.4f", p.agreement);
      snprintf(cells[5], sizeof cells[5], "%lld / %lld / %lld / %lld", (long long)p.both, (long long)p.only_a,
               (long long)p.only_b, (long long)p.neither);
      cli_table_row("  ", row, pair_widths, 6);
    }
  loom_ensemble_pair best = loom_ensemble_best_pair(e);
  printf("\n");
  printf(_("Best complementary pair: %d + %d (%s and %s), coverage %.2f%%, similarity %.4f\n"), best.a, best.b,
         paths[best.a], paths[best.b], 100 * best.coverage, best.similarity);
}

int cmd_ensemble(int argc, char **argv) {
  const char *data = NULL, *seed_t = NULL, *threads_t = NULL;
  bool json = false;
  char **paths = g_new0(char *, (size_t)argc + 1);
  int n = 0, status = 1;
  for (int i = 1; i < argc; i++) {
    int r;
    if ((r = cli_option_value("--data", argc, argv, &i, &data)) ||
        (r = cli_option_value("--seed", argc, argv, &i, &seed_t)) ||
        (r = cli_option_value("--threads", argc, argv, &i, &threads_t))) {
      if (r < 0) {
        g_free(paths);
        return cli_usage_error("ensemble", _("option '%s' needs a value"), argv[i]);
      }
      continue;
    }
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0') {
      g_free(paths);
      return cli_usage_error("ensemble", _("unknown option '%s'"), argv[i]);
    }
    paths[n++] = argv[i];
  }
  uint64_t seed = 1, threads = 0;
  if (n < 2) status = cli_usage_error("ensemble", _("at least two models are needed: loom ensemble A B …"));
  else if (!data) status = cli_usage_error("ensemble", _("missing --data NAME|FILE.csv"));
  else if (seed_t && !cli_parse_uint64(seed_t, &seed))
    status = cli_usage_error("ensemble", _("--seed needs a non-negative integer, not '%s'"), seed_t);
  else if (threads_t && (!cli_parse_uint64(threads_t, &threads) || threads < 1 || threads > ENSEMBLE_MAX_THREADS))
    status = cli_usage_error("ensemble", _("--threads needs an integer from 1 to %d, not '%s'"), ENSEMBLE_MAX_THREADS,
                             threads_t);
  if (status == 2) {
    g_free(paths);
    return status;
  }
  loom_net **nets = g_new0(loom_net *, (size_t)n);
  loom_dataset *train = NULL, *test = NULL;
  loom_pool *pool = NULL;
  loom_ensemble *e = NULL;
  loom_error err = {0};
  for (int m = 0; m < n; m++)
    if (!(nets[m] = cli_load_model("ensemble", paths[m]))) goto done;
  if (!check_models(nets, paths, n, seed)) goto done;
  if (!cli_load_data("ensemble", data, nets[0], seed, false, &train, &test)) goto done;
  if (!(pool = loom_pool_new((int)threads, &err))) {
    cli_error("ensemble", "%s", err.message);
    goto done;
  }
  /* One model at a time, so an error names its file. */
  uint8_t **rows = g_new0(uint8_t *, (size_t)n);
  bool ok = true;
  for (int m = 0; m < n && ok; m++) {
    rows[m] = g_malloc((size_t)test->n);
    if (loom_ensemble_correct(nets[m], pool, test, rows[m], &err)) {
      cli_error("ensemble", _("%s with %s: %s"), paths[m], data, err.message);
      ok = false;
    }
  }
  if (ok && !(e = loom_ensemble_from_patterns(n, test->n, (const uint8_t *const *)rows, &err)))
    cli_error("ensemble", "%s", err.message);
  for (int m = 0; m < n; m++) g_free(rows[m]);
  g_free(rows);
  if (!e) goto done;
  if (json) print_json(e, paths);
  else print_table(e, paths, data);
  status = 0;
done:
  loom_ensemble_free(e);
  loom_pool_free(pool);
  loom_dataset_free(train);
  loom_dataset_free(test);
  for (int m = 0; m < n; m++) loom_net_free(nets[m]);
  g_free(nets);
  g_free(paths);
  return status;
}
