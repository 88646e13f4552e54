/* Helpers shared by the chart widgets: labels, ticks, palette, text. */
#include "loom-chart-private.h"

#include <math.h>
#include <string.h>

/* Drops trailing zeros of a fraction ("1.50" → "1.5", "2.00" → "2"). */
static void trim_zeros(char *s) {
  char *dot = strchr(s, '.');
  if (!dot) return;
  char *end = s + strlen(s);
  while (end > dot + 1 && end[-1] == '0') *--end = '\0';
  if (end == dot + 1) *dot = '\0';
}

/* Decimals needed to tell apart labels @step apart (at least one digit that
 * changes), capped so that labels stay short. */
static int decimals_for(double step, int cap) {
  if (!(step > 0) || !isfinite(step)) return -1;
  int d = (int)ceil(-log10(step) - 1e-9);
  return CLAMP(d, 0, cap);
}

static void format_fixed(double v, int decimals, char out[LOOM_CHART_LABEL_LEN]) {
  char fmt[8];
  g_snprintf(fmt, sizeof fmt, "%%.%df", decimals);
  g_ascii_formatd(out, LOOM_CHART_LABEL_LEN, fmt, v);
  trim_zeros(out);
}

/* "1.5e-4": two significant digits, no '+' and no leading zeros in the exponent. */
static void format_exp(double v, char out[LOOM_CHART_LABEL_LEN]) {
  int e = (int)floor(log10(fabs(v)));
  double m = v / pow(10, e);
  if (fabs(m) >= 9.95) { /* rounding the mantissa carried into the next decade */
    m /= 10;
    e++;
  }
  char mant[LOOM_CHART_LABEL_LEN];
  format_fixed(m, 1, mant);
  g_snprintf(out, LOOM_CHART_LABEL_LEN, "%se%d", mant, e);
}

void loom_chart_format(double v, double step, char out[LOOM_CHART_LABEL_LEN]) {
  if (isnan(v)) {
    g_strlcpy(out, "NaN", LOOM_CHART_LABEL_LEN);
    return;
  }
  if (isinf(v)) {
    g_strlcpy(out, v > 0 ? "∞" : "−∞", LOOM_CHART_LABEL_LEN);
    return;
  }
  /* Labels a step apart that is tiny next to the value: keep the value. */
  if (v == 0 || (step > 0 && fabs(v) < step * 1e-6)) {
    g_strlcpy(out, "0", LOOM_CHART_LABEL_LEN);
    return;
  }
  double a = fabs(v);
  static const char suffix[] = "kMGTP";
  if (a >= 1000 && a < 1e18) {
    int k = 0;
    double scale = 1000;
    while (k + 1 < (int)strlen(suffix) && a >= scale * 999.95) {
      scale *= 1000;
      k++;
    }
    int d = decimals_for(step / scale, 3);
    if (d < 0) d = a / scale < 10 ? 1 : 0;
    char num[LOOM_CHART_LABEL_LEN];
    format_fixed(v / scale, d, num);
    g_snprintf(out, LOOM_CHART_LABEL_LEN, "%s%c", num, suffix[k]);
    return;
  }
  if (a >= 1e18 || a < 1e-3 || (step > 0 && step < 1e-3)) {
    format_exp(v, out);
    return;
  }
  int d = decimals_for(step, 6);
  if (d < 0) d = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3 - (int)floor(log10(a)) - 1;
  format_fixed(v, CLAMP(d, 0, 6), out);
}

int loom_chart_ticks(double lo, double hi, int target, double ticks[LOOM_CHART_MAX_TICKS], double *step) {
  *step = 0;
  if (!isfinite(lo) || !isfinite(hi) || hi <= lo) {
    if (!isfinite(lo)) return 0;
    ticks[0] = lo;
    return 1;
  }
  target = CLAMP(target, 2, LOOM_CHART_MAX_TICKS - 1);
  double raw = (hi - lo) / target;
  double mag = pow(10, floor(log10(raw)));
  double norm = raw / mag;
  double nice = norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10;
  double s = nice * mag;
  double first = ceil(lo / s - 1e-9) * s;
  int n = 0;
  for (double t = first; t <= hi + s * 1e-9 && n < LOOM_CHART_MAX_TICKS; t = first + n * s)
    ticks[n++] = fabs(t) < s * 1e-9 ? 0.0 : t;
  *step = s;
  return n;
}

int loom_chart_log_ticks(double lo, double hi, double ticks[LOOM_CHART_MAX_TICKS]) {
  if (!(lo > 0) || !(hi > lo) || !isfinite(hi)) return 0;
  int e0 = (int)floor(log10(lo)), e1 = (int)ceil(log10(hi));
  int decades = e1 - e0;
  /* Many decades: every k-th one so that about eight labels show. */
  int every = MAX(1, (decades + 7) / 8);
  static const double fine[] = {1, 2, 5};
  int n = 0;
  for (int e = e0; e <= e1 && n < LOOM_CHART_MAX_TICKS; e++) {
    if (decades >= 3 && (e % every) != 0) continue;
    for (int i = 0; i < (decades < 3 ? 3 : 1) && n < LOOM_CHART_MAX_TICKS; i++) {
      double t = fine[i] * pow(10, e);
      if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) ticks[n++] = t;
    }
  }
  return n;
}

