/*
 * DNA of two networks of 100 dense layers and about 10^6 weights each (a
 * 10 × 10 grid of 100 → 100 layers), the goal being under 100 ms for both
 * snapshots and the comparison. Two cases: the same shapes with other
 * weights (every pair of the 100 × 100 matrix is an exact cosine over 10^4
 * weights, the costly case) and other widths (every pair goes through the
 * fixed-length profile). The baseline, measured in the same run, is the
 * plain matrix of double-precision cosines that the fast path replaces.
 * Median of several runs, one thread. Usage: bench-dna [--runs R]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench-util.h"
#include "loom/loom.h"

#define SIDE 10
#define WIDTH 100
#define GOAL_S 0.100

static loom_net *grid_net(uint64_t seed, bool vary_widths) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, SIDE, SIDE, 1, &err);
  loom_shape in = loom_shape_1d(WIDTH);
  if (!net || loom_net_set_input_shape(net, &in, &err)) goto fail;
  int64_t prev = WIDTH;
  for (int i = 0; i < SIDE * SIDE; i++) {
    /* Other widths: 90..110, so no layer shares a shape with one of A's. */
    int64_t out = vary_widths ? 90 + (i * 7) % 21 : WIDTH;
    if (vary_widths && out == WIDTH) out = WIDTH + 1;
    loom_layer *l = loom_layer_new_by_name("dense", &err);
    if (!l || loom_layer_set_int(l, "in_features", prev, &err) || loom_layer_set_int(l, "out_features", out, &err) ||
        loom_net_place(net, (loom_coord){0, i / SIDE, i % SIDE, 0}, l, &err))
      goto fail;
    prev = out;
  }
  loom_diag *diags = NULL;
  int n = loom_net_infer_shapes(net, seed, &diags);
  if (n) {
    fprintf(stderr, "bench-dna: %s\n", n > 0 ? diags[0].message : "shape inference failed");
    exit(1);
  }
  free(diags);
  return net;
fail:
  fprintf(stderr, "bench-dna: %s\n", err.message);
  exit(1);
}

/* The reference: every pair of same-shaped layers as a double-precision
 * cosine over the dequantized weights, straight from the networks. */
static double plain_matrix(loom_net *a, loom_net *b) {
  double checksum = 0;
  for (int64_t i = 0; i < loom_net_n_layers(a); i++) {
    loom_layer *la = loom_net_layer_at(a, loom_net_layer_coord(a, i));
    for (int64_t j = 0; j < loom_net_n_layers(b); j++) {
      loom_layer *lb = loom_net_layer_at(b, loom_net_layer_coord(b, j));
      double dot = 0, aa = 0, bb = 0;
      for (int k = 0; k < loom_layer_n_weights(la); k++) {
        loom_weights *wa = loom_layer_weights(la, k), *wb = loom_layer_weights(lb, k);
        if (loom_weights_count(wa) != loom_weights_count(wb)) continue;
        const float *x = loom_weights_effective(wa, NULL), *y = loom_weights_effective(wb, NULL);
        for (int64_t e = 0; e < loom_weights_count(wa); e++) {
          dot += (double)x[e] * y[e];
          aa += (double)x[e] * x[e];
          bb += (double)y[e] * y[e];
        }
      }
      checksum += aa > 0 && bb > 0 ? dot / sqrt(aa * bb) : 0;
    }
  }
  return checksum;
}

static void run_case(const char *title, loom_net *a, loom_net *b, int runs, double t_plain) {
  double *snap = calloc((size_t)runs, sizeof *snap), *cmp = calloc((size_t)runs, sizeof *cmp);
  double *total = calloc((size_t)runs, sizeof *total);
  loom_error err = {0};
  double sim = 0;
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now_s();
    loom_dna_snapshot *sa = loom_dna_snapshot_new(a, 0, &err);
    loom_dna_snapshot *sb = sa ? loom_dna_snapshot_new(b, 0, &err) : NULL;
    double t1 = bench_now_s();
    loom_dna_result *res = sb ? loom_dna_compare(sa, sb, LOOM_DNA_DEFAULT_THRESHOLD, &err) : NULL;
    double t2 = bench_now_s();
    if (!res) {
      fprintf(stderr, "bench-dna: %s\n", err.message);
      exit(1);
    }
    sim = loom_dna_result_similarity(res);
    snap[r] = t1 - t0;
    cmp[r] = t2 - t1;
    total[r] = t2 - t0;
    loom_dna_result_free(res);
    loom_dna_snapshot_free(sa);
    loom_dna_snapshot_free(sb);
  }
  double ms = 1e3;
  double t_snap = bench_median(snap, runs), t_cmp = bench_median(cmp, runs), t_total = bench_median(total, runs);
  printf("%s\n", title);
  printf("  layers %lld × %lld, weights %lld and %lld, overall similarity %.4f\n", (long long)loom_net_n_layers(a),
         (long long)loom_net_n_layers(b), (long long)loom_net_param_count(a), (long long)loom_net_param_count(b), sim);
  printf("  snapshots (both) %8.2f ms\n", t_snap * ms);
  printf("  compare          %8.2f ms\n", t_cmp * ms);
  printf("  DNA in total     %8.2f ms  (goal %.0f ms: %s)\n", t_total * ms, GOAL_S * ms,
         t_total < GOAL_S ? "met" : "missed");
  printf("  DNA in total / baseline = %.3f\n\n", t_total / t_plain);
  free(snap);
  free(cmp);
  free(total);
}

int main(int argc, char **argv) {
  int threads, runs;
  if (!bench_parse_args(argc, argv, 100, &threads, &runs)) return 2;
  loom_net *a = grid_net(1, false), *same = grid_net(2, false), *other = grid_net(3, true);
  double *plain = calloc((size_t)runs, sizeof *plain), sink = 0;
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now_s();
    sink += plain_matrix(a, same);
    plain[r] = bench_now_s() - t0;
  }
  double t_plain = bench_median(plain, runs);
  free(plain);
  printf("DNA of two networks, median of %d runs, one thread\n", runs);
  printf("baseline: the plain matrix of double cosines, same shapes: %.2f ms (checksum %.3g)\n\n", t_plain * 1e3,
         sink);
  run_case("same shapes, other weights (100 × 100 exact cosines):", a, same, runs, t_plain);
  run_case("other widths (100 × 100 profiles):", a, other, runs, t_plain);
  loom_net_free(a);
  loom_net_free(same);
  loom_net_free(other);
  return 0;
}
