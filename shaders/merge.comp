#version 450
// One segment of a remote link's merge (engine/net/exec.c), for every
// sample b of the batch:
//   dst[b·dst_stride + dst_off + j] (= or +=) src[b·src_stride + src_off + j],  j < len
// The forward builds a merged input from the spine input and the link
// sources (copy, add, concat); the backward adds the merged input's gradient
// back into theirs; a parallel container's avg divides the last sum by its
// branch count (divide > 0). Each output element has one writer per dispatch, so
// there is no race and no atomics: runs are bit-identical.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer SrcBuf { float src[]; };
layout(std430, binding = 1) buffer DstBuf { float dst[]; };
layout(push_constant) uniform Push { uint batch, len, src_stride, src_off, dst_stride, dst_off, add, divide; } p;

void main() {
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  if (i >= p.batch * p.len) return;
  uint b = i / p.len, j = i % p.len;
  float v = src[b * p.src_stride + p.src_off + j];
  uint o = b * p.dst_stride + p.dst_off + j;
  precise float s = p.add != 0u ? dst[o] + v : v;
  if (p.divide != 0u) s = s / float(p.divide);
  dst[o] = s;
}
