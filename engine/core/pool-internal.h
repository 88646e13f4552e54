/*
 * Internal to the engine: which of a pool's threads is running, for kernels
 * that keep per-thread buffers for the length of one parallel-for (the
 * packed panels of loom_sgemm, sgemm-simd.h).
 */
#pragma once

/* Inside a range function that loom_pool_for runs on a pool's threads: the
 * index of the calling thread's share (0 the caller, 1 … size − 1 the
 * workers), below loom_pool_size of that pool. Outside of any job: −1. A
 * loom_pool_for nested in a job runs inline and sees the outer job's index. */
int loom_pool_thread_index(void);
