/*
 * LoomExampleGallery: a window listing the engine's built-in example
 * networks (loom_example_*), each with its title and what it teaches.
 * Activating a row emits "example-chosen" (const char *name) and closes.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define LOOM_TYPE_EXAMPLE_GALLERY (loom_example_gallery_get_type())
G_DECLARE_FINAL_TYPE(LoomExampleGallery, loom_example_gallery, LOOM, EXAMPLE_GALLERY, AdwWindow)

LoomExampleGallery *loom_example_gallery_new(GtkWindow *parent);
/* Emits "example-chosen" for the example at @index and closes, as a click does. */
void loom_example_gallery_choose(LoomExampleGallery *self, int index);

G_END_DECLS
