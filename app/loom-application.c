/*
 * LoomApplication: the process-wide part of the workbench. It owns the
 * settings, installs the app actions and every accelerator (win. ones too, so
 * one table lists them all), and opens a window per file it is given.
 */
#include "loom-application.h"

#include <glib/gi18n.h>

#include <loom/model.h>

#include "loom-recovery-dialog.h"
#include "loom-recovery.h"
#include "loom-window.h"
#include "loom-workbench-resources.h"

#define MAX_RECENT 10

struct _LoomApplication {
  AdwApplication parent_instance;
  GSettings *settings;
  char *pending_example; /* --example NAME, shown by the first activation */
  LoomRecovery *recovery;
  gboolean recovery_checked; /* copies left by a crash are offered once, on the first window */
};

G_DEFINE_FINAL_TYPE(LoomApplication, loom_application, ADW_TYPE_APPLICATION)

static const struct {
  const char *action;
  const char *accels[3];
} accels[] = {
  {"app.quit", {"<Control>q", NULL}},
  {"win.new", {"<Control>n", NULL}},
  {"win.show-examples", {"<Control><Shift>n", NULL}},
  {"win.open", {"<Control>o", NULL}},
  {"win.save", {"<Control>s", NULL}},
  {"win.save-as", {"<Control><Shift>s", NULL}},
  {"win.export-image", {"<Control>e", NULL}},
  {"window.close", {"<Control>w", NULL}},
  {"win.undo", {"<Control>z", NULL}},
  {"win.redo", {"<Control><Shift>z", "<Control>y", NULL}},
  /* Keys without modifiers act only while the grid view has the focus
   * (loom-window-actions.c), so text fields keep them. */
  {"win.select-left", {"Left", NULL}},
  {"win.select-right", {"Right", NULL}},
  {"win.select-up", {"Up", NULL}},
  {"win.select-down", {"Down", NULL}},
  {"win.select-deeper", {"Page_Down", NULL}},
  {"win.select-shallower", {"Page_Up", NULL}},
  {"win.select-next-slot", {"plus", NULL}},
  {"win.select-previous-slot", {"minus", NULL}},
  {"win.place-again", {"Return", NULL}},
  {"win.clear-slot", {"Delete", "BackSpace", NULL}},
  {"win.delete-link", {"<Control>Delete", NULL}},
  {"win.link-tool", {"<Control>l", NULL}},
  {"win.link-from-selection", {"<Control><Shift>l", NULL}},
  {"win.link-to-selection", {"<Control><Shift>Return", "<Control><Shift>KP_Enter", NULL}},
  {"win.focus-palette", {"<Control>f", NULL}},
  {"win.focus-grid", {"<Control>g", NULL}},
  {"win.color-by-dtype", {"<Control>d", NULL}},
  {"win.z-slice", {"<Control>backslash", NULL}},
  {"win.view-preset('iso')", {"<Control>1", NULL}},
  {"win.view-preset('front')", {"<Control>2", NULL}},
  {"win.view-preset('top')", {"<Control>3", NULL}},
  {"win.reset-camera", {"<Control>0", NULL}},
  {"win.show-help-overlay", {"<Control>question", NULL}},
  {"win.train-toggle", {"F5", NULL}},
  {"win.train-step", {"F6", NULL}},
  {"win.train-step-epoch", {"<Shift>F6", NULL}},
  {"win.train-reset", {"<Control><Shift>r", NULL}},
  {"win.show-training", {"<Control>t", NULL}},
  {"win.show-dna", {"<Control><Shift>d", NULL}},
  {"win.export-model", {"<Control><Shift>e", NULL}},
  {"win.import-weights", {"<Control><Shift>i", NULL}},
  {"win.import-weights-mapped", {"<Control><Shift><Alt>i", NULL}},
  {"win.systolic-tick", {"F7", NULL}},
  {"win.systolic-play", {"<Shift>F7", NULL}},
};

GSettings *loom_application_get_settings(LoomApplication *self) {
  g_return_val_if_fail(LOOM_IS_APPLICATION(self), NULL);
  return self->settings;
}

