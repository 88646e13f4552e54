/* Hostile safetensors files: the container (header length, JSON, offsets,
 * shapes, dtypes) and the network inside it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile-cases.h"
#include "loom/loom.h"
#include "loom/safetensors.h"

#define ADD(name, data, len, expect) hostile_add(cases, HOSTILE_SAFETENSORS, name, data, len, expect)

/* 8-byte length, header, data_len bytes of `fill`. */
static GByteArray *st_build(const char *header, size_t data_len, uint8_t fill) {
  GByteArray *b = g_byte_array_new();
  uint64_t n = strlen(header);
  uint8_t len[8];
  for (int i = 0; i < 8; i++) len[i] = (uint8_t)(n >> (8 * i));
  g_byte_array_append(b, len, 8);
  g_byte_array_append(b, (const guint8 *)header, (guint)n);
  for (size_t i = 0; i < data_len; i++) g_byte_array_append(b, &fill, 1);
  return b;
}

static void add_st(GPtrArray *cases, const char *name, const char *header, size_t data_len, const char *expect) {
  GByteArray *b = st_build(header, data_len, 0);
  ADD(name, b->data, b->len, expect);
  g_byte_array_unref(b);
}

static void container_cases(GPtrArray *cases) {
  /* the length prefix itself cut short */
  for (int n = 0; n < 8; n++) {
    char name[32];
    snprintf(name, sizeof name, "st-prefix-%d-bytes", n);
    ADD(name, "\x10\0\0\0\0\0\0\0", (size_t)n, "too short for a safetensors file");
  }
  static const uint64_t huge[] = {100000001, UINT64_C(1) << 32, UINT64_C(1) << 63, UINT64_MAX};
  for (size_t i = 0; i < G_N_ELEMENTS(huge); i++) {
    uint8_t f[16] = {0};
    for (int b = 0; b < 8; b++) f[b] = (uint8_t)(huge[i] >> (8 * b));
    memcpy(f + 8, "{}      ", 8);
    char name[48];
    snprintf(name, sizeof name, "st-header-len-%llu", (unsigned long long)huge[i]);
    ADD(name, f, sizeof f, "is more than the limit of 100000000 bytes");
  }
  for (uint64_t extra = 1; extra <= 3; extra++) {
    GByteArray *b = st_build("{}", 0, 0);
    uint64_t n = 2 + extra;
    for (int i = 0; i < 8; i++) b->data[i] = (uint8_t)(n >> (8 * i));
    char name[48];
    snprintf(name, sizeof name, "st-header-beyond-file-%llu", (unsigned long long)extra);
    ADD(name, b->data, b->len, "goes beyond the end of the file");
    g_byte_array_unref(b);
  }
  add_st(cases, "st-wrong-magic-space", " {}", 0, "does not begin with “{”");
  add_st(cases, "st-wrong-magic-json-file", "[{}]", 0, "does not begin with “{”");
  ADD("st-wrong-magic-loom-json", "{\"format\": \"loom-model\", \"version\": 1}", 38,
      "is more than the limit of 100000000 bytes");
  add_st(cases, "st-header-bad-json", "{\"a\": }", 0, "h.safetensors");
  add_st(cases, "st-header-unterminated", "{\"a\": {\"dtype\": \"F32\"", 0, "h.safetensors");
  add_st(cases, "st-header-trailing-text", "{} {}", 0, "unexpected text after the end");
  add_st(cases, "st-header-bad-utf8", "{\"\xff\": 1}", 0, "not valid UTF-8");
  add_st(cases, "st-header-deep", "{\"a\": {\"shape\": [[1]]}}", 0, "deeper than");
  add_st(cases, "st-header-very-deep",
         "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", 0,
         "deeper than");
  add_st(cases, "st-tensor-not-object", "{\"a\": 1}", 0, "expected an object");
  add_st(cases, "st-tensor-no-dtype", "{\"a\": {\"shape\": [], \"data_offsets\": [0, 0]}}", 0,
         "$.a.dtype: required member is missing");
  add_st(cases, "st-tensor-no-shape", "{\"a\": {\"dtype\": \"U8\", \"data_offsets\": [0, 0]}}", 0,
         "$.a.shape: required member is missing");
  add_st(cases, "st-tensor-no-offsets", "{\"a\": {\"dtype\": \"U8\", \"shape\": [0]}}", 0,
         "$.a.data_offsets: required member is missing");
  add_st(cases, "st-tensor-extra-member",
         "{\"a\": {\"dtype\": \"U8\", \"shape\": [0], \"data_offsets\": [0, 0], \"x\": 1}}", 0, "unknown member");
  add_st(cases, "st-tensor-unknown-dtype", "{\"a\": {\"dtype\": \"F12\", \"shape\": [1], \"data_offsets\": [0, 1]}}",
         1, "tensor “a” has the unknown dtype “F12”");
  add_st(cases, "st-tensor-dtype-number", "{\"a\": {\"dtype\": 4, \"shape\": [1], \"data_offsets\": [0, 1]}}", 1,
         "expected a string");
  add_st(cases, "st-shape-negative", "{\"a\": {\"dtype\": \"U8\", \"shape\": [-1], \"data_offsets\": [0, 1]}}", 1,
         "$.a.shape[0]: expected an integer in 0..");
  add_st(cases, "st-shape-fraction", "{\"a\": {\"dtype\": \"U8\", \"shape\": [1.5], \"data_offsets\": [0, 1]}}", 1,
         "$.a.shape[0]: expected an integer");
  add_st(cases, "st-shape-string", "{\"a\": {\"dtype\": \"U8\", \"shape\": \"1\", \"data_offsets\": [0, 1]}}", 1,
         "$.a.shape: expected an array");
  add_st(cases, "st-shape-rank-9",
         "{\"a\": {\"dtype\": \"U8\", \"shape\": [1,1,1,1,1,1,1,1,1], \"data_offsets\": [0, 1]}}", 1,
         "has 9 dimensions, at most 8");
  add_st(cases, "st-offsets-three", "{\"a\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [0, 1, 2]}}", 1,
         "expected 2 offsets");
  add_st(cases, "st-offsets-one", "{\"a\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [1]}}", 1,
         "expected 2 offsets");
  add_st(cases, "st-offsets-negative", "{\"a\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [-1, 0]}}", 1,
         "data_offsets[0]: expected an integer in 0..");
  add_st(cases, "st-offsets-reversed", "{\"a\": {\"dtype\": \"U8\", \"shape\": [0], \"data_offsets\": [1, 0]}}", 1,
         "ends (byte 0) before it begins (byte 1)");
  add_st(cases, "st-offsets-beyond-data", "{\"a\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [0, 4]}}", 3,
         "ends at byte 4 of the data, but the data has only 3 bytes");
  add_st(cases, "st-offsets-huge",
         "{\"a\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [9223372036854775806, 9223372036854775807]}}",
         1, "but the data has only 1 bytes");
  add_st(cases, "st-overlap",
         "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}, "
         "\"b\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [4, 12]}}",
         12, "tensor “b” begins at byte 4 of the data, inside tensor “a” (ends at 8): tensors overlap");
  add_st(cases, "st-overlap-same-range",
         "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}, "
         "\"b\": {\"dtype\": \"I32\", \"shape\": [2], \"data_offsets\": [0, 8]}}",
         8, "tensors overlap");
  add_st(cases, "st-gap",
         "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}, "
         "\"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [8, 12]}}",
         12, "leaving bytes 4..7 to no tensor");
  add_st(cases, "st-gap-at-start", "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}", 8,
         "leaving bytes 0..3 to no tensor");
  add_st(cases, "st-trailing-bytes", "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 9,
         "the data has 9 bytes, but the tensors cover only 4");
  add_st(cases, "st-no-tensors-but-data", "{}", 5, "the data has 5 bytes, but the tensors cover only 0");
  add_st(cases, "st-out-of-order-overlap",
         "{\"b\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [2, 6]}, "
         "\"a\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [0, 4]}}",
         6, "tensors overlap");
  add_st(cases, "st-duplicate-name",
         "{\"a\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [0, 4]}, "
         "\"a\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": [4, 8]}}",
         8, "duplicate member “a”");
  add_st(cases, "st-empty-name", "{\"\": {\"dtype\": \"U8\", \"shape\": [0], \"data_offsets\": [0, 0]}}", 0,
         "a tensor has an empty name");
  add_st(cases, "st-metadata-number", "{\"__metadata__\": {\"k\": 1}}", 0, "$.__metadata__.k: expected a string");
  add_st(cases, "st-metadata-object", "{\"__metadata__\": {\"k\": {}}}", 0,
         "$.__metadata__.k: expected a string, found an object");
  add_st(cases, "st-metadata-array", "{\"__metadata__\": [\"k\"]}", 0, "$.__metadata__: expected an object");
  add_st(cases, "st-no-network", "{\"__metadata__\": {\"format\": \"pt\"}}", 0,
         "the file holds 0 tensors but no Loom network");

  /* every dtype: a size that disagrees with the shape, and shapes whose size overflows */
  static const char *const dtypes[] = {"BOOL", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "I16", "U16", "F16",
                                       "BF16", "I32", "U32", "F32",     "F64",     "I64", "U64"};
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    size_t es = loom_safetensors_dtype_size(dtypes[i]);
    char header[256], name[64], expect[128];
    snprintf(header, sizeof header, "{\"t\": {\"dtype\": \"%s\", \"shape\": [3], \"data_offsets\": [0, %zu]}}",
             dtypes[i], 3 * es + 1);
    snprintf(name, sizeof name, "st-size-mismatch-%s", dtypes[i]);
    snprintf(expect, sizeof expect, "3 %s values take %zu bytes, but its offsets hold %zu", dtypes[i], 3 * es,
             3 * es + 1);
    add_st(cases, name, header, 3 * es + 1, expect);
    snprintf(header, sizeof header,
             "{\"t\": {\"dtype\": \"%s\", \"shape\": [4294967296, 4294967296, 2], \"data_offsets\": [0, 0]}}",
             dtypes[i]);
    snprintf(name, sizeof name, "st-shape-overflow-%s", dtypes[i]);
    add_st(cases, name, header, 0, "the shape's size overflows 64 bits");
    if (es > 1) {
      snprintf(header, sizeof header,
               "{\"t\": {\"dtype\": \"%s\", \"shape\": [4611686018427387904, 2], \"data_offsets\": [0, 0]}}",
               dtypes[i]);
      snprintf(name, sizeof name, "st-bytes-overflow-%s", dtypes[i]);
      add_st(cases, name, header, 0, "the shape's size overflows 64 bits");
    }
  }
}

