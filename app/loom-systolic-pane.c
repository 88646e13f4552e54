/*
 * LoomSystolicPane: a copy of the network and its loom_systolic runner are
 * handed to a GTask thread for each tick and come back with the trace; only
 * one tick is ever in flight, so the runner is never shared. Playing chains
 * ticks through a timeout at the chosen speed. Each tick's trace colours the
 * grid and adds a column to the raster below the controls.
 */
#include "loom-systolic-pane.h"

#include <glib/gi18n.h>
#include <math.h>

#include "loom-tick-raster.h"

typedef struct {
  loom_net *net;
  loom_systolic *mesh;
  gint64 ticks;
  loom_slot_trace *trace;
  gint64 n_trace;
  char *error;
} Mesh;

struct _LoomSystolicPane {
  GtkWidget parent_instance;

  const loom_net *source;   /* the document's (borrowed) */
  float *input;
  gsize n_input;
  LoomGridView *grid_view;  /* weak */
  Mesh *mesh;               /* NULL while a tick runs on the worker (it holds it) */
  gboolean running_tick, tick_queued, stale;
  gboolean playing;
  guint play_source;
  GCancellable *cancellable;
  gint64 ticks;
  loom_slot_trace *trace;
  gsize n_trace;
  char *error;

  GtkWidget *box;
  LoomTickRaster *raster;
  loom_coord *raster_rows; /* the slots of the raster's rows */
  gsize n_raster_rows;
  GtkLabel *tick_label, *status_label;
  GtkToggleButton *play_button;
  GtkSpinButton *speed_spin;
};

G_DEFINE_FINAL_TYPE(LoomSystolicPane, loom_systolic_pane, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_PLAYING, PROP_TICKS, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void mesh_free(Mesh *m) {
  if (!m) return;
  if (m->mesh) loom_systolic_free(m->mesh);
  if (m->net) loom_net_free(m->net);
  g_free(m->trace);
  g_free(m->error);
  g_free(m);
}

/* Worker thread: builds the mesh when needed, runs one tick, traces it. */
static void tick_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable) {
  Mesh *m = data;
  loom_error err = {0};
  g_clear_pointer(&m->error, g_free);
  if (!m->mesh) {
    m->mesh = loom_systolic_new(m->net, 1, &err);
    if (!m->mesh) {
      m->error = g_strdup(err.message);
      return;
    }
    const float *x = g_object_get_data(G_OBJECT(task), "input");
    gsize n = GPOINTER_TO_SIZE(g_object_get_data(G_OBJECT(task), "n-input"));
    loom_shape in = loom_net_input_shape(m->net);
    gsize need = (gsize)loom_shape_numel(&in);
    g_autofree float *ones = NULL;
    if (!x || n != need) {
      ones = g_new(float, MAX(need, 1));
      for (gsize i = 0; i < need; i++) ones[i] = 1.0f;
      x = ones;
    }
    if (loom_systolic_set_input(m->mesh, x, &err)) {
      m->error = g_strdup(err.message);
      return;
    }
  }
  loom_ctx ctx = {.pool = NULL, .training = false};
  if (loom_systolic_tick(m->mesh, &ctx, &err)) {
    m->error = g_strdup(err.message);
    return;
  }
  m->ticks = loom_systolic_ticks(m->mesh);
  m->n_trace = loom_systolic_n_slots(m->mesh);
  m->trace = g_renew(loom_slot_trace, m->trace, (gsize)MAX(m->n_trace, 1));
  loom_systolic_trace(m->mesh, m->trace);
}

