/* Internals of the weight store, for tests. Not installed. */
#pragma once
#include <stddef.h>

#include "loom/weights.h"

/* Bytes actually allocated for the packed copy and its scales (the master's
 * allocation at float32, where the master is the packed copy); 0 while stale. */
size_t loom_weights_allocated_cache_bytes(const loom_weights *w);
