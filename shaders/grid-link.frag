// Colour of a link arc; the pixel beyond its half width fades out, so the
// ribbon's edges are smooth without multisampling. Feedback links are dashed.

in vec4 v_color;
in float v_dist;
flat in float v_half;
in float v_along;
flat in float v_dashed;
out vec4 frag_color;

void main() {
  float coverage = clamp(v_half + 0.5 - abs(v_dist), 0.0, 1.0);
  // Feedback links: 7-pixel dashes with 5-pixel gaps, so a loop reads as
  // "signal from the previous tick", not as an ordinary forward link.
  if (coverage <= 0.0 || (v_dashed > 0.5 && v_along >= 0.0 && mod(v_along, 12.0) > 7.0))
    discard;
  frag_color = vec4(v_color.rgb, v_color.a * coverage);
}
