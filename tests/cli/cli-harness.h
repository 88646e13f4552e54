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

/* Writes a float32 .npy file (version 1) of the given shape, as numpy would, for the commands' --input. */
void cli_write_npy(const char *path, const int64_t *shape, int ndim, const float *data);

/* Writes the built-in example `name` to dir/file (`loom new --example --force`): the model most tests start
 * from. Returns that path; a failure ends the test with loom's message. */
char *cli_new_example(const char *name, const char *dir, const char *file);
