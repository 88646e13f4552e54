/* The orbit camera of the grid view: matrices, projection and ray casts. */
#include "loom-grid-camera.h"

#include <math.h>

#define FOV_Y 0.70f /* radians, about 40° */

void loom_grid_camera_reset(LoomGridCamera *cam) {
  cam->yaw = LOOM_GRID_CAMERA_YAW;
  cam->pitch = LOOM_GRID_CAMERA_PITCH;
  cam->zoom = LOOM_GRID_CAMERA_ZOOM;
  cam->pan[0] = cam->pan[1] = cam->pan[2] = 0.f;
  cam->fit = 0.f;
}

static void normalize(float v[3]) {
  float n = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (n > 0.f)
    for (int i = 0; i < 3; i++) v[i] /= n;
}

static void cross(const float a[3], const float b[3], float r[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}

/* Where the camera is and how it is oriented: eye, forward, right, up; the
 * radius of the grid's bounding sphere and the eye's distance to the target. */
typedef struct {
  float eye[3], f[3], s[3], u[3];
  float radius, dist, centre_dist;
} frame;

/* The view direction (from the eye towards the look-at point) and the
 * screen's right and up for the camera's yaw and pitch. */
static void orientation(const LoomGridCamera *cam, float f[3], float s[3], float u[3]) {
  float cp = cosf(cam->pitch), sp = sinf(cam->pitch);
  f[0] = -cp * sinf(cam->yaw);
  f[1] = -sp;
  f[2] = -cp * cosf(cam->yaw);
  /* Looking straight down, world up is parallel to the view direction; the
   * yaw's horizontal direction stands in for it there. */
  float up[3] = {0.f, 1.f, 0.f};
  if (fabsf(f[1]) > 0.999f) {
    up[0] = -sinf(cam->yaw);
    up[1] = 0.f;
    up[2] = -cosf(cam->yaw);
  }
  cross(f, up, s);
  normalize(s);
  cross(s, f, u);
}

static float bounding_radius(const LoomGridCamera *cam) {
  float c[3] = {cam->cols / 2.f, cam->depth / 2.f, cam->rows / 2.f};
  return fmaxf(sqrtf(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]), 0.5f);
}

static frame camera_frame(const LoomGridCamera *cam) {
  frame fr;
  float c[3] = {cam->cols / 2.f, cam->depth / 2.f, cam->rows / 2.f};
  fr.radius = bounding_radius(cam);
  float fit = cam->fit > 0.f ? cam->fit : fr.radius / sinf(FOV_Y / 2.f);
  fr.dist = cam->zoom * fit;
  float at[3] = {c[0] + cam->pan[0], c[1] + cam->pan[1], c[2] + cam->pan[2]};
  orientation(cam, fr.f, fr.s, fr.u);
  for (int i = 0; i < 3; i++) fr.eye[i] = at[i] - fr.dist * fr.f[i];
  float d[3] = {c[0] - fr.eye[0], c[1] - fr.eye[1], c[2] - fr.eye[2]};
  fr.centre_dist = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  return fr;
}

/*
 * With the eye at distance D behind the look-at point, moved by o along the
 * screen's right s, a corner q (relative to the grid's centre) lies at depth
 * D + q·f and sideways at q·s − o; it is in view when |q·s − o| ≤ t·(D + q·f)
 * with t the tangent of the half field of view. Over all corners that holds
 * for every D ≥ (max(q·s − t q·f) − min(q·s + t q·f)) / 2t, with o centred
 * between the two bounds; the same goes for the screen's up u and the
 * vertical field of view. The larger of the two distances frames the box.
 */
void loom_grid_camera_frame(LoomGridCamera *cam, float width, float height) {
  float f[3], s[3], u[3];
  orientation(cam, f, s, u);
  float aspect = width > 0.f && height > 0.f ? width / height : 1.f;
  float tv = tanf(FOV_Y / 2.f) / (1.f + LOOM_GRID_CAMERA_MARGIN);
  float t[2] = {tv * aspect, tv};
  const float *axis[2] = {s, u};
  float half[3] = {fmaxf(cam->cols, 1) / 2.f, fmaxf(cam->depth, 1) / 2.f, fmaxf(cam->rows, 1) / 2.f};
  float dist = 0.f, nearest = 0.f, offset[2];
  for (int a = 0; a < 2; a++) {
    float hi = -INFINITY, lo = INFINITY;
    for (int k = 0; k < 8; k++) {
      float q[3] = {k & 1 ? half[0] : -half[0], k & 2 ? half[1] : -half[1], k & 4 ? half[2] : -half[2]};
      float side = q[0] * axis[a][0] + q[1] * axis[a][1] + q[2] * axis[a][2];
      float depth = q[0] * f[0] + q[1] * f[1] + q[2] * f[2];
      hi = fmaxf(hi, side - t[a] * depth);
      lo = fminf(lo, side + t[a] * depth);
      nearest = fmaxf(nearest, -depth);
    }
    dist = fmaxf(dist, (hi - lo) / (2.f * t[a]));
    offset[a] = 0.5f * (hi + lo);
  }
  /* A grid seen end-on could put its nearest corner almost at the eye, in
   * front of the near plane; stepping back keeps it in view (the interval
   * the offsets are centred in only widens with the distance). */
  cam->fit = fmaxf(dist, 1.1f * nearest);
  cam->zoom = 1.f;
  for (int i = 0; i < 3; i++) cam->pan[i] = offset[0] * s[i] + offset[1] * u[i];
}

