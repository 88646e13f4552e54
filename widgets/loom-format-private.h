/* Number formatting shared by the widgets (counts, FLOPs, memory). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* "1,234,567" with the locale's digit grouping. */
char *loom_format_count(gint64 n);
/* "950 FLOPs", "12.3 MFLOPs", ... */
char *loom_format_flops(gint64 flops);
/* "1.2 MB (25 % of 4.8 MB at float32, 4.0× smaller)"; plain size when equal. */
char *loom_format_memory(guint64 bytes, guint64 bytes_float32);

G_END_DECLS
