/* The float32 products of bench-layers' dense and conv workloads (and
 * bench-train's mlp784), each timed through loom_sgemm beside single-threaded
 * OpenBLAS on the same shape in the same run. */
#pragma once

#include "loom/pool.h"

/* pool1: one thread; pool2: two threads (the 2-thread/1-thread ratio), or
 * NULL to skip it. Prints a table; runs: medians over that many runs. */
void bench_products(loom_pool *pool1, loom_pool *pool2, int runs);
