/* LoomWindow: the main window — palette, grid view, inspector, links, summary. */
#pragma once

#include <adwaita.h>

#include "loom-application.h"
#include "loom-document.h"

G_BEGIN_DECLS

#define LOOM_TYPE_WINDOW (loom_window_get_type())
G_DECLARE_FINAL_TYPE(LoomWindow, loom_window, LOOM, WINDOW, AdwApplicationWindow)

LoomWindow *loom_window_new(LoomApplication *application);

LoomDocument *loom_window_get_document(LoomWindow *self);
/* Shows @document as is (no question asked; see win.new and win.open). */
void loom_window_set_document(LoomWindow *self, LoomDocument *document);

/* What win.open and win.save-as do once a file is chosen (also used for
 * files given on the command line or dropped). Errors are shown in the window. */
void loom_window_open_file(LoomWindow *self, GFile *file);
void loom_window_save_to_file(LoomWindow *self, GFile *file);
/* Shows an untitled copy of a built-in example (loom_example_name). */
gboolean loom_window_open_example(LoomWindow *self, const char *name, GError **error);
/* Renders the grid view off-screen at @width × @height into a PNG file. */
gboolean loom_window_export_png(LoomWindow *self, GFile *file, int width, int height, GError **error);

G_END_DECLS
