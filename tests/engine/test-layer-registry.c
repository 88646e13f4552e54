#include <glib.h>
#include <math.h>
#include <string.h>

#include "layers/registry.h"
#include "loom/loom.h"
#include "loom/layer.h"

/* IDs are written into model files: these must never change. */
static const struct {
  const char *name;
  int id;
} stable_ids[] = {
  {"dense", 1},
};

static void test_ids_stable(void) {
  for (size_t i = 0; i < G_N_ELEMENTS(stable_ids); i++) {
    const loom_layer_type *t = loom_layer_type_find(stable_ids[i].name);
    g_assert_nonnull(t);
    g_assert_cmpint(loom_layer_type_id(t), ==, stable_ids[i].id);
    g_assert_true(loom_layer_type_by_id(stable_ids[i].id) == t);
  }
}

static void test_ids_and_names_unique(void) {
  int n = loom_layer_type_count();
  g_assert_cmpint(n, >=, 1);
  for (int i = 0; i < n; i++) {
    const loom_layer_type *a = loom_layer_type_at(i);
    g_assert_nonnull(a);
    g_assert_cmpint(loom_layer_type_id(a), >, 0);
    g_assert_true(loom_layer_type_find(loom_layer_type_name(a)) == a);
    g_assert_true(loom_layer_type_by_id(loom_layer_type_id(a)) == a);
    for (int j = i + 1; j < n; j++) {
      const loom_layer_type *b = loom_layer_type_at(j);
      if (loom_layer_type_id(a) == loom_layer_type_id(b))
        g_error("types %s and %s share id %d", loom_layer_type_name(a), loom_layer_type_name(b), loom_layer_type_id(a));
      g_assert_cmpstr(loom_layer_type_name(a), !=, loom_layer_type_name(b));
    }
  }
  g_assert_null(loom_layer_type_at(-1));
  g_assert_null(loom_layer_type_at(n));
  g_assert_null(loom_layer_type_find("no-such-layer"));
  g_assert_null(loom_layer_type_find(NULL));
  g_assert_null(loom_layer_type_by_id(0));
}

static bool valid_key(const char *s) {
  if (!s || !*s) return false;
  for (; *s; s++)
    if (!g_ascii_islower(*s) && !g_ascii_isdigit(*s) && *s != '_' && *s != '-') return false;
  return true;
}

static void test_specs_valid(void) {
  for (int i = 0; i < loom_layer_type_count(); i++) {
    const loom_layer_type *t = loom_layer_type_at(i);
    const char *tn = loom_layer_type_name(t);
    if (!valid_key(tn)) g_error("type name “%s” is not a stable key", tn);
    g_assert_true(loom_layer_type_label(t) && *loom_layer_type_label(t));
    g_assert_true(loom_layer_type_group(t) && *loom_layer_type_group(t));
    g_assert_true(loom_layer_type_description(t) && *loom_layer_type_description(t));
    for (int p = 0; p < loom_layer_type_n_params(t); p++) {
      const loom_param_spec *s = loom_layer_type_param(t, p);
      if (!valid_key(s->name)) g_error("%s: parameter name “%s” is not a stable key", tn, s->name);
      g_assert_true(s->label && *s->label);
      g_assert_true(s->tooltip && *s->tooltip);
      g_assert_cmpint(loom_layer_type_param_index(t, s->name), ==, p);
      switch (s->kind) {
      case LOOM_PARAM_INT:
      case LOOM_PARAM_FLOAT:
      case LOOM_PARAM_INTS:
        if (!(s->min <= s->def && s->def <= s->max)) g_error("%s.%s: default %g outside [%g, %g]", tn, s->name, s->def, s->min, s->max);
        if (s->kind == LOOM_PARAM_INTS) g_assert_true(s->count >= 1 && s->count <= LOOM_PARAM_MAX_INTS);
        if (s->kind != LOOM_PARAM_FLOAT) g_assert_cmpfloat(s->def, ==, floor(s->def));
        break;
      case LOOM_PARAM_BOOL: g_assert_true(s->def == 0 || s->def == 1); break;
      case LOOM_PARAM_ENUM: {
        int n = 0;
        g_assert_nonnull(s->choices);
        while (s->choices[n]) {
          if (!valid_key(s->choices[n])) g_error("%s.%s: choice “%s” is not a stable key", tn, s->name, s->choices[n]);
          n++;
        }
        g_assert_cmpint(n, >=, 1);
        g_assert_true(s->def >= 0 && s->def < n);
        break;
      }
      case LOOM_PARAM_FLOATS: break;
      }
    }
    g_assert_cmpint(loom_layer_type_param_index(t, "no_such_param"), ==, -1);
    g_assert_null(loom_layer_type_param(t, -1));
    g_assert_null(loom_layer_type_param(t, loom_layer_type_n_params(t)));
  }
}

