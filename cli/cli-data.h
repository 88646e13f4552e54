/* Data for `loom train` and `loom eval`: a built-in generator, the digits, or a CSV file. */
#pragma once
#include <loom/loom.h>

/* NAME (spiral, xor, circles, clusters, sine, copy, digits) or FILE.csv[.gz],
 * shaped to fit `net`'s input where a generator allows it; split with
 * test_fraction into *train and *test (seeded). Prints the error itself and
 * returns false. */
bool cli_load_data(const char *command, const char *spec, const loom_net *net, uint64_t seed, bool regression,
                   loom_dataset **train, loom_dataset **test);
/* A non-negative decimal integer; false if malformed. */
bool cli_parse_uint64(const char *text, uint64_t *out);
