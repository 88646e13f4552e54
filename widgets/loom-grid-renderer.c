/*
 * GL for the grid view. The shaders in the GResource carry no #version line;
 * the one matching the context is prepended when they are compiled.
 * Instance buffers change only in loom_grid_renderer_upload(); a frame sets
 * uniforms and issues draw calls. The only other upload is an eye region's
 * visible set, once per region after each upload (docs/grid-view.md).
 */
#include "loom-grid-renderer.h"

#include <epoxy/gl.h>
#include <gdk/gdk.h>
#include <glib/gi18n.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "loom-grid-view-private.h"

#define SHADER_PATH "/org/loomworkbench/Workbench/widgets/shaders/"
#define LINK_SEGMENTS 32 /* SEGMENTS in grid-link.vert */
#define LINK_VERTICES (2 * (LINK_SEGMENTS + 1) + 4)
#define BOX_CORNERS 7  /* per run of blocks: the corners of its three faces turned to the eye (grid-box.vert) */
#define BOX_INDICES 18 /* two triangles per face */
#define RING_VERTICES 10 /* the outline of a level: a frame around its edge (grid-floor.vert) */
#define SLICE_ENTRY 27 /* visibility cache: 27 eye regions, then the Z-slice's */

enum {
  U_MVP, U_SIZE, U_MARGIN, U_TILE_EVEN, U_TILE_ODD, U_LINE, U_BORDER, U_LINE_PX, U_GHOST, U_RING,  /* floor */
  U_COLOR_MODE, U_SELECTED, U_HOVER, U_HIGHLIGHT, U_PROBLEM, U_BACKGROUND, U_EYE, U_FIRST, U_BOXES, /* boxes */
  U_COLOR,                                                                                           /* flat */
  U_VIEWPORT, U_WIDTH_PX, U_ARROW_PX, U_Z_SLICE,                                                     /* links */
  U_SINGLE, U_SLOT_COLORS, U_ALERT, U_PULSE, U_LIVE,                                                 /* boxes */
  U_FLOW,                                                                                            /* links */
  N_UNIFORMS
};

static const char *const uniform_names[N_UNIFORMS] = {
  "u_mvp",       "u_size",     "u_margin",   "u_tile_even", "u_tile_odd",   "u_line",     "u_border",
  "u_line_px",   "u_ghost",    "u_ring",     "u_color_mode", "u_selected",  "u_hover",    "u_highlight",
  "u_problem",   "u_background", "u_eye",    "u_first",     "u_boxes",      "u_color",    "u_viewport",
  "u_width_px",  "u_arrow_px", "u_z_slice",   "u_single",     "u_slot_colors", "u_alert",  "u_pulse",
  "u_live",      "u_flow",
};

typedef struct {
  GLuint id;
  GLint u[N_UNIFORMS]; /* -1 where the program has no such uniform */
} program;

/* What an eye in one region sees: element buffers of the shell's blocks
 * (nearest first) and of the spine's segments, built on first use after
 * each upload, so a moving camera uploads nothing. */
typedef struct {
  GLuint box_ebo, spine_ebo;
  int n_box_indices, n_spine_indices;
  int z_slice; /* the slice entry: which level it holds */
  gboolean valid, shell;
} visible_set;

struct LoomGridRenderer {
  program floor, box, line, link;
  gboolean es;
  GLuint empty_vao; /* the floor and the blocks read no vertex attributes */
  GLuint box_tex;   /* LoomGridBox records, LOOM_GRID_BOXES_PER_ROW per row */
  GLuint slot_tex;  /* RGBA8, one texel per block: metric colour, alert (alpha) */
  GLuint flow_vbo;  /* one float per link: the flow through it, 0..1 */
  int n_flow;       /* links the flow buffer has room for */
  gboolean flow;    /* the flows are set: arcs are drawn by them */
  GLuint one_box_ebo; /* the indices of block 0 alone: selection, hover, marker */
  int box_rows, marker_index;
  visible_set visible[SLICE_ENTRY + 1];
  GLuint cell_vao, cell_vbo, spine_vao, spine_vbo;
  GLuint link_vao, link_vbo, rubber_vao, rubber_vbo;
};

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
    g_set_error(error, GDK_GL_ERROR, GDK_GL_ERROR_COMPILATION_FAILED, _("Cannot compile the shader %s: %s"), name,
                log);
    glDeleteShader(shader);
    return 0;
  }
  return shader;
}

