/*
 * LoomGridView draws a network's grid with OpenGL (DESIGN.md §6): the floor,
 * faint outlines of empty cells, a block per occupied slot stacked by l in
 * its cell and coloured by layer type or dtype with a bit-depth gauge, the
 * spine, and remote links as arcs. This file holds the state, the API and
 * the frame; loom-grid-view-input.c the gestures, drops and tooltips.
 *
 * Work per frame is uniforms and a handful of draw calls: the instance
 * arrays are rebuilt only after loom_grid_view_net_changed(), and only the
 * shell of blocks that can be seen is drawn (docs/grid-view.md).
 */
#include <epoxy/gl.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "loom-grid-legend.h"
#include "loom-grid-view-impl.h"
#include "loom-grid-view-private.h"
#include "loom-widgets-resources.h"

#define MAX_CELLS 4096 /* per axis; beyond this the floor is unreadable anyway */

G_DEFINE_FINAL_TYPE(LoomGridView, loom_grid_view, GTK_TYPE_GL_AREA)

enum {
  PROP_0, PROP_DEPTH, PROP_ROWS, PROP_COLS, PROP_HAS_SELECTION, PROP_SELECTED_LINK,
  PROP_COLOR_MODE, PROP_Z_SLICE, PROP_LINK_TOOL, PROP_SHOW_LEGEND, PROP_METRIC_LOG, PROP_METRIC_AUTO_RANGE, N_PROPS
};
static GParamSpec *properties[N_PROPS];
guint loom_grid_view_signals[N_SIGNALS];

GType loom_grid_view_color_mode_get_type(void) {
  static gsize type = 0;
  if (g_once_init_enter(&type)) {
    static const GEnumValue values[] = {
      {LOOM_GRID_VIEW_COLOR_LAYER_TYPE, "LOOM_GRID_VIEW_COLOR_LAYER_TYPE", "layer-type"},
      {LOOM_GRID_VIEW_COLOR_DTYPE, "LOOM_GRID_VIEW_COLOR_DTYPE", "dtype"},
      {LOOM_GRID_VIEW_COLOR_METRIC, "LOOM_GRID_VIEW_COLOR_METRIC", "metric"},
      {0, NULL, NULL},
    };
    g_once_init_leave(&type, g_enum_register_static(g_intern_static_string("LoomGridViewColorMode"), values));
  }
  return type;
}

static void redraw(LoomGridView *self) {
  gtk_gl_area_queue_render(GTK_GL_AREA(self));
}

/* ---- the scene ---- */

static void update_legend(LoomGridView *self) {
  const LoomGridScene *s = &self->scene;
  guint64 key[5] = {s->groups_present, s->dtypes_present, s->merges_present | ((guint64)(s->n_boxes > 0) << 8),
                    (guint64)s->any_problem | ((guint64)s->any_disabled << 1) | ((guint64)(s->n_arcs > 0) << 2) |
                      ((guint64)(self->n_alerts > 0) << 3) | ((guint64)(self->link_values != NULL) << 4),
                    (guint64)self->color_mode};
  if (memcmp(key, self->legend_key, sizeof key) != 0) {
    memcpy(self->legend_key, key, sizeof key);
    LoomGridLegendExtras extras = {self->n_alerts > 0, self->link_values != NULL};
    loom_grid_legend_update(self->legend, s, self->color_mode, &extras);
    /* A rebuilt colour bar starts empty: give it the range in use. */
    if (self->color_mode == LOOM_GRID_VIEW_COLOR_METRIC)
      loom_grid_legend_set_metric(self->legend, self->metric_label, self->range_lo, self->range_hi, self->metric_log);
  }
  gtk_widget_set_child_visible(self->legend, self->show_legend);
}

void loom_grid_view_ensure_scene(LoomGridView *self) {
  if (!self->scene_dirty) return;
  self->scene_dirty = FALSE;
  loom_grid_scene_build(&self->scene, self->net, self->diags, self->n_diags);
  self->upload_dirty = TRUE;
}

