/* LoomParamRow: one hyperparameter's editor, validated as typed. */
#include "loom-param-row.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "loom-wheel-guard.h"

struct _LoomParamRow {
  GtkWidget parent_instance;
  const loom_param_spec *spec;
  GtkWidget *label;
  GtkWidget *controls; /* box of the editors */
  GtkWidget *message;  /* the error text under the controls */
  GtkWidget *editors[LOOM_PARAM_MAX_INTS];
  int n_editors;
  loom_param_value value;   /* what is shown as committed */
  GArray *floats;           /* LOOM_PARAM_FLOATS: committed values */
  char *error;
  gboolean updating;        /* set_value is writing the editors */
};

G_DEFINE_FINAL_TYPE(LoomParamRow, loom_param_row, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_ERROR, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_VALUE_CHANGED, SIGNAL_FLOATS_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static char *format_number(double v) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.7g", v));
}

static char *range_message(const loom_param_spec *spec, gboolean integer) {
  if (integer) {
    /* Numbers formatted first: xgettext cannot see through G_GINT64_FORMAT. */
    g_autofree char *lo = g_strdup_printf("%" G_GINT64_FORMAT, (gint64)ceil(spec->min));
    g_autofree char *hi = g_strdup_printf("%" G_GINT64_FORMAT, (gint64)floor(spec->max));
    return g_strdup_printf(_("Enter a whole number from %s to %s"), lo, hi);
  }
  g_autofree char *lo = format_number(spec->min), *hi = format_number(spec->max);
  return g_strdup_printf(_("Enter a number from %s to %s"), lo, hi);
}

/* Parses one number of the spec's kind; on failure *message says why. */
static gboolean parse_number(const loom_param_spec *spec, const char *text, gboolean integer, gboolean bounded,
                             double *out, char **message) {
  g_autofree char *s = g_strstrip(g_strdup(text));
  char *end = NULL;
  double v;
  if (integer) {
    gint64 i;
    if (!*s || !g_ascii_string_to_signed(s, 10, G_MININT64, G_MAXINT64, &i, NULL)) {
      *message = g_strdup(_("Enter a whole number"));
      return FALSE;
    }
    v = (double)i;
  } else {
    v = g_ascii_strtod(s, &end);
    if (!*s || end == s || *end != '\0' || !isfinite(v)) {
      *message = g_strdup_printf(_("“%s” is not a number"), s);
      return FALSE;
    }
  }
  if (bounded && (v < spec->min || v > spec->max)) {
    *message = range_message(spec, integer);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

/* A comma-separated list of numbers; bounds apply when the spec has any. */
static GArray *parse_floats(const loom_param_spec *spec, const char *text, char **message) {
  GArray *values = g_array_new(FALSE, FALSE, sizeof(float));
  g_autofree char *s = g_strstrip(g_strdup(text));
  if (!*s) return values;
  g_auto(GStrv) parts = g_strsplit(s, ",", -1);
  for (int i = 0; parts[i]; i++) {
    double v;
    g_autofree char *why = NULL;
    if (!parse_number(spec, parts[i], FALSE, spec->min < spec->max, &v, &why)) {
      *message = g_strdup_printf(_("Value %d: %s"), i + 1, why);
      g_array_unref(values);
      return NULL;
    }
    float f = (float)v;
    g_array_append_val(values, f);
  }
  return values;
}

static void set_error(LoomParamRow *self, GtkWidget *editor, const char *message) {
  for (int i = 0; i < self->n_editors; i++) {
    gboolean bad = message && self->editors[i] == editor;
    if (bad)
      gtk_widget_add_css_class(self->editors[i], "error");
    else
      gtk_widget_remove_css_class(self->editors[i], "error");
    gtk_accessible_update_state(GTK_ACCESSIBLE(self->editors[i]), GTK_ACCESSIBLE_STATE_INVALID,
                                bad ? GTK_ACCESSIBLE_INVALID_TRUE : GTK_ACCESSIBLE_INVALID_FALSE, -1);
  }
  gtk_label_set_text(GTK_LABEL(self->message), message ? message : "");
  gtk_widget_set_visible(self->message, message != NULL);
  if (g_strcmp0(self->error, message) == 0) return;
  g_free(self->error);
  self->error = g_strdup(message);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_ERROR]);
}

