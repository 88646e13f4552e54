#include "loom/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

LOOM_API int loom_error_set(loom_error *err, loom_status code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return code;
}

LOOM_API void loom_error_prefix(loom_error *err, const char *fmt, ...) {
  if (!err) return;
  char prefix[LOOM_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  /* Assemble by hand: truncation is intended, the message keeps its head. */
  char joined[LOOM_ERROR_MESSAGE_MAX];
  size_t cap = sizeof joined - 1, n = 0;
  const char *parts[] = {prefix, ": ", err->message};
  for (int i = 0; i < 3 && n < cap; i++) {
    size_t len = strlen(parts[i]);
    if (len > cap - n) len = cap - n;
    memcpy(joined + n, parts[i], len);
    n += len;
  }
  joined[n] = '\0';
  memcpy(err->message, joined, n + 1);
}

LOOM_API void loom_error_clear(loom_error *err) {
  if (!err) return;
  err->code = LOOM_OK;
  err->message[0] = '\0';
}

LOOM_API const char *loom_status_name(loom_status code) {
  switch (code) {
  case LOOM_OK: return "ok";
  case LOOM_ERR_INVALID: return "invalid";
  case LOOM_ERR_NOMEM: return "nomem";
  case LOOM_ERR_IO: return "io";
  case LOOM_ERR_FORMAT: return "format";
  case LOOM_ERR_SHAPE: return "shape";
  case LOOM_ERR_NONFINITE: return "nonfinite";
  case LOOM_ERR_RANGE: return "range";
  case LOOM_ERR_UNSUPPORTED: return "unsupported";
  case LOOM_ERR_CANCELLED: return "cancelled";
  }
  return "unknown";
}
