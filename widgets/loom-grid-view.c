/*
 * LoomGridView draws a network's grid with OpenGL: for now the floor, a tile
 * per cell of the rows × cols plane, and faint outlines of the depth levels
 * above it, seen by an orbit camera that frames the whole depth × rows × cols
 * volume. Drag to orbit, scroll to zoom.
 *
 * GL: 3.3 core or GLES 3.0. The shaders in the GResource carry no #version
 * line; the one matching the context is prepended when they are compiled.
 */
#include "loom-grid-view.h"

#include <epoxy/gl.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "loom-grid-view-private.h"
#include "loom-widgets-resources.h"

#define SHADER_PATH "/org/loomworkbench/Workbench/widgets/shaders/"
#define MAX_CELLS 4096 /* per axis; beyond this the floor is unreadable anyway */

#define DEFAULT_YAW 0.65f
#define DEFAULT_PITCH 0.45f
#define MIN_PITCH 0.08f
#define MAX_PITCH 1.50f
#define FOV_Y 0.70f /* radians, about 40° */
/* Distance over the one that just fits the bounding sphere: perspective makes
 * the nearest corner stick out of the sphere's silhouette. */
#define DEFAULT_ZOOM 1.15f

struct _LoomGridView {
  GtkGLArea parent_instance;

  guint depth, rows, cols;

  /* Orbit camera: angles around the grid's centre and a zoom factor on the
   * distance that frames the whole volume. */
  float yaw, pitch, zoom;
  float drag_yaw, drag_pitch;

  GLuint program, vao;
  GLint u_mvp, u_size, u_margin, u_tile_even, u_tile_odd, u_line, u_border, u_line_px, u_ghost;
};

G_DEFINE_FINAL_TYPE(LoomGridView, loom_grid_view, GTK_TYPE_GL_AREA)

enum { PROP_0, PROP_DEPTH, PROP_ROWS, PROP_COLS, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* ---- column-major 4×4 matrices, just what the camera needs ---- */

typedef struct {
  float m[16];
} mat4;

static mat4 mat4_mul(const mat4 *a, const mat4 *b) {
  mat4 r;
  for (int c = 0; c < 4; c++)
    for (int row = 0; row < 4; row++) {
      float s = 0.f;
      for (int k = 0; k < 4; k++) s += a->m[k * 4 + row] * b->m[c * 4 + k];
      r.m[c * 4 + row] = s;
    }
  return r;
}

static mat4 mat4_perspective(float fovy, float aspect, float znear, float zfar) {
  float f = 1.f / tanf(fovy / 2.f);
  mat4 r = {{0}};
  r.m[0] = f / aspect;
  r.m[5] = f;
  r.m[10] = (zfar + znear) / (znear - zfar);
  r.m[11] = -1.f;
  r.m[14] = 2.f * zfar * znear / (znear - zfar);
  return r;
}

static void vec3_normalize(float v[3]) {
  float n = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (n > 0.f)
    for (int i = 0; i < 3; i++) v[i] /= n;
}

static mat4 mat4_look_at(const float eye[3], const float at[3]) {
  float f[3] = {at[0] - eye[0], at[1] - eye[1], at[2] - eye[2]};
  vec3_normalize(f);
  const float up[3] = {0.f, 1.f, 0.f};
  float s[3] = {f[1] * up[2] - f[2] * up[1], f[2] * up[0] - f[0] * up[2], f[0] * up[1] - f[1] * up[0]};
  vec3_normalize(s);
  float u[3] = {s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2], s[0] * f[1] - s[1] * f[0]};
  mat4 r = {{s[0], u[0], -f[0], 0.f, s[1], u[1], -f[1], 0.f, s[2], u[2], -f[2], 0.f, 0.f, 0.f, 0.f, 1.f}};
  r.m[12] = -(s[0] * eye[0] + s[1] * eye[1] + s[2] * eye[2]);
  r.m[13] = -(u[0] * eye[0] + u[1] * eye[1] + u[2] * eye[2]);
  r.m[14] = f[0] * eye[0] + f[1] * eye[1] + f[2] * eye[2];
  return r;
}

/* World space: x along columns, z along rows, y up through the depth. */
static mat4 camera_matrix(LoomGridView *self, int width, int height) {
  float cx = self->cols / 2.f, cy = self->depth / 2.f, cz = self->rows / 2.f;
  float radius = sqrtf(cx * cx + cy * cy + cz * cz);
  float dist = self->zoom * radius / sinf(FOV_Y / 2.f);
  float eye[3] = {
    cx + dist * cosf(self->pitch) * sinf(self->yaw),
    cy + dist * sinf(self->pitch),
    cz + dist * cosf(self->pitch) * cosf(self->yaw),
  };
  float at[3] = {cx, cy, cz};
  mat4 view = mat4_look_at(eye, at);
  mat4 proj = mat4_perspective(FOV_Y, height > 0 ? (float)width / height : 1.f,
                               MAX(dist - 2.f * radius, dist * 0.01f), dist + 2.f * radius);
  return mat4_mul(&proj, &view);
}

