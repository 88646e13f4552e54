/*
 * The built-in example networks (`loom new --example NAME`, the GUI's "New
 * from example"). Each is small, passes shape inference without a problem
 * and runs forward as built; weights come from a fixed seed, so every build
 * of an example is identical. They are meant to be trained and explored.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "loom/model.h"
#include "loom/net.h"
#include "loom/settings.h"

#define EXAMPLE_SEED UINT64_C(20240611)

typedef struct {
  loom_net *net;
  loom_error *err;
  int rc;
} builder;

static loom_layer *layer(builder *b, const char *type) {
  if (b->rc) return NULL;
  loom_layer *l = loom_layer_new_by_name(type, b->err);
  if (!l) b->rc = b->err ? b->err->code : LOOM_ERR_INVALID;
  return l;
}

static void set_int(builder *b, loom_layer *l, const char *name, int64_t v) {
  if (!b->rc && l) b->rc = loom_layer_set_int(l, name, v, b->err);
}

static void set_ints2(builder *b, loom_layer *l, const char *name, int64_t a, int64_t c) {
  int64_t v[2] = {a, c};
  if (!b->rc && l) b->rc = loom_layer_set_ints(l, name, v, 2, b->err);
}

static void set_enum(builder *b, loom_layer *l, const char *name, const char *choice) {
  if (!b->rc && l) b->rc = loom_layer_set_enum(l, name, choice, b->err);
}

static loom_layer *dense(builder *b, int64_t in, int64_t out) {
  loom_layer *l = layer(b, "dense");
  set_int(b, l, "in_features", in);
  set_int(b, l, "out_features", out);
  return l;
}

static loom_layer *conv2d(builder *b, int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  loom_layer *l = layer(b, "conv2d");
  set_int(b, l, "in_channels", in);
  set_int(b, l, "out_channels", out);
  set_ints2(b, l, "kernel", kernel, kernel);
  set_ints2(b, l, "stride", stride, stride);
  set_ints2(b, l, "padding", padding, padding);
  return l;
}

/* Places l (consumed even on an earlier error) at (z, y, x, slot). */
static void place(builder *b, int z, int y, int x, int slot, loom_layer *l) {
  if (b->rc) {
    loom_layer_free(l);
    return;
  }
  loom_coord c = {z, y, x, slot};
  b->rc = loom_net_place(b->net, c, l, b->err);
  if (b->rc) loom_layer_free(l);
}

static void add_child(builder *b, loom_layer *container, loom_layer *child) {
  if (b->rc || !container) {
    loom_layer_free(child);
    return;
  }
  b->rc = loom_layer_add_child(container, child, b->err);
  if (b->rc) loom_layer_free(child);
}

static void add_link(builder *b, loom_coord src, loom_coord dst, loom_merge merge) {
  if (b->rc) return;
  loom_link k = {src, dst, merge};
  b->rc = loom_net_add_link(b->net, &k, b->err);
}

static void input(builder *b, int rank, const int64_t *dims) {
  if (b->rc) return;
  loom_shape s = loom_shape_make(rank, dims);
  b->rc = loom_net_set_input_shape(b->net, &s, b->err);
}

/* XOR: the smallest problem a single layer cannot solve. */
static void build_xor(builder *b) {
  input(b, 1, (int64_t[]){2});
  place(b, 0, 0, 0, 0, dense(b, 2, 4));
  place(b, 0, 0, 1, 0, layer(b, "tanh"));
  place(b, 0, 0, 2, 0, dense(b, 4, 1));
  place(b, 0, 0, 3, 0, layer(b, "sigmoid"));
}

/* Two interleaved spirals: two rows of the grid, the empty last slot passes through. */
static void build_spiral(builder *b) {
  input(b, 1, (int64_t[]){2});
  place(b, 0, 0, 0, 0, dense(b, 2, 16));
  place(b, 0, 0, 1, 0, layer(b, "relu"));
  place(b, 0, 0, 2, 0, dense(b, 16, 16));
  place(b, 0, 1, 0, 0, layer(b, "relu"));
  place(b, 0, 1, 1, 0, dense(b, 16, 2));
}

/*
 * Hops: the spine runs through both layers of the grid; two remote links
 * jump across it. A skip link adds the first block's activations to a layer
 * on the far side (residual style); a second one concatenates the first
 * projection onto the input of the head in the back corner.
 */
