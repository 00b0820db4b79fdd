// SPDX-License-Identifier: MIT
// flip: out(x, y) = in(x, H-1-y), specified in src/stages/flip.c: `flip` copies whole rows
// (REMAP_ROWS, kernels/remap.clh; src/stages/flip.c passes the last row as first and minus a
// row as step).
#include "channels.clh"
#include "words.clh"
#include "cpu.clh"
#include "remap.clh"

REMAP_ROWS(flip)
