/*
 * LoomHistogram: the distribution of a set of values (weights,
 * activations) as bars over [min, max] of the finite values, with counts;
 * NaN and infinite values are counted apart and shown beside the bars.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LOOM_TYPE_HISTOGRAM (loom_histogram_get_type())
G_DECLARE_FINAL_TYPE(LoomHistogram, loom_histogram, LOOM, HISTOGRAM, GtkWidget)

#define LOOM_HISTOGRAM_MAX_BINS 4096

GtkWidget *loom_histogram_new(void);
/* Counts @n values (NULL with n = 0 clears) into @bins equal bins
 * (clamped to 1..LOOM_HISTOGRAM_MAX_BINS); bin i holds [lo + i·w, lo + (i+1)·w),
 * the last one includes the maximum. All values equal: one value's range
 * [v - 0.5, v + 0.5] split into the bins. */
void loom_histogram_set_values(LoomHistogram *self, const float *values, gsize n, int bins);
const guint64 *loom_histogram_get_bin_counts(LoomHistogram *self, gsize *n_bins);
/* The binned range; FALSE (and NaN) without finite values. */
gboolean loom_histogram_get_range(LoomHistogram *self, double *lo, double *hi);
void loom_histogram_get_nonfinite(LoomHistogram *self, guint64 *n_nan, guint64 *n_inf);

G_END_DECLS
