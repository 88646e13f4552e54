/* Evolution: every mutation operator leaves a valid network and does what
 * its record says (and nothing to the parent), the same seed gives the same
 * child, refusals are clean; the DNA-guided splice follows a moved layer and
 * skips a layer whose logic differs; the search is bit-identical across 1
 * and 2 threads and its parent's fitness never drops. */
#include <math.h>

#include "train-test-util.h"

#define C(z, y, x, l) ((loom_coord){z, y, x, l})

static char *json_of(const loom_net *net) {
  loom_error err = {0};
  size_t len = 0;
  char *j = loom_model_to_json(net, &len, &err);
  if (!j) g_error("%s", err.message);
  return j;
}

/* 2 → 8 → tanh → 8 → relu → 3 in a 1×2×4 grid of two slots per cell:
 * layers along row 0, slot 0; row 1 and every slot 1 free. */
static loom_net *small_net(uint64_t seed) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 2, 4, 2, &err);
  loom_shape in = loom_shape_1d(2);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, &err), ==, 0);
  const char *types[] = {"dense", "tanh", "dense", "relu", "dense"};
  int64_t outs[] = {8, 0, 8, 0, 3};
  for (int i = 0; i < 5; i++) {
    loom_layer *l = loom_layer_new_by_name(types[i], &err);
    if (outs[i]) {
      g_assert_cmpint(loom_layer_set_int(l, "in_features", i ? 8 : 2, &err), ==, 0);
      g_assert_cmpint(loom_layer_set_int(l, "out_features", outs[i], &err), ==, 0);
    }
    loom_coord at = i < 4 ? C(0, 0, i, 0) : C(0, 1, 0, 0);
    g_assert_cmpint(loom_net_place(net, at, l, &err), ==, 0);
  }
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(net, seed, &diags), ==, 0);
  free(diags);
  return net;
}

static int64_t out_numel(const loom_net *net) {
  loom_shape s = loom_net_output_shape(net);
  return loom_shape_numel(&s);
}

static bool same_master(loom_layer *a, loom_layer *b) {
  if (loom_layer_n_weights(a) != loom_layer_n_weights(b)) return false;
  for (int k = 0; k < loom_layer_n_weights(a); k++) {
    loom_weights *wa = loom_layer_weights(a, k), *wb = loom_layer_weights(b, k);
    if (loom_weights_count(wa) != loom_weights_count(wb) ||
        memcmp(loom_weights_master_const(wa), loom_weights_master_const(wb),
               (size_t)loom_weights_count(wa) * sizeof(float)) != 0)
      return false;
  }
  return true;
}

/* What each operator must have done, checked on the networks themselves. */
static void check_record(const loom_net *parent, loom_net *child, const loom_mutation *m) {
  switch (m->kind) {
  case LOOM_MUTATE_PERTURB:
    g_assert_cmpint(loom_net_n_layers(child), ==, loom_net_n_layers(parent));
    for (int64_t i = 0; i < loom_net_n_layers(parent); i++) {
      loom_coord c = loom_net_layer_coord(parent, i);
      bool same = same_master(loom_net_layer_at(parent, c), loom_net_layer_at(child, c));
      bool is_target = c.z == m->at.z && c.y == m->at.y && c.x == m->at.x && c.l == m->at.l;
      g_assert_true(same != is_target);
    }
    break;
  case LOOM_MUTATE_DTYPE:
    g_assert_cmpint(loom_layer_get_dtype(loom_net_layer_at(parent, m->at)), ==, m->old_dtype);
    g_assert_cmpint(loom_layer_get_dtype(loom_net_layer_at(child, m->at)), ==, m->dtype);
    g_assert_cmpint(m->dtype, !=, m->old_dtype);
    break;
  case LOOM_MUTATE_ADD_LINK: {
    g_assert_cmpint(loom_net_n_links(child), ==, loom_net_n_links(parent) + 1);
    const loom_link *l = loom_net_link(child, loom_net_n_links(child) - 1);
    bool found = false;
    for (int k = 0; k < loom_net_n_links(child); k++) {
      l = loom_net_link(child, k);
      if (!memcmp(&l->src, &m->from, sizeof m->from) && !memcmp(&l->dst, &m->at, sizeof m->at)) found = true;
    }
    g_assert_true(found);
    g_assert_cmpint(loom_net_flat_index(child, m->from), <, loom_net_flat_index(child, m->at));
    break;
  }
  case LOOM_MUTATE_ADD_LAYER:
    g_assert_null(loom_net_layer_at(parent, m->at));
    g_assert_true(loom_layer_get_type(loom_net_layer_at(child, m->at)) == m->type);
    g_assert_cmpint(loom_net_n_layers(child), ==, loom_net_n_layers(parent) + 1);
    break;
  case LOOM_MUTATE_REMOVE_LAYER:
    g_assert_true(loom_layer_get_type(loom_net_layer_at(parent, m->at)) == m->type);
    g_assert_null(loom_net_layer_at(child, m->at));
    g_assert_cmpint(loom_net_n_layers(child), ==, loom_net_n_layers(parent) - 1);
    break;
  case LOOM_MUTATE_SPLICE: g_assert_not_reached();
  }
}

