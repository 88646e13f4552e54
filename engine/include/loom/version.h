#pragma once
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The engine's version, "MAJOR.MINOR.PATCH". */
LOOM_API const char *loom_version(void);

#ifdef __cplusplus
}
#endif
