/*
 * LoomBoundaryView: the field becomes one texture per update (a pixel per
 * sample, scaled by GSK), axes and points are drawn over it with cairo.
 * The overlay is rasterized into a texture node kept while what it shows
 * is unchanged: the field changes with every training snapshot, the points
 * and axes rarely (a thousand antialiased points cost milliseconds).
 */
#include "loom-boundary-view.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "loom-chart-private.h"

#define PAD 6.0
#define GAP 4.0
#define POINT_RADIUS 3.5

enum { PROP_0, PROP_MODE, N_PROPS };
static GParamSpec *properties[N_PROPS];

typedef struct {
  float *xy, *value;
  gsize n;
} PointSet;

struct _LoomBoundaryView {
  GtkWidget parent_instance;

  LoomBoundaryMode mode;
  int res_x, res_y, channels;
  float *field; /* res_y × res_x × channels, row 0 at y_min */
  double x_min, x_max, y_min, y_max;
  double value_lo, value_hi; /* regression: the field's range */
  guint32 *pixels;           /* cairo ARGB32, top row first (y_max) */
  GdkTexture *texture;
  PointSet train, test;
  guint points_serial; /* bumped by every set_points */
  GskRenderNode *overlay;
  struct OverlayKey {
    int w, h;
    GdkRGBA fg;
    double x_min, x_max, y_min, y_max, value_lo, value_hi;
    gboolean has_field;
    LoomBoundaryMode mode;
    guint points_serial;
  } overlay_key;
};

G_DEFINE_FINAL_TYPE(LoomBoundaryView, loom_boundary_view, GTK_TYPE_WIDGET)

GType loom_boundary_mode_get_type(void) {
  static gsize type = 0;
  if (g_once_init_enter(&type)) {
    static const GEnumValue values[] = {
        {LOOM_BOUNDARY_MODE_CLASSES, "LOOM_BOUNDARY_MODE_CLASSES", "classes"},
        {LOOM_BOUNDARY_MODE_REGRESSION, "LOOM_BOUNDARY_MODE_REGRESSION", "regression"},
        {0, NULL, NULL},
    };
    g_once_init_leave(&type, g_enum_register_static(g_intern_static_string("LoomBoundaryMode"), values));
  }
  return type;
}

GtkWidget *loom_boundary_view_new(void) {
  return g_object_new(LOOM_TYPE_BOUNDARY_VIEW, NULL);
}

/* ---- colours ---- */

static void mix(const float a[3], const float b[3], double t, float out[3]) {
  for (int i = 0; i < 3; i++) out[i] = (float)(a[i] + (b[i] - a[i]) * t);
}

/* Blue (low) – near white (middle) – red (high), Moreland's cool-warm ends. */
static void diverging(double t, float rgb[3]) {
  static const float low[3] = {0.23f, 0.30f, 0.75f}, mid[3] = {0.97f, 0.97f, 0.97f}, high[3] = {0.71f, 0.02f, 0.15f};
  t = CLAMP(t, 0.0, 1.0);
  if (t < 0.5)
    mix(low, mid, t * 2, rgb);
  else
    mix(mid, high, (t - 0.5) * 2, rgb);
}

static const float white[3] = {1, 1, 1}, unknown_grey[3] = {0.6f, 0.6f, 0.6f};

/* Probabilities (clamped at 0, normalised) weight the class colours; the
 * blend fades to white as the largest probability nears a uniform guess. */
static void class_blend(const float *p, int channels, float rgb[3]) {
  float two[2];
  if (channels == 1) {
    two[0] = 1 - p[0];
    two[1] = p[0];
    p = two;
    channels = 2;
  }
  double sum = 0, best = 0;
  for (int c = 0; c < channels; c++) {
    double v = isfinite(p[c]) ? MAX(p[c], 0.f) : NAN;
    sum += v;
    best = MAX(best, v);
  }
  if (!(sum > 0) || !isfinite(sum)) {
    memcpy(rgb, unknown_grey, sizeof unknown_grey);
    return;
  }
  float blend[3] = {0, 0, 0};
  for (int c = 0; c < channels; c++) {
    float col[3];
    loom_chart_class_color(c, col);
    double w = MAX(p[c], 0.f) / sum;
    for (int i = 0; i < 3; i++) blend[i] += (float)(w * col[i]);
  }
  double uniform = 1.0 / channels;
  double certainty = CLAMP((best / sum - uniform) / (1 - uniform), 0.0, 1.0);
  double strength = 0.25 + (LOOM_BOUNDARY_CERTAIN_STRENGTH - 0.25) * certainty;
  mix(white, blend, strength, rgb);
}

