// SPDX-License-Identifier: MIT
// transpose: out(x, y) = in(y, x), specified in src/stages/transpose.c. W, H describe the
// input (the output is H x W). `transpose` takes any size; transpose_cN needs W and H to be
// multiples of 4 and an image of N channels, transpose_unaligned_cN any size;
// transpose_cpu_cN, for CPU devices (see kernels/cpu.clh), takes any size and an image of N
// channels.
#include "channels.clh"
#include "words.clh"
#include "cpu.clh"
#include "remap.clh"

REMAP_KERNELS(transpose, 0)
