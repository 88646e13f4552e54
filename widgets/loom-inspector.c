/* LoomInspector: a layer's parameters, dtype, sizes, shapes and problems. */
#include "loom-inspector-private.h"

#include "loom-format-private.h"

#include <glib/gi18n-lib.h>
#include <loom/dtype.h>

struct _LoomInspector {
  GtkWidget parent_instance;
  GtkWidget *stack;
  GtkWidget *title, *subtitle, *description;
  GtkWidget *diag_box;
  GtkWidget *params_box, *no_params;
  GtkSizeGroup *label_group;
  GPtrArray *rows; /* LoomParamRow*, one per parameter of `type` */
  GtkWidget *dtype_label, *dtype_drop;
  GtkStringList *dtype_model;
  GtkWidget *info_count, *info_size, *info_memory, *info_flops, *info_in, *info_out;
  GtkWidget *live_section; /* "Live Statistics" and the application's widget */
  GtkWidget *live;
  GBinding *live_binding;

  const loom_layer *layer;
  const loom_layer_type *type; /* the type the rows were built for */
  loom_coord at;
  size_t dtype_bytes[LOOM_DTYPE_COUNT];
  gboolean built;
  loom_diag *diags;
  int n_diags, n_shown;
  gboolean updating;
};

G_DEFINE_FINAL_TYPE(LoomInspector, loom_inspector, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_LAYER, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_PARAM_CHANGED, SIGNAL_FLOATS_CHANGED, SIGNAL_DTYPE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static const char css[] = ".loom-diagnostics { background-color: alpha(@error_color, 0.12);"
                          " border-radius: 8px; padding: 8px 10px; }\n"
                          "loominspector .loom-section { margin-top: 6px; }\n";

static GtkWidget *dim_label(const char *text) {
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_widget_add_css_class(label, "dim-label");
  return label;
}

static GtkWidget *heading(const char *text) {
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_widget_add_css_class(label, "heading");
  gtk_widget_add_css_class(label, "loom-section");
  return label;
}

/* ---- dtype drop-down -------------------------------------------------- */

static char *dtype_size_text(LoomInspector *self, loom_dtype d) {
  if (!self->built) return g_strdup(C_("size", "not built"));
  return g_format_size(self->dtype_bytes[d]);
}

static void dtype_setup(GtkSignalListItemFactory *f, GtkListItem *item, gpointer show_bits) {
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *name = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(name), 0);
  gtk_label_set_width_chars(GTK_LABEL(name), 8);
  gtk_box_append(GTK_BOX(box), name);
  if (show_bits) {
    GtkWidget *bits = dim_label(NULL);
    gtk_label_set_width_chars(GTK_LABEL(bits), 7);
    gtk_box_append(GTK_BOX(box), bits);
  }
  GtkWidget *size = dim_label(NULL);
  gtk_label_set_xalign(GTK_LABEL(size), 1);
  gtk_widget_set_hexpand(size, TRUE);
  gtk_box_append(GTK_BOX(box), size);
  gtk_list_item_set_child(item, box);
}

static void dtype_bind(GtkSignalListItemFactory *f, GtkListItem *item, LoomInspector *self) {
  loom_dtype d = (loom_dtype)gtk_list_item_get_position(item);
  const loom_dtype_traits *traits = loom_dtype_traits_get(d);
  if (!traits) return;
  GtkWidget *name = gtk_widget_get_first_child(gtk_list_item_get_child(item));
  GtkWidget *size = gtk_widget_get_last_child(gtk_list_item_get_child(item));
  gtk_label_set_text(GTK_LABEL(name), traits->name);
  g_autofree char *size_text = dtype_size_text(self, d);
  gtk_label_set_text(GTK_LABEL(size), size_text);
  GtkWidget *bits = gtk_widget_get_next_sibling(name);
  g_autofree char *bits_text = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%d bit", "%d bits", traits->bits),
                                               traits->bits);
  if (bits != size) gtk_label_set_text(GTK_LABEL(bits), bits_text);
  g_autofree char *a11y = g_strdup_printf(_("%s, %s, %s"), traits->name, bits_text, size_text);
  gtk_accessible_update_property(GTK_ACCESSIBLE(gtk_list_item_get_child(item)), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                 a11y, -1);
}

