/*
 * The device's decode of packed weights (shaders/decode.glsl) against the
 * CPU's loom_dtype_decode, bit for bit: every code of each dtype of at most
 * 16 bits; for float64 and the 32/64-bit integers, boundary codes (0, ±1,
 * the range's ends, powers of two and their neighbours, float32 rounding
 * ties and the codes around them, codes whose double product lands on a
 * float32 tie, float64 subnormals, ±inf, NaN, −0) and random codes, with
 * scales from the smallest subnormal to FLT_MAX. Two kernels read them: a
 * product with one column (K = 1, x = 1: the sum starts from +0, so −0
 * comes back as +0) and the embedding lookup (a plain store: −0 and NaN
 * payloads come back as decoded, three codes a row so the codes sit at
 * offsets within a row).
 */
#include <float.h>

#include "gpu-test.h"
#include "loom/loom.h"

static loom_gpu *gpu;

__extension__ typedef unsigned __int128 u128; /* exact products of up to 88 bits */

typedef struct {
  uint64_t *code;
  float *scale;
  int64_t n, cap;
} code_set;

static void add(code_set *c, uint64_t code, float scale) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 4096;
    c->code = g_renew(uint64_t, c->code, c->cap);
    c->scale = g_renew(float, c->scale, c->cap);
  }
  c->code[c->n] = code;
  c->scale[c->n++] = scale;
}

static uint64_t rng_next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static float f32_of(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static uint64_t bits_of_double(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

/* The device's decoded values of set c at dtype d: through the product
 * (out_gemm, one code a row) and through the embedding (out_embed, `cols`
 * codes a row, each row's scale that of its first code). */
static void decode_on_device(loom_dtype d, const code_set *c, int64_t cols, float *out_gemm, float *out_embed) {
  loom_error err = {0};
  for (int pass = 0; pass < 2; pass++) {
    int64_t per_row = pass == 0 ? 1 : cols, rows = (c->n + per_row - 1) / per_row;
    int64_t rb = (int64_t)loom_dtype_row_bytes(d, per_row);
    gpu_weights w = {.dtype = d, .rows = rows, .cols = per_row, .ld = (uint32_t)rb};
    gpu_test_buf(gpu, &w.data, NULL, (rows * rb + 3) / 4);
    gpu_test_buf(gpu, &w.scales, NULL, rows);
    memset(w.data.map, 0, (size_t)(rows * rb + 3) / 4 * 4);
    for (int64_t i = 0; i < c->n; i++)
      loom_dtype_code_set(d, (uint8_t *)w.data.map + (i / per_row) * rb, i % per_row, c->code[i]);
    for (int64_t r = 0; r < rows; r++) ((float *)w.scales.map)[r] = c->scale[r * per_row];
    gpu_buf x, y;
    gpu_test_buf(gpu, &x, NULL, rows);
    gpu_test_buf(gpu, &y, NULL, rows * per_row);
    gpu_rec rec;
    int rc = gpu_rec_begin(gpu, 1, &rec, &err);
    if (pass == 0) {
      ((float *)x.map)[0] = 1.0f;
      gpu_gemm op = {.a = &x, .lda = 1, .b = &w, .tb = true, .c = &y, .ldc = (uint32_t)rows, .m = 1, .n = rows, .k = 1};
      if (!rc) rc = gpu_op_gemm(&rec, &op, &err);
    } else {
      for (int64_t r = 0; r < rows; r++) ((float *)x.map)[r] = (float)r;
      if (!rc) rc = gpu_op_embed(&rec, &w, &x, NULL, &y, rows, &err);
    }
    if (rc || gpu_rec_end(&rec, &err) || gpu_rec_submit(&rec, &err)) g_error("%s", err.message);
    memcpy(pass == 0 ? out_gemm : out_embed, y.map, (size_t)c->n * sizeof(float));
    gpu_rec_free(&rec);
    gpu_buf_free(gpu, &x);
    gpu_buf_free(gpu, &y);
    gpu_weights_free(gpu, &w);
  }
}

/* Asserts the device's values equal the CPU's. through_sum: the product's
 * +0 + w (−0 → +0; NaN: any NaN). Otherwise bit for bit, NaN included. A
 * device that flushes float32 subnormals in arithmetic (NVIDIA does) may
 * give ±0 for a subnormal; a software device (lavapipe) may not. Returns
 * how many came back flushed. */
static int64_t compare(const char *what, loom_dtype d, const code_set *c, const float *got, const float *want,
                       bool through_sum) {
  int64_t flushed = 0;
  bool may_flush = loom_gpu_info(gpu)->kind != LOOM_GPU_CPU;
  for (int64_t i = 0; i < c->n; i++) {
    float w = through_sum ? want[i] + 0.0f : want[i];
    bool same = through_sum && isnan(w) ? isnan(got[i]) != 0 : memcmp(&w, &got[i], 4) == 0;
    if (!same && may_flush && fpclassify(w) == FP_SUBNORMAL && got[i] == 0.0f) {
      same = true;
      flushed++;
    }
    if (!same) {
      uint32_t gb, wb;
      memcpy(&gb, &got[i], 4);
      memcpy(&wb, &w, 4);
      g_error("%s %s, code 0x%016llx scale %a: %a (0x%08x) on the device, %a (0x%08x) on the CPU", loom_dtype_name(d),
              what, (unsigned long long)c->code[i], (double)c->scale[i], (double)got[i], gb, (double)w, wb);
    }
  }
  return flushed;
}

/* m·2^e rounded once to float32 (nearest, ties to even): the single
 * rounding of the exact product, which the CPU's double product followed
 * by the cast to float is not always. */
static float round_once(u128 m, int e, bool negative) {
  if (m == 0) return negative ? -0.0f : 0.0f;
  uint64_t hi = (uint64_t)(m >> 64);
  int top = hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)m);
  int sh = MAX(top - 23, -149 - e);
  if (sh > 0) {
    u128 q = sh >= 128 ? 0 : m >> sh;
    bool half = sh <= 128 && ((m >> (sh - 1)) & 1);
    bool below = sh > 1 && (sh - 1 >= 128 ? m != 0 : (m & (((u128)1 << (sh - 1)) - 1)) != 0);
    if (half && (below || (q & 1))) q++;
    m = q;
    e += sh;
  }
  float f = (float)ldexp((double)(uint64_t)m, e);
  return negative ? -f : f;
}

