/*
 * bench-sgemm: the float32 products of bench-layers alone (bench-products.c),
 * loom_sgemm against single-threaded OpenBLAS on the same shapes.
 *
 * Usage: bench-sgemm [--runs R]   (--threads is ignored: it always runs one
 * thread, and two for the 2-thread/1-thread column)
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "bench-products.h"
#include "bench-util.h"
#include "kernels/cpu.h"

int main(int argc, char **argv) {
  int threads, runs;
  if (!bench_parse_args(argc, argv, 64, &threads, &runs)) return 2;
  loom_pool *pool1 = loom_pool_new(1, NULL), *pool2 = loom_pool_new(2, NULL);
  if (!pool1 || !pool2) return 1;
  char *loadavg = NULL;
  if (g_file_get_contents("/proc/loadavg", &loadavg, NULL, NULL))
    printf("load average before the run: %.*s\n", (int)strcspn(loadavg, " "), loadavg);
  g_free(loadavg);
  printf("bench-sgemm: kernel level %s, median of %d runs\n", loom_kernels_get()->name, runs);
  bench_products(pool1, pool2, runs);
  loom_pool_free(pool1);
  loom_pool_free(pool2);
  return 0;
}
