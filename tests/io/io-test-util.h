/*
 * Networks for the model-file round-trip tests (test-model.c: JSON,
 * test-safetensors.c: safetensors), which must cover the same dtypes and
 * layer types the same way.
 */
#pragma once
#include <glib.h>
#include <stdbool.h>

#include "loom/loom.h"

static inline void set_all_dtypes(loom_net *net, loom_dtype d) {
  loom_error err = {0};
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, i));
    g_assert_cmpint(loom_layer_set_dtype(l, d, &err), ==, LOOM_OK);
  }
}

/* Builds `t` for an input it accepts: a few candidate shapes, containers get
 * two dense children that keep the input size. Returns the input shape. When
 * no candidate fits, a `required` type fails the test; any other is skipped
 * with a message and NULL. */
static inline loom_layer *build_any(const loom_layer_type *t, loom_shape *in_out, bool required) {
  static const int64_t cands[][5] = {{1, 6}, {2, 3, 5}, {3, 2, 5, 6}, {4, 2, 3, 4, 5}};
  loom_error err = {0};
  for (size_t c = 0; c < G_N_ELEMENTS(cands); c++) {
    loom_shape s = loom_shape_make((int)cands[c][0], cands[c] + 1);
    loom_layer *l = loom_layer_new(t, &err);
    g_assert_nonnull(l);
    if (loom_layer_type_flags(t) & LOOM_LAYER_CONTAINER) {
      for (int k = 0; k < 2; k++) {
        loom_layer *d = loom_layer_new_by_name("dense", &err);
        g_assert_nonnull(d);
        int64_t last = s.d[s.rank - 1];
        g_assert_cmpint(loom_layer_set_int(d, "in_features", last, &err), ==, 0);
        g_assert_cmpint(loom_layer_set_int(d, "out_features", last, &err), ==, 0);
        g_assert_cmpint(loom_layer_add_child(l, d, &err), ==, 0);
      }
    }
    if (loom_layer_adapt_to_input(l, &s, &err) == 0 && loom_layer_build(l, &s, 5, &err) == 0) {
      *in_out = s;
      return l;
    }
    loom_layer_free(l);
  }
  if (required) g_error("no candidate input shape builds a %s layer: %s", loom_layer_type_name(t), err.message);
  g_test_message("skipped %s: %s", loom_layer_type_name(t), err.message);
  return NULL;
}
