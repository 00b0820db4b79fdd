// SPDX-License-Identifier: MIT
// The one image type: 8-bit samples, interleaved channels, rows packed with no padding.
#ifndef CLIMG_IMG_H
#define CLIMG_IMG_H

#include <stddef.h>
#include <stdint.h>

// The largest image side anywhere: input headers and every stage's output are checked
// against it (65535 keeps w * h * 4 far from overflowing size_t and w, h in 16 bits).
#define IMG_MAX_SIDE 65535

// Geometry of an image: width and height in pixels, ch channels per pixel
// (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA), and orient, the Exif Orientation tag (1-8) the
// input file gave its pixels, 0 where it gave none: how a viewer turns the pixels to show
// the image as the camera held it. Every stage's output carries its input's orient, except
// autoorient's, which has turned the pixels that way (1).
struct geom {
	int w, h, ch;
	int orient;
};

// Pixel (x, y) channel c lives at data[((size_t)y * w + x) * ch + c].
struct img {
	int w, h, ch;
	uint8_t *data;
};

static inline size_t geom_bytes(const struct geom *g)
{
	return (size_t)g->w * (size_t)g->h * (size_t)g->ch;
}

static inline size_t img_bytes(const struct img *im)
{
	return (size_t)im->w * (size_t)im->h * (size_t)im->ch;
}

#endif
