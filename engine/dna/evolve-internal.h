/* Shared by the evolution files (mutate.c, splice.c, evolve.c). */
#pragma once
#include <stdint.h>

#include "loom/evolve.h"

/* The network's output size per sample (0 before a successful inference). */
int64_t evolve_out_numel(const loom_net *net);
/* Shape inference (new weights from seed) without a problem and with
 * out_numel outputs per sample; otherwise an error naming the first problem. */
int evolve_check(loom_net *net, int64_t out_numel, uint64_t seed, loom_error *err);
