/* The undo model: commands on a loom_net and the stack that runs them. */
#include "loom-commands.h"

#include "loom-commands-private.h"
#include "loom-format-private.h"

#include <glib/gi18n-lib.h>
#include <string.h>

G_DEFINE_QUARK(loom-command-error-quark, loom_command_error)

typedef enum {
  CMD_PLACE,
  CMD_CLEAR,
  CMD_MOVE,
  CMD_SET_PARAM,
  CMD_SET_FLOATS,
  CMD_SET_DTYPE,
  CMD_SET_ENABLED,
  CMD_ADD_LINK,
  CMD_REMOVE_LINK,
  CMD_SET_LINK_MERGE,
  CMD_RESIZE,
  CMD_INPUT_SHAPE,
  CMD_SET_EXECUTION,
  CMD_TRAINING, /* loom-commands-training.c */
} CmdKind;

/* What a slot held besides its layer: the links touching it, with their
 * positions in the net's link list (ascending), and its enabled flag. */
typedef struct {
  loom_layer *layer; /* owned while it is out of the net */
  loom_link *links;
  int *positions;
  int n_links;
  bool enabled;
} SlotState;

struct _LoomCommand {
  CmdKind kind;
  const char *label; /* N_() */
  char *label_owned; /* translated already; wins over label */
  TrainingEdit *training;
  gint64 steps_run;   /* a training result's updates, for its label */
  gboolean continues; /* loom_command_set_continues */
  loom_coord at, to;
  SlotState slot;
  /* Parameter edits: the new value until the first run, then the command
   * only swaps the layer it holds (slot.layer) with the one in the net. */
  gboolean applied_once;
  int param_index;
  loom_param_value value;
  float *floats;
  int64_t n_floats;
  loom_dtype dtype;
  gboolean enabled, old_enabled;
  loom_link link;
  int link_index;
  loom_merge merge, old_merge;
  loom_execution execution, old_execution;
  int dims[4], old_dims[4];
  loom_shape shape, old_shape;
};

static gboolean link_equal(const loom_link *a, const loom_link *b) {
  return loom_coord_equal(a->src, b->src) && loom_coord_equal(a->dst, b->dst) && a->merge == b->merge;
}

static void slot_state_clear(SlotState *s) {
  if (s->layer) loom_layer_free(s->layer);
  g_clear_pointer(&s->links, g_free);
  g_clear_pointer(&s->positions, g_free);
  s->layer = NULL;
  s->n_links = 0;
}

/*
 * Inserts links so that links[k] ends at position positions[k] (ascending)
 * of the net's list: the tail from the first position on is removed and
 * added back interleaved, since the engine only appends. On failure the
 * original list is restored.
 */
static int links_insert(loom_net *net, const loom_link *links, const int *positions, int n, loom_error *err) {
  if (n == 0) return LOOM_OK;
  int first = positions[0], count = loom_net_n_links(net);
  if (first > count) first = count;
  int n_tail = count - first;
  g_autofree loom_link *tail = g_new(loom_link, n_tail + 1);
  for (int i = 0; i < n_tail; i++) tail[i] = *loom_net_link(net, first + i);
  int rc = LOOM_OK;
  for (int i = count - 1; i >= first; i--)
    if ((rc = loom_net_remove_link(net, i, err)) < 0) return rc;

  int next_new = 0, next_tail = 0;
  for (int pos = first; next_new < n || next_tail < n_tail; pos++) {
    gboolean take_new = next_new < n && (positions[next_new] <= pos || next_tail >= n_tail);
    const loom_link *l = take_new ? &links[next_new++] : &tail[next_tail++];
    if ((rc = loom_net_add_link(net, l, err)) < 0) break;
  }
  if (rc == LOOM_OK) return LOOM_OK;
  /* Put back what was there; the error already names the refused link. */
  while (loom_net_n_links(net) > first) loom_net_remove_link(net, loom_net_n_links(net) - 1, NULL);
  for (int i = 0; i < n_tail; i++) loom_net_add_link(net, &tail[i], NULL);
  return rc;
}

