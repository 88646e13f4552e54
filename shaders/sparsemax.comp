#version 450
// sparsemax and 1.5-entmax over each row of `cols` entries; one workgroup a
// row (engine/layers/sparsemax.c; docs/gpu.md "Sparse probability maps").
// Forward: u = x − max(x) (sparsemax) or (x − max(x))/2 (entmax15), so the
// threshold τ lies in [−1, 0). Bisection on τ, a fixed 30 halvings of
// [−1, 0], keeps lo with Σ [u − lo]₊ ≥ 1 (entmax: Σ [u − lo]₊² ≥ 1), so
// the support {u > lo} holds the true one (plus entries within 2⁻³⁰ of τ,
// which add nothing). τ then comes in closed form from that support, as on
// the CPU: sparsemax τ = (Σ u − 1)/k; entmax15 τ = mean − √max(0, (1 − Σ (u −
// mean)²)/k). y = [u − τ]₊ or [u − τ]₊².
// backward != 0: dx = w ⊙ (dy − Σ w·dy / Σ w) from the forward's output y
// (binding 0), w the support indicator (sparsemax) or √y (entmax15).
// Every sum reduces through a fixed tree in shared memory, so the order
// depends only on cols: runs are bit-identical.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer DyBuf { float dy[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float outv[]; };
layout(push_constant) uniform Push { uint rows, cols, entmax, backward; } p;

shared float red[64];

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

float shifted(uint i, float m) {
  float u = x[i] - m;
  return p.entmax != 0u ? 0.5 * u : u;
}

void main() {
  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= p.rows) return; // whole workgroup: uniform control flow
  uint t = gl_LocalInvocationID.x, base = row * p.cols;
  if (p.backward != 0u) {
    float sw = 0.0, swdy = 0.0;
    for (uint i = t; i < p.cols; i += 64u) {
      float y = x[base + i];
      float w = y > 0.0 ? (p.entmax != 0u ? sqrt(y) : 1.0) : 0.0;
      sw += w;
      swdy += w * dy[base + i];
    }
    sw = tree_sum(t, sw);
    swdy = tree_sum(t, swdy);
    float q = swdy / sw;
    for (uint i = t; i < p.cols; i += 64u) {
      float y = x[base + i];
      float w = y > 0.0 ? (p.entmax != 0u ? sqrt(y) : 1.0) : 0.0;
      outv[base + i] = w * (dy[base + i] - q);
    }
    return;
  }
  float m = -3.402823466e38;
  for (uint i = t; i < p.cols; i += 64u) m = max(m, x[base + i]);
  m = tree_max(t, m);
  float lo = -1.0, hi = 0.0;
  for (int it = 0; it < 30; it++) {
    float mid = 0.5 * (lo + hi), g = 0.0;
    for (uint i = t; i < p.cols; i += 64u) {
      float d = shifted(base + i, m) - mid;
      if (d > 0.0) g += p.entmax != 0u ? d * d : d;
    }
    g = tree_sum(t, g);
    if (g >= 1.0) lo = mid;
    else hi = mid;
  }
  float k = 0.0, s1 = 0.0;
  for (uint i = t; i < p.cols; i += 64u) {
    float u = shifted(base + i, m);
    if (u > lo) {
      k += 1.0;
      s1 += u;
    }
  }
  k = tree_sum(t, k);
  s1 = tree_sum(t, s1);
  float tau;
  if (p.entmax != 0u) {
    float mean = s1 / k, c2 = 0.0;
    for (uint i = t; i < p.cols; i += 64u) {
      float u = shifted(base + i, m);
      if (u > lo) c2 += (u - mean) * (u - mean);
    }
    c2 = tree_sum(t, c2);
    tau = mean - sqrt(max(0.0, (1.0 - c2) / k));
  } else {
    tau = (s1 - 1.0) / k;
  }
  for (uint i = t; i < p.cols; i += 64u) {
    float d = shifted(base + i, m) - tau;
    outv[base + i] = d > 0.0 ? (p.entmax != 0u ? d * d : d) : 0.0;
  }
}
