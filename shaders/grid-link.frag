// Colour of a link arc; the pixel beyond its half width fades out, so the
// ribbon's edges are smooth without multisampling.

in vec4 v_color;
in float v_dist;
flat in float v_half;
out vec4 frag_color;

void main() {
  float coverage = clamp(v_half + 0.5 - abs(v_dist), 0.0, 1.0);
  if (coverage <= 0.0)
    discard;
  frag_color = vec4(v_color.rgb, v_color.a * coverage);
}