static int no_layer_error(loom_coord c, loom_error *err) {
  char where[64];
  return loom_error_set(err, LOOM_ERR_INVALID, _("There is no layer at %s"), loom_coord_format(c, where, sizeof where));
}

/* Takes the layer at @c out of the net, remembering its links and flag. */
static int slot_take(loom_net *net, loom_coord c, SlotState *s, loom_error *err) {
  if (!loom_net_layer_at(net, c)) return no_layer_error(c, err);
  g_clear_pointer(&s->links, g_free);
  g_clear_pointer(&s->positions, g_free);
  int count = loom_net_n_links(net);
  s->links = g_new(loom_link, count + 1);
  s->positions = g_new(int, count + 1);
  s->n_links = 0;
  for (int i = 0; i < count; i++) {
    const loom_link *l = loom_net_link(net, i);
    if (loom_coord_equal(l->src, c) || loom_coord_equal(l->dst, c)) {
      s->links[s->n_links] = *l;
      s->positions[s->n_links++] = i;
    }
  }
  s->enabled = loom_net_is_enabled(net, c);
  g_autofree loom_link *removed = g_new(loom_link, count + 1);
  int n_removed = count;
  s->layer = loom_net_take(net, c, removed, &n_removed);
  return LOOM_OK;
}

/* Puts s->layer back at @c with its links (at their old positions) and flag. */
static int slot_put(loom_net *net, loom_coord c, SlotState *s, loom_error *err) {
  int rc = loom_net_place(net, c, s->layer, err);
  if (rc < 0) return rc;
  loom_layer *placed = s->layer;
  s->layer = NULL;
  if ((rc = links_insert(net, s->links, s->positions, s->n_links, err)) == LOOM_OK && !s->enabled)
    rc = loom_net_set_enabled(net, c, false, err);
  if (rc < 0) {
    s->layer = loom_net_take(net, c, NULL, NULL);
    g_warn_if_fail(s->layer == placed);
    return rc;
  }
  return LOOM_OK;
}

/* Replaces the layer at @c with *layer (keeping links and flag); *layer
 * receives the layer that was there. */
static int slot_swap(loom_net *net, loom_coord c, loom_layer **layer, loom_error *err) {
  SlotState s = {0};
  int rc = slot_take(net, c, &s, err);
  if (rc < 0) return rc;
  loom_layer *old = s.layer;
  s.layer = *layer;
  if ((rc = slot_put(net, c, &s, err)) < 0) {
    s.layer = old;
    if (slot_put(net, c, &s, NULL) < 0) loom_layer_free(old); /* cannot happen: it was just there */
    s.layer = NULL;
    slot_state_clear(&s);
    return rc;
  }
  *layer = old;
  slot_state_clear(&s);
  return LOOM_OK;
}

/* Replaces link @index by *with, keeping its position. */
static int link_replace(loom_net *net, int index, const loom_link *with, loom_error *err) {
  const loom_link *cur = loom_net_link(net, index);
  if (!cur) return loom_error_set(err, LOOM_ERR_RANGE, _("There is no link number %d"), index + 1);
  loom_link old = *cur;
  int rc = loom_net_remove_link(net, index, err);
  if (rc < 0) return rc;
  if ((rc = links_insert(net, with, &index, 1, err)) < 0) links_insert(net, &old, &index, 1, NULL);
  return rc;
}

/* The edited copy a parameter command puts into the net on its first run. */
static int make_edited(LoomCommand *cmd, loom_net *net, loom_layer **out, loom_error *err) {
  loom_layer *cur = loom_net_layer_at(net, cmd->at);
  if (!cur) return no_layer_error(cmd->at, err);
  loom_layer *copy = loom_layer_clone(cur, err);
  if (!copy) return err->code;
  int rc = LOOM_OK;
  if (cmd->kind == CMD_SET_PARAM) {
    rc = loom_layer_set_value(copy, cmd->param_index, &cmd->value, err);
  } else if (cmd->kind == CMD_SET_FLOATS) {
    const loom_param_spec *spec = loom_layer_type_param(loom_layer_get_type(copy), cmd->param_index);
    rc = spec ? loom_layer_set_floats(copy, spec->name, cmd->floats, cmd->n_floats, err)
              : loom_error_set(err, LOOM_ERR_RANGE, _("The layer has no parameter number %d"), cmd->param_index + 1);
  } else {
    rc = loom_layer_set_dtype(copy, cmd->dtype, err);
  }
  if (rc < 0) {
    loom_layer_free(copy);
    return rc;
  }
  *out = copy;
  return LOOM_OK;
}

