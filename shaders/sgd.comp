#version 450
// One SGD step on a tensor, the CPU's float32 formulas in the same order
// (engine/train/optim.c sgd_tensor); `precise` forbids fused multiply-adds
// so every operation rounds as on the CPU.
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer PBuf { float param[]; };
layout(std430, binding = 1) readonly buffer GBuf { float grad[]; };
layout(std430, binding = 2) buffer MBuf { float mom_buf[]; };
layout(push_constant) uniform Push {
  uint n, flags; // 1: first step with momentum, 2: nesterov, 4: maximize
  float neg_lr, wd, mom, damp1;
} p;

void main() {
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  precise float d = (p.flags & 4u) != 0 ? -grad[i] : grad[i];
  if (p.wd != 0.0) d = d + p.wd * param[i];
  if (p.mom != 0.0) {
    precise float b = (p.flags & 1u) != 0 ? d : mom_buf[i] * p.mom + p.damp1 * d;
    mom_buf[i] = b;
    d = (p.flags & 2u) != 0 ? d + p.mom * b : b;
  }
  precise float r = param[i] + p.neg_lr * d;
  param[i] = r;
}
