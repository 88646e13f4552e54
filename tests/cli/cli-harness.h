/* Runs the real `loom` binary (LOOM_CLI) and captures what it prints. */
#pragma once
#include <gio/gio.h>

typedef struct {
  char *out;
  char *err;
  int status; /* exit status */
} CliResult;

/* argv is NULL-terminated, without "loom". stdin_text may be NULL. extra_env may be NULL
 * or a NULL-terminated list of "NAME=VALUE" entries added to the environment. */
CliResult cli_run(const char *stdin_text, const char *const *extra_env, const char *const *argv);
void cli_result_clear(CliResult *r);
