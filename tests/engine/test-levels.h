/*
 * The kernel levels a test walks. The AMX level's table is the AVX-512
 * one but for the integer GEMM (qgemm_rows, qgemm_tiles and
 * qgemm_make_tiles; test-kernels checks so), so test-qgemm and the layers
 * through it walk it and the tests of every other kernel stop at AVX-512,
 * where theirs last differ: the same checks again would only add time.
 */
#pragma once
#include "kernels/cpu.h"

/* The last level those tests walk where the machine has it, and the highest
 * one they walk on this machine. */
#define TEST_LAST_LEVEL LOOM_KERNELS_AVX512

static inline int test_top_level(void) {
  const int best = (int)loom_kernels_best_level();
  return best > TEST_LAST_LEVEL ? TEST_LAST_LEVEL : best;
}
