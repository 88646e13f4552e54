// One block per occupied slot: the three faces of a unit cube that are
// turned towards the eye, scaled into the slot's box; the other three can
// never be seen. The three faces share 7 corners: corner k of block b is
// vertex 7·b + k (indexed draw, so each corner is transformed once), whose
// attributes are three texels of u_boxes (layout: LoomGridBox in
// widgets/loom-grid-scene.h). Corner k is the near corner (k = 0) with the
// axes in k_flip flipped; corners 4, 5, 6 are the far corners of the x, y
// and z faces and the last (provoking) vertex of both their triangles, so
// they carry the face's flat colours, computed here once per face: the
// fragment shader only darkens edges and draws the gauge.
// The #version line (330 core or 300 es) is prepended at load time.

uniform mat4 u_mvp;
uniform int u_color_mode; // 0: by layer type, 1: by dtype
uniform int u_selected;   // block index of the selected slot, or -1
uniform int u_hover;      // block index of the slot under the pointer, or -1
uniform vec3 u_eye;       // world space
uniform int u_first;      // block of vertex 0
uniform vec3 u_highlight;
uniform vec3 u_problem;
uniform highp sampler2D u_boxes;

#define BOXES_PER_ROW 512

out vec3 v_cube;            // position in the unit cube, 0..1 per axis
flat out int v_face;        // 0 +x, 1 -x, 2 top, 3 bottom, 4 +z, 5 -z
flat out vec3 v_body;       // the face's colour
flat out vec3 v_gauge_on;   // the gauge strip: lit part
flat out vec3 v_gauge_off;  // and the rest
flat out vec4 v_edge;       // edges blend towards v_edge.rgb + colour · v_edge.a
flat out vec4 v_params;     // x: gauge fraction, y: fade to background, zw: edge width range (px)
flat out vec2 v_alpha;      // opacity inside and at the edges

const int k_flip[7] = int[7](0, 1, 2, 4, 6, 5, 3); // bit 0: x, 1: y, 2: z

vec3 unpack_rgb(float rgb24) {
  int v = int(rgb24 + 0.5);
  return vec3(float((v >> 16) & 255), float((v >> 8) & 255), float(v & 255)) / 255.0;
}

void main() {
  int box = u_first + gl_VertexID / 7;
  int k = gl_VertexID - 7 * (gl_VertexID / 7);
  ivec2 at = ivec2(3 * (box % BOXES_PER_ROW), box / BOXES_PER_ROW);
  vec4 t0 = texelFetch(u_boxes, at, 0);
  vec4 t1 = texelFetch(u_boxes, at + ivec2(1, 0), 0);
  vec3 a_min = t0.xyz;
  vec3 a_size = t1.xyz;

  vec3 near = vec3(greaterThan(u_eye, a_min + 0.5 * a_size)); // 1 where the eye is on the max side
  int flip = k_flip[k];
  vec3 c = abs(near - vec3(float(flip & 1), float((flip >> 1) & 1), float((flip >> 2) & 1)));

  v_face = 0;
  v_body = v_gauge_on = v_gauge_off = vec3(0.0);
  v_edge = vec4(0.0);
  v_params = vec4(0.0);
  v_alpha = vec2(1.0);
  if (k >= 4) {
    int axis = k - 4;
    bool max_side = near[axis] > 0.5;
    v_face = 2 * axis + (max_side ? 0 : 1);
    // A face the eye looks at from behind or edge-on (the eye within the
    // block's extent along its axis): both triangles collapse to nothing.
    float lo = a_min[axis], hi = lo + a_size[axis];
    if (max_side ? u_eye[axis] <= hi : u_eye[axis] >= lo)
      c = near;

    vec4 t2 = texelFetch(u_boxes, at + ivec2(2, 0), 0);
    int state = int(t1.w + 0.5); // bit 0 disabled, 1 problem, 2 marker
    bool selected = box == u_selected, problem = (state & 2) != 0;
    vec3 base = problem ? u_problem : unpack_rgb(u_color_mode == 1 ? t2.y : t2.x);
    float light = v_face == 2 ? 1.0 : v_face == 3 ? 0.45 : (v_face < 2 ? 0.82 : 0.68);
    vec3 body = base * light;
    v_body = body;
    // The gauge: a strip along the bottom of the side faces and one edge of
    // the top, lit over a fraction that grows with the bits per weight.
    v_gauge_on = v_face == 3 ? body : mix(body, vec3(1.0), 0.6);
    v_gauge_off = v_face == 3 ? body : body * 0.45;
    v_params = vec4(t0.w, (state & 1) != 0 ? 0.65 : 0.0, 0.5, 1.5);
    v_edge = vec4(0.0, 0.0, 0.0, 0.35); // dark edges: stacked blocks read as separate

    if (box == u_hover) {
      v_body = mix(v_body, vec3(1.0), 0.3);
      v_gauge_on = mix(v_gauge_on, vec3(1.0), 0.3);
      v_gauge_off = mix(v_gauge_off, vec3(1.0), 0.3);
      v_edge = vec4(u_highlight, 0.0);
    }
    if ((state & 4) != 0) { // marker of a selected empty slot
      v_body = v_gauge_on = v_gauge_off = u_highlight;
      v_edge = vec4(0.0, 0.0, 0.0, 1.0);
      v_params.y = 0.0;
      v_alpha = vec2(0.35, 1.0);
    } else if (selected && problem) { // the problem's red, in a wide highlight outline
      v_edge = vec4(u_highlight, 0.0);
      v_params.yzw = vec3(0.0, 1.5, 2.5);
    } else if (selected) { // unlit, exactly the highlight colour
      v_body = v_gauge_on = v_gauge_off = u_highlight;
      v_edge = vec4(0.0, 0.0, 0.0, 0.45);
      v_params.y = 0.0;
    }
  }
  v_cube = c;
  gl_Position = u_mvp * vec4(a_min + c * a_size, 1.0);
}
