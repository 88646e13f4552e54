/*
 * The grid view's real input paths in the real window. Pointer input is
 * synthesized as X events with XTest at the view's on-screen position, so
 * GDK, the view's own gestures (click, double click, drag) and its picking
 * all run as they do for a user; the assertions read the window's document
 * and selection, and GL pixels. A palette drop goes through the view's
 * GtkDropTarget with the value the palette's own drag source provides.
 *
 * Needs an X11 display with the XTEST extension (Xvfb has it): the tests
 * set GDK_BACKEND=x11. Elsewhere the pointer cases report a skip.
 * Cases run in order on one window.
 */
#include <adwaita.h>
#include <loom/model.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gui-test.h"
#include "loom-application.h"
#include "loom-grid-view-private.h"
#include "loom-grid-view.h"
#include "loom-palette.h"
#include "loom-window.h"

#ifdef HAVE_XTEST
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>
#include <gdk/x11/gdkx.h>
#endif

#define TIMEOUT_MS 20000

static LoomApplication *app;
static LoomWindow *window;
static gboolean have_xtest;

static LoomGridView *grid_view(void) {
  return LOOM_GRID_VIEW(gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_GRID_VIEW));
}

static LoomDocument *doc(void) {
  return loom_window_get_document(window);
}

static const loom_net *net(void) {
  return loom_document_get_net(doc());
}

static const char *type_at(int z, int y, int x, int l) {
  loom_layer *layer = loom_net_layer_at(net(), (loom_coord){z, y, x, l});
  return layer ? loom_layer_type_name(loom_layer_get_type(layer)) : NULL;
}

static void activate(const char *action, GVariant *param) {
  g_assert_true(gtk_widget_activate_action_variant(GTK_WIDGET(window), action, param));
}

static gboolean is_mapped(gpointer widget) {
  return gtk_widget_get_mapped(widget);
}

static gboolean need_xtest(void) {
  if (have_xtest) return TRUE;
  g_test_skip("pointer input needs an X11 display with XTEST (GDK_BACKEND=x11)");
  return FALSE;
}

/* ---- frames and pixels ---- */

static void wait_frame(void) {
  gui_test_wait_frame(GTK_GL_AREA(grid_view()), TIMEOUT_MS);
}

static int highlight_pixels_at(double x, double y) {
  return gui_test_highlight_pixels_at(grid_view(), x, y);
}

/* Where slot (z,y,x,l) projects, checked to lie inside the view. */
static void project(int z, int y, int x, int l, double *px, double *py) {
  LoomGridView *view = grid_view();
  loom_coord c = {z, y, x, l};
  g_assert_true(loom_grid_view_project(view, &c, px, py));
  g_assert_cmpfloat(*px, >, 0);
  g_assert_cmpfloat(*py, >, 0);
  g_assert_cmpfloat(*px, <, gtk_widget_get_width(GTK_WIDGET(view)));
  g_assert_cmpfloat(*py, <, gtk_widget_get_height(GTK_WIDGET(view)));
}

/* ---- the pointer, through the X server ---- */

#ifdef HAVE_XTEST
static Display *xdisplay(void) {
  return gdk_x11_display_get_xdisplay(gtk_widget_get_display(GTK_WIDGET(window)));
}

/* Widget point (x, y) of the grid view → root window coordinates. */
static void view_to_root(double x, double y, int *rx, int *ry) {
  GtkWidget *view = GTK_WIDGET(grid_view());
  GtkNative *native = gtk_widget_get_native(view);
  graphene_point_t p;
  g_assert_true(gtk_widget_compute_point(view, GTK_WIDGET(native), &GRAPHENE_POINT_INIT((float)x, (float)y), &p));
  double sx = 0, sy = 0;
  gtk_native_get_surface_transform(native, &sx, &sy); /* client-side decoration margins */
  GdkSurface *surface = gtk_native_get_surface(native);
  int scale = gdk_surface_get_scale_factor(surface);
  Window child;
  XTranslateCoordinates(xdisplay(), gdk_x11_surface_get_xid(surface), DefaultRootWindow(xdisplay()),
                        (int)lround((p.x + sx) * scale), (int)lround((p.y + sy) * scale), rx, ry, &child);
}

