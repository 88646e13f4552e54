/* `loom train`'s learning-rate schedule and optimizer options, applied to the
 * training settings (loom/settings.h) that the run is made from. */
#pragma once
#include <loom/loom.h>

/* --schedule NAME[:key=value,...]: sets spec's kind and its knobs (the knobs
 * not given are unset: spread over the run by
 * loom_schedule_settings_resolve); the warmup is kept. Returns 0, or prints
 * a usage error naming the bad name, key or value and returns 2. */
int cli_schedule_parse(const char *text, loom_schedule_settings *spec);
/* --warmup N[:start=F]. Returns 0 or 2 like cli_schedule_parse. */
int cli_warmup_parse(const char *text, loom_schedule_settings *spec);

/* --momentum, --nesterov, --weight-decay, --betas (NULL when not given)
 * applied to s's optimizer; an option the optimizer does not have, a
 * malformed value or a combination torch refuses is a usage error (returns
 * 2, s unchanged), else 0. */
int cli_optim_apply(const char *momentum, bool nesterov, const char *weight_decay, const char *betas,
                    loom_train_settings *s);
