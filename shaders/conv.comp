#version 450
// conv1d/2d/3d (engine/layers/conv.c, PyTorch's semantics: zero padding,
// stride, dilation, groups), every spatial size padded to 3 dimensions with
// leading 1s. x: batch × cin × img; y: batch × cout × pos; W: cout rows of
// (cin/groups)·taps, column (ci_local·K0 + k0)·K1·K2 + k1·K2 + k2, at any
// dtype the device decodes (kind 8: float32).
//   mode 0, forward:    y = bias + Σ_{ci, k} W·x       (one invocation an output)
//   mode 1, dx:         dx = Σ_{co, k} W·dy [+ bias]   (one invocation an input element)
// A transposed convolution is the same three products with the roles of the
// two sides swapped (engine/layers/conv-core.h): its forward is mode 1 (with
// its bias), its input gradient mode 0, its weight gradient mode 2.
//   mode 2, dW:         dW = Σ_n Σ_pos dy·x            (one invocation a weight; written whole)
//   mode 3, db:         db = Σ_n Σ_pos dy              (one invocation a channel; written whole)
// Every sum runs in a fixed order (the loops below, ascending): runs are
// bit-identical. The CPU sums the products in another order (im2col and a
// blocked product) and db in double: docs/gpu.md "Tolerances".
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer BBuf { uint bw[]; };
layout(std430, binding = 2) readonly buffer SBuf { float scale[]; };
layout(std430, binding = 3) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 4) readonly buffer DyBuf { float dy[]; };
layout(std430, binding = 5) writeonly buffer OutBuf { float outv[]; };
layout(push_constant) uniform Push {
  uint batch, cin, cout, groups;
  uint img0, img1, img2, pos0, pos1, pos2;
  uint k0, k1, k2, s0, s1, s2;
  uint p0, p1, p2, d0, d1, d2;
  uint mode, has_bias, ldb, kind, nbits, per_tensor;
} p;

#include "decode.glsl"

float weight(uint co, uint col) {
  return p.kind == 8u ? uintBitsToFloat(bw[co * p.ldb + col]) : decode_weight(co, col, p.ldb, p.kind, p.nbits, p.per_tensor != 0u);
}

// The input coordinate a tap reads for an output position, or false when it
// falls into the padding.
bool tap(uint o, uint k, uint s, uint pad, uint d, uint size, out uint i) {
  int v = int(o * s + k * d) - int(pad);
  i = uint(v);
  return v >= 0 && v < int(size);
}

void main() {
  uint id = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  uint n_img = p.img0 * p.img1 * p.img2, n_pos = p.pos0 * p.pos1 * p.pos2, taps = p.k0 * p.k1 * p.k2;
  uint cin_g = p.cin / p.groups, cout_g = p.cout / p.groups;
  if (p.mode == 0u) {
    if (id >= p.batch * p.cout * n_pos) return;
    uint n = id / (p.cout * n_pos), co = (id / n_pos) % p.cout, q = id % n_pos;
    uint o0 = q / (p.pos1 * p.pos2), o1 = (q / p.pos2) % p.pos1, o2 = q % p.pos2, g = co / cout_g;
    float acc = 0.0;
    for (uint c = 0; c < cin_g; c++) {
      uint xb = (n * p.cin + g * cin_g + c) * n_img;
      for (uint a = 0; a < p.k0; a++) {
        uint i0;
        if (!tap(o0, a, p.s0, p.p0, p.d0, p.img0, i0)) continue;
        for (uint b = 0; b < p.k1; b++) {
          uint i1;
          if (!tap(o1, b, p.s1, p.p1, p.d1, p.img1, i1)) continue;
          for (uint e = 0; e < p.k2; e++) {
            uint i2;
            if (!tap(o2, e, p.s2, p.p2, p.d2, p.img2, i2)) continue;
            acc += weight(co, c * taps + (a * p.k1 + b) * p.k2 + e) * x[xb + (i0 * p.img1 + i1) * p.img2 + i2];
          }
        }
      }
    }
    outv[id] = p.has_bias != 0u ? acc + bias[co] : acc;
    return;
  }
  if (p.mode == 1u) {
    if (id >= p.batch * p.cin * n_img) return;
    uint n = id / (p.cin * n_img), ci = (id / n_img) % p.cin, r = id % n_img;
    uint i0 = r / (p.img1 * p.img2), i1 = (r / p.img2) % p.img1, i2 = r % p.img2;
    uint g = ci / cin_g, c = ci % cin_g;
    float acc = 0.0;
    for (uint j = 0; j < cout_g; j++) {
      uint co = g * cout_g + j, yb = (n * p.cout + co) * n_pos;
      for (uint a = 0; a < p.k0; a++) {
        // i = o·s + k·d − pad  ⇒  o = (i + pad − k·d) / s when that divides
        int t0 = int(i0 + p.p0) - int(a * p.d0);
        if (t0 < 0 || t0 % int(p.s0) != 0 || uint(t0) / p.s0 >= p.pos0) continue;
        for (uint b = 0; b < p.k1; b++) {
          int t1 = int(i1 + p.p1) - int(b * p.d1);
          if (t1 < 0 || t1 % int(p.s1) != 0 || uint(t1) / p.s1 >= p.pos1) continue;
          for (uint e = 0; e < p.k2; e++) {
            int t2 = int(i2 + p.p2) - int(e * p.d2);
            if (t2 < 0 || t2 % int(p.s2) != 0 || uint(t2) / p.s2 >= p.pos2) continue;
            uint q = ((uint(t0) / p.s0) * p.pos1 + uint(t1) / p.s1) * p.pos2 + uint(t2) / p.s2;
            acc += weight(co, c * taps + (a * p.k1 + b) * p.k2 + e) * dy[yb + q];
          }
        }
      }
    }
    // A transposed convolution's forward is this pass, with its bias.
    outv[id] = p.has_bias != 0u ? acc + bias[ci] : acc;
    return;
  }
  if (p.mode == 2u) {
    uint cols = cin_g * taps;
    if (id >= p.cout * cols) return;
    uint co = id / cols, col = id % cols, c = col / taps, t = col % taps;
    uint a = t / (p.k1 * p.k2), b = (t / p.k2) % p.k1, e = t % p.k2, ci = (co / cout_g) * cin_g + c;
    float acc = 0.0;
    for (uint n = 0; n < p.batch; n++) {
      uint xb = (n * p.cin + ci) * n_img, yb = (n * p.cout + co) * n_pos;
      for (uint q = 0; q < n_pos; q++) {
        uint o0 = q / (p.pos1 * p.pos2), o1 = (q / p.pos2) % p.pos1, o2 = q % p.pos2, i0, i1, i2;
        if (!tap(o0, a, p.s0, p.p0, p.d0, p.img0, i0) || !tap(o1, b, p.s1, p.p1, p.d1, p.img1, i1) ||
            !tap(o2, e, p.s2, p.p2, p.d2, p.img2, i2))
          continue;
        acc += dy[yb + q] * x[xb + (i0 * p.img1 + i1) * p.img2 + i2];
      }
    }
    outv[id] = acc;
    return;
  }
  if (id >= p.cout) return;
  float acc = 0.0;
  for (uint n = 0; n < p.batch; n++)
    for (uint q = 0; q < n_pos; q++) acc += dy[(n * p.cout + id) * n_pos + q];
  outv[id] = acc;
}
