/*
 * bench-sgemm: the float32 products of bench-layers alone (bench-products.c),
 * loom_sgemm against single-threaded OpenBLAS on the same shapes.
 *
 * Usage: bench-sgemm [--runs R] [--cpu-time]   (--threads is ignored: it
 * always runs one thread, and two for the 2-thread/1-thread column)
 * --cpu-time times in the thread's CPU time, which other work on a shared
 * machine disturbs less; the 2-thread column is then left out.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "bench-products.h"
#include "bench-util.h"
#include "kernels/cpu.h"

int main(int argc, char **argv) {
  bench_blas_one_thread(argv);
  int threads, runs;
  bool cpu_time = false;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--cpu-time") == 0) {
      cpu_time = true;
      memmove(argv + i, argv + i + 1, (size_t)(argc - i) * sizeof *argv);
      argc--;
      i--;
    }
  if (!bench_parse_args(argc, argv, 64, &threads, &runs)) return 2;
  bench_use_thread_cpu_time(cpu_time);
  loom_pool *pool1 = loom_pool_new(1, NULL), *pool2 = loom_pool_new(2, NULL);
  if (!pool1 || !pool2) return 1;
  char *loadavg = NULL;
  if (g_file_get_contents("/proc/loadavg", &loadavg, NULL, NULL))
    printf("load average before the run: %.*s\n", (int)strcspn(loadavg, " "), loadavg);
  g_free(loadavg);
  printf("bench-sgemm: kernel level %s, median of %d runs%s\n", loom_kernels_get()->name, runs,
         cpu_time ? ", thread CPU time" : "");
  bench_products(pool1, cpu_time ? NULL : pool2, runs);
  loom_pool_free(pool1);
  loom_pool_free(pool2);
  return 0;
}
