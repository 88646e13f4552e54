/*
 * LoomTrainingForm: one AdwPreferencesGroup per part of the settings (the
 * prefix of the field's name), one row per field of the engine's table.
 */
#include "loom-training-form.h"

#include <adwaita.h>
#include <glib/gi18n.h>

typedef struct {
  LoomTrainingForm *form;
  loom_setting_info info;
  AdwActionRow *row;
  GtkWidget *editor; /* GtkDropDown, GtkSwitch or GtkEntry */
  char *error;
} FieldRow;

struct _LoomTrainingForm {
  GtkWidget parent_instance;

  GtkWidget *box;
  GPtrArray *rows;     /* FieldRow */
  GHashTable *groups;  /* prefix → AdwPreferencesGroup (borrowed) */
  loom_train_settings *settings;
  gboolean syncing;    /* editors are being set from the settings */
};

G_DEFINE_FINAL_TYPE(LoomTrainingForm, loom_training_form, GTK_TYPE_WIDGET)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void field_row_free(gpointer data) {
  FieldRow *r = data;
  g_free(r->error);
  g_free(r);
}

static FieldRow *find_row(LoomTrainingForm *self, const char *name) {
  for (guint i = 0; i < self->rows->len; i++) {
    FieldRow *r = g_ptr_array_index(self->rows, i);
    if (g_str_equal(r->info.name, name)) return r;
  }
  return NULL;
}

/* The group a field belongs to: its name's prefix; top-level fields are
 * "Training". */
static const char *group_title(const char *prefix) {
  if (g_str_equal(prefix, "data")) return _("Data");
  if (g_str_equal(prefix, "optimizer")) return _("Optimizer");
  if (g_str_equal(prefix, "schedule")) return _("Learning-Rate Schedule");
  if (g_str_equal(prefix, "tween")) return _("Target Propagation");
  return _("Training");
}

static void show_error(FieldRow *r, const char *message) {
  g_free(r->error);
  r->error = g_strdup(message);
  adw_action_row_set_subtitle(r->row, message ? message : "");
  if (message) {
    gtk_widget_add_css_class(r->editor, "error");
    gtk_accessible_update_property(GTK_ACCESSIBLE(r->editor), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, message, -1);
  } else {
    gtk_widget_remove_css_class(r->editor, "error");
    gtk_accessible_reset_property(GTK_ACCESSIBLE(r->editor), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
  }
}

/* Editors and visibility from the settings; refusals stay where they are. */
static void sync_rows(LoomTrainingForm *self) {
  self->syncing = TRUE;
  for (guint i = 0; i < self->rows->len; i++) {
    FieldRow *r = g_ptr_array_index(self->rows, i);
    gtk_widget_set_visible(GTK_WIDGET(r->row), loom_train_settings_field_applies(self->settings, r->info.name));
    if (r->error) continue; /* the refused text stays for the user to mend */
    char value[512];
    if (loom_train_settings_get_field(self->settings, r->info.name, value, sizeof value, NULL) != LOOM_OK) continue;
    switch (r->info.kind) {
    case LOOM_SETTING_CHOICE:
      for (guint k = 0; r->info.choices[k]; k++)
        if (g_str_equal(r->info.choices[k], value)) gtk_drop_down_set_selected(GTK_DROP_DOWN(r->editor), k);
      break;
    case LOOM_SETTING_BOOL:
      gtk_switch_set_active(GTK_SWITCH(r->editor), g_str_equal(value, "true"));
      break;
    default:
      /* An unset knob shows its placeholder ("default"). */
      gtk_editable_set_text(GTK_EDITABLE(r->editor), g_str_equal(value, "default") ? "" : value);
      break;
    }
  }
  /* A group with no visible row hides (the tween knobs under backprop). */
  GHashTableIter it;
  gpointer group;
  g_hash_table_iter_init(&it, self->groups);
  while (g_hash_table_iter_next(&it, NULL, &group)) {
    gboolean any = FALSE;
    for (guint i = 0; i < self->rows->len && !any; i++) {
      FieldRow *r = g_ptr_array_index(self->rows, i);
      any = gtk_widget_get_visible(GTK_WIDGET(r->row)) &&
            gtk_widget_get_ancestor(GTK_WIDGET(r->row), ADW_TYPE_PREFERENCES_GROUP) == group;
    }
    gtk_widget_set_visible(group, any);
  }
  self->syncing = FALSE;
}

static gboolean apply(FieldRow *r, const char *text, GError **error) {
  LoomTrainingForm *self = r->form;
  loom_error err = {0};
  loom_train_settings *next = loom_train_settings_copy(self->settings);
  /* An emptied knob goes back to its default. */
  const char *value = (!*text && r->info.has_default) ? "default" : text;
  if (!next || loom_train_settings_set_field(next, r->info.name, value, &err) != LOOM_OK) {
    show_error(r, err.message[0] ? err.message : _("Out of memory"));
    g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, r->error);
    if (next) loom_train_settings_free(next);
    return FALSE;
  }
  show_error(r, NULL);
  gboolean same = loom_train_settings_equal(next, self->settings);
  loom_train_settings_free(self->settings);
  self->settings = next;
  sync_rows(self);
  if (!same) g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
  return TRUE;
}

