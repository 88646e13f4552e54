// Shades a block: flat light per face, dark edges (so stacked blocks read
// as separate), and the dtype's bit-depth gauge: a strip along the bottom of
// each side face (and the front edge of the top) lit over a fraction of its
// length that grows with the bits per weight.

uniform vec3 u_highlight;
uniform vec3 u_problem;
uniform vec3 u_background;

in vec3 v_color;
in vec2 v_uv;
flat in int v_face;
flat in float v_band;
flat in int v_state;
out vec4 frag_color;

void main() {
  vec2 w = max(fwidth(v_uv), vec2(1e-6));
  vec2 edge_px = min(v_uv, 1.0 - v_uv) / w;
  float edge = 1.0 - smoothstep(0.5, 1.5, min(edge_px.x, edge_px.y));

  if ((v_state & 4) != 0) { // marker of a selected empty slot
    frag_color = vec4(u_highlight, mix(0.35, 1.0, edge));
    return;
  }
  if ((v_state & 8) != 0) { // selected: unlit, exactly the highlight colour
    frag_color = vec4(mix(u_highlight, u_highlight * 0.45, edge), 1.0);
    return;
  }

  vec3 base = (v_state & 2) != 0 ? u_problem : v_color;
  float light = v_face == 2 ? 1.0 : v_face == 3 ? 0.45 : (v_face < 2 ? 0.82 : 0.68);
  vec3 color = base * light;

  // The gauge: lit part brighter, the rest darker.
  bool strip = v_face != 3 && v_uv.y < 0.3;
  if (strip)
    color = v_uv.x <= v_band ? mix(color, vec3(1.0), 0.6) : color * 0.45;

  if ((v_state & 16) != 0)
    color = mix(color, vec3(1.0), 0.3);
  color = mix(color, color * 0.35, edge);
  if ((v_state & 16) != 0)
    color = mix(color, u_highlight, edge);
  if ((v_state & 1) != 0) // disabled: faded towards the background
    color = mix(color, u_background, 0.65);
  frag_color = vec4(color, 1.0);
}
