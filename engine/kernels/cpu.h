/*
 * Runtime kernel dispatch. The CPU's features are read once (cpuid and, for
 * the vector register state the OS saves, xgetbv); a kernel level is chosen
 * from them, or forced by the environment variable LOOM_KERNELS=ref|avx2|avx512|amx
 * (read once, at the first use of any kernel), and one table of function
 * pointers for that level serves every caller from then on. The reference
 * level is plain C and always present; the vector levels exist only in x86-64
 * builds and only when the CPU and OS support them. See docs/kernels.md.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "kernels/act.h"
#include "loom/dtype.h"

typedef struct loom_cpu_features {
  bool avx2, fma, f16c, bmi2;
  bool avx512f, avx512bw, avx512vl, avx512dq;
  bool avx512vnni, avx512bf16;
  /* AMX tiles with int8 products, the OS saving their state and granting
   * this process their use (arch_prctl, Linux) */
  bool amx_int8;
} loom_cpu_features;

typedef enum loom_kernel_level {
  LOOM_KERNELS_REF = 0,    /* plain C, every machine */
  LOOM_KERNELS_AVX2 = 1,   /* AVX2 + FMA + F16C */
  LOOM_KERNELS_AVX512 = 2, /* AVX-512 F/BW/VL/DQ (VNNI, BF16 used per function where present) */
  LOOM_KERNELS_AMX = 3,    /* AVX-512 with VNNI, and AMX tiles for the integer GEMM (qgemm-amx.c) */
  LOOM_KERNELS_LEVEL_COUNT
} loom_kernel_level;

/* One row of a packed tensor to codes and back; the same contract as the
 * reference row codecs of core/ (loom_float_*_row, loom_scaled_*_row): dst of
 * a quantize is zeroed beforehand, NaN where the dtype has no code stops the
 * row and reports its index in *bad. `lut` holds the decoded values of every
 * code for unscaled dtypes of <= 8 bits (loom_float_build_lut). */
typedef int (*loom_quantize_row_fn)(const loom_dtype_traits *t, const float *src, int64_t n, float scale,
                                    uint8_t *dst, int64_t *bad);
typedef int (*loom_quantize_scan_fn)(const loom_dtype_traits *t, const float *src, int64_t n, float scale,
                                     uint8_t *dst, int64_t *bad, const float *next, bool *next_nonfinite,
                                     double *next_stat);
typedef void (*loom_dequantize_row_fn)(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                       const float *lut, float *dst);
struct loom_qgemm_job; /* kernels/qgemm.h */
/* The layouts of the activation tiles xt (kernels/qgemm.h). */
typedef enum loom_qgemm_tile_layout {
  LOOM_QGEMM_TILES_NONE = 0,
  LOOM_QGEMM_TILES_VNNI, /* LOOM_QGEMM_TILE_ROWS rows a tile, the last rows in tiles of 4, 2, 1 */
  LOOM_QGEMM_TILES_AMX,  /* LOOM_QGEMM_AMX_TILE_ROWS rows a tile, the last padded with rows of zeros */
} loom_qgemm_tile_layout;
typedef void (*loom_qgemm_rows_fn)(const struct loom_qgemm_job *job, int64_t r0, int64_t r1);
typedef void (*loom_qgemm_short_fn)(const struct loom_qgemm_job *job, int64_t r0, int64_t r1, int64_t b0, int64_t b1);

/* Rows and activation vectors one call of loom_kernels.gemv_acc64 takes at
 * most. */
#define LOOM_GEMV_ROWS 4
#define LOOM_GEMV_INPUTS 3

