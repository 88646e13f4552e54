// The floor of the network's grid: one quad on the y = 0 plane spanning
// cols × rows cells plus a small margin (so the outer lines keep their full
// width). With u_ring set, instance k repeats it at height k + 1 as a faint
// outline of that level: only a frame along the edge, where the outline is
// (a whole quad per level would shade the picture over and over for a line).
// No vertex buffer: the corners come from gl_VertexID.
// The #version line (330 core or 300 es) is prepended at load time.

uniform mat4 u_mvp;
uniform vec2 u_size;   // (cols, rows) in cells
uniform float u_margin;
uniform int u_ring;    // 0: the floor (4 vertices); 1: level outlines (10 each)

out vec2 v_cell;       // position in cell units: x along columns, y along rows
flat out int v_level;  // 0: the floor; k > 0: the outline at height k

void main() {
  vec2 outer_lo = vec2(-u_margin), outer_hi = u_size + vec2(u_margin);
  if (u_ring == 0) {
    vec2 corner = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1));
    v_cell = mix(outer_lo, outer_hi, corner);
    v_level = 0;
  } else {
    // A strip around the frame: even vertices outside, odd ones inside,
    // corners in turn (the fifth closes the loop).
    int i = gl_VertexID / 2 % 4;
    vec2 corner = vec2(float(i == 1 || i == 2), float(i >= 2));
    // Wide enough for the line at any zoom: grids with many cells are seen
    // from further away, so the frame grows with them.
    float inset = min(max(0.25, 0.02 * max(u_size.x, u_size.y)), 0.5 * min(u_size.x, u_size.y));
    v_cell = (gl_VertexID & 1) == 0 ? mix(outer_lo, outer_hi, corner) : mix(vec2(inset), u_size - vec2(inset), corner);
    v_level = gl_InstanceID + 1;
  }
  gl_Position = u_mvp * vec4(v_cell.x, float(v_level), v_cell.y, 1.0);
}
