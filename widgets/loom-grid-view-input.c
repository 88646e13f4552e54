/*
 * LoomGridView's input: picking by ray cast, orbit / pan / zoom, selection
 * and activation clicks, the link tool's drag, palette drops and tooltips.
 */
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "loom-grid-view-impl.h"
#include "loom-grid-view-private.h"

#define LAYER_TYPE_PREFIX "loom-layer-type:"

/* ---- picking and projection ---- */

gboolean loom_grid_view_pick_full(LoomGridView *self, double x, double y, loom_coord *out, gboolean *occupied) {
  float w = (float)gtk_widget_get_width(GTK_WIDGET(self)), h = (float)gtk_widget_get_height(GTK_WIDGET(self));
  if (w <= 0.f || h <= 0.f || self->depth == 0 || self->rows == 0 || self->cols == 0) return FALSE;
  loom_grid_view_ensure_scene(self);
  loom_grid_view_sync_camera(self);
  float o[3], d[3];
  loom_grid_camera_ray(&self->cam, w, h, x, y, o, d);

  const LoomGridScene *s = &self->scene;
  int slice = self->z_slice < (int)self->depth ? self->z_slice : -1;
  int first = 0, last = s->n_boxes;
  if (slice >= 0 && s->n_boxes > 0) {
    first = s->box_first[slice];
    last = s->box_first[slice + 1];
  }
  int best = -1;
  float best_t = G_MAXFLOAT;
  for (int i = first; i < last; i++) {
    const LoomGridBox *b = &s->boxes[i];
    float mx[3] = {b->min[0] + b->size[0], b->min[1] + b->size[1], b->min[2] + b->size[2]}, t;
    /* A stack is drawn as one box with a dark band between its slots; a ray
     * through the band belongs to the slot below it, not to a block behind. */
    loom_coord above = s->box_coords[i];
    above.l++;
    if (self->net && above.l < loom_grid_view_layers_per_cell(self) && loom_net_layer_at(self->net, above)) {
      float amn[3], amx[3];
      loom_grid_slot_box(loom_grid_view_layers_per_cell(self), above, amn, amx);
      mx[1] = amn[1];
    }
    if (loom_grid_ray_box(o, d, b->min, mx, &t) && t < best_t) {
      best_t = t;
      best = i;
    }
  }
  if (best >= 0) {
    *out = s->box_coords[best];
    if (occupied) *occupied = TRUE;
    return TRUE;
  }

  /* No block: the cell where the ray enters the grid (or the slice). */
  float mn[3] = {0.f, slice >= 0 ? (float)slice : 0.f, 0.f};
  float mx[3] = {(float)self->cols, slice >= 0 ? (float)slice + 1.f : (float)self->depth, (float)self->rows};
  float t;
  if (!loom_grid_ray_box(o, d, mn, mx, &t)) return FALSE;
  float p[3];
  for (int i = 0; i < 3; i++) p[i] = o[i] + d[i] * (t + 1e-4f);
  loom_coord c = {CLAMP((int)floorf(p[1]), (int)mn[1], (int)mx[1] - 1), CLAMP((int)floorf(p[2]), 0, (int)self->rows - 1),
                  CLAMP((int)floorf(p[0]), 0, (int)self->cols - 1), 0};
  /* The cell's lowest empty slot: where a dropped layer would go. */
  int lpc = loom_grid_view_layers_per_cell(self);
  if (self->net && loom_net_contains(self->net, c))
    while (c.l + 1 < lpc && loom_net_layer_at(self->net, c)) c.l++;
  if (self->net && c.l > 0 && loom_net_layer_at(self->net, c)) c.l = 0;
  *out = c;
  if (occupied) *occupied = self->net && loom_net_layer_at(self->net, c) != NULL;
  return TRUE;
}

gboolean loom_grid_view_pick(LoomGridView *self, double x, double y, loom_coord *out) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), FALSE);
  loom_coord c;
  if (!loom_grid_view_pick_full(self, x, y, &c, NULL)) return FALSE;
  if (out) *out = c;
  return TRUE;
}

