/*
 * LoomPlot's points: growable arrays per series, a min/max pyramid per line
 * for decimation, and the EMA smoothing.
 */
#include "loom-plot-private.h"

#include <math.h>

#define BUCKET_POINTS ((gsize)1 << LOOM_PLOT_BUCKET_SHIFT)
/* Fewer points than this many per pixel column are drawn one by one. */
#define POINTS_PER_COLUMN_RAW 4

static void track_init(LoomPlotTrack *t) {
  loom_big_array_init(&t->y, sizeof(double));
  for (guint k = 0; k < LOOM_PLOT_LEVELS; k++) loom_big_array_init(&t->levels[k], sizeof(LoomPlotBucket));
  t->n_levels = 0;
  t->min = t->max = t->min_pos = NAN;
  t->n_nonpos = 0;
}

static void track_clear(LoomPlotTrack *t) {
  /* Keeps the memory: the next run's points land in pages already faulted. */
  loom_big_array_set_size(&t->y, 0);
  for (guint k = 0; k < t->n_levels; k++) loom_big_array_set_size(&t->levels[k], 0);
  t->n_levels = 0;
  t->min = t->max = t->min_pos = NAN;
  t->n_nonpos = 0;
}

static void track_free(LoomPlotTrack *t) {
  loom_big_array_release(&t->y);
  for (guint k = 0; k < LOOM_PLOT_LEVELS; k++) loom_big_array_release(&t->levels[k]);
}

static void bucket_add_point(LoomPlotBucket *b, const double *v, guint32 i) {
  if (!isfinite(v[i])) return;
  if (b->imin == LOOM_PLOT_NO_INDEX || v[i] < v[b->imin]) b->imin = i;
  if (b->imax == LOOM_PLOT_NO_INDEX || v[i] > v[b->imax]) b->imax = i;
  if (v[i] > 0 && (b->iminpos == LOOM_PLOT_NO_INDEX || v[i] < v[b->iminpos])) b->iminpos = i;
}

/* Merges @o (later indices) into @b; ties keep the earlier point. */
static void bucket_merge(LoomPlotBucket *b, const double *v, const LoomPlotBucket *o) {
  if (o->imin != LOOM_PLOT_NO_INDEX && (b->imin == LOOM_PLOT_NO_INDEX || v[o->imin] < v[b->imin])) b->imin = o->imin;
  if (o->imax != LOOM_PLOT_NO_INDEX && (b->imax == LOOM_PLOT_NO_INDEX || v[o->imax] > v[b->imax])) b->imax = o->imax;
  if (o->iminpos != LOOM_PLOT_NO_INDEX && (b->iminpos == LOOM_PLOT_NO_INDEX || v[o->iminpos] < v[b->iminpos]))
    b->iminpos = o->iminpos;
}

static const LoomPlotBucket empty_bucket = {LOOM_PLOT_NO_INDEX, LOOM_PLOT_NO_INDEX, LOOM_PLOT_NO_INDEX};

static LoomBigArray *track_level(LoomPlotTrack *t, guint k) {
  g_assert(k < LOOM_PLOT_LEVELS);
  if (k >= t->n_levels) t->n_levels = k + 1;
  return &t->levels[k];
}

static void track_append(LoomPlotTrack *t, double y) {
  loom_big_array_append(&t->y, &y, 1);
  if (isfinite(y)) {
    if (isnan(t->min) || y < t->min) t->min = y;
    if (isnan(t->max) || y > t->max) t->max = y;
    if (y > 0 && (isnan(t->min_pos) || y < t->min_pos)) t->min_pos = y;
    if (y <= 0) t->n_nonpos++;
  }
  gsize n = t->y.len;
  if (n % BUCKET_POINTS != 0) return;
  const double *v = (const double *)t->y.data;
  LoomPlotBucket b = empty_bucket;
  for (gsize i = n - BUCKET_POINTS; i < n; i++) bucket_add_point(&b, v, (guint32)i);
  LoomBigArray *level = track_level(t, 0);
  loom_big_array_append(level, &b, 1);
  /* A completed pair makes one bucket of the level above: each bucket is
   * built once, so appending stays O(1) amortized. */
  for (guint k = 0; level->len % 2 == 0; k++) {
    LoomPlotBucket up = loom_big_array_index(level, LoomPlotBucket, level->len - 2);
    bucket_merge(&up, v, &loom_big_array_index(level, LoomPlotBucket, level->len - 1));
    level = track_level(t, k + 1);
    loom_big_array_append(level, &up, 1);
  }
}

/* Extremes of the points [a, b): whole buckets where aligned, raw points at
 * the ragged ends and past the last complete bucket. */