/* ---- a real network's file, damaged ------------------------------------ */

typedef struct {
  uint8_t *bytes;
  size_t len;
  uint64_t hlen;
} st_file;

/* xor with the first dense at binary (padding bits in each row) and the
 * second at int4. */
static st_file network_file(void) {
  loom_error err = {0};
  loom_net *net = NULL;
  if (loom_example_build("xor", &net, &err)) g_error("%s", err.message);
  loom_layer_set_dtype(loom_net_layer_at(net, (loom_coord){0, 0, 0, 0}), LOOM_DTYPE_BINARY, &err);
  loom_layer_set_dtype(loom_net_layer_at(net, (loom_coord){0, 0, 2, 0}), LOOM_DTYPE_INT4, &err);
  st_file f = {0};
  f.bytes = loom_model_to_safetensors(net, NULL, &f.len, &err);
  g_assert_nonnull(f.bytes);
  for (int b = 7; b >= 0; b--) f.hlen = f.hlen << 8 | f.bytes[b];
  loom_net_free(net);
  return f;
}

/* The file with `from` replaced by `to` in its header (length fixed up). */
static GByteArray *header_replace(const st_file *f, const char *from, const char *to) {
  char *header = g_strndup((const char *)f->bytes + 8, f->hlen);
  char *at = strstr(header, from);
  if (!at) g_error("“%s” is not in the header", from);
  *at = '\0';
  char *changed = g_strconcat(header, to, at + strlen(from), NULL);
  GByteArray *b = st_build(changed, 0, 0);
  g_byte_array_append(b, f->bytes + 8 + f->hlen, (guint)(f->len - 8 - f->hlen));
  g_free(header);
  g_free(changed);
  return b;
}