typedef struct loom_kernels {
  loom_kernel_level level;
  const char *name;
  loom_quantize_row_fn quantize_row[LOOM_DTYPE_COUNT];
  loom_dequantize_row_fn dequantize_row[LOOM_DTYPE_COUNT];
  /* dequantize_row with non-temporal stores, for any dst (the values
   * before its first 64-byte boundary and the tail, less than a vector,
   * through ordinary stores): for outputs
   * larger than the caches, where writing around them saves reading every
   * destination line first (loom_dtype_dequantize). The same bits. No
   * store fence: the caller runs loom_stream_fence once after its last row
   * (a fence drains every pending line; one per row of 16 KiB cost a fifth
   * of the speed). NULL where a level has none. */
  loom_dequantize_row_fn dequantize_row_stream[LOOM_DTYPE_COUNT];
  /* quantize_row for a format with codes for NaN and ±inf that refuses them
   * all the same, in the same pass: LOOM_ERR_NONFINITE and *bad the first
   * such column (dst then holds garbage). The morph checks a row this way
   * instead of reading it once for the check and once to encode it: float64
   * 0.48 → 0.57-0.61 of memcpy (docs/kernels.md). NULL where a level has
   * none. */
  loom_quantize_row_fn quantize_row_finite[LOOM_DTYPE_COUNT];
  /* quantize_row_finite for outputs beyond the caches (LOOM_STREAM_MIN_BYTES
   * and more), writing through non-temporal stores, any alignment of dst;
   * no store fence: the caller runs loom_stream_fence once after its last
   * row. The morph's wide formats write twice the bytes they read, and
   * ordinary stores read each destination line first (float64 at 4096 ×
   * 4096 on Zen 3: 10.0–10.5 → 6.2–6.4 ms, a private driver). NULL where a
   * level has none. */
  loom_quantize_row_fn quantize_row_finite_stream[LOOM_DTYPE_COUNT];
  /* quantize_row of a scaled dtype that also gives, from
   * the same loop, scale_scan's answer for the row after it (`next`, n
   * values too: *next_nonfinite its return, *next_stat its statistic). The
   * morph scans row r + 1 while it encodes row r instead of in a pass of
   * its own (docs/kernels.md). NULL where a level has none. */
  loom_quantize_scan_fn quantize_row_scan[LOOM_DTYPE_COUNT];
  /* quantize_row_scan with non-temporal stores from dst's first 64-byte
   * boundary on (the values before it stored ordinarily), for outputs
   * beyond the caches; no fence (the caller's loom_stream_fence after its
   * last row). The 32- and 64-bit formats write as many or twice the
   * bytes they read: on a Xeon with AMX the morph at 4096 × 4096 took 18
   * ms (int64) and 9.6 ms (int32) through ordinary stores, 10.5 and 6.3
   * streamed. NULL where a level has none. */
  loom_quantize_scan_fn quantize_row_scan_stream[LOOM_DTYPE_COUNT];
  /* True when any value is NaN or ±inf. */
  bool (*any_nonfinite)(const float *v, int64_t n);
  /* max |v| and max(0, max v) over finite values (order-free, so exact). */
  float (*abs_max)(const float *v, int64_t n);
  float (*pos_max)(const float *v, int64_t n);
  /* Σ |v[i]| in double, bit-identical to summing in index order. */
  double (*abs_sum)(const float *v, int64_t n);
  /* The morph's one pass over a row of a scaled dtype: true when some value
   * is NaN or ±inf; otherwise *stat is, for `kind`, what the scans above
   * give: abs_max (signed), pos_max (unsigned), abs_sum (ternary, binary). */
  bool (*scale_scan)(const float *v, int64_t n, loom_dtype_kind kind, double *stat);
  /* acc[j % 64] = fma(w[j], x[j], acc[j % 64]) for j ascending in [0, n),
   * n < 64 padded with zeros to 64: the fixed summation order of every dot
   * product of the packed GEMV (kernels/gemv.h), the same at every level. */
  void (*dot_acc64)(float *acc, const float *w, const float *x, int64_t n);
  /* The fixed reduction of those 64 sums, pairs (k, k + w) for w = 32, 16,
   * …, 1 (loom_gemv_reduce64, kernels/gemv.h); acc is overwritten. */
  float (*gemv_reduce64)(float *acc);
  /* The same for `groups` × 64 columns of each of `nrows` packed rows
   * (row i at row + i·row_bytes, scale scales[i]) against each of `nx`
   * activation vectors (vector k at x + k·x_stride), the 64 sums of row i
   * and vector k at acc + 64·(i·nx + k); nrows ≤ LOOM_GEMV_ROWS, nx ≤
   * LOOM_GEMV_INPUTS. Decoding in registers: for every row and vector
   * exactly dequantize_row then dot_acc64, without the buffer. A level may
   * take the rows together (each activation vector loaded once for all of
   * them) or the vectors together (each row decoded once for all of them).
   * NULL where a level has none (gemv.c then decodes a block at a time).
   * For fp8-e4m3, x holds 256 times the activations and the kernel takes
   * each weight as w / 256, its float16 reading: the products are the same
   * exact numbers, one multiply a vector fewer (gemv.c scales x, or decodes
   * a block at a time where 256 · x would overflow). */
  void (*gemv_acc64[LOOM_DTYPE_COUNT])(const loom_dtype_traits *t, const uint8_t *row, size_t row_bytes, int nrows,
                                       int64_t groups, const float *scales, const float *x, int64_t x_stride, int nx,
                                       float *acc);
  /* Rows [r0, r1) of the integer product of packed codes and int8
   * activations (kernels/qgemm.h): exact integer sums, so every level gives
   * the same bits. NULL for the dtypes it does not serve. */
  loom_qgemm_rows_fn qgemm_rows[LOOM_DTYPE_COUNT];
  /* The integer product's activations (kernels/qgemm.h): row b of x
   * (cols values) to int8 codes by the int8 weight rule at xq + b · xstride
   * (a multiple of 64), zero from cols to xstride; sx[b] its scale, xsum[b]
   * the codes' sum; bad[b] 1, codes zero and sx[b] 0 where the row holds
   * NaN or ±inf. The bits of scale_scan, loom_scaled_scale_of_stat and
   * quantize_row[LOOM_DTYPE_INT8] row by row (what qgemm.c does where this
   * is NULL). */
  void (*qgemm_quantize)(const float *x, int64_t batch, int64_t cols, int8_t *xq, int64_t xstride, float *sx,
                         uint8_t *bad, int64_t *xsum);
  /* The integer product's activation row prepared once per call
   * (kernels/qgemm.h): *xsum = Σ xq[0, len), and for bits < 8 xp, the
   * permuted copy; len a multiple of 512 / bits. */
  void (*qgemm_prepare)(int bits, const int8_t *xq, int8_t *xp, int64_t len, int64_t *xsum);
  /* Rows [r0, r1) × activation rows [b0, b1) of the same product for the
   * shapes loom_qgemm_takes_short (qgemm.h) picks, from xq alone: xp is
   * not made and xstride is cols rounded up to 64. NULL where a level has
   * none. */
  loom_qgemm_short_fn qgemm_short;
  /* Where qgemm_rows reads the activations also in tiles (xt,
   * kernels/qgemm.h) for the shapes loom_qgemm_takes_panel picks (VNNI:
   * 8-bit and 4-bit codes; AMX: all), their layout; LOOM_QGEMM_TILES_NONE
   * elsewhere. */
  loom_qgemm_tile_layout qgemm_tiles;
  /* The tiles xt of xq in the level's qgemm_tiles layout, batch rows of
   * xstride bytes (a multiple of 64); set wherever qgemm_tiles is. */
  void (*qgemm_make_tiles)(const int8_t *xq, int8_t *xt, int64_t batch, int64_t xstride);
  /* Element-wise activations in double with the lanes the reference must
   * redo marked (kernels/act.h). NULL at the reference level. */
  loom_act_fn_kernel act;
} loom_kernels;

