/* Network gradient checks: loom_net_forward / loom_net_backward over every layer. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck-impl.h"
#include "gradcheck.h"
#include "loom/weights.h"

static int forward_net(void *net, const loom_ctx *ctx, const float *x, int64_t batch, float *y, loom_error *err) {
  return loom_net_forward(net, ctx, x, batch, y, err);
}

int gradcheck_net_measure(loom_net *net, const float *x, int64_t batch, const gradcheck_options *opts,
                          gradcheck_report *out) {
  gradcheck_run run;
  gradcheck_run_begin(&run, opts, out);
  const gradcheck_options *o = &run.o;
  loom_diag *diags = NULL;
  int n_diag = loom_net_infer_shapes(net, 0, &diags);
  if (n_diag) {
    g_test_message("gradcheck net: %s", diags[0].message);
    free(diags);
    return LOOM_ERR_SHAPE;
  }
  loom_shape in = loom_net_input_shape(net), outs = loom_net_output_shape(net);
  int64_t n_in = batch * loom_shape_numel(&in), n_out = batch * loom_shape_numel(&outs);
  gradcheck_run_alloc(&run, x, n_in, n_out);
  gradcheck_eval e = {.forward = forward_net,
                      .model = net,
                      .what = "gradcheck net forward",
                      .ctx = run.ctx,
                      .x = run.x,
                      .y = run.y,
                      .r = run.r,
                      .batch = batch,
                      .n_out = n_out / batch};

  /* Every trainable tensor of every layer, in layer order. */
  GPtrArray *weights = g_ptr_array_new(), *grads = g_ptr_array_new_with_free_func(g_free),
            *names = g_ptr_array_new_with_free_func(g_free);
  double l0;
  loom_error err = {0};
  int rc = gradcheck_eval_loss(&e, &l0);
  if (!rc) {
    loom_net_zero_grad(net);
    rc = loom_net_backward(net, run.ctx, run.r, o->skip_dx ? NULL : run.dx, &err);
    if (rc) g_test_message("gradcheck net backward: %s", err.message);
  }
  for (int64_t i = 0; !rc && i < loom_net_n_layers(net); i++) {
    loom_coord c = loom_net_layer_coord(net, i);
    loom_layer *l = loom_net_layer_at(net, c);
    for (int w = 0; w < loom_layer_n_weights(l); w++) {
      char coord[48], path[128];
      loom_weights *wt = loom_layer_weights(l, w);
      g_ptr_array_add(weights, wt);
      g_ptr_array_add(grads, g_memdup2(loom_layer_grad(l, w), (gsize)loom_weights_count(wt) * sizeof(float)));
      g_ptr_array_add(names, g_strdup_printf("%s %s", loom_coord_format(c, coord, sizeof coord),
                                             loom_layer_weights_path(l, w, path, sizeof path)));
    }
  }
  if (!rc && !o->skip_dx)
    rc = gradcheck_tensor(gradcheck_eval_loss, &e, run.x, n_in, run.dx, NULL, NULL, "x", o, out);
  for (guint w = 0; !rc && w < weights->len; w++) {
    loom_weights *wt = weights->pdata[w];
    rc = gradcheck_tensor(gradcheck_eval_loss, &e, loom_weights_master(wt), loom_weights_count(wt), grads->pdata[w],
                          gradcheck_touch_weights, wt, names->pdata[w], o, out);
  }
  g_ptr_array_free(weights, TRUE);
  g_ptr_array_free(grads, TRUE);
  g_ptr_array_free(names, TRUE);
  gradcheck_run_free(&run);
  return rc;
}

double gradcheck_net(loom_net *net, const float *x, int64_t batch, double tolerance) {
  gradcheck_options o = {.tolerance = tolerance};
  gradcheck_report rep;
  int rc = gradcheck_net_measure(net, x, batch, &o, &rep);
  if (rc) {
    g_test_fail_printf("gradcheck net: the network failed to run (status %s)", loom_status_name(rc));
    return INFINITY;
  }
  gradcheck_judge(&rep, tolerance, "net");
  return rep.worst;
}
