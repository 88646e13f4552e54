/*
 * Training settings: everything a training run needs besides the network —
 * the data set (by name, so both faces make identical data), the method,
 * loss, optimizer, schedule and the knobs of target propagation. The
 * workbench writes them as a small JSON file that `loom train --config FILE`
 * reads, so a run seen in the workbench is reproducible headless with the
 * same curve (docs/training-settings.md).
 *
 * Conventions: a double knob that is NaN and an integer knob that is 0 where
 * the comment says so mean "not set": the run takes the default that
 * `loom train` takes for it (the optimizer's own default, a generator's
 * default size, a schedule spread over the run). Changing data.source,
 * optimizer.name or schedule.kind with loom_train_settings_set_field forgets
 * the knobs the new choice does not have; validation refuses a set knob that
 * does not apply, naming it.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "error.h"
#include "export.h"
#include "net.h"
#include "schedule.h"
#include "train.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_SETTINGS_FORMAT_VERSION 1
#define LOOM_SETTINGS_NAME_MAX 32
/* Settings files are small; anything larger is refused before reading. */
#define LOOM_SETTINGS_MAX_FILE_BYTES ((size_t)1 << 20)

typedef struct loom_data_settings {
  char source[LOOM_SETTINGS_NAME_MAX]; /* "spiral","xor","circles","clusters","sine","copy","digits","csv" */
  int64_t samples;       /* generators: total samples; 0 = loom train's default (spiral 200 per arm, else 400) */
  double noise;          /* generators: NaN = the default of the generator */
  int64_t classes;       /* spiral arms / cluster centres; 0 = fit the network's output (at least 2) */
  double factor;         /* circles: inner radius in (0, 1); NaN = 0.5 */
  int64_t length;        /* copy: sequence length; 0 = 4 */
  int64_t symbols;       /* copy: alphabet size; 0 = 6 */
  double test_fraction;  /* held out for testing, in (0, 1); 0.2 */
  uint64_t seed;         /* generation and the train/test split */
  char *csv_path;        /* "csv" only; relative paths resolve against base_dir */
  loom_csv_options csv;  /* label_name and features point into the owned copies below */
  char *csv_label_name;  /* owned; NULL = csv.label_index */
  int64_t *csv_features; /* owned; NULL = every column but the target */
  int64_t n_csv_features;
  loom_norm_kind normalize; /* fitted on the train split, applied to both */
  /* Where a relative csv_path is found: the directory of the file the
   * settings were loaded from (NULL = the current directory). Not saved and
   * not compared by loom_train_settings_equal: it says where the settings
   * came from, not what they are. */
  char *base_dir;
} loom_data_settings;

typedef struct loom_schedule_settings {
  loom_schedule_kind kind;
  int64_t step_size;   /* step: 0 = a third of the updates after the warmup */
  double gamma;        /* step: NaN = 0.1; exponential: NaN = down to 1% at the end */
  int64_t t0;          /* cosine_restarts: 0 = every update after the warmup (one cycle) */
  int64_t tmult;       /* cosine_restarts: 0 = 1 */
  double eta_min;      /* cosine_restarts: NaN = 0 */
  int64_t warmup;      /* linear warmup updates; 0 = none */
  double warmup_start; /* warmup start factor in (0, 1]; 1/3 */
} loom_schedule_settings;

typedef struct loom_train_settings {
  loom_data_settings data;
  loom_train_method method;
  char loss[LOOM_SETTINGS_NAME_MAX]; /* "auto" = loom_train_pick_loss; else a loss name */
  double label_smoothing;            /* cross-entropy losses, [0, 1) */
  char optimizer[LOOM_SETTINGS_NAME_MAX]; /* "sgd", "adam", "adamw", "rmsprop" */
  double lr;                         /* base learning rate (tween: η), >= 0 */
  /* Optimizer knobs (NaN = the optimizer's default; see loom_optim_defaults). */
  double weight_decay;               /* every optimizer */
  double momentum;                   /* sgd, rmsprop */
  double dampening;                  /* sgd */
  double beta1, beta2;               /* adam, adamw */
  double eps;                        /* adam, adamw, rmsprop */
  double alpha;                      /* rmsprop */
  bool nesterov;                     /* sgd */
  bool amsgrad;                      /* adam, adamw */
  bool centered;                     /* rmsprop */
  bool maximize;                     /* every optimizer */
  loom_schedule_settings schedule;
  int64_t batch, epochs;
  uint64_t seed;                     /* shuffling and stochastic layers */
  int threads;                       /* 0 = one per core; results do not depend on it */
  double clip_norm;                  /* backprop: global L2 clipping, 0 = off */
  int64_t ticks;                     /* systolic networks: ticks per sample (BPTT depth); 0 = one per slot */
  bool shuffle, drop_last;
  int patience;                      /* early stopping: epochs without improvement, 0 = off */
  double min_delta;
  bool restore_best;
  loom_tween_config tween;           /* knobs of target propagation */
} loom_train_settings;

/* loom train's defaults: spiral, backprop, loss auto, adam at 1e-3 constant,
 * batch 32, 10 epochs, seeds 1, test fraction 0.2. */
LOOM_API loom_train_settings *loom_train_settings_new(void);
LOOM_API loom_train_settings *loom_train_settings_copy(const loom_train_settings *s);
LOOM_API void loom_train_settings_free(loom_train_settings *s);
/* Field by field (NaN equals NaN: both unset); base_dir is not compared. */
LOOM_API bool loom_train_settings_equal(const loom_train_settings *a, const loom_train_settings *b);
/* Every field's range and the combinations (a knob the optimizer, schedule
 * or data source does not have, a CSV source without a path, an optimizer
 * configuration torch refuses), naming the field: "optimizer.lr: ...". */
