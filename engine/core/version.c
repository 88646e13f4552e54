#include "loom/version.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LOOM_VERSION_STRING
#  define LOOM_VERSION_STRING "0.1.0"
#endif

LOOM_API const char *loom_version(void) { return LOOM_VERSION_STRING; }

/* The build tree's po/ holds compiled catalogues (po/meson.build), so a
 * binary started from the build tree speaks German before installation;
 * /proc/self/exe names the program, not this library. */
LOOM_API const char *loom_locale_dir(void) {
  const char *env = getenv("LOOM_LOCALEDIR");
  if (env && *env) return env;
  static char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    static const char root[] = LOOM_BUILD_ROOT "/";
    if (strncmp(exe, root, sizeof root - 1) == 0) return LOOM_BUILD_ROOT "/po";
  }
  return LOOM_LOCALEDIR;
}
