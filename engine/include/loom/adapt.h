/*
 * Adaptation tracking (docs/trainer.md "Adaptation tracking"): moving windows of a
 * training run's loss, accuracy and throughput that flag a TASK CHANGE — the
 * data changed under the network and it got worse at once — and its
 * RECOVERY, when it is back where it was before the change. Feed it one
 * step at a time (loom_step_stats: loss, correct / counted, and
 * samples_per_second); it keeps no pointers and allocates once.
 *
 * Windows. The short window is the last short_window pushes; the long window
 * is the long_window pushes before those (disjoint, so a drop does not dilute
 * its own reference). Means skip NaN and infinite values; a window without
 * any value has a NaN mean. Nothing is flagged until both windows are full.
 *
 * Task change (while not already in one), either rule:
 *  - accuracy: short mean < long mean − drop (both windows have accuracies);
 *  - loss, only when the run has no accuracy (regression): short mean >
 *    loss_jump × long mean (loss_jump 0 turns it off). With accuracies a
 *    loss spike alone is noise, not a change: a converged classifier's tiny
 *    loss doubles often while its accuracy stands.
 * The level before the change is the long window's mean accuracy (or, when
 * the run has no accuracy, its mean loss) at that push.
 * Recovery: the short-window accuracy is back at or above
 * level − recover_tolerance (without accuracies: the short-window loss at or
 * below level × (1 + recover_tolerance)). Then a new change can be flagged.
 * recover_tolerance must be below drop (and 1 + it below loss_jump), or a
 * change would count as recovered on the next push.
 *
 * Everything is computed in a fixed order from the pushed values: the same
 * sequence gives the same events.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_adapt_config {
  int short_window;         /* >= 1 (default 10) */
  int long_window;          /* >= 1 (default 100) */
  double drop;              /* accuracy drop that flags a change, in (0, 1] (default 0.1) */
  double loss_jump;         /* loss factor that flags a change, > 1, or 0 = off (default 2.0) */
  double recover_tolerance; /* >= 0 (default 0.02): absolute for accuracy, relative for loss */
} loom_adapt_config;

typedef enum loom_adapt_event {
  LOOM_ADAPT_NONE = 0,
  LOOM_ADAPT_TASK_CHANGE = 1,
  LOOM_ADAPT_RECOVERED = 2,
} loom_adapt_event;

typedef struct loom_adapt_summary {
  int64_t pushes;            /* values pushed since creation or the last reset */
  /* window means (NaN while a window has no finite value) */
  double short_loss, long_loss;
  double short_accuracy, long_accuracy;
  double short_throughput, long_throughput;
  bool in_change;            /* a change was flagged and has not recovered yet */
  int64_t changes, recoveries;
  int64_t last_change_step;  /* the step passed with the last TASK_CHANGE; -1 if none */
  int64_t last_recovery_steps; /* steps from the last change to its RECOVERED; -1 if none yet */
  double level_before;       /* accuracy (or loss) before the last change; NaN if none */
} loom_adapt_summary;

typedef struct loom_adapt_tracker loom_adapt_tracker;

/* short_window 10, long_window 100, drop 0.1, loss_jump 2.0, recover_tolerance 0.02. */
LOOM_API loom_adapt_config loom_adapt_config_default(void);
/* Checks every field, naming the bad one. */
LOOM_API int loom_adapt_config_validate(const loom_adapt_config *cfg, loom_error *err);
/* cfg NULL: the defaults. */
LOOM_API loom_adapt_tracker *loom_adapt_tracker_new(const loom_adapt_config *cfg, loom_error *err);
LOOM_API void loom_adapt_tracker_free(loom_adapt_tracker *t);
/* Forgets every value and count (the configuration stays). */
LOOM_API void loom_adapt_tracker_reset(loom_adapt_tracker *t);
/* accuracy NaN when there is none (regression: only the loss rule applies) */
LOOM_API loom_adapt_event loom_adapt_tracker_push(loom_adapt_tracker *t, int64_t step, double loss, double accuracy,
                                                  double samples_per_second);
LOOM_API void loom_adapt_tracker_summary(const loom_adapt_tracker *t, loom_adapt_summary *out);

#ifdef __cplusplus
}
#endif
