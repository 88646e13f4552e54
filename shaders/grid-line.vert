// Plain lines in world space: the spine (a strip) and the outlines of empty
// cells (GL_LINES). The #version line is prepended at load.

uniform mat4 u_mvp;
layout(location = 0) in vec3 a_pos;

void main() {
  gl_Position = u_mvp * vec4(a_pos, 1.0);
}