static void value_color(LoomBoundaryView *self, double v, float rgb[3]) {
  if (!isfinite(v)) {
    memcpy(rgb, unknown_grey, sizeof unknown_grey);
    return;
  }
  diverging((v - self->value_lo) / (self->value_hi - self->value_lo), rgb);
}

static guint32 pack(const float rgb[3]) {
  guint32 r = (guint32)lrintf(CLAMP(rgb[0], 0.f, 1.f) * 255), g = (guint32)lrintf(CLAMP(rgb[1], 0.f, 1.f) * 255),
          b = (guint32)lrintf(CLAMP(rgb[2], 0.f, 1.f) * 255);
  return 0xff000000u | r << 16 | g << 8 | b;
}

/* One pixel per sample, flipped so that the texture's top row is y_max. */
static void rebuild_texture(LoomBoundaryView *self) {
  g_clear_object(&self->texture);
  g_clear_pointer(&self->pixels, g_free);
  if (!self->field) return;
  gsize n = (gsize)self->res_x * (gsize)self->res_y;
  if (self->mode == LOOM_BOUNDARY_MODE_REGRESSION) {
    double lo = INFINITY, hi = -INFINITY;
    for (gsize i = 0; i < n; i++) {
      double v = self->field[i * self->channels];
      if (!isfinite(v)) continue;
      lo = MIN(lo, v);
      hi = MAX(hi, v);
    }
    if (!(lo <= hi)) lo = 0, hi = 1;
    if (lo == hi) lo -= 0.5, hi += 0.5;
    self->value_lo = lo;
    self->value_hi = hi;
  }
  self->pixels = g_new(guint32, n);
  for (int row = 0; row < self->res_y; row++) {
    guint32 *out = self->pixels + (gsize)(self->res_y - 1 - row) * self->res_x;
    for (int col = 0; col < self->res_x; col++) {
      const float *p = self->field + ((gsize)row * self->res_x + col) * self->channels;
      float rgb[3];
      if (self->mode == LOOM_BOUNDARY_MODE_REGRESSION)
        value_color(self, p[0], rgb);
      else
        class_blend(p, self->channels, rgb);
      out[col] = pack(rgb);
    }
  }
  GBytes *bytes = g_bytes_new(self->pixels, n * sizeof(guint32));
  /* GDK_MEMORY_DEFAULT is cairo's ARGB32: one buffer serves both paths. */
  self->texture = gdk_memory_texture_new(self->res_x, self->res_y, GDK_MEMORY_DEFAULT, bytes,
                                         (gsize)self->res_x * sizeof(guint32));
  g_bytes_unref(bytes);
}

/* ---- API ---- */

void loom_boundary_view_set_field(LoomBoundaryView *self, int res_x, int res_y, const float *values, int channels,
                                  double x_min, double x_max, double y_min, double y_max) {
  g_return_if_fail(LOOM_IS_BOUNDARY_VIEW(self));
  if (res_x < 1 || res_y < 1 || res_x > LOOM_BOUNDARY_MAX_RES || res_y > LOOM_BOUNDARY_MAX_RES || channels < 1 ||
      channels > LOOM_BOUNDARY_MAX_CHANNELS || !values) {
    g_warning("LoomBoundaryView: field %d × %d × %d refused (1..%d samples per side, 1..%d channels)", res_x, res_y,
              channels, LOOM_BOUNDARY_MAX_RES, LOOM_BOUNDARY_MAX_CHANNELS);
    return;
  }
  if (!(x_max > x_min) || !(y_max > y_min) || !isfinite(x_max - x_min) || !isfinite(y_max - y_min)) {
    g_warning("LoomBoundaryView: field range x [%g, %g], y [%g, %g] refused: empty or not finite", x_min, x_max,
              y_min, y_max);
    return;
  }
  /* The caps above keep this product far from overflowing. */
  gsize n = (gsize)res_x * (gsize)res_y * (gsize)channels;
  g_free(self->field);
  self->field = g_memdup2(values, n * sizeof(float));
  self->res_x = res_x;
  self->res_y = res_y;
  self->channels = channels;
  self->x_min = x_min;
  self->x_max = x_max;
  self->y_min = y_min;
  self->y_max = y_max;
  rebuild_texture(self);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

void loom_boundary_view_set_points(LoomBoundaryView *self, const float *xy, const float *value, gsize n,
                                   gboolean test) {
  g_return_if_fail(LOOM_IS_BOUNDARY_VIEW(self));
  g_return_if_fail(n == 0 || (xy && value));
  g_return_if_fail(n <= G_MAXSIZE / (2 * sizeof(float)));
  PointSet *set = test ? &self->test : &self->train;
  g_free(set->xy);
  g_free(set->value);
  set->xy = n ? g_memdup2(xy, n * 2 * sizeof(float)) : NULL;
  set->value = n ? g_memdup2(value, n * sizeof(float)) : NULL;
  set->n = n;
  self->points_serial++;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

void loom_boundary_view_set_mode(LoomBoundaryView *self, LoomBoundaryMode mode) {
  g_return_if_fail(LOOM_IS_BOUNDARY_VIEW(self));
  g_return_if_fail(mode == LOOM_BOUNDARY_MODE_CLASSES || mode == LOOM_BOUNDARY_MODE_REGRESSION);
  if (self->mode == mode) return;
  self->mode = mode;
  rebuild_texture(self);
  gtk_widget_queue_draw(GTK_WIDGET(self));
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_MODE]);
}

