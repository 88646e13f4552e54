/* The building blocks of the model file: strict base64, the JSON emitter and
 * the path-reporting JSON reader. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "io/base64.h"
#include "io/json-read.h"
#include "io/json-write.h"

static char *encode(const void *data, size_t n) {
  size_t len;
  g_assert_true(base64_encoded_len(n, &len));
  char *out = g_malloc(len + 1);
  base64_encode(data, n, out);
  g_assert_cmpuint(strlen(out), ==, len);
  return out;
}

static void test_base64_rfc4648_vectors(void) {
  /* RFC 4648 §10. */
  const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  const char *coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (int i = 0; i < 7; i++) {
    char *e = encode(plain[i], strlen(plain[i]));
    g_assert_cmpstr(e, ==, coded[i]);
    char buf[8] = {0}, why[128];
    g_assert_true(base64_decode_exact(coded[i], strlen(coded[i]), buf, strlen(plain[i]), why, sizeof why));
    g_assert_cmpmem(buf, strlen(plain[i]), plain[i], strlen(plain[i]));
    g_free(e);
  }
}

static void test_base64_all_bytes_round_trip(void) {
  unsigned char data[259];
  for (int i = 0; i < 259; i++) data[i] = (unsigned char)(i * 7 + 3);
  for (size_t n = 0; n <= sizeof data; n += 1) {
    char *e = encode(data, n);
    unsigned char back[259];
    char why[128];
    g_assert_true(base64_decode_exact(e, strlen(e), back, n, why, sizeof why));
    g_assert_cmpmem(back, n, data, n);
    g_free(e);
  }
}

static void expect_bad(const char *text, size_t n, const char *message) {
  unsigned char buf[16];
  char why[128] = "";
  g_assert_false(base64_decode_exact(text, strlen(text), buf, n, why, sizeof why));
  g_assert_cmpstr(why, ==, message);
}

static void test_base64_strict(void) {
  expect_bad("Zm9v", 4, "expected 8 base64 characters for 4 bytes, found 4");
  expect_bad("Zm9vYg=", 4, "expected 8 base64 characters for 4 bytes, found 7");
  expect_bad("Zm9*", 3, "invalid base64 character '*' at offset 3");
  expect_bad("Zm 9", 3, "invalid base64 character ' ' at offset 2");
  expect_bad("Zm9\n", 3, "invalid base64 byte 0x0a at offset 3");
  expect_bad("Zm9=", 3, "invalid base64 character '=' at offset 3");
  expect_bad("Z=9v", 3, "invalid base64 character '=' at offset 1");
  expect_bad("Zm8=Zm8=", 5, "invalid base64 character '=' at offset 3");
  /* Unused bits of the last group must be zero: "Zh==" decodes to 'f' too. */
  expect_bad("Zh==", 1, "non-canonical base64 padding bits at offset 0");
  expect_bad("Zm9=", 2, "non-canonical base64 padding bits at offset 0");
  expect_bad("Zm=v", 1, "wrong base64 padding at offset 0 for a length of 1 bytes");
  expect_bad("Zm8v", 2, "wrong base64 padding at offset 0 for a length of 2 bytes");
}

static void test_writer_layout_and_doubles(void) {
  jw w;
  jw_init(&w);
  jw_begin_object(&w, false);
  jw_key(&w, "a");
  jw_int(&w, -3);
  jw_key(&w, "at");
  jw_begin_array(&w, true);
  for (int i = 0; i < 3; i++) jw_int(&w, i);
  jw_end_array(&w);
  jw_key(&w, "s\"q");
  jw_string(&w, "x\n\001");
  jw_key(&w, "empty");
  jw_begin_array(&w, false);
  jw_end_array(&w);
  jw_key(&w, "f");
  jw_begin_array(&w, true);
  jw_double(&w, 0.1);
  jw_double(&w, 1.0);
  jw_double(&w, -2.5e-300);
  jw_double(&w, 1e22);
  jw_bool(&w, true);
  jw_end_array(&w);
  jw_end_object(&w);
  size_t len;
  char *text = jw_finish(&w, &len);
  g_assert_cmpstr(text, ==,
                  "{\n  \"a\": -3,\n  \"at\": [0, 1, 2],\n  \"s\\\"q\": \"x\\n\\u0001\",\n  \"empty\": [],\n"
                  "  \"f\": [0.1, 1.0, -2.5e-300, 1e+22, true]\n}\n");
  g_assert_cmpuint(len, ==, strlen(text));
  g_free(text);
}