static void build_hop(builder *b) {
  input(b, 1, (int64_t[]){8});
  place(b, 0, 0, 0, 0, dense(b, 8, 16));
  place(b, 0, 0, 1, 0, layer(b, "relu"));
  place(b, 0, 0, 2, 0, dense(b, 16, 16));
  place(b, 0, 1, 0, 0, layer(b, "tanh"));
  place(b, 1, 0, 1, 0, dense(b, 16, 16));
  place(b, 1, 1, 0, 0, layer(b, "relu"));
  place(b, 1, 1, 2, 0, dense(b, 32, 4));
  add_link(b, (loom_coord){0, 0, 1, 0}, (loom_coord){1, 0, 1, 0}, LOOM_MERGE_ADD);
  add_link(b, (loom_coord){0, 0, 0, 0}, (loom_coord){1, 1, 2, 0}, LOOM_MERGE_CONCAT);
}

#define MOE_EXPERTS 4
#define MOE_HEADS 2 /* routing heads: each mixes its own half of the 8 features */

/*
 * Mixture of experts: a `parallel` container in route mode. Its gate is a
 * dense layer followed by a grid softmax of MOE_HEADS rows × MOE_EXPERTS
 * columns: each row is one routing head's probability over the experts. Head
 * h mixes the h-th half of the experts' outputs by its row, per sample. Gate
 * and experts train together, so the gate learns which expert suits which
 * part of the input space.
 */
static void build_moe(builder *b) {
  input(b, 1, (int64_t[]){4});
  place(b, 0, 0, 0, 0, dense(b, 4, 8));
  place(b, 0, 0, 1, 0, layer(b, "relu"));
  loom_layer *moe = layer(b, "parallel");
  set_enum(b, moe, "combine", "route");
  for (int i = 0; i < MOE_EXPERTS; i++) add_child(b, moe, dense(b, 8, 8));
  if (!b->rc) {
    loom_layer *gate = layer(b, "sequential");
    add_child(b, gate, dense(b, 8, MOE_HEADS * MOE_EXPERTS));
    loom_layer *router = layer(b, "grid_softmax");
    set_int(b, router, "rows", MOE_HEADS);
    set_int(b, router, "cols", MOE_EXPERTS);
    add_child(b, gate, router);
    if (b->rc) {
      loom_layer_free(gate);
    } else {
      b->rc = loom_layer_set_gate(moe, gate, b->err);
      if (b->rc) loom_layer_free(gate);
    }
  }
  place(b, 0, 1, 0, 0, moe);
  place(b, 0, 1, 1, 0, layer(b, "relu"));
  place(b, 0, 1, 2, 0, dense(b, 8, 3));
}

/* A small CNN for 8×8 digit images (1 channel): two convolutions, then a
 * dense layer over the flattened 8×4×4 feature maps gives 10 logits. */
static void build_cnn(builder *b) {
  input(b, 3, (int64_t[]){1, 8, 8});
  place(b, 0, 0, 0, 0, conv2d(b, 1, 4, 3, 1, 1));
  place(b, 0, 0, 1, 0, layer(b, "relu"));
  place(b, 0, 0, 2, 0, conv2d(b, 4, 8, 3, 2, 1));
  place(b, 0, 0, 3, 0, layer(b, "relu"));
  place(b, 0, 0, 4, 0, dense(b, 128, 10));
}

/*
 * Feedback loop (systolic only): dense A → tanh B → dense head, and a
 * feedback link B → A (add) that feeds B's previous-tick output back into
 * A's input. A's weight matrix is scaled so that its largest row of absolute
 * values sums to 1/2: tanh is 1-Lipschitz, so over two ticks the loop maps
 * any difference of A's outputs to at most half of it (max norm). With a
 * held input A therefore converges geometrically to the loop's fixed point
 * a* = W·(x + tanh(a*)) + b, its error at least halving every two ticks, and
 * the head follows two ticks later (docs/network.md).
 */
