/* LoomLinkList: a network's remote links, with merge mode, errors and delete. */
#include "loom-link-list.h"

#include <glib/gi18n-lib.h>

struct _LoomLinkList {
  GtkWidget parent_instance;
  GtkListBox *list;
  GtkSizeGroup *merge_group; /* the drop-downs line up whatever their text */
  GPtrArray *errors; /* char* per link, NULL when valid */
  int selected;
  gboolean updating;
};

G_DEFINE_FINAL_TYPE(LoomLinkList, loom_link_list, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_SELECTED, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_LINK_SELECTED, SIGNAL_MERGE_CHANGED, SIGNAL_DELETE_REQUESTED, N_SIGNALS };
static guint signals[N_SIGNALS];

#define INDEX_KEY "loom-link-index"

/* Display names in loom_merge order. */
static const char *merge_labels[] = {N_("Replace"), N_("Add"), N_("Concatenate")};

static int row_link(GtkWidget *widget) {
  return GPOINTER_TO_INT(g_object_get_data(G_OBJECT(widget), INDEX_KEY)) - 1;
}

/*
 * loom_net_check_link judges a link about to be added, so for a link already
 * in the net it always finds "a duplicate": itself. When every other rule
 * holds and the net has this (source, destination) pair once, that finding
 * is the link itself and not a problem.
 */
static gboolean only_finds_itself(const loom_net *net, const loom_link *link) {
  int64_t fs = loom_net_flat_index(net, link->src), fd = loom_net_flat_index(net, link->dst);
  if (fs < 0 || fd < 0 || fs >= fd || !loom_merge_name(link->merge) || !loom_net_layer_at(net, link->src) ||
      !loom_net_layer_at(net, link->dst))
    return FALSE;
  int same = 0;
  for (int i = 0; i < loom_net_n_links(net); i++) {
    const loom_link *o = loom_net_link(net, i);
    same += loom_net_flat_index(net, o->src) == fs && loom_net_flat_index(net, o->dst) == fd;
  }
  return same == 1;
}

/* Why the link is invalid, from the engine's checks and the inference. */
static char *link_problem(const loom_net *net, const loom_link *link, const loom_diag *diags, int n_diags) {
  GString *why = g_string_new(NULL);
  loom_error err = {0};
  if (loom_net_check_link(net, link, &err) < 0 && !only_finds_itself(net, link)) g_string_append(why, err.message);
  for (int i = 0; i < n_diags; i++) {
    const loom_diag *d = &diags[i];
    if (!d->has_other) continue;
    if ((loom_coord_equal(d->at, link->dst) && loom_coord_equal(d->other, link->src)) ||
        (loom_coord_equal(d->at, link->src) && loom_coord_equal(d->other, link->dst))) {
      if (why->len) g_string_append_c(why, '\n');
      g_string_append(why, d->message);
    }
  }
  if (why->len) return g_string_free(why, FALSE);
  g_string_free(why, TRUE);
  return NULL;
}

static void on_merge_selected(GtkDropDown *drop, GParamSpec *pspec, LoomLinkList *self) {
  guint sel = gtk_drop_down_get_selected(drop);
  if (self->updating || sel == GTK_INVALID_LIST_POSITION) return;
  g_signal_emit(self, signals[SIGNAL_MERGE_CHANGED], 0, row_link(GTK_WIDGET(drop)), (int)sel);
}

static void on_delete_clicked(GtkButton *button, LoomLinkList *self) {
  g_signal_emit(self, signals[SIGNAL_DELETE_REQUESTED], 0, row_link(GTK_WIDGET(button)));
}

