/*
 * loom dtype list | loom dtype convert --dtype NAME [--scale S]
 *
 * The output formats are checked from outside (docs/dtypes.md): numbers are
 * read and printed in the C locale whatever the user's locale, so that
 * "0x1.8p+0" never becomes "0x1,8p+0".
 */
#include "cli-model.h"
#include "commands.h"

#include <errno.h>
#include <glib.h>
#include <glib/gi18n.h>
#include <locale.h>
#include <loom/loom.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_dtype(int argc, char **argv);

/* "[-448, 448]", "[-127, 127] x scale", "{-1, 0, 1} x scale". */
static char *range_text(const loom_dtype_traits *t) {
  switch (t->kind) {
  case LOOM_DTYPE_KIND_FLOAT: return g_strdup_printf("[%g, %g]", t->min_value, t->max_value);
  case LOOM_DTYPE_KIND_SIGNED: return g_strdup_printf("[-%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "] x scale", t->qmax, t->qmax);
  case LOOM_DTYPE_KIND_UNSIGNED: return g_strdup_printf("[0, %" G_GUINT64_FORMAT "] x scale", t->qmax);
  case LOOM_DTYPE_KIND_TERNARY: return g_strdup("{-1, 0, 1} x scale");
  case LOOM_DTYPE_KIND_BINARY: return g_strdup("{-1, 1} x scale");
  }
  return g_strdup("?");
}

static int dtype_list(int argc, char **argv, locale_t c_locale) {
  if (argc > 1) return cli_usage_error("dtype", _("unexpected argument '%s'"), argv[1]);
  locale_t old = uselocale(c_locale);
  char *ranges[LOOM_DTYPE_COUNT];
  int width = (int)strlen("range");
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    ranges[d] = range_text(loom_dtype_traits_get((loom_dtype)d));
    width = MAX(width, (int)strlen(ranges[d]));
  }
  /* Column titles stay English: scripts read this table. */
  printf("%-9s %4s  %-*s  %8s\n", "name", "bits", width, "range", "bytes/1M");
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    printf("%-9s %4d  %-*s  %8zu\n", t->name, t->bits, width, ranges[d], loom_dtype_row_bytes(t->id, 1000000));
    g_free(ranges[d]);
  }
  fflush(stdout);
  uselocale(old);
  return 0;
}

typedef struct {
  const char *text; /* into the input buffer, NUL-terminated */
  int line, column;
  float value;
} token;

static char *read_stdin(size_t *len) {
  GString *s = g_string_new(NULL);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) g_string_append_len(s, buf, (gssize)n);
  *len = s->len;
  return g_string_free(s, FALSE);
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static int dtype_convert(int argc, char **argv, locale_t c_locale) {
  const char *dtype_name = NULL, *scale_text = NULL;
  for (int i = 1; i < argc; i++) {
    int r;
    if ((r = cli_option_value("--dtype", argc, argv, &i, &dtype_name)) ||
        (r = cli_option_value("--scale", argc, argv, &i, &scale_text))) {
      if (r < 0) return cli_usage_error("dtype", _("option '%s' needs a value"), argv[i]);
      continue;
    }
    return cli_usage_error("dtype", _("unexpected argument '%s'"), argv[i]);
  }
  if (!dtype_name) return cli_usage_error("dtype", _("convert needs --dtype NAME"));
  loom_dtype d;
  loom_error err;
  if (loom_dtype_from_name(dtype_name, &d, &err)) return cli_usage_error("dtype", "%s", err.message);
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  float scale = 1.0f;
  if (scale_text) {
    if (!t->scaled)
      return cli_usage_error("dtype", _("%s is not a scaled dtype; --scale applies to the integer, ternary and binary dtypes"),
                             t->name);
    char *end;
    errno = 0;
    scale = strtof_l(scale_text, &end, c_locale);
    if (end == scale_text || *end || errno == ERANGE || !isfinite(scale) || !(scale > 0))
      return cli_usage_error("dtype", _("--scale must be a positive finite float32 number, not '%s'"), scale_text);
  }

  size_t len;
  char *input = read_stdin(&len);
  GArray *tokens = g_array_new(FALSE, FALSE, sizeof(token));
  int line = 1, status = 0;
  size_t line_start = 0;
  for (size_t p = 0; p < len && status == 0;) {
    if (is_space(input[p])) {
      if (input[p] == '\n') {
        line++;
        line_start = p + 1;
      }
      p++;
      continue;
    }
    size_t start = p;
    while (p < len && !is_space(input[p])) p++;
    char saved = p < len ? input[p] : '\0';
    if (p < len) input[p] = '\0'; /* the buffer has a NUL after its end */
    token tk = {input + start, line, (int)(start - line_start) + 1, 0.0f};
    char *end;
    errno = 0;
    tk.value = strtof_l(tk.text, &end, c_locale);
    /* Underflow to a subnormal or zero is a correct rounding; overflow is not. */
    bool overflow = errno == ERANGE && isinf(tk.value);
    if (end == tk.text || *end || overflow || strlen(tk.text) != p - start) {
      cli_error("dtype", overflow ? _("value %u (line %d, column %d): '%s' is out of the float32 range")
                                  : _("value %u (line %d, column %d): '%s' is not a number"),
                tokens->len + 1, tk.line, tk.column, tk.text);
      status = 1;
      break;
    }
    uint64_t code;
    if (loom_dtype_encode(d, tk.value, scale, &code, &err)) {
      cli_error("dtype", _("value %u (line %d, column %d): '%s': %s"), tokens->len + 1, tk.line, tk.column, tk.text,
                err.message);
      status = 1;
      break;
    }
    g_array_append_val(tokens, tk);
    if (p < len) { /* step over the separator that became the NUL */
      if (saved == '\n') {
        line++;
        line_start = p + 1;
      }
      p++;
    }
  }

  if (status == 0) {
    /* Nothing is printed unless every value converts. */
    const int digits = (t->bits + 3) / 4;
    locale_t old = uselocale(c_locale);
    for (guint i = 0; i < tokens->len; i++) {
      const token *tk = &g_array_index(tokens, token, i);
      uint64_t code;
      loom_dtype_encode(d, tk->value, scale, &code, NULL);
      double decoded = t->decode(code, scale);
      /* A layer computes with float32; float64 decodes beyond it. */
      if (d != LOOM_DTYPE_FLOAT64) decoded = (float)decoded;
      printf("%s 0x%0*" G_GINT64_MODIFIER "x %a\n", tk->text, digits, (guint64)code, decoded);
    }
    fflush(stdout);
    uselocale(old);
  }
  g_array_free(tokens, TRUE);
  g_free(input);
  return status;
}

int cmd_dtype(int argc, char **argv) {
  if (argc < 2) return cli_usage_error("dtype", _("missing subcommand: list or convert"));
  locale_t c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
  if (!c_locale) {
    cli_error("dtype", _("cannot create the C locale"));
    return 1;
  }
  /* Numbers are parsed and printed in the C locale (strtof_l, uselocale
   * around the printing only: messages stay translated). */
  int rc;
  if (strcmp(argv[1], "list") == 0)
    rc = dtype_list(argc - 1, argv + 1, c_locale);
  else if (strcmp(argv[1], "convert") == 0)
    rc = dtype_convert(argc - 1, argv + 1, c_locale);
  else
    rc = cli_usage_error("dtype", _("unknown subcommand '%s' (expected list or convert)"), argv[1]);
  freelocale(c_locale);
  return rc;
}
