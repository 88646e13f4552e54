// Decoding one weight from the CPU's packed layout (docs/dtypes.md "Codes
// and packing"): code i of a row occupies bits [i·n, i·n + n) of the row,
// LSB-first in little-endian bytes, rows padded to a byte, the buffer to a
// 32-bit word. Every dtype of at most 16 bits has n ∈ {1, 2, 4, 8, 16}, so a
// code never straddles a 32-bit word. The includer declares
//   buffer { uint bw[]; }  (the packed bytes)  and  buffer { float scale[]; }.
// Kinds (engine/gpu/gpu-ops.c gpu_decode_kind):
//   0 signed two's complement (int16/8/4/2, ternary)   q·s
//   1 unsigned (uint16/8/4/2)                          q·s
//   2 binary: bit 0 → +1, 1 → −1                       ±s
//   3 float16   4 bfloat16   5 fp8-e4m3   6 fp8-e5m2   7 fp4 (e2m1): the code's value
// float(q)·s is exact before its one rounding (|q| < 2^24), as the CPU's
// float32(double(q)·double(s)); the float formats' values are all float32
// values, decoded exactly.
float decode_weight(uint r, uint col, uint ldb, uint kind, uint nbits, bool per_tensor) {
  uint bit = col * nbits;
  uint byte_index = r * ldb + (bit >> 3);
  uint shift = (byte_index & 3u) * 8u + (bit & 7u);
  uint word = bw[byte_index >> 2];
  float s = scale[per_tensor ? 0u : r];
  if (kind == 0u) return float(bitfieldExtract(int(word), int(shift), int(nbits))) * s;
  uint code = bitfieldExtract(word, int(shift), int(nbits));
  if (kind == 1u) return float(code) * s;
  if (kind == 2u) return code == 0u ? s : -s;
  if (kind == 3u) return unpackHalf2x16(code).x;
  if (kind == 4u) return uintBitsToFloat(code << 16);
  if (kind == 6u) return unpackHalf2x16(code << 8).x; // E5M2 is binary16's top byte
  float sign = (code & (1u << (nbits - 1u))) != 0u ? -1.0 : 1.0;
  if (kind == 5u) { // E4M3FN: bias 7, no infinities, S.1111.111 is NaN
    uint e = (code >> 3) & 15u, m = code & 7u;
    if (e == 15u && m == 7u) return uintBitsToFloat(0x7FC00000u);
    return sign * (e == 0u ? ldexp(float(m), -9) : ldexp(float(8u + m), int(e) - 10));
  }
  // fp4 E2M1: bias 1, values ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}
  uint e = (code >> 1) & 3u, m = code & 1u;
  return sign * (e == 0u ? 0.5 * float(m) : ldexp(float(2u + m), int(e) - 2));
}