static void build_feedback(builder *b) {
  input(b, 1, (int64_t[]){4});
  if (!b->rc) b->rc = loom_net_set_execution(b->net, LOOM_EXEC_SYSTOLIC, b->err);
  loom_layer *a = dense(b, 4, 4);
  if (!b->rc) b->rc = loom_layer_build(a, &(loom_shape){.rank = 1, .d = {4}}, EXAMPLE_SEED, b->err);
  if (!b->rc) {
    loom_weights *w = loom_layer_weights(a, 0);
    float *m = loom_weights_master(w);
    double widest = 0.0;
    for (int r = 0; r < 4; r++) {
      double sum = 0.0;
      for (int c = 0; c < 4; c++) sum += m[r * 4 + c] < 0 ? -(double)m[r * 4 + c] : (double)m[r * 4 + c];
      if (sum > widest) widest = sum;
    }
    for (int i = 0; i < 16 && widest > 0.0; i++) m[i] = (float)((double)m[i] * 0.5 / widest);
    loom_weights_touch(w);
  }
  place(b, 0, 0, 0, 0, a);
  place(b, 0, 0, 1, 0, layer(b, "tanh"));
  place(b, 0, 0, 2, 0, dense(b, 4, 2));
  add_link(b, (loom_coord){0, 0, 1, 0}, (loom_coord){0, 0, 0, 0}, LOOM_MERGE_ADD);
}

/*
 * TensorFlow Playground's default network: two inputs, hidden layers of 4
 * and 2 tanh units, one output (a logit here: the loss picks binary
 * cross-entropy for one output and two classes). `hidden` is the dtype of
 * the two hidden dense layers: int4 trains quantization-aware (the forward
 * pass sees int4 weights, the float32 master takes the update), the output
 * layer stays float32 as the Playground's does.
 */
static void build_playground_net(builder *b, loom_dtype hidden) {
  input(b, 1, (int64_t[]){2});
  loom_layer *h1 = dense(b, 2, 4), *h2 = dense(b, 4, 2);
  if (!b->rc && h1) b->rc = loom_layer_set_dtype(h1, hidden, b->err);
  if (!b->rc && h2) b->rc = loom_layer_set_dtype(h2, hidden, b->err);
  place(b, 0, 0, 0, 0, h1);
  place(b, 0, 0, 1, 0, layer(b, "tanh"));
  place(b, 0, 0, 2, 0, h2);
  place(b, 0, 0, 3, 0, layer(b, "tanh"));
  place(b, 0, 0, 4, 0, dense(b, 2, 1));
}

static void build_playground(builder *b) { build_playground_net(b, LOOM_DTYPE_FLOAT32); }
static void build_playground_int4(builder *b) { build_playground_net(b, LOOM_DTYPE_INT4); }

/*
 * The Playground's net folded over two grid rows, with a remote link the
 * Playground cannot draw: the first hidden layer's 4 tanh units are
 * concatenated onto the output layer's input, so the output sees both the
 * 2 deep features and the 4 shallow ones (6 inputs).
 */
static void build_playground_skip(builder *b) {
  input(b, 1, (int64_t[]){2});
  place(b, 0, 0, 0, 0, dense(b, 2, 4));
  place(b, 0, 0, 1, 0, layer(b, "tanh"));
  place(b, 0, 0, 2, 0, dense(b, 4, 2));
  place(b, 0, 1, 0, 0, layer(b, "tanh"));
  place(b, 0, 1, 2, 0, dense(b, 6, 1));
  add_link(b, (loom_coord){0, 0, 1, 0}, (loom_coord){0, 1, 2, 0}, LOOM_MERGE_CONCAT);
}

/* The Playground's data and rates: concentric circles, half of 500 points
 * held out for testing, plain SGD at 0.03 on batches of 10. */
#define PLAYGROUND_SETTINGS                                                                                          \
  {"data.source=circles", "data.samples=500", "data.noise=0.1", "data.test_fraction=0.5", "optimizer=sgd",           \
   "optimizer.lr=0.03", "batch=10", "epochs=200"}

/* The character-level text task's vocabulary: the distinct bytes of data/datasets/loom-tale.txt. */
#define TALE_VOCABULARY 42
#define TALE_WINDOW 16

/* A pre-norm transformer block as one container at one coordinate:
 * x + attention(rmsnorm(x)), then h + swiglu(rmsnorm(h)). */
