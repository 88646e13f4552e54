#include "bench-util.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static clockid_t bench_clock = CLOCK_MONOTONIC;

void bench_use_thread_cpu_time(bool on) { bench_clock = on ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC; }

double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(bench_clock, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], bench_cmp_double);
  return v[n / 2];
}

bool bench_take_flag(int *argc, char **argv, const char *flag) {
  bool found = false;
  for (int i = 1; i < *argc; i++)
    if (strcmp(argv[i], flag) == 0) {
      found = true;
      memmove(argv + i, argv + i + 1, (size_t)(*argc - i) * sizeof *argv);
      (*argc)--;
      i--;
    }
  return found;
}

bool bench_parse_args(int argc, char **argv, int max_runs, int *threads, int *runs) {
  *threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  *runs = 7;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      *threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      *runs = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--threads N] [--runs R]\n", argv[0]);
      return false;
    }
  }
  if (*threads < 1) *threads = 1;
  if (*runs < 1 || *runs > max_runs) *runs = 7;
  return true;
}

void bench_run_torch(bench_torch *t, const char *script, int threads, int runs,
                     bool (*parse)(const char *line, void *data), void *data) {
  memset(t, 0, sizeof *t);
  if (access("/usr/bin/python3", X_OK) != 0) {
    snprintf(t->note, sizeof t->note, "/usr/bin/python3 not found");
    return;
  }
  char *path = g_build_filename(LOOM_SOURCE_DIR, "tests", "bench", script, NULL);
  /* The script times in its thread's CPU time too when the benchmark does.
   * torch.set_num_threads does not reach the BLAS: Debian's torch calls the
   * system's libblas (OpenBLAS, threaded), which started a thread per core
   * for torch's "one thread" dense layers (process CPU time twice the
   * wall time on the 2-core machine), so the BLAS and OpenMP get the same
   * count through their environment, read when the libraries load. */
  char *cmd = g_strdup_printf("OPENBLAS_NUM_THREADS=%d OMP_NUM_THREADS=%d /usr/bin/python3 '%s' %d %d%s 2>&1", threads,
                              threads, path, threads, runs, bench_clock == CLOCK_THREAD_CPUTIME_ID ? " cpu" : "");
  FILE *p = popen(cmd, "r");
  char line[512];
  while (p && fgets(line, sizeof line, p)) {
    if (sscanf(line, "torch %63s", t->version) == 1) {
      t->available = true;
    } else if (!parse(line, data) && !t->note[0] && strstr(line, "Error")) {
      g_strlcpy(t->note, g_strchomp(line), sizeof t->note); /* e.g. ModuleNotFoundError: No module named 'torch' */
    }
  }
  int status = p ? pclose(p) : -1;
  if (!t->available && !t->note[0]) snprintf(t->note, sizeof t->note, "torch did not run (status %d)", status);
  g_free(cmd);
  g_free(path);
}

void bench_blas_one_thread(char **argv) {
  if (g_getenv("OPENBLAS_NUM_THREADS")) return;
  g_setenv("OPENBLAS_NUM_THREADS", "1", TRUE);
  fflush(stdout);
  execv("/proc/self/exe", argv);
  fprintf(stderr, "%s: could not run again with OPENBLAS_NUM_THREADS=1; OpenBLAS's threads stay\n", argv[0]);
}
