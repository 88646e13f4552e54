/*
 * The engine's thread pool. Work is split into ranges whose boundaries depend
 * only on the problem (never on the thread count), and every range writes
 * disjoint outputs, so results are bit-identical for any number of threads.
 */
#pragma once
#include <stdint.h>

#include "error.h"
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_pool loom_pool;

/* n_threads <= 0: one per online core. */
LOOM_API loom_pool *loom_pool_new(int n_threads, loom_error *err);
LOOM_API void loom_pool_free(loom_pool *pool);
LOOM_API int loom_pool_size(const loom_pool *pool);

/* Calls fn(arg, begin, end) for consecutive ranges of [0, n) of at most
 * `grain` items each (the ranges depend on n and grain only), on the pool's
 * threads and the caller's, and returns when all are done. pool may be NULL
 * (runs inline). Nested calls from inside fn run inline. */
typedef void (*loom_range_fn)(void *arg, int64_t begin, int64_t end);
LOOM_API void loom_pool_for(loom_pool *pool, int64_t n, int64_t grain, loom_range_fn fn, void *arg);

#ifdef __cplusplus
}
#endif
