/*
 * Checkpoints of the training state (loom/train.h, docs/file-format.md
 * "Training state"): a little-endian blob — header, then sections CONF,
 * PROG, NETS and, as the trainer has them, OPTM, TWEN and BEST.
 *
 * This file writes it; train-state-import.c reads it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "train/optim-internal.h"
#include "train/train-state.h"
#include "train/trainer-internal.h"


/* ---- little-endian writing -------------------------------------------------- */

typedef struct wbuf {
  uint8_t *p;
  size_t len, cap;
  bool failed;
} wbuf;

static void w_bytes(wbuf *w, const void *src, size_t n) {
  if (w->failed) return;
  if (w->len + n > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + n) cap *= 2;
    uint8_t *g = realloc(w->p, cap);
    if (!g) {
      w->failed = true;
      return;
    }
    w->p = g;
    w->cap = cap;
  }
  memcpy(w->p + w->len, src, n);
  w->len += n;
}

static void put_le(uint8_t *dst, uint64_t v, int n) {
  for (int i = 0; i < n; i++) dst[i] = (uint8_t)(v >> (8 * i));
}

static void w_u32(wbuf *w, uint32_t v) {
  uint8_t b[4];
  put_le(b, v, 4);
  w_bytes(w, b, 4);
}

static void w_u64(wbuf *w, uint64_t v) {
  uint8_t b[8];
  put_le(b, v, 8);
  w_bytes(w, b, 8);
}

static void w_i64(wbuf *w, int64_t v) { w_u64(w, (uint64_t)v); }

static void w_f64(wbuf *w, double d) {
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  w_u64(w, v);
}

static void w_floats(wbuf *w, const float *v, int64_t n) {
  uint8_t b[4 * 256];
  for (int64_t i = 0; i < n;) {
    int k = 0;
    for (; k < 256 && i < n; k++, i++) {
      uint32_t u;
      memcpy(&u, &v[i], sizeof u);
      put_le(b + 4 * k, u, 4);
    }
    w_bytes(w, b, (size_t)k * 4);
  }
}

/* A section: tag, reserved 0, then its length, patched when it ends. */
static size_t w_section(wbuf *w, const char tag[4]) {
  w_bytes(w, tag, 4);
  w_u32(w, 0);
  w_u64(w, 0);
  return w->len;
}

static void w_section_end(wbuf *w, size_t body) {
  if (!w->failed) put_le(w->p + body - 8, (uint64_t)(w->len - body), 8);
}

/* FNV-1a, 64 bits: catches a damaged blob before its numbers are believed. */
uint64_t train_state_checksum(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/* ---- export ----------------------------------------------------------------- */

static void put_coord(wbuf *w, loom_coord c) {
  w_i64(w, c.z);
  w_i64(w, c.y);
  w_i64(w, c.x);
  w_i64(w, c.l);
}

LOOM_API int loom_trainer_export_state(const loom_trainer *tr, void **bytes, size_t *len, loom_error *err) {
  if (!tr || !bytes || !len) return loom_error_set(err, LOOM_ERR_INVALID, _("no trainer or output given"));
  *bytes = NULL;
  *len = 0;
  wbuf w = {0};
  uint8_t header[STATE_HEADER] = {0};
  w_bytes(&w, header, sizeof header);

  size_t s = w_section(&w, "CONF");
  w_i64(&w, train_n_fields);
  for (int i = 0; i < train_n_fields; i++) w_u64(&w, train_field_get(&tr->cfg, &train_fields[i]));
  w_section_end(&w, s);

  s = w_section(&w, "PROG");
  w_i64(&w, tr->train->n);
  w_i64(&w, tr->n_batches);
  w_i64(&w, tr->epoch);
  w_i64(&w, tr->batch_index);
  w_i64(&w, tr->steps);
  w_i64(&w, tr->finished);
  w_i64(&w, tr->halted);
  w_f64(&w, tr->best_loss);
  w_i64(&w, tr->best_epoch);
  w_i64(&w, tr->bad_epochs);
  w_f64(&w, tr->ep_loss_sum);
  w_f64(&w, tr->ep_seconds);
  w_i64(&w, tr->ep_samples);
  w_i64(&w, tr->ep_correct);
  w_i64(&w, tr->ep_counted);
  w_section_end(&w, s);

  s = w_section(&w, "NETS");
  w_i64(&w, tr->n_nodes);
  w_i64(&w, tr->n_tensors);
  for (int t = 0; t < tr->n_tensors; t++) {
    const train_tensor *tt = &tr->tensors[t];
    w_i64(&w, tt->node);
    put_coord(&w, tr->lstats[tt->node].at);
    w_i64(&w, tt->index);
    w_i64(&w, tt->n);
  }
  w_section_end(&w, s);

  if (tr->opt) {
    s = w_section(&w, "OPTM");
    w_i64(&w, tr->n_tensors);
    for (int t = 0; t < tr->n_tensors; t++) {
      optim_tensor_state st;
      optim_tensor_get(tr->opt, t, &st);
      /* On a device the optimizer's state is the device's, read in the
       * host's layout (the host's copy is not kept up to date). */
      if (tr->dev) gpu_train_state_view(tr->dev, tr->tensors[t].node, tr->tensors[t].index, &st);
      w_i64(&w, st.size);
      w_i64(&w, st.steps);
      w_i64(&w, st.has_momentum);
      w_i64(&w, st.buffers);
      for (int b = 0; b < OPTIM_N_BUFFERS; b++)
        if (st.buf[b]) w_floats(&w, st.buf[b], st.size);
    }
    w_section_end(&w, s);
  }
  if (tr->tween) {
    tween_view v;
    tween_get_view(tr->tween, &v);
    s = w_section(&w, "TWEN");
    w_i64(&w, *v.explosions);
    w_i64(&w, *v.recoveries);
    w_i64(&w, tr->n_nodes);
    for (int k = 0; k < tr->n_nodes; k++) {
      w_i64(&w, v.seen[k]);
      w_f64(&w, tr->lstats[k].baseline);
      w_f64(&w, tr->lstats[k].rate_scale);
      w_i64(&w, tr->lstats[k].explosions);
    }
    w_i64(&w, tr->n_tensors);
    for (int t = 0; t < tr->n_tensors; t++) {
      w_i64(&w, tr->tensors[t].n);
      w_floats(&w, v.vel[t], tr->tensors[t].n);
    }
    w_section_end(&w, s);
  }
  if (tr->best_net) {
    /* the tensors of the best copy in the trainer's order (same architecture) */
    s = w_section(&w, "BEST");
    w_i64(&w, tr->n_tensors);
    for (int t = 0; t < tr->n_tensors; t++) {
      loom_layer *bl = loom_net_layer_at(tr->best_net, tr->lstats[tr->tensors[t].node].at);
      loom_weights *bw = loom_layer_weights(bl, tr->tensors[t].index);
      w_i64(&w, loom_weights_count(bw));
      w_floats(&w, loom_weights_master_const(bw), loom_weights_count(bw));
    }
    w_section_end(&w, s);
  }
  if (w.failed) {
    free(w.p);
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory writing the training state"));
  }
  memcpy(w.p, STATE_MAGIC, 8);
  put_le(w.p + 8, STATE_VERSION, 4);
  put_le(w.p + 12, STATE_HEADER, 4);
  put_le(w.p + 16, (uint64_t)(w.len - STATE_HEADER), 8);
  put_le(w.p + 24, train_state_checksum(w.p + STATE_HEADER, w.len - STATE_HEADER), 8);
  *bytes = w.p;
  *len = w.len;
  return LOOM_OK;
}