LOOM_API int loom_train_settings_validate(const loom_train_settings *s, loom_error *err);

/*
 * Sets one field from text, as the UI and the CLI flags do: the names are
 * the JSON paths without "$." ("optimizer.lr", "data.noise",
 * "schedule.kind", "tween.threshold", ...) plus the short forms "lr",
 * "optimizer", "schedule", "warmup", "batch", "epochs", "method", "loss",
 * "seed" and "data" (= data.source). Knobs with a "not set" state take
 * "default" to unset them. An invalid value is refused with the reason and
 * the field's name; s is unchanged on error.
 */
LOOM_API int loom_train_settings_set_field(loom_train_settings *s, const char *field, const char *value,
                                           loom_error *err);
/* The field's value as set_field takes it ("default" for an unset knob);
 * writes at most `size` bytes. Errors name an unknown field. */
LOOM_API int loom_train_settings_get_field(const loom_train_settings *s, const char *field, char *buf, size_t size,
                                           loom_error *err);

/*
 * The train and test sets exactly as `loom train --data NAME` makes them for
 * the same flags: generated (or read) with data.seed, reshaped to the
 * network's input where the sizes agree, split with test_fraction and
 * data.seed, normalised when asked. `net` must have been inferred.
 * datasets_dir: the directory holding optdigits-8x8.csv.gz (digits only).
 */
LOOM_API int loom_train_settings_make_data(const loom_train_settings *s, const loom_net *net,
                                           const char *datasets_dir, loom_dataset **train, loom_dataset **test,
                                           loom_error *err);
/*
 * The trainer configuration for `net` on `train`: the loss (picked unless
 * named), the optimizer with its knobs, the schedule resolved over
 * epochs × batches of `train`, and the rest. The result passes
 * loom_train_config_validate.
 */
LOOM_API int loom_train_settings_make_config(const loom_train_settings *s, const loom_net *net,
                                             const loom_dataset *train, loom_train_config *out, loom_error *err);
/* The optimizer's configuration: loom_optim_defaults of optimizer with the
 * knobs that are set put over it (not validated). */
LOOM_API loom_optim_config loom_train_settings_optim_config(const loom_train_settings *s);
/* The schedule for a run of `total` updates at base rate lr: knobs not set
 * are spread over the updates after the warmup. Errors name the field. */
LOOM_API int loom_schedule_settings_resolve(const loom_schedule_settings *spec, double lr, int64_t total,
                                            loom_schedule *out, loom_error *err);

/*
 * The settings file (engine/io, docs/file-format.md): a JSON object with
 * "format": "loom-train-settings" and "version". Strict: an unknown field is
 * an error naming its JSON path; a field absent from the file gets its
 * default (so a file written before a field existed still reads).
 */
LOOM_API char *loom_train_settings_to_json(const loom_train_settings *s, size_t *len, loom_error *err);
LOOM_API int loom_train_settings_from_json(const char *json, size_t len, const char *source_name,
                                           loom_train_settings **out, loom_error *err);
/* Atomic (temporary file, fsync, rename). */
LOOM_API int loom_train_settings_save(const loom_train_settings *s, const char *path, loom_error *err);
/* Sets data.base_dir to the file's directory. */
LOOM_API int loom_train_settings_load(const char *path, loom_train_settings **out, loom_error *err);

/*
 * The fields, for a form built from the table (the workbench's training
 * settings): set_field's name, a label for people (translated), the kind of
 * editor it needs and its choices or range. Index 0 .. n_fields-1, in the
 * order of the file.
 */
typedef enum loom_setting_kind {
  LOOM_SETTING_NUMBER,  /* a double */
  LOOM_SETTING_INTEGER, /* a whole number in [min, max] */
  LOOM_SETTING_BOOL,    /* "true" / "false" */
  LOOM_SETTING_CHOICE,  /* one of choices[] */
  LOOM_SETTING_TEXT,    /* a path, a character, a list of columns */
} loom_setting_kind;

typedef struct loom_setting_info {
  const char *name;           /* "optimizer.lr" */
  const char *label;          /* "Learning rate", translated */
  loom_setting_kind kind;
  const char *const *choices; /* CHOICE: NULL-terminated names as set_field takes them */
  double min, max;            /* NUMBER, INTEGER: the range */
  bool min_open, max_open;    /* the bound itself is excluded */
  bool has_default;           /* the knob can be unset with "default" (its default depends on the rest) */
} loom_setting_info;

LOOM_API int loom_train_settings_n_fields(void);
/* false for an index out of range. */
LOOM_API bool loom_train_settings_field_info(int index, loom_setting_info *out);
/* Whether the field means anything with the rest of @s: a knob of another
 * optimizer, schedule or data source does not, and target propagation's
 * knobs only with method "tween". Unknown names: false. */
LOOM_API bool loom_train_settings_field_applies(const loom_train_settings *s, const char *name);

/* The settings a built-in example opens with (loom_example_build): a data
 * set that fits it and hyperparameters that make it learn visibly within
 * seconds, so Play is the only click. */
LOOM_API int loom_example_settings(const char *example_name, loom_train_settings **out, loom_error *err);

#ifdef __cplusplus
}
#endif
