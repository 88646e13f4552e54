/*
 * LoomGridView's GL side: the context (GL 3.3 core, else GLES 3.0), the
 * renderer's lifetime, frames, pixel read-back and PNG export.
 */
#include <epoxy/gl.h>
#include <glib/gi18n.h>
#include <string.h>

#include "loom-grid-view-impl.h"

#define MAX_EXPORT 16384

/* ---- GL ---- */

/* One attempt at a context with the given APIs and minimum version; NULL
 * with @error set when GDK cannot provide it. */
static GdkGLContext *try_context(GdkSurface *surface, GdkGLAPI apis, int major, int minor, GError **error) {
  GdkGLContext *context = gdk_surface_create_gl_context(surface, error);
  if (!context) return NULL;
  gdk_gl_context_set_allowed_apis(context, apis);
  gdk_gl_context_set_required_version(context, major, minor);
  if (!gdk_gl_context_realize(context, error)) {
    g_object_unref(context);
    return NULL;
  }
  return context;
}

/*
 * GtkGLArea 4.8 asks for desktop GL only unless told to use GLES only, so on
 * a GLES-only display (GDK_DEBUG=gl-gles, many ARM boards) it gets no
 * context at all. Ask for GL 3.3 core with the API left to GDK first, and
 * for GLES 3.0 if that fails.
 */
GdkGLContext *loom_grid_view_create_context(GtkGLArea *area) {
  GdkSurface *surface = gtk_native_get_surface(gtk_widget_get_native(GTK_WIDGET(area)));
  g_autoptr(GError) error = NULL;
  GdkGLContext *context = try_context(surface, GDK_GL_API_GL | GDK_GL_API_GLES, 3, 3, &error);
  if (!context) {
    g_clear_error(&error);
    context = try_context(surface, GDK_GL_API_GLES, 3, 0, &error);
  }
  if (!context) gtk_gl_area_set_error(area, error);
  return context;
}

void loom_grid_view_realize(GtkWidget *widget) {
  LoomGridView *self = LOOM_GRID_VIEW(widget);
  GtkGLArea *area = GTK_GL_AREA(widget);

  GTK_WIDGET_CLASS(g_type_class_peek(GTK_TYPE_GL_AREA))->realize(widget);

  gtk_gl_area_make_current(area);
  if (gtk_gl_area_get_error(area)) return; /* GtkGLArea shows the error itself */

  GdkGLContext *context = gtk_gl_area_get_context(area);
  gboolean es = gdk_gl_context_get_api(context) == GDK_GL_API_GLES;
  int major, minor;
  gdk_gl_context_get_version(context, &major, &minor);
  if (major * 10 + minor < (es ? 30 : 33)) {
    g_autoptr(GError) error = g_error_new(GDK_GL_ERROR, GDK_GL_ERROR_NOT_AVAILABLE,
                                          _("The grid view needs OpenGL 3.3 or OpenGL ES 3.0, "
                                            "but only version %d.%d is available"),
                                          major, minor);
    gtk_gl_area_set_error(area, error);
    return;
  }
  g_autoptr(GError) error = NULL;
  self->renderer = loom_grid_renderer_new(es, &error);
  if (!self->renderer) gtk_gl_area_set_error(area, error);
  else loom_grid_renderer_warm_up(self->renderer);
  self->upload_dirty = TRUE;
}

void loom_grid_view_unrealize(GtkWidget *widget) {
  LoomGridView *self = LOOM_GRID_VIEW(widget);
  GtkGLArea *area = GTK_GL_AREA(widget);
  gtk_gl_area_make_current(area);
  if (!gtk_gl_area_get_error(area)) loom_grid_renderer_free(self->renderer);
  else g_free(self->renderer); /* no context to delete GL objects in */
  self->renderer = NULL;
  GTK_WIDGET_CLASS(g_type_class_peek(GTK_TYPE_GL_AREA))->unrealize(widget);
}

static void pixel_size(LoomGridView *self, int *width, int *height) {
  int scale = gtk_widget_get_scale_factor(GTK_WIDGET(self));
  *width = gtk_widget_get_width(GTK_WIDGET(self)) * scale;
  *height = gtk_widget_get_height(GTK_WIDGET(self)) * scale;
}

