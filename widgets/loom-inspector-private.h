/* LoomInspector internals for tests: the widgets it built. */
#pragma once

#include "loom-inspector.h"
#include "loom-param-row.h"

G_BEGIN_DECLS

int loom_inspector_get_n_param_rows(LoomInspector *self);
LoomParamRow *loom_inspector_get_param_row(LoomInspector *self, int index);
GtkDropDown *loom_inspector_get_dtype_drop_down(LoomInspector *self);
/* How many diagnostics the error box lists for the shown slot. */
int loom_inspector_get_n_shown_diagnostics(LoomInspector *self);
/* The "In memory" row's text. */
const char *loom_inspector_get_memory_text(LoomInspector *self);

G_END_DECLS
