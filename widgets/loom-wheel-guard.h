/*
 * The wheel over a value widget (a spin button, a scale) in a scrolled
 * page: GTK gives it the wheel even when the pointer merely passes over it
 * while the page scrolls, so scrolling the inspector changed a layer's
 * parameters by accident. With the guard, the widget takes the wheel only
 * while it (or its text) has the keyboard focus; otherwise the wheel
 * scrolls the page it lies in.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* The controller's name, for tests that look it up. */
#define LOOM_WHEEL_GUARD_NAME "loom-wheel-guard"

void loom_wheel_guard_attach(GtkWidget *value_widget);

G_END_DECLS