LoomRecovery *loom_application_get_recovery(LoomApplication *self) {
  g_return_val_if_fail(LOOM_IS_APPLICATION(self), NULL);
  return self->recovery;
}

static void check_recovery_once(LoomApplication *self) {
  if (self->recovery_checked) return;
  self->recovery_checked = TRUE;
  loom_recovery_dialog_check(self);
}

void loom_application_add_recent(LoomApplication *self, const char *uri) {
  g_return_if_fail(LOOM_IS_APPLICATION(self));
  g_return_if_fail(uri != NULL);
  g_auto(GStrv) old = g_settings_get_strv(self->settings, "recent-files");
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
  g_strv_builder_add(builder, uri);
  guint n = 1;
  for (guint i = 0; old[i] && n < MAX_RECENT; i++) {
    if (g_str_equal(old[i], uri)) continue;
    g_strv_builder_add(builder, old[i]);
    n++;
  }
  g_auto(GStrv) recent = g_strv_builder_end(builder);
  g_settings_set_strv(self->settings, "recent-files", (const char *const *)recent);
}

static void app_about(GSimpleAction *action, GVariant *param, gpointer user_data) {
  GtkApplication *app = GTK_APPLICATION(user_data);
  const char *developers[] = {_("The Loom Workbench developers"), NULL};
  GtkWidget *about = g_object_new(ADW_TYPE_ABOUT_WINDOW,
                                  "application-name", _("Loom Workbench"),
                                  "application-icon", APPLICATION_ID,
                                  "developer-name", _("The Loom Workbench developers"),
                                  "version", PACKAGE_VERSION,
                                  "comments", _("Design, train, inspect and export volumetric neural networks."),
                                  "developers", developers,
                                  /* Translators: your names, one per line. */
                                  "translator-credits", _("translator-credits"),
                                  "license-type", GTK_LICENSE_GPL_3_0,
                                  "transient-for", gtk_application_get_active_window(app),
                                  "modal", TRUE,
                                  NULL);
  gtk_window_present(GTK_WINDOW(about));
}

static void app_quit(GSimpleAction *action, GVariant *param, gpointer user_data) {
  /* Close every window through close-request, so each saves its state and
   * cancels its work; the application exits when the last one is gone. */
  GList *windows = g_list_copy(gtk_application_get_windows(GTK_APPLICATION(user_data)));
  for (GList *l = windows; l; l = l->next) gtk_window_close(l->data);
  g_list_free(windows);
}

/* A new window showing an untitled copy of an example (what --example does,
 * also when it is forwarded to a running instance). */
static void app_open_example(GSimpleAction *action, GVariant *param, gpointer user_data) {
  LoomWindow *window = loom_window_new(LOOM_APPLICATION(user_data));
  g_autoptr(GError) error = NULL;
  if (!loom_window_open_example(window, g_variant_get_string(param, NULL), &error))
    g_warning("%s", error->message);
  gtk_window_present(GTK_WINDOW(window));
}

static const GActionEntry app_actions[] = {
  {.name = "about", .activate = app_about},
  {.name = "quit", .activate = app_quit},
  {.name = "open-example", .activate = app_open_example, .parameter_type = "s"},
};

static void loom_application_startup(GApplication *application) {
  LoomApplication *self = LOOM_APPLICATION(application);
  G_APPLICATION_CLASS(loom_application_parent_class)->startup(application);

  /* The grid view is dark; a dark shell around it keeps the contrast calm.
   * A user who forces light mode still gets it. */
  adw_style_manager_set_color_scheme(adw_style_manager_get_default(), ADW_COLOR_SCHEME_PREFER_DARK);

  g_action_map_add_action_entries(G_ACTION_MAP(self), app_actions, G_N_ELEMENTS(app_actions), self);
  for (gsize i = 0; i < G_N_ELEMENTS(accels); i++)
    gtk_application_set_accels_for_action(GTK_APPLICATION(self), accels[i].action, accels[i].accels);

  /* Every window's document gets a recovery copy while it has unsaved changes. */
  self->recovery = loom_recovery_new(NULL);
  g_settings_bind(self->settings, "autosave-interval", self->recovery, "interval", G_SETTINGS_BIND_GET);
  loom_recovery_track_windows(self->recovery, GTK_APPLICATION(self));
}

