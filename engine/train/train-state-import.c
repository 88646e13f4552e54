/*
 * Reading a training-state checkpoint (train-state.c writes it; the layout
 * is in docs/file-format.md "Training state"). Import goes in three stages:
 * every section is parsed and checked against this trainer (nothing is
 * written), then what has to be allocated is allocated (a new optimizer, a
 * copy of the best weights), and only then is the trainer changed, by steps
 * that cannot fail — so an error leaves the trainer as it was.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "train/optim-internal.h"
#include "train/train-state.h"
#include "train/trainer-internal.h"

/* ---- import: parsing -------------------------------------------------------- */

typedef struct rbuf {
  const uint8_t *p;
  size_t len, pos;
  const char *section; /* for messages */
  loom_error *err;
  int rc;
} rbuf;

static bool r_need(rbuf *r, uint64_t n) {
  if (r->rc) return false;
  if (n > r->len - r->pos) {
    r->rc = loom_error_set(r->err, LOOM_ERR_FORMAT,
                           _("the training state is cut short in section %s: %llu more bytes needed at offset %llu, "
                             "%llu left"),
                           r->section, (unsigned long long)n, (unsigned long long)r->pos,
                           (unsigned long long)(r->len - r->pos));
    return false;
  }
  return true;
}

static uint64_t r_u64(rbuf *r) {
  if (!r_need(r, 8)) return 0;
  uint64_t v = train_state_get_le(r->p + r->pos, 8);
  r->pos += 8;
  return v;
}

static int64_t r_i64(rbuf *r) { return (int64_t)r_u64(r); }

static double r_f64(rbuf *r) {
  uint64_t v = r_u64(r);
  double d;
  memcpy(&d, &v, sizeof d);
  return d;
}

/* n floats: returns where they start in the blob (copied by r_copy_floats later). */
static const uint8_t *r_floats(rbuf *r, int64_t n) {
  if (r->rc) return NULL;
  if (n < 0 || (uint64_t)n > (r->len - r->pos) / 4) {
    r->rc = loom_error_set(r->err, LOOM_ERR_FORMAT,
                           _("the training state is cut short in section %s: %lld floats at offset %llu, %llu bytes "
                             "left"),
                           r->section, (long long)n, (unsigned long long)r->pos, (unsigned long long)(r->len - r->pos));
    return NULL;
  }
  const uint8_t *at = r->p + r->pos;
  r->pos += (size_t)n * 4;
  return at;
}

static void copy_floats(float *dst, const uint8_t *src, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t u = (uint32_t)train_state_get_le(src + 4 * i, 4);
    memcpy(&dst[i], &u, sizeof u);
  }
}

static int bad(rbuf *r, const char *fmt_msg) {
  if (!r->rc) r->rc = loom_error_set(r->err, LOOM_ERR_FORMAT, "%s", fmt_msg);
  return r->rc;
}