static gboolean link_program(program *p, const char *vert, const char *frag, gboolean es, GError **error) {
  GLuint vs = compile_shader(GL_VERTEX_SHADER, vert, es, error);
  if (!vs) return FALSE;
  GLuint fs = compile_shader(GL_FRAGMENT_SHADER, frag, es, error);
  if (!fs) {
    glDeleteShader(vs);
    return FALSE;
  }
  GLuint id = glCreateProgram();
  glAttachShader(id, vs);
  glAttachShader(id, fs);
  glLinkProgram(id);
  /* The program keeps the compiled code; the shader objects can go now. */
  glDetachShader(id, vs);
  glDetachShader(id, fs);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = GL_FALSE;
  glGetProgramiv(id, GL_LINK_STATUS, &ok);
  if (!ok) {
    GLint log_len = 0;
    glGetProgramiv(id, GL_INFO_LOG_LENGTH, &log_len);
    g_autofree char *log = g_malloc0(MAX(log_len, 1));
    glGetProgramInfoLog(id, log_len, NULL, log);
    g_set_error(error, GDK_GL_ERROR, GDK_GL_ERROR_LINK_FAILED, _("Cannot link the shaders %s and %s: %s"), vert, frag,
                log);
    glDeleteProgram(id);
    return FALSE;
  }
  p->id = id;
  for (int i = 0; i < N_UNIFORMS; i++) p->u[i] = glGetUniformLocation(id, uniform_names[i]);
  return TRUE;
}

static void setup_line_vao(GLuint vao, GLuint vbo) {
  glBindVertexArray(vao);
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), NULL);
  glEnableVertexAttribArray(0);
}

static void setup_link_vao(GLuint vao, GLuint vbo) {
  glBindVertexArray(vao);
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  GLsizei stride = sizeof(LoomGridArc);
  glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, stride, (void *)offsetof(LoomGridArc, src));
  glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, stride, (void *)offsetof(LoomGridArc, dst));
  glVertexAttribPointer(2, 4, GL_UNSIGNED_BYTE, GL_TRUE, stride, (void *)offsetof(LoomGridArc, rgba));
  glVertexAttribPointer(3, 3, GL_FLOAT, GL_FALSE, stride, (void *)offsetof(LoomGridArc, src_z));
  for (GLuint i = 0; i < 4; i++) {
    glEnableVertexAttribArray(i);
    glVertexAttribDivisor(i, 1);
  }
}

/* Block @b's two triangles per face (see grid-box.vert for the corners).
 * Each face's last vertex is its far corner, which carries the face's flat
 * attributes (GL's and GLES's provoking vertex is the last). */
static void box_indices(int b, guint32 out[BOX_INDICES]) {
  static const guint8 pattern[BOX_INDICES] = {0, 2, 4, 3, 0, 4, 0, 1, 5, 3, 0, 5, 0, 1, 6, 2, 0, 6};
  for (int i = 0; i < BOX_INDICES; i++) out[i] = (guint32)(BOX_CORNERS * b + pattern[i]);
}

static void forget_visible(LoomGridRenderer *r) {
  for (int i = 0; i <= SLICE_ENTRY; i++) r->visible[i].valid = FALSE;
}