/* Checks every editor's text; returns the value they spell if all are valid. */
static gboolean validate(LoomParamRow *self, loom_param_value *out, GArray **floats) {
  loom_param_value v = self->value;
  const loom_param_spec *spec = self->spec;
  for (int i = 0; i < self->n_editors; i++) {
    GtkWidget *e = self->editors[i];
    g_autofree char *why = NULL;
    double d;
    if (spec->kind == LOOM_PARAM_INT || spec->kind == LOOM_PARAM_INTS) {
      if (!parse_number(spec, gtk_editable_get_text(GTK_EDITABLE(e)), TRUE, TRUE, &d, &why)) {
        set_error(self, e, why);
        return FALSE;
      }
      v.i[i] = (int64_t)d;
    } else if (spec->kind == LOOM_PARAM_FLOAT) {
      if (!parse_number(spec, gtk_editable_get_text(GTK_EDITABLE(e)), FALSE, TRUE, &d, &why)) {
        set_error(self, e, why);
        return FALSE;
      }
      v.f = d;
    } else if (spec->kind == LOOM_PARAM_FLOATS) {
      GArray *list = parse_floats(spec, gtk_editable_get_text(GTK_EDITABLE(e)), &why);
      if (!list) {
        set_error(self, e, why);
        return FALSE;
      }
      if (floats)
        *floats = list;
      else
        g_array_unref(list);
    } else if (spec->kind == LOOM_PARAM_BOOL) {
      v.i[0] = gtk_switch_get_active(GTK_SWITCH(e));
    } else if (spec->kind == LOOM_PARAM_ENUM) {
      guint sel = gtk_drop_down_get_selected(GTK_DROP_DOWN(e));
      if (sel == GTK_INVALID_LIST_POSITION) return FALSE;
      v.i[0] = sel;
    }
  }
  set_error(self, NULL, NULL);
  *out = v;
  return TRUE;
}

static gboolean floats_equal(GArray *a, GArray *b) {
  return a->len == b->len && memcmp(a->data, b->data, a->len * sizeof(float)) == 0;
}

/* The user committed: emit if the editors spell a valid, different value. */
static void commit(LoomParamRow *self) {
  if (self->updating) return;
  loom_param_value v;
  GArray *list = NULL;
  if (!validate(self, &v, self->spec->kind == LOOM_PARAM_FLOATS ? &list : NULL)) return;
  if (self->spec->kind == LOOM_PARAM_FLOATS) {
    if (floats_equal(list, self->floats)) {
      g_array_unref(list);
      return;
    }
    g_array_unref(self->floats);
    self->floats = list;
    g_autoptr(GBytes) bytes = g_bytes_new(list->data, list->len * sizeof(float));
    g_signal_emit(self, signals[SIGNAL_FLOATS_CHANGED], 0, bytes);
    return;
  }
  if (memcmp(&v, &self->value, sizeof v) == 0) return;
  self->value = v;
  g_signal_emit(self, signals[SIGNAL_VALUE_CHANGED], 0, &v);
}

static void on_text_changed(GtkEditable *editable, LoomParamRow *self) {
  loom_param_value v;
  if (!self->updating) validate(self, &v, NULL);
}

/* Spin buttons parse strictly (no rounding of "3.7", no clamping): with
 * GTK_UPDATE_IF_VALID an error keeps the committed value. */
