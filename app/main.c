/* loom-workbench: the GTK face of the engine. */
#include <glib/gi18n.h>
#include <locale.h>
#include <unistd.h>

#include "loom-application.h"

/*
 * Where the translations are: $LOOM_LOCALEDIR if set; the build tree's po/
 * when this binary runs from the build tree (so it speaks German before
 * installation); otherwise the installed locale directory.
 */
static const char *locale_dir(void) {
  const char *env = g_getenv("LOOM_LOCALEDIR");
  if (env && *env) return env;
  static char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    if (g_str_has_prefix(exe, LOOM_BUILD_ROOT "/")) return LOOM_BUILD_ROOT "/po";
  }
  return LOOM_LOCALEDIR;
}

int main(int argc, char **argv) {
  setlocale(LC_ALL, "");
  bindtextdomain(GETTEXT_PACKAGE, locale_dir());
  bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
  textdomain(GETTEXT_PACKAGE);

  g_autoptr(LoomApplication) app = loom_application_new();
  return g_application_run(G_APPLICATION(app), argc, argv);
}
