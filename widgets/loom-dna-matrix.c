/*
 * LoomDnaMatrix: drawn with cairo into the snapshot (one rectangle per
 * cell; a matrix is slots × slots, small), the same drawing for PNG export.
 */
#include "loom-dna-matrix.h"

#include <glib/gi18n.h>
#include <math.h>

#include "loom-chart-private.h"
#include "loom-grid-scene.h"

struct _LoomDnaMatrix {
  GtkWidget parent_instance;
  int rows, cols;
  double *values;
  GStrv row_labels, col_labels;
  int mark_row, mark_col;
  int hover_row, hover_col;
  int label_width; /* the widest row label, pixels */
};

G_DEFINE_FINAL_TYPE(LoomDnaMatrix, loom_dna_matrix, GTK_TYPE_WIDGET)

#define MARGIN_LEFT 28.0 /* without row labels */
#define MARGIN_TOP 22.0
#define MARGIN 8.0

static GStrv copy_labels(const char *const *labels, int n) {
  GStrv out = g_new0(char *, n + 1);
  for (int i = 0; i < n; i++) out[i] = labels && labels[i] ? g_strdup(labels[i]) : g_strdup_printf("%d", i + 1);
  return out;
}

/* The square cells' layout in a w × h area: row labels on the left when
 * the cells are tall enough to carry them and they take at most 40%. */
static void layout(LoomDnaMatrix *self, double w, double h, double *x0, double *y0, double *cell,
                   gboolean *labels) {
  double ah = MAX(h - MARGIN_TOP - MARGIN, 1);
  double left = MIN(MAX(MARGIN_LEFT, self->label_width + 10.0), 0.4 * w);
  *labels = ah / MAX(self->rows, 1) >= 14 && left >= self->label_width + 10.0;
  if (!*labels) left = MARGIN_LEFT;
  double aw = MAX(w - left - MARGIN, 1);
  *cell = MIN(aw / MAX(self->cols, 1), ah / MAX(self->rows, 1));
  *x0 = left;
  *y0 = MARGIN_TOP;
}

static void draw(LoomDnaMatrix *self, cairo_t *cr, double w, double h) {
  GtkWidget *widget = GTK_WIDGET(self);
  GdkRGBA fg;
  loom_chart_foreground(widget, &fg);
  if (self->rows == 0 || self->cols == 0) {
    cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.6);
    loom_chart_text(cr, widget, _("Choose two networks to compare"), w / 2, h / 2, 0.5, 0.5);
    return;
  }
  double x0, y0, cell;
  gboolean labels;
  layout(self, w, h, &x0, &y0, &cell, &labels);
  for (int r = 0; r < self->rows; r++)
    for (int c = 0; c < self->cols; c++) {
      double v = self->values[(gsize)r * self->cols + c];
      float rgb[3];
      loom_grid_colormap(isfinite(v) ? (float)v : 0.f, rgb);
      cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
      cairo_rectangle(cr, x0 + c * cell, y0 + r * cell, ceil(cell), ceil(cell));
      cairo_fill(cr);
    }
  int marks[2][2] = {{self->mark_row, self->mark_col}, {self->hover_row, self->hover_col}};
  for (int m = 0; m < 2; m++) {
    if (marks[m][0] < 0 || marks[m][1] < 0 || marks[m][0] >= self->rows || marks[m][1] >= self->cols) continue;
    if (m == 0) cairo_set_source_rgb(cr, 1.0, 0.25, 0.78);
    else cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.9);
    cairo_set_line_width(cr, 2);
    cairo_rectangle(cr, x0 + marks[m][1] * cell + 1, y0 + marks[m][0] * cell + 1, MAX(cell - 2, 1), MAX(cell - 2, 1));
    cairo_stroke(cr);
  }
  cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.8);
  loom_chart_text(cr, widget, _("B →"), x0, y0 - 4, 0, 1);
  loom_chart_text(cr, widget, _("A ↓"), x0 - 6, y0, 1, 0);
  /* Labels where the cells leave room for them. */
  if (labels) {
    for (int r = 0; r < self->rows; r++)
      loom_chart_text(cr, widget, self->row_labels[r], x0 - 4, y0 + (r + 0.5) * cell, 1, 0.5);
  }
}

