// SPDX-License-Identifier: MIT
// crop: out(x, y) = in(X + x, Y + y), specified in src/stages/crop.c: `crop` copies each
// output row from the input's bytes (REMAP_ROWS, kernels/remap.clh; src/stages/crop.c passes
// the rectangle's first byte as first and a row of the input as step).
#include "channels.clh"
#include "words.clh"
#include "cpu.clh"
#include "remap.clh"

REMAP_ROWS(crop)
