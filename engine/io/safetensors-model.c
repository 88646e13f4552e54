/*
 * A whole network in one safetensors file (docs/safetensors.md): the model
 * JSON without weight data in __metadata__.loom_model, and per weight tensor
 * "slot.z.y.x.l.<path>" (the packed codes in the dtype's safetensors type)
 * plus "slot.z.y.x.l.<path>.scales" (F32) for scaled dtypes. Reading goes
 * through the model-file reader, so every check of docs/file-format.md
 * applies; the tensors are taken from the mapped file in place.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/i18n.h"
#include "io/json-write.h"
#include "io/model-format.h"
#include "io/model-write.h"
#include "io/safetensors-internal.h"
#include "loom/file.h"

typedef struct {
  char *name; /* g_strdup */
  const char *dtype;
  int rank;
  int64_t shape[2];
  const void *bytes;
  size_t nbytes;
} out_tensor;

static void out_tensor_clear(gpointer p) { g_free(((out_tensor *)p)->name); }

static void add_tensor(GArray *a, char *name, const char *dtype, int rank, int64_t d0, int64_t d1, const void *bytes,
                       size_t nbytes) {
  out_tensor t = {name, dtype, rank, {d0, d1}, bytes, nbytes};
  g_array_append_val(a, t);
}

/* The tensors of every built slot layer, in slot order. model_to_json_text has
 * morphed them, so their packed copies are current. */
static void collect_tensors(const loom_net *net, GArray *a) {
  int64_t n = loom_net_n_layers(net);
  for (int64_t i = 0; i < n; i++) {
    loom_coord c = loom_net_layer_coord(net, i);
    loom_layer *l = loom_net_layer_at(net, c);
    if (!loom_layer_is_built(l)) continue;
    for (int k = 0; k < loom_layer_n_weights(l); k++) {
      loom_weights *w = loom_layer_weights(l, k);
      char path[MODEL_WEIGHT_NAME_MAX];
      loom_layer_weights_path(l, k, path, sizeof path);
      loom_dtype d = loom_weights_dtype(w);
      const loom_dtype_traits *tr = loom_dtype_traits_get(d);
      size_t nbytes = 0;
      int64_t nscales = 0, rows = loom_weights_rows(w), cols = loom_weights_cols(w);
      const uint8_t *packed = loom_weights_packed(w, &nbytes);
      const float *scales = loom_weights_scales(w, &nscales);
      int64_t d1 = tr->bits < 8 ? (int64_t)loom_dtype_row_bytes(d, cols) : cols;
      add_tensor(a, g_strdup_printf("slot.%d.%d.%d.%d.%s", c.z, c.y, c.x, c.l, path), loom_safetensors_dtype_for(d),
                 2, rows, d1, packed, nbytes);
      if (tr->scaled)
        add_tensor(a, g_strdup_printf("slot.%d.%d.%d.%d.%s" SAFETENSORS_SCALES_SUFFIX, c.z, c.y, c.x, c.l, path),
                   "F32", 1, nscales, 0, scales, (size_t)nscales * sizeof(float));
    }
  }
}

LOOM_API uint8_t *loom_model_to_safetensors(const loom_net *net, const loom_model_extras *extras, size_t *len,
                                            loom_error *err) {
  if (len) *len = 0;
  size_t tlen;
  char *text = model_to_json_text(net, extras, false, &tlen, err);
  if (!text) return NULL;
  GArray *a = g_array_new(FALSE, FALSE, sizeof(out_tensor));
  g_array_set_clear_func(a, out_tensor_clear);
  collect_tensors(net, a);
  uint8_t *file = NULL;
  GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
  jw w;
  jw_init(&w);
  jw_begin_object(&w, true);
  jw_key(&w, "__metadata__");
  jw_begin_object(&w, true);
  jw_key(&w, LOOM_SAFETENSORS_MODEL_KEY);
  jw_string(&w, text);
  jw_end_object(&w);
  uint64_t offset = 0;
  for (guint i = 0; i < a->len; i++) {
    const out_tensor *t = &g_array_index(a, out_tensor, i);
    if (!g_hash_table_add(seen, t->name)) {
      loom_error_set(err, LOOM_ERR_INVALID, _("two weights would be stored as the same tensor “%s”"), t->name);
      g_string_free(w.s, TRUE);
      goto done;
    }
    jw_key(&w, t->name);
    jw_begin_object(&w, true);
    jw_key(&w, "dtype");
    jw_string(&w, t->dtype);
    jw_key(&w, "shape");
    jw_begin_array(&w, true);
    for (int k = 0; k < t->rank; k++) jw_int(&w, t->shape[k]);
    jw_end_array(&w);
    jw_key(&w, "data_offsets");
    jw_begin_array(&w, true);
    jw_int(&w, (int64_t)offset);
    jw_int(&w, (int64_t)(offset + t->nbytes));
    jw_end_array(&w);
    jw_end_object(&w);
    offset += t->nbytes;
  }
  jw_end_object(&w);
  size_t hlen;
  char *header = jw_finish(&w, &hlen);
  /* Padded with spaces so that the data starts 8-byte aligned, as the
   * reference writer does. */
  size_t padded = (hlen + 7) / 8 * 8;
  if (padded > LOOM_SAFETENSORS_MAX_HEADER_BYTES) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("the safetensors header would take %zu bytes, more than the limit of %llu"),
                   padded, (unsigned long long)LOOM_SAFETENSORS_MAX_HEADER_BYTES);
    g_free(header);
    goto done;
  }
  size_t total = 8 + padded + (size_t)offset;
  file = malloc(total);
  if (!file) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a file of %zu bytes"), total);
    g_free(header);
    goto done;
  }
  for (int b = 0; b < 8; b++) file[b] = (uint8_t)((uint64_t)padded >> (8 * b));
  memcpy(file + 8, header, hlen);
  memset(file + 8 + hlen, ' ', padded - hlen);
  g_free(header);
  uint8_t *p = file + 8 + padded;
  for (guint i = 0; i < a->len; i++) {
    const out_tensor *t = &g_array_index(a, out_tensor, i);
    if (t->nbytes) memcpy(p, t->bytes, t->nbytes);
    p += t->nbytes;
  }
  if (len) *len = total;