/* ---- GL resources ---- */

static GLuint compile_shader(GLenum type, const char *name, gboolean es, GError **error) {
  g_autofree char *path = g_strconcat(SHADER_PATH, name, NULL);
  g_autoptr(GBytes) bytes = g_resources_lookup_data(path, 0, error);
  if (!bytes) return 0;

  /* Precision qualifiers are mandatory in GLES fragment shaders and
   * meaningless in desktop GL, so only the ES prologue sets them. */
  const char *prologue = es ? "#version 300 es\nprecision highp float;\nprecision highp int;\n"
                            : "#version 330 core\n";
  gsize len;
  const char *body = g_bytes_get_data(bytes, &len);
  const char *sources[2] = {prologue, body};
  GLint lengths[2] = {-1, (GLint)len};

  GLuint shader = glCreateShader(type);
  glShaderSource(shader, 2, sources, lengths);
  glCompileShader(shader);
  GLint ok = GL_FALSE;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    GLint log_len = 0;
    glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &log_len);
    g_autofree char *log = g_malloc0(MAX(log_len, 1));
    glGetShaderInfoLog(shader, log_len, NULL, log);
    g_set_error(error, GDK_GL_ERROR, GDK_GL_ERROR_COMPILATION_FAILED,
                _("Cannot compile the shader %s: %s"), name, log);
    glDeleteShader(shader);
    return 0;
  }
  return shader;
}

static GLuint link_program(const char *vert, const char *frag, gboolean es, GError **error) {
  GLuint vs = compile_shader(GL_VERTEX_SHADER, vert, es, error);
  if (!vs) return 0;
  GLuint fs = compile_shader(GL_FRAGMENT_SHADER, frag, es, error);
  if (!fs) {
    glDeleteShader(vs);
    return 0;
  }
  GLuint program = glCreateProgram();
  glAttachShader(program, vs);
  glAttachShader(program, fs);
  glLinkProgram(program);
  /* The program keeps the compiled code; the shader objects can go now. */
  glDetachShader(program, vs);
  glDetachShader(program, fs);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = GL_FALSE;
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (!ok) {
    GLint log_len = 0;
    glGetProgramiv(program, GL_INFO_LOG_LENGTH, &log_len);
    g_autofree char *log = g_malloc0(MAX(log_len, 1));
    glGetProgramInfoLog(program, log_len, NULL, log);
    g_set_error(error, GDK_GL_ERROR, GDK_GL_ERROR_LINK_FAILED,
                _("Cannot link the shaders %s and %s: %s"), vert, frag, log);
    glDeleteProgram(program);
    return 0;
  }
  return program;
}

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
static GdkGLContext *loom_grid_view_create_context(GtkGLArea *area) {
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

static void loom_grid_view_realize(GtkWidget *widget) {
  LoomGridView *self = LOOM_GRID_VIEW(widget);
  GtkGLArea *area = GTK_GL_AREA(widget);

  GTK_WIDGET_CLASS(loom_grid_view_parent_class)->realize(widget);

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
  self->program = link_program("grid-floor.vert", "grid-floor.frag", es, &error);
  if (!self->program) {
    gtk_gl_area_set_error(area, error);
    return;
  }
  self->u_mvp = glGetUniformLocation(self->program, "u_mvp");
  self->u_size = glGetUniformLocation(self->program, "u_size");
  self->u_margin = glGetUniformLocation(self->program, "u_margin");
  self->u_tile_even = glGetUniformLocation(self->program, "u_tile_even");
  self->u_tile_odd = glGetUniformLocation(self->program, "u_tile_odd");
  self->u_line = glGetUniformLocation(self->program, "u_line");
  self->u_border = glGetUniformLocation(self->program, "u_border");
  self->u_line_px = glGetUniformLocation(self->program, "u_line_px");
  self->u_ghost = glGetUniformLocation(self->program, "u_ghost");

  /* Core profiles draw nothing without a bound vertex array, even when the
   * vertex shader reads no attributes. */
  glGenVertexArrays(1, &self->vao);
}

static void loom_grid_view_unrealize(GtkWidget *widget) {
  LoomGridView *self = LOOM_GRID_VIEW(widget);
  GtkGLArea *area = GTK_GL_AREA(widget);

  gtk_gl_area_make_current(area);
  if (!gtk_gl_area_get_error(area)) {
    if (self->vao) glDeleteVertexArrays(1, &self->vao);
    if (self->program) glDeleteProgram(self->program);
  }
  self->vao = 0;
  self->program = 0;

  GTK_WIDGET_CLASS(loom_grid_view_parent_class)->unrealize(widget);
}

/* Draws the scene into whatever framebuffer is bound; width/height in pixels. */
static void draw_scene(LoomGridView *self, int width, int height) {
  glViewport(0, 0, width, height);
  glClearColor(LOOM_GRID_VIEW_CLEAR_R, LOOM_GRID_VIEW_CLEAR_G, LOOM_GRID_VIEW_CLEAR_B, 1.f);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  if (!self->program || self->rows == 0 || self->cols == 0) return;

  mat4 mvp = camera_matrix(self, width, height);
  int scale = gtk_widget_get_scale_factor(GTK_WIDGET(self));

  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  glDisable(GL_DEPTH_TEST);
  glUseProgram(self->program);
  glUniformMatrix4fv(self->u_mvp, 1, GL_FALSE, mvp.m);
  glUniform2f(self->u_size, (float)self->cols, (float)self->rows);
  glUniform1f(self->u_margin, 0.25f);
  glUniform4f(self->u_tile_even, 0.192f, 0.204f, 0.247f, 1.f);
  glUniform4f(self->u_tile_odd, 0.169f, 0.180f, 0.220f, 1.f);
  glUniform4f(self->u_line, 0.345f, 0.400f, 0.494f, 1.f);
  glUniform4f(self->u_border, LOOM_GRID_VIEW_BORDER_R, LOOM_GRID_VIEW_BORDER_G,
              LOOM_GRID_VIEW_BORDER_B, 1.f);
  glUniform1f(self->u_line_px, 0.75f * scale);
  glUniform1f(self->u_ghost, 0.3f);
  glBindVertexArray(self->vao);
  /* Instance 0 is the floor, 1…depth outline the levels above it. */
  glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, (GLsizei)self->depth + 1);
  glBindVertexArray(0);
  glUseProgram(0);
  glDisable(GL_BLEND);
}

