/* `loom train`'s learning-rate schedule and optimizer options. */
#pragma once
#include <loom/loom.h>

/* What --schedule and --warmup asked for; unset fields take the defaults that
 * spread the schedule over the run (cli_schedule_resolve). */
typedef struct cli_schedule_spec {
  loom_schedule_kind kind;
  bool has_size, has_gamma, has_t0, has_tmult, has_eta_min;
  int64_t size, t0, tmult;
  double gamma, eta_min;
  int64_t warmup;        /* updates; 0 = none */
  double warmup_start;   /* start factor, (0, 1] */
} cli_schedule_spec;

/* A constant schedule without warmup. */
cli_schedule_spec cli_schedule_spec_default(void);

/* --schedule NAME[:key=value,...]. Returns 0, or prints a usage error naming
 * the bad name, key or value and returns 2. */
int cli_schedule_parse(const char *text, cli_schedule_spec *spec);
/* --warmup N[:start=F]. Returns 0 or 2 like cli_schedule_parse. */
int cli_warmup_parse(const char *text, cli_schedule_spec *spec);
/* The schedule for a run of `total` updates at base rate lr: options not
 * given are spread over the updates after the warmup. Returns 0, or prints a
 * usage error and returns 2 when the result is not a valid schedule. */
int cli_schedule_resolve(const cli_schedule_spec *spec, double lr, int64_t total, loom_schedule *out);

/* --momentum, --nesterov, --weight-decay, --betas (NULL when not given) applied
 * to cfg (already the chosen optimizer's defaults); an option the optimizer
 * does not have, a malformed value or a combination torch refuses is a usage
 * error (returns 2), else 0. */
int cli_optim_apply(const char *momentum, bool nesterov, const char *weight_decay, const char *betas,
                    loom_optim_config *cfg);
