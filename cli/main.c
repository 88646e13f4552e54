/* loom: the command-line face of the engine. */
#include "commands.h"

#include <glib/gi18n.h>
#include <locale.h>
#include <loom/loom.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void cli_error(const char *command, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (command)
    fprintf(stderr, "loom %s: ", command);
  else
    fputs("loom: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int cli_usage_error(const char *command, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cli_error(command, "%s", msg);
  if (command)
    fprintf(stderr, _("Try 'loom %s --help'.\n"), command);
  else
    fputs(_("Try 'loom --help'.\n"), stderr);
  return 2;
}

const loom_command *cli_find_command(const char *name) {
  for (int i = 0; i < loom_n_commands; i++)
    if (strcmp(loom_commands[i].name, name) == 0) return &loom_commands[i];
  return NULL;
}

int cli_wants_help(const loom_command *cmd, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf(_("Usage: %s\n"), _(cmd->usage));
      printf("\n%s\n", _(cmd->summary));
      return 1;
    }
  }
  return 0;
}

static void print_help(FILE *out) {
  fprintf(out, _("Usage: loom [--version] [--help] COMMAND [ARGS...]\n"));
  fprintf(out, "\n%s\n\n", _("Design, train, inspect and export volumetric neural networks."));
  fprintf(out, "%s\n", _("Commands:"));
  for (int i = 0; i < loom_n_commands; i++)
    fprintf(out, "  %-10s %s\n", loom_commands[i].name, _(loom_commands[i].summary));
  fprintf(out, "\n%s\n", _("Run 'loom COMMAND --help' for the options of a command."));
}

int main(int argc, char **argv) {
  setlocale(LC_ALL, "");
  bindtextdomain(GETTEXT_PACKAGE, loom_locale_dir());
  bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
  textdomain(GETTEXT_PACKAGE);

  if (argc < 2) {
    print_help(stderr);
    return 2;
  }
  const char *first = argv[1];
  if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 || strcmp(first, "help") == 0) {
    if (argc > 2 && strcmp(first, "help") == 0) {
      const loom_command *cmd = cli_find_command(argv[2]);
      if (!cmd) return cli_usage_error(NULL, _("unknown command '%s'"), argv[2]);
      char *hargv[] = {argv[2], (char *)"--help", NULL};
      cli_wants_help(cmd, 2, hargv);
      return 0;
    }
    print_help(stdout);
    return 0;
  }
  if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
    printf("loom %s (engine %s)\n", LOOM_CLI_VERSION, loom_version());
    return 0;
  }
  if (first[0] == '-') return cli_usage_error(NULL, _("unknown option '%s'"), first);

  const loom_command *cmd = cli_find_command(first);
  if (!cmd) return cli_usage_error(NULL, _("unknown command '%s'"), first);
  if (cli_wants_help(cmd, argc - 1, argv + 1)) return 0;
  return cmd->run(argc - 1, argv + 1);
}
