#version 450
// gumbel_softmax's forward over each row of `cols` entries; one workgroup a
// row (engine/layers/gumbel-softmax.c; docs/gpu.md). The noise g is drawn
// on the host by the CPU's own generator, in double, and comes as two
// floats an entry, g ≈ hi + lo (hi = float(g), lo = float(g − hi)). With t
// the entry of the largest float(x + hi) (ties: the lowest index),
//   d_i = (x_i − x_t) + ((hi_i − hi_t) + (lo_i − lo_t)),
//   y_i = exp(scale·d_i − m) / Σ_j exp(scale·d_j − m),  m = max_j scale·d_j,
// so the rounding is relative to the differences, not to |x + g|.
// hard != 0: the relaxed sample goes to `soft` (the backward's y) and y is
// the one-hot argmax of it, ties to the lowest index, as the CPU.
// Sums and arg-maxima reduce through fixed trees: runs are bit-identical.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer NoiseBuf { float noise[]; };
layout(std430, binding = 2) writeonly buffer YBuf { float y[]; };
layout(std430, binding = 3) buffer SoftBuf { float soft[]; };
layout(push_constant) uniform Push { uint rows, cols; float scale; uint hard; } p;

shared float red[64];
shared uint arg[64];

float tree_sum(uint t, float v) {
  red[t] = v;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) red[t] = red[t] + red[t + s];
    barrier();
  }
  float r = red[0];
  barrier();
  return r;
}

float tree_max(uint t, float v) {
  red[t] = v;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) red[t] = max(red[t], red[t + s]);
    barrier();
  }
  float r = red[0];
  barrier();
  return r;
}

// The index of the largest value, the lowest index among equals.
uint tree_argmax(uint t, float v, uint i) {
  red[t] = v;
  arg[t] = i;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s && (red[t + s] > red[t] || (red[t + s] == red[t] && arg[t + s] < arg[t]))) {
      red[t] = red[t + s];
      arg[t] = arg[t + s];
    }
    barrier();
  }
  uint r = arg[0];
  barrier();
  return r;
}

float diff(uint base, uint i, uint b) {
  uint e = base + i, f = base + b;
  return (x[e] - x[f]) + ((noise[2u * e] - noise[2u * f]) + (noise[2u * e + 1u] - noise[2u * f + 1u]));
}

void main() {
  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= p.rows) return; // whole workgroup: uniform control flow
  uint t = gl_LocalInvocationID.x, base = row * p.cols;
  float bv = -3.402823466e38;
  uint bi = 0xffffffffu;
  for (uint i = t; i < p.cols; i += 64u) {
    float z = x[base + i] + noise[2u * (base + i)];
    if (bi == 0xffffffffu || z > bv) {
      bv = z;
      bi = i;
    }
  }
  uint top = tree_argmax(t, bv, bi);
  // t may miss the exact maximum by a rounding of x + hi: the exponents are
  // taken relative to their own maximum, so none is positive (no overflow,
  // however small τ)
  float m = -3.402823466e38;
  for (uint i = t; i < p.cols; i += 64u) m = max(m, p.scale * diff(base, i, top));
  m = tree_max(t, m);
  float sum = 0.0;
  for (uint i = t; i < p.cols; i += 64u) sum += exp(p.scale * diff(base, i, top) - m);
  sum = tree_sum(t, sum);
  if (p.hard == 0u) {
    for (uint i = t; i < p.cols; i += 64u) y[base + i] = exp(p.scale * diff(base, i, top) - m) / sum;
    return;
  }
  bv = -3.402823466e38;
  bi = 0xffffffffu;
  for (uint i = t; i < p.cols; i += 64u) {
    float v = exp(p.scale * diff(base, i, top) - m) / sum;
    soft[base + i] = v;
    if (bi == 0xffffffffu || v > bv) {
      bv = v;
      bi = i;
    }
  }
  uint best = tree_argmax(t, bv, bi);
  for (uint i = t; i < p.cols; i += 64u) y[base + i] = i == best ? 1.0 : 0.0;
}
