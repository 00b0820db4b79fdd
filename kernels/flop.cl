// SPDX-License-Identifier: MIT
// flop: out(x, y) = in(W-1-x, y), specified in src/stages/flop.c: flop_c1 .. flop_c4
// (REMAP_FLOP, kernels/remap.clh) for any size; on GPUs flop_cN_blocks (REMAP_FLOP_BLOCKS)
// where W is a multiple of 16.
#include "channels.clh"
#include "words.clh"
#include "cpu.clh"
#include "remap.clh"

IF_C1(REMAP_FLOP(flop_c1, 1))
IF_C2(REMAP_FLOP(flop_c2, 2))
IF_C3(REMAP_FLOP(flop_c3, 3))
IF_C4(REMAP_FLOP(flop_c4, 4))
#ifndef CLIMG_CPU_KERNELS
IF_C1(REMAP_FLOP_BLOCKS(flop_c1, 1))
IF_C2(REMAP_FLOP_BLOCKS(flop_c2, 2))
IF_C3(REMAP_FLOP_BLOCKS(flop_c3, 3))
IF_C4(REMAP_FLOP_BLOCKS(flop_c4, 4))
#endif