void loom_chart_class_color(int cls, float rgb[3]) {
  static const guint8 palette[LOOM_CHART_N_CLASS_COLORS][3] = {
      {0x1f, 0x77, 0xb4}, /* blue */
      {0xff, 0x7f, 0x0e}, /* orange */
      {0x2c, 0xa0, 0x2c}, /* green */
      {0xd6, 0x27, 0x28}, /* red */
      {0x94, 0x67, 0xbd}, /* purple */
      {0x8c, 0x56, 0x4b}, /* brown */
      {0xe3, 0x77, 0xc2}, /* pink */
      {0x7f, 0x7f, 0x7f}, /* grey */
      {0xbc, 0xbd, 0x22}, /* olive */
      {0x17, 0xbe, 0xcf}, /* cyan */
  };
  int c = ((cls % LOOM_CHART_N_CLASS_COLORS) + LOOM_CHART_N_CLASS_COLORS) % LOOM_CHART_N_CLASS_COLORS;
  for (int i = 0; i < 3; i++) rgb[i] = palette[c][i] / 255.f;
}

void loom_chart_foreground(GtkWidget *widget, GdkRGBA *fg) {
#if GTK_CHECK_VERSION(4, 10, 0)
  gtk_widget_get_color(widget, fg);
#else
  gtk_style_context_get_color(gtk_widget_get_style_context(widget), fg);
#endif
}

static PangoLayout *make_layout(cairo_t *cr, GtkWidget *widget, const char *text) {
  PangoLayout *layout = pango_cairo_create_layout(cr);
  const PangoFontDescription *font = pango_context_get_font_description(gtk_widget_get_pango_context(widget));
  pango_layout_set_font_description(layout, font);
  pango_layout_set_text(layout, text, -1);
  return layout;
}

double loom_chart_text(cairo_t *cr, GtkWidget *widget, const char *text, double x, double y, double xalign,
                       double yalign) {
  PangoLayout *layout = make_layout(cr, widget, text);
  int w, h;
  pango_layout_get_pixel_size(layout, &w, &h);
  cairo_move_to(cr, round(x - xalign * w), round(y - yalign * h));
  pango_cairo_show_layout(cr, layout);
  g_object_unref(layout);
  return w;
}

/* Text sizes measured for a widget, kept while its Pango context is
 * unchanged (a font, a resolution or a theme bumps the context's serial): a
 * live chart measures the same labels with every snapshot (a plot about 18
 * a frame), and each measurement lays the text out. Bounded: numbers come
 * and go as the axes move. */
typedef struct {
  guint serial;
  GHashTable *sizes; /* text → TextSize */
} TextSizes;

typedef struct {
  int w, h;
} TextSize;

enum { TEXT_SIZES_MAX = 256 };

static void text_sizes_free(gpointer data) {
  TextSizes *t = data;
  g_hash_table_unref(t->sizes);
  g_free(t);
}

static G_DEFINE_QUARK(loom-chart-text-sizes, text_sizes)

void loom_chart_text_size(GtkWidget *widget, const char *text, int *width, int *height) {
  const GQuark quark = text_sizes_quark();
  PangoContext *context = gtk_widget_get_pango_context(widget);
  TextSizes *t = g_object_get_qdata(G_OBJECT(widget), quark);
  if (!t) {
    t = g_new0(TextSizes, 1);
    t->sizes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    t->serial = pango_context_get_serial(context);
    g_object_set_qdata_full(G_OBJECT(widget), quark, t, text_sizes_free);
  }
  const guint serial = pango_context_get_serial(context);
  if (serial != t->serial || g_hash_table_size(t->sizes) >= TEXT_SIZES_MAX) {
    g_hash_table_remove_all(t->sizes);
    t->serial = serial;
  }
  TextSize *size = g_hash_table_lookup(t->sizes, text);
  if (!size) {
    PangoLayout *layout = gtk_widget_create_pango_layout(widget, text);
    size = g_new(TextSize, 1);
    pango_layout_get_pixel_size(layout, &size->w, &size->h);
    g_object_unref(layout);
    g_hash_table_insert(t->sizes, g_strdup(text), size);
  }
  if (width) *width = size->w;
  if (height) *height = size->h;
}

GskRenderNode *loom_chart_texture_node(GtkWidget *widget, int w, int h, void (*draw)(cairo_t *cr, gpointer data),
                                       gpointer data) {
  int scale = MAX(gtk_widget_get_scale_factor(widget), 1);
  if (w <= 0 || h <= 0 || w > 16384 / scale || h > 16384 / scale) return NULL;
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w * scale, h * scale);
  if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(surface);
    return NULL;
  }
  cairo_surface_set_device_scale(surface, scale, scale);
  cairo_t *cr = cairo_create(surface);
  draw(cr, data);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  /* cairo's ARGB32 is GDK_MEMORY_DEFAULT (premultiplied, native order) */
  gsize stride = (gsize)cairo_image_surface_get_stride(surface);
  GBytes *bytes = g_bytes_new_with_free_func(cairo_image_surface_get_data(surface), stride * (gsize)(h * scale),
                                             (GDestroyNotify)cairo_surface_destroy, surface);
  GdkTexture *texture = gdk_memory_texture_new(w * scale, h * scale, GDK_MEMORY_DEFAULT, bytes, stride);
  g_bytes_unref(bytes);
  GskRenderNode *node = gsk_texture_node_new(texture, &GRAPHENE_RECT_INIT(0, 0, w, h));
  g_object_unref(texture);
  return node;
}