static GtkWidget *make_row(LoomLinkList *self, int index, const loom_link *link, const char *problem) {
  char src[64], dst[64];
  loom_coord_format(link->src, src, sizeof src);
  loom_coord_format(link->dst, dst, sizeof dst);
  gpointer key = GINT_TO_POINTER(index + 1);

  GtkWidget *status = gtk_image_new_from_icon_name(problem ? "dialog-error-symbolic" : "emblem-ok-symbolic");
  if (problem) {
    gtk_widget_add_css_class(status, "error");
    gtk_widget_set_tooltip_text(status, problem);
    gtk_accessible_update_property(GTK_ACCESSIBLE(status), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Invalid link"),
                                   GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, problem, -1);
  } else {
    gtk_widget_add_css_class(status, "dim-label");
    gtk_widget_set_tooltip_text(status, _("The link is valid"));
    gtk_accessible_update_state(GTK_ACCESSIBLE(status), GTK_ACCESSIBLE_STATE_HIDDEN, TRUE, -1);
  }

  /* TRANSLATORS: a link from one grid slot to another, "(0,0,1,0) → (0,1,0,0)" */
  g_autofree char *text = g_strdup_printf(_("%s → %s"), src, dst);
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  /* In a narrow column the destination goes onto a second line rather than
   * being cut off: both ends of a link matter. */
  gtk_label_set_wrap(GTK_LABEL(label), TRUE);
  gtk_label_set_wrap_mode(GTK_LABEL(label), PANGO_WRAP_WORD_CHAR);
  gtk_widget_set_hexpand(label, TRUE);
  gtk_widget_add_css_class(label, "numeric");

  const char *merges[G_N_ELEMENTS(merge_labels) + 1];
  for (gsize i = 0; i < G_N_ELEMENTS(merge_labels); i++) merges[i] = _(merge_labels[i]);
  merges[G_N_ELEMENTS(merge_labels)] = NULL;
  GtkWidget *merge = gtk_drop_down_new_from_strings(merges);
  gtk_widget_set_valign(merge, GTK_ALIGN_CENTER);
  gtk_drop_down_set_selected(GTK_DROP_DOWN(merge), (guint)link->merge);
  gtk_size_group_add_widget(self->merge_group, merge);
  g_object_set_data(G_OBJECT(merge), INDEX_KEY, key);
  g_autofree char *merge_name = g_strdup_printf(_("Merge mode of the link %s"), text);
  gtk_accessible_update_property(GTK_ACCESSIBLE(merge), GTK_ACCESSIBLE_PROPERTY_LABEL, merge_name, -1);
  gtk_widget_set_tooltip_text(merge, _("How the hop combines with the destination's spine input"));
  g_signal_connect(merge, "notify::selected", G_CALLBACK(on_merge_selected), self);

  GtkWidget *del = gtk_button_new_from_icon_name("user-trash-symbolic");
  gtk_widget_set_valign(del, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class(del, "flat");
  gtk_widget_set_tooltip_text(del, _("Remove Link"));
  g_autofree char *del_name = g_strdup_printf(_("Remove the link %s"), text);
  gtk_accessible_update_property(GTK_ACCESSIBLE(del), GTK_ACCESSIBLE_PROPERTY_LABEL, del_name, -1);
  g_object_set_data(G_OBJECT(del), INDEX_KEY, key);
  g_signal_connect(del, "clicked", G_CALLBACK(on_delete_clicked), self);

  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_set_margin_start(box, 8);
  gtk_widget_set_margin_end(box, 4);
  gtk_widget_set_margin_top(box, 4);
  gtk_widget_set_margin_bottom(box, 4);
  gtk_box_append(GTK_BOX(box), status);
  gtk_box_append(GTK_BOX(box), label);
  gtk_box_append(GTK_BOX(box), merge);
  gtk_box_append(GTK_BOX(box), del);

  GtkWidget *row = gtk_list_box_row_new();
  gtk_list_box_row_set_child(GTK_LIST_BOX_ROW(row), box);
  g_object_set_data(G_OBJECT(row), INDEX_KEY, key);
  g_autofree char *row_name =
    problem ? g_strdup_printf(_("Link %s, invalid: %s"), text, problem) : g_strdup_printf(_("Link %s"), text);
  gtk_accessible_update_property(GTK_ACCESSIBLE(row), GTK_ACCESSIBLE_PROPERTY_LABEL, row_name, -1);
  return row;
}

static void on_row_selected(GtkListBox *list, GtkListBoxRow *row, LoomLinkList *self) {
  int index = row ? row_link(GTK_WIDGET(row)) : -1;
  if (index == self->selected) return;
  self->selected = index;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SELECTED]);
  if (!self->updating) g_signal_emit(self, signals[SIGNAL_LINK_SELECTED], 0, index);
}

static gboolean on_delete_key(GtkWidget *widget, GVariant *args, gpointer data) {
  LoomLinkList *self = LOOM_LINK_LIST(widget);
  if (self->selected < 0) return FALSE;
  g_signal_emit(self, signals[SIGNAL_DELETE_REQUESTED], 0, self->selected);
  return TRUE;
}