/* Lets the server and then GTK handle what was sent. */
static void x_sync(void) {
  XSync(xdisplay(), False);
  gui_test_spin(30);
}

static void x_move(double x, double y) {
  int rx, ry;
  view_to_root(x, y, &rx, &ry);
  XTestFakeMotionEvent(xdisplay(), -1, rx, ry, CurrentTime);
  x_sync();
}

static void x_button(guint button, gboolean press) {
  XTestFakeButtonEvent(xdisplay(), button, press, CurrentTime);
  x_sync();
}

static void x_key(KeySym sym, gboolean press) {
  XTestFakeKeyEvent(xdisplay(), XKeysymToKeycode(xdisplay(), sym), press, CurrentTime);
  x_sync();
}

static gint64 last_press_us;

/*
 * Waits out the double-click time since the last press, so that a click is
 * never counted as the second press of an earlier one. (GTK 4.8's click
 * gesture also mishandles a press right after a click elsewhere: the reset
 * for the distance leaves its button at 0, so the next press restarts the
 * count and a real double click there reads as two single clicks.)
 */
static void settle_clicks(void) {
  int double_click_ms = 400;
  g_object_get(gtk_widget_get_settings(GTK_WIDGET(window)), "gtk-double-click-time", &double_click_ms, NULL);
  gint64 wait_ms = (last_press_us + (gint64)(double_click_ms + 100) * 1000 - g_get_monotonic_time()) / 1000;
  if (wait_ms > 0) gui_test_spin((guint)wait_ms);
}

/* The presses go out together: a double click is two presses within the
 * double-click time, however slow a frame is. */
static void pointer_click(double x, double y, int n) {
  settle_clicks();
  x_move(x, y);
  last_press_us = g_get_monotonic_time();
  for (int i = 0; i < n; i++) {
    XTestFakeButtonEvent(xdisplay(), 1, True, CurrentTime);
    XTestFakeButtonEvent(xdisplay(), 1, False, CurrentTime);
  }
  x_sync();
}

/* Presses at (x0, y0), moves in steps to (x1, y1) and releases there. */
static void pointer_drag(double x0, double y0, double x1, double y1) {
  settle_clicks();
  x_move(x0, y0);
  last_press_us = g_get_monotonic_time();
  x_button(1, TRUE);
  const int steps = 8;
  for (int i = 1; i <= steps; i++) x_move(x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps);
  x_button(1, FALSE);
}

static gboolean probe_xtest(void) {
  GdkDisplay *display = gdk_display_get_default();
  if (!GDK_IS_X11_DISPLAY(display)) return FALSE;
  int event, error, major, minor;
  return XTestQueryExtension(gdk_x11_display_get_xdisplay(display), &event, &error, &major, &minor);
}
#else
static void pointer_click(double x, double y, int n) {}
static void pointer_drag(double x0, double y0, double x1, double y1) {}
static gboolean probe_xtest(void) {
  return FALSE;
}
#endif

/* ---- conditions ---- */

typedef struct {
  int z, y, x, l;
} Slot;

static gboolean selection_is(gpointer data) {
  const Slot *s = data;
  loom_coord c;
  if (!loom_grid_view_get_selection(grid_view(), &c)) return FALSE;
  return c.z == s->z && c.y == s->y && c.x == s->x && c.l == s->l;
}

static gboolean slot_filled(gpointer data) {
  const Slot *s = data;
  return type_at(s->z, s->y, s->x, s->l) != NULL;
}

static gboolean n_links_is(gpointer data) {
  return loom_net_n_links(net()) == GPOINTER_TO_INT(data);
}

/* The window's selection is the grid view's (loom_window_get_selected_slot
 * reads it there; the window's actions and inspector follow it). */
