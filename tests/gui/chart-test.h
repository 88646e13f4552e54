/*
 * Helpers of the chart widget tests (test-charts.c, test-chart-views.c):
 * a window around a widget, a texture's pixels, and what a widget shows on
 * screen.
 */
#pragma once

#include <math.h>
#include <stdlib.h>

#include "gui-test.h"

static inline GtkWidget *present(GtkWidget *widget, int w, int h) {
  GtkWidget *window = gtk_window_new();
  gtk_window_set_default_size(GTK_WINDOW(window), w, h);
  gtk_window_set_child(GTK_WINDOW(window), widget);
  gtk_window_present(GTK_WINDOW(window));
  return window;
}

/* Pixels of a texture as 0xAARRGGBB words (GDK_MEMORY_DEFAULT). */
typedef struct {
  guint32 *px;
  int w, h;
} Pixels;

static inline Pixels download(GdkTexture *texture) {
  Pixels p = {NULL, gdk_texture_get_width(texture), gdk_texture_get_height(texture)};
  p.px = g_new(guint32, (gsize)p.w * p.h);
  gdk_texture_download(texture, (guchar *)p.px, (gsize)p.w * 4);
  g_object_unref(texture);
  return p;
}

static inline gsize count_different(const Pixels *a, const Pixels *b) {
  g_assert_cmpint(a->w, ==, b->w);
  g_assert_cmpint(a->h, ==, b->h);
  gsize n = 0;
  for (gsize i = 0; i < (gsize)a->w * a->h; i++) n += a->px[i] != b->px[i];
  return n;
}

static inline gboolean rgb_near(guint32 px, const float rgb[3], int tolerance) {
  int r = (px >> 16) & 0xff, g = (px >> 8) & 0xff, b = px & 0xff;
  return abs(r - (int)lrintf(rgb[0] * 255)) <= tolerance && abs(g - (int)lrintf(rgb[1] * 255)) <= tolerance &&
         abs(b - (int)lrintf(rgb[2] * 255)) <= tolerance;
}

/* What the widget shows on screen: its own snapshot, rendered by the
 * window's renderer (the path that keeps the overlay's node between
 * frames, unlike loom_boundary_view_render_texture). */
static inline Pixels on_screen(GtkWidget *widget, GtkWidget *window) {
  gui_test_spin(50);
  int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  GdkPaintable *paintable = gtk_widget_paintable_new(widget);
  GtkSnapshot *snapshot = gtk_snapshot_new();
  gdk_paintable_snapshot(paintable, snapshot, w, h);
  GskRenderNode *node = gtk_snapshot_free_to_node(snapshot);
  g_assert_nonnull(node);
  GskRenderer *renderer = gtk_native_get_renderer(GTK_NATIVE(window));
  GdkTexture *texture = gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, w, h));
  gsk_render_node_unref(node);
  g_object_unref(paintable);
  return download(texture);
}
