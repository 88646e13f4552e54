/* `loom dtype list` and `loom dtype convert`: exact output, exit codes, messages. */
#include <string.h>

#include "cli-harness.h"

static CliResult run_convert(const char *input, const char *dtype, const char *scale) {
  const char *argv[] = {"dtype", "convert", "--dtype", dtype, scale ? "--scale" : NULL, scale, NULL};
  return cli_run(input, NULL, argv);
}

static void expect_convert(const char *input, const char *dtype, const char *scale, const char *out) {
  CliResult r = run_convert(input, dtype, scale);
  if (r.status != 0) g_test_message("stderr: %s", r.err);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.out, ==, out);
  g_assert_cmpstr(r.err, ==, "");
  cli_result_clear(&r);
}

static void test_list(void) {
  const char *argv[] = {"dtype", "list", NULL};
  CliResult r = cli_run(NULL, NULL, argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.out, ==,
    "name      bits  range                                                bytes/1M\n"
    "float64     64  [-1.79769e+308, 1.79769e+308]                         8000000\n"
    "float32     32  [-3.40282e+38, 3.40282e+38]                           4000000\n"
    "float16     16  [-65504, 65504]                                       2000000\n"
    "bfloat16    16  [-3.38953e+38, 3.38953e+38]                           2000000\n"
    "fp8-e4m3     8  [-448, 448]                                           1000000\n"
    "fp8-e5m2     8  [-57344, 57344]                                       1000000\n"
    "fp4          4  [-6, 6]                                                500000\n"
    "int64       64  [-9223372036854775807, 9223372036854775807] x scale   8000000\n"
    "int32       32  [-2147483647, 2147483647] x scale                     4000000\n"
    "int16       16  [-32767, 32767] x scale                               2000000\n"
    "int8         8  [-127, 127] x scale                                   1000000\n"
    "int4         4  [-7, 7] x scale                                        500000\n"
    "int2         2  [-1, 1] x scale                                        250000\n"
    "uint64      64  [0, 18446744073709551615] x scale                     8000000\n"
    "uint32      32  [0, 4294967295] x scale                               4000000\n"
    "uint16      16  [0, 65535] x scale                                    2000000\n"
    "uint8        8  [0, 255] x scale                                      1000000\n"
    "uint4        4  [0, 15] x scale                                        500000\n"
    "uint2        2  [0, 3] x scale                                         250000\n"
    "ternary      2  {-1, 0, 1} x scale                                     250000\n"
    "binary       1  {-1, 1} x scale                                        125000\n");
  cli_result_clear(&r);
}

