/*
 * A fixed pool of worker threads executing one parallel-for at a time.
 * Which thread runs a range may vary, but the ranges themselves (and so
 * every result) do not.
 *
 * Each thread starts on a share of the job of its own, the same share for
 * the same job: the caller the first 1/T of the chunks, worker i the
 * (i+1)-th. A product called again on the same matrices (every training
 * step) then finds its part of C, and of the packed panels, in the cache of
 * the core that wrote it last. With one shared counter the chunks went to
 * whichever thread asked first, so a chunk's lines moved between the cores'
 * caches from call to call, and on the 2-core development VM that made two
 * threads no faster than one on the weight gradient (docs/sgemm.md, *Each
 * thread its own part of C*). A thread that has finished its share takes
 * chunks from the back of the others', so a thread that is late or
 * preempted delays nothing.
 */
#include "loom/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/i18n.h"
#include "core/pool-internal.h"

#define LOOM_POOL_MAX_THREADS 256

/* One thread's share of the current job: units [lo, hi) in one word (lo in
 * the low 32 bits), so the owner taking from the front and a thief taking
 * from the back settle every unit with one compare-and-swap. A cache line
 * each: the owner's updates must not slow the others' reads. */
typedef struct {
  _Alignas(64) atomic_ullong range;
} share;

/* Units of the packed ranges: a unit is `unit_chunks` consecutive chunks,
 * so that any number of chunks fits in 32 bits. */
#define MAX_UNITS ((int64_t)1 << 31)

struct loom_pool {
  int n_threads; /* including the caller */
  pthread_t *threads;
  pthread_mutex_t mutex;
  pthread_cond_t work_cv;
  pthread_cond_t done_cv;
  pthread_mutex_t run_mutex; /* one parallel-for at a time per pool */

  /* The job being run. */
  uint64_t generation;
  loom_range_fn fn;
  void *arg;
  int64_t n, grain, n_chunks, unit_chunks;
  share *shares; /* n_threads: the caller's first, then worker i's at i + 1 */
  atomic_int next_worker_share;
  int busy_workers;
  bool active; /* workers may join the current job only while this is set */
  bool quit;
  /* Mirrors of generation and busy_workers that a spinning thread may read
   * without the mutex; the decisions are still taken under it. */
  atomic_ullong generation_seen;
  atomic_int busy_seen;
};

/* How long a thread spins before it sleeps: a worker after its job, waiting
 * for the next one, and the caller waiting for the workers to finish. Waking
 * a sleeping thread through the condition variable took tens of
 * microseconds on the virtual machines this was measured on, a large share
 * of a product of 0.1–1 ms (the 784-256-10 MLP's); a training step runs its
 * products back to back, with short serial work between them. */
#define SPIN_NS 20000

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Spins until done(p, x) or SPIN_NS pass; the caller then checks again under
 * the mutex, so giving up early only costs a sleep. */
static void spin_until(const loom_pool *p, bool (*done)(const loom_pool *, uint64_t), uint64_t x) {
  int64_t t0 = now_ns();
  for (int i = 1;; i++) {
    if (done(p, x)) return;
    cpu_relax();
    if (i % 64 == 0 && now_ns() - t0 > SPIN_NS) return;
  }
}

static bool new_job(const loom_pool *p, uint64_t seen) {
  return atomic_load_explicit(&p->generation_seen, memory_order_acquire) != seen;
}

static bool workers_done(const loom_pool *p, uint64_t unused) {
  (void)unused;
  return atomic_load_explicit(&p->busy_seen, memory_order_acquire) == 0;
}

static _Thread_local int in_pool_job;
/* The share this thread runs in the current job (loom_pool_thread_index). */
static _Thread_local int thread_share = -1;

int loom_pool_thread_index(void) { return thread_share; }

static bool take(share *sh, bool front, int64_t *unit) {
  unsigned long long r = atomic_load_explicit(&sh->range, memory_order_relaxed);
  for (;;) {
    uint32_t lo = (uint32_t)r, hi = (uint32_t)(r >> 32);
    if (lo >= hi) return false;
    unsigned long long next = front ? ((unsigned long long)hi << 32) | (lo + 1u)
                                    : ((unsigned long long)(hi - 1u) << 32) | lo;
    if (atomic_compare_exchange_weak_explicit(&sh->range, &r, next, memory_order_acq_rel, memory_order_relaxed)) {
      *unit = front ? lo : hi - 1u;
      return true;
    }
  }
}

static void run_unit(loom_pool *p, int64_t unit) {
  int64_t c1 = (unit + 1) * p->unit_chunks < p->n_chunks ? (unit + 1) * p->unit_chunks : p->n_chunks;
  for (int64_t c = unit * p->unit_chunks; c < c1; c++) {
    int64_t begin = c * p->grain;
    int64_t end = begin + p->grain < p->n ? begin + p->grain : p->n;
    p->fn(p->arg, begin, end);
  }
}

/* The thread of share `self` runs its own share from the front, then empties
 * the others' from the back, the next thread's first. */
static void run_chunks(loom_pool *p, int self) {
  int64_t unit;
  thread_share = self;
  while (take(&p->shares[self], true, &unit)) run_unit(p, unit);
  for (int i = 1; i < p->n_threads; i++) {
    share *victim = &p->shares[(self + i) % p->n_threads];
    while (take(victim, false, &unit)) run_unit(p, unit);
  }
  thread_share = -1;
}