void loom_grid_camera_eye(const LoomGridCamera *cam, float eye[3]) {
  frame fr = camera_frame(cam);
  for (int i = 0; i < 3; i++) eye[i] = fr.eye[i];
}

static LoomMat4 mat4_mul(const LoomMat4 *a, const LoomMat4 *b) {
  LoomMat4 r;
  for (int c = 0; c < 4; c++)
    for (int row = 0; row < 4; row++) {
      float s = 0.f;
      for (int k = 0; k < 4; k++) s += a->m[k * 4 + row] * b->m[c * 4 + k];
      r.m[c * 4 + row] = s;
    }
  return r;
}

LoomMat4 loom_grid_camera_matrix(const LoomGridCamera *cam, float width, float height) {
  frame fr = camera_frame(cam);
  LoomMat4 view = {{fr.s[0], fr.u[0], -fr.f[0], 0.f, fr.s[1], fr.u[1], -fr.f[1], 0.f, fr.s[2], fr.u[2], -fr.f[2], 0.f,
                    0.f, 0.f, 0.f, 1.f}};
  view.m[12] = -(fr.s[0] * fr.eye[0] + fr.s[1] * fr.eye[1] + fr.s[2] * fr.eye[2]);
  view.m[13] = -(fr.u[0] * fr.eye[0] + fr.u[1] * fr.eye[1] + fr.u[2] * fr.eye[2]);
  view.m[14] = fr.f[0] * fr.eye[0] + fr.f[1] * fr.eye[1] + fr.f[2] * fr.eye[2];

  /* Arcs of remote links rise above the grid, so the clip range covers
   * twice the bounding sphere around the grid's centre. */
  float znear = fmaxf(fr.centre_dist - 2.f * fr.radius, fr.dist * 0.01f);
  float zfar = fr.centre_dist + 2.f * fr.radius;
  float f = 1.f / tanf(FOV_Y / 2.f);
  float aspect = height > 0.f ? width / height : 1.f;
  LoomMat4 proj = {{0}};
  proj.m[0] = f / aspect;
  proj.m[5] = f;
  proj.m[10] = (zfar + znear) / (znear - zfar);
  proj.m[11] = -1.f;
  proj.m[14] = 2.f * zfar * znear / (znear - zfar);
  return mat4_mul(&proj, &view);
}

bool loom_grid_camera_project(const LoomGridCamera *cam, float width, float height, const float p[3], double *x,
                              double *y) {
  LoomMat4 m = loom_grid_camera_matrix(cam, width, height);
  float clip[4];
  for (int row = 0; row < 4; row++)
    clip[row] = m.m[row] * p[0] + m.m[4 + row] * p[1] + m.m[8 + row] * p[2] + m.m[12 + row];
  if (clip[3] <= 1e-6f) return false;
  *x = (clip[0] / clip[3] * 0.5 + 0.5) * width;
  *y = (0.5 - clip[1] / clip[3] * 0.5) * height;
  return true;
}

void loom_grid_camera_ray(const LoomGridCamera *cam, float width, float height, double x, double y, float origin[3],
                          float dir[3]) {
  frame fr = camera_frame(cam);
  float t = tanf(FOV_Y / 2.f);
  float aspect = height > 0.f ? width / height : 1.f;
  float nx = width > 0.f ? (float)(2.0 * x / width - 1.0) : 0.f;
  float ny = height > 0.f ? (float)(1.0 - 2.0 * y / height) : 0.f;
  for (int i = 0; i < 3; i++) {
    origin[i] = fr.eye[i];
    dir[i] = fr.f[i] + fr.s[i] * nx * t * aspect + fr.u[i] * ny * t;
  }
  normalize(dir);
}

void loom_grid_camera_pan(LoomGridCamera *cam, float width, float height, double dx, double dy) {
  frame fr = camera_frame(cam);
  /* One pixel at the target's distance covers this many world units. */
  float per_px = height > 0.f ? 2.f * fr.dist * tanf(FOV_Y / 2.f) / height : 0.f;
  for (int i = 0; i < 3; i++) cam->pan[i] += (float)(-dx * fr.s[i] + dy * fr.u[i]) * per_px;
  /* Never lose the grid entirely: the target stays within its sphere. */
  float n = sqrtf(cam->pan[0] * cam->pan[0] + cam->pan[1] * cam->pan[1] + cam->pan[2] * cam->pan[2]);
  if (n > 2.f * fr.radius)
    for (int i = 0; i < 3; i++) cam->pan[i] *= 2.f * fr.radius / n;
}

bool loom_grid_ray_box(const float origin[3], const float dir[3], const float mn[3], const float mx[3], float *t) {
  float t0 = 0.f, t1 = INFINITY;
  for (int i = 0; i < 3; i++) {
    if (fabsf(dir[i]) < 1e-12f) {
      if (origin[i] < mn[i] || origin[i] > mx[i]) return false;
      continue;
    }
    float inv = 1.f / dir[i];
    float a = (mn[i] - origin[i]) * inv, b = (mx[i] - origin[i]) * inv;
    if (a > b) {
      float tmp = a;
      a = b;
      b = tmp;
    }
    t0 = fmaxf(t0, a);
    t1 = fminf(t1, b);
    if (t0 > t1) return false;
  }
  *t = t0;
  return true;
}
