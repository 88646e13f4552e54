/*
 * LoomBigArray: see loom-big-array.h for why it exists.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mremap */
#endif
#include "loom-big-array.h"

#include <string.h>
#include <sys/mman.h>

/* Below this an array stays in malloc's memory: most series are small, and
 * a mapping each would waste address space and a system call per growth.
 * Mappings grow in multiples of it. */
#define MAP_BYTES ((gsize)2 << 20)

void loom_big_array_init(LoomBigArray *a, gsize elt_size) {
  g_return_if_fail(elt_size > 0);
  *a = (LoomBigArray){.elt_size = elt_size};
}

static void storage_free(guint8 *data, gsize bytes, gboolean mapped) {
  if (!data) return;
  if (mapped)
    munmap(data, bytes);
  else
    g_free(data);
}

void loom_big_array_release(LoomBigArray *a) {
  storage_free(a->data, a->capacity * a->elt_size, a->mapped);
  *a = (LoomBigArray){.elt_size = a->elt_size};
}

/* A mapping of @bytes in small pages; NULL when the system refuses it.
 *
 * Not transparent huge pages, although they cut the faults 512-fold: the
 * first write to a 2 MiB page zeroes all of it on the spot, and on the
 * development VM (whose host backs memory only when first touched) that
 * took the UI thread 35–37 ms, the worst of a training run's snapshot
 * handling; in 4 KiB pages the same run's worst was 4–5 ms, its 95th
 * percentile 1.5 ms instead of 6.2–6.9 and its total 130 ms instead of
 * 244–259 (bench-responsive, two alternated pairs). On the H100 machine the
 * two measured alike (three pairs: worst 6.1–9.5 against 5.3–7.3 ms).
 * Where THP is "always", the advice keeps these arrays out of it. */
static guint8 *map_pages(gsize bytes) {
  guint8 *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  (void)madvise(p, bytes, MADV_NOHUGEPAGE);
  return p;
}

static void grow(LoomBigArray *a, gsize need) {
  gsize cap = MAX(MAX(need, a->capacity * 2), (gsize)64);
  if (cap > G_MAXSIZE / a->elt_size / 2) g_error("LoomBigArray: %" G_GSIZE_FORMAT " elements of %" G_GSIZE_FORMAT " bytes are too many", need, a->elt_size);
  gsize bytes = cap * a->elt_size;
  gsize old_bytes = a->capacity * a->elt_size;
  if (bytes < MAP_BYTES && !a->mapped) {
    a->data = g_realloc(a->data, bytes);
    a->capacity = cap;
    return;
  }
  bytes = (bytes + MAP_BYTES - 1) & ~(MAP_BYTES - 1);
  guint8 *p = map_pages(bytes);
  if (!p) g_error("LoomBigArray: cannot map %" G_GSIZE_FORMAT " bytes", bytes);
  gboolean moved = FALSE;
#ifdef MREMAP_FIXED
  /* Moves the page tables, not the bytes: the pages already written (and
   * faulted) come along, so growing costs no copy and no new faults. */
  if (a->mapped && a->data)
    moved = mremap(a->data, old_bytes, old_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, p) != MAP_FAILED;
#endif
  if (!moved) {
    if (a->len > 0) memcpy(p, a->data, a->len * a->elt_size);
    storage_free(a->data, old_bytes, a->mapped);
  }
  a->data = p;
  a->capacity = bytes / a->elt_size;
  a->mapped = TRUE;
}

gpointer loom_big_array_append(LoomBigArray *a, gconstpointer values, gsize n) {
  if (n == 0) return a->data ? a->data + a->len * a->elt_size : NULL;
  if (n > G_MAXSIZE - a->len) g_error("LoomBigArray: length overflows");
  if (a->len + n > a->capacity) grow(a, a->len + n);
  guint8 *dst = a->data + a->len * a->elt_size;
  memcpy(dst, values, n * a->elt_size);
  a->len += n;
  return dst;
}

void loom_big_array_set_size(LoomBigArray *a, gsize len) {
  if (len > a->capacity) grow(a, len);
  if (len > a->len) memset(a->data + a->len * a->elt_size, 0, (len - a->len) * a->elt_size);
  a->len = len;
}