static void paint(LoomSystolicPane *self) {
  if (!self->grid_view || !self->source || !self->trace) return;
  int64_t n = loom_net_n_slots(self->source);
  g_autofree float *values = g_new(float, (gsize)MAX(n, 1));
  for (int64_t i = 0; i < n; i++) values[i] = NAN;
  for (gsize k = 0; k < self->n_trace; k++)
    if (loom_net_contains(self->source, self->trace[k].at))
      values[loom_net_flat_index(self->source, self->trace[k].at)] = (float)self->trace[k].norm;
  int n_links = loom_net_n_links(self->source);
  g_autofree float *flows = g_new0(float, MAX(n_links, 1));
  for (int i = 0; i < n_links; i++)
    for (gsize k = 0; k < self->n_trace; k++) {
      if (loom_coord_equal(self->trace[k].at, loom_net_link(self->source, i)->src))
        flows[i] = (float)self->trace[k].norm;
    }
  /* Translators: the grid's heatmap in systolic mode; %lld is the tick. */
  g_autofree char *label = g_strdup_printf(_("Output norm at tick %lld"), (long long)self->ticks);
  loom_grid_view_set_color_mode(self->grid_view, LOOM_GRID_VIEW_COLOR_METRIC);
  loom_grid_view_set_slot_values(self->grid_view, values, (gsize)n, label);
  if (n_links > 0) loom_grid_view_set_link_values(self->grid_view, flows, (gsize)n_links);
}

/* The raster's rows are the traced slots (the first LOOM_TICK_RASTER_MAX_ROWS
 * of them), named by coordinates and layer type; a new set of slots starts
 * the raster over. */
static void push_raster(LoomSystolicPane *self) {
  const gsize n = MIN(self->n_trace, (gsize)LOOM_TICK_RASTER_MAX_ROWS);
  gboolean same = n == self->n_raster_rows;
  for (gsize k = 0; same && k < n; k++) same = loom_coord_equal(self->raster_rows[k], self->trace[k].at);
  if (!same) {
    g_free(self->raster_rows);
    self->raster_rows = g_new(loom_coord, MAX(n, 1));
    self->n_raster_rows = n;
    GStrv labels = g_new0(char *, n + 1);
    for (gsize k = 0; k < n; k++) {
      loom_coord c = self->trace[k].at;
      self->raster_rows[k] = c;
      char coord[64];
      loom_coord_format(c, coord, sizeof coord);
      const loom_layer *layer = self->source ? loom_net_layer_at(self->source, c) : NULL;
      labels[k] = layer ? g_strdup_printf("%s %s", coord, loom_layer_type_name(loom_layer_get_type(layer)))
                        : g_strdup(coord);
    }
    loom_tick_raster_set_rows(self->raster, (const char *const *)labels, (int)n);
    g_strfreev(labels);
  }
  g_autofree float *norms = g_new(float, MAX(n, 1));
  for (gsize k = 0; k < n; k++) norms[k] = (float)self->trace[k].norm;
  loom_tick_raster_push(self->raster, self->ticks, norms, (int)n);
}

static void update_labels(LoomSystolicPane *self) {
  /* Translators: the systolic pane's tick counter. */
  g_autofree char *text = g_strdup_printf(_("Tick %lld"), (long long)self->ticks);
  gtk_label_set_text(self->tick_label, text);
  gtk_label_set_text(self->status_label, self->error ? self->error : "");
  gtk_widget_set_visible(GTK_WIDGET(self->status_label), self->error != NULL);
}

static void run_tick(LoomSystolicPane *self);

static void tick_done(GObject *source, GAsyncResult *result, gpointer data) {
  GTask *task = G_TASK(result);
  Mesh *m = g_task_get_task_data(task);
  /* The task hands the mesh back here; this callback always runs. */
  if (g_cancellable_is_cancelled(g_task_get_cancellable(task))) { /* the pane is gone */
    mesh_free(m);
    return;
  }
  LoomSystolicPane *self = LOOM_SYSTOLIC_PANE(source);
  self->running_tick = FALSE;
  if (self->stale) {
    mesh_free(m);
    self->stale = FALSE;
  } else {
    self->mesh = m;
    g_free(self->error);
    self->error = g_strdup(m->error);
    if (!m->error) {
      self->ticks = m->ticks;
      g_free(self->trace);
      self->trace = g_memdup2(m->trace, sizeof *m->trace * (gsize)MAX(m->n_trace, 1));
      self->n_trace = (gsize)m->n_trace;
      paint(self);
      push_raster(self);
      g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_TICKS]);
    } else {
      loom_systolic_pane_set_playing(self, FALSE);
    }
  }
  update_labels(self);
  if (self->tick_queued) {
    self->tick_queued = FALSE;
    run_tick(self);
  }
}