static void pixel_size(LoomGridView *self, int *width, int *height) {
  int scale = gtk_widget_get_scale_factor(GTK_WIDGET(self));
  *width = gtk_widget_get_width(GTK_WIDGET(self)) * scale;
  *height = gtk_widget_get_height(GTK_WIDGET(self)) * scale;
}

static gboolean loom_grid_view_render(GtkGLArea *area, GdkGLContext *context) {
  LoomGridView *self = LOOM_GRID_VIEW(area);
  int width, height;
  pixel_size(self, &width, &height);
  draw_scene(self, width, height);
  return TRUE;
}

GBytes *loom_grid_view_read_pixels(LoomGridView *self, int *width, int *height, GError **error) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), NULL);
  GtkGLArea *area = GTK_GL_AREA(self);

  if (!gtk_widget_get_realized(GTK_WIDGET(self)) || !self->program) {
    const GError *gl_error = gtk_gl_area_get_error(area);
    if (gl_error)
      g_propagate_error(error, g_error_copy(gl_error));
    else
      g_set_error_literal(error, GDK_GL_ERROR, GDK_GL_ERROR_NOT_AVAILABLE,
                          _("The grid view has no GL context yet"));
    return NULL;
  }

  /* GtkGLArea hands each finished frame to GTK as a texture and may recycle
   * it, so what is left in its framebuffer is undefined. Render the same
   * scene once more, through the same code path as a frame, and read that. */
  gtk_gl_area_make_current(area);
  gtk_gl_area_attach_buffers(area);
  int w, h;
  pixel_size(self, &w, &h);
  draw_scene(self, w, h);
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

/* ---- orbit camera input ---- */

static void drag_begin(GtkGestureDrag *gesture, double x, double y, LoomGridView *self) {
  self->drag_yaw = self->yaw;
  self->drag_pitch = self->pitch;
}

static void drag_update(GtkGestureDrag *gesture, double dx, double dy, LoomGridView *self) {
  /* A drag across the whole widget turns the grid about one full turn. */
  int w = MAX(gtk_widget_get_width(GTK_WIDGET(self)), 1);
  self->yaw = self->drag_yaw - (float)(dx / w) * 2.f * (float)G_PI;
  self->pitch = CLAMP(self->drag_pitch + (float)(dy / w) * 2.f * (float)G_PI, MIN_PITCH, MAX_PITCH);
  gtk_gl_area_queue_render(GTK_GL_AREA(self));
}

static gboolean scroll(GtkEventControllerScroll *controller, double dx, double dy, LoomGridView *self) {
  self->zoom = CLAMP(self->zoom * powf(1.1f, (float)dy), 0.2f, 5.f);
  gtk_gl_area_queue_render(GTK_GL_AREA(self));
  return TRUE;
}