/* The value of a scaled code as a sign and a magnitude. */
static uint64_t magnitude(const loom_dtype_traits *t, uint64_t code, bool *negative) {
  *negative = false;
  if (t->kind == LOOM_DTYPE_KIND_UNSIGNED) return code;
  uint64_t sign = (uint64_t)1 << (t->bits - 1);
  if (!(code & sign)) return code;
  *negative = true;
  return (~code + 1) & (t->bits == 64 ? ~0ull : (sign << 1) - 1);
}

static uint64_t inverse_mod64(uint64_t a) { /* a odd: Newton's iteration for a⁻¹ mod 2^64 */
  uint64_t x = a;
  for (int i = 0; i < 6; i++) x *= 2 - a * x;
  return x;
}

static void scaled_set(const loom_dtype_traits *t, code_set *c, uint64_t seed) {
  const int n = t->bits;
  const bool is_signed = t->kind == LOOM_DTYPE_KIND_SIGNED;
  const uint64_t mask = n == 64 ? ~0ull : ((uint64_t)1 << n) - 1, qmax = (uint64_t)t->qmax;
  const float scales[] = {1.0f, 0.5f, 3.0f, 0.1f, 1.0f + 0x1p-23f, 0x1p-149f, 0x1p-126f, 0x1.8p-140f, FLT_MAX,
                          0x1p100f, 0.375f, 0.0f, -0.0f, (float)(1.0 / (double)qmax), 0x1.fffffep-1f};
  /* Boundaries: 0, ±1…3, the range's ends, the never produced −2^(n−1),
   * ±2^k and their neighbours, float32 ties (2^24 + odd)·2^j and around. */
  uint64_t v[4096];
  int nv = 0;
  uint64_t base[] = {0, 1, 2, 3, qmax, qmax - 1, qmax - 2, (uint64_t)1 << (n - 1)};
  for (size_t i = 0; i < G_N_ELEMENTS(base); i++) v[nv++] = base[i];
  for (int k = 1; k < n; k++)
    for (int64_t o = -2; o <= 2; o++) v[nv++] = ((uint64_t)1 << k) + (uint64_t)o;
  for (int j = 0; j + 25 <= n; j++) {
    const uint64_t odd[] = {(1u << 24) + 1, (1u << 25) - 1, (1u << 24) + 3, 0x1ABCDEF};
    for (size_t i = 0; i < G_N_ELEMENTS(odd); i++) {
      uint64_t tie = odd[i] << j;
      v[nv++] = tie;
      v[nv++] = tie + 1;
      v[nv++] = tie - 1;
      if (j > 1) v[nv++] = tie + ((uint64_t)1 << (j - 1));
      if (j > 1) v[nv++] = tie - ((uint64_t)1 << (j - 1));
    }
  }
  for (int i = 0; i < nv; i++)
    for (size_t s = 0; s < G_N_ELEMENTS(scales); s++) {
      add(c, v[i] & mask, scales[s]);
      if (is_signed) add(c, (~v[i] + 1) & mask, scales[s]);
    }
  /* Codes whose double product lies within a few double units of a float32
   * tie (odd multiple of half a float32 ulp): q·m_s ≡ 2^(L−24) + δ modulo
   * 2^(L−23) for the product's top bit L, s = m_s·2^e_s. For 64-bit codes
   * the congruence is on double(q) = Q·2^j, and q is Q·2^j or within half a
   * double unit of it. The double's rounding moves such a product onto the
   * tie or off it: the CPU's second rounding, which the device must repeat. */
  uint64_t rs = seed;
  for (int trial = 0; trial < 20000; trial++) {
    uint64_t ms = (rng_next(&rs) >> 41) | 0x800001u; /* odd, 24 bits */
    int qbits = n == 64 ? 53 : n - (is_signed ? 1 : 0);
    int top = 24 + (int)(rng_next(&rs) % (uint64_t)qbits) + (n == 64 ? 52 - 24 : 0);
    if (top > qbits + 23) top = qbits + 23;
    if (top < 30) top = 30;
    int64_t ulp_d = top > 52 ? (int64_t)1 << (top - 53) : 1; /* half a double unit */
    const int64_t deltas[] = {0, 1, -1, 2, -2, 3, -3, ulp_d, -ulp_d, ulp_d - 1, 1 - ulp_d, ulp_d + 1, -ulp_d - 1};
    int64_t delta = deltas[rng_next(&rs) % G_N_ELEMENTS(deltas)];
    uint64_t mod = (uint64_t)1 << (top - 23), want = (((uint64_t)1 << (top - 24)) + (uint64_t)delta) & (mod - 1);
    uint64_t q = (want * inverse_mod64(ms)) & (mod - 1);
    u128 lo = ((u128)1 << top) / ms + 1;
    if (q < lo) q += (uint64_t)((lo - q + mod - 1) / mod) * mod;
    u128 p = (u128)q * ms;
    if (p >> (top + 1) || (n == 64 ? q >> 53 : q > qmax)) continue;
    int es = (int)(rng_next(&rs) % 200) - 100 - 23;
    float s = (float)ldexp((double)ms, es);
    if (n < 64) {
      add(c, q & mask, s);
      if (is_signed) add(c, (~q + 1) & mask, s);
      continue;
    }
    int room = (is_signed ? 63 : 64) - (64 - __builtin_clzll(q));
    int j = room > 0 ? (int)(rng_next(&rs) % (uint64_t)(room + 1)) : 0;
    uint64_t big = q << j, half = j > 0 ? (uint64_t)1 << (j - 1) : 0;
    const uint64_t near[] = {big, big + half, big - half, big + 1, big - 1, big + half - 1};
    for (size_t i = 0; i < G_N_ELEMENTS(near); i++) {
      if (near[i] > qmax) continue;
      add(c, near[i], s);
      if (is_signed) add(c, ~near[i] + 1, s);
    }
  }
  /* Random codes of every magnitude with random scales. */
  for (int i = 0; i < 200000; i++) {
    uint64_t q = (rng_next(&rs) & mask) >> (rng_next(&rs) % (uint64_t)n);
    uint32_t r = (uint32_t)rng_next(&rs), sb;
    switch (r % 8) {
    case 0: sb = (r >> 3) & 0x7FFFFF; break;                                       /* subnormal */
    case 1: sb = ((uint32_t)(127 - n + (int)(r >> 3) % 8) << 23) | (r >> 11 & 0x7FFFFF); break; /* ~1/qmax */
    default: sb = ((1 + (r >> 3) % 254) << 23) | ((uint32_t)rng_next(&rs) & 0x7FFFFF); break;
    }
    add(c, q, f32_of(sb));
  }
}

