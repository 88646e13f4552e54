/*
 * An append-only-in-practice array for the live curves (a plot's points,
 * the training pane's steps), which grow by thousands of values a frame.
 *
 * Why not GArray: each doubling of a GArray is a realloc, and each new 4 KiB
 * page is a page fault on the UI thread at first write. On the virtual
 * machines the workbench was measured on, a fault costs 1–110 µs depending
 * on what else faults at the same time, and a snapshot's appends took up to
 * 7–18 ms that way (docs/grid-view.md). Past 2 MiB this array lives in its
 * own mapping, and grows by moving its pages into a mapping twice as large
 * (mremap) instead of copying them. The mapping keeps small pages (why:
 * loom-big-array.c, map_pages). Emptying it keeps its memory, so a second
 * run faults nothing.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint8 *data;
  gsize len;      /* elements in use */
  gsize capacity; /* elements the storage holds */
  gsize elt_size;
  gboolean mapped; /* data is a mapping of its own, not from malloc */
} LoomBigArray;

#define loom_big_array_index(a, type, i) (((type *)(void *)(a)->data)[(i)])

void loom_big_array_init(LoomBigArray *a, gsize elt_size);
/* Releases the storage; the array is empty and usable again afterwards. */
void loom_big_array_release(LoomBigArray *a);
/* Appends @n elements copied from @values; returns where they begin. */
gpointer loom_big_array_append(LoomBigArray *a, gconstpointer values, gsize n);
/* Shrinks or grows (new elements are zero) without giving memory back. */
void loom_big_array_set_size(LoomBigArray *a, gsize len);

G_END_DECLS
