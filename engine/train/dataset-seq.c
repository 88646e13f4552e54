/*
 * Sequence datasets (samples of shape [steps × features], see docs/training.md):
 * running parity of a bit string, and next-character prediction over a text.
 * (The next-value sine task is loom_gen_sine in dataset-gen.c.) Labels are
 * per step (one multi-head cross-entropy head per position), so a recurrent
 * or causal model is trained on every prefix at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "core/rng.h"
#include "loom/dataset.h"
#include "train/dataset-impl.h"

/* Stream numbers continue those of dataset-gen.c so no two generators share one. */
enum { GEN_PARITY = 7 };

#define SEQ_MAX_LENGTH 100000
#define TEXT_MAX_BYTES (16 << 20)

LOOM_API loom_dataset *loom_gen_parity(int64_t n, int64_t length, uint64_t seed, loom_error *err) {
  if (n < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("parity: the number of samples is %lld, expected at least 1"),
                          (long long)n),
           NULL;
  if (length < 1 || length > SEQ_MAX_LENGTH)
    return loom_error_set(err, LOOM_ERR_INVALID, _("parity: length is %lld, expected 1 to %d"), (long long)length,
                          SEQ_MAX_LENGTH),
           NULL;
  loom_shape in = loom_shape_make(2, (int64_t[]){length, 1});
  loom_dataset *ds = loom_dataset_new(n, &in, LOOM_TARGET_CLASS, length, 2, err);
  if (!ds) return NULL;
  loom_rng r;
  loom_rng_seed(&r, loom_rng_derive(seed, GEN_PARITY));
  for (int64_t s = 0; s < n; s++) {
    int32_t parity = 0;
    for (int64_t t = 0; t < length; t++) {
      int32_t bit = (int32_t)loom_rng_below(&r, 2);
      parity ^= bit;
      ds->inputs[s * length + t] = (float)bit;
      ds->labels[s * length + t] = parity;
    }
  }
  return ds;
}

/* The distinct bytes of the text in ascending order; index[b] maps a byte to
 * its class (-1 when absent). */
static int64_t text_vocabulary(const unsigned char *text, size_t len, int index[256], unsigned char bytes[256]) {
  bool seen[256] = {false};
  for (size_t i = 0; i < len; i++) seen[text[i]] = true;
  int64_t v = 0;
  for (int b = 0; b < 256; b++) {
    index[b] = seen[b] ? (int)v : -1;
    if (seen[b]) bytes[v++] = (unsigned char)b;
  }
  return v;
}

/* A class name people can read: the character itself, or an escape for
 * whitespace and control bytes ("\n", "\x07"). */
static void byte_name(unsigned char b, char out[8]) {
  if (b == '\n') snprintf(out, 8, "\\n");
  else if (b == '\t') snprintf(out, 8, "\\t");
  else if (b == ' ') snprintf(out, 8, "␣");
  else if (b < 0x20 || b >= 0x7f) snprintf(out, 8, "\\x%02x", b);
  else snprintf(out, 8, "%c", b);
}

LOOM_API loom_dataset *loom_dataset_from_text(const char *text, size_t len, int64_t window, int64_t stride,
                                              bool one_hot, loom_error *err) {
  if (!text) return loom_error_set(err, LOOM_ERR_INVALID, _("text: no text given")), NULL;
  if (window < 1 || window > SEQ_MAX_LENGTH)
    return loom_error_set(err, LOOM_ERR_INVALID, _("text: window is %lld, expected 1 to %d"), (long long)window,
                          SEQ_MAX_LENGTH),
           NULL;
  if (stride < 1 || stride > SEQ_MAX_LENGTH)
    return loom_error_set(err, LOOM_ERR_INVALID, _("text: stride is %lld, expected 1 to %d"), (long long)stride,
                          SEQ_MAX_LENGTH),
           NULL;
  if (len < (size_t)window + 1)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("text: %zu characters are too few for a window of %lld (at least %lld are needed)"), len,
                          (long long)window, (long long)window + 1),
           NULL;
  int index[256];
  unsigned char bytes[256];
  int64_t vocab = text_vocabulary((const unsigned char *)text, len, index, bytes);
  if (vocab < 2)
    return loom_error_set(err, LOOM_ERR_INVALID, _("text: it uses only one distinct character; at least two are needed")),
           NULL;
  int64_t n = (int64_t)(len - (size_t)window - 1) / stride + 1;
  loom_shape in = one_hot ? loom_shape_make(2, (int64_t[]){window, vocab}) : loom_shape_1d(window);
  loom_dataset *ds = loom_dataset_new(n, &in, LOOM_TARGET_CLASS, window, vocab, err);
  if (!ds) return NULL;
  const unsigned char *u = (const unsigned char *)text;
  for (int64_t s = 0; s < n; s++) {
    const unsigned char *w = u + s * stride;
    float *x = ds->inputs + s * ds->input_numel;
    for (int64_t t = 0; t < window; t++) {
      if (one_hot) x[t * vocab + index[w[t]]] = 1.0f;
      else x[t] = (float)index[w[t]];
      ds->labels[s * window + t] = index[w[t + 1]];
    }
  }
  char *names[256];
  for (int64_t c = 0; c < vocab; c++) {
    char name[8];
    byte_name(bytes[c], name);
    names[c] = name[0] ? strdup(name) : NULL;
    if (!names[c]) {
      for (int64_t k = 0; k < c; k++) free(names[k]);
      loom_dataset_free(ds);
      return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory naming the characters of a text")), NULL;
    }
  }
  int rc = dataset_copy_class_names(ds, names, err);
  for (int64_t c = 0; c < vocab; c++) free(names[c]);
  if (rc) {
    loom_dataset_free(ds);
    return NULL;
  }
  return ds;
}

LOOM_API loom_dataset *loom_dataset_load_text(const char *path, int64_t window, int64_t stride, bool one_hot,
                                              loom_error *err) {
  if (!path) return loom_error_set(err, LOOM_ERR_INVALID, _("text: no file given")), NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot open the text file"), path), NULL;
  char *buf = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot read the text file"), path), NULL;
  }
  if (size > TEXT_MAX_BYTES) {
    fclose(f);
    return loom_error_set(err, LOOM_ERR_RANGE, _("%s: the text has %ld bytes, more than the %d a text data set may have"),
                          path, size, TEXT_MAX_BYTES),
           NULL;
  }
  buf = malloc((size_t)size + 1);
  if (!buf) {
    fclose(f);
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for %ld bytes"), path, size), NULL;
  }
  size_t got = fread(buf, 1, (size_t)size, f);
  fclose(f);
  if (got != (size_t)size) {
    free(buf);
    return loom_error_set(err, LOOM_ERR_IO, _("%s: cannot read the text file"), path), NULL;
  }
  loom_dataset *ds = loom_dataset_from_text(buf, got, window, stride, one_hot, err);
  free(buf);
  if (!ds) loom_error_prefix(err, "%s", path);
  return ds;
}
