// SPDX-License-Identifier: MIT
// BMP and TGA output through stb_image_write (third_party/stb_image_write.c). stb's write
// callback cannot report failure, so the first outfile_write() error is recorded in the
// context, later callbacks do nothing, and the error is returned once stb is done.
//   BMP: 1 and 2 channels become 24-bit grey RGB (alpha dropped), 3 is 24-bit, 4 is
//        32-bit with an alpha mask (BITMAPV4HEADER).
//   TGA: run-length encoded, grey (+alpha) or BGR(A), bottom-up, as stb writes it.
// stb indexes pixels with int, so images over INT_MAX bytes are refused here.
#include <limits.h>

#define STBI_WRITE_NO_STDIO
#include <stb_image_write.h>

#include "../err.h"
#include "codec.h"

struct stb_ctx {
	struct outfile *f;
	int failed; // an outfile_write failed; err holds its message
};

static void write_cb(void *context, void *data, int size)
{
	struct stb_ctx *c = context;

	if (c->failed || size <= 0)
		return;
	if (outfile_write(c->f, data, (size_t)size) != 0)
		c->failed = 1;
}

// stb computes sizes and offsets in int; a 32-bit BMP or a TGA also stores them in its
// header (TGA sides in 16 bits).
static int fits(struct outfile *f, const struct img *im, const char *kind, int max_side)
{
	// Worst case per pixel: 4 bytes, plus row padding and run-length headers.
	if ((uint64_t)im->w * (uint64_t)im->h * 4 + (uint64_t)im->h * 4 + 1024 > INT_MAX)
		return err_set("%s: %dx%d is too large for %s output", outfile_name(f), im->w,
		               im->h, kind);
	if (im->w > max_side || im->h > max_side)
		return err_set("%s: %s output is limited to %d pixels a side, this is %dx%d",
		               outfile_name(f), kind, max_side, im->w, im->h);
	return 0;
}

int io_bmp_encode(struct outfile *f, const struct img *im)
{
	struct stb_ctx c = {f, 0};

	if (fits(f, im, "bmp", INT_MAX) != 0)
		return -1;
	if (!stbi_write_bmp_to_func(write_cb, &c, im->w, im->h, im->ch, im->data))
		return c.failed ? -1 : err_set("%s: bmp: cannot encode", outfile_name(f));
	return c.failed ? -1 : 0;
}

int io_tga_encode(struct outfile *f, const struct img *im)
{
	struct stb_ctx c = {f, 0};

	if (fits(f, im, "tga", 65535) != 0)
		return -1;
	if (!stbi_write_tga_to_func(write_cb, &c, im->w, im->h, im->ch, im->data))
		return c.failed ? -1 : err_set("%s: tga: cannot encode", outfile_name(f));
	return c.failed ? -1 : 0;
}
