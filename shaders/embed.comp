#version 450
// The embedding layer (engine/layers/embedding.c): a table of vocab rows ×
// dim at any dtype the device decodes, token indices carried as float32
// (checked on the host: before the submission where they are the network's
// input, after it where a layer computed them, engine/gpu/gpu-net.c). An
// index that is no integer in [0, vocab) is never read through: its lookup
// gives zeros and its gradient is dropped, and the host reports it.
//   mode 0, lookup:        y[t][c] = table[x[t]][c], one invocation an output
//   mode 1, table gradient: dtable[x[t]][c] += dy[t][c] for t ascending, one
//                          invocation a column: repeated tokens add in the
//                          CPU's order, so the result is bit-identical to it
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer BBuf { uint bw[]; };
layout(std430, binding = 2) readonly buffer SBuf { float scale[]; };
layout(std430, binding = 3) readonly buffer DyBuf { float dy[]; };
layout(std430, binding = 4) buffer OutBuf { float outv[]; };
layout(push_constant) uniform Push {
  uint tokens, dim, mode, ldb, kind, nbits, per_tensor, vocab; // kind 8: float32 table
} p;

#include "decode.glsl"

bool valid(float v) { return v >= 0.0 && v < float(p.vocab) && v == floor(v); } // NaN: false

void main() {
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  if (p.mode == 1u) {
    if (i >= p.dim) return;
    for (uint t = 0; t < p.tokens; t++) {
      if (!valid(x[t])) continue;
      uint o = uint(x[t]) * p.dim + i;
      precise float v = outv[o] + dy[t * p.dim + i];
      outv[o] = v;
    }
    return;
  }
  if (i >= p.tokens * p.dim) return;
  uint t = i / p.dim, c = i % p.dim;
  if (!valid(x[t])) {
    outv[i] = 0.0;
    return;
  }
  uint row = uint(x[t]);
  outv[i] = p.kind == 8u ? uintBitsToFloat(bw[row * p.dim + c]) : decode_weight(row, c, p.ldb, p.kind, p.nbits, p.per_tensor != 0u);
}
