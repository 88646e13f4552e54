/*
 * Helpers for GUI tests: skipping without a display, and waiting on the main
 * loop for a condition with a deadline (a hung wait fails, never passes).
 */
#pragma once

#include <gtk/gtk.h>

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