static void assert_window_selection(int z, int y, int x, int l) {
  loom_coord c;
  g_assert_true(loom_grid_view_get_selection(grid_view(), &c));
  g_assert_cmpint(c.z, ==, z);
  g_assert_cmpint(c.y, ==, y);
  g_assert_cmpint(c.x, ==, x);
  g_assert_cmpint(c.l, ==, l);
}

/* The view's own picking agrees that widget point (x, y) is that slot. */
static void assert_pick(double x, double y, int z, int row, int col, int l) {
  loom_coord c;
  g_assert_true(loom_grid_view_pick(grid_view(), x, y, &c));
  g_assert_cmpint(c.z, ==, z);
  g_assert_cmpint(c.y, ==, row);
  g_assert_cmpint(c.x, ==, col);
  g_assert_cmpint(c.l, ==, l);
}

/* ---- setup ---- */

static void test_setup(void) {
  window = LOOM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
  g_assert_true(LOOM_IS_WINDOW(window));
  gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
  gui_test_wait(is_mapped, window, TIMEOUT_MS, "the main window to map");
  have_xtest = probe_xtest();
  g_test_message("pointer input: %s", have_xtest ? "XTest" : "unavailable");

  /* One depth, 2 × 3 cells of 2 slots, 8 input features: big blocks on screen. */
  loom_shape input = loom_shape_1d(8);
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) document = loom_document_new_sized(1, 2, 3, 2, &input, &error);
  g_assert_no_error(error);
  loom_window_set_document(window, document);
  g_assert_true(doc() == document);
  gtk_window_present(GTK_WINDOW(window));
  wait_frame();
}

/* ---- clicks ---- */

static void test_click_selects(void) {
  if (!need_xtest()) return;
  double x, y;
  /* An empty cell: the click selects its lowest slot. */
  project(0, 1, 2, 0, &x, &y);
  pointer_click(x, y, 1);
  gui_test_wait(selection_is, &(Slot){0, 1, 2, 0}, TIMEOUT_MS, "a click to select slot (0,1,2,0)");
  assert_window_selection(0, 1, 2, 0);
  /* The click gave the grid the keyboard focus: its key actions are on. */
  g_assert_true(gtk_widget_has_focus(GTK_WIDGET(grid_view())));
  /* (An empty selected slot is drawn as an outline marker, so the pixel
   * checks below use blocks, which are filled with the highlight colour.) */

  /* Fill both slots of cell (0,0,1); a click on the upper block selects l = 1,
   * one on the lower block l = 0: picking hits the slot under the pointer. */
  loom_coord lower = {0, 0, 1, 0}, upper = {0, 0, 1, 1};
  loom_grid_view_set_selection(grid_view(), &lower);
  activate("win.place-layer", g_variant_new_string("dense"));
  loom_grid_view_set_selection(grid_view(), &upper);
  activate("win.place-layer", g_variant_new_string("relu"));
  g_assert_cmpstr(type_at(0, 0, 1, 0), ==, "dense");
  g_assert_cmpstr(type_at(0, 0, 1, 1), ==, "relu");
  loom_grid_view_set_selection(grid_view(), NULL);
  wait_frame();

  double ux, uy, lx, ly;
  project(0, 0, 1, 1, &ux, &uy);
  project(0, 0, 1, 0, &lx, &ly);
  pointer_click(ux, uy, 1);
  gui_test_wait(selection_is, &(Slot){0, 0, 1, 1}, TIMEOUT_MS, "a click to select the upper block");
  wait_frame();
  g_assert_cmpint(highlight_pixels_at(ux, uy), >=, 5);
  g_assert_cmpint(highlight_pixels_at(lx, ly), ==, 0);

  pointer_click(lx, ly, 1);
  gui_test_wait(selection_is, &(Slot){0, 0, 1, 0}, TIMEOUT_MS, "a click to select the lower block");
  wait_frame();
  g_assert_cmpint(highlight_pixels_at(lx, ly), >=, 5);
  g_assert_cmpint(highlight_pixels_at(ux, uy), ==, 0);
  g_assert_cmpint(loom_net_n_layers(net()), ==, 2); /* a single click never edits */
}