static void run_tick(LoomSystolicPane *self) {
  if (self->running_tick) {
    self->tick_queued = TRUE;
    return;
  }
  if (!self->mesh) {
    if (!self->source) return;
    self->mesh = g_new0(Mesh, 1);
    self->mesh->net = loom_net_clone(self->source, NULL);
    if (!self->mesh->net) {
      g_clear_pointer(&self->mesh, mesh_free);
      return;
    }
    loom_diag *diags = NULL;
    loom_net_infer_shapes(self->mesh->net, loom_net_seed(self->mesh->net), &diags);
    free(diags);
  }
  GTask *task = g_task_new(self, self->cancellable, tick_done, NULL);
  g_task_set_task_data(task, g_steal_pointer(&self->mesh), NULL); /* tick_done takes it back */
  if (self->input) {
    g_object_set_data_full(G_OBJECT(task), "input", g_memdup2(self->input, self->n_input * sizeof(float)), g_free);
    g_object_set_data(G_OBJECT(task), "n-input", GSIZE_TO_POINTER(self->n_input));
  }
  self->running_tick = TRUE;
  g_task_run_in_thread(task, tick_thread);
  g_object_unref(task);
}

/* The mesh starts over: a new network, a new input, Reset. */
static void start_over(LoomSystolicPane *self) {
  if (self->running_tick) self->stale = TRUE;
  g_clear_pointer(&self->mesh, mesh_free);
  self->tick_queued = FALSE;
  self->ticks = 0;
  g_clear_pointer(&self->trace, g_free);
  self->n_trace = 0;
  g_clear_pointer(&self->error, g_free);
  /* The rows are named anew at the next tick: a layer may have changed type. */
  self->n_raster_rows = 0;
  loom_tick_raster_clear(self->raster);
  update_labels(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_TICKS]);
}

GtkWidget *loom_systolic_pane_new(void) { return g_object_new(LOOM_TYPE_SYSTOLIC_PANE, NULL); }

void loom_systolic_pane_set_net(LoomSystolicPane *self, const loom_net *net) {
  g_return_if_fail(LOOM_IS_SYSTOLIC_PANE(self));
  self->source = net;
  start_over(self);
}

void loom_systolic_pane_set_input(LoomSystolicPane *self, const float *x, gsize n) {
  g_return_if_fail(LOOM_IS_SYSTOLIC_PANE(self));
  g_free(self->input);
  self->input = x && n ? g_memdup2(x, n * sizeof *x) : NULL;
  self->n_input = x ? n : 0;
  start_over(self);
}

void loom_systolic_pane_set_grid_view(LoomSystolicPane *self, LoomGridView *view) {
  g_return_if_fail(LOOM_IS_SYSTOLIC_PANE(self));
  g_set_weak_pointer(&self->grid_view, view);
}

void loom_systolic_pane_tick(LoomSystolicPane *self) {
  g_return_if_fail(LOOM_IS_SYSTOLIC_PANE(self));
  run_tick(self);
}

static gboolean play_step(gpointer data) {
  LoomSystolicPane *self = data;
  if (!self->running_tick) run_tick(self);
  return G_SOURCE_CONTINUE;
}

static void restart_timer(LoomSystolicPane *self) {
  g_clear_handle_id(&self->play_source, g_source_remove);
  if (!self->playing) return;
  double speed = gtk_spin_button_get_value(self->speed_spin);
  self->play_source = g_timeout_add((guint)MAX(1, lround(1000.0 / MAX(speed, 0.1))), play_step, self);
}

void loom_systolic_pane_set_playing(LoomSystolicPane *self, gboolean playing) {
  g_return_if_fail(LOOM_IS_SYSTOLIC_PANE(self));
  if (self->playing == !!playing) return;
  self->playing = !!playing;
  restart_timer(self);
  gtk_toggle_button_set_active(self->play_button, self->playing);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_PLAYING]);
}