/* Runs before layout in the frame after an edit: the legend's rows change
 * there, never while the frame is being drawn. */
static gboolean scene_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
  LoomGridView *self = LOOM_GRID_VIEW(widget);
  self->scene_tick = 0;
  loom_grid_view_ensure_scene(self);
  update_legend(self);
  return G_SOURCE_REMOVE;
}

void loom_grid_view_legend_changed(LoomGridView *self) {
  update_legend(self);
}

static void scene_changed(LoomGridView *self) {
  self->scene_dirty = TRUE;
  if (!self->scene_tick) self->scene_tick = gtk_widget_add_tick_callback(GTK_WIDGET(self), scene_tick, NULL, NULL);
  redraw(self);
}

void loom_grid_view_sync_camera(LoomGridView *self) {
  self->cam.depth = (int)self->depth;
  self->cam.rows = (int)self->rows;
  self->cam.cols = (int)self->cols;
  int w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
  if (self->auto_frame && w > 0 && h > 0) loom_grid_camera_frame(&self->cam, (float)w, (float)h);
}

void loom_grid_view_camera_moved(LoomGridView *self) {
  loom_grid_view_sync_camera(self);
  self->auto_frame = FALSE;
}

int loom_grid_view_layers_per_cell(LoomGridView *self) {
  return self->net ? loom_net_layers_per_cell(self->net) : 1;
}

/* Index of the slot's block in the scene, or -1 when the slot is empty. */
static int box_of(LoomGridView *self, const loom_coord *c) {
  if (!self->net || !loom_net_contains(self->net, *c) || self->scene.n_boxes == 0) return -1;
  return self->scene.slot_box[loom_net_flat_index(self->net, *c)];
}

void loom_grid_view_fill_frame(LoomGridView *self, LoomGridFrame *f, int width, int height, float scale) {
  loom_grid_view_sync_camera(self);
  /* An export of another aspect than the widget's is framed for its own. */
  LoomGridCamera cam = self->cam;
  if (self->auto_frame) loom_grid_camera_frame(&cam, (float)width, (float)height);
  memset(f, 0, sizeof *f);
  f->mvp = loom_grid_camera_matrix(&cam, (float)width, (float)height);
  loom_grid_camera_eye(&cam, f->eye);
  f->width = width;
  f->height = height;
  f->scale = scale;
  f->depth = (int)self->depth;
  f->rows = (int)self->rows;
  f->cols = (int)self->cols;
  f->z_slice = self->z_slice < (int)self->depth ? self->z_slice : -1;
  f->color_mode = self->color_mode;
  f->selected_box = self->has_selection ? box_of(self, &self->selection) : -1;
  f->hover_box = self->has_hover ? box_of(self, &self->hover) : -1;
  f->selected_link = self->selected_link < self->scene.n_arcs ? self->selected_link : -1;
  if (self->has_selection && f->selected_box < 0 &&
      (f->z_slice < 0 || self->selection.z == f->z_slice)) {
    float mn[3], mx[3];
    loom_grid_slot_box(loom_grid_view_layers_per_cell(self), self->selection, mn, mx);
    for (int i = 0; i < 3; i++) {
      f->marker_box.min[i] = mn[i];
      f->marker_box.size[i] = mx[i] - mn[i];
    }
    f->marker_box.flags = 4.f; /* the marker state of grid-box.vert */
    f->marker = TRUE;
  }
  f->all_blocks = self->all_blocks;
  f->rubber = self->rubber;
  f->rubber_arc = self->rubber_arc;
  f->shift = self->shift && (f->z_slice < 0 || self->shift_arc.src_z == f->z_slice || self->shift_arc.dst_z == f->z_slice);
  f->shift_arc = self->shift_arc;
  f->pulse = loom_grid_view_pulse(self);
  f->live = self->color_mode == LOOM_GRID_VIEW_COLOR_METRIC || self->n_alerts > 0;
}

