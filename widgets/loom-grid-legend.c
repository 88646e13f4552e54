/* The legend of the grid view: swatches drawn with cairo, labels translated. */
#include "loom-grid-legend.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "loom-grid-view-private.h"

typedef enum { SWATCH_BLOCK, SWATCH_GAUGE, SWATCH_ARC, SWATCH_DASHED_ARC } swatch_kind;

typedef struct {
  swatch_kind kind;
  float rgb[3];
  float fill; /* gauge: lit fraction */
} swatch;

static void draw_swatch(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data) {
  const swatch *s = data;
  cairo_set_source_rgb(cr, s->rgb[0], s->rgb[1], s->rgb[2]);
  switch (s->kind) {
  case SWATCH_BLOCK:
    cairo_rectangle(cr, 1, 1, width - 2, height - 2);
    cairo_fill_preserve(cr);
    cairo_set_source_rgba(cr, 0, 0, 0, 0.5);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    break;
  case SWATCH_GAUGE: {
    /* A block with the gauge strip along its bottom, as drawn in 3D. */
    double strip = height * 0.35;
    cairo_rectangle(cr, 0, 1, width, height - 1 - strip);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, s->rgb[0] * 0.45, s->rgb[1] * 0.45, s->rgb[2] * 0.45);
    cairo_rectangle(cr, 0, height - strip, width, strip);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0.6 + 0.4 * s->rgb[0], 0.6 + 0.4 * s->rgb[1], 0.6 + 0.4 * s->rgb[2]);
    cairo_rectangle(cr, 0, height - strip, width * s->fill, strip);
    cairo_fill(cr);
    break;
  }
  case SWATCH_ARC:
  case SWATCH_DASHED_ARC:
    cairo_set_line_width(cr, 2.5);
    if (s->kind == SWATCH_DASHED_ARC) {
      static const double dash[] = {4.0, 3.0}; /* the 3D view's 7/5 pixels, scaled to the swatch */
      cairo_set_dash(cr, dash, 2, 0);
    }
    cairo_move_to(cr, 1, height - 2);
    cairo_curve_to(cr, width * 0.3, 0, width * 0.7, 0, width - 3, height - 4);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    cairo_move_to(cr, width, height - 1);
    cairo_line_to(cr, width - 7, height - 3);
    cairo_line_to(cr, width - 2, height - 8);
    cairo_close_path(cr);
    cairo_fill(cr);
    break;
  }
}

static void add_row(GtkWidget *legend, swatch_kind kind, const float rgb[3], float fill, const char *text) {
  swatch *s = g_new0(swatch, 1);
  s->kind = kind;
  for (int i = 0; i < 3; i++) s->rgb[i] = rgb[i];
  s->fill = fill;
  GtkWidget *area = gtk_drawing_area_new();
  int width = kind == SWATCH_BLOCK ? 12 : 26;
  gtk_drawing_area_set_content_width(GTK_DRAWING_AREA(area), width);
  gtk_drawing_area_set_content_height(GTK_DRAWING_AREA(area), 12);
  gtk_widget_set_valign(area, GTK_ALIGN_CENTER);
  gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(area), draw_swatch, s, g_free);

  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0.f);
  gtk_widget_add_css_class(label, "caption");

  GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *slot = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_set_size_request(slot, 26, -1);
  gtk_box_append(GTK_BOX(slot), area);
  gtk_box_append(GTK_BOX(row), slot);
  gtk_box_append(GTK_BOX(row), label);
  gtk_widget_set_margin_start(row, 10);
  gtk_widget_set_margin_end(row, 10);
  gtk_box_append(GTK_BOX(legend), row);
}

static GtkWidget *add_heading(GtkWidget *legend, const char *text) {
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0.f);
  gtk_widget_add_css_class(label, "caption-heading");
  gtk_widget_set_margin_top(label, gtk_widget_get_first_child(legend) ? 6 : 8);
  gtk_widget_set_margin_start(label, 10);
  gtk_widget_set_margin_end(label, 10);
  gtk_box_append(GTK_BOX(legend), label);
  return label;
}

/* ---- the colour bar of the METRIC mode ---- */

#define BAR_WIDTH 168
#define BAR_HEIGHT 12
#define BAR_TEXT_GAP 3

/* The ends as shown: with an automatic range they move on every update,
 * but mostly beyond the digits shown, and then the bar is not redrawn. */
typedef struct {
  char lo[32], hi[32];
  gboolean log_scale;
} bar_range;

static void format_tick(double v, char out[32]) {
  if (isnan(v))
    g_strlcpy(out, "–", 32);
  else
    g_snprintf(out, 32, "%.3g", v);
}

