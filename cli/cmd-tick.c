/*
 * loom tick MODEL --input X.npy --ticks N [--trace TRACE.jsonl] [--output Y.npy] [--threads N]
 *
 * Runs the model systolically (loom/systolic.h) for N ticks with the input
 * held: X is one sample of the input shape or batch × input shape. The trace
 * gets one JSON line per tick, {"tick":t,"slots":[{"at":[z,y,x,l],"mean":m,
 * "norm":n},...]}, every slot's output statistics over the batch after that
 * tick; Y gets the network's output after the last tick. Results do not
 * depend on --threads.
 */
#include <errno.h>
#include <glib/gi18n.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-model.h"
#include "commands.h"

int cmd_tick(int argc, char **argv);

#define TICK_MAX_THREADS 1024
#define TICK_MAX_TICKS 100000000L

static bool same_dims(const int64_t *a, const int64_t *b, int n) {
  for (int i = 0; i < n; i++)
    if (a[i] != b[i]) return false;
  return true;
}

static bool parse_long(const char *text, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (end == text || *end || errno == ERANGE || v < lo || v > hi) return false;
  *out = v;
  return true;
}

static void write_trace_line(FILE *f, const loom_systolic *s, loom_slot_trace *tr) {
  loom_systolic_trace(s, tr);
  fprintf(f, "{\"tick\":%lld,\"slots\":[", (long long)loom_systolic_ticks(s));
  for (int64_t k = 0; k < loom_systolic_n_slots(s); k++)
    fprintf(f, "%s{\"at\":[%d,%d,%d,%d],\"mean\":%.9g,\"norm\":%.9g}", k ? "," : "", tr[k].at.z, tr[k].at.y,
            tr[k].at.x, tr[k].at.l, tr[k].mean, tr[k].norm);
  fputs("]}\n", f);
}

static int run_ticks(const char *model_path, loom_net *net, const char *in_path, long ticks, const char *trace_path,
                     const char *out_path, int threads) {
  loom_error err = {0};
  loom_diag *diags = NULL;
  int n_diags = loom_net_infer_shapes(net, 0, &diags);
  if (n_diags != 0) {
    char at[64];
    if (n_diags > 0)
      cli_error("tick", _("%s: the network cannot run: %s: %s"), model_path,
                loom_coord_format(diags[0].at, at, sizeof at), diags[0].message);
    else
      cli_error("tick", _("%s: shape inference failed"), model_path);
    free(diags);
    return 1;
  }
  loom_shape in = loom_net_input_shape(net), out = loom_net_output_shape(net);
  loom_npy x;
  if (loom_npy_read(in_path, &x, &err)) {
    cli_error("tick", "%s", err.message);
    return 1;
  }
  bool single = x.ndim == in.rank && same_dims(x.shape, in.d, in.rank);
  int64_t batch = single ? 1 : x.ndim == in.rank + 1 && same_dims(x.shape + 1, in.d, in.rank) ? x.shape[0] : 0;
  if (batch < 1) {
    char want[96];
    loom_shape_format(&in, want, sizeof want);
    cli_error("tick", _("%s: the array does not fit the model's input shape %s (expected %s for one sample or batch × "
                        "%s)"),
              in_path, want, want, want);
    loom_npy_clear(&x);
    return 1;
  }
  int status = 1;
  FILE *trace = NULL;
  loom_slot_trace *tr = NULL;
  loom_pool *pool = loom_pool_new(threads, &err);
  loom_systolic *s = pool ? loom_systolic_new(net, batch, &err) : NULL;
  if (!s || loom_systolic_set_input(s, x.data, &err)) {
    cli_error("tick", "%s: %s", model_path, err.message);
    goto done;
  }
  if (trace_path && !(trace = fopen(trace_path, "w"))) {
    cli_error("tick", _("%s: cannot write the trace: %s"), trace_path, g_strerror(errno));
    goto done;
  }
  tr = g_new(loom_slot_trace, loom_systolic_n_slots(s));
  loom_ctx ctx = {.pool = pool};
  for (long t = 0; t < ticks; t++) {
    if (loom_systolic_tick(s, &ctx, &err)) {
      cli_error("tick", "%s: %s", model_path, err.message);
      goto done;
    }
    if (trace) write_trace_line(trace, s, tr);
  }
  if (trace && fclose(trace) != 0) {
    trace = NULL;
    cli_error("tick", _("%s: cannot write the trace: %s"), trace_path, g_strerror(errno));
    goto done;
  }
  trace = NULL;
  if (out_path) {
    loom_npy y = {0};
    y.ndim = single ? out.rank : out.rank + 1;
    if (!single) y.shape[0] = batch;
    for (int i = 0; i < out.rank; i++) y.shape[y.ndim - out.rank + i] = out.d[i];
    int64_t numel;
    y.data = (float *)loom_systolic_output(s, &numel);
    if (loom_npy_write(out_path, &y, &err)) {
      cli_error("tick", "%s", err.message);
      goto done;
    }
  }
  status = 0;
done:
  if (trace) fclose(trace);
  g_free(tr);
  loom_systolic_free(s);
  loom_pool_free(pool);
  loom_npy_clear(&x);
  return status;
}

int cmd_tick(int argc, char **argv) {
  const char *model = NULL, *in_path = NULL, *out_path = NULL, *trace_path = NULL, *ticks_text = NULL,
             *threads_text = NULL;
  for (int i = 1; i < argc; i++) {
    int r;
    if ((r = cli_option_value("--input", argc, argv, &i, &in_path)) ||
        (r = cli_option_value("--output", argc, argv, &i, &out_path)) ||
        (r = cli_option_value("--trace", argc, argv, &i, &trace_path)) ||
        (r = cli_option_value("--ticks", argc, argv, &i, &ticks_text)) ||
        (r = cli_option_value("--threads", argc, argv, &i, &threads_text))) {
      if (r < 0) return cli_usage_error("tick", _("option '%s' needs a value"), argv[i]);
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("tick", _("unknown option '%s'"), argv[i]);
    if (model) return cli_usage_error("tick", _("unexpected argument '%s'"), argv[i]);
    model = argv[i];
  }
  if (!model) return cli_usage_error("tick", _("missing MODEL"));
  if (!in_path) return cli_usage_error("tick", _("missing --input X.npy"));
  if (!ticks_text) return cli_usage_error("tick", _("missing --ticks N"));
  long ticks, threads = 0;
  if (!parse_long(ticks_text, 1, TICK_MAX_TICKS, &ticks))
    return cli_usage_error("tick", _("--ticks needs an integer from 1 to %ld, not '%s'"), TICK_MAX_TICKS, ticks_text);
  if (threads_text && !parse_long(threads_text, 1, TICK_MAX_THREADS, &threads))
    return cli_usage_error("tick", _("--threads needs an integer from 1 to %d, not '%s'"), TICK_MAX_THREADS,
                           threads_text);
  loom_net *net = cli_load_model("tick", model);
  if (!net) return 1;
  int status = run_ticks(model, net, in_path, ticks, trace_path, out_path, (int)threads);
  loom_net_free(net);
  return status;
}
