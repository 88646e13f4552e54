/*
 * LoomGridView's live metrics: slot values coloured through the colour map
 * (the METRIC mode), flows through the links, alert slots. The workbench
 * sets them up to 30 times a second while training, so nothing here
 * rebuilds the scene: the values become one RGBA8 texel per block and one
 * float per link, uploaded at the next frame (docs/grid-view.md).
 */
#include <math.h>
#include <string.h>

#include "loom-grid-legend.h"
#include "loom-grid-view-impl.h"
#include "loom-grid-view-private.h"

#define PULSE_PERIOD_S 1.0
#define ALERT_TEXEL 255 /* alpha of an alert slot's texel (grid-box.frag) */

static void redraw(LoomGridView *self) {
  gtk_gl_area_queue_render(GTK_GL_AREA(self));
}

/* ---- the range ---- */

/* The range of the finite values (the positive ones on a log scale);
 * FALSE when there is none. */
static gboolean values_range(const float *v, gsize n, gboolean log_scale, double *lo, double *hi) {
  double mn = INFINITY, mx = -INFINITY;
  for (gsize i = 0; i < n; i++) {
    float x = v[i];
    if (!isfinite(x) || (log_scale && x <= 0.f)) continue;
    mn = MIN(mn, (double)x);
    mx = MAX(mx, (double)x);
  }
  if (mn > mx) return FALSE;
  *lo = mn;
  *hi = mx;
  return TRUE;
}

void loom_grid_view_metric_changed(LoomGridView *self) {
  double lo = self->fixed_lo, hi = self->fixed_hi;
  /* A fixed range reaching zero or below has no place on a log axis. */
  if (self->metric_auto || (self->metric_log && lo <= 0.0)) {
    if (!values_range(self->slot_values, self->n_slot_values, self->metric_log, &lo, &hi)) lo = hi = NAN;
  }
  self->range_lo = lo;
  self->range_hi = hi;
  if (self->color_mode == LOOM_GRID_VIEW_COLOR_METRIC) {
    self->slot_colors_dirty = TRUE;
    loom_grid_legend_set_metric(self->legend, self->metric_label, lo, hi, self->metric_log);
    redraw(self);
  }
}

/* t = (f(v) - origin) · scale places a value in the range in use, with
 * f = log2 on a log scale (any base gives the same t): computed once per
 * update, not per slot. */
typedef struct {
  gboolean log_scale, none, point;
  float origin, scale;
} placement;

static placement placement_for(const LoomGridView *self) {
  placement p = {.log_scale = self->metric_log};
  double lo = self->range_lo, hi = self->range_hi;
  p.none = isnan(lo) || isnan(hi);
  if (p.none) return p;
  if (p.log_scale) lo = log2(lo), hi = log2(hi);
  p.point = !(hi > lo); /* every value the same: the map's middle */
  p.origin = (float)lo;
  p.scale = p.point ? 0.f : (float)(1.0 / (hi - lo));
  return p;
}

/* Where value @v falls, 0..1 (beyond: clamped by the colour map), or NaN
 * when it has no colour. */
static float position(const placement *p, float v) {
  if (isnan(v) || p->none || (p->log_scale && v <= 0.f)) return NAN;
  if (p->point) return 0.5f;
  return ((p->log_scale ? log2f(v) : v) - p->origin) * p->scale;
}

/* ---- uploads at frame time ---- */