static void loom_dna_matrix_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
  LoomDnaMatrix *self = LOOM_DNA_MATRIX(widget);
  double w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, (float)w, (float)h));
  draw(self, cr, w, h);
  cairo_destroy(cr);
}

GtkWidget *loom_dna_matrix_new(void) { return g_object_new(LOOM_TYPE_DNA_MATRIX, NULL); }

static void update_description(LoomDnaMatrix *self) {
  g_autofree char *text =
      /* Translators: accessible description of the DNA similarity matrix. */
      g_strdup_printf(_("Similarity of %d slots of A with %d slots of B"), self->rows, self->cols);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
}

void loom_dna_matrix_set_data(LoomDnaMatrix *self, int rows, int cols, const double *values,
                              const char *const *row_labels, const char *const *col_labels) {
  g_return_if_fail(LOOM_IS_DNA_MATRIX(self));
  if (rows < 0 || cols < 0 || rows > LOOM_DNA_MATRIX_MAX_SIDE || cols > LOOM_DNA_MATRIX_MAX_SIDE ||
      (rows > 0 && cols > 0 && !values)) {
    g_warning("LoomDnaMatrix: a %d × %d matrix is refused", rows, cols);
    return;
  }
  if (rows == 0 || cols == 0) rows = cols = 0;
  g_free(self->values);
  g_strfreev(self->row_labels);
  g_strfreev(self->col_labels);
  self->rows = rows;
  self->cols = cols;
  self->values = rows ? g_memdup2(values, (gsize)rows * cols * sizeof *values) : NULL;
  self->row_labels = copy_labels(row_labels, rows);
  self->col_labels = copy_labels(col_labels, cols);
  self->mark_row = self->mark_col = self->hover_row = self->hover_col = -1;
  self->label_width = 0;
  for (int r = 0; r < rows; r++) {
    int tw = 0, th = 0;
    loom_chart_text_size(GTK_WIDGET(self), self->row_labels[r], &tw, &th);
    self->label_width = MAX(self->label_width, tw);
  }
  update_description(self);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

int loom_dna_matrix_get_rows(LoomDnaMatrix *self) { return self->rows; }
int loom_dna_matrix_get_cols(LoomDnaMatrix *self) { return self->cols; }

gboolean loom_dna_matrix_cell_at(LoomDnaMatrix *self, double x, double y, int *row, int *col) {
  g_return_val_if_fail(LOOM_IS_DNA_MATRIX(self), FALSE);
  if (self->rows == 0) return FALSE;
  double x0, y0, cell;
  gboolean labels;
  layout(self, gtk_widget_get_width(GTK_WIDGET(self)), gtk_widget_get_height(GTK_WIDGET(self)), &x0, &y0, &cell,
         &labels);
  int c = (int)floor((x - x0) / cell), r = (int)floor((y - y0) / cell);
  if (x < x0 || y < y0 || r < 0 || c < 0 || r >= self->rows || c >= self->cols) return FALSE;
  *row = r;
  *col = c;
  return TRUE;
}

char *loom_dna_matrix_describe_cell(LoomDnaMatrix *self, int row, int col) {
  g_return_val_if_fail(LOOM_IS_DNA_MATRIX(self), NULL);
  if (row < 0 || col < 0 || row >= self->rows || col >= self->cols) return NULL;
  /* Translators: a cell of the DNA matrix: slot of A, slot of B, similarity. */
  return g_strdup_printf(_("A %s × B %s: %.3f"), self->row_labels[row], self->col_labels[col],
                         self->values[(gsize)row * self->cols + col]);
}

void loom_dna_matrix_set_marked(LoomDnaMatrix *self, int row, int col) {
  g_return_if_fail(LOOM_IS_DNA_MATRIX(self));
  if (self->mark_row == row && self->mark_col == col) return;
  self->mark_row = row;
  self->mark_col = col;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void on_motion(GtkEventControllerMotion *motion, double x, double y, LoomDnaMatrix *self) {
  int r = -1, c = -1;
  if (!loom_dna_matrix_cell_at(self, x, y, &r, &c)) r = c = -1;
  if (r == self->hover_row && c == self->hover_col) return;
  self->hover_row = r;
  self->hover_col = c;
  g_autofree char *text = loom_dna_matrix_describe_cell(self, r, c);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self), text);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void on_leave(GtkEventControllerMotion *motion, LoomDnaMatrix *self) {
  on_motion(motion, -1, -1, self);
}

static gboolean write_file(const char *path, const char *data, gsize len, GError **error) {
  g_autoptr(GError) local = NULL;
  if (g_file_set_contents(path, data, (gssize)len, &local)) return TRUE;
  g_set_error(error, G_FILE_ERROR, local->code, _("Cannot write %s: %s"), path, local->message);
  return FALSE;
}

static cairo_status_t append_bytes(void *closure, const unsigned char *data, unsigned int length) {
  g_byte_array_append(closure, data, length);
  return CAIRO_STATUS_SUCCESS;
}

gboolean loom_dna_matrix_export_png(LoomDnaMatrix *self, const char *path, int width, int height, GError **error) {
  g_return_val_if_fail(LOOM_IS_DNA_MATRIX(self), FALSE);
  if (width < 16 || height < 16 || width > 16384 || height > 16384) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                _("%s: an image of %d × %d pixels cannot be made (16 to 16384 on each side)"), path, width, height);
    return FALSE;
  }
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  cairo_t *cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  draw(self, cr, width, height);
  cairo_destroy(cr);
  g_autoptr(GByteArray) bytes = g_byte_array_new();
  cairo_status_t status = cairo_surface_write_to_png_stream(surface, append_bytes, bytes);
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot write %s: %s"), path, cairo_status_to_string(status));
    return FALSE;
  }
  return write_file(path, (const char *)bytes->data, bytes->len, error);
}

