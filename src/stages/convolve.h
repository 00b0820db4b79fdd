// SPDX-License-Identifier: MIT
// The integers convolve's parse produced - the weights, divisor and bias numerator of the
// fixed-point contract written in src/stages/convolve.c - for tests and diagnostics.
#ifndef CLIMG_CONVOLVE_H
#define CLIMG_CONVOLVE_H

#include <stdbool.h>
#include <stdint.h>

struct convolve_ints {
	int n;            // kernel side (odd)
	bool separable;   // w holds kx[n] then ky[n], k[dy][dx] = ky[dy] * kx[dx]
	int64_t D, B;     // divisor (>= 1) and bias numerator
	const int32_t *w; // separable: 2n values, else n * n row by row; owned by params
	int64_t dev_m;    // the device's floor(t / D) for 0 <= t < 256 D: (t * dev_m) >> dev_s,
	int dev_s;        // or t / D when dev_m is 0
	uint32_t m32;     // ... in 32 bits (convolve_3x3): ((t * m32) >> 32) >> s32, or
	int s32;          // t >> s32 when m32 is 0; s32 -1: not available for this D
	uint32_t pz, pm;  // convolve_3x3_packed: the halves' start Z, and floor(u / D) as
	int ps;           // (u * pm) >> ps; ps -1: that kernel does not take this kernel
	uint32_t pn;      // convolve_3x3_packed_norm: floor(u / D) as mul_hi(u, pn); 0: that
	                  // kernel does not take this kernel
};

// params is the block of a parsed convolve stage (struct chain_stage.params).
void convolve_ints(const void *params, struct convolve_ints *out);

#endif