static int find_link(loom_net *net, const loom_link *link) {
  for (int i = loom_net_n_links(net) - 1; i >= 0; i--)
    if (link_equal(loom_net_link(net, i), link)) return i;
  return -1;
}

static int cmd_apply(LoomCommand *cmd, loom_net *net, LoomTrainingExtras *extras, gboolean undo, loom_error *err) {
  switch (cmd->kind) {
  case CMD_TRAINING:
    return training_edit_swap(cmd->training, net, extras, err);
  case CMD_PLACE:
    return undo ? slot_take(net, cmd->at, &cmd->slot, err) : slot_put(net, cmd->at, &cmd->slot, err);
  case CMD_CLEAR:
    return undo ? slot_put(net, cmd->at, &cmd->slot, err) : slot_take(net, cmd->at, &cmd->slot, err);
  case CMD_MOVE:
    return undo ? loom_net_move(net, cmd->to, cmd->at, err) : loom_net_move(net, cmd->at, cmd->to, err);
  case CMD_SET_PARAM:
  case CMD_SET_FLOATS:
  case CMD_SET_DTYPE:
    if (!cmd->applied_once) {
      int rc = make_edited(cmd, net, &cmd->slot.layer, err);
      if (rc < 0) return rc;
      if ((rc = slot_swap(net, cmd->at, &cmd->slot.layer, err)) < 0) {
        g_clear_pointer(&cmd->slot.layer, loom_layer_free);
        return rc;
      }
      cmd->applied_once = TRUE;
      return LOOM_OK;
    }
    return slot_swap(net, cmd->at, &cmd->slot.layer, err);
  case CMD_SET_EXECUTION:
    if (!undo) cmd->old_execution = loom_net_execution(net);
    return loom_net_set_execution(net, undo ? cmd->old_execution : cmd->execution, err);
  case CMD_SET_ENABLED:
    if (!undo) {
      if (!loom_net_layer_at(net, cmd->at)) return no_layer_error(cmd->at, err);
      cmd->old_enabled = loom_net_is_enabled(net, cmd->at);
    }
    return loom_net_set_enabled(net, cmd->at, undo ? cmd->old_enabled : cmd->enabled, err);
  case CMD_ADD_LINK:
    if (undo) {
      int i = find_link(net, &cmd->link);
      if (i < 0) return loom_error_set(err, LOOM_ERR_INVALID, _("The link to undo is no longer in the network"));
      return loom_net_remove_link(net, i, err);
    }
    return loom_net_add_link(net, &cmd->link, err);
  case CMD_REMOVE_LINK:
    if (undo) return links_insert(net, &cmd->link, &cmd->link_index, 1, err);
    if (!loom_net_link(net, cmd->link_index))
      return loom_error_set(err, LOOM_ERR_RANGE, _("There is no link number %d"), cmd->link_index + 1);
    cmd->link = *loom_net_link(net, cmd->link_index);
    return loom_net_remove_link(net, cmd->link_index, err);
  case CMD_SET_LINK_MERGE: {
    const loom_link *cur = loom_net_link(net, cmd->link_index);
    if (!cur) return loom_error_set(err, LOOM_ERR_RANGE, _("There is no link number %d"), cmd->link_index + 1);
    loom_link with = *cur;
    if (!undo) cmd->old_merge = cur->merge;
    with.merge = undo ? cmd->old_merge : cmd->merge;
    return link_replace(net, cmd->link_index, &with, err);
  }
  case CMD_RESIZE: {
    if (!undo) {
      cmd->old_dims[0] = loom_net_depth(net);
      cmd->old_dims[1] = loom_net_rows(net);
      cmd->old_dims[2] = loom_net_cols(net);
      cmd->old_dims[3] = loom_net_layers_per_cell(net);
    }
    const int *d = undo ? cmd->old_dims : cmd->dims;
    return loom_net_resize(net, d[0], d[1], d[2], d[3], err);
  }
  case CMD_INPUT_SHAPE:
    if (!undo) cmd->old_shape = loom_net_input_shape(net);
    return loom_net_set_input_shape(net, undo ? &cmd->old_shape : &cmd->shape, err);
  }
  g_return_val_if_reached(LOOM_ERR_INVALID);
}

