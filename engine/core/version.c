#include "loom/version.h"

#ifndef LOOM_VERSION_STRING
#  define LOOM_VERSION_STRING "0.1.0"
#endif

LOOM_API const char *loom_version(void) { return LOOM_VERSION_STRING; }