static void on_choice(GtkDropDown *drop, GParamSpec *pspec, FieldRow *r) {
  guint k = gtk_drop_down_get_selected(drop);
  if (r->form->syncing || k == GTK_INVALID_LIST_POSITION) return;
  apply(r, r->info.choices[k], NULL);
}

static void on_switch(GtkSwitch *sw, GParamSpec *pspec, FieldRow *r) {
  if (!r->form->syncing) apply(r, gtk_switch_get_active(sw) ? "true" : "false", NULL);
}

static void on_entry_activate(GtkEntry *entry, FieldRow *r) {
  apply(r, gtk_editable_get_text(GTK_EDITABLE(entry)), NULL);
}

/* Leaving a field commits what was typed, as Enter does. */
static void on_entry_focus_leave(GtkEventControllerFocus *focus, FieldRow *r) {
  char value[512];
  const char *text = gtk_editable_get_text(GTK_EDITABLE(r->editor));
  if (loom_train_settings_get_field(r->form->settings, r->info.name, value, sizeof value, NULL) == LOOM_OK &&
      (g_str_equal(text, value) || (!*text && g_str_equal(value, "default"))) && !r->error)
    return;
  apply(r, text, NULL);
}

static GtkWidget *make_editor(FieldRow *r) {
  const loom_setting_info *info = &r->info;
  GtkWidget *editor;
  switch (info->kind) {
  case LOOM_SETTING_CHOICE:
    editor = gtk_drop_down_new_from_strings(info->choices);
    g_signal_connect(editor, "notify::selected", G_CALLBACK(on_choice), r);
    break;
  case LOOM_SETTING_BOOL:
    editor = gtk_switch_new();
    g_signal_connect(editor, "notify::active", G_CALLBACK(on_switch), r);
    break;
  default: {
    editor = gtk_entry_new();
    /* Capped at that width, so the rows' titles keep room for whole words
     * ("Momentum" was broken into "Momentu-m" beside an entry grown wide). */
    gtk_editable_set_width_chars(GTK_EDITABLE(editor), info->kind == LOOM_SETTING_TEXT ? 14 : 9);
    gtk_editable_set_max_width_chars(GTK_EDITABLE(editor), info->kind == LOOM_SETTING_TEXT ? 14 : 9);
    gtk_entry_set_alignment(GTK_ENTRY(editor), info->kind == LOOM_SETTING_TEXT ? 0.0f : 1.0f);
    if (info->has_default) gtk_entry_set_placeholder_text(GTK_ENTRY(editor), _("default"));
    if (info->kind != LOOM_SETTING_TEXT) gtk_entry_set_input_purpose(GTK_ENTRY(editor), GTK_INPUT_PURPOSE_NUMBER);
    g_signal_connect(editor, "activate", G_CALLBACK(on_entry_activate), r);
    GtkEventController *focus = gtk_event_controller_focus_new();
    g_signal_connect(focus, "leave", G_CALLBACK(on_entry_focus_leave), r);
    gtk_widget_add_controller(editor, focus);
    break;
  }
  }
  gtk_widget_set_valign(editor, GTK_ALIGN_CENTER);
  gtk_accessible_update_property(GTK_ACCESSIBLE(editor), GTK_ACCESSIBLE_PROPERTY_LABEL, info->label, -1);
  return editor;
}