/* Palette rows carry their type as the value their drag source provides. */
static GtkListBoxRow *palette_row(const char *type, GValue *value_out) {
  GtkWidget *palette = gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_PALETTE);
  GtkWidget *list = gui_test_find_child(palette, GTK_TYPE_LIST_BOX);
  for (GtkWidget *row = gtk_widget_get_first_child(list); row; row = gtk_widget_get_next_sibling(row)) {
    if (!GTK_IS_LIST_BOX_ROW(row)) continue;
    g_autoptr(GListModel) controllers = gtk_widget_observe_controllers(row);
    for (guint i = 0; i < g_list_model_get_n_items(controllers); i++) {
      g_autoptr(GObject) c = g_list_model_get_item(controllers, i);
      if (!GTK_IS_DRAG_SOURCE(c)) continue;
      GdkContentProvider *provider = NULL;
      g_signal_emit_by_name(c, "prepare", 1.0, 1.0, &provider);
      g_assert_nonnull(provider);
      GValue value = G_VALUE_INIT;
      g_value_init(&value, G_TYPE_STRING);
      g_assert_true(gdk_content_provider_get_value(provider, &value, NULL));
      g_object_unref(provider);
      if (g_strcmp0(g_value_get_string(&value), type) == 0) {
        if (value_out)
          *value_out = value;
        else
          g_value_unset(&value);
        return GTK_LIST_BOX_ROW(row);
      }
      g_value_unset(&value);
    }
  }
  g_error("no palette row provides “%s”", type);
  return NULL;
}

static void test_double_click_places(void) {
  if (!need_xtest()) return;
  /* Choose tanh in the palette: activating its row places it at the selected
   * slot (0,0,1,0 is taken, so select an empty one first) and makes it the
   * type a double click places. */
  loom_coord first = {0, 1, 0, 0};
  loom_grid_view_set_selection(grid_view(), &first);
  g_assert_true(gtk_widget_activate(GTK_WIDGET(palette_row("tanh", NULL)))); /* what Enter on the row does */
  g_assert_cmpstr(type_at(0, 1, 0, 0), ==, "tanh");
  int n_before = loom_net_n_layers(net());
  wait_frame();

  /* A double click on the empty cell (0,1,2) places tanh into its slot 0. */
  double x, y;
  project(0, 1, 2, 0, &x, &y);
  pointer_click(x, y, 2);
  gui_test_wait(slot_filled, &(Slot){0, 1, 2, 0}, TIMEOUT_MS, "a double click to place a layer");
  g_assert_cmpstr(type_at(0, 1, 2, 0), ==, "tanh");
  g_assert_cmpint(loom_net_n_layers(net()), ==, n_before + 1);
  assert_window_selection(0, 1, 2, 0);
  g_assert_true(loom_document_get_dirty(doc()));

  /* A double click on an occupied block selects it and places nothing. */
  wait_frame();
  double ux, uy;
  project(0, 0, 1, 1, &ux, &uy);
  pointer_click(ux, uy, 2);
  gui_test_wait(selection_is, &(Slot){0, 0, 1, 1}, TIMEOUT_MS, "a double click to select the upper block");
  g_assert_cmpstr(type_at(0, 0, 1, 1), ==, "relu");
  g_assert_cmpint(loom_net_n_layers(net()), ==, n_before + 1);
}

/* ---- palette drop ---- */

static GtkDropTarget *view_drop_target(void) {
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers(GTK_WIDGET(grid_view()));
  for (guint i = 0; i < g_list_model_get_n_items(controllers); i++) {
    g_autoptr(GObject) c = g_list_model_get_item(controllers, i);
    if (GTK_IS_DROP_TARGET(c)) return GTK_DROP_TARGET(c); /* the view holds a reference */
  }
  g_error("the grid view has no drop target");
  return NULL;
}

static gboolean drop_type_at(const char *type, double x, double y) {
  GValue value = G_VALUE_INIT;
  palette_row(type, &value);
  GtkDropTarget *target = view_drop_target();
  gboolean accepted = FALSE;
  g_signal_emit_by_name(target, "drop", &value, x, y, &accepted);
  g_value_unset(&value);
  return accepted;
}

