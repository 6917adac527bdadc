#include "CBuildInfo.h"

/* Weak, so that the object scripts/build-info.sh makes for a release
   build, which defines it with the commit, wins at link time without a
   rebuild of anything else. */
__attribute__((weak)) const char *folio_build_description(void) { return ""; }
