/*
 * LoomDnaMatrix: a similarity matrix as a heatmap (rows: the slots of
 * network A, columns: those of B), viridis over [0, 1] (below 0 takes the
 * low end), with a hover read-out and PNG/CSV export. It takes plain
 * numbers and labels; whoever compares the networks decides what to show.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LOOM_TYPE_DNA_MATRIX (loom_dna_matrix_get_type())
G_DECLARE_FINAL_TYPE(LoomDnaMatrix, loom_dna_matrix, LOOM, DNA_MATRIX, GtkWidget)

#define LOOM_DNA_MATRIX_MAX_SIDE 4096

GtkWidget *loom_dna_matrix_new(void);
/* Copies @values (rows × cols, row-major) and the labels (NULL: "1", "2",
 * ...). Sizes beyond LOOM_DNA_MATRIX_MAX_SIDE are refused with a warning,
 * keeping what was shown. rows or cols 0 clears. */
void loom_dna_matrix_set_data(LoomDnaMatrix *self, int rows, int cols, const double *values,
                              const char *const *row_labels, const char *const *col_labels);
int loom_dna_matrix_get_rows(LoomDnaMatrix *self);
int loom_dna_matrix_get_cols(LoomDnaMatrix *self);
/* The cell under widget point (x, y), FALSE outside the matrix. */
gboolean loom_dna_matrix_cell_at(LoomDnaMatrix *self, double x, double y, int *row, int *col);
/* "A (0,0,1,0) dense × B (0,1,0,0) dense: 0.934" for a cell, or NULL. */
char *loom_dna_matrix_describe_cell(LoomDnaMatrix *self, int row, int col);
/* Marks one cell (a selected logic shift) with an outline; -1 clears. */
void loom_dna_matrix_set_marked(LoomDnaMatrix *self, int row, int col);
gboolean loom_dna_matrix_export_png(LoomDnaMatrix *self, const char *path, int width, int height, GError **error);
gboolean loom_dna_matrix_export_csv(LoomDnaMatrix *self, const char *path, GError **error);

G_END_DECLS