static void draw_text(GtkWidget *widget, cairo_t *cr, const char *text, double x, double y, double align) {
  PangoLayout *layout = gtk_widget_create_pango_layout(widget, text);
  int w, h;
  pango_layout_get_pixel_size(layout, &w, &h);
  cairo_move_to(cr, x - align * w, y);
  pango_cairo_show_layout(cr, layout);
  g_object_unref(layout);
}

/* The colour map left (low) to right (high), a pixel column at a time from
 * loom_grid_colormap, the same function that colours the blocks; below it
 * the range's ends and, on a log scale, "log". */
static void draw_bar(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data) {
  const bar_range *r = data;
  GtkWidget *widget = GTK_WIDGET(area);
  for (int x = 0; x < width; x++) {
    float rgb[3];
    loom_grid_colormap(width > 1 ? (float)x / (float)(width - 1) : 0.f, rgb);
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_rectangle(cr, x, 0, 1, BAR_HEIGHT);
    cairo_fill(cr);
  }
  GdkRGBA fg;
#if GTK_CHECK_VERSION(4, 10, 0)
  gtk_widget_get_color(widget, &fg);
#else
  gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
#endif
  gdk_cairo_set_source_rgba(cr, &fg);
  double y = BAR_HEIGHT + BAR_TEXT_GAP;
  draw_text(widget, cr, r->lo, 0, y, 0.0);
  draw_text(widget, cr, r->hi, width, y, 1.0);
  if (r->log_scale) draw_text(widget, cr, _("log"), width / 2.0, y, 0.5);
}

static void add_color_bar(GtkWidget *legend) {
  bar_range *r = g_new0(bar_range, 1);
  format_tick(NAN, r->lo);
  format_tick(NAN, r->hi);
  GtkWidget *area = gtk_drawing_area_new();
  gtk_widget_add_css_class(area, "caption");
  gtk_drawing_area_set_content_width(GTK_DRAWING_AREA(area), BAR_WIDTH);
  /* The bar and a line of caption text under it. */
  PangoLayout *layout = gtk_widget_create_pango_layout(area, "0123456789");
  int text_h;
  pango_layout_get_pixel_size(layout, NULL, &text_h);
  g_object_unref(layout);
  gtk_drawing_area_set_content_height(GTK_DRAWING_AREA(area), BAR_HEIGHT + BAR_TEXT_GAP + text_h);
  gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(area), draw_bar, r, g_free);
  gtk_widget_set_margin_start(area, 10);
  gtk_widget_set_margin_end(area, 10);
  gtk_widget_set_margin_top(area, 2);
  gtk_box_append(GTK_BOX(legend), area);
  g_object_set_data(G_OBJECT(legend), "loom-metric-bar", area);
  g_object_set_data(G_OBJECT(area), "loom-range", r);
}

void loom_grid_legend_set_metric(GtkWidget *legend, const char *label, double lo, double hi, gboolean log_scale) {
  GtkWidget *heading = g_object_get_data(G_OBJECT(legend), "loom-metric-heading");
  GtkWidget *area = g_object_get_data(G_OBJECT(legend), "loom-metric-bar");
  if (!heading || !area) return;
  const char *text = label && *label ? label : _("Metric");
  if (g_strcmp0(gtk_label_get_text(GTK_LABEL(heading)), text) != 0) gtk_label_set_text(GTK_LABEL(heading), text);
  bar_range *r = g_object_get_data(G_OBJECT(area), "loom-range");
  char lo_text[32], hi_text[32];
  format_tick(lo, lo_text);
  format_tick(hi, hi_text);
  if (strcmp(lo_text, r->lo) == 0 && strcmp(hi_text, r->hi) == 0 && r->log_scale == log_scale) return;
  memcpy(r->lo, lo_text, sizeof lo_text);
  memcpy(r->hi, hi_text, sizeof hi_text);
  r->log_scale = log_scale;
  gtk_widget_queue_draw(area);
}

GtkWidget *loom_grid_legend_new(void) {
  GtkWidget *legend = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
  gtk_widget_add_css_class(legend, "osd");
  gtk_widget_add_css_class(legend, "loom-grid-legend");
  gtk_widget_set_halign(legend, GTK_ALIGN_START);
  gtk_widget_set_valign(legend, GTK_ALIGN_START);
  /* Input goes through to the view: the legend only explains. */
  gtk_widget_set_can_target(legend, FALSE);
  return legend;
}

