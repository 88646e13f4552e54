/*
 * The grid view's palette, shared with the GUI tests so they can tell the
 * floor from the background in pixels read back from GL.
 */
#pragma once

/* Background (glClearColor), linear 0..1. */
#define LOOM_GRID_VIEW_CLEAR_R 0.110f
#define LOOM_GRID_VIEW_CLEAR_G 0.114f
#define LOOM_GRID_VIEW_CLEAR_B 0.133f

/* Outer border lines of the floor, the most saturated colour of the scene. */
#define LOOM_GRID_VIEW_BORDER_R 0.384f
#define LOOM_GRID_VIEW_BORDER_G 0.627f
#define LOOM_GRID_VIEW_BORDER_B 0.918f