static void test_convert_floats(void) {
  expect_convert("1 0.1\n65519.99 65520 -0\ninf -inf nan 0x1p-24 0x1p-25 0x1.8p-25", "float16", NULL,
                 "1 0x3c00 0x1p+0\n"
                 "0.1 0x2e66 0x1.998p-4\n"
                 "65519.99 0x7bff 0x1.ffcp+15\n"
                 "65520 0x7c00 inf\n"
                 "-0 0x8000 -0x0p+0\n"
                 "inf 0x7c00 inf\n"
                 "-inf 0xfc00 -inf\n"
                 "nan 0x7e00 nan\n"
                 "0x1p-24 0x0001 0x1p-24\n"
                 "0x1p-25 0x0000 0x0p+0\n"
                 "0x1.8p-25 0x0001 0x1p-24\n");
  expect_convert("1 0x1.01p0 0x1.03p0 3.3895314e38 inf", "bfloat16", NULL,
                 "1 0x3f80 0x1p+0\n"
                 "0x1.01p0 0x3f80 0x1p+0\n"
                 "0x1.03p0 0x3f82 0x1.04p+0\n"
                 "3.3895314e38 0x7f7f 0x1.fep+127\n"
                 "inf 0x7f80 inf\n");
  expect_convert("448 464 1e6 -inf nan -nan 0x1p-9 0x1p-10", "fp8-e4m3", NULL,
                 "448 0x7e 0x1.cp+8\n"
                 "464 0x7e 0x1.cp+8\n"
                 "1e6 0x7e 0x1.cp+8\n"
                 "-inf 0xfe -0x1.cp+8\n"
                 "nan 0x7f nan\n"
                 "-nan 0xff -nan\n"
                 "0x1p-9 0x01 0x1p-9\n"
                 "0x1p-10 0x00 0x0p+0\n");
  expect_convert("57344 61440 inf nan 0x1p-16 0x1p-17", "fp8-e5m2", NULL,
                 "57344 0x7b 0x1.cp+15\n"
                 "61440 0x7b 0x1.cp+15\n"
                 "inf 0x7b 0x1.cp+15\n"
                 "nan 0x7e nan\n"
                 "0x1p-16 0x01 0x1p-16\n"
                 "0x1p-17 0x00 0x0p+0\n");
  expect_convert("0.25 0.26 1.25 5 7 -inf -0.75", "fp4", NULL,
                 "0.25 0x0 0x0p+0\n"
                 "0.26 0x1 0x1p-1\n"
                 "1.25 0x2 0x1p+0\n"
                 "5 0x6 0x1p+2\n"
                 "7 0x7 0x1.8p+2\n"
                 "-inf 0xf -0x1.8p+2\n"
                 "-0.75 0xa -0x1p+0\n");
  expect_convert("0.1 -2", "float64", NULL,
                 "0.1 0x3fb99999a0000000 0x1.99999ap-4\n"
                 "-2 0xc000000000000000 -0x1p+1\n");
  expect_convert("0.1", "float32", NULL, "0.1 0x3dcccccd 0x1.99999ap-4\n");
  expect_convert("", "float32", NULL, "");
}

static void test_convert_scaled(void) {
  expect_convert("1 -1 2.5 3.5 -2.5 200 -1000", "int8", NULL,
                 "1 0x01 0x1p+0\n"
                 "-1 0xff -0x1p+0\n"
                 "2.5 0x02 0x1p+1\n"
                 "3.5 0x04 0x1p+2\n"
                 "-2.5 0xfe -0x1p+1\n"
                 "200 0x7f 0x1.fcp+6\n"
                 "-1000 0x81 -0x1.fcp+6\n");
  expect_convert("0.3 -0.3 1 -5", "int4", "0.25",
                 "0.3 0x1 0x1p-2\n"
                 "-0.3 0xf -0x1p-2\n"
                 "1 0x4 0x1p+0\n"
                 "-5 0x9 -0x1.cp+0\n");
  expect_convert("-5 0.5 1.5 300", "uint8", NULL,
                 "-5 0x00 0x0p+0\n"
                 "0.5 0x00 0x0p+0\n"
                 "1.5 0x02 0x1p+1\n"
                 "300 0xff 0x1.fep+7\n");
  expect_convert("0.4 -0.6 9", "ternary", "0.5",
                 "0.4 0x1 0x1p-1\n"
                 "-0.6 0x3 -0x1p-1\n"
                 "9 0x1 0x1p-1\n");
  expect_convert("0 -0 -3 2", "binary", "2",
                 "0 0x0 0x1p+1\n"
                 "-0 0x0 0x1p+1\n"
                 "-3 0x1 -0x1p+1\n"
                 "2 0x0 0x1p+1\n");
  expect_convert("-1 1e30", "int64", NULL,
                 "-1 0xffffffffffffffff -0x1p+0\n"
                 "1e30 0x7fffffffffffffff 0x1p+63\n");
  expect_convert("1e30 -1", "uint64", NULL,
                 "1e30 0xffffffffffffffff 0x1p+64\n"
                 "-1 0x0000000000000000 0x0p+0\n");
  expect_convert("3 -1", "uint2", "1", "3 0x3 0x1.8p+1\n-1 0x0 0x0p+0\n");
}

