#include "commands.h"

#include <glib/gi18n.h>
#include <loom/loom.h>
#include <stdio.h>

int cmd_version(int argc, char **argv);

int cmd_version(int argc, char **argv) {
  if (argc > 1) return cli_usage_error("version", _("unexpected argument '%s'"), argv[1]);
  printf("loom %s (engine %s)\n", LOOM_CLI_VERSION, loom_version());
  return 0;
}