/* boxed-list rows show no selection of their own; the selected link must be visible. */
static void ensure_css(GtkWidget *widget) {
  GdkDisplay *display = gtk_widget_get_display(widget);
  if (g_object_get_data(G_OBJECT(display), "loom-link-list-css")) return;
  g_autoptr(GtkCssProvider) provider = gtk_css_provider_new();
  gtk_css_provider_load_from_data(provider, "loomlinklist list > row:selected { background-color: alpha(@theme_selected_bg_color, 0.25); }", -1);
  gtk_style_context_add_provider_for_display(display, GTK_STYLE_PROVIDER(provider),
                                             GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  g_object_set_data(G_OBJECT(display), "loom-link-list-css", GINT_TO_POINTER(1));
}

static void loom_link_list_dispose(GObject *object) {
  LoomLinkList *self = LOOM_LINK_LIST(object);
  if (self->list) gtk_widget_unparent(GTK_WIDGET(self->list));
  self->list = NULL;
  G_OBJECT_CLASS(loom_link_list_parent_class)->dispose(object);
}

static void loom_link_list_finalize(GObject *object) {
  g_ptr_array_unref(LOOM_LINK_LIST(object)->errors);
  g_object_unref(LOOM_LINK_LIST(object)->merge_group);
  G_OBJECT_CLASS(loom_link_list_parent_class)->finalize(object);
}

static void loom_link_list_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  switch (prop_id) {
  case PROP_SELECTED: g_value_set_int(value, LOOM_LINK_LIST(object)->selected); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_link_list_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  switch (prop_id) {
  case PROP_SELECTED: loom_link_list_set_selected(LOOM_LINK_LIST(object), g_value_get_int(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_link_list_class_init(LoomLinkListClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = loom_link_list_dispose;
  object_class->finalize = loom_link_list_finalize;
  object_class->get_property = loom_link_list_get_property;
  object_class->set_property = loom_link_list_set_property;

  properties[PROP_SELECTED] = g_param_spec_int("selected", NULL, NULL, -1, G_MAXINT, -1,
                                               G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  /* (int index): the user selected a link; -1 when the selection was cleared. */
  signals[SIGNAL_LINK_SELECTED] = g_signal_new("link-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                               NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
  /* (int index, int merge): a loom_merge chosen for link index. */
  signals[SIGNAL_MERGE_CHANGED] = g_signal_new("merge-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                               NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
  /* (int index): the delete button or the Delete key. */
  signals[SIGNAL_DELETE_REQUESTED] = g_signal_new("link-delete-requested", G_TYPE_FROM_CLASS(klass),
                                                  G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);

  gtk_widget_class_add_binding(widget_class, GDK_KEY_Delete, 0, on_delete_key, NULL);
  gtk_widget_class_add_binding(widget_class, GDK_KEY_KP_Delete, 0, on_delete_key, NULL);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "loomlinklist");
}

static void loom_link_list_init(LoomLinkList *self) {
  self->selected = -1;
  self->errors = g_ptr_array_new_with_free_func(g_free);
  self->merge_group = gtk_size_group_new(GTK_SIZE_GROUP_HORIZONTAL);
  ensure_css(GTK_WIDGET(self));
  self->list = GTK_LIST_BOX(gtk_list_box_new());
  gtk_list_box_set_selection_mode(self->list, GTK_SELECTION_SINGLE);
  gtk_widget_add_css_class(GTK_WIDGET(self->list), "boxed-list");
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->list), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Links"), -1);
  GtkWidget *placeholder = gtk_label_new(_("No links"));
  gtk_widget_add_css_class(placeholder, "dim-label");
  gtk_widget_set_margin_top(placeholder, 12);
  gtk_widget_set_margin_bottom(placeholder, 12);
  gtk_list_box_set_placeholder(self->list, placeholder);
  g_signal_connect(self->list, "row-selected", G_CALLBACK(on_row_selected), self);
  gtk_widget_set_parent(GTK_WIDGET(self->list), GTK_WIDGET(self));
}

GtkWidget *loom_link_list_new(void) {
  return g_object_new(LOOM_TYPE_LINK_LIST, NULL);
}

void loom_link_list_set_net(LoomLinkList *self, const loom_net *net, const loom_diag *diags, int n_diags) {
  g_return_if_fail(LOOM_IS_LINK_LIST(self));
  int keep = self->selected;
  self->updating = TRUE;
  GtkListBoxRow *old;
  while ((old = gtk_list_box_get_row_at_index(self->list, 0))) gtk_list_box_remove(self->list, GTK_WIDGET(old));
  g_ptr_array_set_size(self->errors, 0);
  int n = net ? loom_net_n_links(net) : 0;
  for (int i = 0; i < n; i++) {
    const loom_link *link = loom_net_link(net, i);
    char *problem = link_problem(net, link, diags, n_diags);
    g_ptr_array_add(self->errors, problem);
    gtk_list_box_append(self->list, make_row(self, i, link, problem));
  }
  self->updating = FALSE;
  /* Removing the rows cleared the selection; restore it quietly. */
  loom_link_list_set_selected(self, keep < n ? keep : -1);
}

int loom_link_list_get_selected(LoomLinkList *self) {
  g_return_val_if_fail(LOOM_IS_LINK_LIST(self), -1);
  return self->selected;
}

void loom_link_list_set_selected(LoomLinkList *self, int index) {
  g_return_if_fail(LOOM_IS_LINK_LIST(self));
  GtkListBoxRow *row = index >= 0 ? gtk_list_box_get_row_at_index(self->list, index) : NULL;
  self->updating = TRUE;
  if (row)
    gtk_list_box_select_row(self->list, row);
  else
    gtk_list_box_unselect_all(self->list);
  self->updating = FALSE;
  int now = row ? index : -1;
  if (now != self->selected) {
    self->selected = now;
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SELECTED]);
  }
}

int loom_link_list_get_n_links(LoomLinkList *self) {
  g_return_val_if_fail(LOOM_IS_LINK_LIST(self), 0);
  return (int)self->errors->len;
}

const char *loom_link_list_get_link_error(LoomLinkList *self, int index) {
  g_return_val_if_fail(LOOM_IS_LINK_LIST(self), NULL);
  return index >= 0 && (guint)index < self->errors->len ? g_ptr_array_index(self->errors, index) : NULL;
}
