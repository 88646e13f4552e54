/*
 * Internal: every layer type the engine knows, one extern per type. Each
 * family file defines its types; registry.c lists them in the table, one line
 * each. To add a type: define `const loom_layer_type loom_layer_NAME` in your
 * family file with the next free ID of your family's block, declare it below
 * in your block, and add `&loom_layer_NAME,` to the table in registry.c.
 *
 * IDs are written into model files: never renumber or reuse one. Blocks:
 *     1-  9  dense              60- 79  normalisation
 *    10- 29  activations        80- 89  embedding
 *    30- 39  containers         90-109  softmax family
 *    40- 59  convolution       110-119  k-means
 *   120-139  recurrent          140-159  feed-forward blocks (swiglu)
 *   160-179  attention          180-    (unassigned: take a block of 20)
 */
#pragma once
#include "layers/layer-impl.h"

/* dense.c */
extern const loom_layer_type loom_layer_dense; /* 1 */

/* activation.c */
extern const loom_layer_type loom_layer_relu;       /* 10 */
extern const loom_layer_type loom_layer_leaky_relu; /* 11 */
extern const loom_layer_type loom_layer_elu;        /* 12 */
extern const loom_layer_type loom_layer_gelu;       /* 13 */
extern const loom_layer_type loom_layer_silu;       /* 14 */
extern const loom_layer_type loom_layer_sigmoid;    /* 15 */
extern const loom_layer_type loom_layer_tanh;       /* 16 */
extern const loom_layer_type loom_layer_softplus;   /* 17 */
extern const loom_layer_type loom_layer_relu2;      /* 18 */

/* containers.c, residual.c */
extern const loom_layer_type loom_layer_sequential; /* 30 */
extern const loom_layer_type loom_layer_parallel;   /* 31 */
extern const loom_layer_type loom_layer_residual;   /* 32 */

/* conv.c */
extern const loom_layer_type loom_layer_conv1d;           /* 40 */
extern const loom_layer_type loom_layer_conv2d;           /* 41 */
extern const loom_layer_type loom_layer_conv3d;           /* 42 */
extern const loom_layer_type loom_layer_conv_transpose1d; /* 43 */
extern const loom_layer_type loom_layer_conv_transpose2d; /* 44 */
extern const loom_layer_type loom_layer_conv_transpose3d; /* 45 */

/* norm.c */
extern const loom_layer_type loom_layer_layernorm; /* 60 */
extern const loom_layer_type loom_layer_rmsnorm;   /* 61 */

/* embedding.c */
extern const loom_layer_type loom_layer_embedding; /* 80 */

/* softmax.c, hierarchical-softmax.c, gumbel-softmax.c, sparsemax.c */
extern const loom_layer_type loom_layer_softmax;              /* 90 */
extern const loom_layer_type loom_layer_softmax_temperature;  /* 91 */
extern const loom_layer_type loom_layer_grid_softmax;         /* 92 */
extern const loom_layer_type loom_layer_masked_softmax;       /* 93 */
extern const loom_layer_type loom_layer_hierarchical_softmax; /* 94 */
extern const loom_layer_type loom_layer_gumbel_softmax;       /* 95 */
extern const loom_layer_type loom_layer_sparsemax;            /* 96 */
extern const loom_layer_type loom_layer_entmax15;             /* 97 */

/* kmeans.c */
extern const loom_layer_type loom_layer_kmeans; /* 110 */

/* recurrent.c */
extern const loom_layer_type loom_layer_rnn;  /* 120 */
extern const loom_layer_type loom_layer_lstm; /* 121 */

/* swiglu.c */
extern const loom_layer_type loom_layer_swiglu; /* 140 */

/* attention.c */
extern const loom_layer_type loom_layer_attention; /* 160 */