static GtkListItemFactory *dtype_factory(LoomInspector *self, gboolean show_bits) {
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
  g_signal_connect(factory, "setup", G_CALLBACK(dtype_setup), GINT_TO_POINTER(show_bits));
  g_signal_connect(factory, "bind", G_CALLBACK(dtype_bind), self);
  return factory;
}

static void on_dtype_selected(GtkDropDown *drop, GParamSpec *pspec, LoomInspector *self) {
  guint sel = gtk_drop_down_get_selected(drop);
  if (self->updating || !self->layer || sel == GTK_INVALID_LIST_POSITION) return;
  if ((loom_dtype)sel == loom_layer_get_dtype(self->layer)) return;
  g_signal_emit(self, signals[SIGNAL_DTYPE_CHANGED], 0, (int)sel);
}

/* Refills the model so every item is bound again with this layer's sizes. */
static void update_dtypes(LoomInspector *self) {
  const loom_layer *l = self->layer;
  self->built = loom_layer_is_built(l);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) self->dtype_bytes[d] = loom_layer_bytes_at(l, (loom_dtype)d);
  const char *names[LOOM_DTYPE_COUNT + 1];
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) names[d] = loom_dtype_name((loom_dtype)d);
  names[LOOM_DTYPE_COUNT] = NULL;
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->dtype_model));
  gtk_string_list_splice(self->dtype_model, 0, n, names);
  gtk_drop_down_set_selected(GTK_DROP_DOWN(self->dtype_drop), (guint)loom_layer_get_dtype(l));

  gboolean weighted = (loom_layer_type_flags(loom_layer_get_type(l)) & LOOM_LAYER_WEIGHTED) != 0;
  gtk_widget_set_sensitive(self->dtype_drop, weighted);
  gtk_widget_set_tooltip_text(self->dtype_drop, weighted ? _("The type the weights are stored and computed at")
                                                         : _("This layer has no weights"));
}

/* ---- parameters ------------------------------------------------------- */

static void on_row_value(LoomParamRow *row, const loom_param_value *v, LoomInspector *self) {
  guint index;
  if (self->updating || !g_ptr_array_find(self->rows, row, &index)) return;
  g_signal_emit(self, signals[SIGNAL_PARAM_CHANGED], 0, index, v);
}

static void on_row_floats(LoomParamRow *row, GBytes *values, LoomInspector *self) {
  guint index;
  if (self->updating || !g_ptr_array_find(self->rows, row, &index)) return;
  g_signal_emit(self, signals[SIGNAL_FLOATS_CHANGED], 0, index, values);
}

static void rebuild_rows(LoomInspector *self, const loom_layer_type *t) {
  for (guint i = 0; i < self->rows->len; i++) {
    GtkWidget *row = g_ptr_array_index(self->rows, i);
    gtk_size_group_remove_widget(self->label_group, loom_param_row_get_label(LOOM_PARAM_ROW(row)));
    gtk_box_remove(GTK_BOX(self->params_box), row);
  }
  g_ptr_array_set_size(self->rows, 0);
  int n = loom_layer_type_n_params(t);
  for (int i = 0; i < n; i++) {
    GtkWidget *row = loom_param_row_new(loom_layer_type_param(t, i));
    gtk_size_group_add_widget(self->label_group, loom_param_row_get_label(LOOM_PARAM_ROW(row)));
    g_signal_connect(row, "value-changed", G_CALLBACK(on_row_value), self);
    g_signal_connect(row, "floats-changed", G_CALLBACK(on_row_floats), self);
    gtk_box_append(GTK_BOX(self->params_box), row);
    g_ptr_array_add(self->rows, row);
  }
  gtk_widget_set_visible(self->no_params, n == 0);
  self->type = t;
}

