/* Internal to systolic.c and systolic-bptt.c: the runner. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "loom/systolic.h"

/* Recorded ticks: far more than any unrolled training uses. */
#define SYSTOLIC_MAX_RECORDED 1000000

struct loom_systolic {
  loom_net *net;
  int64_t batch, ticks;
  int n;                     /* plan nodes */
  int64_t in_numel;          /* per sample, the network's input */
  int64_t *node_in, *node_out; /* per node, per sample */
  float *x;                  /* batch × in_numel */
  float **cur, **next;       /* per node: committed outputs, and the ones being computed */
  float **in_buf;            /* per node: this tick's merged input */
  float *row;                /* one sample's value while merges apply */
  int64_t row_len;
  bool recording;
  float **rec;               /* per recorded tick: every node's input, at rec_off[k] */
  int64_t *rec_off, rec_stride, n_rec, rec_cap;
  float **gsum;              /* per node: dL/d output summed over the ticks of the last backward */
};

/* Fails when the network's plan no longer matches the runner's buffers. */
int systolic_check_plan(const loom_systolic *s, loom_error *err);