LoomBoundaryMode loom_boundary_view_get_mode(LoomBoundaryView *self) {
  g_return_val_if_fail(LOOM_IS_BOUNDARY_VIEW(self), LOOM_BOUNDARY_MODE_CLASSES);
  return self->mode;
}

/* ---- drawing ---- */

typedef struct {
  double fx, fy, fw, fh;
  double text_h;
} Frame;

static void layout(LoomBoundaryView *self, int w, int h, Frame *f) {
  GtkWidget *widget = GTK_WIDGET(self);
  int th, lw;
  loom_chart_text_size(widget, "0", NULL, &th);
  loom_chart_text_size(widget, "-0.00", &lw, NULL);
  f->text_h = th;
  f->fx = PAD + th + GAP + lw + GAP;
  f->fy = PAD;
  f->fw = MAX(1.0, w - f->fx - PAD - lw / 2.0);
  f->fh = MAX(1.0, h - f->fy - (th + GAP) * 2 - PAD);
}

static void draw_points(LoomBoundaryView *self, cairo_t *cr, const Frame *f, const PointSet *set, gboolean test) {
  for (gsize i = 0; i < set->n; i++) {
    double x = set->xy[2 * i], y = set->xy[2 * i + 1], v = set->value[i];
    if (!isfinite(x) || !isfinite(y)) continue;
    double px = f->fx + (x - self->x_min) / (self->x_max - self->x_min) * f->fw;
    double py = f->fy + f->fh - (y - self->y_min) / (self->y_max - self->y_min) * f->fh;
    float rgb[3];
    if (self->mode == LOOM_BOUNDARY_MODE_REGRESSION)
      value_color(self, v, rgb);
    else if (isfinite(v) && v >= 0)
      loom_chart_class_color((int)v, rgb);
    else
      memcpy(rgb, unknown_grey, sizeof unknown_grey);
    cairo_new_sub_path(cr);
    cairo_arc(cr, px, py, POINT_RADIUS, 0, 2 * G_PI);
    if (test) {
      /* Hollow: a coloured ring with a dark edge inside and out. */
      cairo_set_source_rgba(cr, 0, 0, 0, 0.7);
      cairo_set_line_width(cr, 3.25);
      cairo_stroke_preserve(cr);
      cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
      cairo_set_line_width(cr, 1.75);
      cairo_stroke(cr);
    } else {
      cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
      cairo_fill_preserve(cr);
      cairo_set_source_rgba(cr, 0, 0, 0, 0.7);
      cairo_set_line_width(cr, 1);
      cairo_stroke(cr);
    }
  }
}

