#include "gui-test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gui_test_init(int *argc, char ***argv) {
  gboolean tap = FALSE;
  for (int i = 1; i < *argc; i++)
    if (strcmp((*argv)[i], "--tap") == 0) tap = TRUE;

  g_test_init(argc, argv, NULL);
  if (!gtk_init_check()) {
    /* meson's TAP reader treats any non-zero status as an error, so under
     * TAP the skip is a plan; everywhere else it is the automake code 77. */
    if (tap) {
      printf("1..0 # SKIP no display (DISPLAY/WAYLAND_DISPLAY unset or unusable)\n");
      fflush(stdout);
      exit(0);
    }
    fprintf(stderr, "SKIP: no display (DISPLAY/WAYLAND_DISPLAY unset or unusable)\n");
    exit(77);
  }
}

typedef struct {
  gboolean timed_out;
} Deadline;

static gboolean deadline_hit(gpointer data) {
  ((Deadline *)data)->timed_out = TRUE;
  return G_SOURCE_REMOVE;
}

void gui_test_wait(GuiTestCondition cond, gpointer data, guint timeout_ms, const char *what) {
  Deadline deadline = {FALSE};
  guint id = g_timeout_add(timeout_ms, deadline_hit, &deadline);
  while (!cond(data) && !deadline.timed_out) g_main_context_iteration(NULL, TRUE);
  if (deadline.timed_out) g_error("timed out after %u ms waiting for %s", timeout_ms, what);
  g_source_remove(id);
}

void gui_test_spin(guint ms) {
  Deadline deadline = {FALSE};
  g_timeout_add(ms, deadline_hit, &deadline);
  while (!deadline.timed_out) g_main_context_iteration(NULL, TRUE);
}

GtkWidget *gui_test_find_child(GtkWidget *root, GType type) {
  if (G_TYPE_CHECK_INSTANCE_TYPE(root, type)) return root;
  for (GtkWidget *child = gtk_widget_get_first_child(root); child; child = gtk_widget_get_next_sibling(child)) {
    GtkWidget *found = gui_test_find_child(child, type);
    if (found) return found;
  }
  return NULL;
}