static void sync_rows(LoomInspector *self) {
  for (guint i = 0; i < self->rows->len; i++) {
    LoomParamRow *row = g_ptr_array_index(self->rows, i);
    const loom_param_spec *spec = loom_param_row_get_spec(row);
    loom_param_value v = loom_layer_get_value(self->layer, (int)i);
    int64_t n = 0;
    const float *floats = spec->kind == LOOM_PARAM_FLOATS ? loom_layer_get_floats(self->layer, spec->name, &n) : NULL;
    loom_param_row_set_value(row, &v, floats, n);
  }
}

/* ---- summary and diagnostics ------------------------------------------ */

static void update_info(LoomInspector *self) {
  const loom_layer *l = self->layer;
  const loom_layer_type *t = loom_layer_get_type(l);
  char where[64], desc[256], shape[96];
  gtk_label_set_text(GTK_LABEL(self->title), loom_layer_type_label(t));
  g_autofree char *sub = g_strdup_printf(_("%s at %s"), loom_layer_describe(l, desc, sizeof desc),
                                         loom_coord_format(self->at, where, sizeof where));
  gtk_label_set_text(GTK_LABEL(self->subtitle), sub);
  gtk_label_set_text(GTK_LABEL(self->description), loom_layer_type_description(t));

  g_autofree char *count = loom_format_count(loom_layer_param_count(l));
  gtk_label_set_text(GTK_LABEL(self->info_count), count);
  g_autofree char *size = loom_format_memory(loom_layer_bytes(l), loom_layer_bytes_at(l, LOOM_DTYPE_FLOAT32));
  gtk_label_set_text(GTK_LABEL(self->info_size), self->built ? size : C_("size", "not built"));
  /* What the weights hold in memory (docs/dtypes.md, "At rest"): now, with
   * only the packed codes (inference), and with masters and gradients. */
  g_autofree char *now = g_format_size(loom_layer_resident_bytes(l));
  g_autofree char *rest = g_format_size(loom_layer_inference_bytes(l));
  g_autofree char *training = g_format_size(loom_layer_training_bytes(l));
  /* Translators: the inspector's memory row: bytes held now, at rest for inference, while training. */
  g_autofree char *memory = g_strdup_printf(_("%s now · %s at rest · %s training"), now, rest, training);
  gtk_label_set_text(GTK_LABEL(self->info_memory), self->built ? memory : C_("size", "not built"));
  gtk_label_set_wrap(GTK_LABEL(self->info_memory), TRUE);
  g_autofree char *flops = loom_format_flops(loom_layer_flops(l));
  gtk_label_set_text(GTK_LABEL(self->info_flops), flops);
  loom_shape in = loom_layer_in_shape(l), out = loom_layer_out_shape(l);
  gtk_label_set_text(GTK_LABEL(self->info_in), loom_shape_format(&in, shape, sizeof shape));
  gtk_label_set_text(GTK_LABEL(self->info_out), loom_shape_format(&out, shape, sizeof shape));
}

static void update_diagnostics(LoomInspector *self) {
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child(self->diag_box))) gtk_box_remove(GTK_BOX(self->diag_box), child);
  self->n_shown = 0;
  for (int i = 0; self->layer && i < self->n_diags; i++) {
    const loom_diag *d = &self->diags[i];
    if (!loom_coord_equal(d->at, self->at) && !(d->has_other && loom_coord_equal(d->other, self->at))) continue;
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
    GtkWidget *icon = gtk_image_new_from_icon_name("dialog-error-symbolic");
    gtk_widget_set_valign(icon, GTK_ALIGN_START);
    gtk_widget_add_css_class(icon, "error");
    gtk_accessible_update_state(GTK_ACCESSIBLE(icon), GTK_ACCESSIBLE_STATE_HIDDEN, TRUE, -1);
    GtkWidget *label = gtk_label_new(d->message);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_wrap(GTK_LABEL(label), TRUE);
    gtk_label_set_wrap_mode(GTK_LABEL(label), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_selectable(GTK_LABEL(label), TRUE);
    gtk_widget_set_hexpand(label, TRUE);
    gtk_box_append(GTK_BOX(row), icon);
    gtk_box_append(GTK_BOX(row), label);
    gtk_box_append(GTK_BOX(self->diag_box), row);
    self->n_shown++;
  }
  gtk_widget_set_visible(self->diag_box, self->n_shown > 0);
}