static void test_palette_drop(void) {
  GtkDropTarget *target = view_drop_target();
  gsize n_types = 0;
  const GType *types = gtk_drop_target_get_gtypes(target, &n_types);
  g_assert_cmpuint(n_types, ==, 1);
  g_assert_true(types[0] == G_TYPE_STRING);

  /* Onto the empty front-row cell (0,1,1), at its slot 0's centre: sigmoid
   * lands there and is selected. */
  loom_grid_view_reset_camera(grid_view());
  wait_frame();
  double x, y;
  project(0, 1, 1, 0, &x, &y);
  assert_pick(x, y, 0, 1, 1, 0);
  int n_before = loom_net_n_layers(net());
  g_assert_true(drop_type_at("sigmoid", x, y));
  g_assert_cmpstr(type_at(0, 1, 1, 0), ==, "sigmoid");
  g_assert_null(type_at(0, 1, 1, 1));
  g_assert_cmpint(loom_net_n_layers(net()), ==, n_before + 1);
  assert_window_selection(0, 1, 1, 0);

  /* Onto the back-row cell (0,0,2). An empty cell is picked where the ray
   * enters the grid, so a point inside a back cell may belong to the cell in
   * front of it on screen; the centre of the cell's top face is its own. */
  wait_frame();
  float top[3] = {2.5f, 1.0f, 0.5f}; /* world x = column, y = depth (up), z = row */
  g_assert_true(loom_grid_view_project_point(grid_view(), top, &x, &y));
  assert_pick(x, y, 0, 0, 2, 0);
  g_assert_true(drop_type_at("relu", x, y));
  g_assert_cmpstr(type_at(0, 0, 2, 0), ==, "relu");
  g_assert_cmpint(loom_net_n_layers(net()), ==, n_before + 2);
  assert_window_selection(0, 0, 2, 0);

  /* Undo takes exactly the last dropped layer back. */
  activate("win.undo", NULL);
  g_assert_null(type_at(0, 0, 2, 0));
  g_assert_cmpstr(type_at(0, 1, 1, 0), ==, "sigmoid");

  /* Something that is not a layer type is refused. */
  GValue bogus = G_VALUE_INIT;
  g_value_init(&bogus, G_TYPE_STRING);
  g_value_set_string(&bogus, "no-such-layer");
  gboolean accepted = TRUE;
  g_signal_emit_by_name(target, "drop", &bogus, x, y, &accepted);
  g_value_unset(&bogus);
  g_assert_false(accepted);
}

/* ---- link tool ---- */

