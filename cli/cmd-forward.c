/*
 * loom forward MODEL --input X.npy --output Y.npy [--threads N] [--device cpu|vulkan[:N]] [--inference]
 *
 * --inference puts the weights at rest before running (loom_net_to_inference:
 * only the packed codes and scales stay resident, the dense layer multiplies
 * them directly); the outputs then differ from the plain forward within
 * docs/dtypes.md's tolerance for the integer dtypes. CPU only.
 * --device vulkan runs the whole forward on a Vulkan device as one command
 * buffer (docs/gpu.md); a network with a layer or link the device cannot run
 * is refused, naming the slot: it is never run on the CPU instead.
 * X holds a batch of samples (batch × input shape) or one sample of exactly
 * the input shape; Y gets batch × output shape, or the output shape alone for
 * a single sample. Results do not depend on --threads.
 * On the CPU the samples run FORWARD_CHUNK at a time, so the layers'
 * buffers hold one part of a large file (a tiny transformer over 32768
 * samples took 2.1 GB at once) and are reused from part to part; a
 * sample's output is the same in any part (loom_layer_keeps_state). A
 * network with a layer that keeps state between calls runs whole.
 */
#include <errno.h>
#include <glib/gi18n.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loom/gpu.h>
#include <loom/sequence.h>

#include "cli-model.h"
#include "commands.h"

int cmd_forward(int argc, char **argv);

#define FORWARD_MAX_THREADS 1024
#define FORWARD_CHUNK 256

/* A layer anywhere in the network keeps something from one call for the
 * next: the batch must run in one call. */
static bool net_keeps_state(const loom_net *net) {
  for (int64_t i = 0; i < loom_net_n_layers(net); i++)
    if (loom_layer_keeps_state(loom_net_layer_at(net, loom_net_layer_coord(net, i)))) return true;
  return false;
}

static bool same_dims(const int64_t *a, const int64_t *b, int n) {
  for (int i = 0; i < n; i++)
    if (a[i] != b[i]) return false;
  return true;
}