gboolean loom_dna_matrix_export_csv(LoomDnaMatrix *self, const char *path, GError **error) {
  g_return_val_if_fail(LOOM_IS_DNA_MATRIX(self), FALSE);
  g_autoptr(GString) out = g_string_new("a\\b");
  for (int c = 0; c < self->cols; c++) g_string_append_printf(out, ",\"%s\"", self->col_labels[c]);
  g_string_append_c(out, '\n');
  for (int r = 0; r < self->rows; r++) {
    g_string_append_printf(out, "\"%s\"", self->row_labels[r]);
    for (int c = 0; c < self->cols; c++) {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append_c(out, ',');
      g_string_append(out, g_ascii_dtostr(buf, sizeof buf, self->values[(gsize)r * self->cols + c]));
    }
    g_string_append_c(out, '\n');
  }
  return write_file(path, out->str, out->len, error);
}

static void loom_dna_matrix_finalize(GObject *object) {
  LoomDnaMatrix *self = LOOM_DNA_MATRIX(object);
  g_free(self->values);
  g_strfreev(self->row_labels);
  g_strfreev(self->col_labels);
  G_OBJECT_CLASS(loom_dna_matrix_parent_class)->finalize(object);
}

static void loom_dna_matrix_class_init(LoomDnaMatrixClass *klass) {
  G_OBJECT_CLASS(klass)->finalize = loom_dna_matrix_finalize;
  GTK_WIDGET_CLASS(klass)->snapshot = loom_dna_matrix_snapshot;
  gtk_widget_class_set_accessible_role(GTK_WIDGET_CLASS(klass), GTK_ACCESSIBLE_ROLE_IMG);
}

static void loom_dna_matrix_init(LoomDnaMatrix *self) {
  self->mark_row = self->mark_col = self->hover_row = self->hover_col = -1;
  self->row_labels = g_new0(char *, 1);
  self->col_labels = g_new0(char *, 1);
  GtkEventController *motion = gtk_event_controller_motion_new();
  g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
  g_signal_connect(motion, "leave", G_CALLBACK(on_leave), self);
  gtk_widget_add_controller(GTK_WIDGET(self), motion);
  gtk_widget_set_size_request(GTK_WIDGET(self), 120, 100);
  update_description(self);
}
