// SPDX-License-Identifier: MIT
// transpose: out(x, y) = in(y, x), specified in src/stages/transpose.c. W, H describe the
// input (the output is H x W). `transpose` takes any size; transpose_cN needs W and H to be
// multiples of 4 and an image of N channels; transpose_cpu_cN, for CPU devices (see
// kernels/cpu.clh), takes any size and an image of N channels.
#include "cpu.clh"
#include "remap.clh"

REMAP_BYTES(transpose, 0)
REMAP_WORDS(transpose_c1, 1, 0, REMAP_TX(1), REMAP_TY(1), REMAP_RY_FAST(1))
REMAP_WORDS(transpose_c2, 2, 0, REMAP_TX(2), REMAP_TY(2), REMAP_RY_FAST(2))
REMAP_WORDS(transpose_c3, 3, 0, REMAP_TX(3), REMAP_TY(3), REMAP_RY_FAST(3))
REMAP_WORDS(transpose_c4, 4, 0, REMAP_TX(4), REMAP_TY(4), REMAP_RY_FAST(4))
REMAP_CPU(transpose_cpu_c1, 1, 0)
REMAP_CPU(transpose_cpu_c2, 2, 0)
REMAP_CPU(transpose_cpu_c3, 3, 0)
REMAP_CPU(transpose_cpu_c4, 4, 0)