static void test_link_drag(void) {
  if (!need_xtest()) return;
  /* (0,0,1,0) dense → (0,1,2,0) tanh, as in /editing/links. */
  g_assert_nonnull(type_at(0, 0, 1, 0));
  g_assert_nonnull(type_at(0, 1, 2, 0));
  g_assert_cmpint(loom_net_n_links(net()), ==, 0);
  activate("win.link-merge", g_variant_new_string("concat"));
  activate("win.link-tool", NULL);
  g_assert_true(loom_grid_view_get_link_tool(grid_view()));
  loom_grid_view_reset_camera(grid_view());
  wait_frame();

  double sx, sy, dx, dy;
  project(0, 0, 1, 0, &sx, &sy);
  project(0, 1, 2, 0, &dx, &dy);
  double ox, oy;
  project(0, 0, 0, 0, &ox, &oy);
  loom_coord sel_before;
  g_assert_true(loom_grid_view_get_selection(grid_view(), &sel_before));
  pointer_drag(sx, sy, dx, dy);
  gui_test_wait(n_links_is, GINT_TO_POINTER(1), TIMEOUT_MS, "a link-tool drag to add a link");
  const loom_link *link = loom_net_link(net(), 0);
  g_assert_cmpint(link->src.y, ==, 0);
  g_assert_cmpint(link->src.x, ==, 1);
  g_assert_cmpint(link->src.l, ==, 0);
  g_assert_cmpint(link->dst.y, ==, 1);
  g_assert_cmpint(link->dst.x, ==, 2);
  g_assert_cmpint(link->dst.l, ==, 0);
  g_assert_cmpint(link->merge, ==, LOOM_MERGE_CONCAT);
  /* The drag drew a link instead of orbiting: the camera did not move. */
  double ox2, oy2;
  project(0, 0, 0, 0, &ox2, &oy2);
  g_assert_cmpfloat(fabs(ox2 - ox) + fabs(oy2 - oy), <, 1e-6);
  g_assert_cmpint(loom_grid_view_get_selected_link(grid_view()), ==, 0);
  /* The release over the destination is not a click: the selection stays. */
  assert_window_selection(sel_before.z, sel_before.y, sel_before.x, sel_before.l);

  /* A drag that ends off the grid (the view's corner) draws nothing. */
  double fx = 8, fy = 8;
  loom_coord none;
  g_assert_false(loom_grid_view_pick(grid_view(), fx, fy, &none));
  pointer_drag(sx, sy, fx, fy);
  gui_test_spin(100);
  g_assert_cmpint(loom_net_n_links(net()), ==, 1);
  assert_window_selection(sel_before.z, sel_before.y, sel_before.x, sel_before.l);

  activate("win.undo", NULL);
  g_assert_cmpint(loom_net_n_links(net()), ==, 0);
  activate("win.redo", NULL);
  g_assert_cmpint(loom_net_n_links(net()), ==, 1);
  activate("win.undo", NULL);
  g_assert_cmpint(loom_net_n_links(net()), ==, 0);
  activate("win.link-tool", NULL);
  g_assert_false(loom_grid_view_get_link_tool(grid_view()));
}

/* ---- orbit and reset ---- */

typedef struct {
  double x, y;
} Point;

static gboolean projection_moved(gpointer data) {
  const Point *before = data;
  double x, y;
  loom_coord c = {0, 0, 0, 0};
  if (!loom_grid_view_project(grid_view(), &c, &x, &y)) return FALSE;
  return fabs(x - before->x) > 10 || fabs(y - before->y) > 10;
}

static gboolean projection_back(gpointer data) {
  const Point *before = data;
  double x, y;
  loom_coord c = {0, 0, 0, 0};
  return loom_grid_view_project(grid_view(), &c, &x, &y) && fabs(x - before->x) < 0.01 && fabs(y - before->y) < 0.01;
}

static void test_orbit_and_reset(void) {
  if (!need_xtest()) return;
  LoomGridView *view = grid_view();
  activate("win.reset-camera", NULL);
  wait_frame();
  Point home;
  project(0, 0, 0, 0, &home.x, &home.y);
  int n_layers = loom_net_n_layers(net());
  loom_coord sel_before;
  g_assert_true(loom_grid_view_get_selection(view, &sel_before));

  /* A primary-button drag from one side of the view to the other orbits. */
  double w = gtk_widget_get_width(GTK_WIDGET(view)), h = gtk_widget_get_height(GTK_WIDGET(view));
  pointer_drag(w * 0.3, h * 0.5, w * 0.6, h * 0.55);
  gui_test_wait(projection_moved, &home, TIMEOUT_MS, "an orbit drag to move the camera");
  /* ...and is not a click: no edit, the selection stays. */
  g_assert_cmpint(loom_net_n_layers(net()), ==, n_layers);
  loom_coord sel_after;
  g_assert_true(loom_grid_view_get_selection(view, &sel_after));
  g_assert_true(memcmp(&sel_before, &sel_after, sizeof sel_after) == 0);

  /* Ctrl+0 (win.reset-camera) through the keyboard puts it back. */
#ifdef HAVE_XTEST
  gtk_widget_grab_focus(GTK_WIDGET(view));
  x_key(XK_Control_L, TRUE);
  x_key(XK_0, TRUE);
  x_key(XK_0, FALSE);
  x_key(XK_Control_L, FALSE);
#endif
  gui_test_wait(projection_back, &home, TIMEOUT_MS, "Ctrl+0 to reset the camera");

  /* The same again through the action alone. */
  pointer_drag(w * 0.6, h * 0.4, w * 0.35, h * 0.5);
  gui_test_wait(projection_moved, &home, TIMEOUT_MS, "a second orbit drag");
  activate("win.reset-camera", NULL);
  g_assert_true(projection_back(&home));
}

