// SPDX-License-Identifier: MIT
// invert: specified in src/stages/invert.c, a per-channel lookup table made on the host and
// applied by lut_c1 .. lut_c4 (kernels/lut.clh).
#include "channels.clh"
#include "lut.clh"

LUT_KERNELS