void loom_grid_legend_update(GtkWidget *legend, const LoomGridScene *s, int color_mode,
                             const LoomGridLegendExtras *extras) {
  GtkWidget *child;
  g_object_set_data(G_OBJECT(legend), "loom-metric-heading", NULL);
  g_object_set_data(G_OBJECT(legend), "loom-metric-bar", NULL);
  while ((child = gtk_widget_get_first_child(legend))) gtk_box_remove(GTK_BOX(legend), child);
  gtk_widget_set_visible(legend, s->n_boxes > 0 || s->n_arcs > 0);
  float rgb[3];
  /* Room below the last row inside the legend's background. */
  GtkWidget *bottom = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_size_request(bottom, -1, 6);

  if (color_mode == 2) {
    g_object_set_data(G_OBJECT(legend), "loom-metric-heading", add_heading(legend, _("Metric")));
    add_color_bar(legend);
    float grey[3] = {LOOM_GRID_VIEW_NEUTRAL_R, LOOM_GRID_VIEW_NEUTRAL_G, LOOM_GRID_VIEW_NEUTRAL_B};
    add_row(legend, SWATCH_BLOCK, grey, 0.f, _("No value"));
  } else if (color_mode == 1) {
    add_heading(legend, _("Dtypes"));
    for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
      if (!(s->dtypes_present & (G_GUINT64_CONSTANT(1) << d))) continue;
      loom_grid_dtype_color((loom_dtype)d, rgb);
      int bits = loom_dtype_traits_get((loom_dtype)d)->bits;
      g_autofree char *text = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%s (%d bit)", "%s (%d bits)", (gulong)bits),
                                              loom_dtype_name((loom_dtype)d), bits);
      add_row(legend, SWATCH_BLOCK, rgb, 0.f, text);
    }
  } else {
    add_heading(legend, _("Layer types"));
    for (int g = 0; g < loom_grid_group_count() && g < 64; g++) {
      if (!(s->groups_present & (G_GUINT64_CONSTANT(1) << g))) continue;
      loom_grid_group_color(g, rgb);
      add_row(legend, SWATCH_BLOCK, rgb, 0.f, loom_grid_group_name(g));
    }
  }

  /* In the METRIC mode the blocks show no gauge (grid-box.frag). */
  if (s->n_boxes > 0 && color_mode != 2) {
    add_heading(legend, _("Bits per weight (gauge)"));
    float grey[3] = {0.55f, 0.58f, 0.64f};
    add_row(legend, SWATCH_GAUGE, grey, loom_grid_dtype_band(LOOM_DTYPE_BINARY), _("1 bit"));
    add_row(legend, SWATCH_GAUGE, grey, loom_grid_dtype_band(LOOM_DTYPE_INT8), _("8 bits"));
    add_row(legend, SWATCH_GAUGE, grey, loom_grid_dtype_band(LOOM_DTYPE_FLOAT32), _("32 bits"));
    add_row(legend, SWATCH_GAUGE, grey, loom_grid_dtype_band(LOOM_DTYPE_FLOAT64), _("64 bits"));
  }

  if (s->n_arcs > 0) {
    add_heading(legend, _("Links (merge)"));
    static const char *const merge_labels[] = {N_("replace"), N_("add"), N_("concat")};
    for (int m = 0; m < 3; m++) {
      if (!(s->merges_present & (G_GUINT64_CONSTANT(1) << m))) continue;
      loom_grid_merge_color((loom_merge)m, rgb);
      add_row(legend, SWATCH_ARC, rgb, 0.f, _(merge_labels[m]));
    }
    if (s->any_feedback) {
      float grey[3] = {0.75f, 0.78f, 0.84f};
      add_row(legend, SWATCH_DASHED_ARC, grey, 0.f, _("Dashed: feedback (previous tick)"));
    }
    if (extras && extras->link_flow) {
      float grey[3] = {0.75f, 0.78f, 0.84f};
      add_row(legend, SWATCH_ARC, grey, 0.f, _("Wider, brighter: more flow"));
    }
  }

  gboolean alerts = extras && extras->alerts;
  if (s->any_problem || s->any_disabled || alerts) add_heading(legend, _("State"));
  if (alerts) {
    float red[3] = {LOOM_GRID_VIEW_ALERT_R, LOOM_GRID_VIEW_ALERT_G, LOOM_GRID_VIEW_ALERT_B};
    add_row(legend, SWATCH_BLOCK, red, 0.f, _("Training stopped here"));
  }
  if (s->any_problem) {
    float red[3] = {LOOM_GRID_VIEW_PROBLEM_R, LOOM_GRID_VIEW_PROBLEM_G, LOOM_GRID_VIEW_PROBLEM_B};
    add_row(legend, SWATCH_BLOCK, red, 0.f, _("Problem (see tooltip)"));
  }
  if (s->any_disabled) {
    float dim[3] = {0.30f, 0.32f, 0.36f};
    add_row(legend, SWATCH_BLOCK, dim, 0.f, _("Disabled"));
  }
  gtk_box_append(GTK_BOX(legend), bottom);
}
