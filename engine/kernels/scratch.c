/* Per-thread scratch buffers: see scratch.h. */
#include "kernels/scratch.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

static pthread_key_t scratch_keys[LOOM_SCRATCH_SLOTS];
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static bool scratch_ok;

typedef struct {
  size_t cap;
  _Alignas(64) unsigned char data[];
} scratch_buf;

static void scratch_keys_make(void) {
  scratch_ok = true;
  for (int i = 0; i < LOOM_SCRATCH_SLOTS; i++)
    scratch_ok = scratch_ok && pthread_key_create(&scratch_keys[i], free) == 0;
}

void *loom_scratch(loom_scratch_slot slot, size_t n) {
  pthread_once(&scratch_once, scratch_keys_make);
  if (!scratch_ok || (int)slot < 0 || slot >= LOOM_SCRATCH_SLOTS || n > SIZE_MAX - sizeof(scratch_buf) - 64)
    return NULL;
  scratch_buf *s = pthread_getspecific(scratch_keys[slot]);
  if (s && s->cap >= n) return s->data;
  scratch_buf *t = aligned_alloc(64, (sizeof *t + n + 63) / 64 * 64);
  if (!t || pthread_setspecific(scratch_keys[slot], t) != 0) {
    free(t);
    return NULL;
  }
  free(s);
  t->cap = n;
  return t->data;
}