gboolean loom_grid_view_project_point(LoomGridView *self, const float p[3], double *x, double *y) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), FALSE);
  float w = (float)gtk_widget_get_width(GTK_WIDGET(self)), h = (float)gtk_widget_get_height(GTK_WIDGET(self));
  if (w <= 0.f || h <= 0.f) return FALSE;
  loom_grid_view_sync_camera(self);
  return loom_grid_camera_project(&self->cam, w, h, p, x, y);
}

gboolean loom_grid_view_project(LoomGridView *self, const loom_coord *c, double *x, double *y) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), FALSE);
  g_return_val_if_fail(c != NULL, FALSE);
  if (c->z < 0 || c->y < 0 || c->x < 0 || c->l < 0 || c->z >= (int)self->depth || c->y >= (int)self->rows ||
      c->x >= (int)self->cols || c->l >= loom_grid_view_layers_per_cell(self))
    return FALSE;
  float p[3];
  loom_grid_slot_centre(loom_grid_view_layers_per_cell(self), *c, p);
  return loom_grid_view_project_point(self, p, x, y);
}

gboolean loom_grid_view_link_point(LoomGridView *self, int index, double t, float p[3]) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), FALSE);
  loom_grid_view_ensure_scene(self);
  if (index < 0 || index >= self->scene.n_arcs) return FALSE;
  loom_grid_arc_point(self->scene.arcs[index].src, self->scene.arcs[index].dst, (float)t, p);
  return TRUE;
}

/* ---- orbit, pan, zoom, link tool ---- */

static void update_rubber(LoomGridView *self, double x, double y) {
  LoomGridArc *a = &self->rubber_arc;
  int lpc = loom_grid_view_layers_per_cell(self);
  loom_grid_slot_centre(lpc, self->link_src, a->src);
  loom_coord c;
  gboolean occupied = FALSE;
  gboolean hit = loom_grid_view_pick_full(self, x, y, &c, &occupied) && occupied &&
                 memcmp(&c, &self->link_src, sizeof c) != 0;
  loom_grid_view_set_hover(self, hit ? &c : NULL);
  if (hit) {
    loom_grid_slot_centre(lpc, c, a->dst);
  } else {
    /* Follow the pointer on the horizontal plane through the source. */
    float w = (float)gtk_widget_get_width(GTK_WIDGET(self)), h = (float)gtk_widget_get_height(GTK_WIDGET(self));
    float o[3], d[3];
    loom_grid_view_sync_camera(self);
    loom_grid_camera_ray(&self->cam, w, h, x, y, o, d);
    float t = fabsf(d[1]) > 1e-4f ? (a->src[1] - o[1]) / d[1] : -1.f;
    if (t <= 0.f) {
      self->rubber = FALSE;
      return;
    }
    for (int i = 0; i < 3; i++) a->dst[i] = o[i] + t * d[i];
  }
  a->rgba[0] = (guint8)(LOOM_GRID_VIEW_HIGHLIGHT_R * 255.f);
  a->rgba[1] = (guint8)(LOOM_GRID_VIEW_HIGHLIGHT_G * 255.f);
  a->rgba[2] = (guint8)(LOOM_GRID_VIEW_HIGHLIGHT_B * 255.f);
  a->rgba[3] = 255;
  a->src_z = a->dst_z = (float)self->link_src.z;
  a->feedback = 0.f;
  self->rubber = TRUE;
}

static void drag_begin(GtkGestureDrag *gesture, double x, double y, LoomGridView *self) {
  guint button = gtk_gesture_single_get_current_button(GTK_GESTURE_SINGLE(gesture));
  GdkModifierType state = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(gesture));
  self->drag_x = x;
  self->drag_y = y;
  self->drag_last_dx = self->drag_last_dy = 0.0;
  self->drag_yaw = self->cam.yaw;
  self->drag_pitch = self->cam.pitch;
  loom_coord c;
  gboolean occupied = FALSE;
  if (button == GDK_BUTTON_MIDDLE || (button == GDK_BUTTON_PRIMARY && (state & GDK_SHIFT_MASK)))
    self->drag = DRAG_PAN;
  else if (button == GDK_BUTTON_PRIMARY && self->link_tool && loom_grid_view_pick_full(self, x, y, &c, &occupied) &&
           occupied) {
    self->drag = DRAG_LINK;
    self->link_src = c;
  } else if (button == GDK_BUTTON_PRIMARY) {
    self->drag = DRAG_ORBIT;
  } else {
    /* The secondary button is left to whoever shows a context menu. */
    self->drag = DRAG_NONE;
    gtk_gesture_set_state(GTK_GESTURE(gesture), GTK_EVENT_SEQUENCE_DENIED);
  }
}