static void add_replaced(GPtrArray *cases, const st_file *f, const char *name, const char *from, const char *to,
                         const char *expect) {
  GByteArray *b = header_replace(f, from, to);
  ADD(name, b->data, b->len, expect);
  g_byte_array_unref(b);
}

/* The file with `n` bytes at `offset` of tensor `tensor` replaced. */
static void add_patched(GPtrArray *cases, const st_file *f, const char *name, const char *tensor, size_t offset,
                        const void *bytes, size_t n, const char *expect) {
  loom_safetensors *st = NULL;
  loom_error err = {0};
  g_assert_cmpint(loom_safetensors_open_data(f->bytes, f->len, "x", &st, &err), ==, 0);
  const loom_st_tensor *t = loom_safetensors_find(st, tensor);
  g_assert_nonnull(t);
  uint8_t *copy = g_memdup2(f->bytes, f->len);
  memcpy(copy + 8 + f->hlen + t->begin + offset, bytes, n);
  ADD(name, copy, f->len, expect);
  g_free(copy);
  loom_safetensors_close(st);
}

static void network_cases(GPtrArray *cases) {
  st_file f = network_file();
  /* truncated everywhere: in the prefix, the header, every tensor */
  for (size_t cut = 0; cut < f.len; cut += cut < 16 ? 1 : 97) {
    char name[48];
    snprintf(name, sizeof name, "st-net-truncated-at-%zu", cut);
    const char *expect = cut < 8                ? "too short for a safetensors file"
                         : cut < 8 + f.hlen     ? "goes beyond the end of the file"
                                                : "but the data has only";
    ADD(name, f.bytes, cut, expect);
  }
  ADD("st-net-truncated-last-byte", f.bytes, f.len - 1, "but the data has only");
  add_replaced(cases, &f, "st-net-tensor-dtype", "\"slot.0.0.2.0.weight\": {\"dtype\": \"U8\"",
               "\"slot.0.0.2.0.weight\": {\"dtype\": \"I8\"",
               "$.slots[2].layer.weights[0]: tensor “slot.0.0.2.0.weight” is I8 [1, 2], the weight needs U8 [1, 2]");
  add_replaced(cases, &f, "st-net-tensor-shape", "\"shape\": [1, 2]", "\"shape\": [2, 1]",
               "tensor “slot.0.0.2.0.weight” is U8 [2, 1], the weight needs U8 [1, 2]");
  add_replaced(cases, &f, "st-net-tensor-missing", "\"slot.0.0.0.0.weight\":", "\"slot.0.0.0.0.wheat\":",
               "$.slots[0].layer.weights[0]: the file has no tensor “slot.0.0.0.0.weight”");
  add_replaced(cases, &f, "st-net-scales-missing", "\"slot.0.0.2.0.weight.scales\":", "\"slot.0.0.2.0.scales\":",
               "the file has no tensor “slot.0.0.2.0.weight.scales”");
  add_replaced(cases, &f, "st-net-scales-dtype", "\"slot.0.0.2.0.weight.scales\": {\"dtype\": \"F32\"",
               "\"slot.0.0.2.0.weight.scales\": {\"dtype\": \"I32\"",
               "tensor “slot.0.0.2.0.weight.scales” is I32 [1], the weight needs F32 [1]");
  add_replaced(cases, &f, "st-net-extra-tensor", "{\"__metadata__\"",
               "{\"zz\": {\"dtype\": \"U8\", \"shape\": [0], \"data_offsets\": [0, 0]}, \"__metadata__\"",
               "tensor “zz” belongs to no weight of the network");
  add_replaced(cases, &f, "st-net-model-not-json", "\"loom_model\": \"{", "\"loom_model\": \"{{",
               "h.safetensors: __metadata__.loom_model");
  add_replaced(cases, &f, "st-net-model-key-renamed", "\"loom_model\":", "\"loom_modal\":",
               "but no Loom network (no “loom_model” in its __metadata__)");
  add_replaced(cases, &f, "st-net-model-format", "\\\"format\\\": \\\"loom-model\\\"",
               "\\\"format\\\": \\\"loom-modem\\\"", "$.format: expected “loom-model”, found “loom-modem”");
  add_replaced(cases, &f, "st-net-grid-overflow", "\\\"depth\\\": 1,", "\\\"depth\\\": 4294967297,",
               "$.grid.depth: expected an integer in 1..65536");
  add_replaced(cases, &f, "st-net-entry-with-data", "\\\"scale_mode\\\": \\\"per_row\\\"",
               "\\\"scale_mode\\\": \\\"per_row\\\", \\\"data\\\": \\\"AAAA\\\"", "$.slots[0].layer.weights[0].data: unknown member");
  add_replaced(cases, &f, "st-net-entry-rows", "\\\"rows\\\": 4", "\\\"rows\\\": 5",
               "$.slots[0].layer.weights[0]: tensor “slot.0.0.0.0.weight” is U8 [4, 1], the weight needs U8 [5, 1]");

  float nan = NAN, inf = INFINITY, neg = -1.0f;
  add_patched(cases, &f, "st-net-nan-bias", "slot.0.0.0.0.bias", 4, &nan, 4, "is NaN");
  add_patched(cases, &f, "st-net-inf-bias", "slot.0.0.0.0.bias", 0, &inf, 4, "inf");
  add_patched(cases, &f, "st-net-nan-scale", "slot.0.0.2.0.weight.scales", 0, &nan, 4,
              "scale 0 is nan; scales must be finite and >= 0");
  add_patched(cases, &f, "st-net-negative-scale", "slot.0.0.0.0.weight.scales", 8, &neg, 4,
              "scale 2 is -1; scales must be finite and >= 0");
  uint8_t padding = 0xff, int4_min = 0x88;
  add_patched(cases, &f, "st-net-padding-bits", "slot.0.0.0.0.weight", 1, &padding, 1,
              "padding bits of row 1 are not zero");
  add_patched(cases, &f, "st-net-int4-code-min", "slot.0.0.2.0.weight", 0, &int4_min, 1,
              "invalid int4 code 0x8 at row 0, column 0");
  free(f.bytes);
}

void hostile_safetensors_cases(GPtrArray *cases) {
  container_cases(cases);
  network_cases(cases);
}
