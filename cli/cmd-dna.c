/*
 * loom dna A B [--threshold T] [--json]: compares the DNA of two model files
 * (docs/dna.md): overall similarity, the score at every shared coordinate,
 * each layer's best match, logic shifts and the similarity matrix.
 */
#include <glib/gi18n.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-model.h"
#include "commands.h"

int cmd_dna(int argc, char **argv);

/* The full matrix is printed as a table only up to this many columns; --json
 * always has all of it. */
#define DNA_TABLE_MAX_COLUMNS 12

static void json_number(GString *s, double v) {
  char buf[40];
  cli_format_double(buf, sizeof buf, v);
  g_string_append(s, buf);
}

static void json_coord(GString *s, loom_coord c) { g_string_append_printf(s, "[%d, %d, %d, %d]", c.z, c.y, c.x, c.l); }

static void json_slots(GString *s, const loom_dna_result *r, bool of_a) {
  int64_t n = of_a ? loom_dna_result_n_a(r) : loom_dna_result_n_b(r);
  g_string_append(s, "[");
  for (int64_t i = 0; i < n; i++) {
    loom_dna_slot d = of_a ? loom_dna_result_slot_a(r, i) : loom_dna_result_slot_b(r, i);
    g_string_append(s, i ? ",\n    {\"at\": " : "\n    {\"at\": ");
    json_coord(s, d.at);
    g_string_append_printf(s, ", \"type\": \"%s\", \"dtype\": \"%s\", \"values\": %lld}", loom_layer_type_name(d.type),
                           loom_dtype_name(d.dtype), (long long)d.values);
  }
  g_string_append(s, n ? "\n  ]" : "]");
}

static void print_json(const loom_dna_result *r) {
  GString *s = g_string_new("{\"similarity\": ");
  json_number(s, loom_dna_result_similarity(r));
  g_string_append(s, ", \"threshold\": ");
  json_number(s, loom_dna_result_threshold(r));
  g_string_append(s, ",\n  \"a\": ");
  json_slots(s, r, true);
  g_string_append(s, ",\n  \"b\": ");
  json_slots(s, r, false);
  g_string_append(s, ",\n  \"matrix\": [");
  int64_t na = loom_dna_result_n_a(r), nb = loom_dna_result_n_b(r);
  for (int64_t i = 0; i < na; i++) {
    g_string_append(s, i ? ",\n    [" : "\n    [");
    for (int64_t j = 0; j < nb; j++) {
      if (j) g_string_append(s, ", ");
      json_number(s, loom_dna_result_at(r, i, j));
    }
    g_string_append(s, "]");
  }
  g_string_append(s, na ? "\n  ],\n  \"shared\": [" : "],\n  \"shared\": [");
  for (int64_t k = 0; k < loom_dna_result_n_shared(r); k++) {
    loom_dna_pair p = loom_dna_result_shared(r, k);
    g_string_append(s, k ? ", {\"at\": " : "{\"at\": ");
    json_coord(s, p.at);
    g_string_append(s, ", \"score\": ");
    json_number(s, p.score);
    g_string_append(s, "}");
  }
  g_string_append(s, "],\n  \"shifts\": [");
  for (int64_t k = 0; k < loom_dna_result_n_shifts(r); k++) {
    loom_dna_shift t = loom_dna_result_shift(r, k);
    g_string_append(s, k ? ", {\"from\": " : "{\"from\": ");
    json_coord(s, t.from);
    g_string_append(s, ", \"to\": ");
    json_coord(s, t.to);
    g_string_append(s, ", \"score\": ");
    json_number(s, t.score);
    g_string_append(s, ", \"own\": ");
    json_number(s, t.own);
    g_string_append(s, "}");
  }
  g_string_append(s, "]}\n");
  fputs(s->str, stdout);
  g_string_free(s, TRUE);
}

/* The best match of A's slot i in B (-1 when B is empty); on a tie the
 * slot at the same coordinate (`own`, or -1) wins, so equal layers such as
 * two activations do not seem to point elsewhere. */
static int64_t best_in_b(const loom_dna_result *r, int64_t i, int64_t own) {
  int64_t best = own;
  for (int64_t j = 0; j < loom_dna_result_n_b(r); j++)
    if (best < 0 || loom_dna_result_at(r, i, j) > loom_dna_result_at(r, i, best)) best = j;
  return best;
}

static void print_matrix(const loom_dna_result *r) {
  int64_t na = loom_dna_result_n_a(r), nb = loom_dna_result_n_b(r);
  char at[64];
  if (nb > DNA_TABLE_MAX_COLUMNS) {
    printf(_("Similarity matrix: %lld × %lld, too wide for a table; see --json\n"), (long long)na, (long long)nb);
    return;
  }
  printf("%s\n", _("Similarity matrix (rows: layers of A, columns: layers of B):"));
  printf("  %-11s", "");
  for (int64_t j = 0; j < nb; j++) printf(" %9s", loom_coord_format(loom_dna_result_slot_b(r, j).at, at, sizeof at));
  printf("\n");
  for (int64_t i = 0; i < na; i++) {
    printf("  %-11s", loom_coord_format(loom_dna_result_slot_a(r, i).at, at, sizeof at));
    for (int64_t j = 0; j < nb; j++) printf(" %9.4f", loom_dna_result_at(r, i, j));
    printf("\n");
  }
}

