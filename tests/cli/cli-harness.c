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