LoomGridRenderer *loom_grid_renderer_new(gboolean es, GError **error) {
  LoomGridRenderer *r = g_new0(LoomGridRenderer, 1);
  r->es = es;
  if (!link_program(&r->floor, "grid-floor.vert", "grid-floor.frag", es, error) ||
      !link_program(&r->box, "grid-box.vert", "grid-box.frag", es, error) ||
      !link_program(&r->line, "grid-line.vert", "grid-flat.frag", es, error) ||
      !link_program(&r->link, "grid-link.vert", "grid-link.frag", es, error)) {
    loom_grid_renderer_free(r);
    return NULL;
  }
  GLuint vaos[5], vbos[4];
  glGenVertexArrays(5, vaos);
  glGenBuffers(4, vbos);
  r->empty_vao = vaos[0];
  r->cell_vao = vaos[1], r->cell_vbo = vbos[0];
  r->spine_vao = vaos[2], r->spine_vbo = vbos[1];
  r->link_vao = vaos[3], r->link_vbo = vbos[2];
  r->rubber_vao = vaos[4], r->rubber_vbo = vbos[3];

  GLuint textures[2];
  glGenTextures(2, textures);
  r->box_tex = textures[0];
  r->slot_tex = textures[1];
  for (int i = 0; i < 2; i++) {
    glBindTexture(GL_TEXTURE_2D, textures[i]);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  }
  glBindTexture(GL_TEXTURE_2D, 0);

  setup_line_vao(r->cell_vao, r->cell_vbo);
  setup_line_vao(r->spine_vao, r->spine_vbo);
  setup_link_vao(r->link_vao, r->link_vbo);
  /* The links' flows, a buffer of their own: they change while training,
   * the arcs only with the network. The rubber arc has none (u_flow 0). */
  glGenBuffers(1, &r->flow_vbo);
  glBindBuffer(GL_ARRAY_BUFFER, r->flow_vbo);
  glVertexAttribPointer(4, 1, GL_FLOAT, GL_FALSE, sizeof(float), NULL);
  glEnableVertexAttribArray(4);
  glVertexAttribDivisor(4, 1);
  /* The one-instance buffer gets its storage now; frames only overwrite it. */
  glBindBuffer(GL_ARRAY_BUFFER, r->rubber_vbo);
  glBufferData(GL_ARRAY_BUFFER, sizeof(LoomGridArc), NULL, GL_DYNAMIC_DRAW);
  setup_link_vao(r->rubber_vao, r->rubber_vbo);

  /* Bound to the empty VAO, whose element buffer the block draws rebind. */
  glBindVertexArray(r->empty_vao);
  glGenBuffers(1, &r->one_box_ebo);
  guint32 one[BOX_INDICES];
  box_indices(0, one);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, r->one_box_ebo);
  glBufferData(GL_ELEMENT_ARRAY_BUFFER, sizeof one, one, GL_STATIC_DRAW);

  glBindVertexArray(0);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  return r;
}

void loom_grid_renderer_free(LoomGridRenderer *r) {
  if (!r) return;
  program *programs[] = {&r->floor, &r->box, &r->line, &r->link};
  for (gsize i = 0; i < G_N_ELEMENTS(programs); i++)
    if (programs[i]->id) glDeleteProgram(programs[i]->id);
  GLuint vaos[5] = {r->empty_vao, r->cell_vao, r->spine_vao, r->link_vao, r->rubber_vao};
  GLuint vbos[4] = {r->cell_vbo, r->spine_vbo, r->link_vbo, r->rubber_vbo};
  if (r->empty_vao) {
    glDeleteVertexArrays(5, vaos);
    glDeleteBuffers(4, vbos);
    GLuint textures[2] = {r->box_tex, r->slot_tex};
    glDeleteTextures(2, textures);
    glDeleteBuffers(1, &r->flow_vbo);
    glDeleteBuffers(1, &r->one_box_ebo);
    for (int i = 0; i <= SLICE_ENTRY; i++) {
      GLuint ebos[2] = {r->visible[i].box_ebo, r->visible[i].spine_ebo};
      if (ebos[0]) glDeleteBuffers(2, ebos);
    }
  }
  g_free(r);
}

static void upload(GLuint vbo, const void *data, gsize bytes) {
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)bytes, bytes ? data : NULL, GL_STATIC_DRAW);
}

