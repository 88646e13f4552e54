#include "cli-json.h"

#include <math.h>

#include "cli-model.h"

void cli_json_number(GString *s, double v) {
  if (!isfinite(v)) {
    g_string_append(s, "null");
    return;
  }
  char buf[40];
  cli_format_double(buf, sizeof buf, v);
  g_string_append(s, buf);
}

void cli_json_string(GString *s, const char *text) {
  g_string_append_c(s, '"');
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p == '"' || *p == '\\') g_string_append_printf(s, "\\%c", *p);
    else if (*p < 0x20) g_string_append_printf(s, "\\u%04x", *p);
    else g_string_append_c(s, (char)*p);
  }
  g_string_append_c(s, '"');
}
