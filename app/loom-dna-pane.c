/*
 * LoomDnaPane: the sources (current network, timeline snapshots, files),
 * the comparison, the matrix, the shifts and the live heatmap.
 */
#include "loom-dna-pane.h"

#include <glib/gi18n.h>
#include <math.h>

#include "loom-dna-matrix.h"

/* The timeline keeps at most this many snapshots; past it every other
 * older one goes, so it always spans the whole run. */
#define TIMELINE_MAX 64

typedef struct {
  LoomDnaSourceKind kind;
  char *label;
  LoomSharedDna *dna; /* SNAPSHOT, FILE; NULL for CURRENT (made at each comparison) */
} Source;

struct _LoomDnaPane {
  GtkWidget parent_instance;

  const loom_net *net;
  LoomGridView *grid_view; /* weak */
  GPtrArray *sources;      /* Source: [0] CURRENT, then the timeline's snapshots, then files */
  Source *a, *b;           /* the chosen ones (borrowed from sources) */
  loom_dna_result *result;
  gboolean live;
  gboolean updating;       /* the drop-downs are being rebuilt */
  gboolean stale;          /* sources changed while hidden: rebuild when mapped */

  GtkDropDown *a_dropdown, *b_dropdown;
  GtkSpinButton *threshold_spin;
  GtkScale *timeline_scale;
  GtkCheckButton *live_check;
  GtkLabel *summary_label;
  LoomDnaMatrix *matrix;
  GtkListBox *shift_list;
};

