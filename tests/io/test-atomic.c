#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

#include "loom/loom.h"

static char *make_dir(void) {
  GError *gerr = NULL;
  char *dir = g_dir_make_tmp("loom-io-XXXXXX", &gerr);
  g_assert_no_error(gerr);
  return dir;
}

static void test_write_then_read(void) {
  char *dir = make_dir();
  char *path = g_build_filename(dir, "model.json", NULL);
  loom_error err = {0};
  g_assert_cmpint(loom_file_write_atomic(path, "first", 5, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_file_write_atomic(path, "second!", 7, &err), ==, LOOM_OK);
  char *data;
  size_t len;
  g_assert_cmpint(loom_file_read_all(path, 1 << 20, &data, &len, &err), ==, LOOM_OK);
  g_assert_cmpuint(len, ==, 7);
  g_assert_cmpstr(data, ==, "second!");
  free(data);
  /* No temporary file is left behind. */
  GDir *d = g_dir_open(dir, 0, NULL);
  int n = 0;
  while (g_dir_read_name(d)) n++;
  g_dir_close(d);
  g_assert_cmpint(n, ==, 1);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

static void test_failed_write_reports_path(void) {
  char *dir = make_dir();
  char *path = g_build_filename(dir, "missing-subdir", "model.json", NULL);
  loom_error err = {0};
  g_assert_cmpint(loom_file_write_atomic(path, "x", 1, &err), ==, LOOM_ERR_IO);
  g_assert_nonnull(strstr(err.message, path));
  g_assert_nonnull(strstr(err.message, "temporary"));
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

static void test_read_limits(void) {
  char *dir = make_dir();
  char *path = g_build_filename(dir, "big.bin", NULL);
  g_assert_true(g_file_set_contents(path, "0123456789", 10, NULL));
  loom_error err = {0};
  char *data = (char *)1;
  size_t len = 99;
  g_assert_cmpint(loom_file_read_all(path, 9, &data, &len, &err), ==, LOOM_ERR_NOMEM);
  g_assert_null(data);
  g_assert_cmpuint(len, ==, 0);
  g_assert_nonnull(strstr(err.message, "10 bytes"));
  g_assert_nonnull(strstr(err.message, path));
  g_assert_cmpint(loom_file_read_all(dir, 100, &data, &len, &err), ==, LOOM_ERR_IO);
  g_assert_nonnull(strstr(err.message, "not a regular file"));
  char *missing = g_build_filename(dir, "nope", NULL);
  g_assert_cmpint(loom_file_read_all(missing, 100, &data, &len, &err), ==, LOOM_ERR_IO);
  g_assert_nonnull(strstr(err.message, "nope"));
  g_unlink(path);
  g_rmdir(dir);
  g_free(missing);
  g_free(path);
  g_free(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/io/file/write-then-read", test_write_then_read);
  g_test_add_func("/io/file/failed-write-reports-path", test_failed_write_reports_path);
  g_test_add_func("/io/file/read-limits", test_read_limits);
  return g_test_run();
}