void loom_grid_renderer_upload(LoomGridRenderer *r, const LoomGridScene *s) {
  /* Whole rows, with room for one more block after the last: the marker. */
  r->marker_index = s->n_boxes;
  r->box_rows = s->boxes ? s->n_boxes / LOOM_GRID_BOXES_PER_ROW + 1 : 0;
  glBindTexture(GL_TEXTURE_2D, r->box_tex);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  if (r->box_rows > 0)
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA32F, 3 * LOOM_GRID_BOXES_PER_ROW, r->box_rows, 0, GL_RGBA, GL_FLOAT,
                 s->boxes);
  /* Slot colours start out as nothing: no metric colour, no alert. */
  glBindTexture(GL_TEXTURE_2D, r->slot_tex);
  if (r->box_rows > 0) {
    g_autofree guint8 *zeros = g_malloc0((gsize)r->box_rows * LOOM_GRID_BOXES_PER_ROW * 4);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, LOOM_GRID_BOXES_PER_ROW, r->box_rows, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                 zeros);
  }
  glBindTexture(GL_TEXTURE_2D, 0);
  upload(r->cell_vbo, s->cells, (gsize)s->n_cells * 24 * 3 * sizeof(float));
  upload(r->spine_vbo, s->spine, (gsize)s->n_spine * 3 * sizeof(float));
  upload(r->link_vbo, s->arcs, (gsize)s->n_arcs * sizeof(LoomGridArc));
  /* Room for every arc's flow, read by each instance even while unused. */
  g_autofree float *no_flow = g_new0(float, MAX(s->n_arcs, 1));
  upload(r->flow_vbo, no_flow, (gsize)MAX(s->n_arcs, 1) * sizeof(float));
  r->n_flow = s->n_arcs;
  r->flow = FALSE;
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  forget_visible(r);
}

void loom_grid_renderer_upload_slot_colors(LoomGridRenderer *r, const guint8 *rgba, gsize texels) {
  int rows = (int)MIN(texels / LOOM_GRID_BOXES_PER_ROW, (gsize)r->box_rows);
  if (rows <= 0) return;
  glBindTexture(GL_TEXTURE_2D, r->slot_tex);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, LOOM_GRID_BOXES_PER_ROW, rows, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
  glBindTexture(GL_TEXTURE_2D, 0);
}

void loom_grid_renderer_upload_link_flow(LoomGridRenderer *r, const float *flow, int n) {
  r->flow = flow != NULL && n > 0 && r->n_flow > 0;
  if (!r->flow) return;
  glBindBuffer(GL_ARRAY_BUFFER, r->flow_vbo);
  glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)((gsize)MIN(n, r->n_flow) * sizeof *flow), flow);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
}

/* The visible set for this frame's eye, built when first needed. */
static const visible_set *visible_for(LoomGridRenderer *r, const LoomGridScene *s, const LoomGridFrame *f) {
  int region = loom_grid_scene_region(s, f->eye);
  gboolean slice = f->z_slice >= 0 && f->z_slice < s->depth;
  visible_set *v = &r->visible[slice ? SLICE_ENTRY : region];
  gboolean shell = !f->all_blocks;
  if (v->valid && v->shell == shell && (!slice || v->z_slice == f->z_slice)) return v;
  /* The slice entry is ordered for the region it was built in; any order is
   * right, only the speed differs, and a slice is small. */
  if (!v->box_ebo) {
    GLuint ebos[2];
    glGenBuffers(2, ebos);
    v->box_ebo = ebos[0];
    v->spine_ebo = ebos[1];
  }
  g_autofree int *boxes = g_new(int, MAX(s->n_boxes, 1));
  g_autofree int *segments = g_new(int, MAX(s->n_spine, 1));
  int n_segments = 0;
  int n_visible = loom_grid_scene_visible(s, region, slice ? f->z_slice : -1, shell, boxes, segments, &n_segments);
  g_autofree guint32 *indices = g_new(guint32, MAX((gsize)n_visible * BOX_INDICES, (gsize)n_segments * 2) + 1);
  /* A cell is kept or left out whole, so with its first block a run is
   * kept whole: one box per run (grid-box.vert). */
  int n = 0;
  for (int i = 0; i < n_visible; i++)
    if (s->boxes[boxes[i]].run > 0.f) box_indices(boxes[i], indices + (gsize)n++ * BOX_INDICES);
  glBindVertexArray(r->empty_vao);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, v->box_ebo);
  glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)((gsize)n * BOX_INDICES * sizeof *indices), indices,
               GL_STATIC_DRAW);
  for (int i = 0; i < n_segments; i++) {
    indices[2 * i] = (guint32)segments[i];
    indices[2 * i + 1] = (guint32)segments[i] + 1;
  }
  glBindVertexArray(r->spine_vao);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, v->spine_ebo);
  glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)((gsize)n_segments * 2 * sizeof *indices), indices,
               GL_STATIC_DRAW);
  glBindVertexArray(0);
  v->n_box_indices = n * BOX_INDICES;
  v->n_spine_indices = n_segments * 2;
  v->z_slice = slice ? f->z_slice : -1;
  v->shell = shell;
  v->valid = TRUE;
  return v;
}