static void upload_slot_colors(LoomGridView *self) {
  const LoomGridScene *s = &self->scene;
  /* The texture's shape: whole rows, one spare block (renderer upload). */
  gsize texels = s->boxes ? ((gsize)s->n_boxes / LOOM_GRID_BOXES_PER_ROW + 1) * LOOM_GRID_BOXES_PER_ROW : 0;
  if (texels == 0) return;
  if (texels > self->slot_rgba_cap) {
    self->slot_rgba = g_renew(guint8, self->slot_rgba, texels * 4);
    self->slot_rgba_cap = texels;
  }
  memset(self->slot_rgba, 0, texels * 4);
  if (self->color_mode == LOOM_GRID_VIEW_COLOR_METRIC) {
    const float neutral[3] = {LOOM_GRID_VIEW_NEUTRAL_R, LOOM_GRID_VIEW_NEUTRAL_G, LOOM_GRID_VIEW_NEUTRAL_B};
    placement place = placement_for(self);
    for (int b = 0; b < s->n_boxes; b++) {
      loom_coord c = s->box_coords[b];
      gsize flat = (((gsize)c.z * (gsize)s->rows + (gsize)c.y) * (gsize)s->cols + (gsize)c.x) *
                     (gsize)s->layers_per_cell + (gsize)c.l;
      float t = flat < self->n_slot_values ? position(&place, self->slot_values[flat]) : NAN;
      float rgb[3];
      if (isnan(t))
        memcpy(rgb, neutral, sizeof rgb);
      else
        loom_grid_colormap(t, rgb);
      for (int i = 0; i < 3; i++) self->slot_rgba[4 * (gsize)b + i] = (guint8)(CLAMP(rgb[i], 0.f, 1.f) * 255.f + 0.5f);
    }
  }
  /* Alerts: a linear search per alert, and there are few. */
  for (gsize i = 0; i < self->n_alerts; i++) {
    loom_coord c = self->alerts[i];
    if (c.z < 0 || c.y < 0 || c.x < 0 || c.l < 0 || c.z >= s->depth || c.y >= s->rows || c.x >= s->cols ||
        c.l >= s->layers_per_cell)
      continue;
    gsize flat = (((gsize)c.z * (gsize)s->rows + (gsize)c.y) * (gsize)s->cols + (gsize)c.x) *
                   (gsize)s->layers_per_cell + (gsize)c.l;
    int b = s->slot_box[flat];
    if (b >= 0 && loom_coord_equal(s->box_coords[b], c)) self->slot_rgba[4 * (gsize)b + 3] = ALERT_TEXEL;
  }
  loom_grid_renderer_upload_slot_colors(self->renderer, self->slot_rgba, texels);
}

static void upload_link_flow(LoomGridView *self) {
  const LoomGridScene *s = &self->scene;
  if (!self->link_values || s->n_arcs == 0) {
    loom_grid_renderer_upload_link_flow(self->renderer, NULL, 0);
    return;
  }
  if ((gsize)s->n_arcs > self->link_flow_cap) {
    self->link_flow = g_renew(float, self->link_flow, (gsize)s->n_arcs);
    self->link_flow_cap = (gsize)s->n_arcs;
  }
  float largest = 0.f;
  for (gsize i = 0; i < self->n_link_values; i++)
    if (isfinite(self->link_values[i])) largest = MAX(largest, fabsf(self->link_values[i]));
  for (int i = 0; i < s->n_arcs; i++) {
    float v = (gsize)i < self->n_link_values ? self->link_values[i] : 0.f;
    self->link_flow[i] = isfinite(v) && largest > 0.f ? fabsf(v) / largest : 0.f;
  }
  loom_grid_renderer_upload_link_flow(self->renderer, self->link_flow, s->n_arcs);
}

void loom_grid_view_upload_live(LoomGridView *self) {
  if (self->slot_colors_dirty) upload_slot_colors(self);
  if (self->link_flow_dirty) upload_link_flow(self);
  self->slot_colors_dirty = self->link_flow_dirty = FALSE;
}

float loom_grid_view_pulse(LoomGridView *self) {
  double t = self->pulse_time >= 0.0 ? self->pulse_time : (double)g_get_monotonic_time() / G_USEC_PER_SEC;
  return (float)(0.5 - 0.5 * cos(2.0 * G_PI * fmod(t, PULSE_PERIOD_S) / PULSE_PERIOD_S));
}

/* ---- API ---- */

