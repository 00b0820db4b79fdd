// SPDX-License-Identifier: MIT
// The limits every input format's header is checked against before any pixel is decoded.
// A leaf of src/io: the format readers call it, and it calls nothing of theirs or io.c's.
#include <stdint.h>

#include "../err.h"
#include "codec.h"

int io_check_geom(struct img_reader *r, long long w, long long h, int ch)
{
	if (w <= 0 || h <= 0)
		return err_set("%s: the image is empty (%lldx%lld)", r->name, w, h);
	if (w > IMG_MAX_SIDE || h > IMG_MAX_SIDE)
		return err_set("%s: %lldx%lld exceeds the %d-pixel side limit", r->name, w, h,
		               IMG_MAX_SIDE);
	if ((uint64_t)w * (uint64_t)h > r->lim.max_pixels)
		return err_set("%s: %lldx%lld exceeds --max-pixels (%llu)", r->name, w, h,
		               (unsigned long long)r->lim.max_pixels);
	if (ch < 1 || ch > 4)
		return err_set("%s: unsupported channel count %d", r->name, ch);
	r->g.w = (int)w;
	r->g.h = (int)h;
	r->g.ch = ch;
	return 0;
}
