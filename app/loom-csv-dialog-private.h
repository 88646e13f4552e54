/* LoomCsvDialog internals shared with its preview file and with tests. */
#pragma once

#include "loom-csv-dialog.h"

struct _LoomCsvDialog {
  AdwWindow parent_instance;
  GFile *file;
  char *path;
  loom_csv_preview preview; /* of the current header/delimiter choice */
  gboolean have_preview;
  GCancellable *cancellable; /* the import; cancelled when the dialog closes */
  gboolean busy;
  gboolean rebuilding; /* widgets being set from code: their handlers stay quiet */
  GPtrArray *feature_checks; /* GtkCheckButton per column */
  int64_t target;            /* the target column shown, to restore its check when it changes */

  AdwWindowTitle *window_title;
  GtkSpinner *spinner;
  GtkLabel *error_label;
  AdwPreferencesGroup *preview_group;
  GtkGrid *preview_grid;
  GtkWidget *options_box;
  GtkSwitch *header_switch;
  AdwComboRow *delimiter_row, *target_row, *kind_row, *norm_row;
  GtkFlowBox *features_box;
};

/* The delimiters of delimiter_row, in its order. */
extern const char loom_csv_dialog_delimiters[3];

/* Fills preview_grid from self->preview: the header (or column numbers),
 * the rows, the target column marked, unused columns dimmed. */
void loom_csv_dialog_fill_preview(LoomCsvDialog *self);
/* The column's display name: its header text, else "Column N". */
char *loom_csv_dialog_column_name(LoomCsvDialog *self, int64_t col);
