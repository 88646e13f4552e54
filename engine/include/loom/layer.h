/*
 * Layers and the layer-type registry. One table (engine/layers/registry.c)
 * lists every layer type with a stable numeric ID; menus, the model file, the
 * inspector and the tests all read it. A type describes its hyperparameters
 * with loom_param_spec, so generic code can edit, validate and serialize any
 * layer without knowing its type.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"
#include "export.h"
#include "shape.h"
#include "weights.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_layer loom_layer;
typedef struct loom_layer_type loom_layer_type;

/* ---- hyperparameters --------------------------------------------------- */

typedef enum loom_param_kind {
  LOOM_PARAM_INT,   /* i[0] */
  LOOM_PARAM_FLOAT, /* f */
  LOOM_PARAM_BOOL,  /* i[0] is 0 or 1 */
  LOOM_PARAM_ENUM,  /* i[0] indexes choices */
  LOOM_PARAM_INTS,  /* i[0..count-1], e.g. a 2-D kernel size */
  LOOM_PARAM_FLOATS /* a variable-length list of floats (e.g. a mask); see loom_layer_set_floats */
} loom_param_kind;

#define LOOM_PARAM_MAX_INTS 3

typedef struct loom_param_spec {
  const char *name;    /* JSON key, stable: "out_features" */
  const char *label;   /* N_()-marked display name: "Output features" */
  const char *tooltip; /* N_()-marked one-line explanation */
  loom_param_kind kind;
  double min, max;     /* inclusive bounds for INT/FLOAT/INTS entries */
  double def;          /* default for INT/FLOAT/BOOL/ENUM (index) and each INTS entry */
  const char *const *choices; /* ENUM: NULL-terminated stable names */
  int count;           /* INTS: number of entries */
  bool runtime;        /* changing it affects neither shapes nor weights (e.g. a
                          mask): the layer stays built, the next forward uses it */
  /* A model file may leave it out, meaning `def` (FLOATS: no values). Set it on
   * a hyperparameter added to an existing type, with a default that computes
   * what files written before it existed compute: old files keep loading, and
   * the format version does not change (docs/file-format.md, "Versioning"). */
  bool file_optional;
} loom_param_spec;

typedef struct loom_param_value {
  int64_t i[LOOM_PARAM_MAX_INTS];
  double f;
} loom_param_value;

/* ---- the registry ------------------------------------------------------ */

typedef enum loom_layer_flags {
  LOOM_LAYER_WEIGHTED = 1 << 0,   /* has trainable parameters */
  LOOM_LAYER_CONTAINER = 1 << 1,  /* holds child layers */
  LOOM_LAYER_STOCHASTIC = 1 << 2, /* forward uses the context's RNG */
  /* Every row of the output is a probability distribution (non-negative,
   * sums to 1), whatever the parameters. Types whose answer depends on their
   * parameters (kmeans) leave the flag off and answer per layer: ask
   * loom_layer_outputs_probabilities(), not the flag. */
  LOOM_LAYER_OUTPUTS_PROBABILITIES = 1 << 3,
} loom_layer_flags;

LOOM_API int loom_layer_type_count(void);
LOOM_API const loom_layer_type *loom_layer_type_at(int index);
LOOM_API const loom_layer_type *loom_layer_type_find(const char *name); /* NULL if unknown */
LOOM_API const loom_layer_type *loom_layer_type_by_id(int id);
LOOM_API int loom_layer_type_id(const loom_layer_type *t);
LOOM_API const char *loom_layer_type_name(const loom_layer_type *t);        /* "conv2d" */
LOOM_API const char *loom_layer_type_label(const loom_layer_type *t);       /* translated "2-D convolution" */
LOOM_API const char *loom_layer_type_group(const loom_layer_type *t);       /* translated "Convolution" */
LOOM_API const char *loom_layer_type_description(const loom_layer_type *t); /* translated, one sentence */
LOOM_API unsigned loom_layer_type_flags(const loom_layer_type *t);
LOOM_API int loom_layer_type_n_params(const loom_layer_type *t);
LOOM_API const loom_param_spec *loom_layer_type_param(const loom_layer_type *t, int index);
LOOM_API int loom_layer_type_param_index(const loom_layer_type *t, const char *name); /* -1 if none */

/* ---- layer instances --------------------------------------------------- */

/* A new layer with default hyperparameters, dtype float32, not yet built. */
LOOM_API loom_layer *loom_layer_new(const loom_layer_type *t, loom_error *err);
LOOM_API loom_layer *loom_layer_new_by_name(const char *type_name, loom_error *err);
LOOM_API void loom_layer_free(loom_layer *l);
/* Deep copy: hyperparameters, weights (master and dtype), children. */
LOOM_API loom_layer *loom_layer_clone(const loom_layer *l, loom_error *err);
LOOM_API const loom_layer_type *loom_layer_get_type(const loom_layer *l);
/* Whether this layer, with its current parameters, outputs probability
 * distributions (e.g. the trainer then picks mse instead of a loss on logits). */
LOOM_API bool loom_layer_outputs_probabilities(const loom_layer *l);