G_DEFINE_FINAL_TYPE(LoomDnaPane, loom_dna_pane, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_LIVE_HEATMAP, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void source_free(gpointer data) {
  Source *s = data;
  g_free(s->label);
  loom_shared_dna_unref(s->dna);
  g_free(s);
}

static Source *source_new(LoomDnaSourceKind kind, char *label, LoomSharedDna *dna) {
  Source *s = g_new0(Source, 1);
  s->kind = kind;
  s->label = label;
  s->dna = dna;
  return s;
}

static guint index_of(LoomDnaPane *self, Source *s) {
  guint i;
  return s && g_ptr_array_find(self->sources, s, &i) ? i : 0;
}

/* Training adds a snapshot many times a minute; rebuilding two drop-down
 * models each time costs the main thread milliseconds for a pane that is
 * usually hidden, so a hidden pane only notes it and rebuilds when shown. */
static void rebuild_dropdowns(LoomDnaPane *self) {
  if (!gtk_widget_get_mapped(GTK_WIDGET(self))) {
    self->stale = TRUE;
    return;
  }
  self->stale = FALSE;
  self->updating = TRUE;
  g_autoptr(GtkStringList) model = gtk_string_list_new(NULL);
  for (guint i = 0; i < self->sources->len; i++)
    gtk_string_list_append(model, ((Source *)g_ptr_array_index(self->sources, i))->label);
  gtk_drop_down_set_model(self->a_dropdown, G_LIST_MODEL(model));
  gtk_drop_down_set_model(self->b_dropdown, G_LIST_MODEL(model));
  gtk_drop_down_set_selected(self->a_dropdown, index_of(self, self->a));
  gtk_drop_down_set_selected(self->b_dropdown, index_of(self, self->b));
  guint snaps = loom_dna_pane_get_n_snapshots(self);
  GtkAdjustment *adj = gtk_range_get_adjustment(GTK_RANGE(self->timeline_scale));
  gtk_adjustment_set_upper(adj, snaps > 0 ? snaps - 1 : 0);
  gtk_widget_set_sensitive(GTK_WIDGET(self->timeline_scale), snaps > 1);
  if (self->b && self->b->kind == LOOM_DNA_SOURCE_SNAPSHOT)
    gtk_range_set_value(GTK_RANGE(self->timeline_scale), index_of(self, self->b) - 1);
  self->updating = FALSE;
}

/* The snapshot of a source: its own, or the current network's now. */
static loom_dna_snapshot *snapshot_of(LoomDnaPane *self, Source *s, gboolean *owned, loom_error *err) {
  *owned = FALSE;
  if (s->kind != LOOM_DNA_SOURCE_CURRENT) return (loom_dna_snapshot *)loom_shared_dna_get(s->dna);
  if (!self->net) return NULL;
  *owned = TRUE;
  return loom_dna_snapshot_new(self->net, 0, err);
}

static void clear_shifts(LoomDnaPane *self) {
  for (GtkWidget *row; (row = gtk_widget_get_first_child(GTK_WIDGET(self->shift_list)));)
    gtk_list_box_remove(self->shift_list, row);
}

static char *slot_label(loom_dna_slot s) {
  char where[64];
  loom_coord_format(s.at, where, sizeof where);
  return g_strdup_printf("%s %s", where, s.type ? loom_layer_type_name(s.type) : "");
}

static void show_result(LoomDnaPane *self) {
  clear_shifts(self);
  loom_dna_pane_select_shift(self, -1);
  const loom_dna_result *r = self->result;
  if (!r) {
    loom_dna_matrix_set_data(self->matrix, 0, 0, NULL, NULL, NULL);
    return;
  }
  int n_a = (int)loom_dna_result_n_a(r), n_b = (int)loom_dna_result_n_b(r);
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) cols = g_ptr_array_new_with_free_func(g_free);
  for (int i = 0; i < n_a; i++) g_ptr_array_add(rows, slot_label(loom_dna_result_slot_a(r, i)));
  for (int j = 0; j < n_b; j++) g_ptr_array_add(cols, slot_label(loom_dna_result_slot_b(r, j)));
  g_ptr_array_add(rows, NULL);
  g_ptr_array_add(cols, NULL);
  if (n_a <= LOOM_DNA_MATRIX_MAX_SIDE && n_b <= LOOM_DNA_MATRIX_MAX_SIDE)
    loom_dna_matrix_set_data(self->matrix, n_a, n_b, loom_dna_result_matrix(r), (const char *const *)rows->pdata,
                             (const char *const *)cols->pdata);
  int64_t n_shifts = loom_dna_result_n_shifts(r);
  g_autofree char *summary = g_strdup_printf(
      /* Translators: the DNA comparison's summary: the overall index, then the count of logic shifts. */
      g_dngettext(GETTEXT_PACKAGE, "Similarity %.3f · %lld logic shift", "Similarity %.3f · %lld logic shifts",
                  (gulong)n_shifts),
      loom_dna_result_similarity(r), (long long)n_shifts);
  gtk_label_set_text(self->summary_label, summary);
  for (int64_t k = 0; k < n_shifts; k++) {
    loom_dna_shift s = loom_dna_result_shift(r, k);
    char from[64], to[64];
    loom_coord_format(s.from, from, sizeof from);
    loom_coord_format(s.to, to, sizeof to);
    /* Translators: a logic shift: from slot, to slot, its score, the score at its own slot. */
    g_autofree char *text = g_strdup_printf(_("%s → %s  %.3f (here %.3f)"), from, to, s.score, s.own);
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_widget_add_css_class(label, "numeric");
    gtk_widget_set_margin_top(label, 6);
    gtk_widget_set_margin_bottom(label, 6);
    gtk_widget_set_margin_start(label, 8);
    gtk_list_box_append(self->shift_list, label);
  }
  if (n_shifts == 0) {
    GtkWidget *label = gtk_label_new(_("No logic moved"));
    gtk_widget_add_css_class(label, "dim-label");
    gtk_widget_set_margin_top(label, 6);
    gtk_widget_set_margin_bottom(label, 6);
    GtkWidget *row = gtk_list_box_row_new();
    gtk_list_box_row_set_child(GTK_LIST_BOX_ROW(row), label);
    gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), FALSE);
    gtk_list_box_row_set_selectable(GTK_LIST_BOX_ROW(row), FALSE);
    gtk_list_box_append(self->shift_list, row);
  }
}