/* ---- construction ----------------------------------------------------- */

static void attach_info(GtkGrid *grid, int row, const char *key, GtkWidget **value) {
  GtkWidget *k = dim_label(key);
  *value = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(*value), 0);
  gtk_label_set_selectable(GTK_LABEL(*value), TRUE);
  gtk_label_set_wrap(GTK_LABEL(*value), TRUE);
  gtk_widget_set_hexpand(*value, TRUE);
  gtk_accessible_update_relation(GTK_ACCESSIBLE(*value), GTK_ACCESSIBLE_RELATION_LABELLED_BY, k, NULL, -1);
  gtk_grid_attach(grid, k, 0, row, 1, 1);
  gtk_grid_attach(grid, *value, 1, row, 1, 1);
}

static GtkWidget *build_page(LoomInspector *self) {
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 10);
  gtk_widget_set_margin_start(box, 12);
  gtk_widget_set_margin_end(box, 12);
  gtk_widget_set_margin_top(box, 12);
  gtk_widget_set_margin_bottom(box, 12);

  self->title = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(self->title), 0);
  gtk_label_set_wrap(GTK_LABEL(self->title), TRUE);
  gtk_widget_add_css_class(self->title, "title-4");
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->title), GTK_ACCESSIBLE_PROPERTY_LEVEL, 2, -1);
  self->subtitle = dim_label(NULL);
  gtk_label_set_wrap(GTK_LABEL(self->subtitle), TRUE);
  gtk_label_set_selectable(GTK_LABEL(self->subtitle), TRUE);
  self->description = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(self->description), 0);
  gtk_label_set_wrap(GTK_LABEL(self->description), TRUE);
  gtk_widget_add_css_class(self->description, "caption");
  gtk_box_append(GTK_BOX(box), self->title);
  gtk_box_append(GTK_BOX(box), self->subtitle);
  gtk_box_append(GTK_BOX(box), self->description);

  self->diag_box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
  gtk_widget_add_css_class(self->diag_box, "loom-diagnostics");
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->diag_box), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                 _("Problems at this slot"), -1);
  gtk_widget_set_visible(self->diag_box, FALSE);
  gtk_box_append(GTK_BOX(box), self->diag_box);

  /* First after the title: while a layer trains its parameters cannot
   * change, and what it does is the news. */
  self->live_section = gtk_box_new(GTK_ORIENTATION_VERTICAL, 10);
  gtk_box_append(GTK_BOX(self->live_section), heading(_("Live Statistics")));
  gtk_widget_set_visible(self->live_section, FALSE);
  gtk_box_append(GTK_BOX(box), self->live_section);

  gtk_box_append(GTK_BOX(box), heading(_("Parameters")));
  self->params_box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8);
  self->no_params = dim_label(_("This layer type has no parameters."));
  gtk_box_append(GTK_BOX(self->params_box), self->no_params);
  gtk_box_append(GTK_BOX(box), self->params_box);

  gtk_box_append(GTK_BOX(box), heading(_("Weights")));
  GtkWidget *dtype_row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
  self->dtype_label = gtk_label_new_with_mnemonic(_("_Data type"));
  gtk_label_set_xalign(GTK_LABEL(self->dtype_label), 0);
  gtk_size_group_add_widget(self->label_group, self->dtype_label);
  self->dtype_model = gtk_string_list_new(NULL);
  self->dtype_drop = gtk_drop_down_new(G_LIST_MODEL(self->dtype_model), NULL);
  g_autoptr(GtkListItemFactory) button_factory = dtype_factory(self, FALSE);
  g_autoptr(GtkListItemFactory) list_factory = dtype_factory(self, TRUE);
  gtk_drop_down_set_factory(GTK_DROP_DOWN(self->dtype_drop), button_factory);
  gtk_drop_down_set_list_factory(GTK_DROP_DOWN(self->dtype_drop), list_factory);
  gtk_widget_set_hexpand(self->dtype_drop, TRUE);
  gtk_label_set_mnemonic_widget(GTK_LABEL(self->dtype_label), self->dtype_drop);
  gtk_accessible_update_relation(GTK_ACCESSIBLE(self->dtype_drop), GTK_ACCESSIBLE_RELATION_LABELLED_BY,
                                 self->dtype_label, NULL, -1);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->dtype_drop), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                 _("Each data type with its bits per value and the layer's size at it"), -1);
  g_signal_connect(self->dtype_drop, "notify::selected", G_CALLBACK(on_dtype_selected), self);
  gtk_box_append(GTK_BOX(dtype_row), self->dtype_label);
  gtk_box_append(GTK_BOX(dtype_row), self->dtype_drop);
  gtk_box_append(GTK_BOX(box), dtype_row);

  GtkWidget *info = gtk_grid_new();
  gtk_grid_set_column_spacing(GTK_GRID(info), 12);
  gtk_grid_set_row_spacing(GTK_GRID(info), 4);
  attach_info(GTK_GRID(info), 0, _("Parameters"), &self->info_count);
  attach_info(GTK_GRID(info), 1, _("Size"), &self->info_size);
  attach_info(GTK_GRID(info), 2, _("In memory"), &self->info_memory);
  attach_info(GTK_GRID(info), 3, _("FLOPs per sample"), &self->info_flops);
  attach_info(GTK_GRID(info), 4, _("Input shape"), &self->info_in);
  attach_info(GTK_GRID(info), 5, _("Output shape"), &self->info_out);
  gtk_box_append(GTK_BOX(box), info);

  GtkWidget *scroller = gtk_scrolled_window_new();
  gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroller), box);
  return scroller;
}