void loom_grid_view_upload(LoomGridView *self) {
  loom_grid_view_ensure_scene(self);
  if (self->upload_dirty) {
    loom_grid_renderer_upload(self->renderer, &self->scene);
    self->upload_dirty = FALSE;
    /* The upload emptied the live data's buffers: fill them again. */
    self->slot_colors_dirty = self->link_flow_dirty = TRUE;
  }
  loom_grid_view_upload_live(self);
}

void loom_grid_view_draw(LoomGridView *self, int width, int height) {
  loom_grid_view_upload(self);
  LoomGridFrame frame;
  loom_grid_view_fill_frame(self, &frame, width, height, (float)gtk_widget_get_scale_factor(GTK_WIDGET(self)));
  loom_grid_renderer_draw(self->renderer, &self->scene, &frame);
}

/* ---- the legend, a child drawn over the GL picture ---- */

static void loom_grid_view_size_allocate(GtkWidget *widget, int width, int height, int baseline) {
  LoomGridView *self = LOOM_GRID_VIEW(widget);
  GTK_WIDGET_CLASS(loom_grid_view_parent_class)->size_allocate(widget, width, height, baseline);
  int min_w, nat_w, min_h, nat_h;
  gtk_widget_measure(self->legend, GTK_ORIENTATION_HORIZONTAL, -1, &min_w, &nat_w, NULL, NULL);
  gtk_widget_measure(self->legend, GTK_ORIENTATION_VERTICAL, nat_w, &min_h, &nat_h, NULL, NULL);
  gtk_widget_size_allocate(self->legend, &(GtkAllocation){0, 0, nat_w, nat_h}, -1);
}

static void loom_grid_view_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
  LoomGridView *self = LOOM_GRID_VIEW(widget);
  GTK_WIDGET_CLASS(loom_grid_view_parent_class)->snapshot(widget, snapshot);
  gtk_widget_snapshot_child(widget, self->legend, snapshot);
}

/* ---- the network ---- */

static void set_dimension(LoomGridView *self, guint *field, guint value, int prop) {
  if (*field == value) return;
  *field = value;
  redraw(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[prop]);
}

static void sync_dimensions(LoomGridView *self) {
  if (!self->net) return;
  g_object_freeze_notify(G_OBJECT(self));
  set_dimension(self, &self->depth, (guint)MIN(loom_net_depth(self->net), MAX_CELLS), PROP_DEPTH);
  set_dimension(self, &self->rows, (guint)MIN(loom_net_rows(self->net), MAX_CELLS), PROP_ROWS);
  set_dimension(self, &self->cols, (guint)MIN(loom_net_cols(self->net), MAX_CELLS), PROP_COLS);
  g_object_thaw_notify(G_OBJECT(self));
}

void loom_grid_view_net_changed(LoomGridView *self) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  sync_dimensions(self);
  scene_changed(self);
  /* A hovered slot may have gone with the edit; the pointer re-picks it. */
  self->has_hover = FALSE;
  if (self->selected_link >= loom_net_n_links(self->net)) loom_grid_view_set_selected_link(self, -1);
  redraw(self);
}

void loom_grid_view_set_net(LoomGridView *self, const loom_net *net) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  self->net = net;
  g_clear_pointer(&self->diags, g_free);
  self->n_diags = 0;
  loom_grid_view_set_selection(self, NULL);
  loom_grid_view_net_changed(self);
}

void loom_grid_view_set_diagnostics(LoomGridView *self, const loom_diag *diags, int n) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  g_return_if_fail(n >= 0 && (n == 0 || diags));
  g_free(self->diags);
  self->diags = n > 0 ? g_memdup2(diags, (gsize)n * sizeof *diags) : NULL;
  self->n_diags = n;
  scene_changed(self);
}

/* ---- selection ---- */

gboolean loom_grid_view_get_selection(LoomGridView *self, loom_coord *out) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), FALSE);
  if (self->has_selection && out) *out = self->selection;
  return self->has_selection;
}

