/* Support code the benchmarks share: the clock, medians, the command line
 * and the PyTorch column (a script under tests/bench run by /usr/bin/python3). */
#pragma once

#include <stdbool.h>

/* Seconds on the monotonic clock. */
double bench_now_s(void);

/* From now on bench_now_s() reads the calling thread's CPU time instead:
 * on a shared machine the time the thread waited for a core then does not
 * count (caches disturbed by the other work still do). Single-threaded
 * benchmarks only. */
void bench_use_thread_cpu_time(bool on);

/* OpenBLAS (Debian's pthread build) starts its worker threads when the
 * library loads, and with them alive loom's 2-thread products ran at 1.2-1.6
 * times their 1-thread speed between OpenBLAS calls pinned to one thread,
 * against 1.75-1.95 without them. Call first in main: unless
 * OPENBLAS_NUM_THREADS is set, sets it to 1 and executes the program again
 * (if that fails, it goes on as it is). */
void bench_blas_one_thread(char **argv);

/* qsort comparator for doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);

/* Sorts v (n values) and returns v[n / 2]. */
double bench_median(double *v, int n);

/* Removes every `flag` from argv (argv[*argc] stays NULL); true if there was one. */
bool bench_take_flag(int *argc, char **argv, const char *flag);

/* Parses [--threads N] [--runs R]: N defaults to the online processors (at
 * least 1), R to 7 (and is 7 outside 1..max_runs). Prints the usage and
 * returns false on anything else. */
bool bench_parse_args(int argc, char **argv, int max_runs, int *threads, int *runs);

typedef struct bench_torch {
  bool available;
  char version[64];
  char note[256]; /* why there are no torch figures */
} bench_torch;

/* Runs tests/bench/`script` with arguments `threads` `runs` (and "cpu" while
 * bench_now_s() reads thread CPU time: the script then times the same way) and reads its
 * output: "torch VERSION" makes it available; every other line goes to
 * parse(line, data), and the first one it does not take that contains
 * "Error" becomes the note. */
void bench_run_torch(bench_torch *t, const char *script, int threads, int runs,
                     bool (*parse)(const char *line, void *data), void *data);