static void build(LoomTrainingForm *self) {
  int n = loom_train_settings_n_fields();
  for (int i = 0; i < n; i++) {
    FieldRow *r = g_new0(FieldRow, 1);
    r->form = self;
    if (!loom_train_settings_field_info(i, &r->info)) {
      g_free(r);
      continue;
    }
    const char *dot = strchr(r->info.name, '.');
    g_autofree char *prefix = dot ? g_strndup(r->info.name, (gsize)(dot - r->info.name)) : g_strdup("");
    GtkWidget *group = g_hash_table_lookup(self->groups, prefix);
    if (!group) {
      group = adw_preferences_group_new();
      adw_preferences_group_set_title(ADW_PREFERENCES_GROUP(group), group_title(prefix));
      gtk_box_append(GTK_BOX(self->box), group);
      g_hash_table_insert(self->groups, g_steal_pointer(&prefix), group);
    }
    r->row = ADW_ACTION_ROW(adw_action_row_new());
    adw_preferences_row_set_title(ADW_PREFERENCES_ROW(r->row), r->info.label);
    adw_preferences_row_set_use_markup(ADW_PREFERENCES_ROW(r->row), FALSE);
    gtk_widget_set_tooltip_text(GTK_WIDGET(r->row), r->info.name); /* the name `loom train` and the file use */
    r->editor = make_editor(r);
    adw_action_row_add_suffix(r->row, r->editor);
    if (r->info.kind == LOOM_SETTING_BOOL) adw_action_row_set_activatable_widget(r->row, r->editor);
    if (g_str_equal(r->info.name, "data.csv.path")) {
      GtkWidget *import = gtk_button_new_from_icon_name("document-open-symbolic");
      gtk_widget_set_valign(import, GTK_ALIGN_CENTER);
      gtk_actionable_set_action_name(GTK_ACTIONABLE(import), "win.train-import-csv");
      gtk_widget_set_tooltip_text(import, _("Import a CSV File…"));
      gtk_accessible_update_property(GTK_ACCESSIBLE(import), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Import a CSV File"), -1);
      adw_action_row_add_suffix(r->row, import);
    }
    adw_preferences_group_add(ADW_PREFERENCES_GROUP(group), GTK_WIDGET(r->row));
    g_ptr_array_add(self->rows, r);
  }
}

GtkWidget *loom_training_form_new(void) { return g_object_new(LOOM_TYPE_TRAINING_FORM, NULL); }

void loom_training_form_set_settings(LoomTrainingForm *self, const loom_train_settings *settings) {
  g_return_if_fail(LOOM_IS_TRAINING_FORM(self));
  g_return_if_fail(settings != NULL);
  loom_train_settings *copy = loom_train_settings_copy(settings);
  if (!copy) return;
  loom_train_settings_free(self->settings);
  self->settings = copy;
  for (guint i = 0; i < self->rows->len; i++) show_error(g_ptr_array_index(self->rows, i), NULL);
  sync_rows(self);
}

const loom_train_settings *loom_training_form_get_settings(LoomTrainingForm *self) {
  g_return_val_if_fail(LOOM_IS_TRAINING_FORM(self), NULL);
  return self->settings;
}

gboolean loom_training_form_set_field(LoomTrainingForm *self, const char *name, const char *text, GError **error) {
  g_return_val_if_fail(LOOM_IS_TRAINING_FORM(self), FALSE);
  FieldRow *r = find_row(self, name);
  if (!r) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("There is no setting “%s”"), name);
    return FALSE;
  }
  /* Through the editor, as typing would. */
  self->syncing = TRUE;
  if (r->info.kind != LOOM_SETTING_CHOICE && r->info.kind != LOOM_SETTING_BOOL)
    gtk_editable_set_text(GTK_EDITABLE(r->editor), text);
  self->syncing = FALSE;
  return apply(r, text, error);
}

const char *loom_training_form_get_field_error(LoomTrainingForm *self, const char *name) {
  g_return_val_if_fail(LOOM_IS_TRAINING_FORM(self), NULL);
  FieldRow *r = find_row(self, name);
  return r ? r->error : NULL;
}

gboolean loom_training_form_get_field_visible(LoomTrainingForm *self, const char *name) {
  g_return_val_if_fail(LOOM_IS_TRAINING_FORM(self), FALSE);
  FieldRow *r = find_row(self, name);
  return r && gtk_widget_get_visible(GTK_WIDGET(r->row)) &&
         gtk_widget_get_visible(gtk_widget_get_ancestor(GTK_WIDGET(r->row), ADW_TYPE_PREFERENCES_GROUP));
}

static void loom_training_form_dispose(GObject *object) {
  LoomTrainingForm *self = LOOM_TRAINING_FORM(object);
  g_clear_pointer(&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS(loom_training_form_parent_class)->dispose(object);
}

static void loom_training_form_finalize(GObject *object) {
  LoomTrainingForm *self = LOOM_TRAINING_FORM(object);
  g_ptr_array_unref(self->rows);
  g_hash_table_unref(self->groups);
  loom_train_settings_free(self->settings);
  G_OBJECT_CLASS(loom_training_form_parent_class)->finalize(object);
}

static void loom_training_form_class_init(LoomTrainingFormClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = loom_training_form_dispose;
  object_class->finalize = loom_training_form_finalize;
  gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_accessible_role(GTK_WIDGET_CLASS(klass), GTK_ACCESSIBLE_ROLE_GROUP);
  /* The settings changed through an editor; read them with _get_settings(). */
  signals[SIGNAL_CHANGED] =
      g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void loom_training_form_init(LoomTrainingForm *self) {
  self->rows = g_ptr_array_new_with_free_func(field_row_free);
  self->groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  self->settings = loom_train_settings_new();
  self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 18);
  gtk_widget_set_margin_start(self->box, 12);
  gtk_widget_set_margin_end(self->box, 12);
  gtk_widget_set_margin_top(self->box, 12);
  gtk_widget_set_margin_bottom(self->box, 12);
  gtk_widget_set_parent(self->box, GTK_WIDGET(self));
  build(self);
  sync_rows(self);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Training settings"), -1);
}