void loom_grid_view_set_selection(LoomGridView *self, const loom_coord *c) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  gboolean had = self->has_selection;
  if (!c && !had) return;
  if (c && had && memcmp(c, &self->selection, sizeof *c) == 0) return;
  self->has_selection = c != NULL;
  if (c) self->selection = *c;
  redraw(self);
  if (had != self->has_selection) g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_HAS_SELECTION]);
  g_signal_emit(self, loom_grid_view_signals[SIGNAL_SELECTION_CHANGED], 0);
}

void loom_grid_view_set_selected_link(LoomGridView *self, int index) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  index = MAX(index, -1);
  if (self->selected_link == index) return;
  self->selected_link = index;
  redraw(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SELECTED_LINK]);
}

int loom_grid_view_get_selected_link(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), -1);
  return self->selected_link;
}

void loom_grid_view_set_hover(LoomGridView *self, const loom_coord *c) {
  if (!c && !self->has_hover) return;
  if (c && self->has_hover && memcmp(c, &self->hover, sizeof *c) == 0) return;
  self->has_hover = c != NULL;
  if (c) self->hover = *c;
  redraw(self);
}

/* ---- display options ---- */

void loom_grid_view_set_color_mode(LoomGridView *self, LoomGridViewColorMode mode) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  g_return_if_fail(mode == LOOM_GRID_VIEW_COLOR_LAYER_TYPE || mode == LOOM_GRID_VIEW_COLOR_DTYPE ||
                   mode == LOOM_GRID_VIEW_COLOR_METRIC);
  if (self->color_mode == mode) return;
  self->color_mode = mode;
  update_legend(self);
  /* The colour texture holds metric colours only in the METRIC mode. */
  self->slot_colors_dirty = TRUE;
  loom_grid_view_metric_changed(self);
  redraw(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_COLOR_MODE]);
}

LoomGridViewColorMode loom_grid_view_get_color_mode(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), LOOM_GRID_VIEW_COLOR_LAYER_TYPE);
  return self->color_mode;
}

void loom_grid_view_set_z_slice(LoomGridView *self, int z) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  z = MAX(z, -1);
  if (self->z_slice == z) return;
  self->z_slice = z;
  self->has_hover = FALSE;
  redraw(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_Z_SLICE]);
}

int loom_grid_view_get_z_slice(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), -1);
  return self->z_slice;
}

void loom_grid_view_set_link_tool(LoomGridView *self, gboolean enabled) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  enabled = !!enabled;
  if (self->link_tool == enabled) return;
  self->link_tool = enabled;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_LINK_TOOL]);
}

gboolean loom_grid_view_get_link_tool(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), FALSE);
  return self->link_tool;
}

void loom_grid_view_set_show_legend(LoomGridView *self, gboolean show) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  show = !!show;
  if (self->show_legend == show) return;
  self->show_legend = show;
  gtk_widget_set_child_visible(self->legend, show);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SHOW_LEGEND]);
}

gboolean loom_grid_view_get_show_legend(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), FALSE);
  return self->show_legend;
}

void loom_grid_view_set_metric_log(LoomGridView *self, gboolean log_scale) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  log_scale = !!log_scale;
  if (self->metric_log == log_scale) return;
  self->metric_log = log_scale;
  loom_grid_view_metric_changed(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_METRIC_LOG]);
}

gboolean loom_grid_view_get_metric_log(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), FALSE);
  return self->metric_log;
}

void loom_grid_view_set_metric_auto_range(LoomGridView *self, gboolean auto_range) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  auto_range = !!auto_range;
  if (self->metric_auto == auto_range) return;
  self->metric_auto = auto_range;
  loom_grid_view_metric_changed(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_METRIC_AUTO_RANGE]);
}

gboolean loom_grid_view_get_metric_auto_range(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), TRUE);
  return self->metric_auto;
}

/* ---- camera ---- */

