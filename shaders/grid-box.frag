// Shades a face of a run of stacked blocks (grid-box.vert): finds the block
// under the fragment by its height in the run, reads that block's colours,
// gauge and state, and draws anti-aliased edges around each block (width
// measured in pixels through fwidth), the division between stacked blocks
// as a dark band, and the bit-depth gauge strip along each block's bottom.
// In the METRIC mode the colour comes from the live texture (the colour map
// is applied on the CPU, loom_grid_colormap: one table for the blocks and
// the legend), without the gauge, which would darken it into another value.
// Alert slots are red in every mode, with a pulsing outline.

uniform int u_color_mode; // 0: by layer type, 1: by dtype, 2: by metric
uniform int u_selected;   // block index of the selected slot, or -1
uniform int u_hover;      // block index of the slot under the pointer, or -1
uniform vec3 u_highlight;
uniform vec3 u_problem;
uniform vec3 u_background;
uniform highp sampler2D u_boxes;
uniform highp sampler2D u_slot_colors; // per block: the metric's colour; alpha 1 on alert slots
uniform vec3 u_alert;
uniform float u_pulse; // 0..1: the alert outline, dark red to white
uniform int u_live;    // 1: read u_slot_colors (METRIC mode or alerts); else no fetch

#define BOXES_PER_ROW 512

in vec3 v_cube;
flat in int v_face;
flat in int v_first;
flat in int v_count;
flat in vec2 v_slot;
out vec4 frag_color;

vec3 unpack_rgb(float rgb24) {
  int v = int(rgb24 + 0.5);
  return vec3(float((v >> 16) & 255), float((v >> 8) & 255), float(v & 255)) / 255.0;
}

void main() {
  bool side = v_face < 2 || v_face >= 4;
  // Position on the face, 0..1 over the run (v runs upwards on side faces).
  vec2 uv = v_face < 2 ? v_cube.zy : (v_face < 4 ? v_cube.xz : v_cube.xy);
  vec2 w = max(fwidth(uv), vec2(1e-6));

  // The block under the fragment, and the position on its own face.
  int slot = v_face == 2 ? v_count - 1 : (v_face == 3 ? 0 : min(int(v_cube.y / v_slot.x), v_count - 1));
  float local = v_cube.y - float(slot) * v_slot.x;
  bool gap = side && local > v_slot.y; // between two blocks of the run
  if (side) {
    uv.y = local / v_slot.y;
    w.y /= v_slot.y;
  }
  int box = v_first + slot;
  vec4 t = texelFetch(u_boxes, ivec2(3 * (box % BOXES_PER_ROW) + 2, box / BOXES_PER_ROW), 0);
  int state = int(t.w + 0.5); // bit 0 disabled, 1 problem, 2 marker
  bool problem = (state & 2) != 0;
  bool selected = box == u_selected && !gap, hover = box == u_hover && !gap;
  vec4 live = vec4(0.0);
  if (u_live == 1) // the common frame without live data fetches one texel less
    live = texelFetch(u_slot_colors, ivec2(box % BOXES_PER_ROW, box / BOXES_PER_ROW), 0);
  bool alert = live.a > 0.5 && (state & 4) == 0;
  bool metric = u_color_mode == 2;

  vec3 base = alert ? u_alert : problem ? u_problem : metric ? live.rgb : unpack_rgb(u_color_mode == 1 ? t.y : t.x);
  float light = v_face == 2 ? 1.0 : v_face == 3 ? 0.45 : (v_face < 2 ? 0.82 : 0.68);
  // Metric colours are values: shade them less, so a side face does not
  // read as a lower value than its top.
  if (metric) light = 0.55 + 0.45 * light;
  vec3 body = base * light;
  // The gauge: a strip along the bottom of the side faces and one edge of
  // the top, lit over a fraction that grows with the bits per weight.
  vec3 gauge = v_face == 3 || metric || alert ? body : (uv.x <= t.z ? mix(body, vec3(1.0), 0.6) : body * 0.45);
  vec3 edge_rgb = vec3(0.0);
  float edge_mul = 0.35; // dark edges: stacked blocks read as separate
  vec2 edge_range = vec2(0.5, 1.5);
  float fade = (state & 1) != 0 ? 0.65 : 0.0;
  vec2 alpha = vec2(1.0);
  if (hover) {
    body = mix(body, vec3(1.0), 0.3);
    gauge = mix(gauge, vec3(1.0), 0.3);
    edge_rgb = u_highlight;
    edge_mul = 0.0;
  }
  if ((state & 4) != 0) { // marker of a selected empty slot
    body = gauge = u_highlight;
    edge_mul = 1.0;
    fade = 0.0;
    alpha = vec2(0.35, 1.0);
  } else if (selected && (problem || alert)) { // the red, in a wide highlight outline
    edge_rgb = u_highlight;
    edge_mul = 0.0;
    edge_range = vec2(1.5, 2.5);
    fade = 0.0;
  } else if (selected) { // unlit, exactly the highlight colour
    body = gauge = u_highlight;
    edge_rgb = vec3(0.0);
    edge_mul = 0.45;
    fade = 0.0;
  } else if (alert) { // a wide outline pulsing from dark red to white
    edge_rgb = mix(u_alert * 0.35, vec3(1.0), u_pulse);
    edge_mul = 0.0;
    edge_range = vec2(1.5, 3.0);
    fade = 0.0;
  }

  vec2 edge_px = min(uv, 1.0 - uv) / w;
  float edge = gap ? 1.0 : 1.0 - smoothstep(edge_range.x, edge_range.y, min(edge_px.x, edge_px.y));
  vec3 color = uv.y < 0.3 ? gauge : body;
  color = mix(color, edge_rgb + color * edge_mul, edge);
  color = mix(color, u_background, fade); // disabled: faded towards the background
  frag_color = vec4(color, mix(alpha.x, alpha.y, edge));
}