static int on_spin_input(GtkSpinButton *spin, double *new_value, LoomParamRow *self) {
  g_autofree char *why = NULL;
  if (!parse_number(self->spec, gtk_editable_get_text(GTK_EDITABLE(spin)), TRUE, TRUE, new_value, &why)) {
    gtk_widget_error_bell(GTK_WIDGET(spin));
    return GTK_INPUT_ERROR;
  }
  return TRUE;
}

static void on_focus_leave(GtkEventControllerFocus *focus, LoomParamRow *self) {
  commit(self);
}

static GtkWidget *new_spin(LoomParamRow *self, double value) {
  const loom_param_spec *spec = self->spec;
  GtkAdjustment *adj = gtk_adjustment_new(value, spec->min, spec->max, 1, 10, 0);
  GtkWidget *spin = gtk_spin_button_new(adj, 1, 0);
  gtk_spin_button_set_update_policy(GTK_SPIN_BUTTON(spin), GTK_UPDATE_IF_VALID);
  gtk_editable_set_width_chars(GTK_EDITABLE(spin), spec->kind == LOOM_PARAM_INTS ? 2 : 6);
  g_signal_connect(spin, "input", G_CALLBACK(on_spin_input), self);
  g_signal_connect(spin, "changed", G_CALLBACK(on_text_changed), self);
  g_signal_connect_swapped(spin, "value-changed", G_CALLBACK(commit), self);
  loom_wheel_guard_attach(spin); /* the inspector scrolls over it */
  return spin;
}

static GtkWidget *new_entry(LoomParamRow *self) {
  GtkWidget *entry = gtk_entry_new();
  gtk_widget_set_hexpand(entry, TRUE);
  gtk_editable_set_width_chars(GTK_EDITABLE(entry), 6);
  g_signal_connect(entry, "changed", G_CALLBACK(on_text_changed), self);
  g_signal_connect_swapped(entry, "activate", G_CALLBACK(commit), self);
  GtkEventController *focus = gtk_event_controller_focus_new();
  g_signal_connect(focus, "leave", G_CALLBACK(on_focus_leave), self);
  gtk_widget_add_controller(entry, focus);
  if (self->spec->kind == LOOM_PARAM_FLOATS)
    gtk_entry_set_placeholder_text(GTK_ENTRY(entry), _("e.g. 1, 0, 1"));
  return entry;
}

static void build_editors(LoomParamRow *self) {
  const loom_param_spec *spec = self->spec;
  switch (spec->kind) {
  case LOOM_PARAM_INT: self->editors[self->n_editors++] = new_spin(self, spec->def); break;
  case LOOM_PARAM_INTS:
    for (int i = 0; i < CLAMP(spec->count, 1, LOOM_PARAM_MAX_INTS); i++)
      self->editors[self->n_editors++] = new_spin(self, spec->def);
    break;
  case LOOM_PARAM_FLOAT:
  case LOOM_PARAM_FLOATS: self->editors[self->n_editors++] = new_entry(self); break;
  case LOOM_PARAM_BOOL: {
    GtkWidget *sw = gtk_switch_new();
    gtk_widget_set_valign(sw, GTK_ALIGN_CENTER);
    g_signal_connect_swapped(sw, "notify::active", G_CALLBACK(commit), self);
    self->editors[self->n_editors++] = sw;
    break;
  }
  case LOOM_PARAM_ENUM: {
    GtkWidget *dd = gtk_drop_down_new_from_strings(spec->choices ? (const char *const *)spec->choices
                                                                 : (const char *const[]){NULL});
    g_signal_connect_swapped(dd, "notify::selected", G_CALLBACK(commit), self);
    self->editors[self->n_editors++] = dd;
    break;
  }
  }
  const char *label = _(spec->label);
  for (int i = 0; i < self->n_editors; i++) {
    GtkWidget *e = self->editors[i];
    if (spec->tooltip) gtk_widget_set_tooltip_text(e, _(spec->tooltip));
    if (self->n_editors > 1) {
      g_autofree char *name = g_strdup_printf(_("%s, value %d of %d"), label, i + 1, self->n_editors);
      gtk_accessible_update_property(GTK_ACCESSIBLE(e), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
    } else {
      gtk_accessible_update_relation(GTK_ACCESSIBLE(e), GTK_ACCESSIBLE_RELATION_LABELLED_BY, self->label, NULL, -1);
    }
    if (spec->tooltip)
      gtk_accessible_update_property(GTK_ACCESSIBLE(e), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, _(spec->tooltip), -1);
    gtk_accessible_update_relation(GTK_ACCESSIBLE(e), GTK_ACCESSIBLE_RELATION_ERROR_MESSAGE, self->message, -1);
    gtk_box_append(GTK_BOX(self->controls), e);
  }
  if (self->n_editors == 1 && spec->kind != LOOM_PARAM_BOOL)
    gtk_label_set_mnemonic_widget(GTK_LABEL(self->label), self->editors[0]);
}

static void loom_param_row_dispose(GObject *object) {
  LoomParamRow *self = LOOM_PARAM_ROW(object);
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child(GTK_WIDGET(self)))) gtk_widget_unparent(child);
  G_OBJECT_CLASS(loom_param_row_parent_class)->dispose(object);
}

