// Decoding one weight from the CPU's packed layout (docs/dtypes.md "Codes
// and packing"): code i of a row occupies bits [i·n, i·n + n) of the row,
// LSB-first in little-endian bytes, rows padded to a byte, the buffer to a
// 32-bit word. Every dtype has n ∈ {1, 2, 4, 8, 16, 32, 64}, so a code of
// at most 32 bits never straddles a 32-bit word and a 64-bit code is two
// whole words. The includer declares
//   buffer { uint bw[]; }  (the packed bytes)  and  buffer { float scale[]; }.
// Kinds (engine/gpu/gpu-ops.c gpu_decode_kind):
//   0 signed two's complement (int64/32/16/8/4/2, ternary)   q·s
//   1 unsigned (uint64/32/16/8/4/2)                          q·s
//   2 binary: bit 0 → +1, 1 → −1                             ±s
//   3 float16   4 bfloat16   5 fp8-e4m3   6 fp8-e5m2   7 fp4 (e2m1): the code's value
//   9 float64: the code's value rounded once to float32
// Codes below 2^24: float(q)·s is exact before its one rounding, as the
// CPU's float32(double(q)·double(s)); the float formats' values are all
// float32 values, decoded exactly. The 32- and 64-bit codes are decoded
// with integer arithmetic only (no doubles, no 64-bit integers in the
// shader): each rounding the CPU makes is made here on the exact integer
// significand (decode_wide), so the result is the CPU's bit for bit.
// The kernels are compiled twice: with WIDE_CODES for the 32/64-bit codes
// and float64 only, without it for the rest. Where both paths share one
// kernel, a software device (lavapipe) runs the wide path masked for every
// weight whatever the kind (its int8 products took 4× as long), and a GPU
// pays the wide path's registers.

#ifdef WIDE_CODES

// ---- 96-bit unsigned integers, x the low word --------------------------------

uvec3 shr96(uvec3 v, uint n) {
  if (n >= 96u) return uvec3(0u);
  if (n >= 64u) return uvec3(v.z >> (n - 64u), 0u, 0u);
  if (n >= 32u) {
    v = uvec3(v.y, v.z, 0u);
    n -= 32u;
  }
  if (n == 0u) return v;
  return uvec3((v.x >> n) | (v.y << (32u - n)), (v.y >> n) | (v.z << (32u - n)), v.z >> n);
}

uvec3 shl96(uvec3 v, uint n) {
  if (n >= 96u) return uvec3(0u);
  if (n >= 64u) return uvec3(0u, 0u, v.x << (n - 64u));
  if (n >= 32u) {
    v = uvec3(0u, v.x, v.y);
    n -= 32u;
  }
  if (n == 0u) return v;
  return uvec3(v.x << n, (v.y << n) | (v.x >> (32u - n)), (v.z << n) | (v.y >> (32u - n)));
}

int msb96(uvec3 v) {
  if (v.z != 0u) return 64 + findMSB(v.z);
  if (v.y != 0u) return 32 + findMSB(v.y);
  return findMSB(v.x); // -1 for 0
}

// m·2^e rounded to nearest, ties to even, to p significant bits, its unit
// not below 2^emin (a format's subnormals): afterwards m < 2^p (or m = 2^p
// after a carry) and either m ≥ 2^(p−1) or e = emin. Exact integers, so
// this is the IEEE rounding of the exact value m·2^e.
void round96(inout uvec3 m, inout int e, int p, int emin) {
  int top = msb96(m);
  if (top < 0) return;
  int sh = max(top - (p - 1), emin - e);
  if (sh <= 0) { // fewer bits than p: exact, normalized
    m = shl96(m, uint(-sh));
    e += sh;
    return;
  }
  uint n = uint(sh);
  bool at_half = n <= 96u && ((shr96(m, n - 1u).x & 1u) != 0u);
  bool below = n > 1u && (n - 1u >= 96u ? any(notEqual(m, uvec3(0u))) : any(notEqual(shl96(m, 97u - n), uvec3(0u))));
  m = shr96(m, n);
  e += sh;
  if (at_half && (below || (m.x & 1u) != 0u)) {
    uint c0, c1;
    m.x = uaddCarry(m.x, 1u, c0);
    m.y = uaddCarry(m.y, c0, c1);
    m.z += c1;
  }
}

