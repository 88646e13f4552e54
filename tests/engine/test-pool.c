#include <glib.h>
#include <stdatomic.h>
#include <string.h>

#include "loom/loom.h"

typedef struct {
  atomic_int *hits;
  int64_t grain, n;
  atomic_int bad_ranges;
} cover_job;

static void count_range(void *arg, int64_t begin, int64_t end) {
  cover_job *j = arg;
  /* Ranges are [k·grain, min((k+1)·grain, n)). */
  if (begin % j->grain != 0 || end - begin > j->grain || end <= begin || (end != j->n && end - begin != j->grain))
    atomic_fetch_add(&j->bad_ranges, 1);
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&j->hits[i], 1);
}

static void test_cover(void) {
  static const int threads[] = {1, 2, 7};
  static const int64_t sizes[] = {1, 2, 3, 7, 64, 100, 1000, 4097};
  static const int64_t grains[] = {1, 2, 3, 16, 100, 5000};
  for (size_t t = 0; t < G_N_ELEMENTS(threads); t++) {
    loom_error err = {0};
    loom_pool *pool = loom_pool_new(threads[t], &err);
    g_assert_nonnull(pool);
    g_assert_cmpint(loom_pool_size(pool), ==, threads[t]);
    for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++)
      for (size_t g = 0; g < G_N_ELEMENTS(grains); g++) {
        cover_job j = {.grain = grains[g], .n = sizes[s]};
        j.hits = g_new0(atomic_int, sizes[s]);
        loom_pool_for(pool, sizes[s], grains[g], count_range, &j);
        for (int64_t i = 0; i < sizes[s]; i++)
          if (atomic_load(&j.hits[i]) != 1)
            g_error("threads %d n %lld grain %lld: index %lld run %d times", threads[t], (long long)sizes[s],
                    (long long)grains[g], (long long)i, atomic_load(&j.hits[i]));
        g_assert_cmpint(atomic_load(&j.bad_ranges), ==, 0);
        g_free(j.hits);
      }
    /* n <= 0 runs nothing; grain < 1 counts as 1. */
    cover_job none = {.grain = 1, .n = 0, .hits = NULL};
    loom_pool_for(pool, 0, 4, count_range, &none);
    cover_job one = {.grain = 1, .n = 5};
    one.hits = g_new0(atomic_int, 5);
    loom_pool_for(pool, 5, 0, count_range, &one);
    for (int i = 0; i < 5; i++) g_assert_cmpint(atomic_load(&one.hits[i]), ==, 1);
    g_free(one.hits);
    loom_pool_free(pool);
  }
}

typedef struct {
  loom_pool *pool;
  atomic_int *hits; /* outer × inner */
  int64_t inner;
} nested_job;

typedef struct {
  nested_job *outer;
  int64_t row;
} inner_job;

static void inner_range(void *arg, int64_t begin, int64_t end) {
  inner_job *j = arg;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&j->outer->hits[j->row * j->outer->inner + i], 1);
}

static void outer_range(void *arg, int64_t begin, int64_t end) {
  nested_job *j = arg;
  for (int64_t r = begin; r < end; r++) {
    inner_job ij = {j, r};
    loom_pool_for(j->pool, j->inner, 3, inner_range, &ij); /* runs inline inside a pool job */
  }
}

static void test_nested(void) {
  static const int threads[] = {1, 2, 7};
  for (size_t t = 0; t < G_N_ELEMENTS(threads); t++) {
    loom_pool *pool = loom_pool_new(threads[t], NULL);
    nested_job j = {.pool = pool, .inner = 37};
    j.hits = g_new0(atomic_int, 23 * 37);
    loom_pool_for(pool, 23, 2, outer_range, &j);
    for (int i = 0; i < 23 * 37; i++) g_assert_cmpint(atomic_load(&j.hits[i]), ==, 1);
    g_free(j.hits);
    loom_pool_free(pool);
  }
  /* A NULL pool runs inline. */
  cover_job c = {.grain = 4, .n = 10};
  c.hits = g_new0(atomic_int, 10);
  loom_pool_for(NULL, 10, 4, count_range, &c);
  for (int i = 0; i < 10; i++) g_assert_cmpint(atomic_load(&c.hits[i]), ==, 1);
  g_free(c.hits);
  g_assert_cmpint(loom_pool_size(NULL), ==, 1);
}


