#include "core/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t loom_rng_derive(uint64_t seed, uint64_t salt) {
  uint64_t st = seed;
  uint64_t a = splitmix64(&st);
  st = a ^ (salt * 0xd1b54a32d192ed03ull);
  return splitmix64(&st);
}

void loom_rng_seed(loom_rng *r, uint64_t seed) {
  uint64_t st = seed;
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&st);
  /* splitmix64 never yields four zeros in a row, but keep xoshiro's invariant explicit. */
  if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) r->s[0] = 1;
  r->has_spare = false;
  r->spare = 0.0;
}

uint64_t loom_rng_next(loom_rng *r) {
  uint64_t *s = r->s;
  const uint64_t result = rotl(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double loom_rng_uniform(loom_rng *r) { return (double)(loom_rng_next(r) >> 11) * 0x1.0p-53; }

double loom_rng_uniform_range(loom_rng *r, double lo, double hi) { return lo + (hi - lo) * loom_rng_uniform(r); }

double loom_rng_normal(loom_rng *r) {
  if (r->has_spare) {
    r->has_spare = false;
    return r->spare;
  }
  /* 1 - u lies in (0, 1], so the logarithm is finite. */
  double u1 = 1.0 - loom_rng_uniform(r);
  double u2 = loom_rng_uniform(r);
  double radius = sqrt(-2.0 * log(u1));
  double angle = 2.0 * M_PI * u2;
  r->spare = radius * sin(angle);
  r->has_spare = true;
  return radius * cos(angle);
}

uint64_t loom_rng_below(loom_rng *r, uint64_t n) {
  if (n <= 1) return 0;
  /* Reject the top partial block so every residue is equally likely. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t v;
  do v = loom_rng_next(r);
  while (v >= limit);
  return v % n;
}
