#include "cli-harness.h"

#include <string.h>

CliResult cli_run(const char *stdin_text, const char *const *extra_env, const char *const *argv) {
  const char *loom = g_getenv("LOOM_CLI");
  g_assert_nonnull(loom);
  GPtrArray *args = g_ptr_array_new();
  g_ptr_array_add(args, (gpointer)loom);
  for (int i = 0; argv[i]; i++) g_ptr_array_add(args, (gpointer)argv[i]);
  g_ptr_array_add(args, NULL);

  char **envp = g_get_environ();
  for (int i = 0; extra_env && extra_env[i]; i++) {
    char **kv = g_strsplit(extra_env[i], "=", 2);
    envp = g_environ_setenv(envp, kv[0], kv[1], TRUE);
    g_strfreev(kv);
  }

  GError *error = NULL;
  GSubprocessLauncher *launcher = g_subprocess_launcher_new(
      G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_environ(launcher, envp);
  GSubprocess *proc = g_subprocess_launcher_spawnv(launcher, (const char *const *)args->pdata, &error);
  g_assert_no_error(error);
  CliResult r = {0};
  g_subprocess_communicate_utf8(proc, stdin_text ? stdin_text : "", NULL, &r.out, &r.err, &error);
  g_assert_no_error(error);
  r.status = g_subprocess_get_if_exited(proc) ? g_subprocess_get_exit_status(proc) : -1;
  g_object_unref(proc);
  g_object_unref(launcher);
  g_strfreev(envp);
  g_ptr_array_free(args, TRUE);
  return r;
}

void cli_result_clear(CliResult *r) {
  g_free(r->out);
  g_free(r->err);
  r->out = r->err = NULL;
}

void cli_write_npy(const char *path, const int64_t *shape, int ndim, const float *data) {
  GString *dict = g_string_new("{'descr': '<f4', 'fortran_order': False, 'shape': (");
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    g_string_append_printf(dict, i ? ", %lld" : "%lld", (long long)shape[i]);
    n *= shape[i];
  }
  g_string_append(dict, ndim == 1 ? ",), }" : "), }");
  while ((10 + dict->len + 1) % 64) g_string_append_c(dict, ' ');
  g_string_append_c(dict, '\n');
  GByteArray *b = g_byte_array_new();
  g_byte_array_append(b, (const guint8 *)"\x93NUMPY\x01\x00", 8);
  guint8 hl[2] = {(guint8)(dict->len & 0xff), (guint8)(dict->len >> 8)};
  g_byte_array_append(b, hl, 2);
  g_byte_array_append(b, (const guint8 *)dict->str, (guint)dict->len);
  g_byte_array_append(b, (const guint8 *)data, (guint)(n * 4));
  g_assert_true(g_file_set_contents(path, (const char *)b->data, (gssize)b->len, NULL));
  g_byte_array_unref(b);
  g_string_free(dict, TRUE);
}

char *cli_new_example(const char *name, const char *dir, const char *file) {
  char *path = g_build_filename(dir, file, NULL);
  CliResult r = cli_run(NULL, NULL, (const char *[]){"new", "--example", name, "--out", path, "--force", NULL});
  if (r.status != 0) g_error("loom new --example %s failed (exit status %d): %s", name, r.status, r.err);
  cli_result_clear(&r);
  return path;
}
