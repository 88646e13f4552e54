#include "commands.h"

#include <glib/gi18n.h>

/* One line per subcommand. Keep sorted by name. */
#define COMMAND(name, summary, usage) \
  extern int cmd_##name(int argc, char **argv);
#include "command-list.h"
#undef COMMAND

const loom_command loom_commands[] = {
#define COMMAND(name, summary, usage) {#name, summary, usage, cmd_##name},
#include "command-list.h"
#undef COMMAND
};

const int loom_n_commands = (int)(sizeof loom_commands / sizeof loom_commands[0]);
