#version 450
// Gradient clipping by the global L2 norm (engine/train/optim.c
// loom_clip_grad_norm, torch's clip_grad_norm_), in three dispatch kinds:
//   mode 0, per tensor, one workgroup: sums[index] = Σ g² (fixed tree)
//   mode 1, one invocation: norm = √(Σ sums, tensors in order),
//           coef = min(1, max_norm / (norm + 1e-6)); scale = [coef, norm]
//   mode 2, per tensor, an invocation an element: g *= coef when coef < 1
// The CPU sums in double; the device in float32 (docs/gpu.md "Tolerances").
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer GBuf { float g[]; };
layout(std430, binding = 1) buffer SumBuf { float sums[]; };
layout(std430, binding = 2) buffer ScaleBuf { float scale[]; };
layout(push_constant) uniform Push { uint n, index, mode, n_tensors; float max_norm; } p;

shared float red[256];

void main() {
  uint t = gl_LocalInvocationID.x;
  if (p.mode == 0u) {
    float s = 0.0;
    for (uint i = t; i < p.n; i += 256u) s += g[i] * g[i];
    red[t] = s;
    barrier();
    for (uint w = 128u; w > 0u; w >>= 1) {
      if (t < w) red[t] = red[t] + red[t + w];
      barrier();
    }
    if (t == 0u) sums[p.index] = red[0];
    return;
  }
  if (p.mode == 1u) {
    if (gl_GlobalInvocationID.x != 0u) return;
    float total = 0.0;
    for (uint k = 0; k < p.n_tensors; k++) total += sums[k];
    float norm = sqrt(total);
    scale[0] = min(1.0, p.max_norm / (norm + 1e-6));
    scale[1] = norm;
    return;
  }
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + t;
  if (i >= p.n) return;
  float coef = scale[0];
  if (coef < 1.0) g[i] = g[i] * coef;
}