static void drag_update(GtkGestureDrag *gesture, double dx, double dy, LoomGridView *self) {
  int w = MAX(gtk_widget_get_width(GTK_WIDGET(self)), 1), h = MAX(gtk_widget_get_height(GTK_WIDGET(self)), 1);
  if (self->drag == DRAG_ORBIT || self->drag == DRAG_PAN) loom_grid_view_camera_moved(self);
  switch (self->drag) {
  case DRAG_ORBIT:
    /* A drag across the whole widget turns the grid about one full turn. */
    self->cam.yaw = self->drag_yaw - (float)(dx / w) * 2.f * (float)G_PI;
    self->cam.pitch = CLAMP(self->drag_pitch + (float)(dy / w) * 2.f * (float)G_PI, LOOM_GRID_CAMERA_MIN_PITCH,
                            LOOM_GRID_CAMERA_MAX_PITCH);
    break;
  case DRAG_PAN:
    loom_grid_view_sync_camera(self);
    loom_grid_camera_pan(&self->cam, (float)w, (float)h, dx - self->drag_last_dx, dy - self->drag_last_dy);
    break;
  case DRAG_LINK: update_rubber(self, self->drag_x + dx, self->drag_y + dy); break;
  case DRAG_NONE: return;
  }
  self->drag_last_dx = dx;
  self->drag_last_dy = dy;
  gtk_gl_area_queue_render(GTK_GL_AREA(self));
}

static void drag_end(GtkGestureDrag *gesture, double dx, double dy, LoomGridView *self) {
  LoomGridDrag mode = self->drag;
  self->drag = DRAG_NONE;
  if (mode != DRAG_LINK) return;
  self->rubber = FALSE;
  gtk_gl_area_queue_render(GTK_GL_AREA(self));
  loom_coord dst, src = self->link_src;
  gboolean occupied = FALSE;
  if (loom_grid_view_pick_full(self, self->drag_x + dx, self->drag_y + dy, &dst, &occupied) && occupied &&
      memcmp(&dst, &src, sizeof dst) != 0)
    g_signal_emit(self, loom_grid_view_signals[SIGNAL_LINK_DRAWN], 0, src.z, src.y, src.x, src.l, dst.z, dst.y, dst.x,
                  dst.l);
}

static gboolean on_scroll(GtkEventControllerScroll *controller, double dx, double dy, LoomGridView *self) {
  loom_grid_view_camera_moved(self);
  self->cam.zoom = CLAMP(self->cam.zoom * powf(1.1f, (float)dy), LOOM_GRID_CAMERA_MIN_ZOOM, LOOM_GRID_CAMERA_MAX_ZOOM);
  gtk_gl_area_queue_render(GTK_GL_AREA(self));
  return TRUE;
}

static void zoom_begin(GtkGesture *gesture, GdkEventSequence *sequence, LoomGridView *self) {
  loom_grid_view_camera_moved(self);
  self->zoom_start = self->cam.zoom;
}

static void zoom_changed(GtkGestureZoom *gesture, double scale, LoomGridView *self) {
  if (scale <= 0.0) return;
  self->cam.zoom =
    CLAMP(self->zoom_start / (float)scale, LOOM_GRID_CAMERA_MIN_ZOOM, LOOM_GRID_CAMERA_MAX_ZOOM);
  gtk_gl_area_queue_render(GTK_GL_AREA(self));
}

/* ---- clicks and hover ---- */

/* A double click activates the slot under the pointer, empty ones too: the
 * window places the last used layer type into an empty slot. */
static void click_pressed(GtkGestureClick *gesture, int n_press, double x, double y, LoomGridView *self) {
  gtk_widget_grab_focus(GTK_WIDGET(self));
  loom_coord c;
  if (n_press == 2 && loom_grid_view_pick(self, x, y, &c))
    g_signal_emit(self, loom_grid_view_signals[SIGNAL_SLOT_ACTIVATED], 0, c.z, c.y, c.x, c.l);
}

