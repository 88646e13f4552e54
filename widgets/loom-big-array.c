/*
 * LoomBigArray: see loom-big-array.h for why it exists.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mremap */
#endif
#include "loom-big-array.h"

#include <string.h>
#include <sys/mman.h>

/* The transparent huge page size of x86-64 and most arm64 kernels. Below it
 * an array stays in malloc's memory: most series are small, and a mapping
 * each would waste address space and a system call per growth. */
#define HUGE_BYTES ((gsize)2 << 20)

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

/* A mapping of @bytes (a multiple of HUGE_BYTES) that starts on a huge page
 * boundary, advised for huge pages; NULL when the system refuses it. */
static guint8 *map_aligned(gsize bytes) {
  gsize span = bytes + HUGE_BYTES;
  guint8 *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  guint8 *p = (guint8 *)(((guintptr)raw + HUGE_BYTES - 1) & ~(guintptr)(HUGE_BYTES - 1));
  if (p > raw) munmap(raw, (gsize)(p - raw));
  gsize tail = (gsize)(raw + span - (p + bytes));
  if (tail > 0) munmap(p + bytes, tail);
  /* Without THP (or with it set to "never") this fails and the mapping
   * simply stays in 4 KiB pages. */
  (void)madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

static void grow(LoomBigArray *a, gsize need) {
  gsize cap = MAX(MAX(need, a->capacity * 2), (gsize)64);
  if (cap > G_MAXSIZE / a->elt_size / 2) g_error("LoomBigArray: %" G_GSIZE_FORMAT " elements of %" G_GSIZE_FORMAT " bytes are too many", need, a->elt_size);
  gsize bytes = cap * a->elt_size;
  gsize old_bytes = a->capacity * a->elt_size;
  if (bytes < HUGE_BYTES && !a->mapped) {
    a->data = g_realloc(a->data, bytes);
    a->capacity = cap;
    return;
  }
  bytes = (bytes + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
  guint8 *p = map_aligned(bytes);
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
