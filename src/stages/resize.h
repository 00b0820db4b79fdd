// SPDX-License-Identifier: MIT
// Internal to the resize stage: the weight tables (src/stages/resize_tables.c), made on the
// host once per planned geometry and shared by the CPU path and the kernels
// (src/stages/resize.c, kernels/resize.cl).
#ifndef CLIMG_STAGES_RESIZE_H
#define CLIMG_STAGES_RESIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// RESIZE_AREA_UP: area where the image grows on either side (OpenCV's INTER_AREA then
// blends linearly at the input pixels' edges); chosen by the stage, never named.
enum resize_filter { RESIZE_DEFAULT, RESIZE_NEAREST, RESIZE_BILINEAR, RESIZE_AREA, RESIZE_CUBIC,
		     RESIZE_LANCZOS, RESIZE_AREA_UP };

// One axis: output sample i is sum over k < count[i] of w[i * taps + k] * in[start[i] + k]
// (the taps lie inside the input), or for nearest in[start[i]] (count and w unused).
// Stored as one int32 array, ready for the device: start[n], count[n], w[n * taps].
struct resize_axis {
	int n, taps;
	int32_t *data; // 2 n + n taps words (n for nearest); start = data, count = data + n
};

// How the two passes round, for the filter: pass 1 (along rows) v = clamp((sum + r1) >> s1,
// 0, m1), pass 2 (along columns) out = clamp((sum + r2) >> s2, 0, 255); a negative sum
// gives 0.
struct resize_round {
	int s1, s2;
	int32_t r1, r2, m1;
};

// The blocked form of an axis (not nearest) for the kernels that make RESIZE_B neighbouring
// outputs at once (kernels/resize.cl, resize_hb and resize_vb): group g, outputs
// RESIZE_B g + j (j < RESIZE_B, those past n absent), takes inputs start[g] to start[g] +
// len[g] - 1, the union of its outputs' taps, with weight w[(k groups + g) RESIZE_B + j]
// on input start[g] + k for output RESIZE_B g + j, 0 outside that output's taps. So each
// sum is the axis's own, plus zeros. One int32 array: start[groups], len[groups], zeros to
// a multiple of 4 words (RESIZE_BW(groups), where the weights start), then the weights,
// len words of RESIZE_B each (len: the largest len[g]). ordered: both ends of the groups'
// ranges never go down from a group to the next.
#define RESIZE_B 4
#define RESIZE_BW(groups) ((2 * (size_t)(groups) + 3) & ~(size_t)3)
struct resize_blocks {
	int groups, len;
	bool ordered;
	size_t words;
	int32_t *data;
};

// Makes the tables of an axis from `in` samples to `out` for filter f (not RESIZE_DEFAULT;
// RESIZE_AREA only where the image grows on neither side). -1 with err set (out of memory).
int resize_axis_make(struct resize_axis *a, enum resize_filter f, int in, int out);
void resize_axis_free(struct resize_axis *a);
// The blocked form of a (not nearest); -1 with err set (out of memory).
int resize_blocks_make(struct resize_blocks *b, const struct resize_axis *a);
void resize_blocks_free(struct resize_blocks *b);
struct resize_round resize_round_for(enum resize_filter f);

#endif
