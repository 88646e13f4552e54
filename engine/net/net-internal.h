/*
 * Internal to engine/net/: the grid, its links, the result of shape inference
 * (the execution plan) and the buffers of the last forward pass.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "layers/layer-impl.h"
#include "loom/net.h"
#include "net/net-plan.h"

struct loom_net {
  int depth, rows, cols, lpc;
  int64_t n_slots;
  loom_layer **slots;
  bool *disabled;
  loom_link *links;
  int n_links, links_cap;
  loom_shape input;
  loom_execution execution; /* systolic: feedback links are legal (systolic.c) */

  /* Occupied slots in flat order (cache). */
  int64_t *occupied;
  int64_t n_occupied;
  bool occupied_valid;

  /* Plan from the last successful or failed inference. */
  bool plan_valid; /* nothing changed since the last inference */
  bool plan_ok;    /* and it had no problems */
  uint64_t seed;
  int n_nodes;
  net_node *nodes;
  loom_shape out_shape;

  /* Last forward. */
  int64_t batch; /* 0 = no forward yet */
  float *x_buf, *gx_buf, *scratch_a, *scratch_b;
  int64_t x_cap, gx_cap, scratch_a_cap, scratch_b_cap;
};

/* Something changed: the plan and the last forward are stale. */
void net_invalidate(loom_net *net);
void net_plan_free(loom_net *net);
/* Updates the occupied list if needed. */
void net_occupied_refresh(loom_net *net);
/* (Re)infers when stale or when a layer was changed from outside; fills err
 * with the first problem. */
int net_ensure_plan(loom_net *net, loom_error *err);
int64_t net_flat(const loom_net *net, loom_coord c);