/* The CPU's features (read once). */
const loom_cpu_features *loom_cpu_features_get(void);
/* The highest level the CPU and this build support. */
loom_kernel_level loom_kernels_best_level(void);
/* The table in use: chosen once, at the first call, from LOOM_KERNELS or the
 * best level. */
const loom_kernels *loom_kernels_get(void);
/* The table of one level, or NULL when the CPU or the build lacks it. */
const loom_kernels *loom_kernels_for(loom_kernel_level level);
/* Switches the table in use (tests and benchmarks run every path in one
 * process). Not safe while another thread runs kernels: call it between
 * jobs. Returns false, changing nothing, when the level is unavailable. */
bool loom_kernels_force(loom_kernel_level level);
const char *loom_kernel_level_name(loom_kernel_level level);
/* "ref", "avx2", "avx512" -> level; false for anything else. */
bool loom_kernel_level_parse(const char *name, loom_kernel_level *level);

/* Filled by the per-level files: start from a copy of the reference table and
 * replace what they implement. */
void loom_kernels_fill_ref(loom_kernels *k);
/* The vector levels need GCC's `#pragma GCC target` and vector extensions
 * with __builtin_convertvector (GCC 9+); other compilers and architectures
 * build the reference level only. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9
#define LOOM_KERNELS_X86 1
void loom_kernels_fill_avx2(loom_kernels *k);
void loom_kernels_fill_avx512(loom_kernels *k);
/* act-avx2.c, act-avx512.c: the activations of kernels/act.h. */
void loom_kernels_fill_act_avx2(loom_kernels *k);
void loom_kernels_fill_act_avx512(loom_kernels *k);
/* The scaled formats' codecs in AVX-512 intrinsics (codec-scaled-avx512.c),
 * on top of the generic ones of the AVX-512 level. */
