// SPDX-License-Identifier: MIT
// threshold: specified in src/stages/threshold.c, a per-channel lookup table made on the host and
// applied by lut_c1 .. lut_c4 (kernels/lut.clh).
#include "channels.clh"
#include "lut.clh"

LUT_KERNELS
