/*
 * A small deterministic random stream for weight initialisation and
 * stochastic layers: xoshiro256** seeded through splitmix64. The same seed
 * gives the same sequence on every platform and thread count; independent
 * streams are derived with loom_rng_derive(seed, salt...) rather than by
 * sharing one generator across threads.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

typedef struct loom_rng {
  uint64_t s[4];
  double spare; /* second Box-Muller value */
  bool has_spare;
} loom_rng;

/* A well-mixed 64-bit value from a seed and a salt (e.g. a weight slot index),
 * so neighbouring seeds give unrelated streams. */
uint64_t loom_rng_derive(uint64_t seed, uint64_t salt);

void loom_rng_seed(loom_rng *r, uint64_t seed);
uint64_t loom_rng_next(loom_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double loom_rng_uniform(loom_rng *r);
/* Uniform in [lo, hi). */
double loom_rng_uniform_range(loom_rng *r, double lo, double hi);
/* Standard normal (Box-Muller; the second value of each pair is kept). */
double loom_rng_normal(loom_rng *r);
/* Uniform integer in [0, n) without modulo bias; n >= 1. */
uint64_t loom_rng_below(loom_rng *r, uint64_t n);
