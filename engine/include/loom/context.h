/*
 * An execution context: the thread pool, training mode and the random stream
 * for stochastic layers. One context per thread of control (the GUI's worker
 * owns its own).
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "export.h"
#include "pool.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_ctx {
  loom_pool *pool; /* may be NULL: run on the calling thread */
  bool training;   /* forward keeps what backward needs */
  uint64_t seed;   /* stochastic layers derive their randomness from (seed, step, layer) */
  uint64_t step;   /* advanced by the trainer */
} loom_ctx;

#ifdef __cplusplus
}
#endif
