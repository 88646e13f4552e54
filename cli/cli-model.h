/* Helpers shared by the model commands (info, forward, new). */
#pragma once
#include <loom/loom.h>
#include <loom/model.h>

/* "--name VALUE" or "--name=VALUE" at argv[*i]: 1 and *value set (advancing *i
 * past a separate value), 0 if argv[*i] is another argument, -1 if the value
 * is missing. */
int cli_option_value(const char *name, int argc, char **argv, int *i, const char **value);

/* Parses "A,B,..." into 1..max positive integers; false if malformed. */
bool cli_parse_int_list(const char *text, int64_t *out, int max, int *n);

/* Loads a model strictly; on failure prints "loom CMD: message" and returns NULL. */
loom_net *cli_load_model(const char *command, const char *path);
/* The same with extra loom_model_flags (LOOM_MODEL_AT_REST for --inference). */
loom_net *cli_load_model_flags(const char *command, const char *path, unsigned flags);

/* Writes a float in the C locale, shortest form that reads back exactly. */
void cli_format_double(char *buf, size_t size, double v);