gboolean loom_grid_view_render(GtkGLArea *area, GdkGLContext *context) {
  LoomGridView *self = LOOM_GRID_VIEW(area);
  if (!self->renderer) return FALSE;
  int width, height;
  pixel_size(self, &width, &height);
  loom_grid_view_draw(self, width, height);
  return TRUE;
}

static gboolean check_ready(LoomGridView *self, GError **error) {
  if (gtk_widget_get_realized(GTK_WIDGET(self)) && self->renderer) return TRUE;
  const GError *gl_error = gtk_gl_area_get_error(GTK_GL_AREA(self));
  if (gl_error)
    g_propagate_error(error, g_error_copy(gl_error));
  else
    g_set_error_literal(error, GDK_GL_ERROR, GDK_GL_ERROR_NOT_AVAILABLE, _("The grid view has no GL context yet"));
  return FALSE;
}

GBytes *loom_grid_view_read_pixels(LoomGridView *self, int *width, int *height, GError **error) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), NULL);
  if (!check_ready(self, error)) return NULL;

  /* GtkGLArea hands each finished frame to GTK as a texture and may recycle
   * it, so what is left in its framebuffer is undefined. Render the same
   * scene once more, through the same code path as a frame, and read that. */
  GtkGLArea *area = GTK_GL_AREA(self);
  gtk_gl_area_make_current(area);
  gtk_gl_area_attach_buffers(area);
  while (glGetError() != GL_NO_ERROR) {} /* report only this frame's errors */
  int w, h;
  pixel_size(self, &w, &h);
  loom_grid_view_draw(self, w, h);
  glFinish();

  gsize stride = (gsize)w * 4;
  guint8 *pixels = g_malloc((gsize)h * stride);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
  GLenum status = glGetError();
  if (status != GL_NO_ERROR) {
    g_free(pixels);
    g_set_error(error, GDK_GL_ERROR, GDK_GL_ERROR_NOT_AVAILABLE,
                _("Reading the grid view's pixels failed (GL error 0x%x)"), status);
    return NULL;
  }
  /* GL's rows run bottom-up; callers expect images top-down. */
  g_autofree guint8 *row = g_malloc(stride);
  for (int y = 0; y < h / 2; y++) {
    memcpy(row, pixels + (gsize)y * stride, stride);
    memcpy(pixels + (gsize)y * stride, pixels + (gsize)(h - 1 - y) * stride, stride);
    memcpy(pixels + (gsize)(h - 1 - y) * stride, row, stride);
  }
  *width = w;
  *height = h;
  return g_bytes_new_take(pixels, (gsize)h * stride);
}

gboolean loom_grid_view_export_png(LoomGridView *self, const char *path, int width, int height, GError **error) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), FALSE);
  g_return_val_if_fail(path != NULL, FALSE);
  if (!check_ready(self, error)) return FALSE;
  gtk_gl_area_make_current(GTK_GL_AREA(self));
  int max = MIN(loom_grid_renderer_max_size(self->renderer), MAX_EXPORT);
  if (width < 1 || height < 1 || width > max || height > max) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                _("Cannot export the grid at %d × %d pixels: each side must be between 1 and %d"), width, height,
                max);
    return FALSE;
  }
  gsize size = (gsize)width * (gsize)height * 4;
  guint8 *pixels = g_try_malloc(size);
  if (!pixels) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NO_SPACE, _("Not enough memory to export the grid at %d × %d pixels"),
                width, height);
    return FALSE;
  }
  loom_grid_view_upload(self);
  /* Lines and arrowheads keep their share of the picture at any size. */
  float scale = MAX(1.f, (float)MIN(width, height) / 700.f);
  LoomGridFrame frame;
  loom_grid_view_fill_frame(self, &frame, width, height, scale);
  if (!loom_grid_renderer_draw_offscreen(self->renderer, &self->scene, &frame, pixels, error)) {
    g_free(pixels);
    return FALSE;
  }
  g_autoptr(GBytes) bytes = g_bytes_new_take(pixels, size);
  g_autoptr(GdkTexture) texture = gdk_memory_texture_new(width, height, GDK_MEMORY_R8G8B8A8, bytes, (gsize)width * 4);
  g_autoptr(GBytes) png = gdk_texture_save_to_png_bytes(texture);
  gsize png_len;
  const char *png_data = g_bytes_get_data(png, &png_len);
  return g_file_set_contents(path, png_data, (gssize)png_len, error);
}