static LoomPlotBucket track_range(const LoomPlotTrack *t, gsize a, gsize b) {
  LoomPlotBucket r = empty_bucket;
  const double *v = (const double *)t->y.data;
  while (a < b) {
    int k = -1;
    for (guint lk = 0; lk < t->n_levels; lk++) {
      gsize size = BUCKET_POINTS << lk;
      const LoomBigArray *level = &t->levels[lk];
      if (a % size != 0 || a + size > b || a / size >= level->len) break;
      k = (int)lk;
    }
    if (k < 0) {
      bucket_add_point(&r, v, (guint32)a);
      a++;
      continue;
    }
    const LoomBigArray *level = &t->levels[k];
    gsize size = BUCKET_POINTS << k;
    bucket_merge(&r, v, &loom_big_array_index(level, LoomPlotBucket, a / size));
    a += size;
  }
  return r;
}

LoomPlotSeries *loom_plot_series_new(const char *label, const GdkRGBA *color, gboolean dashed) {
  LoomPlotSeries *s = g_new0(LoomPlotSeries, 1);
  s->label = g_strdup(label ? label : "");
  s->color = *color;
  s->dashed = dashed;
  loom_big_array_init(&s->x, sizeof(double));
  track_init(&s->raw);
  track_init(&s->smooth);
  for (int i = 0; i < 2; i++) s->line[i] = g_array_new(FALSE, FALSE, sizeof(double));
  loom_plot_series_clear(s);
  return s;
}

void loom_plot_series_free(LoomPlotSeries *s) {
  g_free(s->label);
  loom_big_array_release(&s->x);
  track_free(&s->raw);
  track_free(&s->smooth);
  for (int i = 0; i < 2; i++) g_array_unref(s->line[i]);
  g_free(s);
}

void loom_plot_series_clear(LoomPlotSeries *s) {
  loom_big_array_set_size(&s->x, 0);
  track_clear(&s->raw);
  track_clear(&s->smooth);
  s->sorted = TRUE;
  s->x_min = s->x_max = NAN;
  s->ema = 0;
  s->ema_wpow = 1;
  for (int i = 0; i < 2; i++) s->line_key[i].valid = FALSE;
}

/* TensorBoard's smoothing: an EMA started at 0 and divided by 1 - w^k so
 * that the first points are not pulled towards 0; non-finite values pass
 * through without entering the average. */
static double smooth_next(LoomPlotSeries *s, double y, double w) {
  if (!isfinite(y)) return y;
  s->ema = s->ema * w + (1 - w) * y;
  s->ema_wpow *= w;
  double debias = 1 - s->ema_wpow;
  return debias > 0 ? s->ema / debias : y;
}

gboolean loom_plot_series_append(LoomPlotSeries *s, double x, double y, double smoothing) {
  if (s->x.len >= LOOM_PLOT_MAX_POINTS || !isfinite(x)) return FALSE;
  if (s->x.len > 0 && x < loom_big_array_index(&s->x, double, s->x.len - 1)) s->sorted = FALSE;
  if (isnan(s->x_min) || x < s->x_min) s->x_min = x;
  if (isnan(s->x_max) || x > s->x_max) s->x_max = x;
  loom_big_array_append(&s->x, &x, 1);
  track_append(&s->raw, y);
  if (smoothing > 0) track_append(&s->smooth, smooth_next(s, y, smoothing));
  return TRUE;
}

void loom_plot_series_resmooth(LoomPlotSeries *s, double smoothing) {
  track_clear(&s->smooth);
  s->ema = 0;
  s->ema_wpow = 1;
  s->line_key[1].valid = FALSE;
  if (smoothing <= 0) return;
  const double *y = (const double *)s->raw.y.data;
  for (guint i = 0; i < s->raw.y.len; i++) track_append(&s->smooth, smooth_next(s, y[i], smoothing));
}

