#version 450
// C (M×N) = op(A)·op(B) [+ C] [+ bias per column] [then an activation] for
// large float32 products, with the push constants and bindings of gemm.comp
// (so gpu_op_gemm fills one block for either). The host picks this kernel
// only where every operand can be read as whole vec4s: the leading
// dimensions, and the contiguous extent of each operand, multiples of 4
// (gpu-ops.c: tile_aligned); a vec4 then lies wholly inside or wholly
// outside the matrix.
//
// A workgroup of 256 invocations computes a 128×128 tile of C; each
// invocation an 8×8 block (rows ty·4…+3 and 64+ty·4…+3, columns likewise
// by tx), read from shared memory as vec4s. K goes by slices of BK = 8:
// while the tile multiplies one slice, the next is already loaded from
// global memory into registers and is stored into the other half of a
// double buffer, so each slice costs one barrier. Rows of the shared
// buffers are padded to 132 floats, so the transposing stores (operands
// whose k is contiguous) hit 32 different banks.
// Each output sums its K products in ascending k (one accumulator, slice
// after slice): the result depends only on the inputs and the device.
#extension GL_EXT_control_flow_attributes : enable
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer ABuf { vec4 a4[]; };
layout(std430, binding = 1) readonly buffer BBuf { vec4 b4[]; };
layout(std430, binding = 2) readonly buffer SBuf { float scale[]; }; // unused: B is float32 here
layout(std430, binding = 3) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 4) buffer CBuf { float c[]; };

layout(push_constant) uniform Push {
  uint M, N, K;
  uint lda, ldb, ldc;
  uint trans_a, trans_b, accumulate, has_bias, per_tensor;
  uint kind, nbits;
  uint act, tanh_gelu;
  float ap0, ap1;
} p;

#include "act.glsl"

const uint BM = 128u, BN = 128u, BK = 8u;
const uint ROW4 = 33u; // vec4s per shared row: 128 floats and 4 of padding

shared vec4 As[2][BK][ROW4];
shared vec4 Bs[2][BK][ROW4];

// One vec4 of an operand's slice k0…k0+7 × rows r0…r0+127 for invocation t.
// kmajor: the operand is stored with k contiguous (A untransposed, B
// transposed), so invocation t reads row t/2 at k offset 4·(t%2); else the
// rows are contiguous and invocation t reads k offset t/32 at rows 4·(t%32).
vec4 load_a(uint r0, uint k0, uint t) {
  if (p.trans_a == 0u) {
    uint r = r0 + (t >> 1), k = k0 + ((t & 1u) << 2);
    return r < p.M && k < p.K ? a4[(r * p.lda + k) >> 2] : vec4(0.0);
  }
  uint k = k0 + (t >> 5), r = r0 + ((t & 31u) << 2);
  return r < p.M && k < p.K ? a4[(k * p.lda + r) >> 2] : vec4(0.0);
}

vec4 load_b(uint r0, uint k0, uint t) {
  if (p.trans_b != 0u) {
    uint r = r0 + (t >> 1), k = k0 + ((t & 1u) << 2);
    return r < p.N && k < p.K ? b4[(r * p.ldb + k) >> 2] : vec4(0.0);
  }
  uint k = k0 + (t >> 5), r = r0 + ((t & 31u) << 2);
  return r < p.N && k < p.K ? b4[(k * p.ldb + r) >> 2] : vec4(0.0);
}

void store_a(uint buf, uint t, vec4 v) {
  if (p.trans_a == 0u) {
    uint r = t >> 1, k = (t & 1u) << 2;
    [[unroll]] for (uint i = 0u; i < 4u; i++) As[buf][k + i][r >> 2][r & 3u] = v[i];
  } else {
    As[buf][t >> 5][t & 31u] = v;
  }
}

void store_b(uint buf, uint t, vec4 v) {
  if (p.trans_b != 0u) {
    uint r = t >> 1, k = (t & 1u) << 2;
    [[unroll]] for (uint i = 0u; i < 4u; i++) Bs[buf][k + i][r >> 2][r & 3u] = v[i];
  } else {
    Bs[buf][t >> 5][t & 31u] = v;
  }
}

// Stores C[m][n … n+3] from v, with the accumulation, bias and activation.
void store4(uint m, uint n, vec4 v) {
  if (m >= p.M) return;
  for (uint j = 0u; j < 4u && n + j < p.N; j++) {
    float x = v[j];
    if (p.accumulate != 0u) x = c[m * p.ldc + n + j] + x;
    if (p.has_bias != 0u) x = x + bias[n + j];
    c[m * p.ldc + n + j] = p.act != 0u ? act_value(x, p.act - 1u, p.tanh_gelu, p.ap0, p.ap1) : x;
  }
}

void main() {
  uint t = gl_LocalInvocationID.x, tx = t & 15u, ty = t >> 4;
  uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  // acc[i][h]: row i of the invocation's 8 (i < 4: ty·4 + i, else 64 + ty·4 + i − 4),
  // columns h·64 + tx·4 … +3.
  vec4 acc[8][2];
  [[unroll]] for (uint i = 0u; i < 8u; i++) {
    acc[i][0] = vec4(0.0);
    acc[i][1] = vec4(0.0);
  }
  uint slices = (p.K + BK - 1u) / BK;
  store_a(0u, t, load_a(m0, 0u, t));
  store_b(0u, t, load_b(n0, 0u, t));
  barrier();
  for (uint s = 0u; s < slices; s++) {
    uint cur = s & 1u;
    bool more = s + 1u < slices;
    vec4 na = vec4(0.0), nb = vec4(0.0);
    if (more) {
      na = load_a(m0, (s + 1u) * BK, t);
      nb = load_b(n0, (s + 1u) * BK, t);
    }
    [[unroll]] for (uint kk = 0u; kk < BK; kk++) {
      vec4 a0 = As[cur][kk][ty], a1 = As[cur][kk][ty + 16u];
      vec4 b0 = Bs[cur][kk][tx], b1 = Bs[cur][kk][tx + 16u];
      [[unroll]] for (uint i = 0u; i < 4u; i++) {
        acc[i][0] += a0[i] * b0;
        acc[i][1] += a0[i] * b1;
        acc[i + 4u][0] += a1[i] * b0;
        acc[i + 4u][1] += a1[i] * b1;
      }
    }
    // The other half was last read in the previous slice, before its barrier.
    if (more) {
      store_a(cur ^ 1u, t, na);
      store_b(cur ^ 1u, t, nb);
    }
    barrier();
  }

  // Spelled out, so every index into acc is a constant: a loop over acc
  // that the compiler leaves rolled (its body, with the activation, is
  // large) makes acc an array in memory, and the products above with it.
  uint r = m0 + ty * 4u, col = n0 + tx * 4u;
  store4(r, col, acc[0][0]);
  store4(r, col + 64u, acc[0][1]);
  store4(r + 1u, col, acc[1][0]);
  store4(r + 1u, col + 64u, acc[1][1]);
  store4(r + 2u, col, acc[2][0]);
  store4(r + 2u, col + 64u, acc[2][1]);
  store4(r + 3u, col, acc[3][0]);
  store4(r + 3u, col + 64u, acc[3][1]);
  store4(r + 64u, col, acc[4][0]);
  store4(r + 64u, col + 64u, acc[4][1]);
  store4(r + 65u, col, acc[5][0]);
  store4(r + 65u, col + 64u, acc[5][1]);
  store4(r + 66u, col, acc[6][0]);
  store4(r + 66u, col + 64u, acc[6][1]);
  store4(r + 67u, col, acc[7][0]);
  store4(r + 67u, col + 64u, acc[7][1]);
}