static void compare(LoomDnaPane *self) {
  g_clear_pointer(&self->result, loom_dna_result_free);
  if (!self->a || !self->b) return;
  loom_error err = {0};
  gboolean own_a, own_b;
  loom_dna_snapshot *a = snapshot_of(self, self->a, &own_a, &err);
  loom_dna_snapshot *b = a ? snapshot_of(self, self->b, &own_b, &err) : NULL;
  if (a && b) self->result = loom_dna_compare(a, b, gtk_spin_button_get_value(self->threshold_spin), &err);
  if (a && own_a) loom_dna_snapshot_free(a);
  if (b && own_b) loom_dna_snapshot_free(b);
  show_result(self);
  if (!self->result)
    gtk_label_set_text(self->summary_label, err.message[0] ? err.message : _("Nothing to compare yet"));
}

/* Every slot of the newest snapshot (or the current network) by its best match in A. */
static void update_heatmap(LoomDnaPane *self) {
  if (!self->live || !self->grid_view || !self->net || !self->a) return;
  guint snaps = loom_dna_pane_get_n_snapshots(self);
  Source *newest = snaps > 0 ? g_ptr_array_index(self->sources, snaps) : g_ptr_array_index(self->sources, 0);
  loom_error err = {0};
  gboolean own_a, own_b;
  loom_dna_snapshot *a = snapshot_of(self, self->a, &own_a, &err);
  loom_dna_snapshot *b = a ? snapshot_of(self, newest, &own_b, &err) : NULL;
  loom_dna_result *r = a && b ? loom_dna_compare(a, b, LOOM_DNA_DEFAULT_THRESHOLD, &err) : NULL;
  if (a && own_a) loom_dna_snapshot_free(a);
  if (b && own_b) loom_dna_snapshot_free(b);
  if (!r) return;
  int64_t n = loom_net_n_slots(self->net), n_a = loom_dna_result_n_a(r), n_b = loom_dna_result_n_b(r);
  g_autofree float *values = g_new(float, (gsize)MAX(n, 1));
  for (int64_t i = 0; i < n; i++) values[i] = NAN;
  for (int64_t j = 0; j < n_b; j++) {
    loom_coord at = loom_dna_result_slot_b(r, j).at;
    if (!loom_net_contains(self->net, at)) continue;
    double best = n_a > 0 ? -1.0 : NAN;
    for (int64_t i = 0; i < n_a; i++) best = fmax(best, loom_dna_result_at(r, i, j));
    values[loom_net_flat_index(self->net, at)] = (float)best;
  }
  loom_dna_result_free(r);
  loom_grid_view_set_color_mode(self->grid_view, LOOM_GRID_VIEW_COLOR_METRIC);
  loom_grid_view_set_slot_values(self->grid_view, values, (gsize)n, _("Similarity to A"));
}

static void on_source_chosen(LoomDnaPane *self, GParamSpec *pspec, GtkDropDown *drop) {
  if (self->updating) return;
  guint k = gtk_drop_down_get_selected(drop);
  if (k >= self->sources->len) return;
  Source *s = g_ptr_array_index(self->sources, k);
  if (drop == self->a_dropdown) self->a = s;
  else self->b = s;
  compare(self);
  update_heatmap(self);
}

static void on_threshold(LoomDnaPane *self) { compare(self); }

static void on_timeline(LoomDnaPane *self) {
  if (self->updating) return;
  guint k = (guint)lround(gtk_range_get_value(GTK_RANGE(self->timeline_scale)));
  loom_dna_pane_set_source(self, TRUE, LOOM_DNA_SOURCE_SNAPSHOT, k);
}

static void on_live(LoomDnaPane *self) {
  loom_dna_pane_set_live_heatmap(self, gtk_check_button_get_active(self->live_check));
}

static void on_shift_selected(LoomDnaPane *self, GtkListBoxRow *row) {
  if (self->updating) return;
  loom_dna_pane_select_shift(self, row ? gtk_list_box_row_get_index(row) : -1);
}

