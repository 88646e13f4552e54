/*
 * loom evolve MODEL --data NAME|FILE.csv [--generations G] [--population P]
 *   [--seed S] [--steps N] [--batch B] [--lr X] [--threads N] [--out DIR] [--json]
 *
 * A seeded (1+λ) search from MODEL (loom/evolve.h, docs/dna.md): each
 * generation's children are mutated (sometimes spliced first), trained N
 * steps and scored on the held-out 20%; the fittest so far is the parent of
 * the next generation. One line per generation with the DNA of the
 * generation's parent against the one before (overall similarity and logic
 * shifts); --out DIR writes it as DIR/gen-NNN.loom.json.
 */
#include <errno.h>
#include <glib.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-data.h"
#include "cli-json.h"
#include "cli-model.h"
#include "commands.h"

#include <loom/evolve.h>
#include <loom/settings.h>

int cmd_evolve(int argc, char **argv);

typedef struct evolve_args {
  const char *model, *data, *generations, *population, *seed, *steps, *batch, *lr, *threads, *out;
  bool json;
} evolve_args;

static int parse_args(int argc, char **argv, evolve_args *a) {
  for (int i = 1; i < argc; i++) {
    const char **slots[] = {&a->data, &a->generations, &a->population, &a->seed, &a->steps,
                            &a->batch, &a->lr, &a->threads, &a->out};
    const char *names[] = {"--data", "--generations", "--population", "--seed", "--steps",
                           "--batch", "--lr", "--threads", "--out"};
    int r = 0;
    for (size_t k = 0; k < G_N_ELEMENTS(names) && !r; k++) r = cli_option_value(names[k], argc, argv, &i, slots[k]);
    if (r < 0) return cli_usage_error("evolve", _("option '%s' needs a value"), argv[i]);
    if (r > 0) continue;
    if (strcmp(argv[i], "--json") == 0) a->json = true;
    else if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("evolve", _("unknown option '%s'"), argv[i]);
    else if (a->model) return cli_usage_error("evolve", _("unexpected argument '%s'"), argv[i]);
    else a->model = argv[i];
  }
  if (!a->model) return cli_usage_error("evolve", _("missing MODEL"));
  if (!a->data) return cli_usage_error("evolve", _("missing --data NAME|FILE.csv"));
  return 0;
}

/* An integer option within [lo, hi]; a usage error names it otherwise. */
static int int_option(const char *name, const char *text, uint64_t lo, uint64_t hi, uint64_t *out) {
  if (!text) return 0;
  if (!cli_parse_uint64(text, out) || *out < lo || *out > hi)
    return cli_usage_error("evolve", _("%s needs an integer from %llu to %llu, not '%s'"), name,
                           (unsigned long long)lo, (unsigned long long)hi, text);
  return 0;
}

static void describe_mutation(GString *s, const loom_mutation *m, bool json) {
  char at[64], from[64];
  loom_coord_format(m->at, at, sizeof at);
  loom_coord_format(m->from, from, sizeof from);
  const char *name = loom_mutation_name(m->kind);
  if (json) {
    g_string_append_printf(s, "{\"kind\": \"%s\"", name);
    if (m->kind == LOOM_MUTATE_SPLICE) {
      g_string_append_printf(s, ", \"taken\": %lld}", (long long)m->taken);
      return;
    }
    g_string_append_printf(s, ", \"at\": [%d, %d, %d, %d]", m->at.z, m->at.y, m->at.x, m->at.l);
    if (m->kind == LOOM_MUTATE_ADD_LINK)
      g_string_append_printf(s, ", \"from\": [%d, %d, %d, %d]", m->from.z, m->from.y, m->from.x, m->from.l);
    if (m->type) g_string_append_printf(s, ", \"type\": \"%s\"", loom_layer_type_name(m->type));
    if (m->kind == LOOM_MUTATE_DTYPE)
      g_string_append_printf(s, ", \"from_dtype\": \"%s\", \"dtype\": \"%s\"", loom_dtype_name(m->old_dtype),
                             loom_dtype_name(m->dtype));
    g_string_append(s, "}");
    return;
  }
  switch (m->kind) {
  case LOOM_MUTATE_SPLICE: g_string_append_printf(s, _("splice (%lld layers from the mate)"), (long long)m->taken); break;
  case LOOM_MUTATE_ADD_LINK: g_string_append_printf(s, _("add-link %s → %s"), from, at); break;
  case LOOM_MUTATE_DTYPE:
    g_string_append_printf(s, _("dtype %s %s → %s"), at, loom_dtype_name(m->old_dtype), loom_dtype_name(m->dtype));
    break;
  default: g_string_append_printf(s, "%s %s %s", name, loom_layer_type_name(m->type), at); break;
  }
}

