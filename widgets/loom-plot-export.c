/*
 * LoomPlot's exports: PNG and SVG drawn by the same cairo code as the
 * screen (with a light background and dark text, whatever the theme), and
 * CSV of the raw points. Files are written whole through g_file_set_contents
 * (a temporary file renamed into place), so a failed export leaves no
 * half-written file behind.
 */
#include "loom-chart-private.h"
#include "loom-plot-private.h"

#include <cairo-svg.h>
#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

/* Larger exports would need more than 256 MiB of pixels. */
#define MAX_EXPORT_SIDE 8192

static const GdkRGBA export_fg = {0.1, 0.1, 0.1, 1};

static gboolean check_size(const char *path, int width, int height, GError **error) {
  if (width > 0 && height > 0 && width <= MAX_EXPORT_SIDE && height <= MAX_EXPORT_SIDE) return TRUE;
  g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
              /* TRANSLATORS: export of a chart; %s is the file name */
              _("%s: image size %d × %d is outside 1 to %d pixels per side"), path, width, height, MAX_EXPORT_SIDE);
  return FALSE;
}

static void draw_export(LoomPlot *self, cairo_t *cr, int width, int height) {
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  LoomPlotFrame frame;
  loom_plot_draw(self, cr, width, height, &export_fg, NAN, &frame, LOOM_PLOT_PART_ALL);
}

static cairo_surface_t *render_image(LoomPlot *self, int width, int height) {
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create(surface);
  draw_export(self, cr, width, height);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  return surface;
}

GdkTexture *loom_plot_render_texture(LoomPlot *self, int width, int height) {
  g_return_val_if_fail(LOOM_IS_PLOT(self), NULL);
  g_return_val_if_fail(width > 0 && height > 0 && width <= MAX_EXPORT_SIDE && height <= MAX_EXPORT_SIDE, NULL);
  cairo_surface_t *surface = render_image(self, width, height);
  int stride = cairo_image_surface_get_stride(surface);
  GBytes *bytes = g_bytes_new(cairo_image_surface_get_data(surface), (gsize)stride * height);
  cairo_surface_destroy(surface);
  /* GDK_MEMORY_DEFAULT is the layout of cairo's ARGB32 image surfaces. */
  GdkTexture *texture = gdk_memory_texture_new(width, height, GDK_MEMORY_DEFAULT, bytes, stride);
  g_bytes_unref(bytes);
  return texture;
}

static cairo_status_t append_bytes(void *closure, const unsigned char *data, unsigned int length) {
  g_byte_array_append(closure, data, length);
  return CAIRO_STATUS_SUCCESS;
}

static gboolean write_bytes(const char *path, GByteArray *bytes, cairo_status_t status, GError **error) {
  if (status != CAIRO_STATUS_SUCCESS) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("%s: could not draw the chart: %s"), path,
                cairo_status_to_string(status));
    return FALSE;
  }
  return g_file_set_contents(path, (const char *)bytes->data, bytes->len, error);
}

gboolean loom_plot_export_png(LoomPlot *self, const char *path, int width, int height, GError **error) {
  g_return_val_if_fail(LOOM_IS_PLOT(self), FALSE);
  g_return_val_if_fail(path != NULL, FALSE);
  if (!check_size(path, width, height, error)) return FALSE;
  cairo_surface_t *surface = render_image(self, width, height);
  g_autoptr(GByteArray) bytes = g_byte_array_new();
  cairo_status_t status = cairo_surface_write_to_png_stream(surface, append_bytes, bytes);
  cairo_surface_destroy(surface);
  return write_bytes(path, bytes, status, error);
}

gboolean loom_plot_export_svg(LoomPlot *self, const char *path, int width, int height, GError **error) {
  g_return_val_if_fail(LOOM_IS_PLOT(self), FALSE);
  g_return_val_if_fail(path != NULL, FALSE);
  if (!check_size(path, width, height, error)) return FALSE;
  g_autoptr(GByteArray) bytes = g_byte_array_new();
  cairo_surface_t *surface = cairo_svg_surface_create_for_stream(append_bytes, bytes, width, height);
  cairo_t *cr = cairo_create(surface);
  draw_export(self, cr, width, height);
  cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_finish(surface);
  if (status == CAIRO_STATUS_SUCCESS) status = cairo_surface_status(surface);
  cairo_surface_destroy(surface);
  return write_bytes(path, bytes, status, error);
}

/* A CSV field: quoted when it holds a comma, quote or line break (RFC 4180). */
static void append_field(GString *out, const char *text) {
  if (!strpbrk(text, ",\"\r\n")) {
    g_string_append(out, text);
    return;
  }
  g_string_append_c(out, '"');
  for (const char *p = text; *p; p++) {
    if (*p == '"') g_string_append_c(out, '"');
    g_string_append_c(out, *p);
  }
  g_string_append_c(out, '"');
}

/* Shortest text that reads back to the same double, C locale. */
static void append_number(GString *out, double v) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(out, g_ascii_dtostr(buf, sizeof buf, v));
}

static gboolean same_x(LoomPlot *self) {
  const LoomPlotSeries *first = g_ptr_array_index(self->series, 0);
  for (guint i = 1; i < self->series->len; i++) {
    const LoomPlotSeries *s = g_ptr_array_index(self->series, i);
    if (s->x.len != first->x.len ||
        memcmp(s->x.data, first->x.data, sizeof(double) * (gsize)first->x.len) != 0)
      return FALSE;
  }
  return TRUE;
}

gboolean loom_plot_export_csv(LoomPlot *self, const char *path, GError **error) {
  g_return_val_if_fail(LOOM_IS_PLOT(self), FALSE);
  g_return_val_if_fail(path != NULL, FALSE);
  GString *out = g_string_new(NULL);
  if (self->series->len > 0 && same_x(self)) {
    g_string_append(out, "x");
    for (guint i = 0; i < self->series->len; i++) {
      g_string_append_c(out, ',');
      append_field(out, ((const LoomPlotSeries *)g_ptr_array_index(self->series, i))->label);
    }
    g_string_append_c(out, '\n');
    const LoomPlotSeries *first = g_ptr_array_index(self->series, 0);
    for (guint r = 0; r < first->x.len; r++) {
      append_number(out, loom_big_array_index(&first->x, double, r));
      for (guint i = 0; i < self->series->len; i++) {
        const LoomPlotSeries *s = g_ptr_array_index(self->series, i);
        g_string_append_c(out, ',');
        append_number(out, loom_big_array_index(&s->raw.y, double, r));
      }
      g_string_append_c(out, '\n');
    }
  } else {
    g_string_append(out, "series,x,y\n");
    for (guint i = 0; i < self->series->len; i++) {
      const LoomPlotSeries *s = g_ptr_array_index(self->series, i);
      for (guint r = 0; r < s->x.len; r++) {
        append_field(out, s->label);
        g_string_append_c(out, ',');
        append_number(out, loom_big_array_index(&s->x, double, r));
        g_string_append_c(out, ',');
        append_number(out, loom_big_array_index(&s->raw.y, double, r));
        g_string_append_c(out, '\n');
      }
    }
  }
  gboolean ok = g_file_set_contents(path, out->str, (gssize)out->len, error);
  g_string_free(out, TRUE);
  return ok;
}
