/* src/version.c - the library version, from configure. */
#include "config.h"

#include "tendo/core.h"

const char *tendo_version(void) { return PACKAGE_VERSION; }