static void format_npy_shape(const loom_npy *a, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < a->ndim && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, i ? "×%lld" : "%lld", (long long)a->shape[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

/* The forward on a Vulkan device: prepare (upload, record), run once. */
static int forward_on_gpu(const char *model_path, loom_net *net, int device, const float *x, int64_t batch, float *y) {
  loom_error err = {0};
  loom_gpu *gpu = loom_gpu_new(device, &err);
  if (!gpu) {
    cli_error("forward", "%s", err.message);
    return 1;
  }
  int status = 0;
  loom_gpu_net *gn = loom_gpu_net_new(gpu, net, batch, &err);
  if (!gn || loom_gpu_net_forward(gn, x, y, &err)) {
    cli_error("forward", "%s: %s", model_path, err.message);
    status = 1;
  }
  loom_gpu_net_free(gn);
  loom_gpu_free(gpu);
  return status;
}

static int run_forward(const char *model_path, loom_net *net, const char *in_path, const char *out_path,
                       int threads, bool use_gpu, int device, bool inference) {
  loom_error err = {0};
  loom_diag *diags = NULL;
  int n_diags = loom_net_infer_shapes(net, 0, &diags);
  if (n_diags != 0) {
    char at[64];
    if (n_diags > 0)
      cli_error("forward", _("%s: the network cannot run: %s: %s"), model_path,
                loom_coord_format(diags[0].at, at, sizeof at), diags[0].message);
    else
      cli_error("forward", _("%s: shape inference failed"), model_path);
    free(diags);
    return 1;
  }
  free(diags);
  /* After shape inference, which builds the weights it would otherwise rebuild. */
  if (inference && loom_net_to_inference(net, &err)) {
    cli_error("forward", "%s: %s", model_path, err.message);
    return 1;
  }
  loom_shape in = loom_net_input_shape(net), out = loom_net_output_shape(net);

  loom_npy x;
  if (loom_npy_read(in_path, &x, &err)) {
    cli_error("forward", "%s", err.message);
    return 1;
  }
  int64_t batch;
  bool single = x.ndim == in.rank && same_dims(x.shape, in.d, in.rank);
  if (single) {
    batch = 1;
  } else if (x.ndim == in.rank + 1 && same_dims(x.shape + 1, in.d, in.rank)) {
    batch = x.shape[0];
  } else {
    char have[160], want[96];
    format_npy_shape(&x, have, sizeof have);
    loom_shape_format(&in, want, sizeof want);
    cli_error("forward", _("%s: array of shape %s does not fit the model's input shape %s (expected %s for one sample "
                           "or batch × %s)"),
              in_path, have, want, want, want);
    loom_npy_clear(&x);
    return 1;
  }

  loom_npy y = {0};
  y.ndim = single ? out.rank : out.rank + 1;
  if (y.ndim > LOOM_NPY_MAX_DIMS) {
    cli_error("forward", _("%s: the output has too many dimensions for .npy"), out_path);
    loom_npy_clear(&x);
    return 1;
  }
  if (!single) y.shape[0] = batch;
  for (int i = 0; i < out.rank; i++) y.shape[y.ndim - out.rank + i] = out.d[i];
  int64_t per = loom_shape_numel(&out);
  if (batch > 0 && per > INT64_MAX / (int64_t)sizeof(float) / batch) {
    cli_error("forward", _("%s: %lld samples of %lld outputs are too many"), in_path, (long long)batch, (long long)per);
    loom_npy_clear(&x);
    return 1;
  }
  y.data = malloc((size_t)(batch * per > 0 ? batch * per : 1) * sizeof(float));
  if (!y.data) {
    cli_error("forward", _("out of memory for %lld × %lld outputs"), (long long)batch, (long long)per);
    loom_npy_clear(&x);
    return 1;
  }
  int status = 0;
  if (batch > 0 && use_gpu) {
    status = forward_on_gpu(model_path, net, device, x.data, batch, y.data);
  } else if (batch > 0) {
    loom_pool *pool = loom_pool_new(threads, &err);
    if (!pool) {
      cli_error("forward", "%s", err.message);
      status = 1;
    } else {
      loom_ctx ctx = {.pool = pool};
      const int64_t in_numel = loom_shape_numel(&in), chunk = net_keeps_state(net) ? batch : FORWARD_CHUNK;
      for (int64_t b0 = 0; b0 < batch; b0 += chunk) {
        const int64_t nb = batch - b0 < chunk ? batch - b0 : chunk;
        if (loom_net_forward(net, &ctx, x.data + b0 * in_numel, nb, y.data + b0 * per, &err)) {
          cli_error("forward", "%s: %s", model_path, err.message);
          status = 1;
          break;
        }
      }
      loom_pool_free(pool);
    }
  }
  if (status == 0 && loom_npy_write(out_path, &y, &err)) {
    cli_error("forward", "%s", err.message);
    status = 1;
  }
  loom_npy_clear(&y);
  loom_npy_clear(&x);
  return status;
}

int cmd_forward(int argc, char **argv) {
  const char *model = NULL, *in_path = NULL, *out_path = NULL, *threads_text = NULL, *device_text = NULL;
  bool inference = false;
  for (int i = 1; i < argc; i++) {
    int r;
    if (!strcmp(argv[i], "--inference")) {
      inference = true;
      continue;
    }
    if ((r = cli_option_value("--input", argc, argv, &i, &in_path)) ||
        (r = cli_option_value("--output", argc, argv, &i, &out_path)) ||
        (r = cli_option_value("--threads", argc, argv, &i, &threads_text)) ||
        (r = cli_option_value("--device", argc, argv, &i, &device_text))) {
      if (r < 0) return cli_usage_error("forward", _("option '%s' needs a value"), argv[i]);
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("forward", _("unknown option '%s'"), argv[i]);
    if (model) return cli_usage_error("forward", _("unexpected argument '%s'"), argv[i]);
    model = argv[i];
  }
  if (!model) return cli_usage_error("forward", _("missing MODEL"));
  if (!in_path) return cli_usage_error("forward", _("missing --input X.npy"));
  if (!out_path) return cli_usage_error("forward", _("missing --output Y.npy"));
  int threads = 0; /* one per core */
  if (threads_text) {
    char *end;
    errno = 0;
    long v = strtol(threads_text, &end, 10);
    if (end == threads_text || *end || errno == ERANGE || v < 1 || v > FORWARD_MAX_THREADS)
      return cli_usage_error("forward", _("--threads needs an integer from 1 to %d, not '%s'"), FORWARD_MAX_THREADS,
                             threads_text);
    threads = (int)v;
  }
  bool use_gpu = false;
  int device = -1;
  if (device_text) {
    loom_error err = {0};
    const int rc = loom_gpu_parse_device(device_text, &use_gpu, &device, &err);
    /* A build without Vulkan refuses "vulkan" as unsupported; with
     * --inference the options' conflict is the error, as in any build. */
    if (rc == LOOM_ERR_UNSUPPORTED && inference)
      use_gpu = true;
    else if (rc)
      return cli_usage_error("forward", "%s", err.message);
  }
  /* The device uploads its own copy of the weights: resting them here would save nothing. */
  if (inference && use_gpu)
    return cli_usage_error("forward", _("--inference runs on the CPU; it cannot be combined with --device %s"),
                           device_text);
  loom_net *net = cli_load_model_flags("forward", model, inference ? LOOM_MODEL_AT_REST : 0);
  if (!net) return 1;
  int status = run_forward(model, net, in_path, out_path, threads, use_gpu, device, inference);
  loom_net_free(net);
  return status;
}