static LoomCommand *cmd_new(CmdKind kind, const char *label) {
  LoomCommand *cmd = g_new0(LoomCommand, 1);
  cmd->kind = kind;
  cmd->label = label;
  return cmd;
}

LoomCommand *loom_command_new_place_layer(loom_coord at, loom_layer *layer) {
  g_return_val_if_fail(layer != NULL, NULL);
  LoomCommand *cmd = cmd_new(CMD_PLACE, N_("Place Layer"));
  cmd->at = at;
  cmd->slot.layer = layer;
  cmd->slot.enabled = true;
  return cmd;
}

LoomCommand *loom_command_new_clear_slot(loom_coord at) {
  LoomCommand *cmd = cmd_new(CMD_CLEAR, N_("Clear Slot"));
  cmd->at = at;
  return cmd;
}

LoomCommand *loom_command_new_move_layer(loom_coord from, loom_coord to) {
  LoomCommand *cmd = cmd_new(CMD_MOVE, N_("Move Layer"));
  cmd->at = from;
  cmd->to = to;
  return cmd;
}

LoomCommand *loom_command_new_set_param(loom_coord at, int param_index, const loom_param_value *value) {
  g_return_val_if_fail(value != NULL && param_index >= 0, NULL);
  LoomCommand *cmd = cmd_new(CMD_SET_PARAM, N_("Change Parameter"));
  cmd->at = at;
  cmd->param_index = param_index;
  cmd->value = *value;
  return cmd;
}

LoomCommand *loom_command_new_set_floats(loom_coord at, int param_index, const float *values, int64_t n) {
  g_return_val_if_fail(param_index >= 0 && n >= 0 && (values != NULL || n == 0), NULL);
  LoomCommand *cmd = cmd_new(CMD_SET_FLOATS, N_("Change Parameter"));
  cmd->at = at;
  cmd->param_index = param_index;
  cmd->floats = n ? g_memdup2(values, (gsize)n * sizeof *values) : NULL;
  cmd->n_floats = n;
  return cmd;
}

LoomCommand *loom_command_new_set_dtype(loom_coord at, loom_dtype dtype) {
  g_return_val_if_fail(dtype >= 0 && dtype < LOOM_DTYPE_COUNT, NULL);
  LoomCommand *cmd = cmd_new(CMD_SET_DTYPE, N_("Change Data Type"));
  cmd->at = at;
  cmd->dtype = dtype;
  return cmd;
}

LoomCommand *loom_command_new_set_enabled(loom_coord at, gboolean enabled) {
  LoomCommand *cmd = cmd_new(CMD_SET_ENABLED, enabled ? N_("Enable Layer") : N_("Disable Layer"));
  cmd->at = at;
  cmd->enabled = enabled;
  return cmd;
}

LoomCommand *loom_command_new_set_execution(loom_execution mode) {
  LoomCommand *cmd = cmd_new(CMD_SET_EXECUTION, mode == LOOM_EXEC_SYSTOLIC ? N_("Run Systolically") : N_("Run Feed-Forward"));
  cmd->execution = mode;
  return cmd;
}

LoomCommand *loom_command_new_add_link(const loom_link *link) {
  g_return_val_if_fail(link != NULL, NULL);
  LoomCommand *cmd = cmd_new(CMD_ADD_LINK, N_("Add Link"));
  cmd->link = *link;
  return cmd;
}

