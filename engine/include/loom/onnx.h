/*
 * ONNX export (docs/onnx.md): a feed-forward network as an ONNX model (IR 8,
 * opset 17) with one float32 input "input" [N, input shape] and one output
 * "output" [N, output shape]. Weights are float32 initializers holding the
 * values the engine computes with (dequantized at each layer's dtype), so the
 * graph reproduces loom_net_forward within float32 rounding. A layer without
 * an ONNX form fails the export with an error naming its type and slot.
 */
#pragma once
#include <stddef.h>

#include "error.h"
#include "export.h"
#include "net.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The serialized ModelProto in *data (free() it), *len bytes. Runs shape
 * inference first when the network changed. */
LOOM_API int loom_onnx_export_bytes(loom_net *net, void **data, size_t *len, loom_error *err);
/* The same, written atomically to `path` (temporary file, fsync, rename). */
LOOM_API int loom_onnx_export(loom_net *net, const char *path, loom_error *err);

#ifdef __cplusplus
}
#endif
