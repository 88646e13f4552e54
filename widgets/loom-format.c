/* Number formatting shared by the widgets. */
#include "loom-format-private.h"

#include <glib/gi18n-lib.h>
#include <locale.h>
#include <string.h>

char *loom_format_count(gint64 n) {
  g_autofree char *digits = g_strdup_printf("%" G_GUINT64_FORMAT, n < 0 ? (guint64)-(n + 1) + 1 : (guint64)n);
  const char *sep = localeconv()->thousands_sep;
  if (!sep || !*sep) sep = ",";
  GString *out = g_string_new(n < 0 ? "-" : "");
  size_t len = strlen(digits);
  for (size_t i = 0; i < len; i++) {
    if (i > 0 && (len - i) % 3 == 0) g_string_append(out, sep);
    g_string_append_c(out, digits[i]);
  }
  return g_string_free(out, FALSE);
}

char *loom_format_flops(gint64 flops) {
  static const char *const units[] = {N_("%.1f kFLOPs"), N_("%.1f MFLOPs"), N_("%.1f GFLOPs"), N_("%.1f TFLOPs"),
                                      N_("%.1f PFLOPs")};
  if (flops < 1000)
    return g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%d FLOP", "%d FLOPs", (gulong)MAX(flops, 0)), (int)flops);
  double v = (double)flops / 1000;
  gsize u = 0;
  while (v >= 999.95 && u + 1 < G_N_ELEMENTS(units)) {
    v /= 1000;
    u++;
  }
  return g_strdup_printf(_(units[u]), v);
}

char *loom_format_memory(guint64 bytes, guint64 bytes_float32) {
  g_autofree char *size = g_format_size(bytes);
  if (bytes == bytes_float32 || bytes_float32 == 0) return g_steal_pointer(&size);
  g_autofree char *f32 = g_format_size(bytes_float32);
  double percent = 100.0 * (double)bytes / (double)bytes_float32;
  if (bytes < bytes_float32 && bytes > 0)
    /* TRANSLATORS: "1.2 MB (25 % of 4.8 MB at float32, 4.0× smaller)" */
    return g_strdup_printf(_("%s (%.0f %% of %s at float32, %.1f× smaller)"), size, percent, f32,
                           (double)bytes_float32 / (double)bytes);
  /* TRANSLATORS: "9.6 MB (200 % of 4.8 MB at float32)" */
  return g_strdup_printf(_("%s (%.0f %% of %s at float32)"), size, percent, f32);
}
