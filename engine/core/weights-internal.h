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
