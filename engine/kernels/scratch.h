/*
 * Buffers kept per calling thread from call to call, one per slot (freed
 * when the thread ends; each keeps the largest size asked for). The products
 * need large transient buffers on every call; allocating and freeing them
 * each time cost a page fault per 4 KiB of a fresh mapping, which for the
 * quantized activations of 64 rows of 4096 columns was more than the
 * quantization itself. A slot is never shared by two uses that can be live
 * on one thread at once: the calling thread also runs ranges of rows of a
 * product while its activations are in use.
 */
#pragma once
#include <stddef.h>

typedef enum {
  LOOM_SCRATCH_SGEMM_PANELS,      /* loom_sgemm's packed operand (sgemm-simd.h) */
  LOOM_SCRATCH_QGEMM_ACTIVATIONS, /* loom_qgemm_packed's quantized activations (qgemm.c) */
  LOOM_SCRATCH_QGEMM_PANELS,      /* the VNNI GEMM's weight panels (qgemm-vnni-panel.c) */
  LOOM_SCRATCH_TRAIN_SUMS,        /* the trainer's per-block sums of squares (trainer-check.c) */
  LOOM_SCRATCH_GEMV_ACTIVATIONS,  /* the packed GEMV's scaled activations (gemv.c) */
  LOOM_SCRATCH_SLOTS
} loom_scratch_slot;

/* At least n bytes, 64-byte aligned; NULL when out of memory. */
void *loom_scratch(loom_scratch_slot slot, size_t n);