/* Every type can be made with its defaults, described, copied and freed. */
static void test_every_type_instantiates(void) {
  for (int i = 0; i < loom_layer_type_count(); i++) {
    const loom_layer_type *t = loom_layer_type_at(i);
    loom_error err = {0};
    loom_layer *l = loom_layer_new(t, &err);
    g_assert_nonnull(l);
    g_assert_true(loom_layer_get_type(l) == t);
    g_assert_false(loom_layer_is_built(l));
    g_assert_cmpint(loom_layer_get_dtype(l), ==, LOOM_DTYPE_FLOAT32);
    for (int p = 0; p < loom_layer_type_n_params(t); p++) {
      const loom_param_spec *s = loom_layer_type_param(t, p);
      loom_param_value v = loom_layer_get_value(l, p);
      if (s->kind == LOOM_PARAM_FLOAT) g_assert_cmpfloat(v.f, ==, s->def);
      else if (s->kind != LOOM_PARAM_FLOATS) g_assert_cmpint(v.i[0], ==, (int64_t)s->def);
    }
    char buf[256];
    g_assert_true(*loom_layer_describe(l, buf, sizeof buf));
    loom_layer *c = loom_layer_clone(l, &err);
    g_assert_nonnull(c);
    g_assert_cmpstr(loom_layer_describe(c, buf, sizeof buf), ==, loom_layer_describe(l, (char[256]){0}, 256));
    loom_layer_free(c);
    loom_layer_free(l);
  }
  loom_error err = {0};
  g_assert_null(loom_layer_new_by_name("nonsense", &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "unknown layer type “nonsense”");
}

static void test_setters_validate(void) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  g_assert_nonnull(l);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", 0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer dense: parameter “out_features” must be between 1 and 16777216, got 0");
  g_assert_cmpint(loom_layer_get_int(l, "out_features"), ==, 16);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", 10, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_get_int(l, "out_features"), ==, 10);
  g_assert_cmpint(loom_layer_set_int(l, "width", 3, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer dense has no parameter “width”");
  g_assert_cmpint(loom_layer_set_float(l, "out_features", 3.0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer dense: parameter “out_features” is not of the kind being set");
  g_assert_cmpint(loom_layer_set_bool(l, "bias", false, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_get_int(l, "bias"), ==, 0);
  loom_param_value bad = {.i = {2}};
  g_assert_cmpint(loom_layer_set_value(l, 2, &bad, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "layer dense: parameter “bias” must be true or false, got 2");
  g_assert_cmpint(loom_layer_set_value(l, 7, &bad, &err), ==, LOOM_ERR_RANGE);
  g_assert_cmpstr(err.message, ==, "layer dense has no parameter number 7 (it has 3)");
  /* A change marks the layer unbuilt. */
  loom_shape in = loom_shape_1d(16);
  g_assert_cmpint(loom_layer_build(l, &in, 1, &err), ==, LOOM_OK);
  g_assert_true(loom_layer_is_built(l));
  g_assert_cmpint(loom_layer_set_int(l, "out_features", 10, &err), ==, LOOM_OK); /* unchanged */
  g_assert_true(loom_layer_is_built(l));
  g_assert_cmpint(loom_layer_set_int(l, "out_features", 11, &err), ==, LOOM_OK);
  g_assert_false(loom_layer_is_built(l));
  loom_layer_free(l);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/layers/registry/ids-stable", test_ids_stable);
  g_test_add_func("/layers/registry/unique", test_ids_and_names_unique);
  g_test_add_func("/layers/registry/specs-valid", test_specs_valid);
  g_test_add_func("/layers/registry/instantiate", test_every_type_instantiates);
  g_test_add_func("/layers/registry/setters-validate", test_setters_validate);
  return g_test_run();
}
