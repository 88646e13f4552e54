#version 450
// Element-wise activations and their derivatives (act.glsl holds the
// formulas): out = act(x), or out = dy ⊙ act'(x) with backward.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer DyBuf { float dy[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float outv[]; };
layout(push_constant) uniform Push {
  uint n, kind, backward, tanh_gelu;
  float p0, p1;
} p;

#include "act.glsl"

void main() {
  // A 2-D grid of workgroups lifts the 65535 limit of one dimension.
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  float v = x[i];
  outv[i] = p.backward != 0 ? dy[i] * act_derivative(v, p.kind, p.tanh_gelu, p.p0, p.p1)
                            : act_value(v, p.kind, p.tanh_gelu, p.p0, p.p1);
}