GtkWidget *loom_dna_pane_new(void) { return g_object_new(LOOM_TYPE_DNA_PANE, NULL); }

void loom_dna_pane_set_net(LoomDnaPane *self, const loom_net *net) {
  g_return_if_fail(LOOM_IS_DNA_PANE(self));
  self->net = net;
  if (self->a && self->b && (self->a->kind == LOOM_DNA_SOURCE_CURRENT || self->b->kind == LOOM_DNA_SOURCE_CURRENT))
    compare(self);
}

void loom_dna_pane_set_grid_view(LoomDnaPane *self, LoomGridView *view) {
  g_return_if_fail(LOOM_IS_DNA_PANE(self));
  g_set_weak_pointer(&self->grid_view, view);
}

guint loom_dna_pane_get_n_snapshots(LoomDnaPane *self) {
  guint n = 0;
  for (guint i = 0; i < self->sources->len; i++)
    n += ((Source *)g_ptr_array_index(self->sources, i))->kind == LOOM_DNA_SOURCE_SNAPSHOT;
  return n;
}

void loom_dna_pane_add_snapshot(LoomDnaPane *self, LoomSharedDna *dna) {
  g_return_if_fail(LOOM_IS_DNA_PANE(self));
  const loom_dna_snapshot *snap = loom_shared_dna_get(dna);
  if (!snap) return;
  guint n = loom_dna_pane_get_n_snapshots(self);
  if (n > 0) {
    Source *last = g_ptr_array_index(self->sources, n);
    if (loom_dna_snapshot_step(loom_shared_dna_get(last->dna)) == loom_dna_snapshot_step(snap)) return;
  }
  if (n >= TIMELINE_MAX) {
    /* Drop every other snapshot but the first and the chosen ones. */
    for (guint i = n - 1; i >= 2; i -= 2) {
      Source *s = g_ptr_array_index(self->sources, i);
      if (s != self->a && s != self->b) g_ptr_array_remove_index(self->sources, i);
    }
    n = loom_dna_pane_get_n_snapshots(self);
  }
  /* Translators: a training snapshot in the DNA pane's lists. */
  char *label = g_strdup_printf(_("Step %lld"), (long long)loom_dna_snapshot_step(snap));
  g_ptr_array_insert(self->sources, (gint)n + 1, source_new(LOOM_DNA_SOURCE_SNAPSHOT, label, loom_shared_dna_ref(dna)));
  /* The first snapshot is the natural baseline; B follows the newest unless
   * the user scrubs. */
  gboolean b_follows = !self->b || self->b->kind == LOOM_DNA_SOURCE_CURRENT || self->b == g_ptr_array_index(self->sources, n);
  if (!self->a || (n == 0 && self->a->kind == LOOM_DNA_SOURCE_CURRENT)) self->a = g_ptr_array_index(self->sources, 1);
  if (b_follows) self->b = g_ptr_array_index(self->sources, n + 1);
  rebuild_dropdowns(self); /* B's place on the timeline too */
  if (b_follows && gtk_widget_get_mapped(GTK_WIDGET(self))) compare(self);
  update_heatmap(self);
}

void loom_dna_pane_clear_timeline(LoomDnaPane *self) {
  g_return_if_fail(LOOM_IS_DNA_PANE(self));
  for (guint i = self->sources->len; i-- > 0;) {
    Source *s = g_ptr_array_index(self->sources, i);
    if (s->kind != LOOM_DNA_SOURCE_SNAPSHOT) continue;
    if (s == self->a) self->a = g_ptr_array_index(self->sources, 0);
    if (s == self->b) self->b = g_ptr_array_index(self->sources, 0);
    g_ptr_array_remove_index(self->sources, i);
  }
  rebuild_dropdowns(self);
  compare(self);
}

