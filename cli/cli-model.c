#include "cli-model.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

int cli_option_value(const char *name, int argc, char **argv, int *i, const char **value) {
  size_t len = strlen(name);
  if (strncmp(argv[*i], name, len) != 0) return 0;
  if (argv[*i][len] == '=') {
    *value = argv[*i] + len + 1;
    return 1;
  }
  if (argv[*i][len] != '\0') return 0;
  if (*i + 1 >= argc) return -1;
  *value = argv[++*i];
  return 1;
}

bool cli_parse_int_list(const char *text, int64_t *out, int max, int *n) {
  *n = 0;
  const char *p = text;
  for (;;) {
    if (*n == max || !(*p >= '0' && *p <= '9')) return false;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (errno == ERANGE || v < 1) return false;
    out[(*n)++] = v;
    if (*end == '\0') return true;
    if (*end != ',') return false;
    p = end + 1;
  }
}

loom_net *cli_load_model(const char *command, const char *path) { return cli_load_model_flags(command, path, 0); }

loom_net *cli_load_model_flags(const char *command, const char *path, unsigned flags) {
  loom_net *net = NULL;
  loom_error err = {0};
  if (loom_model_load(path, LOOM_MODEL_STRICT | flags, &net, &err) != LOOM_OK) {
    cli_error(command, "%s", err.message);
    return NULL;
  }
  return net;
}

void cli_format_double(char *buf, size_t size, double v) {
  for (int prec = 1; prec <= 17; prec++) {
    char fmt[16];
    snprintf(fmt, sizeof fmt, "%%.%dg", prec);
    g_ascii_formatd(buf, (int)size, fmt, v);
    if (g_ascii_strtod(buf, NULL) == v) return;
  }
}
