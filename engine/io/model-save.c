/*
 * Writing the model file (docs/file-format.md). The text depends only on the
 * network, so saving what was loaded reproduces the file byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/model-format.h"
#include "io/model-training.h"
#include "io/model-write.h"
#include "loom/file.h"
#include "loom/model.h"
#include "loom/safetensors.h"

static void write_coord(jw *w, loom_coord c) {
  jw_begin_array(w, true);
  jw_int(w, c.z);
  jw_int(w, c.y);
  jw_int(w, c.x);
  jw_int(w, c.l);
  jw_end_array(w);
}

char *model_to_json_text(const loom_net *net, const loom_model_extras *extras, bool weight_data, size_t *len,
                         loom_error *err) {
  if (len) *len = 0;
  if (!net) {
    loom_error_set(err, LOOM_ERR_INVALID, _("no network given"));
    return NULL;
  }
  jw w;
  jw_init(&w);
  jw_begin_object(&w, false);
  jw_key(&w, "format");
  jw_string(&w, MODEL_FORMAT_NAME);
  jw_key(&w, "version");
  jw_int(&w, LOOM_MODEL_FORMAT_VERSION);
  jw_key(&w, "grid");
  jw_begin_object(&w, true);
  jw_key(&w, "depth");
  jw_int(&w, loom_net_depth(net));
  jw_key(&w, "rows");
  jw_int(&w, loom_net_rows(net));
  jw_key(&w, "cols");
  jw_int(&w, loom_net_cols(net));
  jw_key(&w, "layers_per_cell");
  jw_int(&w, loom_net_layers_per_cell(net));
  jw_end_object(&w);
  jw_key(&w, "input_shape");
  loom_shape in = loom_net_input_shape(net);
  model_write_shape(&w, &in);
  if (loom_net_execution(net) != LOOM_EXEC_FEED_FORWARD) { /* absent means feed-forward: older files stay valid */
    jw_key(&w, "execution");
    jw_string(&w, loom_execution_name(loom_net_execution(net)));
  }

  jw_key(&w, "slots");
  jw_begin_array(&w, false);
  int64_t n = loom_net_n_layers(net);
  for (int64_t i = 0; i < n; i++) {
    loom_coord c = loom_net_layer_coord(net, i);
    loom_layer *l = loom_net_layer_at(net, c);
    jw_begin_object(&w, false);
    jw_key(&w, "at");
    write_coord(&w, c);
    jw_key(&w, "enabled");
    jw_bool(&w, loom_net_is_enabled(net, c));
    jw_key(&w, "layer");
    int rc = model_write_layer(&w, l, true, weight_data, 0, err);
    if (rc) {
      char where[64];
      loom_error_prefix(err, _("slot %s"), loom_coord_format(c, where, sizeof where));
      g_string_free(w.s, TRUE);
      return NULL;
    }
    jw_end_object(&w);
  }
  jw_end_array(&w);

  jw_key(&w, "links");
  jw_begin_array(&w, false);
  for (int i = 0; i < loom_net_n_links(net); i++) {
    const loom_link *k = loom_net_link(net, i);
    jw_begin_object(&w, true);
    jw_key(&w, "src");
    write_coord(&w, k->src);
    jw_key(&w, "dst");
    write_coord(&w, k->dst);
    jw_key(&w, "merge");
    jw_string(&w, loom_merge_name(k->merge));
    jw_end_object(&w);
  }
  jw_end_array(&w);
  if (model_training_present(extras) && model_write_training(&w, extras, err)) {
    g_string_free(w.s, TRUE);
    return NULL;
  }
  jw_end_object(&w);
  /* GLib allocates with the system malloc (since 2.46), so callers free(). */
  return jw_finish(&w, len);
}

LOOM_API char *loom_model_to_json_ex(const loom_net *net, const loom_model_extras *extras, size_t *len,
                                     loom_error *err) {
  return model_to_json_text(net, extras, true, len, err);
}

LOOM_API char *loom_model_to_json(const loom_net *net, size_t *len, loom_error *err) {
  return loom_model_to_json_ex(net, NULL, len, err);
}

LOOM_API int loom_model_save(const loom_net *net, const char *path, loom_error *err) {
  return loom_model_save_ex(net, NULL, path, err);
}

LOOM_API int loom_model_save_ex(const loom_net *net, const loom_model_extras *extras, const char *path,
                                loom_error *err) {
  /* A document opened from a .safetensors file is saved back in its format:
   * JSON text under that name would not reopen. */
  if (path && g_str_has_suffix(path, ".safetensors")) return loom_model_save_safetensors(net, extras, path, err);
  size_t len;
  char *text = loom_model_to_json_ex(net, extras, &len, err);
  if (!text) {
    loom_error_prefix(err, "%s", path);
    return err ? err->code : LOOM_ERR_INVALID;
  }
  int rc = loom_file_write_atomic(path, text, len, err);
  free(text);
  return rc;
}
