#version 450
// The gradient of the training loss with respect to the network output y
// (rows × cols), engine/train/loss.c's formulas with PyTorch's mean
// reduction, so that a training step never leaves the device:
//   kind 0, mse:           dy = 2·(y − t)·inv            (inv = 1/(rows·cols))
//   kind 1, cross-entropy: dy = (softmax(y) − q)·inv     (inv = 1/rows, q the
//                          label-smoothed one-hot: (1−ε)·onehot + ε/cols)
//   kind 2, bce on logits: dy = (σ(y) − t)·inv            (inv = 1/(rows·cols))
//   kind 3, multi-head CE: kind 1 on each head's row      (inv = 1/active heads)
//   kind 4, multi-head NLL on probabilities p: dy = −q/p·inv where p > 1e-12
//                          and q > 0, else 0 (the CPU's clamp passes nothing)
// For kinds 3 and 4 a row is one head of one sample (rows = batch·heads,
// cols = classes) and a masked head's label is −1: its row gets dy = 0.
// t (binding 1) holds float targets, or int32 class labels for kinds 1, 3, 4.
// Rows from `valid` on (the padding of a short last batch) get dy = 0.
// One workgroup a row; the softmax reduces through a fixed tree, so runs are
// bit-identical. The CPU computes in double and rounds once: the device's
// float32 differs by a few ulp (docs/gpu.md "Tolerances").
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer YBuf { float y[]; };
layout(std430, binding = 1) readonly buffer TBuf { uint t[]; };
layout(std430, binding = 2) writeonly buffer DyBuf { float dy[]; };
layout(push_constant) uniform Push { uint rows, cols, kind, valid; float inv, eps; } p;

shared float red[64];

void main() {
  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= p.rows) return; // whole workgroup: uniform control flow
  uint i0 = gl_LocalInvocationID.x, base = row * p.cols;
  if (row >= p.valid) {
    for (uint i = i0; i < p.cols; i += 64u) dy[base + i] = 0.0;
    return;
  }
  if (p.kind == 0u) {
    for (uint i = i0; i < p.cols; i += 64u) dy[base + i] = 2.0 * (y[base + i] - uintBitsToFloat(t[base + i])) * p.inv;
    return;
  }
  if (p.kind == 2u) {
    for (uint i = i0; i < p.cols; i += 64u) {
      float x = y[base + i];
      // σ(x) without overflow on either side, as the CPU's branch
      float s = x >= 0.0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
      dy[base + i] = (s - uintBitsToFloat(t[base + i])) * p.inv;
    }
    return;
  }
  uint label = t[row];
  if (p.kind >= 3u && label == 0xFFFFFFFFu) { // a masked head
    for (uint i = i0; i < p.cols; i += 64u) dy[base + i] = 0.0;
    return;
  }
  float off = p.eps / float(p.cols);
  if (p.kind == 4u) {
    // The smallest float above the double 1e-12 (LOOM_NLL_MIN_PROB): p is
    // above the CPU's double threshold exactly when p >= it.
    const float min_p = uintBitsToFloat(0x2b8cbccdu);
    for (uint i = i0; i < p.cols; i += 64u) {
      float q = off + (i == label ? 1.0 - p.eps : 0.0), pr = y[base + i];
      dy[base + i] = q != 0.0 && pr >= min_p ? -q / pr * p.inv : 0.0;
    }
    return;
  }
  float m = -3.402823466e38;
  for (uint i = i0; i < p.cols; i += 64u) m = max(m, y[base + i]);
  red[i0] = m;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (i0 < s) red[i0] = max(red[i0], red[i0 + s]);
    barrier();
  }
  m = red[0];
  barrier();
  float sum = 0.0;
  for (uint i = i0; i < p.cols; i += 64u) sum += exp(y[base + i] - m);
  red[i0] = sum;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (i0 < s) red[i0] = red[i0] + red[i0 + s];
    barrier();
  }
  float inv_sum = 1.0 / red[0];
  for (uint i = i0; i < p.cols; i += 64u) {
    float q = off + (i == label ? 1.0 - p.eps : 0.0);
    dy[base + i] = (exp(y[base + i] - m) * inv_sum - q) * p.inv;
  }
}
