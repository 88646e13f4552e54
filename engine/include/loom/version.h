#pragma once
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The engine's version, "MAJOR.MINOR.PATCH". */
LOOM_API const char *loom_version(void);

/* Where the translations are, for bindtextdomain(): $LOOM_LOCALEDIR if set;
 * the build tree's po/ when the running program lies in the build tree;
 * otherwise the installed locale directory. */
LOOM_API const char *loom_locale_dir(void);

#ifdef __cplusplus
}
#endif
