/*
 * What the workbench's training GUI tests share (test-training.c,
 * test-training-views.c): one application with one window, the example
 * opened by training_setup(), waits on the worker's state, the pane's
 * widgets and pixel read-backs.
 */
#pragma once

#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "gui-test.h"
#include "loom-application.h"
#include "loom-recovery.h"
#include "loom-training-form.h"
#include "loom-training-pane-private.h"
#include "loom-window-private.h"

#define TIMEOUT_MS 60000

extern LoomApplication *app;
extern LoomWindow *window;
extern char *tmp_dir;
extern GArray *epochs; /* LoomTrainingEpoch of every snapshot, in order */
extern GArray *points; /* LoomTrainingPoint */
LoomDocument *doc(void);
LoomTrainingSession *session(void);
LoomTrainingPane *pane(void);
LoomTrainingForm *form(void);
void activate(const char *action);
gboolean state_is(gpointer state);
void wait_state(LoomTrainingState state, const char *what);
gint64 doc_steps(void);
gboolean settled(gpointer data);
void set_field(const char *name, const char *value);
char *net_json(const loom_net *net);
void on_snapshot(LoomTrainingSession *s, LoomTrainingSnapshot *snap, gpointer data);
gboolean play_enabled(void);
gboolean is_mapped(gpointer widget);
/* Opens the xor example and waits until Play is ready (the first case). */
void test_setup(void);
gsize plot_points(const char *which);
gboolean enough_points(gpointer n);
GBytes *boundary_pixels(void);
gsize differing_bytes(GBytes *a, GBytes *b);
GBytes *grid_pixels(void);
gboolean doc_steps_are(gpointer n);

/* Runs the cases @add_cases registers (with g_test_add_func) on one
 * application and window, after test_setup. */
int training_harness_run(int argc, char **argv, void (*add_cases)(void));