/* Released without dragging. A drag stops the click gesture, but GTK still
 * emits "released" afterwards: an orbit or link drag must not move the
 * selection to wherever it ended. (drag_x, drag_y) is where the press was. */
static void click_released(GtkGestureClick *gesture, int n_press, double x, double y, LoomGridView *self) {
  if (n_press != 1) return;
  int threshold = 8;
  g_object_get(gtk_widget_get_settings(GTK_WIDGET(self)), "gtk-dnd-drag-threshold", &threshold, NULL);
  if (fabs(x - self->drag_x) > threshold || fabs(y - self->drag_y) > threshold) return;
  loom_coord c;
  loom_grid_view_set_selection(self, loom_grid_view_pick(self, x, y, &c) ? &c : NULL);
}

static void motion(GtkEventControllerMotion *controller, double x, double y, LoomGridView *self) {
  if (self->drag != DRAG_NONE) return;
  loom_coord c;
  gboolean occupied = FALSE;
  gboolean hit = loom_grid_view_pick_full(self, x, y, &c, &occupied) && occupied;
  loom_grid_view_set_hover(self, hit ? &c : NULL);
}

static void motion_leave(GtkEventControllerMotion *controller, LoomGridView *self) {
  loom_grid_view_set_hover(self, NULL);
}

/* ---- palette drops ---- */

static const char *dropped_type(const GValue *value) {
  const char *text = G_VALUE_HOLDS_STRING(value) ? g_value_get_string(value) : NULL;
  if (!text) return NULL;
  /* The palette sends the bare type name; a prefixed form is accepted too. */
  if (g_str_has_prefix(text, LAYER_TYPE_PREFIX)) text += strlen(LAYER_TYPE_PREFIX);
  return loom_layer_type_find(text) ? text : NULL;
}

static GdkDragAction drop_motion(GtkDropTarget *target, double x, double y, LoomGridView *self) {
  loom_coord c;
  gboolean occupied = FALSE;
  if (!loom_grid_view_pick_full(self, x, y, &c, &occupied)) {
    loom_grid_view_set_hover(self, NULL);
    return 0;
  }
  loom_grid_view_set_hover(self, occupied ? &c : NULL);
  return GDK_ACTION_COPY;
}

static void drop_leave(GtkDropTarget *target, LoomGridView *self) {
  loom_grid_view_set_hover(self, NULL);
}

static gboolean drop(GtkDropTarget *target, const GValue *value, double x, double y, LoomGridView *self) {
  loom_grid_view_set_hover(self, NULL);
  const char *type = dropped_type(value);
  loom_coord c;
  if (!type || !loom_grid_view_pick(self, x, y, &c)) return FALSE;
  g_signal_emit(self, loom_grid_view_signals[SIGNAL_LAYER_DROPPED], 0, type, c.z, c.y, c.x, c.l);
  return TRUE;
}

/* ---- tooltips ---- */

