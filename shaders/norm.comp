#version 450
// layernorm and rmsnorm over rows of d values (engine/layers/norm.c):
//   mode 0, forward:  y = (x − mean)·rstd [·w] [+ b], and the row's mean and
//                     rstd into stats (2 floats a row) for the backward;
//                     rmsnorm: mean = 0, rstd = 1/sqrt(mean(x²) + eps)
//   mode 1, input gradient, with g = dy [·w] and x̂ = (x − mean)·rstd:
//                     dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) (rmsnorm: no mean(g))
//   mode 2, parameter gradients, one invocation a column:
//                     dw = Σ_rows dy·x̂, db = Σ_rows dy (rows ascending)
// Modes 0 and 1 run one workgroup a row and reduce through a fixed tree, so
// runs are bit-identical. The CPU sums in double: the device's float32
// differs by a few ulp of the row's scale (docs/gpu.md "Tolerances").
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer DyBuf { float dy[]; };
layout(std430, binding = 2) readonly buffer WBuf { float w[]; };
layout(std430, binding = 3) readonly buffer BBuf { float b[]; };
layout(std430, binding = 4) buffer StatBuf { float stats[]; };
layout(std430, binding = 5) buffer OutBuf { float outv[]; };
layout(std430, binding = 6) buffer DbBuf { float db[]; };
layout(push_constant) uniform Push {
  uint rows, d, mode, layernorm, has_w, has_b;
  float eps;
} p;

shared float red[64];

float tree_sum(float v, uint t) {
  red[t] = v;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) red[t] = red[t] + red[t + s];
    barrier();
  }
  float r = red[0];
  barrier(); // red is reused by the next sum
  return r;
}

void main() {
  uint t = gl_LocalInvocationID.x;
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (p.mode == 2u) {
    uint c = group * 64u + t;
    if (c >= p.d) return;
    float aw = 0.0, ab = 0.0;
    for (uint r = 0; r < p.rows; r++) {
      float g = dy[r * p.d + c];
      aw += g * ((x[r * p.d + c] - stats[2u * r]) * stats[2u * r + 1u]);
      ab += g;
    }
    outv[c] = aw;
    if (p.has_b != 0u) db[c] = ab;
    return;
  }
  uint row = group;
  if (row >= p.rows) return; // whole workgroup: uniform control flow
  uint base = row * p.d;
  float fd = float(p.d);
  if (p.mode == 0u) {
    float mean = 0.0;
    if (p.layernorm != 0u) {
      float s = 0.0;
      for (uint i = t; i < p.d; i += 64u) s += x[base + i];
      mean = tree_sum(s, t) / fd;
    }
    float v = 0.0;
    for (uint i = t; i < p.d; i += 64u) {
      float c = x[base + i] - mean;
      v += c * c;
    }
    float rstd = 1.0 / sqrt(tree_sum(v, t) / fd + p.eps);
    if (t == 0u) {
      stats[2u * row] = mean;
      stats[2u * row + 1u] = rstd;
    }
    for (uint i = t; i < p.d; i += 64u) {
      float y = (x[base + i] - mean) * rstd;
      if (p.has_w != 0u) y *= w[i];
      if (p.has_b != 0u) y += b[i];
      outv[base + i] = y;
    }
    return;
  }
  float mean = stats[2u * row], rstd = stats[2u * row + 1u];
  float sg = 0.0, sgx = 0.0;
  for (uint i = t; i < p.d; i += 64u) {
    float g = p.has_w != 0u ? dy[base + i] * w[i] : dy[base + i];
    sg += g;
    sgx += g * ((x[base + i] - mean) * rstd);
  }
  float mean_g = p.layernorm != 0u ? tree_sum(sg, t) / fd : 0.0;
  float mean_gx = tree_sum(sgx, t) / fd;
  for (uint i = t; i < p.d; i += 64u) {
    float g = p.has_w != 0u ? dy[base + i] * w[i] : dy[base + i];
    float xhat = (x[base + i] - mean) * rstd;
    outv[base + i] = rstd * (g - mean_g - xhat * mean_gx);
  }
}
