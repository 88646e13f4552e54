#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "loom/loom.h"

static void test_version(void) {
  const char *v = loom_version();
  int major, minor, patch;
  g_assert_cmpint(sscanf(v, "%d.%d.%d", &major, &minor, &patch), ==, 3);
  g_assert_cmpstr(v, ==, LOOM_VERSION_STRING);
}

static int fails_with_coords(loom_error *err, int z, int y) {
  return loom_error_set(err, LOOM_ERR_SHAPE, "slot (%d,%d,0,0): expected %d inputs, got %d", z, y, 8, 4);
}

static void test_error_set_and_prefix(void) {
  loom_error err = {0};
  g_assert_cmpint(fails_with_coords(&err, 1, 2), ==, LOOM_ERR_SHAPE);
  g_assert_cmpint(err.code, ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "slot (1,2,0,0): expected 8 inputs, got 4");
  loom_error_prefix(&err, "%s", "model.json");
  g_assert_cmpstr(err.message, ==, "model.json: slot (1,2,0,0): expected 8 inputs, got 4");
  loom_error_clear(&err);
  g_assert_cmpint(err.code, ==, LOOM_OK);
  g_assert_cmpstr(err.message, ==, "");
  /* A NULL error is allowed everywhere and still returns the status. */
  g_assert_cmpint(fails_with_coords(NULL, 0, 0), ==, LOOM_ERR_SHAPE);
  loom_error_prefix(NULL, "x");
}

static void test_error_truncates(void) {
  loom_error err;
  char big[4000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = 0;
  loom_error_set(&err, LOOM_ERR_INVALID, "%s", big);
  g_assert_cmpuint(strlen(err.message), ==, LOOM_ERROR_MESSAGE_MAX - 1);
  loom_error_prefix(&err, "file.json");
  g_assert_cmpuint(strlen(err.message), ==, LOOM_ERROR_MESSAGE_MAX - 1);
  g_assert_true(g_str_has_prefix(err.message, "file.json: aaa"));
}

static void test_status_names(void) {
  g_assert_cmpstr(loom_status_name(LOOM_OK), ==, "ok");
  g_assert_cmpstr(loom_status_name(LOOM_ERR_SHAPE), ==, "shape");
  g_assert_cmpstr(loom_status_name((loom_status)-999), ==, "unknown");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/core/version", test_version);
  g_test_add_func("/core/error/set-and-prefix", test_error_set_and_prefix);
  g_test_add_func("/core/error/truncates", test_error_truncates);
  g_test_add_func("/core/error/status-names", test_status_names);
  return g_test_run();
}