gboolean loom_dna_pane_add_file(LoomDnaPane *self, const char *path, GError **error) {
  g_return_val_if_fail(LOOM_IS_DNA_PANE(self), FALSE);
  loom_net *net = NULL;
  loom_error err = {0};
  loom_dna_snapshot *snap = NULL;
  if (loom_model_load(path, LOOM_MODEL_STRICT, &net, &err) == LOOM_OK) {
    loom_diag *diags = NULL;
    loom_net_infer_shapes(net, loom_net_seed(net), &diags);
    free(diags);
    snap = loom_dna_snapshot_new(net, 0, &err);
    loom_net_free(net);
  }
  if (!snap) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot compare %s: %s"), path, err.message);
    return FALSE;
  }
  g_autofree char *base = g_path_get_basename(path);
  g_ptr_array_add(self->sources, source_new(LOOM_DNA_SOURCE_FILE, g_strdup(base), loom_shared_dna_new(snap)));
  self->b = g_ptr_array_index(self->sources, self->sources->len - 1);
  rebuild_dropdowns(self);
  compare(self);
  return TRUE;
}

gboolean loom_dna_pane_set_source(LoomDnaPane *self, gboolean b, LoomDnaSourceKind kind, guint index) {
  g_return_val_if_fail(LOOM_IS_DNA_PANE(self), FALSE);
  guint seen = 0;
  for (guint i = 0; i < self->sources->len; i++) {
    Source *s = g_ptr_array_index(self->sources, i);
    if (s->kind != kind || seen++ != index) continue;
    if (b) self->b = s;
    else self->a = s;
    rebuild_dropdowns(self);
    compare(self);
    update_heatmap(self);
    return TRUE;
  }
  return FALSE;
}

const loom_dna_result *loom_dna_pane_get_result(LoomDnaPane *self) {
  g_return_val_if_fail(LOOM_IS_DNA_PANE(self), NULL);
  return self->result;
}

void loom_dna_pane_select_shift(LoomDnaPane *self, int index) {
  g_return_if_fail(LOOM_IS_DNA_PANE(self));
  gboolean valid = self->result && index >= 0 && index < loom_dna_result_n_shifts(self->result);
  loom_dna_shift s = valid ? loom_dna_result_shift(self->result, index) : (loom_dna_shift){0};
  if (self->grid_view) loom_grid_view_set_shift_arrow(self->grid_view, valid ? &s.from : NULL, valid ? &s.to : NULL);
  loom_dna_matrix_set_marked(self->matrix, valid ? (int)s.a : -1, valid ? (int)s.b : -1);
  GtkListBoxRow *row = valid ? gtk_list_box_get_row_at_index(self->shift_list, index) : NULL;
  if (row != gtk_list_box_get_selected_row(self->shift_list)) {
    self->updating = TRUE;
    gtk_list_box_select_row(self->shift_list, row);
    self->updating = FALSE;
  }
}

void loom_dna_pane_set_live_heatmap(LoomDnaPane *self, gboolean live) {
  g_return_if_fail(LOOM_IS_DNA_PANE(self));
  if (self->live == !!live) return;
  self->live = !!live;
  gtk_check_button_set_active(self->live_check, self->live);
  if (self->live) update_heatmap(self);
  else if (self->grid_view) loom_grid_view_set_slot_values(self->grid_view, NULL, 0, NULL);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_LIVE_HEATMAP]);
}

gboolean loom_dna_pane_get_live_heatmap(LoomDnaPane *self) {
  g_return_val_if_fail(LOOM_IS_DNA_PANE(self), FALSE);
  return self->live;
}

gboolean loom_dna_pane_export_matrix(LoomDnaPane *self, const char *path, GError **error) {
  g_return_val_if_fail(LOOM_IS_DNA_PANE(self), FALSE);
  if (g_str_has_suffix(path, ".csv")) return loom_dna_matrix_export_csv(self->matrix, path, error);
  return loom_dna_matrix_export_png(self->matrix, path, 1200, 1000, error);
}

static void loom_dna_pane_map(GtkWidget *widget) {
  GTK_WIDGET_CLASS(loom_dna_pane_parent_class)->map(widget);
  /* What changed while it was hidden. */
  if (LOOM_DNA_PANE(widget)->stale) rebuild_dropdowns(LOOM_DNA_PANE(widget));
  compare(LOOM_DNA_PANE(widget));
}

