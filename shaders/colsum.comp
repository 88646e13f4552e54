#version 450
// sums[c] += Σ_r x[r·cols + c], rows in ascending order: the bias gradient
// of the dense layer, summed in the same order as the CPU (engine/layers/dense.c).
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) buffer SumBuf { float sums[]; };
layout(push_constant) uniform Push { uint rows, cols; } p;

void main() {
  uint col = gl_GlobalInvocationID.x;
  if (col >= p.cols) return;
  precise float s = sums[col];
  for (uint r = 0; r < p.rows; r++) s = s + x[r * p.cols + col];
  sums[col] = s;
}