/* Floor, level outlines and empty cells lie behind every block: drawn after
 * the blocks at the far end of the depth range, they are shaded only where
 * no block covers them. */
static void depth_range(LoomGridRenderer *r, float near, float far) {
  if (r->es)
    glDepthRangef(near, far);
  else
    glDepthRange(near, far);
}

/* First and count of level z's (or every level's) entries in a z-major array. */
static void level_range(const int *first, int depth, int z, int total, int *start, int *count) {
  if (z < 0 || z >= depth || !first) {
    *start = 0;
    *count = total;
  } else {
    *start = first[z];
    *count = first[z + 1] - first[z];
  }
}

static void draw_floor(LoomGridRenderer *r, const LoomGridFrame *f) {
  /* In a Z-slice the floor moves up to the slice's level. */
  LoomMat4 mvp = f->mvp;
  float lift = f->z_slice >= 0 ? (float)f->z_slice : 0.f;
  for (int row = 0; row < 4; row++) mvp.m[12 + row] += mvp.m[4 + row] * lift;
  const GLint *u = r->floor.u;
  glUseProgram(r->floor.id);
  glUniformMatrix4fv(u[U_MVP], 1, GL_FALSE, mvp.m);
  glUniform2f(u[U_SIZE], (float)f->cols, (float)f->rows);
  glUniform1f(u[U_MARGIN], 0.25f);
  glUniform4f(u[U_TILE_EVEN], 0.192f, 0.204f, 0.247f, 1.f);
  glUniform4f(u[U_TILE_ODD], 0.169f, 0.180f, 0.220f, 1.f);
  glUniform4f(u[U_LINE], 0.345f, 0.400f, 0.494f, 1.f);
  glUniform4f(u[U_BORDER], LOOM_GRID_VIEW_BORDER_R, LOOM_GRID_VIEW_BORDER_G, LOOM_GRID_VIEW_BORDER_B, 1.f);
  glUniform1f(u[U_LINE_PX], 0.75f * f->scale);
  glUniform1f(u[U_GHOST], 0.3f);
  glBindVertexArray(r->empty_vao);
  glUniform1i(u[U_RING], 0);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  /* Levels 1…depth: only a frame along their edge, where the outline is. */
  if (f->z_slice < 0 && f->depth > 0) {
    glUniform1i(u[U_RING], 1);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, RING_VERTICES, f->depth);
  }
}

static void box_uniforms(LoomGridRenderer *r, const LoomGridFrame *f, int selected, int hover) {
  const GLint *u = r->box.u;
  glUseProgram(r->box.id);
  glUniform1i(u[U_FIRST], 0);
  glUniform1i(u[U_SINGLE], 0);
  glUniform1i(u[U_BOXES], 0);
  glUniform1i(u[U_SLOT_COLORS], 1);
  glUniform3f(u[U_ALERT], LOOM_GRID_VIEW_ALERT_R, LOOM_GRID_VIEW_ALERT_G, LOOM_GRID_VIEW_ALERT_B);
  glUniform1f(u[U_PULSE], f->pulse);
  glUniform1i(u[U_LIVE], f->live);
  glUniformMatrix4fv(u[U_MVP], 1, GL_FALSE, f->mvp.m);
  glUniform3f(u[U_EYE], f->eye[0], f->eye[1], f->eye[2]);
  glUniform1i(u[U_COLOR_MODE], f->color_mode);
  glUniform1i(u[U_SELECTED], selected);
  glUniform1i(u[U_HOVER], hover);
  glUniform3f(u[U_HIGHLIGHT], LOOM_GRID_VIEW_HIGHLIGHT_R, LOOM_GRID_VIEW_HIGHLIGHT_G, LOOM_GRID_VIEW_HIGHLIGHT_B);
  glUniform3f(u[U_PROBLEM], LOOM_GRID_VIEW_PROBLEM_R, LOOM_GRID_VIEW_PROBLEM_G, LOOM_GRID_VIEW_PROBLEM_B);
  glUniform3f(u[U_BACKGROUND], LOOM_GRID_VIEW_CLEAR_R, LOOM_GRID_VIEW_CLEAR_G, LOOM_GRID_VIEW_CLEAR_B);
}

