/* Internals of the weight store, for the engine and its tests. Not installed. */
#pragma once
#include <stddef.h>

#include "loom/weights.h"

/* Bytes actually allocated for the packed copy and its scales (the master's
 * allocation at float32, where the master is the packed copy); 0 while stale. */
size_t loom_weights_allocated_cache_bytes(const loom_weights *w);

/* loom_weights_touch for a writer that has checked every value of the new
 * master finite (the trainer's pass over the updated masters): the next
 * morph skips its own check, a pass over the whole master at float32. Any
 * later loom_weights_touch takes this back. */
void loom_weights_touch_finite(loom_weights *w);

struct loom_pool;
/* loom_weights_morph and loom_weights_effective with the rows split over a
 * pool's threads (NULL or one thread: as those): the same bytes, the same
 * errors (a row found bad anywhere is reported by a serial pass, in
 * order). For the passes that have a pool at hand: the trainer's re-morph,
 * the layers' forward and backward (layers/layer-weights.c). */
int loom_weights_morph_on(loom_weights *w, struct loom_pool *pool, loom_error *err);
const float *loom_weights_effective_on(loom_weights *w, struct loom_pool *pool, loom_error *err);