static void loom_application_activate(GApplication *application) {
  LoomApplication *self = LOOM_APPLICATION(application);
  if (self->pending_example) {
    g_autofree char *name = g_steal_pointer(&self->pending_example);
    g_action_group_activate_action(G_ACTION_GROUP(self), "open-example", g_variant_new_string(name));
  } else {
    GtkWindow *window = gtk_application_get_active_window(GTK_APPLICATION(application));
    if (!window) window = GTK_WINDOW(loom_window_new(self));
    gtk_window_present(window);
  }
  check_recovery_once(self);
}

static gboolean example_exists(const char *name) {
  for (int i = 0; i < loom_example_count(); i++)
    if (g_str_equal(loom_example_name(i), name)) return TRUE;
  return FALSE;
}

static int loom_application_handle_local_options(GApplication *application, GVariantDict *options) {
  LoomApplication *self = LOOM_APPLICATION(application);
  const char *example = NULL;
  if (!g_variant_dict_lookup(options, "example", "&s", &example)) return -1;
  if (!example_exists(example)) {
    g_autoptr(GString) names = g_string_new(NULL);
    for (int i = 0; i < loom_example_count(); i++)
      g_string_append_printf(names, "%s%s", i ? ", " : "", loom_example_name(i));
    /* Translators: the first %s is what the user typed, the second the list of example names. */
    g_printerr(_("Unknown example “%s”; the examples are: %s\n"), example, names->str);
    return 1;
  }
  g_autoptr(GError) error = NULL;
  if (!g_application_register(application, NULL, &error)) {
    g_printerr("%s\n", error->message);
    return 1;
  }
  if (g_application_get_is_remote(application)) {
    g_action_group_activate_action(G_ACTION_GROUP(application), "open-example", g_variant_new_string(example));
    return 0;
  }
  g_free(self->pending_example);
  self->pending_example = g_strdup(example);
  return -1;
}

static void loom_application_open(GApplication *application, GFile **files, int n_files, const char *hint) {
  for (int i = 0; i < n_files; i++) {
    LoomWindow *window = loom_window_new(LOOM_APPLICATION(application));
    loom_window_open_file(window, files[i]);
    gtk_window_present(GTK_WINDOW(window));
  }
  check_recovery_once(LOOM_APPLICATION(application));
}

static void loom_application_finalize(GObject *object) {
  LoomApplication *self = LOOM_APPLICATION(object);
  g_clear_object(&self->recovery);
  g_clear_object(&self->settings);
  g_free(self->pending_example);
  G_OBJECT_CLASS(loom_application_parent_class)->finalize(object);
}

static void loom_application_class_init(LoomApplicationClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GApplicationClass *app_class = G_APPLICATION_CLASS(klass);

  object_class->finalize = loom_application_finalize;
  app_class->startup = loom_application_startup;
  app_class->activate = loom_application_activate;
  app_class->open = loom_application_open;
  app_class->handle_local_options = loom_application_handle_local_options;

  /* The resources live in a static library; referencing them keeps the
   * linker from dropping them (their constructor registers them). */
  (void)loom_workbench_get_resource();
}

static void loom_application_init(LoomApplication *self) {
  self->settings = g_settings_new(APPLICATION_ID);
  g_application_add_main_option(G_APPLICATION(self), "example", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_STRING,
                                _("Open an untitled copy of the built-in example network NAME"), _("NAME"));
}

LoomApplication *loom_application_new(void) {
  return g_object_new(LOOM_TYPE_APPLICATION,
                      "application-id", APPLICATION_ID,
                      "flags", G_APPLICATION_HANDLES_OPEN,
                      "resource-base-path", "/org/loomworkbench/Workbench",
                      NULL);
}