/* First index in [lo, hi) whose x is >= @v (x sorted). */
static gsize lower_bound(const double *x, gsize lo, gsize hi, double v) {
  while (lo < hi) {
    gsize mid = lo + (hi - lo) / 2;
    if (x[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static gboolean drawable(double y, gboolean log_scale) {
  return isfinite(y) && (!log_scale || y > 0);
}

static void emit(GArray *out, const double *x, const double *y, guint32 i, gboolean log_scale) {
  if (i == LOOM_PLOT_NO_INDEX || !drawable(y[i], log_scale)) return;
  g_array_append_val(out, x[i]);
  g_array_append_val(out, y[i]);
}

/* The first, lowest, highest and last point of [a, b) in index order, each once. */
static void emit_run(GArray *out, const LoomPlotTrack *t, const double *x, gsize a, gsize b, gboolean log_scale) {
  LoomPlotBucket r = track_range(t, a, b);
  guint32 idx[4] = {(guint32)a, log_scale ? r.iminpos : r.imin, r.imax, (guint32)(b - 1)};
  if (log_scale && idx[2] != LOOM_PLOT_NO_INDEX && !(((const double *)t->y.data)[idx[2]] > 0))
    idx[2] = LOOM_PLOT_NO_INDEX;
  if (idx[1] != LOOM_PLOT_NO_INDEX && idx[2] != LOOM_PLOT_NO_INDEX && idx[1] > idx[2]) {
    guint32 tmp = idx[1];
    idx[1] = idx[2];
    idx[2] = tmp;
  }
  guint32 last = LOOM_PLOT_NO_INDEX;
  for (int k = 0; k < 4; k++) {
    if (idx[k] == LOOM_PLOT_NO_INDEX || idx[k] == last) continue;
    emit(out, x, (const double *)t->y.data, idx[k], log_scale);
    last = idx[k];
  }
}

const GArray *loom_plot_series_line(LoomPlotSeries *s, int track, double x0, double x1, int width,
                                    gboolean log_scale) {
  const LoomPlotTrack *t = track == 0 ? &s->raw : &s->smooth;
  GArray *out = s->line[track];
  LoomPlotCacheKey key = {t->y.len, x0, x1, MAX(width, 1), log_scale, TRUE, FALSE, -1, 0, 0};
  LoomPlotCacheKey *old = &s->line_key[track];
  gboolean same_view = old->valid && old->x0 == x0 && old->x1 == x1 && old->width == key.width &&
                       old->log_scale == log_scale;
  if (same_view && old->n_points == key.n_points) return out;
  /* Points appended (x never decreasing) under the same view: the columns
   * before the old last one keep their vertices. */
  gboolean extend = same_view && old->by_columns && old->tail_column >= 0 && s->sorted && key.n_points > old->n_points;
  LoomPlotCacheKey prev = *old;
  *old = key;
  width = key.width;
  gsize n = t->y.len;
  const double *x = (const double *)s->x.data;
  const double *y = (const double *)t->y.data;
  if (s->sorted) {
    gsize i0 = lower_bound(x, 0, n, x0);
    gsize i1 = lower_bound(x, i0, n, nextafter(x1, INFINITY));
    if (i1 - i0 <= (gsize)width * POINTS_PER_COLUMN_RAW) {
      g_array_set_size(out, 0);
      for (gsize i = i0; i < i1; i++) emit(out, x, y, (guint32)i, log_scale);
      return out;
    }
    gsize a = i0;
    int c = 0;
    if (extend) {
      c = prev.tail_column;
      a = prev.tail_first;
      g_array_set_size(out, prev.tail_out);
    } else {
      g_array_set_size(out, 0);
    }
    old->by_columns = TRUE;
    for (; c < width && a < i1; c++) {
      gsize e = i1;
      if (c + 1 < width) e = lower_bound(x, a, i1, x0 + (x1 - x0) * (double)(c + 1) / width);
      if (e > a) {
        old->tail_column = c;
        old->tail_first = a;
        old->tail_out = out->len;
        emit_run(out, t, x, a, e, log_scale);
      }
      a = e;
    }
    return out;
  }
  g_array_set_size(out, 0);
  /* x goes back somewhere: columns are not index ranges, so the runs are
   * consecutive points instead, two per column, drawn where they lie. */
  if (n <= (gsize)width * POINTS_PER_COLUMN_RAW) {
    for (gsize i = 0; i < n; i++) emit(out, x, y, (guint32)i, log_scale);
    return out;
  }
  gsize runs = (gsize)width * 2;
  for (gsize r = 0; r < runs; r++) {
    gsize a = n * r / runs, b = n * (r + 1) / runs;
    if (b > a) emit_run(out, t, x, a, b, log_scale);
  }
  return out;
}

gboolean loom_plot_series_nearest(const LoomPlotSeries *s, double x, gsize *index) {
  gsize n = s->x.len;
  if (n == 0) return FALSE;
  const double *xs = (const double *)s->x.data;
  gsize best = 0;
  if (s->sorted) {
    gsize i = lower_bound(xs, 0, n, x);
    if (i == n)
      best = n - 1;
    else if (i > 0 && x - xs[i - 1] <= xs[i] - x)
      best = i - 1;
    else
      best = i;
    /* Equal x values: the first of them. */
    best = lower_bound(xs, 0, best, xs[best]);
  } else {
    for (gsize i = 1; i < n; i++)
      if (fabs(xs[i] - x) < fabs(xs[best] - x)) best = i;
  }
  *index = best;
  return TRUE;
}
