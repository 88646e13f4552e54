/* loom-workbench: the GTK face of the engine. */
#include <glib/gi18n.h>
#include <locale.h>
#include <loom/loom.h>

#include "loom-application.h"

int main(int argc, char **argv) {
  setlocale(LC_ALL, "");
  bindtextdomain(GETTEXT_PACKAGE, loom_locale_dir());
  bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
  textdomain(GETTEXT_PACKAGE);

  g_autoptr(LoomApplication) app = loom_application_new();
  return g_application_run(G_APPLICATION(app), argc, argv);
}
