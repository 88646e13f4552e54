/* X-macro list of subcommands: COMMAND(name, summary, usage). Sorted by name. */
COMMAND(version, N_("Print the version of loom and of the engine"), N_("loom version"))
