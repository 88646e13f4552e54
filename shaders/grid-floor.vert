// The floor of the network's grid: one quad on the y = 0 plane spanning
// cols × rows cells plus a small margin (so the outer lines keep their full
// width). Instance k > 0 repeats it at height k as a faint outline of depth
// level k, so the volume's extent is visible even when it is empty.
// No vertex buffer: the corners come from gl_VertexID.
// The #version line (330 core or 300 es) is prepended at load time.

uniform mat4 u_mvp;
uniform vec2 u_size;   // (cols, rows) in cells
uniform float u_margin;

out vec2 v_cell;       // position in cell units: x along columns, y along rows
flat out int v_level;  // 0: the floor; k > 0: the outline at height k

void main() {
  vec2 corner = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1));
  v_cell = mix(vec2(-u_margin), u_size + vec2(u_margin), corner);
  v_level = gl_InstanceID;
  gl_Position = u_mvp * vec4(v_cell.x, float(gl_InstanceID), v_cell.y, 1.0);
}