static void loom_dna_pane_dispose(GObject *object) {
  LoomDnaPane *self = LOOM_DNA_PANE(object);
  g_clear_weak_pointer(&self->grid_view);
  gtk_widget_dispose_template(GTK_WIDGET(self), LOOM_TYPE_DNA_PANE);
  /* The template's root box is not bound to a field: unparent it here. */
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));) gtk_widget_unparent(child);
  G_OBJECT_CLASS(loom_dna_pane_parent_class)->dispose(object);
}

static void loom_dna_pane_finalize(GObject *object) {
  LoomDnaPane *self = LOOM_DNA_PANE(object);
  g_clear_pointer(&self->result, loom_dna_result_free);
  g_ptr_array_unref(self->sources);
  G_OBJECT_CLASS(loom_dna_pane_parent_class)->finalize(object);
}

static void loom_dna_pane_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  if (prop_id == PROP_LIVE_HEATMAP) g_value_set_boolean(value, LOOM_DNA_PANE(object)->live);
  else G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

static void loom_dna_pane_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  if (prop_id == PROP_LIVE_HEATMAP) loom_dna_pane_set_live_heatmap(LOOM_DNA_PANE(object), g_value_get_boolean(value));
  else G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

static void loom_dna_pane_class_init(LoomDnaPaneClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = loom_dna_pane_dispose;
  object_class->finalize = loom_dna_pane_finalize;
  object_class->get_property = loom_dna_pane_get_property;
  object_class->set_property = loom_dna_pane_set_property;
  widget_class->map = loom_dna_pane_map;
  properties[PROP_LIVE_HEATMAP] = g_param_spec_boolean(
      "live-heatmap", NULL, NULL, FALSE, G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  g_type_ensure(LOOM_TYPE_DNA_MATRIX);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource(widget_class, "/org/loomworkbench/Workbench/loom-dna-pane.ui");
  gtk_widget_class_bind_template_child(widget_class, LoomDnaPane, a_dropdown);
  gtk_widget_class_bind_template_child(widget_class, LoomDnaPane, b_dropdown);
  gtk_widget_class_bind_template_child(widget_class, LoomDnaPane, threshold_spin);
  gtk_widget_class_bind_template_child(widget_class, LoomDnaPane, timeline_scale);
  gtk_widget_class_bind_template_child(widget_class, LoomDnaPane, live_check);
  gtk_widget_class_bind_template_child(widget_class, LoomDnaPane, summary_label);
  gtk_widget_class_bind_template_child(widget_class, LoomDnaPane, matrix);
  gtk_widget_class_bind_template_child(widget_class, LoomDnaPane, shift_list);
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void loom_dna_pane_init(LoomDnaPane *self) {
  gtk_widget_init_template(GTK_WIDGET(self));
  self->sources = g_ptr_array_new_with_free_func(source_free);
  g_ptr_array_add(self->sources, source_new(LOOM_DNA_SOURCE_CURRENT, g_strdup(_("Current network")), NULL));
  self->a = self->b = g_ptr_array_index(self->sources, 0);
  rebuild_dropdowns(self);
  g_signal_connect_swapped(self->a_dropdown, "notify::selected", G_CALLBACK(on_source_chosen), self);
  g_signal_connect_swapped(self->b_dropdown, "notify::selected", G_CALLBACK(on_source_chosen), self);
  g_signal_connect_swapped(self->threshold_spin, "value-changed", G_CALLBACK(on_threshold), self);
  g_signal_connect_swapped(self->timeline_scale, "value-changed", G_CALLBACK(on_timeline), self);
  g_signal_connect_swapped(self->live_check, "toggled", G_CALLBACK(on_live), self);
  g_signal_connect_swapped(self->shift_list, "row-selected", G_CALLBACK(on_shift_selected), self);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Network DNA"), -1);
}