static void test_operators(void) {
  loom_error err = {0};
  loom_net *parent = small_net(1);
  char *before = json_of(parent);
  int made[LOOM_MUTATION_OPERATORS] = {0};
  for (int kind = 0; kind < LOOM_MUTATION_OPERATORS; kind++) {
    for (uint64_t seed = 0; seed < 40; seed++) {
      loom_mutation m, m2;
      loom_net *child = loom_mutate(parent, (loom_mutation_kind)kind, seed, NULL, &m, &err);
      if (!child) {
        /* a refusal is a clean one */
        g_assert_cmpint(err.code, ==, LOOM_ERR_UNSUPPORTED);
        continue;
      }
      made[kind]++;
      g_assert_cmpint(m.kind, ==, kind);
      /* valid: shape inference passes again with the parent's output size */
      loom_diag *diags = NULL;
      g_assert_cmpint(loom_net_infer_shapes(child, 99, &diags), ==, 0);
      free(diags);
      g_assert_cmpint(out_numel(child), ==, out_numel(parent));
      check_record(parent, child, &m);
      /* the child runs */
      float x[4] = {0.5f, -0.25f, 1.0f, 0.0f}, y[6];
      loom_ctx ctx = {0};
      g_assert_cmpint(loom_net_forward(child, &ctx, x, 2, y, &err), ==, 0);
      /* the same seed, the same child */
      loom_net *again = loom_mutate(parent, (loom_mutation_kind)kind, seed, NULL, &m2, &err);
      g_assert_nonnull(again);
      char *a = json_of(child), *b = json_of(again);
      g_assert_cmpstr(a, ==, b);
      g_free(a);
      g_free(b);
      loom_net_free(again);
      loom_net_free(child);
    }
    char *after = json_of(parent);
    g_assert_cmpstr(after, ==, before); /* the parent is never touched */
    g_free(after);
  }
  /* every operator finds valid draws on this network, most of the time */
  for (int kind = 0; kind < LOOM_MUTATION_OPERATORS; kind++) g_assert_cmpint(made[kind], >=, 20);
  /* perturb, dtype and add-layer always can here */
  g_assert_cmpint(made[LOOM_MUTATE_PERTURB], ==, 40);
  g_assert_cmpint(made[LOOM_MUTATE_DTYPE], ==, 40);
  g_free(before);

  /* a full grid has no slot for a layer; a net without weights nothing to perturb */
  int64_t hidden[] = {4};
  loom_net *full = tt_mlp(2, hidden, 1, "tanh", 2, NULL, 1);
  g_assert_null(loom_mutate(full, LOOM_MUTATE_ADD_LAYER, 1, NULL, NULL, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_UNSUPPORTED);
  g_assert_nonnull(strstr(err.message, "free slot"));
  loom_net *bare = loom_net_new(1, 1, 2, 1, &err);
  loom_shape in = loom_shape_1d(3);
  loom_net_set_input_shape(bare, &in, &err);
  loom_net_place(bare, C(0, 0, 0, 0), loom_layer_new_by_name("relu", &err), &err);
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(bare, 1, &diags), ==, 0);
  free(diags);
  g_assert_null(loom_mutate(bare, LOOM_MUTATE_PERTURB, 1, NULL, NULL, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_UNSUPPORTED);
  /* removing the only dense of 2 → 3 would change the output size: never done */
  loom_net *one = loom_net_new(1, 1, 2, 1, &err);
  in = loom_shape_1d(2);
  loom_net_set_input_shape(one, &in, &err);
  loom_layer *d = loom_layer_new_by_name("dense", &err);
  loom_layer_set_int(d, "in_features", 2, &err);
  loom_layer_set_int(d, "out_features", 3, &err);
  loom_net_place(one, C(0, 0, 0, 0), d, &err);
  g_assert_cmpint(loom_net_infer_shapes(one, 1, &diags), ==, 0);
  free(diags);
  g_assert_null(loom_mutate(one, LOOM_MUTATE_REMOVE_LAYER, 5, NULL, NULL, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_UNSUPPORTED);
  g_assert_nonnull(strstr(err.message, "outputs per sample"));
  loom_net_free(one);
  loom_net_free(bare);
  loom_net_free(full);
  loom_net_free(parent);
}

static void scale_layer(loom_layer *l, float f) {
  for (int k = 0; k < loom_layer_n_weights(l); k++) {
    loom_weights *w = loom_layer_weights(l, k);
    float *v = loom_weights_master(w);
    for (int64_t i = 0; i < loom_weights_count(w); i++) v[i] *= f;
    loom_weights_touch(w);
  }
}

/* B = A with every weight doubled (same DNA, other values), its last dense
 * moved from (0,1,0,0) to (0,1,1,1) (same spine order), and its first
 * dense redrawn (other logic). The child of a splice must hold, per layer,
 * A's weights or the doubled ones of its DNA partner — found at the moved
 * coordinate — and A's at the redrawn layer. */
static void test_splice(void) {
  loom_error err = {0};
  loom_net *a = small_net(1);
  loom_net *b = loom_net_clone(a, &err);
  for (int64_t i = 0; i < loom_net_n_layers(b); i++) scale_layer(loom_net_layer_at(b, loom_net_layer_coord(b, i)), 2);
  g_assert_cmpint(loom_net_move(b, C(0, 1, 0, 0), C(0, 1, 1, 1), &err), ==, 0);
  loom_net *other = small_net(777);
  loom_layer *fresh = loom_net_take(other, C(0, 0, 0, 0), NULL, NULL);
  loom_layer_free(loom_net_take(b, C(0, 0, 0, 0), NULL, NULL));
  g_assert_cmpint(loom_net_place(b, C(0, 0, 0, 0), fresh, &err), ==, 0);
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(b, 1, &diags), ==, 0);
  free(diags);

  bool moved_taken = false, moved_kept = false;
  for (uint64_t seed = 0; seed < 16; seed++) {
    int64_t taken = -1;
    loom_net *child = loom_splice(a, b, seed, 0.8, &taken, &err);
    if (!child) g_error("%s", err.message);
    int64_t count = 0;
    loom_layer *ca = loom_net_layer_at(child, C(0, 0, 0, 0));
    g_assert_true(same_master(ca, loom_net_layer_at(a, C(0, 0, 0, 0)))); /* redrawn: never paired */
    loom_coord dense_at[] = {C(0, 0, 2, 0), C(0, 1, 0, 0)}, partner[] = {C(0, 0, 2, 0), C(0, 1, 1, 1)};
    for (int k = 0; k < 2; k++) {
      loom_layer *c = loom_net_layer_at(child, dense_at[k]);
      bool from_a = same_master(c, loom_net_layer_at(a, dense_at[k]));
      bool from_b = same_master(c, loom_net_layer_at(b, partner[k]));
      g_assert_true(from_a != from_b);
      count += from_b;
      if (k == 1) {
        if (from_b) moved_taken = true;
        else moved_kept = true;
      }
    }
    g_assert_cmpint(taken, ==, count);
    /* the child keeps A's structure */
    g_assert_null(loom_net_layer_at(child, C(0, 1, 1, 1)));
    g_assert_cmpint(loom_net_n_layers(child), ==, loom_net_n_layers(a));
    loom_net_free(child);
    /* deterministic */
    int64_t t2 = -1;
    loom_net *c2 = loom_splice(a, b, seed, 0.8, &t2, &err);
    g_assert_cmpint(t2, ==, taken);
    loom_net_free(c2);
  }
  g_assert_true(moved_taken && moved_kept);
  /* threshold above every match: nothing is taken */
  int64_t taken = -1;
  loom_net *unrelated = small_net(778);
  loom_net *child = loom_splice(a, unrelated, 3, 0.999, &taken, &err);
  loom_net_free(unrelated);
  g_assert_nonnull(child);
  g_assert_cmpint(taken, ==, 0);
  loom_net_free(child);
  g_assert_null(loom_splice(a, b, 1, 1.5, NULL, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_INVALID);
  loom_net_free(other);
  loom_net_free(a);
  loom_net_free(b);
}

typedef struct run_result {
  loom_evolve_report reports[4];
  char *best_json;
  float out[3 * 16];
} run_result;

static run_result run_search(int threads, uint64_t seed) {
  loom_error err = {0};
  loom_dataset *all = loom_gen_spiral(60, 3, 0.1, 4, &err), *train = NULL, *test = NULL;
  g_assert_cmpint(loom_dataset_split(all, 0.25, 4, &train, &test, &err), ==, 0);
  loom_net *start = small_net(2);
  loom_evolve_config cfg = loom_evolve_config_default();
  cfg.generations = 4;
  cfg.population = 5;
  cfg.seed = seed;
  cfg.train_steps = 6;
  cfg.splice_rate = 0.5;
  cfg.train.batch_size = 16;
  cfg.train.schedule = loom_schedule_constant(0.02);
  g_assert_cmpint(loom_train_pick_loss(start, train, &cfg.train.loss, &err), ==, 0);
  loom_pool *pool = loom_pool_new(threads, &err);
  loom_evolution *ev = loom_evolution_new(start, train, test, &cfg, pool, &err);
  if (!ev) g_error("%s", err.message);
  run_result r = {0};
  loom_eval_result prev = loom_evolution_best_fitness(ev);
  for (int g = 0; g < 4; g++) {
    g_assert_cmpint(loom_evolution_step(ev, &r.reports[g], &err), ==, 0);
    loom_evolve_report *rep = &r.reports[g];
    g_assert_cmpint(rep->generation, ==, g + 1);
    g_assert_cmpfloat(rep->parent.loss, ==, prev.loss);
    loom_eval_result now = loom_evolution_best_fitness(ev);
    /* the parent's fitness never drops: accuracy up, or equal with the loss not up */
    g_assert_true(now.accuracy > prev.accuracy || (now.accuracy == prev.accuracy && now.loss <= prev.loss));
    if (rep->improved) {
      g_assert_cmpfloat(now.loss, ==, rep->best.loss);
      g_assert_true(loom_evolution_previous(ev) != loom_evolution_best(ev));
    } else {
      g_assert_true(loom_evolution_previous(ev) == loom_evolution_best(ev));
    }
    prev = now;
  }
  g_assert_cmpint(loom_evolution_step(ev, NULL, &err), ==, LOOM_ERR_CANCELLED);
  r.best_json = json_of(loom_evolution_best(ev));
  loom_net *best = loom_net_clone(loom_evolution_best(ev), &err);
  loom_ctx ctx = {.pool = pool};
  g_assert_cmpint(loom_net_forward(best, &ctx, test->inputs, 16, r.out, &err), ==, 0);
  loom_net_free(best);
  loom_evolution_free(ev);
  loom_pool_free(pool);
  loom_net_free(start);
  loom_dataset_free(all);
  loom_dataset_free(train);
  loom_dataset_free(test);
  return r;
}

static void assert_same_reports(const run_result *a, const run_result *b) {
  for (int g = 0; g < 4; g++) {
    const loom_evolve_report *x = &a->reports[g], *y = &b->reports[g];
    g_assert_cmpint(x->improved, ==, y->improved);
    g_assert_cmpint(x->best_child, ==, y->best_child);
    g_assert_cmpint(x->valid, ==, y->valid);
    g_assert_cmpmem(&x->best.loss, sizeof(double), &y->best.loss, sizeof(double));
    g_assert_cmpint(x->best.correct, ==, y->best.correct);
    g_assert_cmpint(x->n_mutations, ==, y->n_mutations);
    for (int k = 0; k < x->n_mutations; k++) {
      g_assert_cmpint(x->mutations[k].kind, ==, y->mutations[k].kind);
      g_assert_cmpmem(&x->mutations[k].at, sizeof(loom_coord), &y->mutations[k].at, sizeof(loom_coord));
    }
  }
}

static void test_search(void) {
  run_result one = run_search(1, 11), two = run_search(2, 11), again = run_search(1, 11);
  assert_same_reports(&one, &two);
  assert_same_reports(&one, &again);
  /* the weights (base64 of the float32 masters) and the outputs, bit for bit */
  g_assert_cmpstr(one.best_json, ==, two.best_json);
  g_assert_cmpstr(one.best_json, ==, again.best_json);
  g_assert_cmpmem(one.out, sizeof one.out, two.out, sizeof two.out);
  /* the search did something: at least one generation improved, with mutations */
  int improved = 0;
  for (int g = 0; g < 4; g++)
    if (one.reports[g].improved) {
      improved++;
      g_assert_cmpint(one.reports[g].n_mutations, >=, 1);
    }
  g_assert_cmpint(improved, >=, 1);
  /* another seed, another search */
  run_result other = run_search(1, 12);
  g_assert_cmpstr(one.best_json, !=, other.best_json);
  g_free(one.best_json);
  g_free(two.best_json);
  g_free(again.best_json);
  g_free(other.best_json);
}

static void test_bad_config(void) {
  loom_error err = {0};
  loom_dataset *all = loom_gen_spiral(20, 3, 0.1, 4, &err), *train = NULL, *test = NULL;
  loom_dataset_split(all, 0.25, 4, &train, &test, &err);
  loom_net *start = small_net(2);
  loom_evolve_config cfg = loom_evolve_config_default();
  g_assert_cmpint(loom_train_pick_loss(start, train, &cfg.train.loss, &err), ==, 0);
  cfg.population = 0;
  g_assert_null(loom_evolution_new(start, train, test, &cfg, NULL, &err));
  g_assert_nonnull(strstr(err.message, "population"));
  cfg = loom_evolve_config_default();
  cfg.splice_rate = 2;
  g_assert_null(loom_evolution_new(start, train, test, &cfg, NULL, &err));
  g_assert_nonnull(strstr(err.message, "splice_rate"));
  /* data of another width */
  loom_dataset *wide = loom_gen_clusters(40, 3, 5, 0.1, 1, &err);
  cfg = loom_evolve_config_default();
  g_assert_null(loom_evolution_new(start, wide, wide, &cfg, NULL, &err));
  loom_dataset_free(wide);
  loom_net_free(start);
  loom_dataset_free(all);
  loom_dataset_free(train);
  loom_dataset_free(test);
}

/* A systolic start is scored after the ticks its training uses
 * (cfg.train.ticks), not after one tick per slot: the feedback loop only acts
 * with more ticks than slots, so the two scores differ. */
static void test_systolic_fitness(void) {
  loom_error err = {0};
  loom_net *start = NULL;
  g_assert_cmpint(loom_example_build("feedback", &start, &err), ==, 0);
  loom_dataset *train = loom_gen_clusters(24, 2, 4, 0.4, 5, &err), *test = loom_gen_clusters(16, 2, 4, 0.4, 6, &err);
  g_assert_nonnull(train);
  g_assert_nonnull(test);
  loom_evolve_config cfg = loom_evolve_config_default();
  cfg.train.ticks = 9;
  g_assert_cmpint(loom_train_pick_loss(start, train, &cfg.train.loss, &err), ==, 0);
  loom_evolution *ev = loom_evolution_new(start, train, test, &cfg, NULL, &err);
  if (!ev) g_error("%s", err.message);
  loom_eval_result at9, per_slot;
  g_assert_cmpint(loom_evaluate_ticks(start, NULL, test, &cfg.train.loss, 64, 9, &at9, &err), ==, 0);
  g_assert_cmpint(loom_evaluate(start, NULL, test, &cfg.train.loss, 64, &per_slot, &err), ==, 0);
  g_assert_cmpfloat(at9.loss, !=, per_slot.loss);
  g_assert_cmpfloat(loom_evolution_best_fitness(ev).loss, ==, at9.loss);
  loom_evolution_free(ev);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_net_free(start);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/evolve/operators", test_operators);
  g_test_add_func("/evolve/splice", test_splice);
  g_test_add_func("/evolve/search", test_search);
  g_test_add_func("/evolve/bad-config", test_bad_config);
  g_test_add_func("/evolve/systolic-fitness", test_systolic_fitness);
  return g_test_run();
}