static void float64_set(code_set *c, uint64_t seed) {
  const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, DBL_MAX, -DBL_MAX, DBL_MIN, 0x1p-1074, 0x1.fffffffffffffp-1023,
                             -0x1p-1074, FLT_MAX, 0x1p128, -0x1p128, FLT_MIN, 0x1p-149, 0x1p-150, 0x1.8p-149,
                             0x1.0000000000001p-150, 0x1.fffffffffffffp-151, 0x1p-126 - 0x1p-150, 1.0, -1.0, 0.1, 1e300};
  for (size_t i = 0; i < G_N_ELEMENTS(specials); i++) add(c, bits_of_double(specials[i]), 1.0f);
  const uint64_t nans[] = {0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull, 0x7FF4000000000000ull,
                           0x7FFFFFFFFFFFFFFFull, 0xFFF0000020000000ull, 0x7FF000001FFFFFFFull, 0x7FFABCDEF1234567ull};
  for (size_t i = 0; i < G_N_ELEMENTS(nans); i++) add(c, nans[i], 1.0f);
  /* Every float32 f of a list and random ones: the ties f + u/2 (u its ulp,
   * the subnormals' 2^-149 included) and their double neighbours, ± both. */
  uint64_t rs = seed;
  for (int i = 0; i < 30000; i++) {
    uint32_t fb = i < 8 ? (const uint32_t[]){0, 1, 0x7FFFFF, 0x800000, 0x7F7FFFFF, 0x3F800000, 0x7F7FFFFE, 0x3}[i]
                        : (uint32_t)rng_next(&rs) % 0x7F800000u;
    double f = (double)f32_of(fb), u = fb < 0x800000 ? 0x1p-149 : ldexp(1.0, ilogb(f) - 23);
    double tie = f + u / 2;
    const double around[] = {tie, nextafter(tie, 0), nextafter(tie, INFINITY), f, nextafter(f, 0), nextafter(f, INFINITY)};
    for (size_t k = 0; k < G_N_ELEMENTS(around); k++) {
      add(c, bits_of_double(around[k]), 1.0f);
      add(c, bits_of_double(-around[k]), 1.0f);
    }
  }
  for (int i = 0; i < 100000; i++) { /* around float32's range, and anything */
    uint64_t r = rng_next(&rs);
    uint64_t e = (uint64_t)(1023 - 160 + (int)(rng_next(&rs) % 300));
    add(c, i % 5 == 4 ? r : (r & 0x800FFFFFFFFFFFFFull) | (e << 52), 1.0f);
  }
}