void loom_grid_view_reset_camera(LoomGridView *self) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  self->yaw = DEFAULT_YAW;
  self->pitch = DEFAULT_PITCH;
  self->zoom = DEFAULT_ZOOM;
  gtk_gl_area_queue_render(GTK_GL_AREA(self));
}

/* ---- properties ---- */

static void set_dimension(LoomGridView *self, guint *field, guint value, int prop) {
  if (*field == value) return;
  *field = value;
  gtk_gl_area_queue_render(GTK_GL_AREA(self));
  g_object_notify_by_pspec(G_OBJECT(self), properties[prop]);
}

guint loom_grid_view_get_depth(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), 0);
  return self->depth;
}

void loom_grid_view_set_depth(LoomGridView *self, guint depth) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  set_dimension(self, &self->depth, MIN(depth, MAX_CELLS), PROP_DEPTH);
}

guint loom_grid_view_get_rows(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), 0);
  return self->rows;
}

void loom_grid_view_set_rows(LoomGridView *self, guint rows) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  set_dimension(self, &self->rows, MIN(rows, MAX_CELLS), PROP_ROWS);
}

guint loom_grid_view_get_cols(LoomGridView *self) {
  g_return_val_if_fail(LOOM_IS_GRID_VIEW(self), 0);
  return self->cols;
}

void loom_grid_view_set_cols(LoomGridView *self, guint cols) {
  g_return_if_fail(LOOM_IS_GRID_VIEW(self));
  set_dimension(self, &self->cols, MIN(cols, MAX_CELLS), PROP_COLS);
}

static void loom_grid_view_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomGridView *self = LOOM_GRID_VIEW(object);
  switch (prop_id) {
  case PROP_DEPTH: g_value_set_uint(value, self->depth); break;
  case PROP_ROWS: g_value_set_uint(value, self->rows); break;
  case PROP_COLS: g_value_set_uint(value, self->cols); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_grid_view_set_property(GObject *object, guint prop_id, const GValue *value,
                                        GParamSpec *pspec) {
  LoomGridView *self = LOOM_GRID_VIEW(object);
  switch (prop_id) {
  case PROP_DEPTH: loom_grid_view_set_depth(self, g_value_get_uint(value)); break;
  case PROP_ROWS: loom_grid_view_set_rows(self, g_value_get_uint(value)); break;
  case PROP_COLS: loom_grid_view_set_cols(self, g_value_get_uint(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_grid_view_class_init(LoomGridViewClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  GtkGLAreaClass *area_class = GTK_GL_AREA_CLASS(klass);

  object_class->get_property = loom_grid_view_get_property;
  object_class->set_property = loom_grid_view_set_property;
  widget_class->realize = loom_grid_view_realize;
  widget_class->unrealize = loom_grid_view_unrealize;
  area_class->render = loom_grid_view_render;
  /* GTK 4.8 runs its default through a class handler, not the vfunc slot. */
  g_signal_override_class_handler("create-context", LOOM_TYPE_GRID_VIEW,
                                  G_CALLBACK(loom_grid_view_create_context));

  properties[PROP_DEPTH] = g_param_spec_uint("depth", NULL, NULL, 0, MAX_CELLS, 4,
                                             G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                               G_PARAM_STATIC_STRINGS);
  properties[PROP_ROWS] = g_param_spec_uint("rows", NULL, NULL, 0, MAX_CELLS, 4,
                                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                              G_PARAM_STATIC_STRINGS);
  properties[PROP_COLS] = g_param_spec_uint("cols", NULL, NULL, 0, MAX_CELLS, 4,
                                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                              G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name(widget_class, "loomgridview");

  /* The resource object lives in a static library; referencing it here makes
   * sure the linker keeps it (and its constructor registers the shaders). */
  (void)loom_widgets_get_resource();
}

static void loom_grid_view_init(LoomGridView *self) {
  self->depth = self->rows = self->cols = 4;
  self->yaw = DEFAULT_YAW;
  self->pitch = DEFAULT_PITCH;
  self->zoom = DEFAULT_ZOOM;

  gtk_gl_area_set_has_depth_buffer(GTK_GL_AREA(self), TRUE);
  gtk_widget_set_focusable(GTK_WIDGET(self), TRUE);

  GtkGesture *drag = gtk_gesture_drag_new();
  g_signal_connect(drag, "drag-begin", G_CALLBACK(drag_begin), self);
  g_signal_connect(drag, "drag-update", G_CALLBACK(drag_update), self);
  gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(drag));

  GtkEventController *wheel = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  g_signal_connect(wheel, "scroll", G_CALLBACK(scroll), self);
  gtk_widget_add_controller(GTK_WIDGET(self), wheel);
}

GtkWidget *loom_grid_view_new(void) {
  return g_object_new(LOOM_TYPE_GRID_VIEW, NULL);
}
