// SPDX-License-Identifier: MIT
// Launching the tiled index-remap kernels of kernels/remap.clh, shared by transpose and
// rotate (90 and 270).
#ifndef CLIMG_REMAP_H
#define CLIMG_REMAP_H

#include "stage.h"

// Runs kernel `name` of `program` (W x H input -> H x W output): name_cN, the word-wide
// kernel, when the input sides are multiples of 4, else the byte-wise `name`.
int remap_run_cl(const struct stage_cl *c, const char *program, const char *name);

#endif
