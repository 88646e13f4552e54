// One block per occupied slot, instanced: the three faces of a unit cube
// that are turned towards the eye (18 vertices from gl_VertexID,
// counter-clockwise from outside), scaled into the slot's box. The other
// three can never be seen, so they are not even sent to the rasterizer.
// The #version line (330 core or 300 es) is prepended at load time.

uniform mat4 u_mvp;
uniform int u_color_mode; // 0: by layer type, 1: by dtype
uniform int u_selected;   // instance index of the selected slot, or -1
uniform int u_hover;      // instance index of the slot under the pointer, or -1
uniform vec3 u_eye;       // world space

layout(location = 0) in vec3 a_min;
layout(location = 1) in vec3 a_size;
layout(location = 2) in vec4 a_type_color;
layout(location = 3) in vec4 a_dtype_color;
layout(location = 4) in vec2 a_extra; // bit-depth band fraction, flags

out vec3 v_color;
out vec2 v_uv;         // position on the face, 0..1 (v runs upwards on side faces)
flat out int v_face;   // 0 +x, 1 -x, 2 top, 3 bottom, 4 +z, 5 -z
flat out float v_band;
flat out int v_state;  // bit 0 disabled, 1 problem, 2 marker, 3 selected, 4 hovered

const int k_index[36] = int[36](1, 3, 7, 1, 7, 5, 0, 4, 6, 0, 6, 2, 2, 6, 7, 2, 7, 3,
                                0, 1, 5, 0, 5, 4, 4, 5, 7, 4, 7, 6, 0, 2, 3, 0, 3, 1);

void main() {
  int axis = gl_VertexID / 6;
  vec3 centre = a_min + 0.5 * a_size;
  float toward = axis == 0 ? u_eye.x - centre.x : axis == 1 ? u_eye.y - centre.y : u_eye.z - centre.z;
  v_face = 2 * axis + (toward > 0.0 ? 0 : 1);
  int corner = k_index[v_face * 6 + gl_VertexID % 6];
  vec3 c = vec3(float(corner & 1), float((corner >> 1) & 1), float((corner >> 2) & 1));
  if (v_face < 2)
    v_uv = c.zy;
  else if (v_face < 4)
    v_uv = c.xz;
  else
    v_uv = c.xy;
  v_color = u_color_mode == 1 ? a_dtype_color.rgb : a_type_color.rgb;
  v_band = a_extra.x;
  int state = int(a_extra.y + 0.5);
  if (gl_InstanceID == u_selected) state |= 8;
  if (gl_InstanceID == u_hover) state |= 16;
  v_state = state;
  gl_Position = u_mvp * vec4(a_min + c * a_size, 1.0);
}
