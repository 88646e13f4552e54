/*
 * The adaptation tracker of loom/adapt.h: one ring of the last
 * short_window + long_window pushes, and the window means recomputed from it
 * at every push (a hundred additions, in a fixed order, so no running sum
 * drifts and the same values always give the same events).
 */
#include "loom/adapt.h"

#include <math.h>
#include <stdlib.h>

#include "core/i18n.h"

typedef struct adapt_entry {
  double loss, accuracy, throughput;
} adapt_entry;

struct loom_adapt_tracker {
  loom_adapt_config cfg;
  int cap;            /* short_window + long_window */
  adapt_entry *ring;  /* ring[(next - 1) mod cap] is the newest */
  int next, count;
  loom_adapt_summary sum;
};

LOOM_API loom_adapt_config loom_adapt_config_default(void) {
  return (loom_adapt_config){
      .short_window = 10, .long_window = 100, .drop = 0.1, .loss_jump = 2.0, .recover_tolerance = 0.02};
}

/* Windows far beyond any use would only make the ring absurd. */
#define ADAPT_MAX_WINDOW 1000000

LOOM_API int loom_adapt_config_validate(const loom_adapt_config *c, loom_error *err) {
  if (!c) return loom_error_set(err, LOOM_ERR_INVALID, _("no adaptation tracker configuration given"));
  if (c->short_window < 1 || c->short_window > ADAPT_MAX_WINDOW)
    return loom_error_set(err, LOOM_ERR_INVALID, _("short_window must lie in [1, %d], got %d"), ADAPT_MAX_WINDOW,
                          c->short_window);
  if (c->long_window < 1 || c->long_window > ADAPT_MAX_WINDOW)
    return loom_error_set(err, LOOM_ERR_INVALID, _("long_window must lie in [1, %d], got %d"), ADAPT_MAX_WINDOW,
                          c->long_window);
  if (!(c->drop > 0.0 && c->drop <= 1.0))
    return loom_error_set(err, LOOM_ERR_INVALID, _("drop must lie in (0, 1], got %g"), c->drop);
  if (!(c->loss_jump == 0.0 || (c->loss_jump > 1.0 && isfinite(c->loss_jump))))
    return loom_error_set(err, LOOM_ERR_INVALID, _("loss_jump must be above 1, or 0 (off), got %g"), c->loss_jump);
  if (!(c->recover_tolerance >= 0.0 && isfinite(c->recover_tolerance)))
    return loom_error_set(err, LOOM_ERR_INVALID, _("recover_tolerance must be a finite value >= 0, got %g"),
                          c->recover_tolerance);
  /* a tolerance as wide as the trigger would call the change recovered on the next push */
  if (c->recover_tolerance >= c->drop)
    return loom_error_set(err, LOOM_ERR_INVALID, _("recover_tolerance (%g) must be below drop (%g)"),
                          c->recover_tolerance, c->drop);
  if (c->loss_jump > 0.0 && 1.0 + c->recover_tolerance >= c->loss_jump)
    return loom_error_set(err, LOOM_ERR_INVALID, _("1 + recover_tolerance (%g) must be below loss_jump (%g)"),
                          1.0 + c->recover_tolerance, c->loss_jump);
  return LOOM_OK;
}

LOOM_API loom_adapt_tracker *loom_adapt_tracker_new(const loom_adapt_config *cfg, loom_error *err) {
  loom_adapt_config c = cfg ? *cfg : loom_adapt_config_default();
  if (loom_adapt_config_validate(&c, err)) return NULL;
  loom_adapt_tracker *t = calloc(1, sizeof *t);
  int cap = c.short_window + c.long_window;
  if (t) t->ring = calloc((size_t)cap, sizeof *t->ring);
  if (!t || !t->ring) {
    free(t);
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for an adaptation tracker of %d steps"), cap);
    return NULL;
  }
  t->cfg = c;
  t->cap = cap;
  loom_adapt_tracker_reset(t);
  return t;
}

