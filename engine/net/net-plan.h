/*
 * Internal to the engine: the execution plan of a network (the result of
 * shape inference) and the buffers of its last forward pass, for code
 * outside engine/net/ that walks the plan node by node (the trainer's
 * statistics, NaN watchdog and target propagation). It exposes the plan, not
 * the grid: the network's layout stays private to engine/net/
 * (net-internal.h).
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "loom/error.h"
#include "loom/net.h"

/* One incoming link of a node, in the order merges apply. */
typedef struct net_merge {
  int src_node; /* index into plan nodes */
  loom_merge mode;
  int64_t before_numel; /* per-sample size of the value before this merge */
  int64_t src_numel;
} net_merge;

/* An occupied slot in flat order (disabled ones too: they pass their merged
 * input through). */
typedef struct net_node {
  int64_t flat;
  loom_coord coord;
  loom_layer *layer;
  bool enabled;
  int pred; /* node whose output is the spine input; -1 = the net input */
  loom_shape base_in, in, out;
  int n_merges;
  net_merge *merges;
  /* Systolic networks: links from this node or a later one (feedback), merged
   * after `merges`; each keeps the shape (add, or replace by an equal shape). */
  int n_feedback;
  net_merge *feedback;
  /* Last forward. */
  const float *in_ptr; /* merged input (own buffer, or an alias when there are no merges) */
  const float *out_ptr;
  float *in_buf, *out_buf, *grad_out;
  int64_t in_cap, out_cap, grad_out_cap;
} net_node;

/* (Re)infers when stale or when a layer was changed from outside; fills err
 * with the first problem. */
int net_plan_ensure(loom_net *net, loom_error *err);
/* The plan's nodes: occupied slots in flat order, net_plan_n_nodes() of
 * them, valid until the network changes or is re-inferred. */
int net_plan_n_nodes(const loom_net *net);
const net_node *net_plan_nodes(const loom_net *net);
/* Samples of the last forward pass (0: none yet); the nodes' in_ptr, out_ptr
 * and grad_out hold that many samples. */
int64_t net_plan_batch(const loom_net *net);
