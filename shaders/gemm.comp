#version 450
// C (M×N) = op(A)·op(B) [+ C] [+ bias per column]: every matrix product of
// the dense layer (forward x·Wᵀ, input gradient dy·W, weight gradient dyᵀ·x).
// A is float32; B is float32 (BDTYPE 0) or packed (BDTYPE 1) at any other
// dtype, its kind and bits push constants, decoded here from
// exactly the CPU's packed layout (decode.glsl) with a scale per stored row
// (or one per tensor) for the scaled kinds.
// Each output sums its K products in ascending k, so a result depends only on
// the inputs and the device: runs are bit-identical.
// SMALL_M: one invocation per output and no shared memory, for products with
// few rows (a batch-1 forward is a matrix-vector product): nothing waits at a
// barrier, which is what a layer at batch 1 spends its time on otherwise.
// ROWDOT: few rows and B transposed (the forward x·Wᵀ, W stored out × in):
// one workgroup per output column n, its 64 invocations reading W's row n
// side by side (coalesced, where SMALL_M has each invocation walk a row of
// its own), each summing k ≡ t (mod 64) ascending for up to 8 rows of A,
// then a fixed tree: the order depends only on K, so runs are bit-identical.
#extension GL_EXT_control_flow_attributes : enable
#extension GL_GOOGLE_include_directive : require
#ifndef BDTYPE
#define BDTYPE 0
#endif

#if defined(SMALL_M) || defined(ROWDOT)
layout(local_size_x = 64) in;
#else
layout(local_size_x = 16, local_size_y = 16) in;
#endif

layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
#if BDTYPE == 0
layout(std430, binding = 1) readonly buffer BBuf { float b[]; };
#else
layout(std430, binding = 1) readonly buffer BBuf { uint bw[]; };
#endif
layout(std430, binding = 2) readonly buffer SBuf { float scale[]; };
layout(std430, binding = 3) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 4) buffer CBuf { float c[]; };

layout(push_constant) uniform Push {
  uint M, N, K;
  uint lda, ldb, ldc; // elements for float operands, bytes per stored row for packed B
  uint trans_a, trans_b, accumulate, has_bias, per_tensor;
  uint kind, nbits; // packed B (decode.glsl)
  uint act, tanh_gelu; // act > 0: store act.glsl's activation act − 1 of the result
  float ap0, ap1;
} p;

#include "act.glsl"

// The stored value of an output: with bias, then the fused activation.
float epilogue(float v) { return p.act != 0u ? act_value(v, p.act - 1u, p.tanh_gelu, p.ap0, p.ap1) : v; }

#if BDTYPE != 0
#include "decode.glsl"
#endif


float load_a(uint m, uint k) {
  if (m >= p.M || k >= p.K) return 0.0;
  return p.trans_a != 0 ? a[k * p.lda + m] : a[m * p.lda + k];
}

// Stored element (r, col) of B.
float stored_b(uint r, uint col) {
#if BDTYPE == 0
  return b[r * p.ldb + col];
#else
  return decode_weight(r, col, p.ldb, p.kind, p.nbits, p.per_tensor != 0);
#endif
}

float load_b(uint k, uint n) {
  if (k >= p.K || n >= p.N) return 0.0;
  return p.trans_b != 0 ? stored_b(n, k) : stored_b(k, n);
}

#ifdef ROWDOT
const uint MAXM = 8u;
shared float red[MAXM][64];