static void link_uniforms(LoomGridRenderer *r, const LoomGridFrame *f, int selected, gboolean flow) {
  const GLint *u = r->link.u;
  glUseProgram(r->link.id);
  glUniform1i(u[U_FLOW], flow);
  glUniformMatrix4fv(u[U_MVP], 1, GL_FALSE, f->mvp.m);
  glUniform2f(u[U_VIEWPORT], (float)f->width, (float)f->height);
  glUniform1f(u[U_WIDTH_PX], 1.5f * f->scale);
  glUniform1f(u[U_ARROW_PX], 14.f * f->scale);
  glUniform1f(u[U_Z_SLICE], (float)f->z_slice);
  glUniform1i(u[U_SELECTED], selected);
  glUniform3f(u[U_HIGHLIGHT], LOOM_GRID_VIEW_HIGHLIGHT_R, LOOM_GRID_VIEW_HIGHLIGHT_G, LOOM_GRID_VIEW_HIGHLIGHT_B);
}

/* One block again, over itself or over nothing (LEQUAL): the selected and
 * hovered blocks may lie inside the shell, the marker is no block at all.
 * Drawn on its own, not as part of its run. */
static void draw_one_box(LoomGridRenderer *r, int index) {
  glUniform1i(r->box.u[U_FIRST], index);
  glUniform1i(r->box.u[U_SINGLE], 1);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, r->one_box_ebo);
  glDrawElements(GL_TRIANGLES, BOX_INDICES, GL_UNSIGNED_INT, NULL);
}

static gboolean in_slice(const LoomGridScene *s, const LoomGridFrame *f, int box) {
  return box >= 0 && box < s->n_boxes && (f->z_slice < 0 || s->box_coords[box].z == f->z_slice);
}

