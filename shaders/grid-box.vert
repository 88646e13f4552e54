// One box per run of stacked blocks (consecutive occupied slots of a cell,
// LoomGridBox in widgets/loom-grid-scene.h), or per block with u_single:
// the three faces of a unit cube that are turned towards the eye, scaled
// into the run's box; the other three can never be seen. The three faces
// share 7 corners: corner k of the run starting at block b is vertex
// 7·b + k (indexed draw, so each corner is transformed once). Corner k is
// the near corner (k = 0) with the axes in k_flip flipped; corners 4, 5, 6
// are the far corners of the x, y and z faces and the last (provoking)
// vertex of both their triangles, so they carry the face's flat values.
// The fragment shader finds the slot of each fragment by its height in the
// run and shades it from that slot's texel: drawing a stack of four slots
// as one box takes a quarter of the triangles.
// The #version line (330 core or 300 es) is prepended at load time.

uniform mat4 u_mvp;
uniform vec3 u_eye;       // world space
uniform int u_first;      // block of vertex 0
uniform int u_single;     // 1: one block, whatever its run (selection, hover, marker)
uniform highp sampler2D u_boxes;

#define BOXES_PER_ROW 512

out vec3 v_cube;       // position in the unit cube, 0..1 per axis
flat out int v_face;   // 0 +x, 1 -x, 2 top, 3 bottom, 4 +z, 5 -z
flat out int v_first;  // the run's first block
flat out int v_count;  // blocks in the run
flat out vec2 v_slot;  // pitch and height of one block, in units of the run's height

const int k_flip[7] = int[7](0, 1, 2, 4, 6, 5, 3); // bit 0: x, 1: y, 2: z

void main() {
  int box = u_first + gl_VertexID / 7;
  int k = gl_VertexID - 7 * (gl_VertexID / 7);
  ivec2 at = ivec2(3 * (box % BOXES_PER_ROW), box / BOXES_PER_ROW);
  vec4 t0 = texelFetch(u_boxes, at, 0);
  vec4 t1 = texelFetch(u_boxes, at + ivec2(1, 0), 0);
  vec3 a_min = t0.xyz;
  int count = u_single == 1 ? 1 : max(int(t0.w + 0.5), 1);
  float height = t1.y; // one block's
  float top = count > 1 ? t1.w : a_min.y + height;
  vec3 a_size = vec3(t1.x, top - a_min.y, t1.z);

  vec3 near = vec3(greaterThan(u_eye, a_min + 0.5 * a_size)); // 1 where the eye is on the max side
  int flip = k_flip[k];
  vec3 c = abs(near - vec3(float(flip & 1), float((flip >> 1) & 1), float((flip >> 2) & 1)));

  v_face = 0;
  if (k >= 4) {
    int axis = k - 4;
    bool max_side = near[axis] > 0.5;
    v_face = 2 * axis + (max_side ? 0 : 1);
    // A face the eye looks at from behind or edge-on (the eye within the
    // box's extent along its axis): both triangles collapse to nothing.
    float lo = a_min[axis], hi = lo + a_size[axis];
    if (max_side ? u_eye[axis] <= hi : u_eye[axis] >= lo)
      c = near;
  }
  v_first = box;
  v_count = count;
  // Blocks of a run are evenly spaced: pitch = (run height - one block) / (count - 1).
  float pitch = count > 1 ? (a_size.y - height) / float(count - 1) : a_size.y;
  v_slot = vec2(pitch, height) / a_size.y;
  v_cube = c;
  gl_Position = u_mvp * vec4(a_min + c * a_size, 1.0);
}
