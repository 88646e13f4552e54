/*
 * Helpers for GUI tests: skipping without a display, and waiting on the main
 * loop for a condition with a deadline (a hung wait fails, never passes).
 */
#pragma once

#include <gtk/gtk.h>

#include "loom-grid-view.h"

/*
 * Calls g_test_init and gtk_init_check. Without a display the test is
 * skipped: under meson (TAP, --tap given) as a "1..0 # SKIP" plan with
 * status 0, which meson reports as SKIP; run by hand, with exit status 77.
 */
void gui_test_init(int *argc, char ***argv);

typedef gboolean (*GuiTestCondition)(gpointer data);

/* Iterates the default main context until cond(data) holds; fails the test
 * with `what` after timeout_ms. */
void gui_test_wait(GuiTestCondition cond, gpointer data, guint timeout_ms, const char *what);

/* Waits this long while the main loop runs. */
void gui_test_spin(guint ms);

/* Depth-first search for a descendant of `root` of the given type. */
GtkWidget *gui_test_find_child(GtkWidget *root, GType type);

/* Whether an RGBA pixel is within `tolerance` (0..255, per channel) of the
 * colour (r, g, b) given in 0..1. */
gboolean gui_test_pixel_near(const guint8 *px, float r, float g, float b, int tolerance);

/* Queues a render of `area` and waits (up to timeout_ms) until one frame has
 * been drawn or the area reports a GL error; then asserts there is none. */
void gui_test_wait_frame(GtkGLArea *area, guint timeout_ms);

/* How many pixels of the 5×5 square around widget point (x, y) of `view`
 * have the grid view's highlight colour (tolerance 40). */
int gui_test_highlight_pixels_at(LoomGridView *view, double x, double y);
