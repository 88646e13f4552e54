/*
 * Learning-rate schedules in closed form. torch's schedulers update the rate
 * recursively; the closed forms below agree with them up to double rounding
 * (checked for 50 steps against torch in tests/engine/test-schedule.c).
 */
#include "loom/schedule.h"

#include <math.h>
#include <string.h>

#include "core/i18n.h"

static const char *const schedule_names[] = {"constant", "step", "exponential", "cosine_restarts"};
#define N_SCHEDULES ((int)(sizeof schedule_names / sizeof schedule_names[0]))

LOOM_API loom_schedule loom_schedule_constant(double base_lr) {
  return (loom_schedule){.kind = LOOM_SCHEDULE_CONSTANT, .base_lr = base_lr};
}

LOOM_API const char *loom_schedule_name(loom_schedule_kind kind) {
  return (int)kind >= 0 && (int)kind < N_SCHEDULES ? schedule_names[kind] : "unknown";
}

LOOM_API int loom_schedule_from_name(const char *name, loom_schedule_kind *out, loom_error *err) {
  for (int i = 0; name && i < N_SCHEDULES; i++)
    if (strcmp(name, schedule_names[i]) == 0) {
      *out = (loom_schedule_kind)i;
      return LOOM_OK;
    }
  return loom_error_set(err, LOOM_ERR_INVALID,
                        _("unknown schedule '%s' (expected constant, step, exponential or cosine_restarts)"),
                        name ? name : "(null)");
}

static int bad_field(loom_error *err, const char *field, double v, const char *expected) {
  return loom_error_set(err, LOOM_ERR_INVALID, _("schedule: %s is %g, expected %s"), field, v, expected);
}

LOOM_API int loom_schedule_validate(const loom_schedule *s, loom_error *err) {
  if ((int)s->kind < 0 || (int)s->kind >= N_SCHEDULES)
    return loom_error_set(err, LOOM_ERR_INVALID, _("unknown schedule kind %d"), (int)s->kind);
  if (!(s->base_lr >= 0.0 && isfinite(s->base_lr)))
    return bad_field(err, "base_lr", s->base_lr, _("a finite value >= 0"));
  switch (s->kind) {
  case LOOM_SCHEDULE_CONSTANT: break;
  case LOOM_SCHEDULE_STEP:
    if (s->step_size < 1) return bad_field(err, "step_size", (double)s->step_size, _("an integer >= 1"));
    /* fall through */
  case LOOM_SCHEDULE_EXPONENTIAL: /* step and exponential both use gamma */
    if (!(s->gamma > 0.0 && isfinite(s->gamma))) return bad_field(err, "gamma", s->gamma, _("a finite value > 0"));
    break;
  case LOOM_SCHEDULE_COSINE_RESTARTS:
    if (s->t_0 < 1) return bad_field(err, "t_0", (double)s->t_0, _("an integer >= 1"));
    if (s->t_mult < 1) return bad_field(err, "t_mult", (double)s->t_mult, _("an integer >= 1"));
    if (!(s->eta_min >= 0.0 && isfinite(s->eta_min)))
      return bad_field(err, "eta_min", s->eta_min, _("a finite value >= 0"));
    break;
  }
  if (s->warmup_steps < 0) return bad_field(err, "warmup_steps", (double)s->warmup_steps, _("an integer >= 0"));
  if (s->warmup_steps > 0 && !(s->warmup_start_factor > 0.0 && s->warmup_start_factor <= 1.0))
    return bad_field(err, "warmup_start_factor", s->warmup_start_factor, _("a value in (0, 1]"));
  return LOOM_OK;
}

/* CosineAnnealingWarmRestarts: the position inside the current cycle and
 * the cycle's length, with integers so long runs stay exact. */
static double cosine_restarts(const loom_schedule *s, int64_t step) {
  int64_t t_cur = step, t_i = s->t_0;
  if (s->t_mult == 1) {
    t_cur = step % s->t_0;
  } else {
    while (t_cur >= t_i) {
      t_cur -= t_i;
      if (t_i > INT64_MAX / s->t_mult) break; /* the cycle outlasts any run */
      t_i *= s->t_mult;
    }
  }
  return s->eta_min + (s->base_lr - s->eta_min) * (1.0 + cos(M_PI * (double)t_cur / (double)t_i)) / 2.0;
}

static double wrapped_lr(const loom_schedule *s, int64_t step) {
  switch (s->kind) {
  case LOOM_SCHEDULE_CONSTANT: return s->base_lr;
  case LOOM_SCHEDULE_STEP: return s->base_lr * pow(s->gamma, (double)(step / s->step_size));
  case LOOM_SCHEDULE_EXPONENTIAL: return s->base_lr * pow(s->gamma, (double)step);
  case LOOM_SCHEDULE_COSINE_RESTARTS: return cosine_restarts(s, step);
  }
  return s->base_lr;
}

LOOM_API double loom_schedule_lr(const loom_schedule *s, int64_t step) {
  if (step < 0) step = 0;
  if (s->warmup_steps > 0) {
    if (step < s->warmup_steps) {
      double f = s->warmup_start_factor;
      return s->base_lr * (f + (1.0 - f) * (double)step / (double)s->warmup_steps);
    }
    step -= s->warmup_steps;
  }
  return wrapped_lr(s, step);
}
