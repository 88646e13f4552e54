/*
 * LoomCsvDialog: imports a CSV file as a data set. It previews the first
 * rows, lets the user pick the header, delimiter, target column, feature
 * columns, target kind and normalisation, then loads the whole file on a
 * worker thread. Errors (naming line and column) stay in the dialog; a good
 * import emits "imported" and closes.
 */
#pragma once

#include <adwaita.h>
#include <loom/dataset.h>

G_BEGIN_DECLS

/* What "imported" hands out. The dialog owns it: it lives during the signal
 * only. A handler that keeps the data set takes it by setting `dataset` to
 * NULL (then frees it with loom_dataset_free). */
typedef struct LoomCsvImport {
  char *path;                 /* the file, in the GLib file-name encoding */
  loom_csv_options options;   /* as loaded; options.features points at features */
  int64_t *features;          /* options.n_features column indices, owned */
  loom_norm_kind normalize;   /* chosen normalisation: fit it on the train split, not applied here */
  loom_dataset *dataset;      /* the loaded data, transfer none during the signal */
} LoomCsvImport;

#define LOOM_TYPE_CSV_DIALOG (loom_csv_dialog_get_type())
G_DECLARE_FINAL_TYPE(LoomCsvDialog, loom_csv_dialog, LOOM, CSV_DIALOG, AdwWindow)

/* Modal over parent; reads the preview of file at once. Signal:
 *   "imported" (LoomCsvDialog *self, gpointer result): result is a LoomCsvImport *.
 * Action "csv.import" starts the import (the Import button uses it). */
LoomCsvDialog *loom_csv_dialog_new(GtkWindow *parent, GFile *file);

G_END_DECLS
