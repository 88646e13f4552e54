/*
 * The trainer's forward and backward passes (docs/trainer.md "Systolic
 * networks"). A feed-forward network runs loom_net_forward/backward. A
 * network in systolic execution mode runs on a systolic runner instead: every
 * step starts from zero outputs, holds the batch's input for cfg.ticks ticks
 * (recording each tick), takes the loss on the network's output after the
 * last tick, and backpropagates through all the ticks (loom_systolic_backward).
 * Feedback links therefore train like any other link, through time. Both
 * passes leave per-node output and output-gradient pointers in the trainer,
 * so the statistics and the NaN watchdog do not care which one ran.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "net/systolic-plan.h"
#include "train/trainer-internal.h"

int64_t train_ticks_for(const loom_net *net, int64_t ticks) {
  return ticks > 0 ? ticks : (int64_t)net_plan_n_nodes(net);
}

int train_systolic_run(loom_net *net, loom_systolic **s, const loom_ctx *ctx, const float *x, int64_t batch,
                       int64_t ticks, bool record, float *y, loom_error *err) {
  if (*s && loom_systolic_batch(*s) != batch) {
    loom_systolic_free(*s);
    *s = NULL;
  }
  if (!*s && !(*s = loom_systolic_new(net, batch, err))) return err ? err->code : LOOM_ERR_NOMEM;
  loom_systolic_reset(*s);
  int rc = loom_systolic_set_input(*s, x, err);
  if (!rc) rc = loom_systolic_set_recording(*s, record, err);
  for (int64_t t = 0; !rc && t < ticks; t++) rc = loom_systolic_tick(*s, ctx, err);
  if (rc) return rc;
  int64_t numel = 0;
  const float *out = loom_systolic_output(*s, &numel);
  memcpy(y, out, (size_t)(batch * numel) * sizeof *y);
  return LOOM_OK;
}

int trainer_setup_passes(loom_trainer *tr, loom_error *err) {
  tr->systolic = loom_net_execution(tr->net) == LOOM_EXEC_SYSTOLIC;
  size_t n = (size_t)(tr->n_nodes > 0 ? tr->n_nodes : 1);
  tr->acts = calloc(n, sizeof *tr->acts);
  tr->out_grads = calloc(n, sizeof *tr->out_grads);
  if (!tr->acts || !tr->out_grads) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory setting up training"));
  if (tr->systolic && tr->cfg.method != LOOM_TRAIN_BACKPROP)
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                          _("the network runs systolically, and systolic networks train by backprop only (through "
                            "time); tween needs a feed-forward network"));
  return LOOM_OK;
}

void trainer_free_passes(loom_trainer *tr) {
  loom_systolic_free(tr->sys);
  free(tr->tick_dy);
  free(tr->acts);
  free(tr->out_grads);
}

int trainer_forward(loom_trainer *tr, const loom_batch *b, loom_error *err) {
  int rc;
  if (!tr->systolic) {
    if ((rc = loom_net_forward(tr->net, &tr->ctx, b->inputs, b->size, tr->y, err))) return rc;
    const net_node *nodes = net_plan_nodes(tr->net);
    for (int k = 0; k < tr->n_nodes; k++) tr->acts[k] = nodes[k].out_ptr;
    tr->act_batch = net_plan_batch(tr->net);
    return LOOM_OK;
  }
  int64_t ticks = train_ticks_for(tr->net, tr->cfg.ticks);
  rc = train_systolic_run(tr->net, &tr->sys, &tr->ctx, b->inputs, b->size, ticks, true, tr->y, err);
  if (rc) return rc;
  for (int k = 0; k < tr->n_nodes; k++) tr->acts[k] = systolic_node_output(tr->sys, k);
  tr->act_batch = b->size;
  return LOOM_OK;
}

int trainer_backward(loom_trainer *tr, loom_error *err) {
  int rc;
  if (!tr->systolic) {
    if ((rc = loom_net_backward(tr->net, &tr->ctx, tr->dy, NULL, err))) return rc;
    const net_node *nodes = net_plan_nodes(tr->net);
    for (int k = 0; k < tr->n_nodes; k++) tr->out_grads[k] = nodes[k].grad_out;
    return LOOM_OK;
  }
  int64_t ticks = loom_systolic_ticks(tr->sys);
  if (ticks > tr->tick_dy_cap) {
    const float **grown = realloc(tr->tick_dy, (size_t)ticks * sizeof *grown);
    if (!grown) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for backpropagation through time"));
    tr->tick_dy = grown;
    tr->tick_dy_cap = ticks;
  }
  /* the loss looks at the output after the last tick only */
  for (int64_t t = 0; t + 1 < ticks; t++) tr->tick_dy[t] = NULL;
  tr->tick_dy[ticks - 1] = tr->dy;
  if ((rc = loom_systolic_backward(tr->sys, &tr->ctx, tr->tick_dy, ticks, NULL, err))) return rc;
  for (int k = 0; k < tr->n_nodes; k++) tr->out_grads[k] = systolic_node_grad(tr->sys, k);
  return LOOM_OK;
}
