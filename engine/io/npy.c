/*
 * NumPy .npy, format versions 1.0-3.0. Only what the CLI and tests need:
 * little-endian numeric arrays in C order, read as float32.
 */
#include "loom/npy.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "loom/file.h"

#define NPY_MAX_BYTES ((size_t)8 << 30)

LOOM_API int64_t loom_npy_numel(const loom_npy *a) {
  int64_t n = 1;
  for (int i = 0; i < a->ndim; i++) n *= a->shape[i];
  return n;
}

LOOM_API void loom_npy_clear(loom_npy *a) {
  free(a->data);
  memset(a, 0, sizeof *a);
}

/* Finds 'key': in the header dict and returns a pointer just after the colon. */
static const char *dict_value(const char *hdr, const char *key) {
  char pat[32];
  snprintf(pat, sizeof pat, "'%s'", key);
  const char *p = strstr(hdr, pat);
  if (!p) return NULL;
  p = strchr(p + strlen(pat), ':');
  if (!p) return NULL;
  p++;
  while (*p == ' ') p++;
  return p;
}

static uint32_t read_le(const unsigned char *p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

LOOM_API int loom_npy_read(const char *path, loom_npy *out, loom_error *err) {
  memset(out, 0, sizeof *out);
  char *buf;
  size_t len;
  int rc = loom_file_read_all(path, NPY_MAX_BYTES, &buf, &len, err);
  if (rc) return rc;
  const unsigned char *u = (const unsigned char *)buf;
  if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) {
    free(buf);
    return loom_error_set(err, LOOM_ERR_FORMAT, _("%s: not a .npy file (bad magic)"), path);
  }
  int major = u[6];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = read_le(u + 8, 2);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) {
      free(buf);
      return loom_error_set(err, LOOM_ERR_FORMAT, _("%s: truncated .npy header"), path);
    }
    hlen = read_le(u + 8, 4);
    hstart = 12;
  } else {
    free(buf);
    return loom_error_set(err, LOOM_ERR_FORMAT, _("%s: unsupported .npy version %d"), path, major);
  }
  if (hlen > len - hstart) {
    free(buf);
    return loom_error_set(err, LOOM_ERR_FORMAT, _("%s: truncated .npy header"), path);
  }
  char *hdr = malloc(hlen + 1);
  if (!hdr) {
    free(buf);
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), path);
  }
  memcpy(hdr, buf + hstart, hlen);
  hdr[hlen] = '\0';

  const char *descr = dict_value(hdr, "descr");
  const char *fortran = dict_value(hdr, "fortran_order");
  const char *shape = dict_value(hdr, "shape");
  int elem = 0;
  char kind = 0;
  if (!descr || !fortran || !shape) {
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: .npy header lacks descr, fortran_order or shape"), path);
    goto fail;
  }
  if (strncmp(descr, "'<f4'", 5) == 0) kind = 'f', elem = 4;
  else if (strncmp(descr, "'<f8'", 5) == 0) kind = 'd', elem = 8;
  else if (strncmp(descr, "'<i4'", 5) == 0) kind = 'i', elem = 4;
  else if (strncmp(descr, "'<i8'", 5) == 0) kind = 'l', elem = 8;
  else {
    /* descr may be the header's last character (found by fuzzing): search
     * only what is there. */
    size_t avail = strlen(descr);
    const char *end = avail > 1 ? memchr(descr + 1, '\'', avail - 1) : NULL;
    int n = end ? (int)(end - descr + 1) : (int)(avail < 8 ? avail : 8);
    rc = loom_error_set(err, LOOM_ERR_FORMAT,
                        _("%s: array type %.*s is not supported (expected little-endian float32, float64, int32 or int64)"),
                        path, n, descr);
    goto fail;
  }
  if (strncmp(fortran, "False", 5) != 0) {
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: Fortran-order arrays are not supported; save in C order"), path);
    goto fail;
  }
  if (*shape != '(') {
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: malformed shape in .npy header"), path);
    goto fail;
  }
  const char *p = shape + 1;
  int64_t numel = 1;
  while (*p && *p != ')') {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    char *endp;
    long long d = strtoll(p, &endp, 10);
    if (endp == p || d < 0) {
      rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: malformed shape in .npy header"), path);
      goto fail;
    }
    if (out->ndim == LOOM_NPY_MAX_DIMS) {
      rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: more than %d dimensions"), path, LOOM_NPY_MAX_DIMS);
      goto fail;
    }
    if (d > 0 && numel > INT64_MAX / d) {
      rc = loom_error_set(err, LOOM_ERR_NOMEM, _("%s: array shape overflows"), path);
      goto fail;
    }
    out->shape[out->ndim++] = d;
    numel *= d;
    p = endp;
  }
  if (*p != ')') {
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: malformed shape in .npy header"), path);
    goto fail;
  }
  size_t data_off = hstart + hlen;
  size_t avail = len - data_off;
  if ((uint64_t)numel > avail / (size_t)elem || (size_t)numel * (size_t)elem != avail) {
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: the shape needs %lld values but the file holds %zu bytes of data"),
                        path, (long long)numel, avail);
    goto fail;
  }
  out->data = malloc(numel > 0 ? (size_t)numel * sizeof(float) : 1);
  if (!out->data) {
    rc = loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), path);
    goto fail;
  }
  const unsigned char *src = u + data_off;
  for (int64_t i = 0; i < numel; i++) {
    const unsigned char *e = src + i * elem;
    switch (kind) {
    case 'f': memcpy(&out->data[i], e, 4); break;
    case 'd': { double v; memcpy(&v, e, 8); out->data[i] = (float)v; break; }
    case 'i': { int32_t v; memcpy(&v, e, 4); out->data[i] = (float)v; break; }
    case 'l': { int64_t v; memcpy(&v, e, 8); out->data[i] = (float)v; break; }
    }
  }
  free(hdr);
  free(buf);
  return LOOM_OK;
