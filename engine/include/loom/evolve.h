/*
 * Evolution (docs/dna.md "Evolution"): mutation operators on a volumetric
 * network, a DNA-guided splice of two parents, and a seeded (1+λ) search
 * that trains each child a few steps and keeps the fittest, so the
 * migration of logic across generations can be watched with loom/dna.h.
 *
 * Every operator works on a copy and returns a network that passes shape
 * inference with the parent's input and output sizes; a draw that would
 * break that is thrown away and the next draw is tried, up to a fixed number
 * of draws. All choices come from the seed: the same seed gives the same
 * children, and the search is bit-identical for any number of threads.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "dataset.h"
#include "error.h"
#include "export.h"
#include "net.h"
#include "pool.h"
#include "train.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum loom_mutation_kind {
  LOOM_MUTATE_PERTURB = 0,      /* Gaussian noise on one weighted layer's float32 masters */
  LOOM_MUTATE_DTYPE = 1,        /* one weighted layer to another dtype */
  LOOM_MUTATE_ADD_LINK = 2,     /* a remote link (merge "add") from an earlier layer to a later one */
  LOOM_MUTATE_ADD_LAYER = 3,    /* a new layer in a free slot */
  LOOM_MUTATE_REMOVE_LAYER = 4, /* a layer taken out (its links with it) */
  LOOM_MUTATE_SPLICE = 5,       /* in records only: the child was spliced from two parents */
} loom_mutation_kind;

/* The operators loom_mutate accepts: LOOM_MUTATE_PERTURB … REMOVE_LAYER. */
#define LOOM_MUTATION_OPERATORS 5

/* "perturb", "dtype", "add-link", "add-layer", "remove-layer", "splice"; NULL if unknown. */
LOOM_API const char *loom_mutation_name(loom_mutation_kind kind);

/* What a mutation did. */
typedef struct loom_mutation {
  loom_mutation_kind kind;
  loom_coord at;                /* the layer changed, added or removed; a link's destination */
  loom_coord from;              /* add-link: the link's source */
  const loom_layer_type *type;  /* the layer at `at` (added or removed) */
  loom_dtype old_dtype, dtype;  /* dtype: before and after */
  int64_t taken;                /* splice: layers whose weights came from the second parent */
} loom_mutation;

typedef struct loom_mutate_config {
  double sigma; /* perturb: noise std as a fraction of each tensor's RMS (0.1) */
  int attempts; /* draws an operator makes before it gives up (16) */
} loom_mutate_config;

LOOM_API loom_mutate_config loom_mutate_config_default(void);

/*
 * A mutated copy of `parent` (which must pass shape inference; it is not
 * changed), or NULL: LOOM_ERR_UNSUPPORTED when the operator has nothing to
 * work on or none of its draws left a valid network (the message says
 * which), other codes for real errors. cfg NULL: the defaults. *done (may be
 * NULL) describes the change.
 */
LOOM_API loom_net *loom_mutate(const loom_net *parent, loom_mutation_kind kind, uint64_t seed,
                               const loom_mutate_config *cfg, loom_mutation *done, loom_error *err);

/*
 * The DNA-guided splice of parents A (the fitter) and B: the child is a copy
 * of A (grid, layers, links); each layer of A is paired with the layer of B
 * that its DNA matches best among B's layers of the same type and the same
 * tensor shapes, if that similarity is at least `threshold` and that layer
 * of B is not paired yet (flat order of A); for each pair a coin (from
 * `seed`) decides whether the child takes B's weights and dtype. The pairing
 * follows the logic, not the coordinates: a layer that moved in B still
 * meets its counterpart. *taken (may be NULL) counts the layers taken from B.
 */
LOOM_API loom_net *loom_splice(const loom_net *a, const loom_net *b, uint64_t seed, double threshold,
                               int64_t *taken, loom_error *err);

/* ---- the search -------------------------------------------------------- */

typedef struct loom_evolve_config {
  int64_t generations;     /* >= 1 */
  int64_t population;      /* children per generation, >= 1 */
  uint64_t seed;
  int64_t train_steps;     /* training steps per child before its fitness; 0 = none */
  loom_train_config train; /* the children's training (loss, optimizer, batch);
                              epochs, patience and seed are set per child */
  double splice_rate;      /* chance that a child is first spliced from parent and mate (0.25) */
  double splice_threshold; /* DNA similarity a splice pair needs (0.8) */
  loom_mutate_config mutate;
} loom_evolve_config;

/* 10 generations of 8 children, seed 0, 20 training steps, the trainer's
 * defaults, splice rate 0.25 at threshold 0.8, the mutation defaults. */
LOOM_API loom_evolve_config loom_evolve_config_default(void);

/* How one generation went. */
typedef struct loom_evolve_report {
  int64_t generation;       /* 1 for the first generation */
  int64_t children;         /* children made (== population) */
  int64_t valid;            /* children that trained and evaluated without error */
  bool improved;            /* the best child beat the parent and is the new parent */
  int64_t best_child;       /* index of the generation's best valid child; -1 if none */
  loom_eval_result best;    /* the fitness of the generation's best valid child */
  loom_eval_result parent;  /* the parent's fitness when the generation began */
  int n_mutations;          /* how the best child was made: a splice and/or a mutation */
  loom_mutation mutations[2];
} loom_evolve_report;

typedef struct loom_evolution loom_evolution;

/*
 * Prepares a search from `start` (copied; it must pass shape inference and
 * fit `train` and `test` under cfg->train.loss). The start is evaluated on
 * `test` as it is: that is the first parent's fitness. Fitness is the test
 * accuracy, ties broken by the lower test loss (without accuracy, the loss
 * alone). All borrowed objects must outlive the search.
 */
LOOM_API loom_evolution *loom_evolution_new(const loom_net *start, const loom_dataset *train,
                                            const loom_dataset *test, const loom_evolve_config *cfg,
                                            loom_pool *pool, loom_error *err);
LOOM_API void loom_evolution_free(loom_evolution *ev);
/* Runs the next generation; LOOM_ERR_CANCELLED after the last. */
LOOM_API int loom_evolution_step(loom_evolution *ev, loom_evolve_report *report, loom_error *err);
LOOM_API int64_t loom_evolution_generation(const loom_evolution *ev); /* generations run */
/* The current parent (the fittest so far) and the one before the last
 * generation (equal to it when that generation brought no improvement). */
LOOM_API const loom_net *loom_evolution_best(const loom_evolution *ev);
LOOM_API const loom_net *loom_evolution_previous(const loom_evolution *ev);
LOOM_API loom_eval_result loom_evolution_best_fitness(const loom_evolution *ev);

#ifdef __cplusplus
}
#endif