/* Enters the next section, which must be `tag`; *end is where it ends. */
static bool r_section(rbuf *r, const char *tag, size_t *end) {
  r->section = tag;
  if (!r_need(r, 16)) return false;
  if (memcmp(r->p + r->pos, tag, 4) != 0) {
    char got[5] = {0};
    for (int i = 0; i < 4; i++) {
      uint8_t c = r->p[r->pos + i];
      got[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    r->rc = loom_error_set(r->err, LOOM_ERR_FORMAT,
                           _("the training state has section “%s” at offset %llu where %s was expected"), got,
                           (unsigned long long)r->pos, tag);
    return false;
  }
  r->pos += 8;
  uint64_t n = r_u64(r);
  if (!r_need(r, n)) return false;
  *end = r->pos + (size_t)n;
  return true;
}

static bool r_section_done(rbuf *r, size_t end) {
  if (r->rc) return false;
  if (r->pos != end) {
    r->rc = loom_error_set(r->err, LOOM_ERR_FORMAT,
                           _("section %s of the training state ends at offset %llu but its contents end at %llu"),
                           r->section, (unsigned long long)end, (unsigned long long)r->pos);
    return false;
  }
  return true;
}

/* What a blob holds, parsed and checked, pointing into the blob. */
typedef struct staged {
  loom_train_config cfg;
  int64_t epoch, batch_index, steps, best_epoch, bad_epochs, ep_samples, ep_correct, ep_counted;
  bool finished, halted;
  double best_loss, ep_loss_sum, ep_seconds;
  bool has_opt, has_tween, has_best;
  /* per tensor */
  int64_t *opt_steps;
  bool *opt_momentum;
  unsigned *opt_mask;
  const uint8_t **opt_data, **vel, **best;
  /* per node */
  int64_t *seen, *node_explosions;
  double *baseline, *rate_scale;
  int64_t explosions, recoveries;
} staged;

static void staged_free(staged *st) {
  free(st->opt_steps);
  free(st->opt_momentum);
  free(st->opt_mask);
  free(st->opt_data);
  free(st->vel);
  free(st->best);
  free(st->seen);
  free(st->node_explosions);
  free(st->baseline);
  free(st->rate_scale);
}

static void slot_of(const loom_trainer *tr, int t, char *buf, size_t size) {
  loom_coord_format(tr->lstats[tr->tensors[t].node].at, buf, size);
}

static int parse_conf(rbuf *r, const loom_trainer *tr, staged *st) {
  size_t end;
  if (!r_section(r, "CONF", &end)) return r->rc;
  int64_t n = r_i64(r);
  /* States written before the later fields existed record the first
   * TRAIN_FIELDS_V1; the missing ones keep the trainer's values. */
  if (!r->rc && (n < TRAIN_FIELDS_V1 || n > train_n_fields))
    return r->rc = loom_error_set(r->err, LOOM_ERR_FORMAT,
                                  _("the training state records %lld configuration fields, version %u has %d"),
                                  (long long)n, STATE_VERSION, train_n_fields);
  st->cfg = tr->cfg;
  for (int i = 0; i < (int)n && !r->rc; i++) {
    uint64_t bits = r_u64(r);
    if (!r->rc && !train_field_set(&st->cfg, &train_fields[i], bits))
      return r->rc = loom_error_set(r->err, LOOM_ERR_FORMAT,
                                    _("the training state's configuration field %s holds an impossible value"),
                                    train_fields[i].name);
  }
  if (!r_section_done(r, end)) return r->rc;
  const train_field *f = train_fixed_difference(&tr->cfg, &st->cfg);
  if (f) {
    char was[64], now[64];
    train_field_format(&st->cfg, f, was, sizeof was);
    train_field_format(&tr->cfg, f, now, sizeof now);
    return r->rc = loom_error_set(r->err, LOOM_ERR_INVALID,
                                  /* TRANSLATORS: %s: a configuration field such as "batch_size" or "optim.kind",
                                     then its value in the saved state and in this trainer. */
                                  _("the training state was made with %s %s, this trainer has %s"), f->name, was,
                                  now);
  }
  if (loom_train_config_validate(&st->cfg, r->err)) {
    loom_error_prefix(r->err, _("the training state's configuration"));
    return r->rc = LOOM_ERR_FORMAT;
  }
  return LOOM_OK;
}

static int parse_prog(rbuf *r, const loom_trainer *tr, staged *st) {
  size_t end;
  if (!r_section(r, "PROG", &end)) return r->rc;
  int64_t samples = r_i64(r), batches = r_i64(r);
  st->epoch = r_i64(r);
  st->batch_index = r_i64(r);
  st->steps = r_i64(r);
  int64_t finished = r_i64(r), halted = r_i64(r);
  st->best_loss = r_f64(r);
  st->best_epoch = r_i64(r);
  st->bad_epochs = r_i64(r);
  st->ep_loss_sum = r_f64(r);
  st->ep_seconds = r_f64(r);
  st->ep_samples = r_i64(r);
  st->ep_correct = r_i64(r);
  st->ep_counted = r_i64(r);
  if (!r_section_done(r, end)) return r->rc;
  if (samples != tr->train->n || batches != tr->n_batches)
    return r->rc = loom_error_set(r->err, LOOM_ERR_INVALID,
                                  _("the training state was made on %lld training samples in %lld batches, this "
                                    "trainer has %lld samples in %lld batches"),
                                  (long long)samples, (long long)batches, (long long)tr->train->n,
                                  (long long)tr->n_batches);
  st->finished = finished == 1;
  st->halted = halted == 1;
  if (finished < 0 || finished > 1 || halted < 0 || halted > 1 || st->epoch < 0 || st->steps < 0 ||
      st->batch_index < 0 || st->batch_index >= tr->n_batches || st->best_epoch < -1 || st->best_epoch >= st->epoch ||
      st->epoch > st->cfg.epochs ||
      st->bad_epochs < 0 || st->bad_epochs > INT32_MAX || st->ep_samples < 0 || st->ep_correct < 0 ||
      st->ep_counted < 0 || st->ep_correct > st->ep_counted || isnan(st->best_loss) || !isfinite(st->ep_loss_sum))
    return bad(r, _("the training state's progress counters are inconsistent (epoch, batch, steps or the epoch's sums)"));
  if (st->steps < st->batch_index)
    return bad(r, _("the training state's progress counters are inconsistent (epoch, batch, steps or the epoch's sums)"));
  return LOOM_OK;
}

static int parse_nets(rbuf *r, const loom_trainer *tr) {
  size_t end;
  if (!r_section(r, "NETS", &end)) return r->rc;
  int64_t nodes = r_i64(r), tensors = r_i64(r);
  if (!r->rc && (nodes != tr->n_nodes || tensors != tr->n_tensors))
    return r->rc = loom_error_set(r->err, LOOM_ERR_INVALID,
                                  _("the training state is for a network of %lld layers with %lld weight tensors, "
                                    "this one has %d layers with %d"),
                                  (long long)nodes, (long long)tensors, tr->n_nodes, tr->n_tensors);
  for (int t = 0; t < tr->n_tensors && !r->rc; t++) {
    const train_tensor *tt = &tr->tensors[t];
    int64_t node = r_i64(r), c[4], index, n;
    for (int i = 0; i < 4; i++) c[i] = r_i64(r);
    index = r_i64(r);
    n = r_i64(r);
    if (r->rc) break;
    loom_coord at = tr->lstats[tt->node].at;
    char slot[48];
    slot_of(tr, t, slot, sizeof slot);
    if (node != tt->node || c[0] != at.z || c[1] != at.y || c[2] != at.x || c[3] != at.l || index != tt->index)
      return r->rc = loom_error_set(r->err, LOOM_ERR_INVALID,
                                    _("tensor %d of the training state belongs to another layer than tensor %d of "
                                      "slot %s of this network"),
                                    t, t, slot);
    if (n != tt->n)
      return r->rc = loom_error_set(r->err, LOOM_ERR_INVALID,
                                    _("tensor %d of slot %s has %lld values in the training state, the network has "
                                      "%lld"),
                                    t, slot, (long long)n, (long long)tt->n);
  }
  r_section_done(r, end);
  return r->rc;
}

/* Per-tensor sizes repeat in OPTM, TWEN and BEST so that each record is
 * checked on its own before its floats are trusted. */
static bool tensor_size_ok(rbuf *r, const loom_trainer *tr, int t, int64_t n, const char *what) {
  if (r->rc) return false;
  if (n == tr->tensors[t].n) return true;
  char slot[48];
  slot_of(tr, t, slot, sizeof slot);
  /* TRANSLATORS: %s first: "optimizer state", "tween velocity" or "best weights"; then the tensor, the slot's
     coordinates and the two sizes. */
  r->rc = loom_error_set(r->err, LOOM_ERR_INVALID, _("%s for tensor %d of slot %s has %lld values, the network has %lld"),
                         what, t, slot, (long long)n, (long long)tr->tensors[t].n);
  return false;
}

static int parse_optm(rbuf *r, const loom_trainer *tr, staged *st) {
  size_t end;
  if (!r_section(r, "OPTM", &end)) return r->rc;
  int64_t n = r_i64(r);
  if (!r->rc && n != tr->n_tensors)
    return r->rc = loom_error_set(r->err, LOOM_ERR_INVALID,
                                  _("the training state has optimizer state for %lld tensors, the network has %d"),
                                  (long long)n, tr->n_tensors);
  unsigned need = optim_needed_buffers(&st->cfg.optim);
  for (int t = 0; t < tr->n_tensors && !r->rc; t++) {
    int64_t size = r_i64(r), steps = r_i64(r), mom = r_i64(r), mask = r_i64(r);
    if (!tensor_size_ok(r, tr, t, size, _("optimizer state"))) break;
    if (steps < 0 || mom < 0 || mom > 1 || mask < 0 || mask > 7 || (need & ~(unsigned)mask)) {
      char slot[48];
      slot_of(tr, t, slot, sizeof slot);
      return r->rc = loom_error_set(r->err, LOOM_ERR_FORMAT,
                                    _("the optimizer state for tensor %d of slot %s is inconsistent (step count "
                                      "%lld, buffers %lld; %s needs buffers %u)"),
                                    t, slot, (long long)steps, (long long)mask, loom_optim_name(st->cfg.optim.kind),
                                    need);
    }
    st->opt_steps[t] = steps;
    st->opt_momentum[t] = mom == 1;
    st->opt_mask[t] = (unsigned)mask;
    int nb = (mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1);
    if ((uint64_t)size > SIZE_MAX / 4 / 3) return bad(r, _("the training state's optimizer state is too large"));
    st->opt_data[t] = r_floats(r, size * nb);
  }
  r_section_done(r, end);
  return r->rc;
}

static int parse_twen(rbuf *r, const loom_trainer *tr, staged *st) {
  size_t end;
  if (!r_section(r, "TWEN", &end)) return r->rc;
  st->explosions = r_i64(r);
  st->recoveries = r_i64(r);
  int64_t n = r_i64(r);
  if (!r->rc && n != tr->n_nodes)
    return r->rc = loom_error_set(r->err, LOOM_ERR_INVALID,
                                  _("the training state has tween state for %lld layers, the network has %d"),
                                  (long long)n, tr->n_nodes);
  if (!r->rc && (st->explosions < 0 || st->recoveries < 0))
    return bad(r, _("the training state's tween counts are negative"));
  for (int k = 0; k < tr->n_nodes && !r->rc; k++) {
    st->seen[k] = r_i64(r);
    st->baseline[k] = r_f64(r);
    st->rate_scale[k] = r_f64(r);
    st->node_explosions[k] = r_i64(r);
    if (!r->rc && (st->seen[k] < 0 || st->node_explosions[k] < 0 || !(st->baseline[k] >= 0) ||
                   !isfinite(st->baseline[k]) || !(st->rate_scale[k] > 0 && st->rate_scale[k] <= 1)))
      return bad(r, _("the training state's tween state of a layer is out of range (baseline, rate scale or counts)"));
  }
  int64_t nt = r_i64(r);
  if (!r->rc && nt != tr->n_tensors)
    return r->rc = loom_error_set(r->err, LOOM_ERR_INVALID,
                                  _("the training state has tween velocities for %lld tensors, the network has %d"),
                                  (long long)nt, tr->n_tensors);
  for (int t = 0; t < tr->n_tensors && !r->rc; t++) {
    int64_t size = r_i64(r);
    if (!tensor_size_ok(r, tr, t, size, _("tween velocity"))) break;
    st->vel[t] = r_floats(r, size);
  }
  r_section_done(r, end);
  return r->rc;
}

static int parse_best(rbuf *r, const loom_trainer *tr, staged *st) {
  size_t end;
  if (!r_section(r, "BEST", &end)) return r->rc;
  int64_t n = r_i64(r);
  if (!r->rc && n != tr->n_tensors)
    return r->rc = loom_error_set(r->err, LOOM_ERR_INVALID,
                                  _("the training state has best weights for %lld tensors, the network has %d"),
                                  (long long)n, tr->n_tensors);
  for (int t = 0; t < tr->n_tensors && !r->rc; t++) {
    int64_t size = r_i64(r);
    if (!tensor_size_ok(r, tr, t, size, _("best weights"))) break;
    st->best[t] = r_floats(r, size);
  }
  r_section_done(r, end);
  return r->rc;
}

static bool next_is(const rbuf *r, const char *tag) {
  return !r->rc && r->len - r->pos >= 4 && memcmp(r->p + r->pos, tag, 4) == 0;
}

static int parse_all(const loom_trainer *tr, const uint8_t *p, size_t len, staged *st, loom_error *err) {
  if (len < STATE_HEADER)
    return loom_error_set(err, LOOM_ERR_FORMAT, _("the training state is %llu bytes long, shorter than its %u-byte header"),
                          (unsigned long long)len, STATE_HEADER);
  if (memcmp(p, STATE_MAGIC, 8) != 0)
    return loom_error_set(err, LOOM_ERR_FORMAT, _("this is not a Loom training state (its first bytes are not %s)"),
                          STATE_MAGIC);
  uint32_t version = (uint32_t)train_state_get_le(p + 8, 4), header = (uint32_t)train_state_get_le(p + 12, 4);
  if (version != STATE_VERSION)
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                          _("the training state has version %u; this version of Loom reads version %u"), version,
                          STATE_VERSION);
  if (header != STATE_HEADER)
    return loom_error_set(err, LOOM_ERR_FORMAT, _("the training state's header says %u bytes, version %u has %u"),
                          header, STATE_VERSION, STATE_HEADER);
  uint64_t payload = train_state_get_le(p + 16, 8);
  if (payload != len - STATE_HEADER)
    return loom_error_set(err, LOOM_ERR_FORMAT,
                          _("the training state should have %llu bytes after its header but has %llu (truncated or "
                            "padded)"),
                          (unsigned long long)payload, (unsigned long long)(len - STATE_HEADER));
  if (train_state_get_le(p + 24, 8) != train_state_checksum(p + STATE_HEADER, len - STATE_HEADER))
    return loom_error_set(err, LOOM_ERR_FORMAT, _("the training state is damaged: its checksum does not match"));
  size_t nt = (size_t)(tr->n_tensors > 0 ? tr->n_tensors : 1), nn = (size_t)(tr->n_nodes > 0 ? tr->n_nodes : 1);
  st->opt_steps = calloc(nt, sizeof *st->opt_steps);
  st->opt_momentum = calloc(nt, sizeof *st->opt_momentum);
  st->opt_mask = calloc(nt, sizeof *st->opt_mask);
  st->opt_data = calloc(nt, sizeof *st->opt_data);
  st->vel = calloc(nt, sizeof *st->vel);
  st->best = calloc(nt, sizeof *st->best);
  st->seen = calloc(nn, sizeof *st->seen);
  st->node_explosions = calloc(nn, sizeof *st->node_explosions);
  st->baseline = calloc(nn, sizeof *st->baseline);
  st->rate_scale = calloc(nn, sizeof *st->rate_scale);
  if (!st->opt_steps || !st->opt_momentum || !st->opt_mask || !st->opt_data || !st->vel || !st->best || !st->seen ||
      !st->node_explosions || !st->baseline || !st->rate_scale)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory reading the training state"));
  rbuf r = {.p = p, .len = len, .pos = STATE_HEADER, .section = "CONF", .err = err};
  if (parse_conf(&r, tr, st) || parse_prog(&r, tr, st) || parse_nets(&r, tr)) return r.rc;
  /* the method decides which state sections there are */
  bool backprop = st->cfg.method == LOOM_TRAIN_BACKPROP;
  if (backprop != next_is(&r, "OPTM") || (!backprop && !next_is(&r, "TWEN")))
    return bad(&r, backprop ? _("the training state lacks the optimizer state (section OPTM) that backprop needs")
                            : _("the training state lacks the tween state (section TWEN) that tween training needs"));
  st->has_opt = backprop;
  st->has_tween = !backprop;
  if (backprop ? parse_optm(&r, tr, st) : parse_twen(&r, tr, st)) return r.rc;
  st->has_best = next_is(&r, "BEST");
  if (st->has_best && parse_best(&r, tr, st)) return r.rc;
  if (r.pos != len)
    return loom_error_set(err, LOOM_ERR_FORMAT, _("the training state has %llu unexpected bytes at offset %llu"),
                          (unsigned long long)(len - r.pos), (unsigned long long)r.pos);
  return LOOM_OK;
}

/* ---- import: applying ------------------------------------------------------- */

LOOM_API int loom_trainer_import_state(loom_trainer *tr, const void *bytes, size_t len, loom_error *err) {
  if (!tr || (!bytes && len)) return loom_error_set(err, LOOM_ERR_INVALID, _("no trainer or training state given"));
  staged st = {0};
  int rc = parse_all(tr, bytes, len, &st, err);
  loom_optim *opt = NULL;
  loom_net *best = NULL;
  /* everything that can fail before the trainer changes */
  if (!rc && st.has_opt) {
    opt = loom_optim_new(&st.cfg.optim, tr->n_tensors, tr->sizes, err);
    if (!opt) rc = err ? err->code : LOOM_ERR_NOMEM;
    else loom_optim_set_pool(opt, tr->pool);
    for (int t = 0; !rc && t < tr->n_tensors; t++) rc = optim_tensor_ensure(opt, t, st.opt_mask[t], err);
  }
  if (!rc && st.has_best && !tr->best_net) {
    best = loom_net_clone(tr->net, err);
    if (!best) rc = err ? err->code : LOOM_ERR_NOMEM;
  }
  if (rc) {
    loom_optim_free(opt);
    loom_net_free(best);
    staged_free(&st);
    return rc;
  }
  if (opt) {
    for (int t = 0; t < tr->n_tensors; t++) {
      optim_tensor_set_counts(opt, t, st.opt_steps[t], st.opt_momentum[t]);
      optim_tensor_state os;
      optim_tensor_get(opt, t, &os);
      const uint8_t *src = st.opt_data[t];
      for (int b = 0; b < OPTIM_N_BUFFERS; b++) {
        if (!(st.opt_mask[t] & (1u << b))) continue;
        copy_floats(os.buf[b], src, os.size);
        src += (size_t)os.size * 4;
      }
    }
    loom_optim_free(tr->opt);
    tr->opt = opt;
    /* a run on a device continues from the imported state there */
    trainer_device_state_from_host(tr, tr->dev);
  }
  if (st.has_tween) {
    tween_view v;
    tween_get_view(tr->tween, &v);
    *v.explosions = st.explosions;
    *v.recoveries = st.recoveries;
    for (int k = 0; k < tr->n_nodes; k++) {
      v.seen[k] = st.seen[k];
      tr->lstats[k].baseline = st.baseline[k];
      tr->lstats[k].rate_scale = st.rate_scale[k];
      tr->lstats[k].explosions = st.node_explosions[k];
    }
    for (int t = 0; t < tr->n_tensors; t++) copy_floats(v.vel[t], st.vel[t], tr->tensors[t].n);
  }
  if (best) tr->best_net = best;
  if (st.has_best)
    for (int t = 0; t < tr->n_tensors; t++) {
      loom_layer *bl = loom_net_layer_at(tr->best_net, tr->lstats[tr->tensors[t].node].at);
      loom_weights *bw = loom_layer_weights(bl, tr->tensors[t].index);
      copy_floats(loom_weights_master(bw), st.best[t], tr->tensors[t].n);
      loom_weights_touch(bw);
    }
  else if (tr->best_net) {
    loom_net_free(tr->best_net);
    tr->best_net = NULL;
  }
  tr->cfg = st.cfg;
  tr->epoch = st.epoch;
  tr->batch_index = st.batch_index;
  tr->steps = st.steps;
  tr->finished = st.finished;
  tr->halted = st.halted;
  tr->best_loss = st.best_loss;
  tr->best_epoch = st.best_epoch;
  tr->bad_epochs = (int)st.bad_epochs;
  tr->ep_loss_sum = st.ep_loss_sum;
  tr->ep_seconds = st.ep_seconds;
  tr->ep_samples = st.ep_samples;
  tr->ep_correct = st.ep_correct;
  tr->ep_counted = st.ep_counted;
  tr->tp_count = tr->tp_next = 0;
  loom_batcher_set_epoch(tr->batcher, (uint64_t)tr->epoch);
  staged_free(&st);
  return LOOM_OK;
}