static void test_decode_wide(gconstpointer data) {
  loom_dtype d = (loom_dtype)GPOINTER_TO_INT(data);
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  code_set c = {0};
  if (d == LOOM_DTYPE_FLOAT64) float64_set(&c, 17);
  else scaled_set(t, &c, 1000 + (uint64_t)d);
  float *want = g_new(float, c.n), *want_row = g_new(float, c.n), *gemm = g_new(float, c.n), *emb = g_new(float, c.n);
  int64_t witnesses = 0;
  for (int64_t i = 0; i < c.n; i++) {
    want[i] = (float)loom_dtype_decode(d, c.code[i], t->scaled ? c.scale[i] : 1.0f);
    want_row[i] = (float)loom_dtype_decode(d, c.code[i], t->scaled ? c.scale[i - i % 3] : 1.0f);
    if (!t->scaled || !isfinite(c.scale[i])) continue;
    /* Codes where one rounding of the exact q·s differs from the CPU's. */
    bool negative;
    uint64_t q = magnitude(t, c.code[i], &negative);
    int es;
    double ms = frexp(fabs((double)c.scale[i]), &es);
    float once = round_once((u128)q * (uint64_t)ldexp(ms, 53), es - 53, negative != signbit(c.scale[i]));
    if (memcmp(&once, &want[i], 4)) witnesses++;
  }
  decode_on_device(d, &c, 3, gemm, emb);
  int64_t flushed = compare("through the product", d, &c, gemm, want, true);
  flushed += compare("through the embedding", d, &c, emb, want_row, false);
  g_test_message("%s: %lld codes bit-identical through both kernels (%lld subnormals flushed), %lld where one "
                 "rounding of the exact product would differ", t->name, (long long)c.n, (long long)flushed,
                 (long long)witnesses);
  g_assert_cmpint(c.n, >=, 100000);
  /* The 32/64-bit codes' second rounding is exercised, not only assumed. */
  if (t->scaled) g_assert_cmpint(witnesses, >, 100);
  g_free(want);
  g_free(want_row);
  g_free(gemm);
  g_free(emb);
  g_free(c.code);
  g_free(c.scale);
}