static loom_layer *transformer_block(builder *b, int64_t d) {
  loom_layer *block = layer(b, "sequential");
  loom_layer *att_res = layer(b, "residual"), *ffn_res = layer(b, "residual");
  add_child(b, att_res, layer(b, "rmsnorm"));
  loom_layer *att = layer(b, "attention");
  set_int(b, att, "d_model", d);
  set_int(b, att, "heads", 4);
  set_int(b, att, "kv_heads", 2);
  set_enum(b, att, "rope", "half");
  add_child(b, att_res, att);
  add_child(b, ffn_res, layer(b, "rmsnorm"));
  loom_layer *ffn = layer(b, "swiglu");
  set_int(b, ffn, "d_model", d);
  set_int(b, ffn, "hidden", 2 * d);
  add_child(b, ffn_res, ffn);
  add_child(b, block, att_res);
  add_child(b, block, ffn_res);
  return block;
}

/* A tiny causal language model on the tale: one-hot bytes → dense embedding →
 * transformer block → rmsnorm → dense logits over the vocabulary, per position. */
static void build_transformer(builder *b) {
  const int64_t d = 32;
  input(b, 2, (int64_t[]){TALE_WINDOW, TALE_VOCABULARY});
  place(b, 0, 0, 0, 0, dense(b, TALE_VOCABULARY, d));
  place(b, 0, 0, 1, 0, transformer_block(b, d));
  place(b, 0, 0, 2, 0, layer(b, "rmsnorm"));
  place(b, 0, 0, 3, 0, dense(b, d, TALE_VOCABULARY));
}

static loom_layer *lstm(builder *b, int64_t in, int64_t hidden) {
  loom_layer *l = layer(b, "lstm");
  set_int(b, l, "input_size", in);
  set_int(b, l, "hidden_size", hidden);
  set_enum(b, l, "output", "last");
  return l;
}

/*
 * The seeds' multi-agent network: AGENTS agents each pick one of ACTIONS
 * actions after watching a sequence. A dense layer embeds every step, an
 * LSTM reads the steps and keeps its last state, a dense layer gives every
 * agent its action scores, and a grid softmax (one row per agent) turns each
 * row into that agent's distribution. The data are the copy task with
 * AGENTS symbols of ACTIONS kinds: agent i must name the i-th symbol seen
 * before the delimiter, so the LSTM has to remember the whole prefix. The
 * probabilities train through the multi-head NLL loss.
 */
#define AGENTS 3
#define ACTIONS 4
static void build_multi_agent(builder *b) {
  /* the copy task's samples: 2·length + 1 steps of symbols + 2 one-hot tokens */
  input(b, 2, (int64_t[]){2 * AGENTS + 1, ACTIONS + 2});
  place(b, 0, 0, 0, 0, dense(b, ACTIONS + 2, 16));
  place(b, 0, 0, 1, 0, lstm(b, 16, 32));
  place(b, 0, 0, 2, 0, dense(b, 32, AGENTS * ACTIONS));
  loom_layer *choose = layer(b, "grid_softmax");
  set_int(b, choose, "rows", AGENTS);
  set_int(b, choose, "cols", ACTIONS);
  place(b, 0, 0, 3, 0, choose);
}

/*
 * The seeds' multi-modal network: one parallel container reads an 8×8 digit
 * three ways at once and concatenates what each branch makes of it:
 *  - as an image: conv2d 1→4 (3×3, stride 2) → relu → dense 64→16 (the
 *    [8×8] input is one channel without its axis, see conv.c);
 *  - as a sequence of 8 rows read top to bottom: LSTM 8→16, last state;
 *  - as 8 tokens that look at each other: dense 8→16 per row → attention
 *    (2 heads, not causal) → dense 128→16.
 * A relu and a dense layer then map the 48 features to the 10 digits.
 */
static void build_multi_modal(builder *b) {
  input(b, 2, (int64_t[]){8, 8});
  loom_layer *views = layer(b, "parallel");
  set_enum(b, views, "combine", "concat");
  loom_layer *image = layer(b, "sequential");
  add_child(b, image, conv2d(b, 1, 4, 3, 2, 1));
  add_child(b, image, layer(b, "relu"));
  add_child(b, image, dense(b, 64, 16));
  add_child(b, views, image);
  add_child(b, views, lstm(b, 8, 16));
  loom_layer *tokens = layer(b, "sequential");
  add_child(b, tokens, dense(b, 8, 16));
  loom_layer *att = layer(b, "attention");
  set_int(b, att, "d_model", 16);
  set_int(b, att, "heads", 2);
  if (!b->rc && att) b->rc = loom_layer_set_bool(att, "causal", false, b->err);
  add_child(b, tokens, att);
  add_child(b, tokens, dense(b, 128, 16));
  add_child(b, views, tokens);
  place(b, 0, 0, 0, 0, views);
  place(b, 0, 0, 1, 0, layer(b, "relu"));
  place(b, 0, 0, 2, 0, dense(b, 48, 10));
}