static void print_generation(const loom_evolve_report *r, const loom_dna_result *dna, const char *file, bool json) {
  GString *s = g_string_new(NULL);
  char at[64], to[64];
  if (json) {
    g_string_append_printf(s, "{\"generation\": %lld, \"children\": %lld, \"valid\": %lld, \"improved\": %s, ",
                           (long long)r->generation, (long long)r->children, (long long)r->valid,
                           r->improved ? "true" : "false");
    const loom_eval_result *f = r->improved ? &r->best : &r->parent;
    g_string_append(s, "\"accuracy\": ");
    cli_json_number(s, f->accuracy);
    g_string_append(s, ", \"loss\": ");
    cli_json_number(s, f->loss);
    if (r->best_child < 0) {
      g_string_append(s, ", \"best_child\": null");
    } else {
      g_string_append_printf(s, ", \"best_child\": {\"index\": %lld, \"accuracy\": ", (long long)r->best_child);
      cli_json_number(s, r->best.accuracy);
      g_string_append(s, ", \"loss\": ");
      cli_json_number(s, r->best.loss);
      g_string_append(s, ", \"mutations\": [");
      for (int k = 0; k < r->n_mutations; k++) {
        if (k) g_string_append(s, ", ");
        describe_mutation(s, &r->mutations[k], true);
      }
      g_string_append(s, "]}");
    }
    g_string_append(s, ", \"similarity\": ");
    cli_json_number(s, loom_dna_result_similarity(dna));
    g_string_append(s, ", \"shifts\": [");
    for (int64_t k = 0; k < loom_dna_result_n_shifts(dna); k++) {
      loom_dna_shift t = loom_dna_result_shift(dna, k);
      g_string_append_printf(s, "%s{\"from\": [%d, %d, %d, %d], \"to\": [%d, %d, %d, %d], \"score\": ", k ? ", " : "",
                             t.from.z, t.from.y, t.from.x, t.from.l, t.to.z, t.to.y, t.to.x, t.to.l);
      cli_json_number(s, t.score);
      g_string_append(s, "}");
    }
    g_string_append(s, "], \"file\": ");
    if (file) cli_json_string(s, file);
    else g_string_append(s, "null");
    g_string_append(s, "}\n");
  } else {
    /* "97.50%", or "n/a" without an accuracy (regression) */
    char acc[32];
    double a = r->improved ? r->best.accuracy : r->parent.accuracy;
    if (isnan(a)) snprintf(acc, sizeof acc, "%s", _("n/a"));
    else snprintf(acc, sizeof acc, "%.2f%%", 100 * a);
    if (r->improved) {
      GString *how = g_string_new(NULL);
      for (int k = 0; k < r->n_mutations; k++) {
        if (k) g_string_append(how, ", ");
        describe_mutation(how, &r->mutations[k], false);
      }
      g_string_append_printf(s, _("generation %lld: child %lld (%s) is the new parent: test accuracy %s, loss %.4f\n"),
                             (long long)r->generation, (long long)r->best_child, how->len ? how->str : _("unchanged"),
                             acc, r->best.loss);
      g_string_free(how, TRUE);
    } else {
      g_string_append_printf(s, _("generation %lld: no child beat the parent (accuracy %s, loss %.4f); %lld of "
                                  "%lld children valid\n"),
                             (long long)r->generation, acc, r->parent.loss, (long long)r->valid,
                             (long long)r->children);
    }
    g_string_append_printf(s, _("  DNA against the parent: similarity %.4f, %lld logic shifts\n"),
                           loom_dna_result_similarity(dna), (long long)loom_dna_result_n_shifts(dna));
    for (int64_t k = 0; k < loom_dna_result_n_shifts(dna); k++) {
      loom_dna_shift t = loom_dna_result_shift(dna, k);
      g_string_append_printf(s, _("    %s → %s  score %.4f\n"), loom_coord_format(t.from, at, sizeof at),
                             loom_coord_format(t.to, to, sizeof to), t.score);
    }
    if (file) g_string_append_printf(s, _("  wrote %s\n"), file);
  }
  fputs(s->str, stdout);
  fflush(stdout);
  g_string_free(s, TRUE);
}

