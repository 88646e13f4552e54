/*
 * The grid view's orbit camera: plain math, no GTK or GL. World space has x
 * along the grid's columns, z along its rows and y up through its depth; a
 * cell (z, y, x) is the unit cube at (x, z, y).
 */
#pragma once

#include <stdbool.h>

typedef struct {
  float m[16]; /* column-major, as GL expects */
} LoomMat4;

typedef struct {
  int depth, rows, cols;
  float yaw, pitch, zoom;
  float pan[3]; /* look-at point's offset from the grid's centre, world units */
  /* The eye's distance to the look-at point at zoom 1, set by
   * loom_grid_camera_frame(); 0 fits the grid's bounding sphere vertically. */
  float fit;
} LoomGridCamera;

/* Angles, zoom and the orbit limits. */
#define LOOM_GRID_CAMERA_YAW 0.65f
#define LOOM_GRID_CAMERA_PITCH 0.45f
#define LOOM_GRID_CAMERA_ZOOM 1.0f
#define LOOM_GRID_CAMERA_MIN_PITCH 0.0f
#define LOOM_GRID_CAMERA_MAX_PITCH 1.50f
#define LOOM_GRID_CAMERA_MIN_ZOOM 0.1f
#define LOOM_GRID_CAMERA_MAX_ZOOM 5.0f
/* Space left around the framed grid, a fraction of the viewport's half size. */
#define LOOM_GRID_CAMERA_MARGIN 0.08f

void loom_grid_camera_reset(LoomGridCamera *cam);

/* Keeps yaw and pitch and sets zoom 1, the distance and the pan so that the
 * grid's box (every cell, so every block) fills a viewport of width × height
 * as tightly as the margin allows, centred on the screen, whatever the
 * aspect ratio and the grid's shape. */
void loom_grid_camera_frame(LoomGridCamera *cam, float width, float height);

/* Projection × view for a viewport of width × height (any unit, only the
 * aspect matters). */
LoomMat4 loom_grid_camera_matrix(const LoomGridCamera *cam, float width, float height);

/* Where the eye is, world space. */
void loom_grid_camera_eye(const LoomGridCamera *cam, float eye[3]);

/* World point → viewport coordinates (origin top left, same unit as width and
 * height). False when the point is behind the camera. */
bool loom_grid_camera_project(const LoomGridCamera *cam, float width, float height, const float p[3], double *x,
                              double *y);

/* The ray through viewport point (x, y): origin at the eye, unit direction. */
void loom_grid_camera_ray(const LoomGridCamera *cam, float width, float height, double x, double y, float origin[3],
                          float dir[3]);

/* Moves the look-at point so the scene follows a pointer drag of (dx, dy). */
void loom_grid_camera_pan(LoomGridCamera *cam, float width, float height, double dx, double dy);

/* Slab test: the entry distance of the ray into the box [mn, mx], or false. */
bool loom_grid_ray_box(const float origin[3], const float dir[3], const float mn[3], const float mx[3], float *t);