void loom_grid_renderer_draw(LoomGridRenderer *r, const LoomGridScene *s, const LoomGridFrame *f) {
  glViewport(0, 0, f->width, f->height);
  glClearColor(LOOM_GRID_VIEW_CLEAR_R, LOOM_GRID_VIEW_CLEAR_G, LOOM_GRID_VIEW_CLEAR_B, 1.f);
  glDepthMask(GL_TRUE);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  if (f->rows <= 0 || f->cols <= 0) return;

  /* Blocks first: opaque, nearest first, each pixel shaded about once. */
  glDisable(GL_BLEND);
  glDisable(GL_CULL_FACE); /* grid-box.vert emits only faces turned to the eye */
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LEQUAL);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, r->slot_tex);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, r->box_tex);
  if (s->n_boxes > 0 && r->box_rows > 0) {
    const visible_set *v = visible_for(r, s, f);
    box_uniforms(r, f, f->selected_box, f->hover_box);
    glBindVertexArray(r->empty_vao);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, v->box_ebo);
    glDrawElements(GL_TRIANGLES, v->n_box_indices, GL_UNSIGNED_INT, NULL);
    if (in_slice(s, f, f->selected_box)) draw_one_box(r, f->selected_box);
    if (in_slice(s, f, f->hover_box) && f->hover_box != f->selected_box) draw_one_box(r, f->hover_box);
  }

  /* Behind every block: the floor, the levels' outlines, empty cells. */
  glDepthMask(GL_FALSE);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  depth_range(r, 1.f, 1.f);
  draw_floor(r, f);
  int start, count;
  level_range(s->cell_first, s->depth, f->z_slice, s->n_cells, &start, &count);
  if (count > 0) {
    glUseProgram(r->line.id);
    glUniformMatrix4fv(r->line.u[U_MVP], 1, GL_FALSE, f->mvp.m);
    glUniform4f(r->line.u[U_COLOR], 0.60f, 0.66f, 0.78f, 0.22f);
    glBindVertexArray(r->cell_vao);
    glDrawArrays(GL_LINES, start * 24, count * 24);
  }
  depth_range(r, 0.f, 1.f);

  if (f->marker && r->box_rows > 0) {
    /* The spare block after the last one holds the marker; translucent, it
     * shows only the faces that face the eye (no back faces behind them). */
    int i = r->marker_index;
    glTexSubImage2D(GL_TEXTURE_2D, 0, 3 * (i % LOOM_GRID_BOXES_PER_ROW), i / LOOM_GRID_BOXES_PER_ROW, 3, 1, GL_RGBA,
                    GL_FLOAT, &f->marker_box);
    box_uniforms(r, f, -1, -1);
    glBindVertexArray(r->empty_vao);
    draw_one_box(r, i);
  }
  glBindTexture(GL_TEXTURE_2D, 0);
  glActiveTexture(GL_TEXTURE1);
  glBindTexture(GL_TEXTURE_2D, 0);
  glActiveTexture(GL_TEXTURE0);

  /* The spine: faint, between the blocks (inside them it is hidden). */
  if (s->n_spine > 1 && s->n_boxes > 0) {
    const visible_set *v = visible_for(r, s, f);
    if (v->n_spine_indices > 0) {
      glUseProgram(r->line.id);
      glUniformMatrix4fv(r->line.u[U_MVP], 1, GL_FALSE, f->mvp.m);
      glUniform4f(r->line.u[U_COLOR], 0.92f, 0.94f, 1.0f, 0.55f);
      glBindVertexArray(r->spine_vao);
      glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, v->spine_ebo);
      glDrawElements(GL_LINES, v->n_spine_indices, GL_UNSIGNED_INT, NULL);
    }
  }

  /* Links on top of everything: they are few and carry the most meaning. */
  glDisable(GL_DEPTH_TEST);
  if (s->n_arcs > 0) {
    link_uniforms(r, f, f->selected_link, r->flow);
    glBindVertexArray(r->link_vao);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, LINK_VERTICES, s->n_arcs);
  }
  /* The rubber arc and a logic shift's arrow: single arcs of their own colour. */
  const LoomGridArc *single[2] = {f->rubber ? &f->rubber_arc : NULL, f->shift ? &f->shift_arc : NULL};
  for (int i = 0; i < 2; i++) {
    if (!single[i]) continue;
    /* The rubber arc is drawn as selected; the shift arrow in its own colour. */
    link_uniforms(r, f, i == 0 ? 0 : -1, FALSE);
    glBindBuffer(GL_ARRAY_BUFFER, r->rubber_vbo);
    glBufferSubData(GL_ARRAY_BUFFER, 0, sizeof *single[i], single[i]);
    glBindVertexArray(r->rubber_vao);
    glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, LINK_VERTICES, 1);
  }

  glBindVertexArray(0);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  glUseProgram(0);
  glDepthMask(GL_TRUE);
  glDisable(GL_BLEND);
}

int loom_grid_renderer_max_size(LoomGridRenderer *r) {
  GLint rb = 0, dims[2] = {0, 0};
  glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &rb);
  glGetIntegerv(GL_MAX_VIEWPORT_DIMS, dims);
  return MIN(rb, MIN(dims[0], dims[1]));
}

