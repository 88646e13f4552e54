// One block per occupied slot: the three faces of a unit cube that are
// turned towards the eye (18 vertices, counter-clockwise from outside),
// scaled into the slot's box; the other three can never be seen. Vertex
// 18·i + k belongs to block u_first + u_count - 1 - i, whose attributes are three texels
// of u_boxes (layout: LoomGridBox in widgets/loom-grid-scene.h). One plain
// draw call covers every block: software GL pays per instance of an
// instanced draw, and 16,384 tiny instances cost more than the vertices.
// The #version line (330 core or 300 es) is prepended at load time.

uniform mat4 u_mvp;
uniform int u_color_mode; // 0: by layer type, 1: by dtype
uniform int u_selected;   // block index of the selected slot, or -1
uniform int u_hover;      // block index of the slot under the pointer, or -1
uniform vec3 u_eye;       // world space
uniform int u_first;      // first block of the range drawn
uniform int u_count;      // blocks in the range
uniform highp sampler2D u_boxes;

#define BOXES_PER_ROW 512

out vec3 v_color;
out vec2 v_uv;         // position on the face, 0..1 (v runs upwards on side faces)
flat out int v_face;   // 0 +x, 1 -x, 2 top, 3 bottom, 4 +z, 5 -z
flat out float v_band;
flat out int v_state;  // bit 0 disabled, 1 problem, 2 marker, 3 selected, 4 hovered

const int k_index[36] = int[36](1, 3, 7, 1, 7, 5, 0, 4, 6, 0, 6, 2, 2, 6, 7, 2, 7, 3,
                                0, 1, 5, 0, 5, 4, 4, 5, 7, 4, 7, 6, 0, 2, 3, 0, 3, 1);

vec3 unpack_rgb(float rgb24) {
  int v = int(rgb24 + 0.5);
  return vec3(float((v >> 16) & 255), float((v >> 8) & 255), float(v & 255)) / 255.0;
}

void main() {
  // Last block first: the eye is never below the grid, so higher levels,
  // stored later, are mostly nearer; drawn first, they hide what is behind
  // them from the depth test before it is shaded.
  int box = u_first + u_count - 1 - gl_VertexID / 18;
  int vertex = gl_VertexID % 18;
  ivec2 at = ivec2(3 * (box % BOXES_PER_ROW), box / BOXES_PER_ROW);
  vec4 t0 = texelFetch(u_boxes, at, 0);
  vec4 t1 = texelFetch(u_boxes, at + ivec2(1, 0), 0);
  vec4 t2 = texelFetch(u_boxes, at + ivec2(2, 0), 0);
  vec3 a_min = t0.xyz;
  vec3 a_size = t1.xyz;

  int axis = vertex / 6;
  vec3 centre = a_min + 0.5 * a_size;
  float toward = axis == 0 ? u_eye.x - centre.x : axis == 1 ? u_eye.y - centre.y : u_eye.z - centre.z;
  v_face = 2 * axis + (toward > 0.0 ? 0 : 1);
  int corner = k_index[v_face * 6 + vertex % 6];
  vec3 c = vec3(float(corner & 1), float((corner >> 1) & 1), float((corner >> 2) & 1));
  if (v_face < 2)
    v_uv = c.zy;
  else if (v_face < 4)
    v_uv = c.xz;
  else
    v_uv = c.xy;
  v_color = unpack_rgb(u_color_mode == 1 ? t2.y : t2.x);
  v_band = t0.w;
  int state = int(t1.w + 0.5);
  if (box == u_selected) state |= 8;
  if (box == u_hover) state |= 16;
  v_state = state;
  gl_Position = u_mvp * vec4(a_min + c * a_size, 1.0);
}
