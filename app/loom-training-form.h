/*
 * LoomTrainingForm: the training settings as a form built from the engine's
 * field table (loom_train_settings_field_info), so no list of fields is kept
 * here. Each field is a row with an editor of its kind; a value the engine
 * refuses stays in its editor, marked, with the reason under the field, and
 * the settings do not change. Fields that do not apply to the chosen data
 * set, optimizer, schedule or method are hidden.
 */
#pragma once

#include <gtk/gtk.h>
#include <loom/loom.h>

G_BEGIN_DECLS

#define LOOM_TYPE_TRAINING_FORM (loom_training_form_get_type())
G_DECLARE_FINAL_TYPE(LoomTrainingForm, loom_training_form, LOOM, TRAINING_FORM, GtkWidget)

GtkWidget *loom_training_form_new(void);
/* Shows @settings (copied); clears every refusal; emits nothing. */
void loom_training_form_set_settings(LoomTrainingForm *self, const loom_train_settings *settings);
const loom_train_settings *loom_training_form_get_settings(LoomTrainingForm *self);
/* What typing @text into the field's editor does: on success the settings
 * change and "changed" is emitted; on refusal the row shows the reason
 * (also returned in @error) and the settings stay. */
gboolean loom_training_form_set_field(LoomTrainingForm *self, const char *name, const char *text, GError **error);
/* The reason shown under a field, or NULL. */
const char *loom_training_form_get_field_error(LoomTrainingForm *self, const char *name);
/* Whether the field's row is shown now. */
gboolean loom_training_form_get_field_visible(LoomTrainingForm *self, const char *name);

G_END_DECLS