void loom_kernels_fill_scaled_avx512(loom_kernels *k);
/* The 32- and 64-bit formats' encoders in AVX2 intrinsics
 * (codec-wide-avx2.c), on top of the generic codecs of the AVX2 level. */
void loom_kernels_fill_wide_avx2(loom_kernels *k);
/* The integer products for the AVX2 level (qgemm-avx2.c). */
void loom_kernels_fill_qgemm_avx2(loom_kernels *k);
void loom_kernels_fill_qgemm_short_avx2(loom_kernels *k);
/* AVX-512 VNNI (vpdpbusd) on top of the AVX-512 level, where the CPU has it. */
void loom_kernels_fill_vnni(loom_kernels *k);
/* qgemm-vnni-gemv.c: the VNNI GEMV (batch 1) and the vector preparation of
 * the activations, for qgemm-vnni.c. */
void loom_qgemm_gemv_vnni(const struct loom_qgemm_job *j, int64_t r0, int64_t r1);
void loom_qgemm_prepare_vnni(int bits, const int8_t *xq, int8_t *xp, int64_t len, int64_t *xsum);
/* qgemm-vnni-panel.c: the GEMM of 8-bit and 4-bit codes from packed weight
 * panels; false (nothing written) when its buffer cannot be had. */
bool loom_qgemm_panel_vnni(const struct loom_qgemm_job *j, int64_t r0, int64_t r1);
/* ... and the VNNI level's qgemm_make_tiles, the activation tiles it reads. */
void loom_qgemm_make_tiles_vnni(const int8_t *xq, int8_t *xt, int64_t batch, int64_t xstride);
/* qgemm-vnni.c: the VNNI level's qgemm_rows, which the AMX level keeps for
 * the shapes its tiles do not take. */
void loom_qgemm_rows_vnni(const struct loom_qgemm_job *j, int64_t r0, int64_t r1);
/* AMX tiles (qgemm-amx.c) on top of the VNNI level, where the CPU and OS
 * have them. */
void loom_kernels_fill_amx(loom_kernels *k);
#endif
/* Outputs of at least this many bytes are written around the caches where
 * a level can (dequantize_row_stream, quantize_row_finite_stream): more
 * than a core's L2 and its share of an L3 on the machines we measured, so
 * the output could not stay in the caches for its reader anyway. A fixed
 * size: what sysconf reports for the L3 in a VM is the host's (256 MiB on
 * the development machine). */
#define LOOM_STREAM_MIN_BYTES ((size_t)16 << 20)

/* How many values of `size` bytes lie from p to its first 64-byte boundary
 * (0 when p is on one), at most n: the head a streaming codec stores
 * ordinarily before its non-temporal stores. */
static inline int64_t loom_stream_head(const void *p, size_t size, int64_t n) {
  const int64_t h = (int64_t)((64 - ((uintptr_t)p & 63)) & 63) / (int64_t)size;
  return h < n ? h : n;
}

/* Orders the non-temporal stores of dequantize_row_stream before any later
 * store, so another thread that sees a later flag sees the outputs too
 * (sfence is part of x86-64's baseline; other machines have no streaming
 * rows). */
static inline void loom_stream_fence(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_ia32_sfence();
#endif
}
/* The reference integer products (qgemm.c) for the dtypes they serve. */
void loom_kernels_fill_qgemm_ref(loom_kernels *k);