// ±m·2^e rounded once to float32 (subnormals kept, overflow to ±inf).
float float_of96(uvec3 m, int e, bool negative) {
  round96(m, e, 24, -149);
  uint sign = negative ? 0x80000000u : 0u;
  if (m.x == 0u) return uintBitsToFloat(sign);
  int biased = e + 149; // m < 2^23 only at e = −149: a subnormal, whose bits are m
  if (biased > 254) return uintBitsToFloat(sign | 0x7F800000u);
  uint bits = (uint(biased) << 23) + m.x; // m's leading bit adds the exponent's last 1
  return uintBitsToFloat(sign | min(bits, 0x7F800000u));
}

// float64 (hi:lo its two words) → float32, one rounding as C's (float)d:
// NaN keeps its sign and its payload's top bits, quiet (x86's cvtsd2ss).
float decode_float64(uint lo, uint hi) {
  bool negative = (hi >> 31) != 0u;
  uint e = (hi >> 20) & 0x7FFu, mh = hi & 0xFFFFFu;
  if (e == 0x7FFu) {
    uint sign = hi & 0x80000000u;
    if (mh == 0u && lo == 0u) return uintBitsToFloat(sign | 0x7F800000u);
    return uintBitsToFloat(sign | 0x7FC00000u | (mh << 3) | (lo >> 29));
  }
  // A subnormal double (e = 0) is below 2^-1022: it rounds to ±0 as well.
  uvec3 m = uvec3(lo, e == 0u ? mh : (mh | 0x100000u), 0u);
  return float_of96(m, (e == 0u ? 1 : int(e)) - 1075, negative);
}

// q·s for a 32- or 64-bit code q (hi:lo, hi the sign extension for 32
// bits), as the CPU's float32(double(q)·double(s)): double(q) rounds a
// 64-bit q to 53 bits, the double product rounds the exact product of that
// and s's 24-bit significand to 53 bits, and the cast rounds it to float32:
// three roundings, each made here on exact integers in the same order (a
// single rounding of the exact q·s would differ where the 53-bit result
// lands on a float32 tie).
float decode_wide(uint lo, uint hi, bool is_signed, bool wide64, float s) {
  bool negative = is_signed && int(hi) < 0;
  if (negative) {
    hi = ~hi + (lo == 0u ? 1u : 0u);
    lo = ~lo + 1u;
  }
  uint sb = floatBitsToUint(s);
  bool s_negative = (sb >> 31) != 0u; // −0: the CPU's product is −0 or +0 as here
  uint se = (sb >> 23) & 0xFFu, sm = sb & 0x7FFFFFu;
  if (se == 0xFFu) // not a valid scale (docs/dtypes.md), but as the CPU: NaN or ±inf
    return (sm != 0u || (lo | hi) == 0u) ? uintBitsToFloat(0x7FC00000u)
                                         : uintBitsToFloat((negative != s_negative ? 0x80000000u : 0u) | 0x7F800000u);
  if (se != 0u) sm |= 0x800000u;
  uvec3 q = uvec3(lo, hi, 0u);
  int e = 0;
  if (wide64) round96(q, e, 53, -1074); // double(q); < 2^53 or exactly 2^53: two words
  uint h0, l0, h1, l1, c;
  umulExtended(q.x, sm, h0, l0);
  umulExtended(q.y, sm, h1, l1);
  uint mid = uaddCarry(h0, l1, c);
  uvec3 prod = uvec3(l0, mid, h1 + c);
  e += (se == 0u ? 1 : int(se)) - 150;
  round96(prod, e, 53, -1074); // the double product
  return float_of96(prod, e, negative != s_negative);
}

float decode_weight(uint r, uint col, uint ldb, uint kind, uint nbits, bool per_tensor) {
  // Whole words: no bit offset, and no overflow of col·nbits.
  uint w = (r * ldb + col * (nbits >> 3)) >> 2;
  uint lo = bw[w], hi = nbits == 64u ? bw[w + 1u] : 0u;
  if (kind == 9u) return decode_float64(lo, hi);
  if (nbits == 32u && kind == 0u) hi = int(lo) < 0 ? 0xFFFFFFFFu : 0u;
  return decode_wide(lo, hi, kind == 0u, nbits == 64u, scale[per_tensor ? 0u : r]);
}
#else
float decode_weight(uint r, uint col, uint ldb, uint kind, uint nbits, bool per_tensor) {
  // col·nbits in two parts: a whole row of 2^28 16-bit codes would overflow it.
  uint bit = (col & 7u) * nbits;
  uint byte_index = r * ldb + (col >> 3) * nbits + (bit >> 3);
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
#endif