static void draw_axes(LoomBoundaryView *self, cairo_t *cr, const Frame *f, const GdkRGBA *fg) {
  GtkWidget *widget = GTK_WIDGET(self);
  double lo_x = self->field ? self->x_min : 0, hi_x = self->field ? self->x_max : 1;
  double lo_y = self->field ? self->y_min : 0, hi_y = self->field ? self->y_max : 1;
  double ticks[LOOM_CHART_MAX_TICKS], step;
  char text[LOOM_CHART_LABEL_LEN];
  cairo_set_source_rgba(cr, fg->red, fg->green, fg->blue, 0.75);
  int n = loom_chart_ticks(lo_x, hi_x, MAX(2, (int)(f->fw / 70)), ticks, &step);
  for (int i = 0; i < n; i++) {
    double x = f->fx + (ticks[i] - lo_x) / (hi_x - lo_x) * f->fw;
    cairo_rectangle(cr, round(x), f->fy + f->fh, 1, GAP);
    cairo_fill(cr);
    loom_chart_format(ticks[i], step, text);
    loom_chart_text(cr, widget, text, x, f->fy + f->fh + GAP, 0.5, 0);
  }
  n = loom_chart_ticks(lo_y, hi_y, MAX(2, (int)(f->fh / 50)), ticks, &step);
  for (int i = 0; i < n; i++) {
    double y = f->fy + f->fh - (ticks[i] - lo_y) / (hi_y - lo_y) * f->fh;
    cairo_rectangle(cr, f->fx - GAP, round(y), GAP, 1);
    cairo_fill(cr);
    loom_chart_format(ticks[i], step, text);
    loom_chart_text(cr, widget, text, f->fx - GAP - 1, y, 1, 0.5);
  }
  cairo_set_source_rgba(cr, fg->red, fg->green, fg->blue, 0.9);
  loom_chart_text(cr, widget, "x1", f->fx + f->fw / 2, f->fy + f->fh + GAP * 2 + f->text_h, 0.5, 0);
  cairo_save(cr);
  cairo_translate(cr, PAD, f->fy + f->fh / 2);
  cairo_rotate(cr, -G_PI / 2);
  loom_chart_text(cr, widget, "x2", 0, 0, 0.5, 0);
  cairo_restore(cr);
  cairo_set_source_rgba(cr, fg->red, fg->green, fg->blue, 0.45);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, round(f->fx) + 0.5, round(f->fy) + 0.5, round(f->fw), round(f->fh));
  cairo_stroke(cr);
  if (!self->field) {
    cairo_set_source_rgba(cr, fg->red, fg->green, fg->blue, 0.5);
    loom_chart_text(cr, widget, _("No prediction yet"), f->fx + f->fw / 2, f->fy + f->fh / 2, 0.5, 0.5);
  }
}

static void draw_overlay(LoomBoundaryView *self, cairo_t *cr, const Frame *f, const GdkRGBA *fg) {
  if (self->field) {
    cairo_save(cr);
    cairo_rectangle(cr, f->fx, f->fy, f->fw, f->fh);
    cairo_clip(cr);
    draw_points(self, cr, f, &self->train, FALSE);
    draw_points(self, cr, f, &self->test, TRUE);
    cairo_restore(cr);
  }
  draw_axes(self, cr, f, fg);
}

typedef struct {
  LoomBoundaryView *self;
  const Frame *f;
  const GdkRGBA *fg;
} OverlayDraw;

static void overlay_draw(cairo_t *cr, gpointer data) {
  const OverlayDraw *d = data;
  draw_overlay(d->self, cr, d->f, d->fg);
}

static void loom_boundary_view_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
  LoomBoundaryView *self = LOOM_BOUNDARY_VIEW(widget);
  int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  if (w <= 0 || h <= 0) return;
  Frame f;
  layout(self, w, h, &f);
  if (self->texture) {
    graphene_rect_t rect = GRAPHENE_RECT_INIT(f.fx, f.fy, f.fw, f.fh);
#if GTK_CHECK_VERSION(4, 10, 0)
    gtk_snapshot_append_scaled_texture(snapshot, self->texture, GSK_SCALING_FILTER_LINEAR, &rect);
#else
    gtk_snapshot_append_texture(snapshot, self->texture, &rect); /* linear filtering */
#endif
  }
  GdkRGBA fg;
  loom_chart_foreground(widget, &fg);
  struct OverlayKey key;
  memset(&key, 0, sizeof key); /* compared with memcmp: no stray padding */
  key.w = w;
  key.h = h;
  key.fg = fg;
  key.has_field = self->field != NULL;
  key.mode = self->mode;
  key.points_serial = self->points_serial;
  if (self->field) {
    key.x_min = self->x_min, key.x_max = self->x_max, key.y_min = self->y_min, key.y_max = self->y_max;
    /* regression colours the points by the field's range */
    if (self->mode == LOOM_BOUNDARY_MODE_REGRESSION) key.value_lo = self->value_lo, key.value_hi = self->value_hi;
  }
  if (!self->overlay || memcmp(&key, &self->overlay_key, sizeof key) != 0) {
    g_clear_pointer(&self->overlay, gsk_render_node_unref);
    OverlayDraw d = {self, &f, &fg};
    self->overlay = loom_chart_texture_node(widget, w, h, overlay_draw, &d);
    self->overlay_key = key;
  }
  if (self->overlay) gtk_snapshot_append_node(snapshot, self->overlay);
}

