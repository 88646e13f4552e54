/* Small JSON writers for the commands that print --json by hand. */
#pragma once
#include <glib.h>

/* A double in the C locale, shortest form that reads back exactly; NaN and
 * infinities (which JSON has no word for) as null. */
void cli_json_number(GString *s, double v);
/* A string with quotes, backslashes and control characters escaped; other
 * bytes (UTF-8) are copied. */
void cli_json_string(GString *s, const char *text);
