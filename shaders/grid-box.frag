// Shades a block's face from the flat colours grid-box.vert computed for
// it: anti-aliased edges (width measured in pixels through fwidth) and the
// bit-depth gauge strip along the bottom of the face.

uniform vec3 u_background;

in vec3 v_cube;
flat in int v_face;
flat in vec3 v_body;
flat in vec3 v_gauge_on;
flat in vec3 v_gauge_off;
flat in vec4 v_edge;
flat in vec4 v_params;
flat in vec2 v_alpha;
out vec4 frag_color;

void main() {
  // Position on the face, 0..1 (v runs upwards on side faces).
  vec2 uv = v_face < 2 ? v_cube.zy : (v_face < 4 ? v_cube.xz : v_cube.xy);
  vec2 w = max(fwidth(uv), vec2(1e-6));
  vec2 edge_px = min(uv, 1.0 - uv) / w;
  float edge = 1.0 - smoothstep(v_params.z, v_params.w, min(edge_px.x, edge_px.y));

  vec3 color = uv.y < 0.3 ? (uv.x <= v_params.x ? v_gauge_on : v_gauge_off) : v_body;
  color = mix(color, v_edge.rgb + color * v_edge.a, edge);
  color = mix(color, u_background, v_params.y); // disabled: faded towards the background
  frag_color = vec4(color, mix(v_alpha.x, v_alpha.y, edge));
}
