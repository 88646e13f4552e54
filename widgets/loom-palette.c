/* LoomPalette: the layer types of the registry, grouped, searchable, draggable. */
#include "loom-palette.h"

#include <glib/gi18n-lib.h>
#include <loom/layer.h>
#include <string.h>

#include "loom-widgets-palette-resources.h"

#define ICON_RESOURCE_PATH "/org/loomworkbench/Workbench/widgets/palette/icons"
#define TYPE_KEY "loom-layer-type"

struct _LoomPalette {
  GtkWidget parent_instance;
  GtkWidget *search;
  GtkWidget *scroller;
  GtkListBox *list;
  char *search_text;
  char *needle; /* casefolded search_text */
  gboolean syncing_entry; /* set_search_text is writing the entry */
};

G_DEFINE_FINAL_TYPE(LoomPalette, loom_palette, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_SEARCH_TEXT, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_LAYER_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

/*
 * Group → icon. The registry's groups come translated through the project's
 * text domain, so each English name is translated the same way before
 * comparing; that keeps the match working in every language. The names are
 * not marked here: the engine marks the ones it uses.
 */
static const struct {
  const char *group;
  const char *icon;
} group_icons[] = {
  {"Linear", "loom-group-linear-symbolic"},
  {"Dense", "loom-group-linear-symbolic"},
  {"Activation", "loom-group-activation-symbolic"},
  {"Activations", "loom-group-activation-symbolic"},
  {"Softmax", "loom-group-softmax-symbolic"},
  {"Convolution", "loom-group-convolution-symbolic"},
  {"Pooling", "loom-group-convolution-symbolic"},
  {"Normalization", "loom-group-normalization-symbolic"},
  {"Normalisation", "loom-group-normalization-symbolic"},
  {"Embedding", "loom-group-embedding-symbolic"},
  {"Containers", "loom-group-containers-symbolic"},
  {"Container", "loom-group-containers-symbolic"},
  {"Recurrent", "loom-group-recurrent-symbolic"},
  {"Attention", "loom-group-attention-symbolic"},
  {"Clustering", "loom-group-clustering-symbolic"},
};

const char *loom_palette_group_icon_name(const char *group) {
  if (group)
    for (gsize i = 0; i < G_N_ELEMENTS(group_icons); i++)
      if (g_strcmp0(group, g_dgettext(GETTEXT_PACKAGE, group_icons[i].group)) == 0) return group_icons[i].icon;
  return "loom-group-layer-symbolic";
}

static const loom_layer_type *row_type(GtkListBoxRow *row) {
  return row ? g_object_get_data(G_OBJECT(row), TYPE_KEY) : NULL;
}

static gboolean text_has(const char *haystack, const char *needle) {
  if (!haystack) return FALSE;
  g_autofree char *folded = g_utf8_casefold(haystack, -1);
  return strstr(folded, needle) != NULL;
}

static gboolean filter_row(GtkListBoxRow *row, gpointer data) {
  LoomPalette *self = data;
  const loom_layer_type *t = row_type(row);
  if (!self->needle || !*self->needle) return TRUE;
  return text_has(loom_layer_type_label(t), self->needle) || text_has(loom_layer_type_name(t), self->needle) ||
         text_has(loom_layer_type_group(t), self->needle) || text_has(loom_layer_type_description(t), self->needle);
}

static void update_header(GtkListBoxRow *row, GtkListBoxRow *before, gpointer data) {
  const char *group = loom_layer_type_group(row_type(row));
  if (before && g_strcmp0(group, loom_layer_type_group(row_type(before))) == 0) {
    gtk_list_box_row_set_header(row, NULL);
    return;
  }
  GtkWidget *header = gtk_list_box_row_get_header(row);
  if (header && g_strcmp0(gtk_label_get_text(GTK_LABEL(header)), group) == 0) return;
  header = gtk_label_new(group);
  gtk_label_set_xalign(GTK_LABEL(header), 0);
  gtk_widget_add_css_class(header, "heading");
  gtk_widget_add_css_class(header, "dim-label");
  gtk_widget_set_margin_start(header, 12);
  gtk_widget_set_margin_top(header, before ? 18 : 6);
  gtk_widget_set_margin_bottom(header, 6);
  gtk_list_box_row_set_header(row, header);
}

static GdkContentProvider *on_drag_prepare(GtkDragSource *source, double x, double y, gpointer data) {
  GtkListBoxRow *row = GTK_LIST_BOX_ROW(gtk_event_controller_get_widget(GTK_EVENT_CONTROLLER(source)));
  return gdk_content_provider_new_typed(G_TYPE_STRING, loom_layer_type_name(row_type(row)));
}

static void on_drag_begin(GtkDragSource *source, GdkDrag *drag, gpointer data) {
  GtkWidget *row = gtk_event_controller_get_widget(GTK_EVENT_CONTROLLER(source));
  g_autoptr(GdkPaintable) icon = gtk_widget_paintable_new(row);
  gtk_drag_source_set_icon(source, icon, 0, 0);
}

static GtkWidget *make_row(const loom_layer_type *t) {
  const char *label = loom_layer_type_label(t);
  const char *description = loom_layer_type_description(t);

  GtkWidget *image = gtk_image_new_from_icon_name(loom_palette_group_icon_name(loom_layer_type_group(t)));
  gtk_widget_set_valign(image, GTK_ALIGN_START);
  gtk_widget_set_margin_top(image, 2);
  gtk_accessible_update_state(GTK_ACCESSIBLE(image), GTK_ACCESSIBLE_STATE_HIDDEN, TRUE, -1);

  GtkWidget *title = gtk_label_new(label);
  gtk_label_set_xalign(GTK_LABEL(title), 0);
  gtk_label_set_ellipsize(GTK_LABEL(title), PANGO_ELLIPSIZE_END);

  GtkWidget *subtitle = gtk_label_new(description);
  gtk_label_set_xalign(GTK_LABEL(subtitle), 0);
  gtk_label_set_wrap(GTK_LABEL(subtitle), TRUE);
  gtk_label_set_wrap_mode(GTK_LABEL(subtitle), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_lines(GTK_LABEL(subtitle), 2);
  gtk_label_set_ellipsize(GTK_LABEL(subtitle), PANGO_ELLIPSIZE_END);
  gtk_label_set_width_chars(GTK_LABEL(subtitle), 20);
  gtk_label_set_max_width_chars(GTK_LABEL(subtitle), 40);
  gtk_widget_add_css_class(subtitle, "caption");
  gtk_widget_add_css_class(subtitle, "dim-label");

  GtkWidget *texts = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
  gtk_widget_set_hexpand(texts, TRUE);
  gtk_box_append(GTK_BOX(texts), title);
  gtk_box_append(GTK_BOX(texts), subtitle);

  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 10);
  gtk_widget_set_margin_start(box, 12);
  gtk_widget_set_margin_end(box, 12);
  gtk_widget_set_margin_top(box, 6);
  gtk_widget_set_margin_bottom(box, 6);
  gtk_box_append(GTK_BOX(box), image);
  gtk_box_append(GTK_BOX(box), texts);

  GtkWidget *row = gtk_list_box_row_new();
  gtk_list_box_row_set_child(GTK_LIST_BOX_ROW(row), box);
  g_object_set_data(G_OBJECT(row), TYPE_KEY, (gpointer)t);
  /* The accessible name is the label alone; the description says the rest. */
  gtk_accessible_update_property(GTK_ACCESSIBLE(row), GTK_ACCESSIBLE_PROPERTY_LABEL, label,
                                 GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description, -1);
  g_autofree char *tooltip =
    g_strdup_printf(_("%s\nDrag onto the grid, or press Enter to place it at the selected slot."), description);
  gtk_widget_set_tooltip_text(row, tooltip);

  GtkDragSource *drag = gtk_drag_source_new();
  gtk_drag_source_set_actions(drag, GDK_ACTION_COPY);
  g_signal_connect(drag, "prepare", G_CALLBACK(on_drag_prepare), NULL);
  g_signal_connect(drag, "drag-begin", G_CALLBACK(on_drag_begin), NULL);
  gtk_widget_add_controller(row, GTK_EVENT_CONTROLLER(drag));
  return row;
}

/* Rows in registry order, each group gathered where it first appears. */
static void populate(LoomPalette *self) {
  int n = loom_layer_type_count();
  g_autoptr(GPtrArray) groups = g_ptr_array_new();
  for (int i = 0; i < n; i++) {
    const char *group = loom_layer_type_group(loom_layer_type_at(i));
    if (!g_ptr_array_find_with_equal_func(groups, group, g_str_equal, NULL)) g_ptr_array_add(groups, (gpointer)group);
  }
  for (guint g = 0; g < groups->len; g++)
    for (int i = 0; i < n; i++) {
      const loom_layer_type *t = loom_layer_type_at(i);
      if (g_str_equal(loom_layer_type_group(t), g_ptr_array_index(groups, g)))
        gtk_list_box_append(self->list, make_row(t));
    }
}

static void on_row_activated(GtkListBox *list, GtkListBoxRow *row, LoomPalette *self) {
  g_signal_emit(self, signals[SIGNAL_LAYER_ACTIVATED], 0, loom_layer_type_name(row_type(row)));
}

static void on_search_changed(GtkSearchEntry *entry, LoomPalette *self) {
  /* Replacing the entry's text passes through "" and emits at once; ignore it. */
  if (self->syncing_entry) return;
  loom_palette_set_search_text(self, gtk_editable_get_text(GTK_EDITABLE(entry)));
}

static void on_stop_search(GtkSearchEntry *entry, LoomPalette *self) {
  gtk_editable_set_text(GTK_EDITABLE(entry), "");
}

/* The icons come from this widget's own resource, found through the theme so
 * that they recolour with the style (dark mode, selection). */
static void ensure_icon_path(GtkWidget *widget) {
  GdkDisplay *display = gtk_widget_get_display(widget);
  if (g_object_get_data(G_OBJECT(display), "loom-palette-icons")) return;
  gtk_icon_theme_add_resource_path(gtk_icon_theme_get_for_display(display), ICON_RESOURCE_PATH);
  g_object_set_data(G_OBJECT(display), "loom-palette-icons", GINT_TO_POINTER(1));
}

static void loom_palette_dispose(GObject *object) {
  LoomPalette *self = LOOM_PALETTE(object);
  g_clear_pointer(&self->search, gtk_widget_unparent);
  g_clear_pointer(&self->scroller, gtk_widget_unparent);
  G_OBJECT_CLASS(loom_palette_parent_class)->dispose(object);
}

static void loom_palette_finalize(GObject *object) {
  LoomPalette *self = LOOM_PALETTE(object);
  g_free(self->search_text);
  g_free(self->needle);
  G_OBJECT_CLASS(loom_palette_parent_class)->finalize(object);
}

static void loom_palette_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomPalette *self = LOOM_PALETTE(object);
  switch (prop_id) {
  case PROP_SEARCH_TEXT: g_value_set_string(value, loom_palette_get_search_text(self)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_palette_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  LoomPalette *self = LOOM_PALETTE(object);
  switch (prop_id) {
  case PROP_SEARCH_TEXT: loom_palette_set_search_text(self, g_value_get_string(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_palette_class_init(LoomPaletteClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = loom_palette_dispose;
  object_class->finalize = loom_palette_finalize;
  object_class->get_property = loom_palette_get_property;
  object_class->set_property = loom_palette_set_property;

  properties[PROP_SEARCH_TEXT] = g_param_spec_string("search-text", NULL, NULL, "",
                                                     G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                                                       G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  /* (const char *type_name): Enter or a double click on a row. */
  signals[SIGNAL_LAYER_ACTIVATED] = g_signal_new("layer-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                 NULL, NULL, NULL, G_TYPE_NONE, 1,
                                                 G_TYPE_STRING | G_SIGNAL_TYPE_STATIC_SCOPE);

  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "loompalette");
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
  loom_widgets_palette_register_resource();
}

static void loom_palette_init(LoomPalette *self) {
  self->search_text = g_strdup("");
  GtkLayoutManager *layout = gtk_widget_get_layout_manager(GTK_WIDGET(self));
  gtk_orientable_set_orientation(GTK_ORIENTABLE(layout), GTK_ORIENTATION_VERTICAL);
  ensure_icon_path(GTK_WIDGET(self));
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Layer types"), -1);

  self->search = gtk_search_entry_new();
  g_object_set(self->search, "placeholder-text", _("Search layer types"), NULL);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->search), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                 _("Search layer types"), -1);
  gtk_widget_set_margin_start(self->search, 6);
  gtk_widget_set_margin_end(self->search, 6);
  gtk_widget_set_margin_top(self->search, 6);
  gtk_widget_set_margin_bottom(self->search, 6);
  g_signal_connect(self->search, "search-changed", G_CALLBACK(on_search_changed), self);
  g_signal_connect(self->search, "stop-search", G_CALLBACK(on_stop_search), self);
  gtk_widget_set_parent(self->search, GTK_WIDGET(self));

  self->list = GTK_LIST_BOX(gtk_list_box_new());
  gtk_list_box_set_activate_on_single_click(self->list, FALSE);
  gtk_list_box_set_selection_mode(self->list, GTK_SELECTION_SINGLE);
  gtk_widget_add_css_class(GTK_WIDGET(self->list), "navigation-sidebar");
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->list), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Layer types"), -1);
  GtkWidget *placeholder = gtk_label_new(_("No layer type matches the search"));
  gtk_widget_add_css_class(placeholder, "dim-label");
  gtk_widget_set_margin_top(placeholder, 24);
  gtk_label_set_wrap(GTK_LABEL(placeholder), TRUE);
  gtk_list_box_set_placeholder(self->list, placeholder);
  gtk_list_box_set_filter_func(self->list, filter_row, self, NULL);
  gtk_list_box_set_header_func(self->list, update_header, NULL, NULL);
  g_signal_connect(self->list, "row-activated", G_CALLBACK(on_row_activated), self);
  populate(self);

  self->scroller = gtk_scrolled_window_new();
  gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(self->scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(self->scroller), GTK_WIDGET(self->list));
  gtk_widget_set_vexpand(self->scroller, TRUE);
  gtk_widget_set_parent(self->scroller, GTK_WIDGET(self));

  /* Typing anywhere in the palette goes to the search. */
  gtk_search_entry_set_key_capture_widget(GTK_SEARCH_ENTRY(self->search), GTK_WIDGET(self));
}

GtkWidget *loom_palette_new(void) {
  return g_object_new(LOOM_TYPE_PALETTE, NULL);
}

const char *loom_palette_get_search_text(LoomPalette *self) {
  g_return_val_if_fail(LOOM_IS_PALETTE(self), NULL);
  return self->search_text;
}

void loom_palette_set_search_text(LoomPalette *self, const char *text) {
  g_return_if_fail(LOOM_IS_PALETTE(self));
  if (!text) text = "";
  if (g_strcmp0(self->search_text, text) == 0) return;
  g_free(self->search_text);
  self->search_text = g_strdup(text);
  g_free(self->needle);
  g_autofree char *stripped = g_strstrip(g_strdup(text));
  self->needle = g_utf8_casefold(stripped, -1);
  if (g_strcmp0(gtk_editable_get_text(GTK_EDITABLE(self->search)), text) != 0) {
    self->syncing_entry = TRUE;
    gtk_editable_set_text(GTK_EDITABLE(self->search), text);
    self->syncing_entry = FALSE;
  }
  gtk_list_box_invalidate_filter(self->list);
  gtk_list_box_invalidate_headers(self->list);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SEARCH_TEXT]);
}

char **loom_palette_dup_visible_types(LoomPalette *self) {
  g_return_val_if_fail(LOOM_IS_PALETTE(self), NULL);
  g_autoptr(GStrvBuilder) names = g_strv_builder_new();
  for (GtkWidget *row = gtk_widget_get_first_child(GTK_WIDGET(self->list)); row;
       row = gtk_widget_get_next_sibling(row))
    if (GTK_IS_LIST_BOX_ROW(row) && row_type(GTK_LIST_BOX_ROW(row)) && gtk_widget_get_child_visible(row))
      g_strv_builder_add(names, loom_layer_type_name(row_type(GTK_LIST_BOX_ROW(row))));
  return g_strv_builder_end(names);
}
