// SPDX-License-Identifier: MIT
// What the two halves of the pipeline share (pipeline.c, pipeline_cpu.c), and nothing else.
#ifndef CLIMG_PIPELINE_IMPL_H
#define CLIMG_PIPELINE_IMPL_H

#include <stdint.h>

#include "pipeline.h"

// How many stages of the chain from stage `from` on write an image.
int pipeline_image_stages(const struct plan *c, int from);

// A run's two blocks into *out and *tmp: mem's where it holds them for c (taken: mem is
// emptied), and those it lacks that the chain writes made here for o (o NULL: the CPU
// path's memory; else memory o can use in place). -1 with err set.
int pipeline_mem_take(const struct plan *c, struct ocl *o, struct pipeline_mem *mem,
		      uint8_t **out, uint8_t **tmp);

#endif