gboolean loom_systolic_pane_get_playing(LoomSystolicPane *self) { return self->playing; }

void loom_systolic_pane_reset(LoomSystolicPane *self) {
  g_return_if_fail(LOOM_IS_SYSTOLIC_PANE(self));
  start_over(self);
  if (self->grid_view) loom_grid_view_set_slot_values(self->grid_view, NULL, 0, NULL);
}

gint64 loom_systolic_pane_get_ticks(LoomSystolicPane *self) { return self->ticks; }

const loom_slot_trace *loom_systolic_pane_get_trace(LoomSystolicPane *self, gsize *n) {
  if (n) *n = self->n_trace;
  return self->trace;
}

const char *loom_systolic_pane_get_error(LoomSystolicPane *self) { return self->error; }

static void on_play_toggled(LoomSystolicPane *self) {
  loom_systolic_pane_set_playing(self, gtk_toggle_button_get_active(self->play_button));
}

static GtkWidget *button(const char *icon, const char *action, const char *tooltip) {
  GtkWidget *b = gtk_button_new_from_icon_name(icon);
  gtk_actionable_set_action_name(GTK_ACTIONABLE(b), action);
  gtk_widget_set_tooltip_text(b, tooltip);
  gtk_accessible_update_property(GTK_ACCESSIBLE(b), GTK_ACCESSIBLE_PROPERTY_LABEL, tooltip, -1);
  return b;
}

