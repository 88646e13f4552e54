// A plain polyline (the spine) in world space. The #version line is prepended at load.

uniform mat4 u_mvp;
layout(location = 0) in vec3 a_pos;

void main() {
  gl_Position = u_mvp * vec4(a_pos, 1.0);
}
