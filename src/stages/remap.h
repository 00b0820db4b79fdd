// SPDX-License-Identifier: MIT
// The index remaps shared by transpose, rotate (right angles), transverse, flip and flop, and
// the row copy behind flip and crop: the CPU walk, and the launch of the kernels of
// kernels/remap.clh.
#ifndef CLIMG_REMAP_H
#define CLIMG_REMAP_H

#include <stdint.h>

#include "stage.h"

// Which remap; the mappings are specified in src/stages/transpose.c, rotate.c, transverse.c,
// flip.c and flop.c.
enum remap_mode { REMAP_TRANSPOSE, REMAP_90, REMAP_180, REMAP_270, REMAP_TRANSVERSE, REMAP_FLIP,
		  REMAP_FLOP };

// The CPU remap of in into out (out already sized: H x W, or W x H for REMAP_180, REMAP_FLIP
// and REMAP_FLOP), on every core in bands of 32 output rows, each walked in 32x32 blocks so
// the reads stay in cache.
void remap_run_cpu(const struct img *in, struct img *out, enum remap_mode mode);

// The cost of a remap (struct stage_cost): of kind "remap", the bytes read and written, on
// every core. The stages built on remap_run_cpu take it as their cost hook.
void remap_cost(const void *params, const struct geom *in, const struct stage_plan *plan,
		struct stage_cost *cost);

// The output rows of a tile of the word-wide kernels (kernels/remap.clh, REMAP_TY): 128, or
// 96 for 4 channels on a device with less than 33 KiB of local memory to spare.
int remap_tile_rows(int ch, uint64_t local_mem_bytes);

// Runs kernel `name` of `program` (W x H input -> H x W output), for N channels: on a
// device that takes the CPU kernels (ocl_cpu_kernels), name_cpu_cN; else the word-wide
// kernel, name_cN where the input sides are multiples of 4 and name_unaligned_cN where not,
// when the device allows its work-group, else the byte-wise `name`, in work-groups as large
// as the device allows (up to 32 x 8).
int remap_run_cl(const struct stage_cl *c, const char *program, const char *name);

// Runs kernel `kernel` of `program`, made by REMAP_ROWS (kernels/remap.clh): output row y
// (c->gout's W x ch bytes, c->gout.h rows) is the bytes of c->in that start at byte
// first + y * step (step may be negative).
int remap_rows_run_cl(const struct stage_cl *c, const char *program, const char *kernel,
		      int64_t first, int64_t step);

// Runs the kernel `program`_cN made by REMAP_FLOP (kernels/remap.clh): out(x, y) =
// in(W-1-x, y).
int remap_flop_run_cl(const struct stage_cl *c, const char *program);

#endif