gboolean loom_grid_renderer_draw_offscreen(LoomGridRenderer *r, const LoomGridScene *s, const LoomGridFrame *f,
                                           guint8 *rgba, GError **error) {
  GLint previous = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previous);
  while (glGetError() != GL_NO_ERROR) {} /* report only what this call causes */

  GLuint fbo, rbs[2];
  glGenFramebuffers(1, &fbo);
  glGenRenderbuffers(2, rbs);
  glBindRenderbuffer(GL_RENDERBUFFER, rbs[0]);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, f->width, f->height);
  glBindRenderbuffer(GL_RENDERBUFFER, rbs[1]);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH24_STENCIL8, f->width, f->height);
  glBindRenderbuffer(GL_RENDERBUFFER, 0);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rbs[0]);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_STENCIL_ATTACHMENT, GL_RENDERBUFFER, rbs[1]);

  gboolean ok = FALSE;
  GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    g_set_error(error, GDK_GL_ERROR, GDK_GL_ERROR_NOT_AVAILABLE,
                _("Cannot render the grid off-screen at %d × %d pixels (framebuffer status 0x%x)"), f->width,
                f->height, status);
  } else {
    loom_grid_renderer_draw(r, s, f);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, f->width, f->height, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    GLenum err = glGetError();
    if (err != GL_NO_ERROR) {
      g_set_error(error, GDK_GL_ERROR, GDK_GL_ERROR_NOT_AVAILABLE,
                  _("Rendering the grid off-screen failed (GL error 0x%x)"), err);
    } else {
      /* GL's rows run bottom-up; images run top-down. Swap in place. */
      gsize stride = (gsize)f->width * 4;
      for (int y = 0; y < f->height / 2; y++) {
        guint8 *a = rgba + (gsize)y * stride, *b = rgba + (gsize)(f->height - 1 - y) * stride;
        for (gsize i = 0; i < stride; i++) {
          guint8 t = a[i];
          a[i] = b[i];
          b[i] = t;
        }
      }
      ok = TRUE;
    }
  }
  glBindFramebuffer(GL_FRAMEBUFFER, (GLuint)previous);
  glDeleteFramebuffers(1, &fbo);
  glDeleteRenderbuffers(2, rbs);
  return ok;
}

/* llvmpipe compiles a program's machine code for each pipeline state the
 * first time a draw uses it, tens of milliseconds each: the first visible
 * frames would stall. So draw a tiny network once (blocks, a run, an empty
 * cell, spine, a link, the marker, the rubber arc: every draw call and state
 * of a frame) into a small framebuffer of the same formats as the view's. */
void loom_grid_renderer_warm_up(LoomGridRenderer *r) {
  loom_error err = {0};
  loom_net *net = loom_net_new(2, 1, 2, 2, &err);
  if (!net) return;
  const loom_coord at[] = {{0, 0, 0, 0}, {0, 0, 0, 1}, {1, 0, 1, 0}};
  for (gsize i = 0; i < G_N_ELEMENTS(at); i++) {
    loom_layer *layer = loom_layer_new_by_name("relu", &err);
    if (layer && loom_net_place(net, at[i], layer, &err) != 0) loom_layer_free(layer);
  }
  loom_link link = {at[0], at[2], LOOM_MERGE_ADD};
  loom_net_add_link(net, &link, &err);
  LoomGridScene scene = {0};
  loom_grid_scene_build(&scene, net, NULL, 0);
  loom_grid_renderer_upload(r, &scene);

  LoomGridFrame f = {0};
  LoomGridCamera cam = {0};
  loom_grid_camera_reset(&cam);
  cam.depth = scene.depth, cam.rows = scene.rows, cam.cols = scene.cols;
  f.width = f.height = 16;
  loom_grid_camera_frame(&cam, (float)f.width, (float)f.height);
  f.mvp = loom_grid_camera_matrix(&cam, (float)f.width, (float)f.height);
  loom_grid_camera_eye(&cam, f.eye);
  f.scale = 1.f;
  f.depth = scene.depth, f.rows = scene.rows, f.cols = scene.cols;
  f.z_slice = -1;
  f.selected_box = 0, f.hover_box = 1, f.selected_link = 0;
  f.marker = TRUE;
  loom_grid_slot_box(scene.layers_per_cell, (loom_coord){0, 0, 1, 0}, f.marker_box.min, f.marker_box.size);
  for (int i = 0; i < 3; i++) f.marker_box.size[i] -= f.marker_box.min[i];
  f.marker_box.flags = 4.f;
  f.rubber = TRUE;
  f.rubber_arc = scene.arcs[0];
  guint8 rgba[16 * 16 * 4];
  loom_grid_renderer_draw_offscreen(r, &scene, &f, rgba, NULL);
  loom_grid_scene_clear(&scene);
  loom_net_free(net);
}

