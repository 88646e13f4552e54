#include "gui-test.h"

#include "loom-grid-view-private.h"

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

gboolean gui_test_pixel_near(const guint8 *px, float r, float g, float b, int tolerance) {
  return abs(px[0] - (int)(r * 255.f + .5f)) <= tolerance && abs(px[1] - (int)(g * 255.f + .5f)) <= tolerance &&
         abs(px[2] - (int)(b * 255.f + .5f)) <= tolerance;
}

typedef struct {
  GtkGLArea *area;
  guint n_renders;
} FrameWait;

static gboolean count_render(GtkGLArea *area, GdkGLContext *context, gpointer data) {
  ((FrameWait *)data)->n_renders++;
  return FALSE; /* let the area's own handler draw */
}

/* A GL failure ends the wait too, so the test reports it instead of timing out. */
static gboolean rendered(gpointer data) {
  FrameWait *wait = data;
  return wait->n_renders > 0 || gtk_gl_area_get_error(wait->area) != NULL;
}

void gui_test_wait_frame(GtkGLArea *area, guint timeout_ms) {
  FrameWait wait = {area, 0};
  gulong id = g_signal_connect(area, "render", G_CALLBACK(count_render), &wait);
  gtk_gl_area_queue_render(area);
  gui_test_wait(rendered, &wait, timeout_ms, "the grid view to render a frame");
  g_signal_handler_disconnect(area, id);
  g_assert_no_error(gtk_gl_area_get_error(area));
}

int gui_test_highlight_pixels_at(LoomGridView *view, double x, double y) {
  int width = 0, height = 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = loom_grid_view_read_pixels(view, &width, &height, &error);
  g_assert_no_error(error);
  const guint8 *pixels = g_bytes_get_data(bytes, NULL);
  double sx = (double)width / gtk_widget_get_width(GTK_WIDGET(view));
  double sy = (double)height / gtk_widget_get_height(GTK_WIDGET(view));
  int cx = (int)(x * sx), cy = (int)(y * sy), n = 0;
  for (int dy = -2; dy <= 2; dy++)
    for (int dx = -2; dx <= 2; dx++) {
      int px = CLAMP(cx + dx, 0, width - 1), py = CLAMP(cy + dy, 0, height - 1);
      if (gui_test_pixel_near(pixels + ((gsize)py * width + px) * 4, LOOM_GRID_VIEW_HIGHLIGHT_R,
                              LOOM_GRID_VIEW_HIGHLIGHT_G, LOOM_GRID_VIEW_HIGHLIGHT_B, 40))
        n++;
    }
  return n;
}