/* Setters validate against the spec (bounds, enum names) and name the
 * parameter in the error; a change marks the layer unbuilt. */
LOOM_API int loom_layer_set_int(loom_layer *l, const char *name, int64_t v, loom_error *err);
LOOM_API int loom_layer_set_float(loom_layer *l, const char *name, double v, loom_error *err);
LOOM_API int loom_layer_set_bool(loom_layer *l, const char *name, bool v, loom_error *err);
LOOM_API int loom_layer_set_enum(loom_layer *l, const char *name, const char *choice, loom_error *err);
LOOM_API int loom_layer_set_ints(loom_layer *l, const char *name, const int64_t *v, int n, loom_error *err);
LOOM_API int loom_layer_set_floats(loom_layer *l, const char *name, const float *v, int64_t n, loom_error *err);
LOOM_API int loom_layer_set_value(loom_layer *l, int index, const loom_param_value *v, loom_error *err);
LOOM_API loom_param_value loom_layer_get_value(const loom_layer *l, int index);
LOOM_API int64_t loom_layer_get_int(const loom_layer *l, const char *name);  /* by name; 0 if none */
LOOM_API double loom_layer_get_float(const loom_layer *l, const char *name);
LOOM_API const float *loom_layer_get_floats(const loom_layer *l, const char *name, int64_t *n);

/* The dtype the layer's quantizable weights compute at (biases and
 * normalisation parameters stay float32; see docs/dtypes.md). */
LOOM_API int loom_layer_set_dtype(loom_layer *l, loom_dtype d, loom_error *err);
LOOM_API loom_dtype loom_layer_get_dtype(const loom_layer *l);

/*
 * Builds the layer for an input shape: validates hyperparameters against it,
 * computes the output shape and (re)allocates weights when their shapes
 * change (new weights are initialised from `seed`; weights whose shape is
 * unchanged are kept). Errors name the parameter and the expected size.
 */
LOOM_API int loom_layer_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err);
LOOM_API bool loom_layer_is_built(const loom_layer *l);
LOOM_API loom_shape loom_layer_in_shape(const loom_layer *l);
LOOM_API loom_shape loom_layer_out_shape(const loom_layer *l);
/* Proposes the input size a fresh layer of this type wants when fed `in`
 * (e.g. dense in_features = numel(in)); used when a user drops a layer. */
LOOM_API int loom_layer_adapt_to_input(loom_layer *l, const loom_shape *in, loom_error *err);

/* Trainable tensors ("weight", "bias", "gamma", ...) including children's. */
LOOM_API int loom_layer_n_weights(const loom_layer *l);
LOOM_API loom_weights *loom_layer_weights(loom_layer *l, int index);
LOOM_API const char *loom_layer_weights_name(const loom_layer *l, int index);
/* The tensor's path inside the layer: "weight", "children[1].bias", "gate.weight". */
LOOM_API char *loom_layer_weights_path(const loom_layer *l, int index, char *buf, size_t size);
LOOM_API float *loom_layer_grad(loom_layer *l, int index); /* same size as the weights; after build */
LOOM_API int64_t loom_layer_param_count(const loom_layer *l);
LOOM_API size_t loom_layer_bytes(const loom_layer *l);                  /* at the current dtype */
LOOM_API size_t loom_layer_bytes_at(const loom_layer *l, loom_dtype d); /* had it dtype d */
/* Inference at rest (docs/dtypes.md, "At rest"), children and gate included:
 * to_inference keeps only the packed weights (loom_weights_to_inference) and
 * frees the gradients (loom_layer_grad is then NULL); prepare_training
 * recreates masters and gradients (a backward pass does it by itself). Bytes:
 * weight stores + gradients allocated now / at rest / while training. */
LOOM_API int loom_layer_to_inference(loom_layer *l, loom_error *err);
LOOM_API int loom_layer_prepare_training(loom_layer *l, loom_error *err);
LOOM_API size_t loom_layer_resident_bytes(const loom_layer *l);
LOOM_API size_t loom_layer_inference_bytes(const loom_layer *l);
LOOM_API size_t loom_layer_training_bytes(const loom_layer *l);
LOOM_API int64_t loom_layer_flops(const loom_layer *l);                 /* forward, per sample */
/* Writes a one-line summary: "dense 64→10, bias". */
LOOM_API char *loom_layer_describe(const loom_layer *l, char *buf, size_t size);

/* Containers (parallel, sequential). Children are owned by the container. */
LOOM_API int loom_layer_n_children(const loom_layer *l);
LOOM_API loom_layer *loom_layer_child(const loom_layer *l, int index);
LOOM_API int loom_layer_add_child(loom_layer *l, loom_layer *child, loom_error *err);
LOOM_API loom_layer *loom_layer_remove_child(loom_layer *l, int index);
/* The gate of a `parallel` container in `filter` mode (owned); NULL otherwise. */
LOOM_API loom_layer *loom_layer_gate(const loom_layer *l);
LOOM_API int loom_layer_set_gate(loom_layer *l, loom_layer *gate, loom_error *err);

#ifdef __cplusplus
}
#endif
