/* Cleaning up a test's g_dir_make_tmp folder (CLI and file-format tests share it). */
#pragma once
#include <glib.h>
#include <glib/gstdio.h>

/* Removes `dir` and what a test left in it, so that runs leave nothing behind in /tmp. The tests write plain
 * files there; g_remove also takes an empty folder, should one have been made. */
static inline void tmp_dir_remove(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  for (const char *name; d && (name = g_dir_read_name(d));) {
    char *path = g_build_filename(dir, name, NULL);
    g_remove(path);
    g_free(path);
  }
  if (d) g_dir_close(d);
  g_rmdir(dir);
}
