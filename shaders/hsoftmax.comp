#version 450
// hierarchical_softmax over each row of `logits` entries; one workgroup a
// row (engine/layers/hierarchical-softmax.c). `tree` holds the children
// count of every inner node, breadth first (`blocks` of them; block k ≥ 1
// holds the children of the node with logit k − 1), then for each logit
// the logit of its parent (0xffffffff: the root). `aux` keeps three rows
// of `logits` a row of the batch: q (each block's softmax), P (path
// probabilities) and U (the expected upstream gradient).
// Forward: block by block in order, q = softmax of the block (max, then
// the sum of exp(x − max) through a fixed tree), P_c = P_parent·q_c (the
// parent's P is final: it lies in an earlier block); y = the leaves' P.
// backward != 0: from the q and P its forward left in aux (the CPU
// recomputes them from x, the same values), U of the leaves = dy, then
// block by block in reverse U_parent = Σ_c q_c·U_c, and
// dx_c = P_c·(U_c − U_parent(c)).
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer DyBuf { float dy[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float outv[]; };
layout(std430, binding = 3) coherent buffer AuxBuf { float aux[]; };
layout(std430, binding = 4) readonly buffer TreeBuf { uint tree[]; };
layout(push_constant) uniform Push { uint rows, logits, leaves, blocks, backward; } p;

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

void main() {
  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= p.rows) return; // whole workgroup: uniform control flow
  uint t = gl_LocalInvocationID.x, base = row * p.logits;
  uint q0 = 3u * base, p0 = q0 + p.logits, u0 = p0 + p.logits, first_leaf = p.logits - p.leaves;
  if (p.backward == 0u) {
    uint start = 0u;
    for (uint k = 0u; k < p.blocks; k++) {
      uint len = tree[k];
      float m = -3.402823466e38;
      for (uint i = t; i < len; i += 64u) m = max(m, x[base + start + i]);
      m = tree_max(t, m);
      float s = 0.0;
      for (uint i = t; i < len; i += 64u) s += exp(x[base + start + i] - m);
      s = tree_sum(t, s);
      float parent = k > 0u ? aux[p0 + k - 1u] : 1.0;
      for (uint i = t; i < len; i += 64u) {
        float q = exp(x[base + start + i] - m) / s;
        aux[q0 + start + i] = q;
        aux[p0 + start + i] = k > 0u ? parent * q : q;
      }
      memoryBarrierBuffer();
      barrier();
      start += len;
    }
    for (uint i = t; i < p.leaves; i += 64u) outv[row * p.leaves + i] = aux[p0 + first_leaf + i];
    return;
  }
  for (uint i = t; i < p.leaves; i += 64u) aux[u0 + first_leaf + i] = dy[row * p.leaves + i];
  memoryBarrierBuffer();
  barrier();
  uint end = p.logits;
  float u_root = 0.0;
  for (uint kk = p.blocks; kk > 0u; kk--) {
    uint k = kk - 1u, len = tree[k], begin = end - len;
    float s = 0.0;
    for (uint c = begin + t; c < end; c += 64u) s += aux[q0 + c] * aux[u0 + c];
    s = tree_sum(t, s);
    if (k > 0u && t == 0u) aux[u0 + k - 1u] = s;
    u_root = s; // the last one (k = 0) is the root's
    memoryBarrierBuffer();
    barrier();
    end = begin;
  }
  for (uint c = t; c < p.logits; c += 64u) {
    uint par = tree[p.blocks + c];
    float up = par == 0xffffffffu ? u_root : aux[u0 + par];
    outv[base + c] = aux[p0 + c] * (aux[u0 + c] - up);
  }
}