/* Jobs back to back (a worker still spinning picks the next one up) and
 * after pauses shorter and longer than the pool's spin (pool.c: SPIN_NS,
 * 20 µs), so that both the spin and the sleep are taken: every chunk runs
 * once and has finished when loom_pool_for returns, although the chunks are
 * slow enough that workers are mid-chunk when the caller runs out of work. */
typedef struct {
  atomic_int *done;
} slow_job;

static void slow_range(void *arg, int64_t begin, int64_t end) {
  slow_job *j = arg;
  for (int64_t i = begin; i < end; i++) {
    gint64 until = g_get_monotonic_time() + 20 + i % 3 * 10;
    while (g_get_monotonic_time() < until) {
    }
    atomic_fetch_add(&j->done[i], 1);
  }
}

static void test_wake(void) {
  static const int threads[] = {2, 3};
  static const gulong pauses_us[] = {0, 5, 50, 2000};
  for (size_t t = 0; t < G_N_ELEMENTS(threads); t++) {
    loom_pool *pool = loom_pool_new(threads[t], NULL);
    g_assert_nonnull(pool);
    for (int round = 0; round < 40; round++) {
      gulong pause = pauses_us[round % G_N_ELEMENTS(pauses_us)];
      if (pause > 0) g_usleep(pause);
      int64_t n = 8 + round % 5;
      slow_job j = {.done = g_new0(atomic_int, n)};
      loom_pool_for(pool, n, 1, slow_range, &j);
      for (int64_t i = 0; i < n; i++)
        if (atomic_load(&j.done[i]) != 1)
          g_error("threads %d round %d: chunk %lld finished %d times when the job returned", threads[t], round,
                  (long long)i, atomic_load(&j.done[i]));
      g_free(j.done);
    }
    loom_pool_free(pool);
  }
}

/* Each thread starts on a share of its own (pool.c); a thread held up in
 * its share's first chunk must not hold up the rest of that share. Here the
 * first chunk of the last thread's share (4T chunks: it starts at 4(T − 1))
 * waits until every other chunk has finished, which only others taking the
 * share's remaining chunks from its back can bring about. */
typedef struct {
  atomic_int *done;
  int64_t n, held;
  atomic_bool gave_up;
} held_job;

static void held_range(void *arg, int64_t begin, int64_t end) {
  held_job *j = arg;
  for (int64_t i = begin; i < end; i++) {
    if (i == j->held) {
      gint64 until = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
      for (;;) {
        int64_t finished = 0;
        for (int64_t c = 0; c < j->n; c++) finished += atomic_load(&j->done[c]);
        if (finished == j->n - 1) break;
        if (g_get_monotonic_time() > until) {
          atomic_store(&j->gave_up, true);
          break;
        }
        g_usleep(50);
      }
    }
    atomic_fetch_add(&j->done[i], 1);
  }
}

static void test_held_up_share(void) {
  static const int threads[] = {2, 3, 7};
  for (size_t t = 0; t < G_N_ELEMENTS(threads); t++) {
    loom_pool *pool = loom_pool_new(threads[t], NULL);
    g_assert_nonnull(pool);
    for (int round = 0; round < 5; round++) {
      held_job j = {.n = 4 * threads[t], .held = 4 * (threads[t] - 1)};
      j.done = g_new0(atomic_int, j.n);
      loom_pool_for(pool, j.n, 1, held_range, &j);
      if (atomic_load(&j.gave_up))
        g_error("threads %d: the chunks after a held-up one in its thread's share were not taken by others in 10 s",
                threads[t]);
      for (int64_t i = 0; i < j.n; i++) g_assert_cmpint(atomic_load(&j.done[i]), ==, 1);
      g_free(j.done);
    }
    loom_pool_free(pool);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/core/pool/cover", test_cover);
  g_test_add_func("/core/pool/nested", test_nested);
  g_test_add_func("/core/pool/wake", test_wake);
  g_test_add_func("/core/pool/held-up-share", test_held_up_share);
  return g_test_run();
}
