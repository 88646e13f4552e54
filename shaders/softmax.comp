#version 450
// y = softmax(scale·x) over each row of `cols` entries; one workgroup a row
// (scale: 1 / temperature). masked != 0 (masked_softmax): row r keeps the
// entries where row r % keep_rows of `keep` is 1; the others are left out
// of the maximum and the sum and get 0, as engine/layers/softmax-rows.c.
// backward != 0: dx = scale · y ⊙ (dy − ⟨y, dy⟩) from the forward's output y
// (binding 0), as engine/layers/softmax-rows.c; a masked entry's y is 0, so
// it needs no mask.
// The maximum and the sums reduce through a fixed tree in shared memory, so
// the order depends only on cols: runs are bit-identical.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer DyBuf { float dy[]; };
layout(std430, binding = 2) writeonly buffer YBuf { float y[]; };
layout(std430, binding = 3) readonly buffer KeepBuf { float keep[]; };
layout(push_constant) uniform Push { uint rows, cols; float scale; uint backward, masked, keep_rows; } p;

shared float red[64];

void main() {
  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= p.rows) return; // whole workgroup: uniform control flow
  uint t = gl_LocalInvocationID.x, base = row * p.cols;
  if (p.backward != 0) {
    float dot = 0.0;
    for (uint i = t; i < p.cols; i += 64u) dot += x[base + i] * dy[base + i];
    red[t] = dot;
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1) {
      if (t < s) red[t] = red[t] + red[t + s];
      barrier();
    }
    dot = red[0];
    for (uint i = t; i < p.cols; i += 64u) y[base + i] = p.scale * x[base + i] * (dy[base + i] - dot);
    return;
  }
  uint kbase = p.masked != 0u ? (row % p.keep_rows) * p.cols : 0u;
  float m = -3.402823466e38;
  for (uint i = t; i < p.cols; i += 64u)
    if (p.masked == 0u || keep[kbase + i] != 0.0) m = max(m, p.scale * x[base + i]);
  red[t] = m;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) red[t] = max(red[t], red[t + s]);
    barrier();
  }
  m = red[0];
  barrier();
  float sum = 0.0;
  for (uint i = t; i < p.cols; i += 64u)
    if (p.masked == 0u || keep[kbase + i] != 0.0) sum += exp(p.scale * x[base + i] - m);
  red[t] = sum;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) red[t] = red[t] + red[t + s];
    barrier();
  }
  float inv = 1.0 / red[0];
  for (uint i = t; i < p.cols; i += 64u)
    y[base + i] = p.masked == 0u || keep[kbase + i] != 0.0 ? exp(p.scale * x[base + i] - m) * inv : 0.0;
}