void loom_grid_view_reset_camera(LoomGridView *self) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  loom_grid_camera_reset(&self->cam);
  self->auto_frame = TRUE;
  redraw(self);
}

void loom_grid_view_set_preset(LoomGridView *self, LoomGridViewPreset preset) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  loom_grid_camera_reset(&self->cam);
  self->auto_frame = TRUE;
  switch (preset) {
  case LOOM_GRID_VIEW_PRESET_FRONT:
    self->cam.yaw = 0.f;
    self->cam.pitch = 0.f;
    break;
  case LOOM_GRID_VIEW_PRESET_TOP:
    self->cam.yaw = 0.f;
    self->cam.pitch = LOOM_GRID_CAMERA_MAX_PITCH;
    break;
  case LOOM_GRID_VIEW_PRESET_ISO:
  default: break;
  }
  redraw(self);
}

void loom_grid_view_set_orbit(LoomGridView *self, double yaw, double pitch) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  loom_grid_view_camera_moved(self);
  self->cam.yaw = (float)yaw;
  self->cam.pitch = CLAMP((float)pitch, LOOM_GRID_CAMERA_MIN_PITCH, LOOM_GRID_CAMERA_MAX_PITCH);
  redraw(self);
}

void loom_grid_view_set_zoom(LoomGridView *self, double zoom) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  self->auto_frame = FALSE;
  self->cam.fit = 0.f;
  self->cam.pan[0] = self->cam.pan[1] = self->cam.pan[2] = 0.f;
  self->cam.zoom = CLAMP((float)zoom, LOOM_GRID_CAMERA_MIN_ZOOM, LOOM_GRID_CAMERA_MAX_ZOOM);
  redraw(self);
}

void loom_grid_view_set_draw_all_blocks(LoomGridView *self, gboolean all) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  self->all_blocks = !!all;
  redraw(self);
}

/* ---- properties ---- */

guint loom_grid_view_get_depth(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), 0);
  return self->depth;
}

void loom_grid_view_set_depth(LoomGridView *self, guint depth) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  set_dimension(self, &self->depth, MIN(depth, MAX_CELLS), PROP_DEPTH);
}

guint loom_grid_view_get_rows(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), 0);
  return self->rows;
}

void loom_grid_view_set_rows(LoomGridView *self, guint rows) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  set_dimension(self, &self->rows, MIN(rows, MAX_CELLS), PROP_ROWS);
}

guint loom_grid_view_get_cols(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), 0);
  return self->cols;
}

void loom_grid_view_set_cols(LoomGridView *self, guint cols) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  set_dimension(self, &self->cols, MIN(cols, MAX_CELLS), PROP_COLS);
}

