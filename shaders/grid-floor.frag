// Shades the floor: alternating tiles for the cells and anti-aliased grid
// lines at every cell boundary. Line width is measured in pixels through
// fwidth() so the grid stays crisp at every zoom level.

uniform vec2 u_size;
uniform vec4 u_tile_even;
uniform vec4 u_tile_odd;
uniform vec4 u_line;
uniform vec4 u_border;
uniform float u_line_px;  // half width of a line, in pixels
uniform float u_ghost;    // opacity of the outlines above the floor

in vec2 v_cell;
flat in int v_level;
out vec4 frag_color;

// Coverage of the line family x = k (k = 0 … n), restricted to the floor's
// extent along the other axis.
float lines(float along, float across, float n, float extent, float w_along, float w_across,
            out float k) {
  k = clamp(floor(along + 0.5), 0.0, n);
  float d = abs(along - k) / w_along;
  float outside = max(0.0, max(-across, across - extent)) / w_across;
  return (1.0 - smoothstep(u_line_px - 0.5, u_line_px + 0.5, d)) *
         (1.0 - smoothstep(u_line_px - 0.5, u_line_px + 0.5, outside));
}

void main() {
  vec2 w = max(fwidth(v_cell), vec2(1e-6));
  float kx, ky;
  float cx = lines(v_cell.x, v_cell.y, u_size.x, u_size.y, w.x, w.y, kx);
  float cy = lines(v_cell.y, v_cell.x, u_size.y, u_size.x, w.y, w.x, ky);

  bool inside = all(greaterThanEqual(v_cell, vec2(0.0))) && all(lessThanEqual(v_cell, u_size));
  bool edge_x = kx == 0.0 || kx == u_size.x;
  bool edge_y = ky == 0.0 || ky == u_size.y;
  vec4 lx = edge_x ? u_border : u_line;
  vec4 ly = edge_y ? u_border : u_line;
  // The stronger of the two families wins where they cross.
  vec4 line = cx >= cy ? lx : ly;
  float cov = max(cx, cy);

  // Outside the floor only the lines' anti-aliased fringe shows, so the base
  // there is the line colour at zero alpha (blending then fades it cleanly).
  vec4 color = vec4(line.rgb, 0.0);
  if (inside) {
    vec2 cell = floor(v_cell);
    color = mod(cell.x + cell.y, 2.0) < 0.5 ? u_tile_even : u_tile_odd;
  }
  color = mix(color, vec4(line.rgb, 1.0), cov * line.a);

  // Levels above the floor: only their outline, faint, so they mark the
  // volume without hiding the floor.
  if (v_level > 0) {
    float outline = max(edge_x ? cx : 0.0, edge_y ? cy : 0.0);
    color = vec4(u_border.rgb, outline * u_ghost);
  }

  if (color.a <= 0.0)
    discard;
  frag_color = color;
}
