/* Symbol visibility for libloom: everything is hidden unless marked LOOM_API. */
#pragma once

#if defined(LOOM_COMPILATION)
#  define LOOM_API __attribute__((visibility("default")))
#else
#  define LOOM_API
#endif
