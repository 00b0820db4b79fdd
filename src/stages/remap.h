// SPDX-License-Identifier: MIT
// The index remaps shared by transpose and rotate (right angles): the CPU walk, and the
// launch of the tiled kernels of kernels/remap.clh.
#ifndef CLIMG_REMAP_H
#define CLIMG_REMAP_H

#include <stdint.h>

#include "stage.h"

// Which remap; the mappings are specified in src/stages/transpose.c and src/stages/rotate.c.
enum remap_mode { REMAP_TRANSPOSE, REMAP_90, REMAP_180, REMAP_270 };

// The CPU remap of in into out (out already sized: H x W, or W x H for REMAP_180), on every
// core in bands of 32 output rows, each walked in 32x32 blocks so the reads stay in cache.
void remap_run_cpu(const struct img *in, struct img *out, enum remap_mode mode);

// The output rows of a tile of the word-wide kernels (kernels/remap.clh, REMAP_TY): 128, or
// 96 for 4 channels on a device with less than 33 KiB of local memory to spare.
int remap_tile_rows(int ch, uint64_t local_mem_bytes);

// Runs kernel `name` of `program` (W x H input -> H x W output), for N channels: on a
// device that takes the CPU kernels (ocl_cpu_kernels), name_cpu_cN; else the word-wide
// kernel, name_cN where the input sides are multiples of 4 and name_unaligned_cN where not,
// when the device allows its work-group, else the byte-wise `name`, in work-groups as large
// as the device allows (up to 32 x 8).
int remap_run_cl(const struct stage_cl *c, const char *program, const char *name);

#endif
