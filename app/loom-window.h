/* LoomWindow: the main window — header bar, primary menu and the grid view. */
#pragma once

#include <adwaita.h>

#include "loom-application.h"
#include "loom-document.h"

G_BEGIN_DECLS

#define LOOM_TYPE_WINDOW (loom_window_get_type())
G_DECLARE_FINAL_TYPE(LoomWindow, loom_window, LOOM, WINDOW, AdwApplicationWindow)

LoomWindow *loom_window_new(LoomApplication *application);

LoomDocument *loom_window_get_document(LoomWindow *self);
void loom_window_set_document(LoomWindow *self, LoomDocument *document);

/* What win.open and win.save-as do once a file is chosen (also used for
 * files given on the command line). Errors are shown in the window. */
void loom_window_open_file(LoomWindow *self, GFile *file);
void loom_window_save_to_file(LoomWindow *self, GFile *file);

G_END_DECLS
