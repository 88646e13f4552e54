/*
 * The `loom` subcommands. Each lives in cli/cmd-NAME.c and is listed once in
 * the table in cli/commands.c. A command receives argv with argv[0] = its name
 * and returns the process exit status: 0 success, 1 failure, 2 usage error.
 */
#pragma once

typedef struct loom_command {
  const char *name;
  const char *summary; /* N_()-marked, one line for `loom --help` */
  const char *usage;   /* N_()-marked, the synopsis for `loom NAME --help` */
  int (*run)(int argc, char **argv);
} loom_command;

extern const loom_command loom_commands[];
extern const int loom_n_commands;

/* Shared helpers for commands: print "loom NAME: message" to stderr. */
void cli_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints a usage error and returns 2. */
int cli_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True if argv contains --help or -h; prints the command's usage. */
int cli_wants_help(const loom_command *cmd, int argc, char **argv);
const loom_command *cli_find_command(const char *name);