void loom_inspector_set_live_widget(LoomInspector *self, GtkWidget *widget) {
  g_return_if_fail(LOOM_IS_INSPECTOR(self));
  g_return_if_fail(widget == NULL || GTK_IS_WIDGET(widget));
  if (self->live == widget) return;
  if (self->live_binding) g_binding_unbind(self->live_binding);
  self->live_binding = NULL;
  if (self->live) gtk_box_remove(GTK_BOX(self->live_section), self->live);
  self->live = widget;
  if (widget) {
    gtk_box_append(GTK_BOX(self->live_section), widget);
    /* The section shows while the widget does: it hides itself when it has
     * nothing to say. */
    self->live_binding = g_object_bind_property(widget, "visible", self->live_section, "visible", G_BINDING_SYNC_CREATE);
  } else {
    gtk_widget_set_visible(self->live_section, FALSE);
  }
}

static void ensure_css(GtkWidget *widget) {
  GdkDisplay *display = gtk_widget_get_display(widget);
  if (g_object_get_data(G_OBJECT(display), "loom-inspector-css")) return;
  g_autoptr(GtkCssProvider) provider = gtk_css_provider_new();
  gtk_css_provider_load_from_data(provider, css, -1);
  gtk_style_context_add_provider_for_display(display, GTK_STYLE_PROVIDER(provider),
                                             GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  g_object_set_data(G_OBJECT(display), "loom-inspector-css", GINT_TO_POINTER(1));
}

static void loom_inspector_dispose(GObject *object) {
  LoomInspector *self = LOOM_INSPECTOR(object);
  g_clear_pointer(&self->stack, gtk_widget_unparent);
  G_OBJECT_CLASS(loom_inspector_parent_class)->dispose(object);
}

static void loom_inspector_finalize(GObject *object) {
  LoomInspector *self = LOOM_INSPECTOR(object);
  g_ptr_array_unref(self->rows);
  g_object_unref(self->label_group);
  g_free(self->diags);
  G_OBJECT_CLASS(loom_inspector_parent_class)->finalize(object);
}

static void loom_inspector_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  switch (prop_id) {
  case PROP_LAYER: g_value_set_pointer(value, (gpointer)LOOM_INSPECTOR(object)->layer); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_inspector_class_init(LoomInspectorClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = loom_inspector_dispose;
  object_class->finalize = loom_inspector_finalize;
  object_class->get_property = loom_inspector_get_property;

  /* The shown layer (const loom_layer *, borrowed); set with loom_inspector_set_layer. */
  properties[PROP_LAYER] =
    g_param_spec_pointer("layer", NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  /* (guint index, const loom_param_value *value): valid during the emission. */
  signals[SIGNAL_PARAM_CHANGED] = g_signal_new("param-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                               NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_POINTER);
  /* (guint index, GBytes *values): float32 values of a LOOM_PARAM_FLOATS parameter. */
  signals[SIGNAL_FLOATS_CHANGED] = g_signal_new("floats-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_BYTES);
  /* (int dtype): a loom_dtype. */
  signals[SIGNAL_DTYPE_CHANGED] = g_signal_new("dtype-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                               NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);

  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "loominspector");
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void loom_inspector_init(LoomInspector *self) {
  self->rows = g_ptr_array_new();
  self->label_group = gtk_size_group_new(GTK_SIZE_GROUP_HORIZONTAL);
  ensure_css(GTK_WIDGET(self));
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Layer inspector"), -1);

  self->stack = gtk_stack_new();
  GtkWidget *empty = dim_label(_("Select a layer to see its parameters."));
  gtk_label_set_xalign(GTK_LABEL(empty), 0.5);
  gtk_label_set_wrap(GTK_LABEL(empty), TRUE);
  gtk_label_set_justify(GTK_LABEL(empty), GTK_JUSTIFY_CENTER);
  gtk_widget_set_margin_start(empty, 24);
  gtk_widget_set_margin_end(empty, 24);
  gtk_stack_add_named(GTK_STACK(self->stack), empty, "empty");
  gtk_stack_add_named(GTK_STACK(self->stack), build_page(self), "layer");
  gtk_stack_set_visible_child_name(GTK_STACK(self->stack), "empty");
  gtk_widget_set_parent(self->stack, GTK_WIDGET(self));
}

GtkWidget *loom_inspector_new(void) {
  return g_object_new(LOOM_TYPE_INSPECTOR, NULL);
}

void loom_inspector_set_layer(LoomInspector *self, const loom_layer *layer, loom_coord at) {
  g_return_if_fail(LOOM_IS_INSPECTOR(self));
  gboolean changed = self->layer != layer;
  self->layer = layer;
  self->at = at;
  self->updating = TRUE;
  if (layer) {
    const loom_layer_type *t = loom_layer_get_type(layer);
    if (t != self->type) rebuild_rows(self, t);
    sync_rows(self);
    update_dtypes(self);
    update_info(self);
  }
  update_diagnostics(self);
  self->updating = FALSE;
  gtk_stack_set_visible_child_name(GTK_STACK(self->stack), layer ? "layer" : "empty");
  if (changed) g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_LAYER]);
}

const loom_layer *loom_inspector_get_layer(LoomInspector *self) {
  g_return_val_if_fail(LOOM_IS_INSPECTOR(self), NULL);
  return self->layer;
}

void loom_inspector_set_diagnostics(LoomInspector *self, const loom_diag *diags, int n_diags) {
  g_return_if_fail(LOOM_IS_INSPECTOR(self) && n_diags >= 0 && (diags || n_diags == 0));
  g_free(self->diags);
  self->diags = n_diags ? g_memdup2(diags, sizeof *diags * (gsize)n_diags) : NULL;
  self->n_diags = n_diags;
  update_diagnostics(self);
}

int loom_inspector_get_n_param_rows(LoomInspector *self) {
  return (int)self->rows->len;
}

LoomParamRow *loom_inspector_get_param_row(LoomInspector *self, int index) {
  return index >= 0 && (guint)index < self->rows->len ? g_ptr_array_index(self->rows, index) : NULL;
}

GtkDropDown *loom_inspector_get_dtype_drop_down(LoomInspector *self) {
  return GTK_DROP_DOWN(self->dtype_drop);
}

const char *loom_inspector_get_memory_text(LoomInspector *self) {
  g_return_val_if_fail(LOOM_IS_INSPECTOR(self), NULL);
  return gtk_label_get_text(GTK_LABEL(self->info_memory));
}

int loom_inspector_get_n_shown_diagnostics(LoomInspector *self) {
  return self->n_shown;
}
