/*
 * Learning-rate schedules as pure functions of the step index (step 0 is the
 * first optimizer update), so a UI can plot them and a resumed run continues
 * exactly. Each equals the learning rate torch.optim.lr_scheduler gives the
 * optimizer at that step when scheduler.step() is called after every
 * optimizer.step() (see docs/training.md for the equations):
 *  - constant: base_lr;
 *  - step: StepLR(step_size, gamma);
 *  - exponential: ExponentialLR(gamma);
 *  - cosine_restarts: CosineAnnealingWarmRestarts(T_0, T_mult, eta_min);
 *  - an optional linear warmup in front of any of them:
 *    SequentialLR([LinearLR(start_factor, 1.0, warmup_steps), wrapped],
 *    milestones=[warmup_steps]); the wrapped schedule restarts its own step
 *    count at 0 when the warmup ends.
 */
#pragma once
#include <stdint.h>

#include "error.h"
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum loom_schedule_kind {
  LOOM_SCHEDULE_CONSTANT = 0,
  LOOM_SCHEDULE_STEP = 1,
  LOOM_SCHEDULE_EXPONENTIAL = 2,
  LOOM_SCHEDULE_COSINE_RESTARTS = 3,
} loom_schedule_kind;

typedef struct loom_schedule {
  loom_schedule_kind kind;
  double base_lr;
  /* step */
  int64_t step_size;
  double gamma; /* step, exponential */
  /* cosine_restarts */
  int64_t t_0;
  int64_t t_mult;
  double eta_min;
  /* linear warmup; warmup_steps 0 = none */
  int64_t warmup_steps;
  double warmup_start_factor; /* in (0, 1] */
} loom_schedule;

/* A constant schedule at base_lr; set the other fields for the others. */
LOOM_API loom_schedule loom_schedule_constant(double base_lr);
LOOM_API const char *loom_schedule_name(loom_schedule_kind kind); /* "constant", "step", "exponential", "cosine_restarts" */
LOOM_API int loom_schedule_from_name(const char *name, loom_schedule_kind *out, loom_error *err);
/* Checks the fields the kind uses (base_lr >= 0 and finite, step_size >= 1,
 * gamma > 0, t_0 >= 1, t_mult >= 1, 0 <= eta_min, warmup_steps >= 0,
 * 0 < warmup_start_factor <= 1 when warming up), naming the field. */
LOOM_API int loom_schedule_validate(const loom_schedule *s, loom_error *err);
/* The learning rate for optimizer update number `step` (>= 0) of a valid schedule. */
LOOM_API double loom_schedule_lr(const loom_schedule *s, int64_t step);

#ifdef __cplusplus
}
#endif