static void loom_grid_view_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomGridView *self = LOOM_GRID_VIEW(object);
  switch (prop_id) {
  case PROP_DEPTH: g_value_set_uint(value, self->depth); break;
  case PROP_ROWS: g_value_set_uint(value, self->rows); break;
  case PROP_COLS: g_value_set_uint(value, self->cols); break;
  case PROP_HAS_SELECTION: g_value_set_boolean(value, self->has_selection); break;
  case PROP_SELECTED_LINK: g_value_set_int(value, self->selected_link); break;
  case PROP_COLOR_MODE: g_value_set_enum(value, self->color_mode); break;
  case PROP_Z_SLICE: g_value_set_int(value, self->z_slice); break;
  case PROP_LINK_TOOL: g_value_set_boolean(value, self->link_tool); break;
  case PROP_SHOW_LEGEND: g_value_set_boolean(value, self->show_legend); break;
  case PROP_METRIC_LOG: g_value_set_boolean(value, self->metric_log); break;
  case PROP_METRIC_AUTO_RANGE: g_value_set_boolean(value, self->metric_auto); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_grid_view_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  LoomGridView *self = LOOM_GRID_VIEW(object);
  switch (prop_id) {
  case PROP_DEPTH: loom_grid_view_set_depth(self, g_value_get_uint(value)); break;
  case PROP_ROWS: loom_grid_view_set_rows(self, g_value_get_uint(value)); break;
  case PROP_COLS: loom_grid_view_set_cols(self, g_value_get_uint(value)); break;
  case PROP_SELECTED_LINK: loom_grid_view_set_selected_link(self, g_value_get_int(value)); break;
  case PROP_COLOR_MODE: loom_grid_view_set_color_mode(self, g_value_get_enum(value)); break;
  case PROP_Z_SLICE: loom_grid_view_set_z_slice(self, g_value_get_int(value)); break;
  case PROP_LINK_TOOL: loom_grid_view_set_link_tool(self, g_value_get_boolean(value)); break;
  case PROP_SHOW_LEGEND: loom_grid_view_set_show_legend(self, g_value_get_boolean(value)); break;
  case PROP_METRIC_LOG: loom_grid_view_set_metric_log(self, g_value_get_boolean(value)); break;
  case PROP_METRIC_AUTO_RANGE: loom_grid_view_set_metric_auto_range(self, g_value_get_boolean(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_grid_view_dispose(GObject *object) {
  LoomGridView *self = LOOM_GRID_VIEW(object);
  if (self->scene_tick) gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->scene_tick);
  self->scene_tick = 0;
  if (self->pulse_tick) gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->pulse_tick);
  self->pulse_tick = 0;
  g_clear_pointer(&self->legend, gtk_widget_unparent);
  G_OBJECT_CLASS(loom_grid_view_parent_class)->dispose(object);
}

static void loom_grid_view_finalize(GObject *object) {
  LoomGridView *self = LOOM_GRID_VIEW(object);
  loom_grid_scene_clear(&self->scene);
  g_free(self->diags);
  loom_grid_view_metric_free(self);
  G_OBJECT_CLASS(loom_grid_view_parent_class)->finalize(object);
}

#define RW_FLAGS (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS)

static void loom_grid_view_class_init(LoomGridViewClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  GtkGLAreaClass *area_class = GTK_GL_AREA_CLASS(klass);

  object_class->get_property = loom_grid_view_get_property;
  object_class->set_property = loom_grid_view_set_property;
  object_class->dispose = loom_grid_view_dispose;
  object_class->finalize = loom_grid_view_finalize;
  widget_class->realize = loom_grid_view_realize;
  widget_class->unrealize = loom_grid_view_unrealize;
  widget_class->size_allocate = loom_grid_view_size_allocate;
  widget_class->snapshot = loom_grid_view_snapshot;
  widget_class->query_tooltip = loom_grid_view_query_tooltip;
  area_class->render = loom_grid_view_render;
  /* GTK 4.8 runs its default through a class handler, not the vfunc slot. */
  g_signal_override_class_handler("create-context", LOOM_TYPE_GRID_VIEW,
                                  G_CALLBACK(loom_grid_view_create_context));

  properties[PROP_DEPTH] = g_param_spec_uint("depth", NULL, NULL, 0, MAX_CELLS, 4, RW_FLAGS);
  properties[PROP_ROWS] = g_param_spec_uint("rows", NULL, NULL, 0, MAX_CELLS, 4, RW_FLAGS);
  properties[PROP_COLS] = g_param_spec_uint("cols", NULL, NULL, 0, MAX_CELLS, 4, RW_FLAGS);
  properties[PROP_HAS_SELECTION] =
    g_param_spec_boolean("has-selection", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_SELECTED_LINK] = g_param_spec_int("selected-link", NULL, NULL, -1, G_MAXINT, -1, RW_FLAGS);
  properties[PROP_COLOR_MODE] = g_param_spec_enum("color-mode", NULL, NULL, LOOM_TYPE_GRID_VIEW_COLOR_MODE,
                                                  LOOM_GRID_VIEW_COLOR_LAYER_TYPE, RW_FLAGS);
  properties[PROP_Z_SLICE] = g_param_spec_int("z-slice", NULL, NULL, -1, MAX_CELLS - 1, -1, RW_FLAGS);
  properties[PROP_LINK_TOOL] = g_param_spec_boolean("link-tool", NULL, NULL, FALSE, RW_FLAGS);
  properties[PROP_SHOW_LEGEND] = g_param_spec_boolean("show-legend", NULL, NULL, TRUE, RW_FLAGS);
  properties[PROP_METRIC_LOG] = g_param_spec_boolean("metric-log", NULL, NULL, FALSE, RW_FLAGS);
  properties[PROP_METRIC_AUTO_RANGE] = g_param_spec_boolean("metric-auto-range", NULL, NULL, TRUE, RW_FLAGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  loom_grid_view_signals[SIGNAL_SELECTION_CHANGED] =
    g_signal_new("selection-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  loom_grid_view_signals[SIGNAL_SLOT_ACTIVATED] =
    g_signal_new("slot-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 4,
                 G_TYPE_INT, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT);
  loom_grid_view_signals[SIGNAL_LAYER_DROPPED] =
    g_signal_new("layer-dropped", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 5,
                 G_TYPE_STRING, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT);
  loom_grid_view_signals[SIGNAL_LINK_DRAWN] =
    g_signal_new("link-drawn", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 8,
                 G_TYPE_INT, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT);

  gtk_widget_class_set_css_name(widget_class, "loomgridview");
  /* A focusable whole that the application names and describes (the
   * selected slot); GTK 4.8 has no closer role for a 3D canvas. */
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_GROUP);

  /* The resource object lives in a static library; referencing it here makes
   * sure the linker keeps it (and its constructor registers the shaders). */
  (void)loom_widgets_get_resource();
}

/* The GL drawing has no focus ring of its own: GTK draws the CSS outline
 * around it while the view has the keyboard focus. */
static void ensure_focus_css(GtkWidget *widget) {
  GdkDisplay *display = gtk_widget_get_display(widget);
  if (g_object_get_data(G_OBJECT(display), "loom-grid-view-css")) return;
  g_autoptr(GtkCssProvider) provider = gtk_css_provider_new();
  gtk_css_provider_load_from_data(provider,
                                  "loomgridview:focus-visible {"
                                  " outline: 2px solid alpha(@theme_selected_bg_color, 0.8); outline-offset: -2px; }",
                                  -1);
  gtk_style_context_add_provider_for_display(display, GTK_STYLE_PROVIDER(provider),
                                             GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  g_object_set_data(G_OBJECT(display), "loom-grid-view-css", GINT_TO_POINTER(1));
}

static void loom_grid_view_init(LoomGridView *self) {
  self->depth = self->rows = self->cols = 4;
  loom_grid_camera_reset(&self->cam);
  self->auto_frame = TRUE;
  self->selected_link = -1;
  self->z_slice = -1;
  self->show_legend = TRUE;
  self->scene_dirty = TRUE;
  self->metric_auto = TRUE;
  self->fixed_lo = 0.0;
  self->fixed_hi = 1.0;
  self->range_lo = self->range_hi = NAN;
  self->pulse_time = -1.0;

  gtk_gl_area_set_has_depth_buffer(GTK_GL_AREA(self), TRUE);
  gtk_widget_set_focusable(GTK_WIDGET(self), TRUE);
  ensure_focus_css(GTK_WIDGET(self));
  gtk_widget_set_overflow(GTK_WIDGET(self), GTK_OVERFLOW_HIDDEN);

  self->legend = loom_grid_legend_new();
  gtk_widget_set_margin_start(self->legend, 8);
  gtk_widget_set_margin_top(self->legend, 8);
  gtk_widget_set_parent(self->legend, GTK_WIDGET(self));
  self->legend_key[0] = G_MAXUINT64; /* never matches: the first update builds it */
  loom_grid_view_ensure_scene(self);
  update_legend(self);

  loom_grid_view_install_input(self);
}

GtkWidget *loom_grid_view_new(void) {
  return g_object_new(LOOM_TYPE_GRID_VIEW, NULL);
}