/* ---- refusals ---- */

/* The text of every toast the window's overlay shows. */
static void collect_labels(GtkWidget *root, GString *out) {
  if (GTK_IS_LABEL(root)) {
    g_string_append(out, gtk_label_get_text(GTK_LABEL(root)));
    g_string_append_c(out, '\n');
  }
  for (GtkWidget *child = gtk_widget_get_first_child(root); child; child = gtk_widget_get_next_sibling(child))
    collect_labels(child, out);
}

static char *toast_text(void) {
  GString *out = g_string_new(NULL);
  GType toast_widget = g_type_from_name("AdwToastWidget"); /* registered with the first toast */
  if (!toast_widget) return g_string_free(out, FALSE);
  GtkWidget *overlay = gui_test_find_child(GTK_WIDGET(window), ADW_TYPE_TOAST_OVERLAY);
  for (GtkWidget *child = gtk_widget_get_first_child(overlay); child; child = gtk_widget_get_next_sibling(child))
    if (G_TYPE_CHECK_INSTANCE_TYPE(child, toast_widget)) collect_labels(child, out);
  return g_string_free(out, FALSE);
}

static void test_drop_on_occupied(void) {
  /* The upper block of cell (0,0,1) holds relu (placed in click-selects when
   * XTest is there): a drop there is refused... */
  if (!type_at(0, 0, 1, 1)) {
    loom_grid_view_set_selection(grid_view(), &(loom_coord){0, 0, 1, 1});
    activate("win.place-layer", g_variant_new_string("relu"));
  }
  loom_grid_view_reset_camera(grid_view());
  wait_frame();
  g_autofree char *before = loom_model_to_json(net(), NULL, NULL);
  double x, y;
  project(0, 0, 1, 1, &x, &y);
  g_assert_true(drop_type_at("sigmoid", x, y));
  g_autofree char *after = loom_model_to_json(net(), NULL, NULL);
  g_assert_cmpstr(before, ==, after);
  g_assert_cmpstr(type_at(0, 0, 1, 1), ==, "relu");
  assert_window_selection(0, 0, 1, 1);

  /* ...with a toast that names the slot, what it holds and how to replace it. */
  g_autofree char *text = toast_text();
  g_test_message("toast: %s", text);
  g_assert_nonnull(strstr(text, "(0,0,1,1)"));
  const char *label = loom_layer_type_label(loom_layer_get_type(loom_net_layer_at(net(), (loom_coord){0, 0, 1, 1})));
  g_assert_nonnull(strstr(text, label));
  g_assert_nonnull(strstr(text, "Delete"));
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);

  app = loom_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, &error));
  g_application_activate(G_APPLICATION(app));

  g_test_add_func("/gestures/setup", test_setup);
  g_test_add_func("/gestures/click-selects", test_click_selects);
  g_test_add_func("/gestures/double-click-places", test_double_click_places);
  g_test_add_func("/gestures/palette-drop", test_palette_drop);
  g_test_add_func("/gestures/link-drag", test_link_drag);
  g_test_add_func("/gestures/orbit-and-reset", test_orbit_and_reset);
  g_test_add_func("/gestures/drop-on-occupied", test_drop_on_occupied);
  int status = g_test_run();

  /* Edited: close without asking, then quit. */
  if (window) {
    g_object_add_weak_pointer(G_OBJECT(window), (gpointer *)&window);
    gtk_window_destroy(GTK_WINDOW(window));
  }
  g_action_group_activate_action(G_ACTION_GROUP(app), "quit", NULL);
  while (g_main_context_iteration(NULL, FALSE)) {}
  g_object_unref(app);
  return status;
}
