/*
 * Internal to the engine: a systolic runner's per-node buffers, for code
 * outside engine/net/ that walks the plan node by node (the trainer's
 * statistics and NaN watchdog when it trains a systolic network), like
 * net-plan.h for feed-forward passes. Node k is net_plan_nodes()[k].
 */
#pragma once
#include "loom/systolic.h"

/* Node k's committed output (batch × numel of its output). */
const float *systolic_node_output(const loom_systolic *s, int k);
/* The gradient of the loss with respect to node k's output, summed over the
 * ticks of the last loom_systolic_backward (batch × numel of its output);
 * NULL before the first backward. For a feed-forward network unrolled over
 * as many ticks as it has slots, with the loss on the last tick, every node
 * reaches that output in exactly one tick, so this is its feed-forward
 * output gradient. */
const float *systolic_node_grad(const loom_systolic *s, int k);