LOOM_API void loom_adapt_tracker_free(loom_adapt_tracker *t) {
  if (!t) return;
  free(t->ring);
  free(t);
}

LOOM_API void loom_adapt_tracker_reset(loom_adapt_tracker *t) {
  if (!t) return;
  t->next = t->count = 0;
  t->sum = (loom_adapt_summary){.short_loss = NAN,
                                .long_loss = NAN,
                                .short_accuracy = NAN,
                                .long_accuracy = NAN,
                                .short_throughput = NAN,
                                .long_throughput = NAN,
                                .last_change_step = -1,
                                .last_recovery_steps = -1,
                                .level_before = NAN};
}

/* Means of the finite values of entries [from, to) counted back from the
 * newest (0 = newest), oldest first. */
static void window_means(const loom_adapt_tracker *t, int from, int to, double *loss, double *acc, double *tp) {
  double s[3] = {0, 0, 0};
  int n[3] = {0, 0, 0};
  if (to > t->count) to = t->count;
  for (int back = to - 1; back >= from; back--) {
    const adapt_entry *e = &t->ring[((t->next - 1 - back) % t->cap + t->cap) % t->cap];
    const double v[3] = {e->loss, e->accuracy, e->throughput};
    for (int k = 0; k < 3; k++)
      if (isfinite(v[k])) {
        s[k] += v[k];
        n[k]++;
      }
  }
  *loss = n[0] ? s[0] / n[0] : NAN;
  *acc = n[1] ? s[1] / n[1] : NAN;
  *tp = n[2] ? s[2] / n[2] : NAN;
}

LOOM_API loom_adapt_event loom_adapt_tracker_push(loom_adapt_tracker *t, int64_t step, double loss, double accuracy,
                                                  double samples_per_second) {
  if (!t) return LOOM_ADAPT_NONE;
  t->ring[t->next] = (adapt_entry){loss, accuracy, samples_per_second};
  t->next = (t->next + 1) % t->cap;
  if (t->count < t->cap) t->count++;
  loom_adapt_summary *s = &t->sum;
  s->pushes++;
  const loom_adapt_config *c = &t->cfg;
  window_means(t, 0, c->short_window, &s->short_loss, &s->short_accuracy, &s->short_throughput);
  window_means(t, c->short_window, t->cap, &s->long_loss, &s->long_accuracy, &s->long_throughput);
  bool has_acc = isfinite(s->short_accuracy) && isfinite(s->long_accuracy);
  if (s->in_change) {
    bool back = has_acc ? s->short_accuracy >= s->level_before - c->recover_tolerance
                        : isfinite(s->short_loss) && s->short_loss <= s->level_before * (1.0 + c->recover_tolerance);
    if (!back) return LOOM_ADAPT_NONE;
    s->in_change = false;
    s->recoveries++;
    s->last_recovery_steps = step - s->last_change_step;
    return LOOM_ADAPT_RECOVERED;
  }
  if (t->count < t->cap) return LOOM_ADAPT_NONE; /* both windows full first */
  bool acc_drop = has_acc && s->short_accuracy < s->long_accuracy - c->drop;
  /* Only without accuracies: a converged classifier's loss is tiny, so
   * noise doubles it all the time while its accuracy stands, and recovery is
   * judged by accuracy, so every such jump would be a change recovered on
   * the next push. */
  bool loss_jump = !has_acc && c->loss_jump > 0.0 && isfinite(s->short_loss) && isfinite(s->long_loss) &&
                   s->short_loss > c->loss_jump * s->long_loss;
  if (!acc_drop && !loss_jump) return LOOM_ADAPT_NONE;
  s->in_change = true;
  s->changes++;
  s->last_change_step = step;
  s->last_recovery_steps = -1;
  s->level_before = has_acc ? s->long_accuracy : s->long_loss;
  return LOOM_ADAPT_TASK_CHANGE;
}

LOOM_API void loom_adapt_tracker_summary(const loom_adapt_tracker *t, loom_adapt_summary *out) {
  if (!t || !out) return;
  *out = t->sum;
}