void loom_grid_view_set_slot_values(LoomGridView *self, const float *values, gsize n, const char *label) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  g_return_if_fail(values != NULL || n == 0);
  /* Reuse the copy: at 30 updates a second the size rarely changes. */
  if (n != self->n_slot_values) {
    g_free(self->slot_values);
    self->slot_values = n > 0 ? g_new(float, n) : NULL;
    self->n_slot_values = n;
  }
  if (n > 0) memcpy(self->slot_values, values, n * sizeof *values);
  if (g_strcmp0(label, self->metric_label) != 0) {
    g_free(self->metric_label);
    self->metric_label = g_strdup(label);
  }
  loom_grid_view_metric_changed(self);
}

void loom_grid_view_set_metric_range(LoomGridView *self, double lo, double hi) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  g_return_if_fail(isfinite(lo) && isfinite(hi) && lo < hi);
  if (lo == self->fixed_lo && hi == self->fixed_hi) return;
  self->fixed_lo = lo;
  self->fixed_hi = hi;
  loom_grid_view_metric_changed(self);
}

void loom_grid_view_get_metric_range(LoomGridView *self, double *lo, double *hi) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  if (lo) *lo = self->range_lo;
  if (hi) *hi = self->range_hi;
}

void loom_grid_view_set_link_values(LoomGridView *self, const float *per_link, gsize n) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  g_clear_pointer(&self->link_values, g_free);
  self->n_link_values = 0;
  if (per_link) {
    self->link_values = g_memdup2(per_link, MAX(n, 1) * sizeof *per_link);
    self->n_link_values = n;
  }
  self->link_flow_dirty = TRUE;
  loom_grid_view_legend_changed(self);
  redraw(self);
}

static gboolean pulse_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
  redraw(LOOM_GRID_VIEW(widget));
  return G_SOURCE_CONTINUE;
}

void loom_grid_view_set_shift_arrow(LoomGridView *self, const loom_coord *from, const loom_coord *to) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  self->shift = from && to;
  if (self->shift) {
    LoomGridArc *a = &self->shift_arc;
    int lpc = loom_grid_view_layers_per_cell(self);
    loom_grid_slot_centre(lpc, *from, a->src);
    loom_grid_slot_centre(lpc, *to, a->dst);
    a->rgba[0] = (guint8)(LOOM_GRID_VIEW_SHIFT_R * 255.f);
    a->rgba[1] = (guint8)(LOOM_GRID_VIEW_SHIFT_G * 255.f);
    a->rgba[2] = (guint8)(LOOM_GRID_VIEW_SHIFT_B * 255.f);
    a->rgba[3] = 255;
    a->src_z = (float)from->z;
    a->dst_z = (float)to->z;
    a->feedback = 0.f;
  }
  redraw(self);
}

void loom_grid_view_set_alert_slots(LoomGridView *self, const loom_coord *slots, gsize n) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  if (!slots) n = 0;
  g_clear_pointer(&self->alerts, g_free);
  self->alerts = n > 0 ? g_memdup2(slots, n * sizeof *slots) : NULL;
  self->n_alerts = n;
  self->slot_colors_dirty = TRUE;
  /* The outline pulses: a frame every refresh while any alert is shown. */
  if (n > 0 && !self->pulse_tick)
    self->pulse_tick = gtk_widget_add_tick_callback(GTK_WIDGET(self), pulse_tick, NULL, NULL);
  else if (n == 0 && self->pulse_tick) {
    gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->pulse_tick);
    self->pulse_tick = 0;
  }
  loom_grid_view_legend_changed(self);
  redraw(self);
}

void loom_grid_view_set_pulse_time(LoomGridView *self, double seconds) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  self->pulse_time = seconds;
  redraw(self);
}

void loom_grid_view_metric_free(LoomGridView *self) {
  g_clear_pointer(&self->slot_values, g_free);
  g_clear_pointer(&self->metric_label, g_free);
  g_clear_pointer(&self->link_values, g_free);
  g_clear_pointer(&self->alerts, g_free);
  g_clear_pointer(&self->slot_rgba, g_free);
  g_clear_pointer(&self->link_flow, g_free);
}
