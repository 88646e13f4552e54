#include "loom/shape.h"

#include <stdio.h>
#include <string.h>

LOOM_API loom_shape loom_shape_make(int rank, const int64_t *dims) {
  loom_shape s = {0};
  if (rank < 0 || rank > LOOM_MAX_DIMS) return s;
  s.rank = rank;
  for (int i = 0; i < rank; i++) s.d[i] = dims[i];
  return s;
}

LOOM_API loom_shape loom_shape_1d(int64_t n) {
  loom_shape s = {.rank = 1, .d = {n}};
  return s;
}

LOOM_API int64_t loom_shape_numel(const loom_shape *s) {
  if (s->rank <= 0) return 0;
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->d[i];
  return n;
}

LOOM_API int loom_shape_equal(const loom_shape *a, const loom_shape *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->d[i] != b->d[i]) return 0;
  return 1;
}

LOOM_API char *loom_shape_format(const loom_shape *s, char *buf, size_t size) {
  if (size == 0) return buf;
  if (s->rank <= 0) {
    snprintf(buf, size, "[?]");
    return buf;
  }
  size_t n = 0;
  buf[0] = '\0';
  n += (size_t)snprintf(buf + n, size - n, "[");
  for (int i = 0; i < s->rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, i ? "×%lld" : "%lld", (long long)s->d[i]);
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}
