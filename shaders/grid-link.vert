// A remote link as a quadratic Bézier arc rising above the grid, drawn as a
// ribbon of constant width in pixels (a triangle strip offset in screen
// space) that ends in an arrowhead at the destination. One instance per
// link; 2 × (SEGMENTS + 1) ribbon vertices, then 4 for the arrowhead.
// The #version line (330 core or 300 es) is prepended at load time.

#define SEGMENTS 32

uniform mat4 u_mvp;
uniform vec2 u_viewport;   // pixels
uniform float u_width_px;  // half width of the ribbon
uniform float u_arrow_px;  // length of the arrowhead
uniform float u_z_slice;   // -1: all levels
uniform int u_selected;    // index of the selected link, or -1
uniform vec3 u_highlight;
uniform int u_flow;        // 1: width and brightness follow a_flow

layout(location = 0) in vec3 a_src;
layout(location = 1) in vec3 a_dst;
layout(location = 2) in vec4 a_color;
layout(location = 3) in vec3 a_levels; // depth of source and destination; z: 1 for a feedback link
layout(location = 4) in float a_flow;  // magnitude through the link relative to the largest, 0..1

out vec4 v_color;
out float v_dist;       // pixels from the ribbon's centre line (0 on the arrowhead)
flat out float v_half;  // the ribbon's half width in pixels
out float v_along;      // pixels along the ribbon from the source; -1 on the arrowhead
flat out float v_dashed; // 1: a feedback link, drawn dashed

// Keep in step with loom_grid_arc_point() in widgets/loom-grid-scene.c.
vec3 arc_point(float t) {
  vec3 d = a_dst - a_src;
  vec3 c = 0.5 * (a_src + a_dst) + vec3(0.0, 0.3 * length(d) + 0.6, 0.0);
  if (length(d.xz) < 0.5)
    c.x += 0.8;
  float u = 1.0 - t;
  return u * u * a_src + 2.0 * u * t * c + t * t * a_dst;
}

vec4 clip_at(float t) {
  return u_mvp * vec4(arc_point(t), 1.0);
}

vec2 screen(vec4 clip) {
  return clip.xy / max(clip.w, 1e-5) * 0.5 * u_viewport;
}

void main() {
  if (u_z_slice >= 0.0 && (a_levels.x != u_z_slice || a_levels.y != u_z_slice)) {
    gl_Position = vec4(2.0, 2.0, 2.0, 1.0); // outside the clip volume
    v_color = vec4(0.0);
    v_dist = 0.0;
    v_half = 0.0;
    v_along = -1.0;
    v_dashed = 0.0;
    return;
  }
  bool selected = gl_InstanceID == u_selected;
  v_color = selected ? vec4(u_highlight, 1.0) : a_color;
  float half_width = selected ? u_width_px * 1.8 : u_width_px;
  if (u_flow == 1) {
    // From a thin, dim thread (no flow) to twice the width at full colour.
    float flow = clamp(a_flow, 0.0, 1.0);
    half_width *= 0.6 + 1.4 * flow;
    if (!selected)
      v_color.rgb *= 0.3 + 0.7 * flow;
  }
  float arrow = selected ? u_arrow_px * 1.3 : u_arrow_px;

  // Where the arrowhead starts: its length in pixels, measured on the arc.
  float len = 0.0;
  vec2 prev = screen(clip_at(0.0));
  for (int i = 1; i <= 8; i++) {
    vec2 p = screen(clip_at(float(i) / 8.0));
    len += length(p - prev);
    prev = p;
  }
  float t_arrow = 1.0 - clamp(arrow / max(len, 1.0), 0.03, 0.45);

  int ribbon = 2 * (SEGMENTS + 1);
  float t;
  float side;
  float width;
  if (gl_VertexID < ribbon) {
    t = t_arrow * float(gl_VertexID / 2) / float(SEGMENTS);
    side = (gl_VertexID & 1) == 0 ? -1.0 : 1.0;
    width = half_width + 1.0; // one more pixel to fade out in (see the fragment shader)
  } else if (gl_VertexID < ribbon + 2) {
    t = t_arrow;
    side = (gl_VertexID & 1) == 0 ? -1.0 : 1.0;
    width = arrow * 0.45;
  } else {
    t = 1.0;
    side = 0.0;
    width = 0.0;
  }

  // Dashes are measured in pixels along the ribbon; the arrowhead is solid.
  v_along = gl_VertexID < ribbon ? t * len : -1.0;
  v_dashed = a_levels.z;

  vec4 clip = clip_at(t);
  vec2 a = screen(clip_at(max(t - 0.01, 0.0)));
  vec2 b = screen(clip_at(min(t + 0.01, 1.0)));
  if (gl_VertexID >= ribbon) { // the arrowhead points along its own axis
    a = screen(clip_at(t_arrow));
    b = screen(clip_at(1.0));
  }
  vec2 dir = b - a;
  dir = length(dir) > 1e-4 ? normalize(dir) : vec2(1.0, 0.0);
  vec2 normal = vec2(-dir.y, dir.x);
  clip.xy += normal * side * width / (0.5 * u_viewport) * clip.w;
  gl_Position = clip;
  v_dist = side * width;
  v_half = gl_VertexID < ribbon ? half_width : 1e4;
}
