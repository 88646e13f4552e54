/* LoomExampleGallery: the built-in examples, one activatable row each. */
#include "loom-example-gallery.h"

#include <glib/gi18n.h>
#include <loom/model.h>

struct _LoomExampleGallery {
  AdwWindow parent_instance;
  GtkListBox *list;
};

G_DEFINE_FINAL_TYPE(LoomExampleGallery, loom_example_gallery, ADW_TYPE_WINDOW)

enum { SIGNAL_EXAMPLE_CHOSEN, N_SIGNALS };
static guint signals[N_SIGNALS];

void loom_example_gallery_choose(LoomExampleGallery *self, int index) {
  g_return_if_fail(LOOM_IS_EXAMPLE_GALLERY(self));
  const char *name = loom_example_name(index);
  g_return_if_fail(name != NULL);
  g_object_ref(self);
  g_signal_emit(self, signals[SIGNAL_EXAMPLE_CHOSEN], 0, name);
  gtk_window_close(GTK_WINDOW(self));
  g_object_unref(self);
}

static void on_row_activated(LoomExampleGallery *self, GtkListBoxRow *row) {
  loom_example_gallery_choose(self, gtk_list_box_row_get_index(row));
}

static void loom_example_gallery_class_init(LoomExampleGalleryClass *klass) {
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  /* (const char *name): a loom_example_name. */
  signals[SIGNAL_EXAMPLE_CHOSEN] = g_signal_new("example-chosen", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/org/loomworkbench/Workbench/loom-example-gallery.ui");
  gtk_widget_class_bind_template_child(widget_class, LoomExampleGallery, list);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void loom_example_gallery_init(LoomExampleGallery *self) {
  gtk_widget_init_template(GTK_WIDGET(self));
  for (int i = 0; i < loom_example_count(); i++) {
    GtkWidget *row = adw_action_row_new();
    adw_preferences_row_set_title(ADW_PREFERENCES_ROW(row), loom_example_title(i));
    adw_action_row_set_subtitle(ADW_ACTION_ROW(row), loom_example_description(i));
    gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), TRUE);
    GtkWidget *arrow = gtk_image_new_from_icon_name("go-next-symbolic");
    gtk_accessible_update_state(GTK_ACCESSIBLE(arrow), GTK_ACCESSIBLE_STATE_HIDDEN, TRUE, -1);
    adw_action_row_add_suffix(ADW_ACTION_ROW(row), arrow);
    gtk_list_box_append(self->list, row);
  }
  g_signal_connect_swapped(self->list, "row-activated", G_CALLBACK(on_row_activated), self);
}

LoomExampleGallery *loom_example_gallery_new(GtkWindow *parent) {
  return g_object_new(LOOM_TYPE_EXAMPLE_GALLERY, "transient-for", parent, NULL);
}
