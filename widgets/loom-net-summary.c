/* LoomNetSummary: parameters, memory at the chosen dtypes vs float32, FLOPs. */
#include "loom-net-summary.h"

#include <glib/gi18n-lib.h>

#include "loom-format-private.h"

enum { LINE_LAYERS, LINE_LINKS, LINE_PARAMETERS, LINE_MEMORY, LINE_FLOPS, N_LINES };

struct _LoomNetSummary {
  GtkWidget parent_instance;
  GtkWidget *grid;
  GtkWidget *values[N_LINES];
};

G_DEFINE_FINAL_TYPE(LoomNetSummary, loom_net_summary, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_PARAMETERS_TEXT, PROP_MEMORY_TEXT, PROP_FLOPS_TEXT, N_PROPS };
static GParamSpec *properties[N_PROPS];

static const char *const line_names[N_LINES] = {N_("Layers"), N_("Links"), N_("Parameters"), N_("Memory"),
                                                N_("FLOPs per sample")};

static void set_line(LoomNetSummary *self, int line, char *text /* owned */) {
  const char *shown = text ? text : "—";
  if (g_strcmp0(gtk_label_get_text(GTK_LABEL(self->values[line])), shown) != 0) {
    gtk_label_set_text(GTK_LABEL(self->values[line]), shown);
    if (line == LINE_PARAMETERS) g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_PARAMETERS_TEXT]);
    if (line == LINE_MEMORY) g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_MEMORY_TEXT]);
    if (line == LINE_FLOPS) g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_FLOPS_TEXT]);
  }
  g_free(text);
}

static void loom_net_summary_dispose(GObject *object) {
  LoomNetSummary *self = LOOM_NET_SUMMARY(object);
  g_clear_pointer(&self->grid, gtk_widget_unparent);
  G_OBJECT_CLASS(loom_net_summary_parent_class)->dispose(object);
}

static void loom_net_summary_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomNetSummary *self = LOOM_NET_SUMMARY(object);
  switch (prop_id) {
  case PROP_PARAMETERS_TEXT: g_value_set_string(value, loom_net_summary_get_parameters_text(self)); break;
  case PROP_MEMORY_TEXT: g_value_set_string(value, loom_net_summary_get_memory_text(self)); break;
  case PROP_FLOPS_TEXT: g_value_set_string(value, loom_net_summary_get_flops_text(self)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_net_summary_class_init(LoomNetSummaryClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = loom_net_summary_dispose;
  object_class->get_property = loom_net_summary_get_property;

  GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY;
  properties[PROP_PARAMETERS_TEXT] = g_param_spec_string("parameters-text", NULL, NULL, NULL, flags);
  properties[PROP_MEMORY_TEXT] = g_param_spec_string("memory-text", NULL, NULL, NULL, flags);
  properties[PROP_FLOPS_TEXT] = g_param_spec_string("flops-text", NULL, NULL, NULL, flags);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "loomnetsummary");
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void loom_net_summary_init(LoomNetSummary *self) {
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Network summary"), -1);
  self->grid = gtk_grid_new();
  gtk_grid_set_column_spacing(GTK_GRID(self->grid), 12);
  gtk_grid_set_row_spacing(GTK_GRID(self->grid), 4);
  for (int i = 0; i < N_LINES; i++) {
    GtkWidget *key = gtk_label_new(_(line_names[i]));
    gtk_label_set_xalign(GTK_LABEL(key), 0);
    gtk_label_set_yalign(GTK_LABEL(key), 0);
    gtk_widget_add_css_class(key, "dim-label");
    self->values[i] = gtk_label_new("—");
    gtk_label_set_xalign(GTK_LABEL(self->values[i]), 0);
    gtk_label_set_wrap(GTK_LABEL(self->values[i]), TRUE);
    gtk_label_set_selectable(GTK_LABEL(self->values[i]), TRUE);
    gtk_widget_set_hexpand(self->values[i], TRUE);
    gtk_widget_add_css_class(self->values[i], "numeric");
    gtk_accessible_update_relation(GTK_ACCESSIBLE(self->values[i]), GTK_ACCESSIBLE_RELATION_LABELLED_BY, key,
                                   NULL, -1);
    gtk_grid_attach(GTK_GRID(self->grid), key, 0, i, 1, 1);
    gtk_grid_attach(GTK_GRID(self->grid), self->values[i], 1, i, 1, 1);
  }
  gtk_widget_set_tooltip_text(self->values[LINE_MEMORY],
                              _("The weights at each layer's data type, compared with all of them at float32"));
  gtk_widget_set_parent(self->grid, GTK_WIDGET(self));
}

GtkWidget *loom_net_summary_new(void) {
  return g_object_new(LOOM_TYPE_NET_SUMMARY, NULL);
}

void loom_net_summary_set_net(LoomNetSummary *self, const loom_net *net) {
  g_return_if_fail(LOOM_IS_NET_SUMMARY(self));
  if (!net) {
    for (int i = 0; i < N_LINES; i++) set_line(self, i, NULL);
    return;
  }
  set_line(self, LINE_LAYERS, loom_format_count(loom_net_n_layers(net)));
  set_line(self, LINE_LINKS, loom_format_count(loom_net_n_links(net)));
  set_line(self, LINE_PARAMETERS, loom_format_count(loom_net_param_count(net)));
  set_line(self, LINE_MEMORY, loom_format_memory(loom_net_bytes(net), loom_net_bytes_float32(net)));
  set_line(self, LINE_FLOPS, loom_format_flops(loom_net_flops(net)));
}

const char *loom_net_summary_get_parameters_text(LoomNetSummary *self) {
  g_return_val_if_fail(LOOM_IS_NET_SUMMARY(self), NULL);
  return gtk_label_get_text(GTK_LABEL(self->values[LINE_PARAMETERS]));
}

const char *loom_net_summary_get_memory_text(LoomNetSummary *self) {
  g_return_val_if_fail(LOOM_IS_NET_SUMMARY(self), NULL);
  return gtk_label_get_text(GTK_LABEL(self->values[LINE_MEMORY]));
}

const char *loom_net_summary_get_flops_text(LoomNetSummary *self) {
  g_return_val_if_fail(LOOM_IS_NET_SUMMARY(self), NULL);
  return gtk_label_get_text(GTK_LABEL(self->values[LINE_FLOPS]));
}