done:
  g_hash_table_destroy(seen);
  g_array_free(a, TRUE);
  free(text);
  return file;
}

LOOM_API int loom_model_save_safetensors(const loom_net *net, const loom_model_extras *extras, const char *path,
                                         loom_error *err) {
  if (!path) return loom_error_set(err, LOOM_ERR_INVALID, _("no file name given"));
  size_t len;
  uint8_t *bytes = loom_model_to_safetensors(net, extras, &len, err);
  if (!bytes) {
    loom_error_prefix(err, "%s", path);
    return err ? err->code : LOOM_ERR_INVALID;
  }
  int rc = loom_file_write_atomic(path, bytes, len, err);
  free(bytes);
  return rc;
}

static int load_from(loom_safetensors *st, const char *source, unsigned flags, loom_net **out,
                     loom_model_extras *extras, loom_error *err) {
  const char *text = loom_safetensors_metadata(st, LOOM_SAFETENSORS_MODEL_KEY);
  if (!text)
    return loom_error_set(err, LOOM_ERR_FORMAT,
                          _("%s: the file holds %lld tensors but no Loom network (no “%s” in its __metadata__)"),
                          source, (long long)loom_safetensors_n_tensors(st), LOOM_SAFETENSORS_MODEL_KEY);
  int64_t n = loom_safetensors_n_tensors(st);
  model_tensors t = {.st = st, .used = calloc((size_t)(n ? n : 1), sizeof(bool))};
  if (!t.used) return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), source);
  char *where = g_strdup_printf("%s: __metadata__.%s", source, LOOM_SAFETENSORS_MODEL_KEY);
  int rc = model_load_text(text, strlen(text), where, flags, &t, out, extras, err);
  for (int64_t i = 0; rc == LOOM_OK && (flags & LOOM_MODEL_STRICT) && i < n; i++) {
    if (t.used[i]) continue;
    rc = loom_error_set(err, LOOM_ERR_FORMAT, _("%s: tensor “%s” belongs to no weight of the network"), source,
                        loom_safetensors_tensor(st, i)->name);
    loom_net_free(*out);
    *out = NULL;
    loom_model_extras_clear(extras);
  }
  g_free(where);
  free(t.used);
  return rc;
}

LOOM_API int loom_model_load_safetensors_data(const void *data, size_t len, const char *source, unsigned flags,
                                              loom_net **out, loom_model_extras *extras, loom_error *err) {
  if (out) *out = NULL;
  if (extras) memset(extras, 0, sizeof *extras);
  if (!source) source = "<data>";
  if (!out) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: no result given"), source);
  loom_safetensors *st;
  int rc = loom_safetensors_open_data(data, len, source, &st, err);
  if (rc) return rc;
  rc = load_from(st, source, flags, out, extras, err);
  loom_safetensors_close(st);
  return rc;
}

LOOM_API int loom_model_load_safetensors(const char *path, unsigned flags, loom_net **out, loom_model_extras *extras,
                                         loom_error *err) {
  if (out) *out = NULL;
  if (extras) memset(extras, 0, sizeof *extras);
  if (!out) return loom_error_set(err, LOOM_ERR_INVALID, _("no result given"));
  loom_safetensors *st;
  int rc = loom_safetensors_open(path, &st, err);
  if (rc) return rc;
  rc = load_from(st, path, flags, out, extras, err);
  loom_safetensors_close(st);
  if (rc == LOOM_OK && extras && extras->settings)
    extras->settings->data.base_dir = g_path_get_dirname(path); /* relative CSV paths, as for JSON */
  return rc;
}

LOOM_API bool loom_model_file_is_safetensors(const char *path) {
  if (!path) return false;
  if (g_str_has_suffix(path, ".safetensors")) return true;
  /* A header length below 2^40 (JSON text never holds NUL bytes) and "{". */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* never wait on a FIFO */
  if (fd < 0) return false;
  uint8_t b[9];
  ssize_t got = read(fd, b, sizeof b);
  close(fd);
  return got == (ssize_t)sizeof b && b[5] == 0 && b[6] == 0 && b[7] == 0 && b[8] == '{';
}