fail:
  free(hdr);
  free(buf);
  out->ndim = 0;
  return rc;
}

LOOM_API int loom_npy_write(const char *path, const loom_npy *a, loom_error *err) {
  if (a->ndim < 0 || a->ndim > LOOM_NPY_MAX_DIMS)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: %d dimensions is out of range"), path, a->ndim);
  int64_t numel = 1;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] < 0 || (a->shape[i] > 0 && numel > INT64_MAX / 4 / a->shape[i]))
      return loom_error_set(err, LOOM_ERR_INVALID, _("%s: dimension %d of the array (%lld) is out of range"), path, i,
                            (long long)a->shape[i]);
    numel *= a->shape[i];
  }
  if (numel > 0 && !a->data) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: the array has no data"), path);
  char dict[512];
  int n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
  for (int i = 0; i < a->ndim; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, a->ndim == 1 ? "%lld,), }" : (i + 1 < a->ndim ? "%lld, " : "%lld), }"),
                  (long long)a->shape[i]);
  if (a->ndim == 0) n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
  /* Pad with spaces so the data starts at a multiple of 64, newline last. */
  size_t total = 10 + (size_t)n + 1;
  size_t pad = (64 - total % 64) % 64;
  size_t hlen = (size_t)n + pad + 1;
  if ((uint64_t)numel > (SIZE_MAX - 10 - hlen) / 4)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: the array is too large"), path);
  size_t bytes = 10 + hlen + (size_t)numel * 4;
  unsigned char *buf = malloc(bytes);
  if (!buf) return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), path);
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (unsigned char)(hlen & 0xff);
  buf[9] = (unsigned char)(hlen >> 8);
  memcpy(buf + 10, dict, (size_t)n);
  memset(buf + 10 + n, ' ', pad);
  buf[10 + hlen - 1] = '\n';
  if (numel > 0) memcpy(buf + 10 + hlen, a->data, (size_t)numel * 4);
  int rc = loom_file_write_atomic(path, buf, bytes, err);
  free(buf);
  return rc;
}
