#include "loom-wheel-guard.h"

#include <math.h>

static gboolean has_focus_within(GtkWidget *widget) {
  GtkRoot *root = gtk_widget_get_root(widget);
  GtkWidget *focus = root ? gtk_root_get_focus(root) : NULL;
  return focus && (focus == widget || gtk_widget_is_ancestor(focus, widget));
}

/* Runs in the capture phase, before the widget's own scroll handler. */
static gboolean on_scroll(GtkEventControllerScroll *scroll, double dx, double dy, gpointer data) {
  GtkWidget *widget = gtk_event_controller_get_widget(GTK_EVENT_CONTROLLER(scroll));
  if (has_focus_within(widget)) return GDK_EVENT_PROPAGATE; /* the user is editing it */
  GtkWidget *page = gtk_widget_get_ancestor(widget, GTK_TYPE_SCROLLED_WINDOW);
  if (!page) return GDK_EVENT_PROPAGATE; /* no page to scroll: GTK's behaviour */
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(page));
  double page_size = gtk_adjustment_get_page_size(adj);
  /* A wheel notch moves as far as GtkScrolledWindow moves it; a touchpad
   * gives pixels. */
  double delta = gtk_event_controller_scroll_get_unit(scroll) == GDK_SCROLL_UNIT_WHEEL
                     ? dy * pow(MAX(page_size, 1.0), 2.0 / 3.0)
                     : dy;
  double lower = gtk_adjustment_get_lower(adj), upper = gtk_adjustment_get_upper(adj) - page_size;
  gtk_adjustment_set_value(adj, CLAMP(gtk_adjustment_get_value(adj) + delta, lower, MAX(lower, upper)));
  return GDK_EVENT_STOP;
}

void loom_wheel_guard_attach(GtkWidget *value_widget) {
  g_return_if_fail(GTK_IS_WIDGET(value_widget));
  GtkEventController *scroll = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  gtk_event_controller_set_name(scroll, LOOM_WHEEL_GUARD_NAME);
  gtk_event_controller_set_propagation_phase(scroll, GTK_PHASE_CAPTURE);
  g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), NULL);
  gtk_widget_add_controller(value_widget, scroll);
}
