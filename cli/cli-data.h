/* Data for `loom train` and `loom eval`: a built-in generator, the digits, or
 * a CSV file, made by the engine from training settings (loom/settings.h). */
#pragma once
#include <loom/loom.h>

/* --data NAME (spiral, xor, circles, clusters, sine, copy, digits) or
 * FILE.csv[.gz] (or any path with a '/') as s's data source; regression reads
 * a CSV file's target as numbers. An unknown name is an error (message in
 * err, s unchanged). */
int cli_data_source(loom_train_settings *s, const char *spec, bool regression, loom_error *err);
/* The train and test sets s describes, shaped to fit `net`; the digits are
 * looked up where this loom finds its data. Prints the error itself and
 * returns false. */
bool cli_make_data(const char *command, const loom_train_settings *s, const loom_net *net, loom_dataset **train,
                   loom_dataset **test);
/* --data SPEC with seed for generation and the split, as loom train makes it
 * without other options. Prints the error itself and returns false. */
bool cli_load_data(const char *command, const char *spec, const loom_net *net, uint64_t seed, bool regression,
                   loom_dataset **train, loom_dataset **test);
/* A non-negative decimal integer; false if malformed. */
bool cli_parse_uint64(const char *text, uint64_t *out);
