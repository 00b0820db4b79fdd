// SPDX-License-Identifier: MIT
// Internal to the histogram stage: src/stages/histogram.c (counting, CSV) and
// src/stages/histogram_plot.c (the picture); the stages that count or name channels as it
// does (equalize, stats) use it too.
#ifndef CLIMG_STAGES_HISTOGRAM_H
#define CLIMG_STAGES_HISTOGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "../img.h"
#include "stage.h"

// The plot's size in pixels; documented in climg(1) and README.md.
#define HISTOGRAM_PLOT_W 536
#define HISTOGRAM_PLOT_H 300

// The name of channel c of a ch-channel image: grey; grey, alpha; red, green, blue;
// red, green, blue, alpha.
const char *histogram_channel_name(int ch, int c);

// floor(65536 * log2(x)) for x >= 1, with integers only (the plot's log scale).
uint64_t histogram_log2_q16(uint64_t x);

// Draws counts (ch * 256 bins, counts[c * 256 + v]) as an RGB image of
// HISTOGRAM_PLOT_W x HISTOGRAM_PLOT_H, the alpha channel (the last of 2 and 4) only
// with_alpha; integer arithmetic only, so the bytes are the same everywhere. out->data is
// malloc'd. -1 with err set.
int histogram_plot(const uint32_t *counts, int ch, bool log_scale, bool with_alpha,
		   struct img *out);

// Counts c->in (c->gin) into HISTOGRAM_CL_COPIES copies of ch * 256 uint32 counts in c->side,
// starting c->side_offset bytes in, zeroed by the caller (copy k at word k * ch * 256; the
// kernels for CPU devices add into copy 0): the kernels histogram_N or histogram_cpu_N
// (kernels/histogram.cl) of `program`, which is "histogram" or a program that includes
// kernels/histogram.cl.
#define HISTOGRAM_CL_COPIES 8
int histogram_count_cl(const struct stage_cl *c, const char *program);

#endif