static void loom_systolic_pane_dispose(GObject *object) {
  LoomSystolicPane *self = LOOM_SYSTOLIC_PANE(object);
  g_cancellable_cancel(self->cancellable);
  g_clear_handle_id(&self->play_source, g_source_remove);
  g_clear_weak_pointer(&self->grid_view);
  g_clear_pointer(&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS(loom_systolic_pane_parent_class)->dispose(object);
}

static void loom_systolic_pane_finalize(GObject *object) {
  LoomSystolicPane *self = LOOM_SYSTOLIC_PANE(object);
  g_clear_pointer(&self->mesh, mesh_free);
  g_clear_object(&self->cancellable);
  g_free(self->input);
  g_free(self->trace);
  g_free(self->raster_rows);
  g_free(self->error);
  G_OBJECT_CLASS(loom_systolic_pane_parent_class)->finalize(object);
}

static void loom_systolic_pane_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomSystolicPane *self = LOOM_SYSTOLIC_PANE(object);
  switch (prop_id) {
  case PROP_PLAYING: g_value_set_boolean(value, self->playing); break;
  case PROP_TICKS: g_value_set_int64(value, self->ticks); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_systolic_pane_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  if (prop_id == PROP_PLAYING) loom_systolic_pane_set_playing(LOOM_SYSTOLIC_PANE(object), g_value_get_boolean(value));
  else G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

static void loom_systolic_pane_class_init(LoomSystolicPaneClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = loom_systolic_pane_dispose;
  object_class->finalize = loom_systolic_pane_finalize;
  object_class->get_property = loom_systolic_pane_get_property;
  object_class->set_property = loom_systolic_pane_set_property;
  properties[PROP_PLAYING] = g_param_spec_boolean("playing", NULL, NULL, FALSE,
                                                  G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TICKS] =
      g_param_spec_int64("ticks", NULL, NULL, 0, G_MAXINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
  gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_accessible_role(GTK_WIDGET_CLASS(klass), GTK_ACCESSIBLE_ROLE_GROUP);
}

static void loom_systolic_pane_init(LoomSystolicPane *self) {
  self->cancellable = g_cancellable_new();
  self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8);
  g_object_set(self->box, "margin-start", 12, "margin-end", 12, "margin-top", 8, "margin-bottom", 8, NULL);
  gtk_widget_set_parent(self->box, GTK_WIDGET(self));
  GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_box_append(GTK_BOX(self->box), bar);
  gtk_box_append(GTK_BOX(bar), button("media-skip-forward-symbolic", "win.systolic-tick", _("Tick Once (F7)")));
  self->play_button = GTK_TOGGLE_BUTTON(gtk_toggle_button_new());
  gtk_button_set_icon_name(GTK_BUTTON(self->play_button), "media-playback-start-symbolic");
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->play_button), _("Play the Ticks"));
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->play_button), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Play the Ticks"),
                                 -1);
  g_signal_connect_swapped(self->play_button, "toggled", G_CALLBACK(on_play_toggled), self);
  gtk_box_append(GTK_BOX(bar), GTK_WIDGET(self->play_button));
  gtk_box_append(GTK_BOX(bar), button("view-refresh-symbolic", "win.systolic-reset", _("Start the Mesh Over")));
  self->speed_spin = GTK_SPIN_BUTTON(gtk_spin_button_new_with_range(0.5, 60, 0.5));
  gtk_spin_button_set_value(self->speed_spin, 4);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->speed_spin), _("Ticks per Second While Playing"));
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->speed_spin), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                 _("Ticks per Second"), -1);
  g_signal_connect_swapped(self->speed_spin, "value-changed", G_CALLBACK(restart_timer), self);
  gtk_box_append(GTK_BOX(bar), GTK_WIDGET(self->speed_spin));
  gtk_box_append(GTK_BOX(bar), gtk_label_new(_("ticks/s")));
  self->tick_label = GTK_LABEL(gtk_label_new(NULL));
  gtk_widget_add_css_class(GTK_WIDGET(self->tick_label), "heading");
  gtk_widget_set_margin_start(GTK_WIDGET(self->tick_label), 12);
  gtk_widget_set_hexpand(GTK_WIDGET(self->tick_label), TRUE);
  gtk_label_set_xalign(self->tick_label, 0);
  gtk_box_append(GTK_BOX(bar), GTK_WIDGET(self->tick_label));
  /* The network's own mode (an undoable edit): feedback links need it, and
   * training then runs backprop through the ticks. */
  GtkWidget *mode = gtk_check_button_new_with_mnemonic(_("_Systolic Execution"));
  gtk_actionable_set_action_name(GTK_ACTIONABLE(mode), "win.systolic-execution");
  gtk_widget_set_tooltip_text(mode, _("Run and Train the Network Tick by Tick (Feedback Links Allowed)"));
  gtk_box_append(GTK_BOX(bar), mode);
  GtkWidget *help = gtk_label_new(_("Each tick every slot reads the outputs of the tick before; the grid shows "
                                    "each slot's output norm, the picture below its last ticks."));
  gtk_widget_set_tooltip_text(help, _("A signal needs N ticks to cross N layers, and links that point backwards "
                                      "feed the previous tick in. The input is the first training sample (ones "
                                      "when there is none)."));
  gtk_label_set_ellipsize(GTK_LABEL(help), PANGO_ELLIPSIZE_END);
  gtk_label_set_xalign(GTK_LABEL(help), 0);
  gtk_widget_add_css_class(help, "dim-label");
  gtk_box_append(GTK_BOX(self->box), help);
  self->status_label = GTK_LABEL(gtk_label_new(NULL));
  gtk_label_set_xalign(self->status_label, 0);
  gtk_label_set_ellipsize(self->status_label, PANGO_ELLIPSIZE_END);
  gtk_widget_add_css_class(GTK_WIDGET(self->status_label), "error");
  gtk_box_append(GTK_BOX(self->box), GTK_WIDGET(self->status_label));
  /* Each slot's output norm over the last ticks: the wave the grid shows
   * one tick at a time, as a picture of its path. */
  self->raster = LOOM_TICK_RASTER(loom_tick_raster_new());
  gtk_widget_set_vexpand(GTK_WIDGET(self->raster), TRUE);
  gtk_box_append(GTK_BOX(self->box), GTK_WIDGET(self->raster));
  update_labels(self);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Systolic mesh"), -1);
}
