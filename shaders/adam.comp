#version 450
// One Adam/AdamW step on a tensor, the CPU's float32 formulas in the same
// order (engine/train/optim.c adam_tensor). Products and sums round as on the
// CPU (`precise`); the division and square root carry the driver's accuracy
// (docs/gpu.md).
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer PBuf { float param[]; };
layout(std430, binding = 1) readonly buffer GBuf { float grad[]; };
layout(std430, binding = 2) buffer MBuf { float m_buf[]; };
layout(std430, binding = 3) buffer VBuf { float v_buf[]; };
layout(std430, binding = 4) buffer VmaxBuf { float vmax_buf[]; };
layout(push_constant) uniform Push {
  uint n, flags; // 1: decoupled weight decay (AdamW), 2: maximize, 4: amsgrad
  float step_size, bias2_sqrt, b1, b2, one_b1, one_b2, eps, wd, decay;
} p;

void main() {
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  precise float g = (p.flags & 2u) != 0 ? -grad[i] : grad[i];
  precise float w = param[i];
  if ((p.flags & 1u) != 0)
    w = w * p.decay;
  else if (p.wd != 0.0)
    g = g + p.wd * w;
  precise float m = m_buf[i] * p.b1 + p.one_b1 * g;
  precise float v = v_buf[i] * p.b2 + p.one_b2 * g * g;
  m_buf[i] = m;
  v_buf[i] = v;
  if ((p.flags & 4u) != 0) {
    if (vmax_buf[i] < v || isnan(v)) vmax_buf[i] = v;
    v = vmax_buf[i];
  }
  precise float denom = sqrt(v) / p.bias2_sqrt + p.eps;
  precise float r = w + -p.step_size * m / denom;
  param[i] = r;
}