static void test_writer_doubles_round_trip(void) {
  GRand *rand = g_rand_new_with_seed(7);
  for (int i = 0; i < 2000; i++) {
    double v;
    guint64 bits = ((guint64)g_rand_int(rand) << 32) | g_rand_int(rand);
    memcpy(&v, &bits, sizeof v);
    if (!isfinite(v)) continue;
    jw w;
    jw_init(&w);
    jw_double(&w, v);
    char *text = jw_finish(&w, NULL);
    g_assert_true(g_ascii_strtod(text, NULL) == v);
    g_free(text);
  }
  g_rand_free(rand);
}

static JsonNode *parse(const char *text) {
  GError *gerr = NULL;
  JsonNode *n = json_from_string(text, &gerr);
  g_assert_no_error(gerr);
  return n;
}

static void test_reader_paths_and_types(void) {
  loom_error err = {0};
  jr r;
  jr_init(&r, "m.json", true, &err);
  JsonNode *root = parse("{\"slots\": [{\"layer\": {\"params\": {\"kernel\": \"3\", \"odd key\": 1}}}]}");
  JsonObject *o = json_node_get_object(root);
  JsonArray *slots;
  g_assert_cmpint(jr_get_array(&r, o, "slots", &slots), ==, 0);
  g_assert_cmpstr(r.path, ==, "$");
  size_t m0 = jr_push_key(&r, "slots");
  size_t m1 = jr_push_index(&r, 0);
  JsonObject *slot, *layer, *params;
  g_assert_cmpint(jr_object(&r, json_array_get_element(slots, 0), &slot), ==, 0);
  g_assert_cmpint(jr_get_object(&r, slot, "layer", &layer), ==, 0);
  size_t m2 = jr_push_key(&r, "layer");
  g_assert_cmpint(jr_get_object(&r, layer, "params", &params), ==, 0);
  size_t m3 = jr_push_key(&r, "params");
  int64_t v;
  g_assert_cmpint(jr_get_int(&r, params, "kernel", 1, 64, &v), ==, LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==,
                  "m.json: $.slots[0].layer.params.kernel: expected an integer in 1..64, found a string");
  g_assert_cmpint(jr_get_int(&r, params, "stride", 1, 64, &v), ==, LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==, "m.json: $.slots[0].layer.params.stride: required member is missing");
  const char *const allowed[] = {"kernel", "stride", NULL};
  g_assert_cmpint(jr_check_members(&r, params, allowed), ==, LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==,
                  "m.json: $.slots[0].layer.params[\"odd key\"]: unknown member (expected one of: kernel, stride)");
  r.strict = false;
  g_assert_cmpint(jr_check_members(&r, params, allowed), ==, 0);
  jr_pop(&r, m3);
  jr_pop(&r, m2);
  jr_pop(&r, m1);
  jr_pop(&r, m0);
  g_assert_cmpstr(r.path, ==, "$");
  json_node_unref(root);

  root = parse("{\"i\": 99, \"d\": 1.5, \"b\": 1, \"n\": null, \"big\": 1e999}");
  o = json_node_get_object(root);
  g_assert_cmpint(jr_get_int(&r, o, "i", 0, 10, &v), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "m.json: $.i: expected an integer in 0..10, found 99");
  g_assert_cmpint(jr_get_int(&r, o, "d", 0, 10, &v), ==, LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==,
                  "m.json: $.d: expected an integer in 0..10, found a number with a fraction or exponent");
  bool b;
  g_assert_cmpint(jr_get_bool(&r, o, "b", &b), ==, LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==, "m.json: $.b: expected true or false, found an integer");
  const char *s;
  g_assert_cmpint(jr_get_string(&r, o, "n", &s), ==, LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==, "m.json: $.n: expected a string, found null");
  double d;
  size_t mark = jr_push_key(&r, "i");
  g_assert_cmpint(jr_double(&r, json_object_get_member(o, "i"), 0, 100, &d), ==, 0);
  g_assert_cmpfloat(d, ==, 99.0);
  jr_pop(&r, mark);
  mark = jr_push_key(&r, "big");
  g_assert_cmpint(jr_double(&r, json_object_get_member(o, "big"), -1e300, 1e300, &d), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "m.json: $.big: the number is not finite");
  jr_pop(&r, mark);
  json_node_unref(root);
}

static void expect_precheck(const char *text, const char *message) {
  loom_error err = {0};
  jr r;
  jr_init(&r, "p.json", true, &err);
  int rc = jr_precheck(&r, text, strlen(text), 6);
  if (!message) {
    if (rc) g_error("%s: %s", text, err.message);
    return;
  }
  g_assert_cmpint(rc, ==, LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==, message);
}