static void expect_failure(const char *input, const char *const *argv, int status, const char *err_part) {
  CliResult r = cli_run(input, NULL, argv);
  g_assert_cmpint(r.status, ==, status);
  if (!strstr(r.err, err_part)) g_error("stderr '%s' lacks '%s'", r.err, err_part);
  g_assert_cmpstr(r.out, ==, "");
  cli_result_clear(&r);
}

static void test_errors(void) {
  const char *bad_name[] = {"dtype", "convert", "--dtype", "int3", NULL};
  expect_failure("1", bad_name, 2,
                 "loom dtype: unknown dtype 'int3'; valid dtypes: float64, float32, float16, bfloat16, fp8-e4m3, "
                 "fp8-e5m2, fp4, int64, int32, int16, int8, int4, int2, uint64, uint32, uint16, uint8, uint4, uint2, "
                 "ternary, binary\n");
  const char *f16[] = {"dtype", "convert", "--dtype=float16", NULL};
  expect_failure("1 2\n  3 abc 4", f16, 1, "loom dtype: value 4 (line 2, column 5): 'abc' is not a number\n");
  expect_failure("1 0x1p+200", f16, 1, "loom dtype: value 2 (line 1, column 3): '0x1p+200' is out of the float32 range\n");
  expect_failure("1,5", f16, 1, "value 1 (line 1, column 1): '1,5' is not a number");
  const char *fp4[] = {"dtype", "convert", "--dtype", "fp4", NULL};
  expect_failure("1\nnan", fp4, 1, "loom dtype: value 2 (line 2, column 1): 'nan': fp4 has no code for NaN\n");
  const char *int8[] = {"dtype", "convert", "--dtype", "int8", NULL};
  expect_failure("nan", int8, 1, "'nan': int8 has no code for NaN");
  const char *none[] = {"dtype", "convert", NULL};
  expect_failure("1", none, 2, "loom dtype: convert needs --dtype NAME\n");
  const char *no_value[] = {"dtype", "convert", "--dtype", NULL};
  expect_failure("1", no_value, 2, "option '--dtype' needs a value");
  const char *bad_scale[] = {"dtype", "convert", "--dtype", "int8", "--scale", "0", NULL};
  expect_failure("1", bad_scale, 2, "--scale must be a positive finite float32 number, not '0'");
  const char *nan_scale[] = {"dtype", "convert", "--dtype", "int8", "--scale=nan", NULL};
  expect_failure("1", nan_scale, 2, "not 'nan'");
  const char *float_scale[] = {"dtype", "convert", "--dtype", "float16", "--scale", "2", NULL};
  expect_failure("1", float_scale, 2, "float16 is not a scaled dtype");
  const char *extra[] = {"dtype", "convert", "--dtype", "int8", "--frob", NULL};
  expect_failure("1", extra, 2, "unexpected argument '--frob'");
  const char *sub[] = {"dtype", "frob", NULL};
  expect_failure("", sub, 2, "unknown subcommand 'frob'");
  const char *nosub[] = {"dtype", NULL};
  expect_failure("", nosub, 2, "missing subcommand");
  const char *list_extra[] = {"dtype", "list", "x", NULL};
  expect_failure("", list_extra, 2, "unexpected argument 'x'");
}

static void test_help(void) {
  const char *argv[] = {"dtype", "--help", NULL};
  CliResult r = cli_run(NULL, NULL, argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "Usage: loom dtype list | loom dtype convert --dtype NAME [--scale S]"));
  cli_result_clear(&r);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cli/dtype/list", test_list);
  g_test_add_func("/cli/dtype/convert-floats", test_convert_floats);
  g_test_add_func("/cli/dtype/convert-scaled", test_convert_scaled);
  g_test_add_func("/cli/dtype/errors", test_errors);
  g_test_add_func("/cli/dtype/help", test_help);
  return g_test_run();
}
