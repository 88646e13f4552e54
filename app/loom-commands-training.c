/*
 * The training commands. A training result holds a copy of the trained
 * network; applying it swaps the float32 masters tensor by tensor with the
 * document's (so undo, the same swap, gives back the old weights bit for
 * bit) together with the trainer state and step count. Only weights move:
 * the layout, hyperparameters and dtypes stay the document's, and a
 * network whose layout no longer matches is refused naming the slot.
 */
#include <glib/gi18n-lib.h>
#include <string.h>

#include "loom-commands-private.h"

struct _TrainingEdit {
  loom_net *net;                 /* result: the other weights */
  GBytes *state;                 /* result: the other state */
  gint64 steps;
  loom_train_settings *settings; /* settings: the other settings */
};

TrainingEdit *training_edit_new_result(const loom_net *trained, GBytes *state, gint64 steps) {
  loom_net *copy = loom_net_clone(trained, NULL);
  if (!copy) return NULL;
  TrainingEdit *edit = g_new0(TrainingEdit, 1);
  edit->net = copy;
  edit->state = state ? g_bytes_ref(state) : NULL;
  edit->steps = steps;
  return edit;
}

TrainingEdit *training_edit_new_settings(const loom_train_settings *settings) {
  loom_train_settings *copy = loom_train_settings_copy(settings);
  if (!copy) return NULL;
  TrainingEdit *edit = g_new0(TrainingEdit, 1);
  edit->settings = copy;
  return edit;
}

void training_edit_free(TrainingEdit *edit) {
  if (!edit) return;
  if (edit->net) loom_net_free(edit->net);
  g_clear_pointer(&edit->state, g_bytes_unref);
  if (edit->settings) loom_train_settings_free(edit->settings);
  g_free(edit);
}

static int mismatch(loom_coord at, loom_error *err) {
  char where[64];
  return loom_error_set(err, LOOM_ERR_INVALID,
                        _("The trained weights no longer fit the network at %s: it was edited during training"),
                        loom_coord_format(at, where, sizeof where));
}

/* Whether the two layer trees hold tensors of the same sizes. */
static gboolean same_tensors(const loom_layer *a, const loom_layer *b) {
  if (!a || !b) return a == b;
  if (loom_layer_get_type(a) != loom_layer_get_type(b)) return FALSE;
  int n = loom_layer_n_weights(a);
  if (n != loom_layer_n_weights(b)) return FALSE;
  for (int i = 0; i < n; i++)
    if (loom_weights_count(loom_layer_weights((loom_layer *)a, i)) !=
        loom_weights_count(loom_layer_weights((loom_layer *)b, i)))
      return FALSE;
  int nc = loom_layer_n_children(a);
  if (nc != loom_layer_n_children(b)) return FALSE;
  for (int i = 0; i < nc; i++)
    if (!same_tensors(loom_layer_child(a, i), loom_layer_child(b, i))) return FALSE;
  return same_tensors(loom_layer_gate(a), loom_layer_gate(b));
}

static void swap_tensors(loom_layer *a, loom_layer *b) {
  if (!a || !b) return;
  for (int i = 0; i < loom_layer_n_weights(a); i++) {
    loom_weights *wa = loom_layer_weights(a, i), *wb = loom_layer_weights(b, i);
    int64_t n = loom_weights_count(wa);
    float *ma = loom_weights_master(wa), *mb = loom_weights_master(wb);
    for (int64_t k = 0; k < n; k++) {
      float t = ma[k];
      ma[k] = mb[k];
      mb[k] = t;
    }
    loom_weights_touch(wa);
    loom_weights_touch(wb);
  }
  for (int i = 0; i < loom_layer_n_children(a); i++) swap_tensors(loom_layer_child(a, i), loom_layer_child(b, i));
  swap_tensors(loom_layer_gate(a), loom_layer_gate(b));
}

static int swap_result(TrainingEdit *edit, loom_net *net, LoomTrainingExtras *extras, loom_error *err) {
  int64_t n = loom_net_n_layers(net);
  if (n != loom_net_n_layers(edit->net)) return mismatch(loom_net_layer_coord(net, 0), err);
  /* Check everything first: a refused swap changes nothing. */
  for (int64_t i = 0; i < n; i++) {
    loom_coord at = loom_net_layer_coord(net, i);
    if (!same_tensors(loom_net_layer_at(net, at), loom_net_layer_at(edit->net, at))) return mismatch(at, err);
  }
  for (int64_t i = 0; i < n; i++) {
    loom_coord at = loom_net_layer_coord(net, i);
    swap_tensors(loom_net_layer_at(net, at), loom_net_layer_at(edit->net, at));
  }
  GBytes *state = extras->state;
  extras->state = edit->state;
  edit->state = state;
  gint64 steps = extras->steps;
  extras->steps = edit->steps;
  edit->steps = steps;
  return LOOM_OK;
}

int training_edit_swap(TrainingEdit *edit, loom_net *net, LoomTrainingExtras *extras, loom_error *err) {
  if (!extras) return loom_error_set(err, LOOM_ERR_INVALID, _("This document keeps no training settings"));
  if (edit->net) return swap_result(edit, net, extras, err);
  loom_train_settings *settings = extras->settings;
  extras->settings = edit->settings;
  edit->settings = settings;
  return LOOM_OK;
}
