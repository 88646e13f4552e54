#version 450
// The combine modes of a parallel container beyond concat/add/avg
// (engine/layers/parallel.c), one branch i of n per dispatch, for every
// sample b of the batch:
//   mode 0, mix:     dst[b·dst_stride + j] (= or +=) w[b·w_stride + (j / part)·n + i] · src[b·src_stride + j],
//                    j < len: filter (w: the gate's softmax, part = len) and
//                    route (w: the gate's probabilities, one row of n per
//                    head, part = len / heads) add the branches up in branch
//                    order, as the CPU's acc += p·out; the backward's share
//                    of a branch is the same product of dy.
//   mode 1, dot:     dst[(b·heads + h)·n + i] = Σ_{j < part} dy[b·src_stride + h·part + j] · src[…],
//                    one invocation a (b, h), j ascending. The CPU sums in
//                    double; here the products and the sum are compensated
//                    (TwoProduct through fma and TwoSum), a float result as
//                    close as the CPU's rounded double in all but rare cases.
//   mode 2, softmax backward of filter: per sample, w the probabilities, dy
//                    the dot products dp: dst[b·n + i] = w_i·(dp_i − Σ_k w_k·dp_k).
//   mode 3, scatter: grid_scatter's tile: dst[b·dst_stride + tile(j)] = src[b·src_stride + j]
//   mode 4, gather:  its backward:        dst[b·dst_stride + j] = src[b·src_stride + tile(j)]
//                    tile(j) = off + (q + (q / tile_h)·skip)·pitch + j % tile_w, q = j / tile_w.
// Every output element has one writer: no atomics, runs bit-identical.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer SrcBuf { float src[]; };
layout(std430, binding = 1) readonly buffer WBuf { float w[]; };
layout(std430, binding = 2) readonly buffer DyBuf { float dy[]; };
layout(std430, binding = 3) buffer DstBuf { float dst[]; };
layout(push_constant) uniform Push {
  uint mode, batch, len, n, i, heads, part, src_stride, dst_stride, w_stride, add;
  uint tile_w, tile_h, skip, pitch, off;
} p;

void two_sum(float a, float b, out float s, out float e) {
  precise float t = a + b;
  precise float bv = t - a;
  precise float av = t - bv;
  precise float r = (a - av) + (b - bv);
  s = t;
  e = r;
}

void main() {
  uint idx = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  if (p.mode == 0u) {
    if (idx >= p.batch * p.len) return;
    uint b = idx / p.len, j = idx % p.len;
    uint o = b * p.dst_stride + j;
    precise float v = w[b * p.w_stride + (j / p.part) * p.n + p.i] * src[b * p.src_stride + j];
    precise float s = p.add != 0u ? dst[o] + v : v;
    dst[o] = s;
  } else if (p.mode == 1u) {
    if (idx >= p.batch * p.heads) return;
    uint b = idx / p.heads, h = idx % p.heads, base = b * p.src_stride + h * p.part;
    float hi = 0.0, lo = 0.0;
    for (uint j = 0u; j < p.part; j++) {
      float a = dy[base + j], c = src[base + j];
      precise float prod = a * c;
      precise float perr = fma(a, c, -prod);
      float s, e;
      two_sum(hi, prod, s, e);
      hi = s;
      precise float l = lo + (e + perr);
      lo = l;
    }
    precise float r = hi + lo;
    dst[(b * p.heads + h) * p.n + p.i] = r;
  } else if (p.mode == 2u) {
    if (idx >= p.batch) return;
    uint base = idx * p.n;
    float hi = 0.0, lo = 0.0;
    for (uint k = 0u; k < p.n; k++) {
      float a = w[base + k], c = dy[base + k];
      precise float prod = a * c;
      precise float perr = fma(a, c, -prod);
      float s, e;
      two_sum(hi, prod, s, e);
      hi = s;
      precise float l = lo + (e + perr);
      lo = l;
    }
    precise float dot = hi + lo;
    for (uint k = 0u; k < p.n; k++) {
      precise float g = w[base + k] * (dy[base + k] - dot);
      dst[base + k] = g;
    }
  } else {
    if (idx >= p.batch * p.len) return;
    uint b = idx / p.len, j = idx % p.len, q = j / p.tile_w;
    uint t = p.off + (q + (q / p.tile_h) * p.skip) * p.pitch + j % p.tile_w;
    if (p.mode == 3u) dst[b * p.dst_stride + t] = src[b * p.src_stride + j];
    else dst[b * p.dst_stride + j] = src[b * p.src_stride + t];
  }
}
