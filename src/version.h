// SPDX-License-Identifier: MIT
// `climg --version`: climg's own version and those of the libraries it runs with.
#ifndef CLIMG_VERSION_H
#define CLIMG_VERSION_H

#include <stdio.h>

// Prints "climg VERSION" (the Makefile's CLIMG_VERSION: `git describe` in a git checkout,
// else the release version), then one line per library: "NAME VERSION", with
// " (build)" where the library has no call that reports the version it runs with and the
// number is its header's at build time. Returns 0, or -1 with err set when a write failed.
int version_print(FILE *out);

// CLIMG_VERSION, as --version prints it.
const char *climg_version(void);

#endif