typedef struct {
  const char *name;
  const char *title;       /* N_() */
  const char *description; /* N_() */
  int depth, rows, cols, layers_per_cell;
  void (*build)(builder *b);
  /* The training settings it opens with, as "field=value" pairs for
   * loom_train_settings_set_field (over loom train's defaults): data that
   * fit it, and rates that make the curve move within seconds. */
  const char *const settings[8];
} example;

static const example examples[] = {
  {"xor", N_("XOR"),
   N_("A 2-4-1 network with tanh and sigmoid learns exclusive or: the smallest problem that needs a hidden layer."),
   1, 1, 4, 1, build_xor, {"data.source=xor", "optimizer.lr=0.05", "batch=16", "epochs=30"}},
  {"spiral", N_("Two spirals"),
   N_("A small ReLU network separates two interleaved spirals; shows layers laid out over grid rows and an empty "
      "slot passing data through."),
   1, 2, 3, 1, build_spiral, {"data.source=spiral", "optimizer.lr=0.02", "batch=16", "epochs=40"}},
  {"hop", N_("Hops across the grid"),
   N_("Remote links carry signals across a 3-D grid: a skip link adds earlier activations, another concatenates "
      "them onto a distant layer's input."),
   2, 2, 3, 1, build_hop,
   {"data.source=clusters", "data.noise=0.3", "optimizer.lr=0.005", "batch=16", "epochs=20"}},
  {"moe", N_("Mixture of experts"),
   N_("Four expert layers mixed per sample by a trained gate: a dense layer and a grid softmax (2 routing heads × "
      "4 experts) give each half of the features its own weights over the experts. Teaches routing: on data with "
      "distinct regimes the gate learns to send each regime to the expert that fits it."),
   1, 2, 3, 1, build_moe,
   {"data.source=clusters", "data.noise=0.6", "optimizer.lr=0.005", "batch=16", "epochs=20"}},
  {"cnn", N_("Digits CNN"),
   N_("Two convolutions and a dense layer turn an 8×8 digit image into 10 class scores."), 1, 1, 5, 1, build_cnn,
   {"data.source=digits", "optimizer.lr=0.01", "batch=32", "epochs=10"}},
  {"playground", N_("Playground"),
   N_("TensorFlow Playground's default setup: two concentric circles with noise, half of the points held out for "
      "testing, a 2-4-2-1 tanh network trained by plain SGD at a rate of 0.03 on batches of 10."),
   1, 1, 5, 1, build_playground, PLAYGROUND_SETTINGS},
  {"playground-int4", N_("Playground at int4"),
   N_("The Playground network with its hidden layers stored and computed as 4-bit integers, trained "
      "quantization-aware: each hidden weight takes one of 16 values, yet the circles separate as before."),
   1, 1, 5, 1, build_playground_int4, PLAYGROUND_SETTINGS},
  {"playground-skip", N_("Playground with a skip link"),
   N_("The Playground network folded over two grid rows, with a remote link that carries the first hidden layer's "
      "four units past the second one straight into the output layer."),
   1, 2, 3, 1, build_playground_skip, PLAYGROUND_SETTINGS},
  {"feedback", N_("Feedback loop"),
   N_("A systolic network whose tanh layer feeds its previous output back into the dense layer before it; with a "
      "held input the loop settles to a fixed point, its error halving at least every two ticks. It runs only "
      "systolically (loom tick, the systolic mode)."),
   1, 1, 3, 1, build_feedback,
   {"data.source=clusters", "data.noise=0.3", "optimizer.lr=0.005", "batch=16", "epochs=20", "ticks=8"}},
  {"transformer", N_("Tiny transformer"),
   N_("A pre-norm transformer block (RMSNorm, causal attention with rotary positions and grouped keys, SwiGLU, two "
      "residuals) in one cell learns to predict the next character of a short tale at every position."),
   1, 1, 4, 1, build_transformer, {"data.source=text", "optimizer.lr=0.01", "batch=16", "epochs=40"}},
  {"multi-agent", N_("Multi-agent choice"),
   N_("Three agents each choose one of four actions after watching a sequence: a dense layer, an LSTM that "
      "remembers what it saw, a dense layer and a grid softmax with one row per agent. On the recall task agent i "
      "must name the i-th symbol of the sequence."),
   1, 1, 4, 1, build_multi_agent,
   {"data.source=copy", "data.length=3", "data.symbols=4", "optimizer.lr=0.01", "batch=16", "epochs=30"}},
  {"multi-modal", N_("Multi-modal views"),
   N_("One parallel container reads each digit three ways — as an image through a convolution, as a sequence of "
      "rows through an LSTM, as tokens through attention — and concatenates the three views for the classifier."),
   1, 1, 3, 1, build_multi_modal, {"data.source=digits", "optimizer.lr=0.005", "batch=32", "epochs=10"}},
};

