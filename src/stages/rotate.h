// SPDX-License-Identifier: MIT
// The any-angle mapping of the rotate stage (src/stages/rotate.c), exposed for tests/unit.c:
// the pipeline reaches rotate only through stage_rotate.
#ifndef CLIMG_ROTATE_H
#define CLIMG_ROTATE_H

#include <stdbool.h>
#include <stdint.h>

#include "../img.h"

// One inverse mapping, as rotate.c's header comment specifies it.
struct rotate_map {
	int32_t c, s;  // round(2^30 cos A), round(2^30 sin A)
	bool bilinear; // false: nearest
	uint8_t bg[4]; // the background, one byte per channel of the input
};

// cos A and sin A for an angle in degrees (any finite value), the same bits on every host:
// exact for multiples of 90, equal for odd multiples of 45, otherwise from a Taylor series
// in a fixed order of IEEE operations rather than libm, whose last bit varies by library.
void rotate_sincos(double degrees, double *cos_a, double *sin_a);

// Fills out (its geometry set by the caller) from in through the mapping m.
void rotate_map_cpu(const struct rotate_map *m, const struct img *in, struct img *out);

#endif