static int run(const evolve_args *a, loom_net *net, loom_evolve_config *cfg, double lr, int threads) {
  loom_error err = {0};
  loom_train_settings *s = loom_train_settings_new();
  loom_dataset *train = NULL, *test = NULL;
  loom_pool *pool = NULL;
  loom_evolution *ev = NULL;
  int status = 1;
  if (!s) {
    cli_error("evolve", "%s", g_strerror(ENOMEM));
    return 1;
  }
  s->seed = s->data.seed = cfg->seed;
  if (a->lr) s->lr = lr;
  if (a->batch) s->batch = cfg->train.batch_size;
  if (cli_data_source(s, a->data, false, &err)) {
    cli_error("evolve", "%s", err.message);
    goto done;
  }
  if (!cli_make_data("evolve", s, net, &train, &test)) goto done;
  loom_train_config tc;
  if (loom_train_settings_make_config(s, net, train, &tc, &err)) {
    cli_error("evolve", _("%s with %s: %s"), a->model, a->data, err.message);
    goto done;
  }
  cfg->train = tc;
  if (!(pool = loom_pool_new(threads, &err)) || !(ev = loom_evolution_new(net, train, test, cfg, pool, &err))) {
    cli_error("evolve", "%s: %s", a->model, err.message);
    goto done;
  }
  if (a->out && g_mkdir_with_parents(a->out, 0777) != 0) {
    cli_error("evolve", _("%s: cannot create the directory: %s"), a->out, g_strerror(errno));
    goto done;
  }
  for (int64_t g = 0; g < cfg->generations; g++) {
    loom_evolve_report r;
    if (loom_evolution_step(ev, &r, &err)) {
      cli_error("evolve", _("generation %lld: %s"), (long long)g + 1, err.message);
      goto done;
    }
    loom_dna_result *dna =
      loom_dna_compare_nets(loom_evolution_best(ev), loom_evolution_previous(ev), LOOM_DNA_DEFAULT_THRESHOLD, &err);
    if (!dna) {
      cli_error("evolve", _("generation %lld: %s"), (long long)g + 1, err.message);
      goto done;
    }
    char *file = NULL;
    if (a->out) {
      char name[64];
      snprintf(name, sizeof name, "gen-%03lld.loom.json", (long long)r.generation);
      file = g_build_filename(a->out, name, NULL);
      if (loom_model_save(loom_evolution_best(ev), file, &err)) {
        cli_error("evolve", "%s", err.message);
        g_free(file);
        loom_dna_result_free(dna);
        goto done;
      }
    }
    print_generation(&r, dna, file, a->json);
    g_free(file);
    loom_dna_result_free(dna);
  }
  status = 0;
done:
  loom_evolution_free(ev);
  loom_pool_free(pool);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_train_settings_free(s);
  return status;
}

int cmd_evolve(int argc, char **argv) {
  evolve_args a = {0};
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc;
  loom_evolve_config cfg = loom_evolve_config_default();
  uint64_t v, threads = 0;
  if ((rc = int_option("--generations", a.generations, 1, 100000, &v))) return rc;
  if (a.generations) cfg.generations = (int64_t)v;
  if ((rc = int_option("--population", a.population, 1, 10000, &v))) return rc;
  if (a.population) cfg.population = (int64_t)v;
  if ((rc = int_option("--steps", a.steps, 0, 1000000, &v))) return rc;
  if (a.steps) cfg.train_steps = (int64_t)v;
  if ((rc = int_option("--batch", a.batch, 1, 1000000, &v))) return rc;
  if (a.batch) cfg.train.batch_size = (int64_t)v;
  if ((rc = int_option("--threads", a.threads, 1, 1024, &threads))) return rc;
  if (a.seed && !cli_parse_uint64(a.seed, &cfg.seed))
    return cli_usage_error("evolve", _("--seed needs a non-negative integer, not '%s'"), a.seed);
  double lr = 0;
  if (a.lr) {
    char *end = NULL;
    lr = g_ascii_strtod(a.lr, &end);
    if (end == a.lr || *end || !(lr > 0 && isfinite(lr)))
      return cli_usage_error("evolve", _("--lr needs a positive number, not '%s'"), a.lr);
  }
  loom_net *net = cli_load_model("evolve", a.model);
  if (!net) return 1;
  loom_diag *diags = NULL;
  int nd = loom_net_infer_shapes(net, cfg.seed, &diags);
  if (nd != 0) {
    char at[64];
    if (nd > 0)
      cli_error("evolve", _("%s: the network cannot run: %s: %s"), a.model, loom_coord_format(diags[0].at, at, sizeof at),
                diags[0].message);
    else cli_error("evolve", _("%s: shape inference failed"), a.model);
    free(diags);
    loom_net_free(net);
    return 1;
  }
  free(diags);
  rc = run(&a, net, &cfg, lr, (int)threads);
  loom_net_free(net);
  return rc;
}