static void *worker_main(void *data) {
  loom_pool *p = data;
  const int self = atomic_fetch_add(&p->next_worker_share, 1);
  uint64_t seen = 0;
  in_pool_job = 1;
  pthread_mutex_lock(&p->mutex);
  for (;;) {
    if (!p->quit && p->generation == seen) {
      pthread_mutex_unlock(&p->mutex);
      spin_until(p, new_job, seen);
      pthread_mutex_lock(&p->mutex);
    }
    /* A worker that wakes after its job was retired must not touch it: the
     * caller may already be filling in the next job's fields. */
    while (!p->quit && (p->generation == seen || !p->active)) pthread_cond_wait(&p->work_cv, &p->mutex);
    if (p->quit) break;
    seen = p->generation;
    p->busy_workers++;
    atomic_store_explicit(&p->busy_seen, p->busy_workers, memory_order_release);
    pthread_mutex_unlock(&p->mutex);
    run_chunks(p, self);
    pthread_mutex_lock(&p->mutex);
    atomic_store_explicit(&p->busy_seen, --p->busy_workers, memory_order_release);
    if (p->busy_workers == 0) pthread_cond_signal(&p->done_cv);
  }
  pthread_mutex_unlock(&p->mutex);
  return NULL;
}

LOOM_API loom_pool *loom_pool_new(int n_threads, loom_error *err) {
  if (n_threads <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    n_threads = n > 0 ? (int)n : 1;
  }
  if (n_threads > LOOM_POOL_MAX_THREADS)
    n_threads = LOOM_POOL_MAX_THREADS;
  loom_pool *p = calloc(1, sizeof *p);
  if (!p) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory creating a thread pool"));
    return NULL;
  }
  p->n_threads = n_threads;
  atomic_init(&p->next_worker_share, 1);
  p->shares = aligned_alloc(_Alignof(share), (size_t)n_threads * sizeof(share));
  if (!p->shares) {
    free(p);
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory creating a thread pool"));
    return NULL;
  }
  for (int i = 0; i < n_threads; i++) atomic_init(&p->shares[i].range, 0);
  pthread_mutex_init(&p->mutex, NULL);
  pthread_mutex_init(&p->run_mutex, NULL);
  pthread_cond_init(&p->work_cv, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  if (n_threads > 1) {
    p->threads = calloc((size_t)n_threads - 1, sizeof *p->threads);
    if (!p->threads) {
      loom_pool_free(p);
      loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory creating a thread pool"));
      return NULL;
    }
    for (int i = 0; i < n_threads - 1; i++) {
      if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) {
        p->n_threads = i + 1; /* the caller plus the workers started so far */
        loom_pool_free(p);
        loom_error_set(err, LOOM_ERR_NOMEM, _("cannot start thread %d of the thread pool"), i + 1);
        return NULL;
      }
    }
  }
  return p;
}

LOOM_API void loom_pool_free(loom_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mutex);
  p->quit = true;
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->mutex);
  if (p->threads)
    for (int i = 0; i < p->n_threads - 1; i++) pthread_join(p->threads[i], NULL);
  free(p->threads);
  free(p->shares);
  pthread_mutex_destroy(&p->mutex);
  pthread_mutex_destroy(&p->run_mutex);
  pthread_cond_destroy(&p->work_cv);
  pthread_cond_destroy(&p->done_cv);
  free(p);
}

LOOM_API int loom_pool_size(const loom_pool *p) { return p ? p->n_threads : 1; }

LOOM_API void loom_pool_for(loom_pool *p, int64_t n, int64_t grain, loom_range_fn fn, void *arg) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int64_t n_chunks = (n + grain - 1) / grain;
  if (!p || p->n_threads == 1 || n_chunks == 1 || in_pool_job) {
    for (int64_t c = 0; c < n_chunks; c++) {
      int64_t begin = c * grain;
      fn(arg, begin, begin + grain < n ? begin + grain : n);
    }
    return;
  }
  pthread_mutex_lock(&p->run_mutex);
  pthread_mutex_lock(&p->mutex);
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->grain = grain;
  p->n_chunks = n_chunks;
  p->unit_chunks = (n_chunks + MAX_UNITS - 1) / MAX_UNITS;
  const int64_t units = (n_chunks + p->unit_chunks - 1) / p->unit_chunks, t = p->n_threads;
  /* share i: [⌈units·i/t⌉, ⌈units·(i + 1)/t⌉), so that with fewer units than
   * threads the caller's share is never the empty one */
  for (int i = 0; i < t; i++) {
    unsigned long long lo = (unsigned long long)((units * i + t - 1) / t),
                       hi = (unsigned long long)((units * (i + 1) + t - 1) / t);
    atomic_store_explicit(&p->shares[i].range, (hi << 32) | lo, memory_order_relaxed);
  }
  p->active = true;
  p->generation++;
  atomic_store_explicit(&p->generation_seen, p->generation, memory_order_release);
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->mutex);

  in_pool_job = 1;
  run_chunks(p, 0);
  in_pool_job = 0;

  /* Every chunk is claimed. Retire the job so no late worker joins it, then
   * wait for those that joined to finish their chunks. Joining happens under
   * the mutex while `active`, so none can still be inside it afterwards. */
  pthread_mutex_lock(&p->mutex);
  p->active = false;
  if (p->busy_workers > 0) {
    pthread_mutex_unlock(&p->mutex);
    spin_until(p, workers_done, 0);
    pthread_mutex_lock(&p->mutex);
  }
  while (p->busy_workers > 0) pthread_cond_wait(&p->done_cv, &p->mutex);
  pthread_mutex_unlock(&p->mutex);
  pthread_mutex_unlock(&p->run_mutex);
}
