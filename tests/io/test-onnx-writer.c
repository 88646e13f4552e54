/* The ONNX exporter's own parts, below the end-to-end test (test-onnx.py):
 * the protobuf wire format byte for byte (values from the protobuf encoding
 * documentation), the refusals of loom_onnx_export_bytes with their
 * messages, and that the same network exports to the same bytes. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "io/onnx/onnx-graph.h"
#include "loom/loom.h"

static void expect_bytes(const pb_buf *b, const uint8_t *want, size_t n) {
  g_assert_false(b->failed);
  g_assert_cmpuint(b->len, ==, n);
  g_assert_cmpmem(b->data, b->len, want, n);
}

static void test_varints(void) {
  pb_buf b = {0};
  pb_varint_field(&b, 1, 150); /* the documentation's example: 08 96 01 */
  expect_bytes(&b, (const uint8_t[]){0x08, 0x96, 0x01}, 3);
  pb_free(&b);
  pb_varint_field(&b, 2, 0);
  expect_bytes(&b, (const uint8_t[]){0x10, 0x00}, 2);
  pb_free(&b);
  /* int64 −1: ten bytes, the last 0x01 */
  pb_varint_field(&b, 3, (uint64_t)(int64_t)-1);
  expect_bytes(&b, (const uint8_t[]){0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 11);
  pb_free(&b);
  /* field 20 needs a two-byte tag: (20 << 3) | 0 = 160 = a0 01 */
  pb_varint_field(&b, 20, 7);
  expect_bytes(&b, (const uint8_t[]){0xa0, 0x01, 0x07}, 3);
  pb_free(&b);
}

static void test_float_string_message(void) {
  pb_buf b = {0}, inner = {0};
  pb_float_field(&b, 2, 1.0f); /* 15, then 0x3f800000 little-endian */
  expect_bytes(&b, (const uint8_t[]){0x15, 0x00, 0x00, 0x80, 0x3f}, 5);
  pb_free(&b);
  pb_string_field(&b, 2, "testing"); /* 12 07 74 65 73 74 69 6e 67 */
  expect_bytes(&b, (const uint8_t[]){0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'}, 9);
  pb_free(&b);
  pb_varint_field(&inner, 1, 150);
  pb_message_field(&b, 3, &inner); /* 1a 03 08 96 01 */
  expect_bytes(&b, (const uint8_t[]){0x1a, 0x03, 0x08, 0x96, 0x01}, 5);
  pb_free(&b);
  pb_free(&inner);
  /* A long payload: its length takes two varint bytes (300 = ac 02). */
  char big[300];
  memset(big, 'x', sizeof big);
  pb_bytes_field(&b, 1, big, sizeof big);
  g_assert_cmpuint(b.len, ==, 3 + sizeof big);
  g_assert_cmpmem(b.data, 3, ((const uint8_t[]){0x0a, 0xac, 0x02}), 3);
  pb_free(&b);
}

static loom_net *small_net(const char *second_type) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 2, 1, &err);
  g_assert_nonnull(net);
  loom_shape in = loom_shape_1d(4);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, &err), ==, LOOM_OK);
  loom_layer *d = loom_layer_new_by_name("dense", &err);
  g_assert_cmpint(loom_layer_set_int(d, "in_features", 4, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_int(d, "out_features", 3, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, d, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, loom_layer_new_by_name(second_type, &err), &err), ==,
                  LOOM_OK);
  loom_diag *diags = NULL;
  loom_net_infer_shapes(net, 7, &diags);
  g_free(diags);
  return net;
}

static void test_same_bytes(void) {
  loom_error err = {0};
  loom_net *a = small_net("tanh"), *b = small_net("tanh");
  void *da = NULL, *db = NULL;
  size_t na = 0, nb = 0;
  g_assert_cmpint(loom_onnx_export_bytes(a, &da, &na, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_onnx_export_bytes(b, &db, &nb, &err), ==, LOOM_OK);
  g_assert_cmpmem(da, na, db, nb);
  /* ModelProto starts with ir_version 8 (08 08). */
  g_assert_cmpmem(da, 2, ((const uint8_t[]){0x08, 0x08}), 2);
  free(da);
  free(db);
  loom_net_free(a);
  loom_net_free(b);
}

static void test_refusals(void) {
  loom_error err = {0};
  void *data = (void *)1;
  size_t len = 1;
  loom_net *net = small_net("gumbel_softmax");
  g_assert_cmpint(loom_onnx_export_bytes(net, &data, &len, &err), ==, LOOM_ERR_UNSUPPORTED);
  g_assert_null(data);
  g_assert_cmpuint(len, ==, 0);
  g_assert_nonnull(strstr(err.message, "layer gumbel_softmax at (0,0,1,0) cannot be exported to ONNX"));
  loom_net_free(net);

  /* A shape problem is reported as shape inference reports it. */
  net = small_net("tanh");
  loom_shape wrong = loom_shape_1d(5);
  g_assert_cmpint(loom_net_set_input_shape(net, &wrong, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_onnx_export_bytes(net, &data, &len, &err), !=, LOOM_OK);
  g_assert_nonnull(strstr(err.message, "in_features"));
  g_assert_cmpint(loom_net_set_execution(net, LOOM_EXEC_SYSTOLIC, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_onnx_export_bytes(net, &data, &len, &err), ==, LOOM_ERR_UNSUPPORTED);
  g_assert_nonnull(strstr(err.message, "systolic"));
  loom_net_free(net);

  g_assert_cmpint(loom_onnx_export_bytes(NULL, &data, &len, &err), ==, LOOM_ERR_INVALID);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/onnx/writer/varints", test_varints);
  g_test_add_func("/onnx/writer/float-string-message", test_float_string_message);
  g_test_add_func("/onnx/export/same-bytes", test_same_bytes);
  g_test_add_func("/onnx/export/refusals", test_refusals);
  return g_test_run();
}
