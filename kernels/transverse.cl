// SPDX-License-Identifier: MIT
// transverse: out(x, y) = in(W-1-y, H-1-x), specified in src/stages/transverse.c. W, H
// describe the input (the output is H x W). The kernels are those of kernels/transpose.cl
// with MODE 3 (kernels/remap.clh): `transverse` takes any size; transverse_cN needs W and H to
// be multiples of 4, transverse_unaligned_cN any size; transverse_cpu_cN, for CPU devices,
// any size.
#include "channels.clh"
#include "words.clh"
#include "cpu.clh"
#include "remap.clh"

REMAP_KERNELS(transverse, 3)