GdkTexture *loom_boundary_view_render_texture(LoomBoundaryView *self, int w, int h) {
  g_return_val_if_fail(LOOM_IS_BOUNDARY_VIEW(self), NULL);
  g_return_val_if_fail(w > 0 && h > 0 && w <= 8192 && h <= 8192, NULL);
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
  cairo_t *cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  Frame f;
  layout(self, w, h, &f);
  if (self->pixels) {
    cairo_surface_t *field = cairo_image_surface_create_for_data((unsigned char *)self->pixels, CAIRO_FORMAT_ARGB32,
                                                                 self->res_x, self->res_y, self->res_x * 4);
    cairo_save(cr);
    cairo_rectangle(cr, f.fx, f.fy, f.fw, f.fh);
    cairo_clip(cr);
    cairo_translate(cr, f.fx, f.fy);
    cairo_scale(cr, f.fw / self->res_x, f.fh / self->res_y);
    cairo_set_source_surface(cr, field, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_BILINEAR);
    cairo_pattern_set_extend(cairo_get_source(cr), CAIRO_EXTEND_PAD);
    cairo_paint(cr);
    cairo_restore(cr);
    cairo_surface_destroy(field);
  }
  static const GdkRGBA dark = {0.1, 0.1, 0.1, 1};
  draw_overlay(self, cr, &f, &dark);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  int stride = cairo_image_surface_get_stride(surface);
  GBytes *bytes = g_bytes_new(cairo_image_surface_get_data(surface), (gsize)stride * h);
  cairo_surface_destroy(surface);
  GdkTexture *texture = gdk_memory_texture_new(w, h, GDK_MEMORY_DEFAULT, bytes, stride);
  g_bytes_unref(bytes);
  return texture;
}

static void loom_boundary_view_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                       int *natural, int *minimum_baseline, int *natural_baseline) {
  (void)widget;
  (void)orientation;
  (void)for_size;
  *minimum = 120;
  *natural = 320;
  *minimum_baseline = *natural_baseline = -1;
}

static void loom_boundary_view_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomBoundaryView *self = LOOM_BOUNDARY_VIEW(object);
  switch (prop_id) {
  case PROP_MODE: g_value_set_enum(value, self->mode); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_boundary_view_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  LoomBoundaryView *self = LOOM_BOUNDARY_VIEW(object);
  switch (prop_id) {
  case PROP_MODE: loom_boundary_view_set_mode(self, g_value_get_enum(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_boundary_view_finalize(GObject *object) {
  LoomBoundaryView *self = LOOM_BOUNDARY_VIEW(object);
  g_clear_object(&self->texture);
  g_clear_pointer(&self->overlay, gsk_render_node_unref);
  g_free(self->pixels);
  g_free(self->field);
  g_free(self->train.xy);
  g_free(self->train.value);
  g_free(self->test.xy);
  g_free(self->test.value);
  G_OBJECT_CLASS(loom_boundary_view_parent_class)->finalize(object);
}

static void loom_boundary_view_class_init(LoomBoundaryViewClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->get_property = loom_boundary_view_get_property;
  object_class->set_property = loom_boundary_view_set_property;
  object_class->finalize = loom_boundary_view_finalize;
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  widget_class->snapshot = loom_boundary_view_snapshot;
  widget_class->measure = loom_boundary_view_measure;
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);
  gtk_widget_class_set_css_name(widget_class, "loom-boundary-view");
  properties[PROP_MODE] =
      g_param_spec_enum("mode", NULL, NULL, LOOM_TYPE_BOUNDARY_MODE, LOOM_BOUNDARY_MODE_CLASSES,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void loom_boundary_view_init(LoomBoundaryView *self) {
  self->mode = LOOM_BOUNDARY_MODE_CLASSES;
  self->value_lo = 0;
  self->value_hi = 1;
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Decision boundary"), -1);
}
