/*
 * Internal to the container types (containers.c: sequential, residual;
 * parallel.c). A "chain" runs a container's children one after another,
 * keeping every child's output for backward.
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "layers/layer-impl.h"

/* Grows *buf to hold `count` floats (count = batch × numel, overflow-checked). */
int container_reserve(float **buf, int64_t *cap, int64_t batch, int64_t numel, const loom_layer *l,
                      loom_error *err);

/* Seed of child i (the gate uses i = -1), so siblings draw different weights. */
uint64_t container_child_seed(uint64_t seed, int i);

/* Prefixes a child's error with where it sits: "layer parallel at (…), branch 2". */
void container_child_error(const loom_layer *l, const char *what, int i, loom_error *err);

typedef struct chain {
  int n;        /* children run at the last forward */
  int64_t batch;
  float **acts; /* acts[i]: output of child i */
  int64_t *acts_cap;
  float *grad_a, *grad_b; /* ping-pong gradient buffers */
  int64_t grad_a_cap, grad_b_cap;
} chain;

void chain_free(chain *c);
/* Builds the children of l in order from `in`; *out receives the last output
 * shape (`in` itself when there are no children). */
int chain_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_shape *out, loom_error *err);
/* Runs the children; the result is chain_output() (x itself when there are none). */
int chain_forward(loom_layer *l, chain *c, const loom_ctx *ctx, const float *x, int64_t batch, loom_error *err);
const float *chain_output(const chain *c, const float *x);
/* From dy (gradient of the last output), accumulates the children's parameter
 * gradients and writes dx (may be NULL). */
int chain_backward(loom_layer *l, chain *c, const loom_ctx *ctx, const float *x, const float *dy, float *dx,
                   int64_t batch, loom_error *err);
int64_t chain_flops(const loom_layer *l);
