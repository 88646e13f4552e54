// Outline of an empty cell: the 12 edges of its (slightly inset) cube as
// GL_LINES, instanced over the cells. The #version line is prepended at load.

uniform mat4 u_mvp;
layout(location = 0) in vec3 a_cell; // the cell's min corner

const int k_edges[24] = int[24](0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7, 0, 4, 1, 5, 2, 6, 3, 7);

void main() {
  int corner = k_edges[gl_VertexID];
  vec3 c = vec3(float(corner & 1), float((corner >> 1) & 1), float((corner >> 2) & 1));
  gl_Position = u_mvp * vec4(a_cell + mix(vec3(0.1), vec3(0.9), c), 1.0);
}