#define N_EXAMPLES ((int)(sizeof examples / sizeof examples[0]))

LOOM_API int loom_example_count(void) { return N_EXAMPLES; }

LOOM_API const char *loom_example_name(int index) {
  return index >= 0 && index < N_EXAMPLES ? examples[index].name : NULL;
}

LOOM_API const char *loom_example_title(int index) {
  return index >= 0 && index < N_EXAMPLES ? _(examples[index].title) : NULL;
}

LOOM_API const char *loom_example_description(int index) {
  return index >= 0 && index < N_EXAMPLES ? _(examples[index].description) : NULL;
}

static const example *find_example(const char *name, loom_error *err) {
  char names[256] = "";
  for (int i = 0; i < N_EXAMPLES; i++) {
    if (name && strcmp(examples[i].name, name) == 0) return &examples[i];
    if (i) strncat(names, ", ", sizeof names - strlen(names) - 1);
    strncat(names, examples[i].name, sizeof names - strlen(names) - 1);
  }
  loom_error_set(err, LOOM_ERR_INVALID, _("unknown example “%s” (expected one of: %s)"), name ? name : "(null)",
                 names);
  return NULL;
}

LOOM_API int loom_example_settings(const char *name, loom_train_settings **out, loom_error *err) {
  if (out) *out = NULL;
  if (!out) return loom_error_set(err, LOOM_ERR_INVALID, _("no result pointer given"));
  const example *ex = find_example(name, err);
  if (!ex) return err ? err->code : LOOM_ERR_INVALID;
  loom_train_settings *s = loom_train_settings_new();
  if (!s) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory"));
  for (int i = 0; i < 8 && ex->settings[i]; i++) {
    char field[64];
    const char *eq = strchr(ex->settings[i], '=');
    size_t n = eq ? (size_t)(eq - ex->settings[i]) : 0;
    int rc = LOOM_ERR_INVALID;
    if (n > 0 && n < sizeof field) {
      memcpy(field, ex->settings[i], n);
      field[n] = '\0';
      rc = loom_train_settings_set_field(s, field, eq + 1, err);
    }
    if (rc) {
      /* a defect of the table itself; the tests keep this from happening */
      loom_error_prefix(err, _("example “%s”"), ex->name);
      loom_train_settings_free(s);
      return rc;
    }
  }
  *out = s;
  return LOOM_OK;
}

LOOM_API int loom_example_build(const char *name, loom_net **out, loom_error *err) {
  if (out) *out = NULL;
  if (!out) return loom_error_set(err, LOOM_ERR_INVALID, _("no result pointer given"));
  const example *ex = find_example(name, err);
  if (!ex) return err ? err->code : LOOM_ERR_INVALID;
  builder b = {.err = err};
  b.net = loom_net_new(ex->depth, ex->rows, ex->cols, ex->layers_per_cell, err);
  if (!b.net) return err ? err->code : LOOM_ERR_NOMEM;
  ex->build(&b);
  if (!b.rc) {
    loom_diag *diags = NULL;
    int n = loom_net_infer_shapes(b.net, EXAMPLE_SEED, &diags);
    if (n > 0) {
      /* A defect of the example itself; the tests keep this from happening. */
      b.rc = loom_error_set(err, diags[0].code, _("example “%s”: %s"), ex->name, diags[0].message);
    } else if (n < 0) {
      b.rc = loom_error_set(err, LOOM_ERR_NOMEM, _("example “%s”: shape inference failed"), ex->name);
    }
    free(diags);
  } else {
    loom_error_prefix(err, _("example “%s”"), ex->name);
  }
  if (b.rc) {
    loom_net_free(b.net);
    return b.rc;
  }
  *out = b.net;
  return LOOM_OK;
}
