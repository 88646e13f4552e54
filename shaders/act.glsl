// The element-wise activations and their derivatives, the same formulas as
// the CPU (engine/layers/activation.c) in float32 arithmetic; erf, tanh,
// log1p and expm1 are written out here because GLSL has no erf and leaves
// the accuracy of its tanh to the driver. Tolerances: docs/gpu.md.
// kind: 0 relu, 1 leaky-relu, 2 elu, 3 gelu, 4 silu, 5 sigmoid, 6 tanh,
// 7 softplus, 8 relu2 (engine/layers/activation.c's order). Included by
// act.comp and by gemm.comp, which applies an activation to a dense
// layer's output before storing it (one dispatch for both).
const float SQRT_2_OVER_PI = 0.79788456080286535588;
const float INV_SQRT_2 = 0.70710678118654752440;
const float INV_SQRT_2PI = 0.39894228040143267794;
const float GELU_C = 0.044715;

float sigm(float v) { return 1.0 / (1.0 + exp(-v)); }

// tanh through exp of a non-positive argument (no overflow), with the odd
// Taylor series near 0 where 1 − 2/(e+1) would cancel.
float tanh_f(float v) {
  float a = abs(v);
  float r;
  if (a < 0.0625) {
    float a2 = a * a;
    r = a * (1.0 + a2 * (-1.0 / 3.0 + a2 * (2.0 / 15.0 + a2 * (-17.0 / 315.0))));
  } else {
    float e = exp(-2.0 * a);
    r = (1.0 - e) / (1.0 + e);
  }
  return v < 0.0 ? -r : r;
}

// erf in float32: its Taylor series below 0.5 (the next term is < 2e-8),
// above it 1 − erfc with the Chebyshev fit of Numerical Recipes' erfcc
// (relative error < 1.2e-7), 1 from 4 on (erfc(4) < 2e-8).
float erf_f(float v) {
  float a = abs(v);
  float r;
  if (a < 0.5) {
    float t = a * a;
    r = 1.1283791670955126 * a *
        (1.0 + t * (-1.0 / 3.0 + t * (1.0 / 10.0 + t * (-1.0 / 42.0 + t * (1.0 / 216.0 + t * (-1.0 / 1320.0))))));
  } else if (a < 4.0) {
    float t = 1.0 / (1.0 + 0.5 * a);
    float y = t * exp(-a * a - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
              t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
              t * (-0.82215223 + t * 0.17087277)))))))));
    r = 1.0 - y;
  } else {
    r = 1.0;
  }
  return v < 0.0 ? -r : r;
}

float log1p_f(float u) {
  float w = 1.0 + u;
  return w == 1.0 ? u : log(w) * (u / (w - 1.0));
}

float expm1_f(float v) {
  float u = exp(v);
  if (u == 1.0) return v;
  float um1 = u - 1.0;
  if (um1 == -1.0) return -1.0;
  return um1 * (v / log(u));
}

float act_value(float v, uint kind, uint tanh_gelu, float p0, float p1) {
  switch (kind) {
  case 0: return v > 0.0 ? v : 0.0;
  case 1: return v > 0.0 ? v : p0 * v;
  case 2: return v > 0.0 ? v : p0 * expm1_f(v);
  case 3:
    if (tanh_gelu != 0) return 0.5 * v * (1.0 + tanh_f(SQRT_2_OVER_PI * (v + GELU_C * v * v * v)));
    return 0.5 * v * (1.0 + erf_f(v * INV_SQRT_2));
  case 4: return v * sigm(v);
  case 5: return sigm(v);
  case 6: return tanh_f(v);
  case 7: return v * p0 > p1 ? v : log1p_f(exp(v * p0)) / p0;
  case 8: return v > 0.0 ? v * v : 0.0;
  }
  return 0.0;
}

float act_derivative(float v, uint kind, uint tanh_gelu, float p0, float p1) {
  switch (kind) {
  case 0: return v > 0.0 ? 1.0 : 0.0;
  case 1: return v > 0.0 ? 1.0 : p0;
  case 2: return v > 0.0 ? 1.0 : p0 * exp(v);
  case 3:
    if (tanh_gelu != 0) {
      float inner = SQRT_2_OVER_PI * (v + GELU_C * v * v * v);
      float t = tanh_f(inner);
      return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_C * v * v);
    }
    return 0.5 * (1.0 + erf_f(v * INV_SQRT_2)) + v * INV_SQRT_2PI * exp(-0.5 * v * v);
  case 4: {
    float s = sigm(v);
    return s * (1.0 + v * (1.0 - s));
  }
  case 5: {
    float s = sigm(v);
    return s * (1.0 - s);
  }
  case 6: {
    float t = tanh_f(v);
    return 1.0 - t * t;
  }
  case 7: return v * p0 > p1 ? 1.0 : sigm(v * p0);
  case 8: return v > 0.0 ? 2.0 * v : 0.0;
  }
  return 0.0;
}

