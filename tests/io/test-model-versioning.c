/*
 * Format versioning and the loader's memory limit: a hyperparameter marked
 * file_optional (added to a type after files existed) takes its default when
 * a file lacks it, every other one stays required; a small file describing a
 * network whose activations need gigabytes is refused before anything runs.
 */
#include <glib.h>
#include <string.h>

#include "loom/loom.h"

/* Every registered type: a file without a file_optional parameter loads with
 * the default, a file without any other parameter is an error naming it. */
static void test_optional_params(void) {
  int optional = 0;
  for (int t = 0; t < loom_layer_type_count(); t++) {
    const loom_layer_type *type = loom_layer_type_at(t);
    for (int p = 0; p < loom_layer_type_n_params(type); p++) {
      const loom_param_spec *s = loom_layer_type_param(type, p);
      loom_error err = {0};
      loom_net *net = loom_net_new(1, 1, 1, 1, &err);
      loom_layer *l = loom_layer_new(type, &err);
      g_assert_nonnull(l);
      g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, l, &err), ==, 0);
      char *json = loom_model_to_json(net, NULL, &err);
      g_assert_nonnull(json);
      loom_net_free(net);
      /* Drop the member: the params object is pretty-printed one per line. */
      char *key = g_strdup_printf("\n          \"%s\": ", s->name);
      char *at = strstr(json, key);
      if (!at) g_error("%s.%s not found in %s", loom_layer_type_name(type), s->name, json);
      char *eol = strchr(at + 1, '\n');
      memmove(at, eol, strlen(eol) + 1);
      /* the member before may now end in a comma before "}" */
      GRegex *re = g_regex_new(",(\\s*})", 0, 0, NULL);
      char *fixed = g_regex_replace(re, json, -1, 0, "\\1", 0, NULL);
      g_regex_unref(re);
      loom_net *back = NULL;
      int rc = loom_model_load_data(fixed, strlen(fixed), "old.json", LOOM_MODEL_STRICT, &back, &err);
      if (s->file_optional) {
        optional++;
        if (rc) g_error("%s.%s: %s", loom_layer_type_name(type), s->name, err.message);
        loom_layer *fresh = loom_layer_new(type, &err);
        loom_param_value want = loom_layer_get_value(fresh, p);
        loom_param_value got = loom_layer_get_value(loom_net_layer_at(back, (loom_coord){0, 0, 0, 0}), p);
        g_assert_true(memcmp(&want, &got, sizeof want) == 0);
        loom_layer_free(fresh);
        loom_net_free(back);
      } else {
        g_assert_cmpint(rc, !=, 0);
        g_assert_null(back);
        char *path = g_strdup_printf("$.slots[0].layer.params.%s: required member is missing", s->name);
        if (!strstr(err.message, path)) g_error("%s", err.message);
        g_free(path);
      }
      g_free(fixed);
      g_free(key);
      free(json);
    }
  }
  g_assert_cmpint(optional, >=, 1);
}

/* 2^30 input values and two activations of that size: 12 GiB for one sample. */
static void test_activation_limit(void) {
  static const char doc[] =
    "{\"format\": \"loom-model\", \"version\": 1,"
    " \"grid\": {\"depth\": 1, \"rows\": 1, \"cols\": 2, \"layers_per_cell\": 1},"
    " \"input_shape\": [1024, 1024, 1024],"
    " \"slots\": ["
    "  {\"at\": [0, 0, 0, 0], \"enabled\": true, \"layer\": {\"type\": \"relu\", \"dtype\": \"float32\", \"params\": {}}},"
    "  {\"at\": [0, 0, 1, 0], \"enabled\": true, \"layer\": {\"type\": \"relu\", \"dtype\": \"float32\", \"params\": {}}}"
    " ], \"links\": []}";
  loom_error err = {0};
  loom_net *net = NULL;
  g_assert_cmpint(loom_model_load_data(doc, sizeof doc - 1, "big.json", LOOM_MODEL_STRICT, &net, &err), ==,
                  LOOM_ERR_NOMEM);
  g_assert_null(net);
  g_assert_nonnull(strstr(err.message, "big.json: the network needs 0 bytes of weights and 12884901888 bytes of "
                                       "activations per sample, more than the limit of 8589934592 bytes"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/io/versioning/optional-params", test_optional_params);
  g_test_add_func("/io/versioning/activation-limit", test_activation_limit);
  return g_test_run();
}