char *loom_grid_view_describe_slot(LoomGridView *self, const loom_coord *c) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), NULL);
  char where[64];
  loom_coord_format(*c, where, sizeof where);
  if (!self->net || !loom_net_contains(self->net, *c)) return NULL;
  const loom_layer *layer = loom_net_layer_at(self->net, *c);
  if (!layer) return g_strdup_printf(_("Slot %s: empty (passes its input through)"), where);

  const loom_layer_type *t = loom_layer_get_type(layer);
  loom_dtype d = loom_layer_get_dtype(layer);
  const loom_dtype_traits *tr = loom_dtype_traits_get(d);
  loom_shape in = loom_layer_in_shape(layer), out = loom_layer_out_shape(layer);
  char in_text[96], out_text[96];
  loom_shape_format(&in, in_text, sizeof in_text);
  loom_shape_format(&out, out_text, sizeof out_text);
  int64_t params = loom_layer_param_count(layer);
  g_autofree char *count = g_strdup_printf("%" G_GINT64_FORMAT, params);

  GString *text = g_string_new(NULL);
  g_string_append_printf(text, _("Slot %s: %s (%s)"), where, loom_layer_type_label(t), loom_layer_type_group(t));
  g_string_append_c(text, '\n');
  g_string_append_printf(text, _("Shape: in %s → out %s"), in_text, out_text);
  g_string_append_c(text, '\n');
  int bits = tr ? tr->bits : 0;
  g_string_append_printf(text,
                         g_dngettext(GETTEXT_PACKAGE, "Dtype: %s (%d bit per weight)", "Dtype: %s (%d bits per weight)",
                                     (gulong)bits),
                         loom_dtype_name(d), bits);
  g_string_append_c(text, '\n');
  g_string_append_printf(
    text, g_dngettext(GETTEXT_PACKAGE, "%s parameter", "%s parameters", (gulong)MIN(params, G_MAXLONG)), count);
  if (!loom_net_is_enabled(self->net, *c)) {
    g_string_append_c(text, '\n');
    g_string_append(text, _("Disabled: passes its input through"));
  }
  if (self->color_mode == LOOM_GRID_VIEW_COLOR_METRIC) {
    const char *name = self->metric_label && *self->metric_label ? self->metric_label : _("Metric");
    gsize flat = (gsize)loom_net_flat_index(self->net, *c);
    float v = flat < self->n_slot_values ? self->slot_values[flat] : NAN;
    g_string_append_c(text, '\n');
    if (isnan(v))
      g_string_append_printf(text, _("%s: no value"), name);
    else
      g_string_append_printf(text, "%s: %.4g", name, v);
  }
  for (gsize i = 0; i < self->n_alerts; i++)
    if (memcmp(&self->alerts[i], c, sizeof *c) == 0) {
      g_string_append_c(text, '\n');
      g_string_append(text, _("Training stopped here"));
      break;
    }
  for (int i = 0; i < self->n_diags; i++)
    if (memcmp(&self->diags[i].at, c, sizeof *c) == 0) {
      g_string_append_c(text, '\n');
      g_string_append_printf(text, _("Problem: %s"), self->diags[i].message);
    }
  return g_string_free(text, FALSE);
}

gboolean loom_grid_view_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip) {
  LoomGridView *self = LOOM_GRID_VIEW(widget);
  loom_coord c;
  if (keyboard) {
    if (!self->has_selection) return FALSE;
    c = self->selection;
  } else if (!loom_grid_view_pick(self, x, y, &c)) {
    return FALSE;
  }
  g_autofree char *text = loom_grid_view_describe_slot(self, &c);
  if (!text) return FALSE;
  gtk_tooltip_set_text(tooltip, text);
  return TRUE;
}

void loom_grid_view_install_input(LoomGridView *self) {
  GtkWidget *widget = GTK_WIDGET(self);

  GtkGesture *drag = gtk_gesture_drag_new();
  gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(drag), 0);
  g_signal_connect(drag, "drag-begin", G_CALLBACK(drag_begin), self);
  g_signal_connect(drag, "drag-update", G_CALLBACK(drag_update), self);
  g_signal_connect(drag, "drag-end", G_CALLBACK(drag_end), self);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(drag));

  GtkGesture *click = gtk_gesture_click_new();
  gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(click), GDK_BUTTON_PRIMARY);
  g_signal_connect(click, "pressed", G_CALLBACK(click_pressed), self);
  g_signal_connect(click, "released", G_CALLBACK(click_released), self);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(click));

  GtkGesture *zoom = gtk_gesture_zoom_new();
  g_signal_connect(zoom, "begin", G_CALLBACK(zoom_begin), self);
  g_signal_connect(zoom, "scale-changed", G_CALLBACK(zoom_changed), self);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(zoom));

  GtkEventController *wheel = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  g_signal_connect(wheel, "scroll", G_CALLBACK(on_scroll), self);
  gtk_widget_add_controller(widget, wheel);

  GtkEventController *hover = gtk_event_controller_motion_new();
  g_signal_connect(hover, "motion", G_CALLBACK(motion), self);
  g_signal_connect(hover, "leave", G_CALLBACK(motion_leave), self);
  gtk_widget_add_controller(widget, hover);

  GtkDropTarget *target = gtk_drop_target_new(G_TYPE_STRING, GDK_ACTION_COPY);
  g_signal_connect(target, "motion", G_CALLBACK(drop_motion), self);
  g_signal_connect(target, "leave", G_CALLBACK(drop_leave), self);
  g_signal_connect(target, "drop", G_CALLBACK(drop), self);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(target));

  gtk_widget_set_has_tooltip(widget, TRUE);
}