static void test_reader_precheck(void) {
  loom_error err = {0};
  jr r;
  jr_init(&r, "deep.json", true, &err);
  GString *s = g_string_new("{\"a\": \"[[[[\",\n \"b\": ");
  for (int i = 0; i < 5; i++) g_string_append(s, "[");
  for (int i = 0; i < 5; i++) g_string_append(s, "]");
  g_string_append(s, "}");
  g_assert_cmpint(jr_precheck(&r, s->str, s->len, 6), ==, 0);
  g_string_insert(s, 13, " \"c\": [[[[[[1]]]]]],");
  g_assert_cmpint(jr_precheck(&r, s->str, s->len, 6), ==, LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==, "deep.json:1:25: arrays and objects nest deeper than 6 levels");
  g_assert_cmpint(jr_precheck(&r, "{\"a\":\"\xff\"}", 9, 6), ==, LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==, "deep.json: not valid UTF-8 text (byte 6)");
  g_assert_cmpint(jr_precheck(&r, "{\"a\":\0}", 7, 6), ==, LOOM_ERR_FORMAT);
  g_string_free(s, TRUE);

  /* What json-glib would accept but JSON does not allow. */
  expect_precheck("[1, -0, 0.5, -1.25e-3, 1E+2, 9223372036854775807, -9223372036854775808, \"\\u00e9\\n\"]", NULL);
  expect_precheck("  {\"a\": [true, false, null], \"b\": {}}\n", NULL);
  expect_precheck("[9223372036854775808]", "p.json:1:2: the integer 9223372036854775808 does not fit in 64 bits");
  expect_precheck("[-9223372036854775809]", "p.json:1:2: the integer -9223372036854775809 does not fit in 64 bits");
  expect_precheck("[99999999999999999999999]", "p.json:1:2: the integer 99999999999999999999999 does not fit in 64 bits");
  expect_precheck("[0x10]", "p.json:1:3: expected ',' or ']'");
  expect_precheck("[01]", "p.json:1:2: invalid number (leading zero)");
  expect_precheck("[1.]", "p.json:1:4: invalid number (no digit after the point)");
  expect_precheck("[.5]", "p.json:1:2: expected a value (object, array, string, number, true, false or null)");
  expect_precheck("[1e]", "p.json:1:4: invalid number (no digit in the exponent)");
  expect_precheck("[+1]", "p.json:1:2: expected a value (object, array, string, number, true, false or null)");
  expect_precheck("[/*c*/1]", "p.json:1:2: expected a value (object, array, string, number, true, false or null)");
  expect_precheck("['a']", "p.json:1:2: expected a value (object, array, string, number, true, false or null)");
  expect_precheck("[NaN]", "p.json:1:2: expected a value (object, array, string, number, true, false or null)");
  expect_precheck("[1,]", "p.json:1:4: expected a value (object, array, string, number, true, false or null)");
  expect_precheck("{\"a\": 1,\n \"a\": 2}", "p.json:2:2: duplicate member “a”");
  expect_precheck("{\"a\": 1, \"\\u0061\": 2}", "p.json:1:10: duplicate member “a”");
  expect_precheck("{\"a\" 1}", "p.json:1:6: expected ':' after a member name");
  expect_precheck("{a: 1}", "p.json:1:2: expected a member name in double quotes");
  expect_precheck("[\"a\tb\"]", "p.json:1:4: control character inside a string (write it as an escape)");
  expect_precheck("[\"\\x\"]", "p.json:1:3: invalid escape in a string");
  expect_precheck("[\"\\u12G4\"]", "p.json:1:3: invalid \\u escape in a string");
  expect_precheck("[\"abc", "p.json:1:6: unterminated string (is the file truncated?)");
  expect_precheck("{\"a\": [1, 2", "p.json:1:12: unexpected end of the text (is the file truncated?)");
  expect_precheck("{} {}", "p.json:1:4: unexpected text after the end of the document");
  expect_precheck(" \n ", "p.json: the file is empty");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/io/base64/rfc4648-vectors", test_base64_rfc4648_vectors);
  g_test_add_func("/io/base64/all-bytes-round-trip", test_base64_all_bytes_round_trip);
  g_test_add_func("/io/base64/strict", test_base64_strict);
  g_test_add_func("/io/json/writer-layout", test_writer_layout_and_doubles);
  g_test_add_func("/io/json/writer-doubles-round-trip", test_writer_doubles_round_trip);
  g_test_add_func("/io/json/reader-paths-and-types", test_reader_paths_and_types);
  g_test_add_func("/io/json/reader-precheck", test_reader_precheck);
  return g_test_run();
}
