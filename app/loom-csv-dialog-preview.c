/* LoomCsvDialog's preview table: a grid of labels, the target column marked
 * and columns that will not be read dimmed, so the choice is visible. */
#include "loom-csv-dialog-private.h"

#include <glib/gi18n.h>

/* Wide files: the table shows this many columns; the checks list them all. */
#define PREVIEW_COLUMNS 40

char *loom_csv_dialog_column_name(LoomCsvDialog *self, int64_t col) {
  const loom_csv_preview *p = &self->preview;
  if (p->header && p->header[col] && *p->header[col]) return g_strdup(p->header[col]);
  return g_strdup_printf(_("Column %lld"), (long long)col + 1);
}

static GtkWidget *cell_label(const char *text, gboolean heading) {
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
  gtk_label_set_max_width_chars(GTK_LABEL(label), 16);
  gtk_label_set_single_line_mode(GTK_LABEL(label), TRUE);
  if (heading) gtk_widget_add_css_class(label, "heading");
  else gtk_widget_add_css_class(label, "numeric");
  return label;
}

void loom_csv_dialog_fill_preview(LoomCsvDialog *self) {
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->preview_grid))))
    gtk_grid_remove(self->preview_grid, child);
  if (!self->have_preview) return;
  const loom_csv_preview *p = &self->preview;
  int64_t shown = MIN(p->n_columns, PREVIEW_COLUMNS);
  guint target = adw_combo_row_get_selected(self->target_row);
  for (int64_t c = 0; c < shown; c++) {
    gboolean is_target = (guint)c == target;
    gboolean used = is_target || ((guint)c < self->feature_checks->len &&
                                  gtk_check_button_get_active(g_ptr_array_index(self->feature_checks, c)));
    g_autofree char *name = loom_csv_dialog_column_name(self, c);
    GtkWidget *head = cell_label(name, TRUE);
    if (is_target) {
      g_autofree char *marked = g_strdup_printf(_("%s (target)"), name);
      gtk_label_set_text(GTK_LABEL(head), marked);
      gtk_widget_add_css_class(head, "accent");
    }
    if (!used) gtk_widget_add_css_class(head, "dim-label");
    gtk_grid_attach(self->preview_grid, head, (int)c, 0, 1, 1);
    for (int64_t r = 0; r < p->n_rows; r++) {
      const char *text = p->cells[r * p->n_columns + c];
      GtkWidget *cell = cell_label(text ? text : "", FALSE);
      if (!used) gtk_widget_add_css_class(cell, "dim-label");
      if (is_target) gtk_widget_add_css_class(cell, "accent");
      gtk_grid_attach(self->preview_grid, cell, (int)c, (int)r + 1, 1, 1);
    }
  }
  if (shown < p->n_columns) {
    g_autofree char *more = g_strdup_printf(
      g_dngettext(GETTEXT_PACKAGE, "+ %lld more column", "+ %lld more columns", (gulong)(p->n_columns - shown)),
      (long long)(p->n_columns - shown));
    GtkWidget *label = cell_label(more, TRUE);
    gtk_widget_add_css_class(label, "dim-label");
    gtk_grid_attach(self->preview_grid, label, (int)shown, 0, 1, 1);
  }
}
