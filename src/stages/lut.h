// SPDX-License-Identifier: MIT
// Per-channel lookup tables, shared by invert, threshold and equalize: every byte of the
// image goes through the table of its channel,
//   out byte i = lut[(i % ch) * 256 + in byte i]
// on the CPU (lut_run_cpu) and on the device (lut_run_cl, kernels/lut.clh).
#ifndef CLIMG_LUT_H
#define CLIMG_LUT_H

#include <stdint.h>

#include "stage.h"

// Fills lut (ch * 256 bytes) with colour (256 bytes) for every colour channel and the
// identity for alpha (the last channel of 2 and 4), which is thus kept.
void lut_fill_colour(uint8_t *lut, int ch, const uint8_t *colour);

// out = lut applied to in (same geometry), on every core.
void lut_run_cpu(const uint8_t *lut, const struct img *in, struct img *out);

// The cost of a table lookup (struct stage_cost): of kind "lut", the bytes read and written,
// on every core. invert and threshold take it as their cost hook.
void lut_cost(const void *params, const struct geom *in, const struct stage_plan *plan,
	      struct stage_cost *cost);

// The same on the device: kernel lut_cN of `program` (made by LUT_KERNELS, kernels/lut.clh)
// reading the table from lut (ch * 256 bytes on the device).
int lut_run_cl(const struct stage_cl *c, const char *program, struct ocl_buf *lut);

// lut_run_cl with a table from the host (copied to the device as the run is queued).
int lut_run_cl_host(const struct stage_cl *c, const char *program, const uint8_t *lut);

#endif