LoomCommand *loom_command_new_remove_link(int link_index) {
  g_return_val_if_fail(link_index >= 0, NULL);
  LoomCommand *cmd = cmd_new(CMD_REMOVE_LINK, N_("Remove Link"));
  cmd->link_index = link_index;
  return cmd;
}

LoomCommand *loom_command_new_set_link_merge(int link_index, loom_merge merge) {
  g_return_val_if_fail(link_index >= 0, NULL);
  LoomCommand *cmd = cmd_new(CMD_SET_LINK_MERGE, N_("Change Merge Mode"));
  cmd->link_index = link_index;
  cmd->merge = merge;
  return cmd;
}

static void label_training_run(LoomCommand *cmd) {
  g_autofree char *count = loom_format_count(cmd->steps_run);
  g_free(cmd->label_owned);
  cmd->label_owned = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "Training: %s step", "Training: %s steps",
                                                 (gulong)CLAMP(cmd->steps_run, 0, G_MAXLONG)),
                                     count);
}

LoomCommand *loom_command_new_training_result(const loom_net *trained, GBytes *state, gint64 steps,
                                              gint64 steps_run, const char *label) {
  g_return_val_if_fail(trained != NULL, NULL);
  TrainingEdit *edit = training_edit_new_result(trained, state, steps);
  if (!edit) return NULL;
  LoomCommand *cmd = cmd_new(CMD_TRAINING, NULL);
  cmd->training = edit;
  cmd->steps_run = steps_run;
  if (label) {
    cmd->label_owned = g_strdup(label);
    return cmd;
  }
  label_training_run(cmd);
  return cmd;
}

void loom_command_set_continues(LoomCommand *cmd) {
  g_return_if_fail(cmd != NULL && cmd->kind == CMD_TRAINING);
  cmd->continues = TRUE;
}

LoomCommand *loom_command_new_set_training_settings(const loom_train_settings *settings) {
  g_return_val_if_fail(settings != NULL, NULL);
  TrainingEdit *edit = training_edit_new_settings(settings);
  if (!edit) return NULL;
  LoomCommand *cmd = cmd_new(CMD_TRAINING, N_("Change Training Settings"));
  cmd->training = edit;
  return cmd;
}

LoomCommand *loom_command_new_resize_grid(int depth, int rows, int cols, int layers_per_cell) {
  LoomCommand *cmd = cmd_new(CMD_RESIZE, N_("Resize Grid"));
  cmd->dims[0] = depth;
  cmd->dims[1] = rows;
  cmd->dims[2] = cols;
  cmd->dims[3] = layers_per_cell;
  return cmd;
}

LoomCommand *loom_command_new_set_input_shape(const loom_shape *shape) {
  g_return_val_if_fail(shape != NULL, NULL);
  LoomCommand *cmd = cmd_new(CMD_INPUT_SHAPE, N_("Change Input Shape"));
  cmd->shape = *shape;
  return cmd;
}

void loom_command_free(LoomCommand *cmd) {
  if (!cmd) return;
  slot_state_clear(&cmd->slot);
  g_free(cmd->floats);
  g_free(cmd->label_owned);
  training_edit_free(cmd->training);
  g_free(cmd);
}

const char *loom_command_get_label(const LoomCommand *cmd) {
  g_return_val_if_fail(cmd != NULL, NULL);
  return cmd->label_owned ? cmd->label_owned : _(cmd->label);
}

/* ---- the stack --------------------------------------------------------- */

struct _LoomCommandStack {
  GObject parent_instance;
  loom_net *net;
  LoomTrainingExtras *extras;
  GPtrArray *commands; /* LoomCommand*; [0, index) are applied */
  guint index;
  gint64 clean_index; /* -1: the saved state is no longer reachable */
  guint64 revision; /* counts changes of the content: push, undo, redo, reset */
};

G_DEFINE_FINAL_TYPE(LoomCommandStack, loom_command_stack, G_TYPE_OBJECT)