void main() {
  uint n = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x, t = gl_LocalInvocationID.x;
  if (n >= p.N) return; // whole workgroup: uniform control flow
  float acc[MAXM];
  [[unroll]] for (uint m = 0; m < MAXM; m++) acc[m] = 0.0;
  // Four strides at a time: their loads are issued together and wait for
  // memory once, where a loop of single strides waits once per stride (at
  // batch 1 the kernel is that wait). The additions keep the order of single
  // strides.
  uint k = t;
  for (; k + 192u < p.K; k += 256u) {
    float w0 = stored_b(n, k), w1 = stored_b(n, k + 64u), w2 = stored_b(n, k + 128u), w3 = stored_b(n, k + 192u);
    [[unroll]] for (uint m = 0; m < MAXM; m++)
      if (m < p.M) {
        uint r = m * p.lda + k;
        float x0 = a[r], x1 = a[r + 64u], x2 = a[r + 128u], x3 = a[r + 192u];
        acc[m] = (((acc[m] + x0 * w0) + x1 * w1) + x2 * w2) + x3 * w3;
      }
  }
  for (; k < p.K; k += 64u) {
    float w = stored_b(n, k);
    [[unroll]] for (uint m = 0; m < MAXM; m++)
      if (m < p.M) acc[m] += a[m * p.lda + k] * w;
  }
  // Only the M rows in use go through shared memory: at batch 1 that is
  // one row, not eight.
  [[unroll]] for (uint m = 0; m < MAXM; m++)
    if (m < p.M) red[m][t] = acc[m];
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s)
      [[unroll]] for (uint m = 0; m < MAXM; m++)
        if (m < p.M) red[m][t] = red[m][t] + red[m][t + s];
    barrier();
  }
  if (t < p.M) {
    float v = red[t][0];
    if (p.accumulate != 0) v = c[t * p.ldc + n] + v;
    if (p.has_bias != 0) v = v + bias[n];
    c[t * p.ldc + n] = epilogue(v);
  }
}
#elif defined(SMALL_M)
void main() {
  uint n = gl_GlobalInvocationID.x, m = gl_WorkGroupID.y;
  if (n >= p.N || m >= p.M) return;
  float acc = 0.0;
  for (uint k = 0; k < p.K; k++) acc += load_a(m, k) * load_b(k, n);
  float v = acc;
  if (p.accumulate != 0) v = c[m * p.ldc + n] + v;
  if (p.has_bias != 0) v = v + bias[n];
  c[m * p.ldc + n] = epilogue(v);
}
#else
const uint BM = 64, BN = 64, BK = 16;

// Stores C[m][n + 16·j] = v[j] (j < 4), with the accumulation, bias and activation.
void store_row(uint m, uint n, vec4 v) {
  if (m >= p.M) return;
  for (uint j = 0u; j < 4u && n + 16u * j < p.N; j++) {
    uint o = n + 16u * j;
    float x = v[j];
    if (p.accumulate != 0) x = c[m * p.ldc + o] + x;
    if (p.has_bias != 0) x = x + bias[o];
    c[m * p.ldc + o] = epilogue(x);
  }
}
shared float As[BK][BM];
shared float Bs[BK][BN];

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint t = ty * 16u + tx;
  uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  float acc[4][4];
  [[unroll]] for (uint i = 0; i < 4; i++)
    [[unroll]] for (uint j = 0; j < 4; j++) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    [[unroll]] for (uint q = 0; q < 4; q++) {
      uint e = t + 256u * q;
      // A tile: consecutive threads walk k (row-major A) — good enough for both layouts.
      uint am = e / BK, ak = e % BK;
      As[ak][am] = load_a(m0 + am, k0 + ak);
      uint bk = e / BN, bn = e % BN;
      Bs[bk][bn] = load_b(k0 + bk, n0 + bn);
    }
    barrier();
    [[unroll]] for (uint kk = 0; kk < BK; kk++) {
      float av[4], bv[4];
      [[unroll]] for (uint i = 0; i < 4; i++) av[i] = As[kk][ty + 16u * i];
      [[unroll]] for (uint j = 0; j < 4; j++) bv[j] = Bs[kk][tx + 16u * j];
      [[unroll]] for (uint i = 0; i < 4; i++)
        [[unroll]] for (uint j = 0; j < 4; j++) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }

  // Row by row with constant indices into acc: a rolled loop over acc
  // (its body, with the activation, is large) would put acc in memory.
  store_row(m0 + ty, n0 + tx, vec4(acc[0][0], acc[0][1], acc[0][2], acc[0][3]));
  store_row(m0 + ty + 16u, n0 + tx, vec4(acc[1][0], acc[1][1], acc[1][2], acc[1][3]));
  store_row(m0 + ty + 32u, n0 + tx, vec4(acc[2][0], acc[2][1], acc[2][2], acc[2][3]));
  store_row(m0 + ty + 48u, n0 + tx, vec4(acc[3][0], acc[3][1], acc[3][2], acc[3][3]));
}
#endif
