#version 450
// One RMSprop step on a tensor, the CPU's float32 formulas in the same order
// (engine/train/optim.c rmsprop_tensor). Products and sums round as on the
// CPU (`precise`); the division and square root carry the driver's accuracy
// (docs/gpu.md).
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer PBuf { float param[]; };
layout(std430, binding = 1) readonly buffer GBuf { float grad[]; };
layout(std430, binding = 2) buffer MomBuf { float mom_buf[]; };
layout(std430, binding = 3) buffer SqBuf { float sq_buf[]; };
layout(std430, binding = 4) buffer GaBuf { float ga_buf[]; };
layout(push_constant) uniform Push {
  uint n, flags; // 1: maximize, 2: centered
  float a, one_a, eps, wd, mom, neg_lr;
} p;

void main() {
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  precise float g = (p.flags & 1u) != 0 ? -grad[i] : grad[i];
  if (p.wd != 0.0) g = g + p.wd * param[i];
  precise float sq = sq_buf[i] * p.a + p.one_a * g * g;
  sq_buf[i] = sq;
  precise float avg;
  if ((p.flags & 2u) != 0) {
    precise float ga = ga_buf[i] * p.a + p.one_a * g;
    ga_buf[i] = ga;
    avg = sqrt(sq + -1.0 * ga * ga);
  } else {
    avg = sqrt(sq);
  }
  avg = avg + p.eps;
  if (p.mom > 0.0) {
    precise float b = mom_buf[i] * p.mom + g / avg;
    mom_buf[i] = b;
    param[i] = param[i] + p.neg_lr * b;
  } else {
    precise float r = param[i] + p.neg_lr * g / avg;
    param[i] = r;
  }
}