enum { PROP_0, PROP_CAN_UNDO, PROP_CAN_REDO, PROP_DIRTY, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

typedef struct {
  gboolean can_undo, can_redo, dirty;
} StackFlags;

static StackFlags stack_flags(LoomCommandStack *self) {
  return (StackFlags){loom_command_stack_get_can_undo(self), loom_command_stack_get_can_redo(self),
                      loom_command_stack_get_dirty(self)};
}

static void stack_changed(LoomCommandStack *self, StackFlags before) {
  StackFlags after = stack_flags(self);
  if (before.can_undo != after.can_undo) g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_CAN_UNDO]);
  if (before.can_redo != after.can_redo) g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_CAN_REDO]);
  if (before.dirty != after.dirty) g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DIRTY]);
  g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
}

static gboolean set_error(GError **error, const loom_error *e) {
  g_set_error_literal(error, LOOM_COMMAND_ERROR, e->code, e->message);
  return FALSE;
}

static void loom_command_stack_finalize(GObject *object) {
  LoomCommandStack *self = LOOM_COMMAND_STACK(object);
  g_ptr_array_unref(self->commands);
  G_OBJECT_CLASS(loom_command_stack_parent_class)->finalize(object);
}

static void loom_command_stack_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomCommandStack *self = LOOM_COMMAND_STACK(object);
  switch (prop_id) {
  case PROP_CAN_UNDO: g_value_set_boolean(value, loom_command_stack_get_can_undo(self)); break;
  case PROP_CAN_REDO: g_value_set_boolean(value, loom_command_stack_get_can_redo(self)); break;
  case PROP_DIRTY: g_value_set_boolean(value, loom_command_stack_get_dirty(self)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_command_stack_class_init(LoomCommandStackClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->finalize = loom_command_stack_finalize;
  object_class->get_property = loom_command_stack_get_property;

  properties[PROP_CAN_UNDO] = g_param_spec_boolean("can-undo", NULL, NULL, FALSE,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_CAN_REDO] = g_param_spec_boolean("can-redo", NULL, NULL, FALSE,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_DIRTY] = g_param_spec_boolean("dirty", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  /* After every push, undo, redo, reset or mark-clean. */
  signals[SIGNAL_CHANGED] = g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                         NULL, G_TYPE_NONE, 0);
}

static void loom_command_stack_init(LoomCommandStack *self) {
  self->commands = g_ptr_array_new_with_free_func((GDestroyNotify)loom_command_free);
}

LoomCommandStack *loom_command_stack_new(loom_net *net) {
  g_return_val_if_fail(net != NULL, NULL);
  LoomCommandStack *self = g_object_new(LOOM_TYPE_COMMAND_STACK, NULL);
  self->net = net;
  return self;
}

void loom_command_stack_set_extras(LoomCommandStack *self, LoomTrainingExtras *extras) {
  g_return_if_fail(LOOM_IS_COMMAND_STACK(self));
  self->extras = extras;
}

loom_net *loom_command_stack_get_net(LoomCommandStack *self) {
  g_return_val_if_fail(LOOM_IS_COMMAND_STACK(self), NULL);
  return self->net;
}

void loom_command_stack_reset(LoomCommandStack *self, loom_net *net) {
  g_return_if_fail(LOOM_IS_COMMAND_STACK(self) && net != NULL);
  StackFlags before = stack_flags(self);
  g_ptr_array_set_size(self->commands, 0);
  self->net = net;
  self->index = 0;
  self->clean_index = 0;
  self->revision++;
  stack_changed(self, before);
}

gboolean loom_command_stack_push(LoomCommandStack *self, LoomCommand *cmd, GError **error) {
  g_return_val_if_fail(LOOM_IS_COMMAND_STACK(self), FALSE);
  g_return_val_if_fail(cmd != NULL, FALSE);
  loom_error e = {0};
  if (cmd_apply(cmd, self->net, self->extras, FALSE, &e) < 0) {
    loom_command_free(cmd);
    return set_error(error, &e);
  }
  StackFlags before = stack_flags(self);
  LoomCommand *top = self->index > 0 ? g_ptr_array_index(self->commands, self->index - 1) : NULL;
  if (cmd->continues && top && top->continues && self->index == self->commands->len &&
      self->clean_index != (gint64)self->index) {
    /* top still holds the state before its run; cmd holds the one between
     * the runs, which no undo step reaches any more. */
    top->steps_run += cmd->steps_run;
    label_training_run(top);
    loom_command_free(cmd);
    self->revision++;
    stack_changed(self, before);
    return TRUE;
  }
  if (self->clean_index > (gint64)self->index) self->clean_index = -1;
  g_ptr_array_set_size(self->commands, self->index);
  g_ptr_array_add(self->commands, cmd);
  self->index++;
  self->revision++;
  stack_changed(self, before);
  return TRUE;
}

gboolean loom_command_stack_undo(LoomCommandStack *self, GError **error) {
  g_return_val_if_fail(LOOM_IS_COMMAND_STACK(self), FALSE);
  if (self->index == 0) {
    g_set_error_literal(error, LOOM_COMMAND_ERROR, LOOM_ERR_INVALID, _("There is nothing to undo"));
    return FALSE;
  }
  loom_error e = {0};
  if (cmd_apply(g_ptr_array_index(self->commands, self->index - 1), self->net, self->extras, TRUE, &e) < 0)
    return set_error(error, &e);
  StackFlags before = stack_flags(self);
  self->index--;
  self->revision++;
  stack_changed(self, before);
  return TRUE;
}

gboolean loom_command_stack_redo(LoomCommandStack *self, GError **error) {
  g_return_val_if_fail(LOOM_IS_COMMAND_STACK(self), FALSE);
  if (self->index >= self->commands->len) {
    g_set_error_literal(error, LOOM_COMMAND_ERROR, LOOM_ERR_INVALID, _("There is nothing to redo"));
    return FALSE;
  }
  loom_error e = {0};
  if (cmd_apply(g_ptr_array_index(self->commands, self->index), self->net, self->extras, FALSE, &e) < 0)
    return set_error(error, &e);
  StackFlags before = stack_flags(self);
  self->index++;
  self->revision++;
  stack_changed(self, before);
  return TRUE;
}

gboolean loom_command_stack_get_can_undo(LoomCommandStack *self) {
  g_return_val_if_fail(LOOM_IS_COMMAND_STACK(self), FALSE);
  return self->index > 0;
}

gboolean loom_command_stack_get_can_redo(LoomCommandStack *self) {
  g_return_val_if_fail(LOOM_IS_COMMAND_STACK(self), FALSE);
  return self->index < self->commands->len;
}

const char *loom_command_stack_get_undo_label(LoomCommandStack *self) {
  g_return_val_if_fail(LOOM_IS_COMMAND_STACK(self), NULL);
  return self->index > 0 ? loom_command_get_label(g_ptr_array_index(self->commands, self->index - 1)) : NULL;
}

const char *loom_command_stack_get_redo_label(LoomCommandStack *self) {
  g_return_val_if_fail(LOOM_IS_COMMAND_STACK(self), NULL);
  return self->index < self->commands->len ? loom_command_get_label(g_ptr_array_index(self->commands, self->index))
                                           : NULL;
}

guint64 loom_command_stack_get_revision(LoomCommandStack *self) {
  g_return_val_if_fail(LOOM_IS_COMMAND_STACK(self), 0);
  return self->revision;
}

void loom_command_stack_mark_clean(LoomCommandStack *self) {
  g_return_if_fail(LOOM_IS_COMMAND_STACK(self));
  StackFlags before = stack_flags(self);
  self->clean_index = self->index;
  stack_changed(self, before);
}

void loom_command_stack_mark_unsaved(LoomCommandStack *self) {
  g_return_if_fail(LOOM_IS_COMMAND_STACK(self));
  StackFlags before = stack_flags(self);
  self->clean_index = -1;
  stack_changed(self, before);
}

gboolean loom_command_stack_get_dirty(LoomCommandStack *self) {
  g_return_val_if_fail(LOOM_IS_COMMAND_STACK(self), FALSE);
  return self->clean_index != (gint64)self->index;
}