static void print_table(const loom_dna_result *r, const char *path_a, const char *path_b) {
  int64_t na = loom_dna_result_n_a(r), nb = loom_dna_result_n_b(r);
  printf(_("A: %s (%lld layers)\n"), path_a, (long long)na);
  printf(_("B: %s (%lld layers)\n"), path_b, (long long)nb);
  printf(_("Overall similarity: %.4f\n"), loom_dna_result_similarity(r));
  printf("\n");
  /* TRANSLATORS: column headers of the per-layer table of `loom dna` */
  printf("  %-11s %-12s %-10s %-10s %-11s %s\n", _("layer"), _("type"), _("dtype"), _("same place"), _("best in B"),
         _("score"));
  int64_t k = 0;
  char at[64], best_at[64], same[32];
  for (int64_t i = 0; i < na; i++) {
    loom_dna_slot d = loom_dna_result_slot_a(r, i);
    while (k < loom_dna_result_n_shared(r) && loom_dna_result_shared(r, k).a < i) k++;
    int64_t own = -1;
    if (k < loom_dna_result_n_shared(r) && loom_dna_result_shared(r, k).a == i) {
      own = loom_dna_result_shared(r, k).b;
      snprintf(same, sizeof same, "%.4f", loom_dna_result_shared(r, k).score);
    } else {
      snprintf(same, sizeof same, "%s", _("empty"));
    }
    int64_t best = best_in_b(r, i, own);
    if (best >= 0) loom_coord_format(loom_dna_result_slot_b(r, best).at, best_at, sizeof best_at);
    else snprintf(best_at, sizeof best_at, "-");
    printf("  %-11s %-12s %-10s %-10s %-11s %.4f\n", loom_coord_format(d.at, at, sizeof at), loom_layer_type_name(d.type),
           loom_dtype_name(d.dtype), same, best_at, best >= 0 ? loom_dna_result_at(r, i, best) : 0.0);
  }
  printf("\n");
  int64_t ns = loom_dna_result_n_shifts(r);
  if (ns == 0) {
    printf(_("Logic shifts (threshold %.2f): none\n"), loom_dna_result_threshold(r));
  } else {
    printf(_("Logic shifts (threshold %.2f):\n"), loom_dna_result_threshold(r));
    char to[64];
    for (int64_t s = 0; s < ns; s++) {
      loom_dna_shift t = loom_dna_result_shift(r, s);
      printf(_("  %s → %s  score %.4f (%.4f at its own place)\n"), loom_coord_format(t.from, at, sizeof at),
             loom_coord_format(t.to, to, sizeof to), t.score, t.own);
    }
  }
  printf("\n");
  print_matrix(r);
}

int cmd_dna(int argc, char **argv) {
  const char *paths[2] = {NULL, NULL}, *threshold_t = NULL;
  int n_paths = 0;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    int r = cli_option_value("--threshold", argc, argv, &i, &threshold_t);
    if (r < 0) return cli_usage_error("dna", _("option '%s' needs a value"), argv[i]);
    if (r > 0) continue;
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("dna", _("unknown option '%s'"), argv[i]);
    if (n_paths == 2) return cli_usage_error("dna", _("unexpected argument '%s'"), argv[i]);
    paths[n_paths++] = argv[i];
  }
  if (n_paths < 2) return cli_usage_error("dna", _("two models are needed: loom dna A B"));
  double threshold = LOOM_DNA_DEFAULT_THRESHOLD;
  if (threshold_t) {
    char *end = NULL;
    threshold = g_ascii_strtod(threshold_t, &end);
    if (end == threshold_t || *end != '\0' || !(threshold >= 0 && threshold <= 1))
      return cli_usage_error("dna", _("--threshold needs a number from 0 to 1, not '%s'"), threshold_t);
  }
  /* Snapshot each side on its own so an error names the model it came from. */
  loom_error err = {0};
  loom_dna_snapshot *snap[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    loom_net *net = cli_load_model("dna", paths[k]);
    if (!net) break;
    snap[k] = loom_dna_snapshot_new(net, 0, &err);
    loom_net_free(net);
    if (!snap[k]) {
      cli_error("dna", "%s: %s", paths[k], err.message);
      break;
    }
  }
  loom_dna_result *r = snap[0] && snap[1] ? loom_dna_compare(snap[0], snap[1], threshold, &err) : NULL;
  if (snap[0] && snap[1] && !r) cli_error("dna", "%s", err.message);
  loom_dna_snapshot_free(snap[0]);
  loom_dna_snapshot_free(snap[1]);
  if (!r) return 1;
  if (json) print_json(r);
  else print_table(r, paths[0], paths[1]);
  loom_dna_result_free(r);
  return 0;
}