/* Every code of every packed dtype of at most 16 bits: a product with one
 * column (K = 1) and x = 1 returns each stored row's decoded value exactly,
 * NaN and infinities included (−0 comes back as +0: the sum starts from +0). */
static void test_decode_every_code(void) {
  int checked = 0;
  for (int d = 0; loom_dtype_name((loom_dtype)d); d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    if (d == LOOM_DTYPE_FLOAT32 || t->bits > 16) continue;
    code_set c = {0};
    for (int64_t r = 0; r < (int64_t)1 << t->bits; r++) add(&c, (uint64_t)r, 0.375f + 0.001f * (float)(r % 97));
    float *want = g_new(float, c.n), *want_row = g_new(float, c.n), *gemm = g_new(float, c.n), *emb = g_new(float, c.n);
    for (int64_t r = 0; r < c.n; r++) {
      want[r] = (float)loom_dtype_decode((loom_dtype)d, c.code[r], t->scaled ? c.scale[r] : 1.0f);
      want_row[r] = (float)loom_dtype_decode((loom_dtype)d, c.code[r], t->scaled ? c.scale[r - r % 3] : 1.0f);
    }
    decode_on_device((loom_dtype)d, &c, 3, gemm, emb);
    compare("through the product", (loom_dtype)d, &c, gemm, want, true);
    /* NaN: any NaN (unpackHalf2x16 need not keep float16's payloads, and
     * E4M3's NaN comes back without its sign). */
    for (int64_t r = 0; r < c.n; r++)
      if (isnan(want_row[r]) && isnan(emb[r])) emb[r] = want_row[r];
    compare("through the embedding", (loom_dtype)d, &c, emb, want_row, false);
    checked++;
    g_free(want);
    g_free(want_row);
    g_free(gemm);
    g_free(emb);
    g_free(c.code);
    g_free(c.scale);
  }
  /* float16, bfloat16, fp8 ×2, fp4, int16/8/4/2, uint16/8/4/2, ternary, binary */
  g_assert_cmpint(checked, ==, 15);
}

int main(int argc, char **argv) {
  gpu = gpu_test_init(&argc, &argv);
  g_test_add_func("/gpu/decode/every-code", test_decode_every_code);
  static const loom_dtype wide[] = {LOOM_DTYPE_FLOAT64, LOOM_DTYPE_INT32, LOOM_DTYPE_UINT32, LOOM_DTYPE_INT64,
                                    LOOM_DTYPE_UINT64};
  for (size_t i = 0; i < G_N_ELEMENTS(wide); i++) {
    char *path = g_strdup_printf("/gpu/decode/%s", loom_dtype_name(wide[i]));
    g_test_add_data_func(path, GINT_TO_POINTER(wide[i]), test_decode_wide);
    g_free(path);
  }
  int rc = g_test_run();
  loom_gpu_free(gpu);
  return rc;
}