static void loom_param_row_finalize(GObject *object) {
  LoomParamRow *self = LOOM_PARAM_ROW(object);
  g_array_unref(self->floats);
  g_free(self->error);
  G_OBJECT_CLASS(loom_param_row_parent_class)->finalize(object);
}

static void loom_param_row_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  switch (prop_id) {
  case PROP_ERROR: g_value_set_string(value, LOOM_PARAM_ROW(object)->error); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_param_row_class_init(LoomParamRowClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = loom_param_row_dispose;
  object_class->finalize = loom_param_row_finalize;
  object_class->get_property = loom_param_row_get_property;

  properties[PROP_ERROR] =
    g_param_spec_string("error", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  /* (const loom_param_value *value): valid during the emission only. */
  signals[SIGNAL_VALUE_CHANGED] = g_signal_new("value-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                               NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  /* (GBytes *floats): the float32 values of a LOOM_PARAM_FLOATS parameter. */
  signals[SIGNAL_FLOATS_CHANGED] = g_signal_new("floats-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BYTES);

  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_GRID_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "loomparamrow");
}

static void loom_param_row_init(LoomParamRow *self) {
  self->floats = g_array_new(FALSE, FALSE, sizeof(float));
}

static void attach(GtkWidget *child, GtkWidget *parent, int column, int row, int width) {
  gtk_widget_set_parent(child, parent);
  GtkGridLayoutChild *c =
    GTK_GRID_LAYOUT_CHILD(gtk_layout_manager_get_layout_child(gtk_widget_get_layout_manager(parent), child));
  gtk_grid_layout_child_set_column(c, column);
  gtk_grid_layout_child_set_row(c, row);
  gtk_grid_layout_child_set_column_span(c, width);
}

GtkWidget *loom_param_row_new(const loom_param_spec *spec) {
  g_return_val_if_fail(spec != NULL, NULL);
  LoomParamRow *self = g_object_new(LOOM_TYPE_PARAM_ROW, NULL);
  self->spec = spec;
  GtkGridLayout *layout = GTK_GRID_LAYOUT(gtk_widget_get_layout_manager(GTK_WIDGET(self)));
  gtk_grid_layout_set_column_spacing(layout, 12);
  gtk_grid_layout_set_row_spacing(layout, 4);

  self->label = gtk_label_new(_(spec->label));
  gtk_label_set_xalign(GTK_LABEL(self->label), 0);
  /* Not wrapped: labels of a size group then share one exact width. */
  if (spec->tooltip) gtk_widget_set_tooltip_text(self->label, _(spec->tooltip));
  /* Several spin buttons do not fit beside the label in a sidebar: they go
   * on their own line, sharing its width. */
  gboolean stacked = spec->kind == LOOM_PARAM_INTS && spec->count > 1;
  attach(self->label, GTK_WIDGET(self), 0, 0, stacked ? 2 : 1);

  self->controls = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_box_set_homogeneous(GTK_BOX(self->controls), stacked);
  gtk_widget_set_hexpand(self->controls, TRUE);
  attach(self->controls, GTK_WIDGET(self), stacked ? 0 : 1, stacked ? 1 : 0, stacked ? 2 : 1);

  self->message = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(self->message), 0);
  gtk_label_set_wrap(GTK_LABEL(self->message), TRUE);
  gtk_widget_add_css_class(self->message, "error");
  gtk_widget_add_css_class(self->message, "caption");
  gtk_widget_set_visible(self->message, FALSE);
  attach(self->message, GTK_WIDGET(self), stacked ? 0 : 1, stacked ? 2 : 1, stacked ? 2 : 1);

  build_editors(self);
  loom_param_value def = {{(int64_t)spec->def, (int64_t)spec->def, (int64_t)spec->def}, spec->def};
  loom_param_row_set_value(self, &def, NULL, 0);
  return GTK_WIDGET(self);
}

const loom_param_spec *loom_param_row_get_spec(LoomParamRow *self) {
  g_return_val_if_fail(LOOM_IS_PARAM_ROW(self), NULL);
  return self->spec;
}

void loom_param_row_set_value(LoomParamRow *self, const loom_param_value *value, const float *floats, int64_t n) {
  g_return_if_fail(LOOM_IS_PARAM_ROW(self) && value != NULL);
  self->updating = TRUE;
  self->value = *value;
  for (int i = 0; i < self->n_editors; i++) {
    GtkWidget *e = self->editors[i];
    switch (self->spec->kind) {
    case LOOM_PARAM_INT:
    case LOOM_PARAM_INTS: {
      gtk_spin_button_set_value(GTK_SPIN_BUTTON(e), (double)value->i[i]);
      g_autofree char *text = g_strdup_printf("%" G_GINT64_FORMAT, (gint64)value->i[i]);
      gtk_editable_set_text(GTK_EDITABLE(e), text); /* drops text the user left invalid */
      break;
    }
    case LOOM_PARAM_FLOAT: {
      g_autofree char *text = format_number(value->f);
      gtk_editable_set_text(GTK_EDITABLE(e), text);
      break;
    }
    case LOOM_PARAM_FLOATS: {
      g_array_set_size(self->floats, 0);
      if (floats && n > 0) g_array_append_vals(self->floats, floats, (guint)n);
      GString *text = g_string_new(NULL);
      for (int64_t k = 0; k < n && floats; k++) {
        g_autofree char *num = format_number(floats[k]);
        g_string_append_printf(text, "%s%s", k ? ", " : "", num);
      }
      gtk_editable_set_text(GTK_EDITABLE(e), text->str);
      g_string_free(text, TRUE);
      break;
    }
    case LOOM_PARAM_BOOL: gtk_switch_set_active(GTK_SWITCH(e), value->i[0] != 0); break;
    case LOOM_PARAM_ENUM: gtk_drop_down_set_selected(GTK_DROP_DOWN(e), (guint)value->i[0]); break;
    }
  }
  set_error(self, NULL, NULL);
  self->updating = FALSE;
}

const char *loom_param_row_get_error(LoomParamRow *self) {
  g_return_val_if_fail(LOOM_IS_PARAM_ROW(self), NULL);
  return self->error;
}

GtkWidget *loom_param_row_get_label(LoomParamRow *self) {
  g_return_val_if_fail(LOOM_IS_PARAM_ROW(self), NULL);
  return self->label;
}

GtkWidget *loom_param_row_get_editor(LoomParamRow *self, int i) {
  g_return_val_if_fail(LOOM_IS_PARAM_ROW(self), NULL);
  return i >= 0 && i < self->n_editors ? self->editors[i] : NULL;
}
