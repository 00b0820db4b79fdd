// SPDX-License-Identifier: MIT
// The Exif Orientation tag: found in, and written back into, an Exif block's TIFF structure
// (what follows "Exif\0\0" in a JPEG's APP1 segment; a PNG's eXIf chunk). Only what the tag
// needs is read, and every read is checked against the block's end first:
//
//   bytes 0-1   "II" (little-endian) or "MM" (big-endian): the byte order of what follows
//   bytes 2-3   42
//   bytes 4-7   the offset of IFD0 from the start of the block
//   IFD0        a 16-bit count N, then N entries of 12 bytes: tag (16 bits), type (16),
//               count (32), then the value itself when it fits 4 bytes (else its offset)
//
// The Orientation tag is 0x0112, type SHORT (3), count 1: its value is the entry's bytes
// 8-9, 1 to 8. The first such entry of IFD0 counts. Nothing else is followed (no other IFD,
// no offset but IFD0's), so the work is bounded by IFD0's entries: at most 65535.
#include <stdio.h>

#include "codec.h"

#define ORIENTATION_TAG 0x0112
#define TYPE_SHORT 3

static unsigned rd16(const uint8_t *p, int be)
{
	return be ? (unsigned)p[0] << 8 | p[1] : (unsigned)p[1] << 8 | p[0];
}

static uint32_t rd32(const uint8_t *p, int be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

// The block's byte order: 1 big-endian, 0 little-endian, -1 neither.
static int byte_order(const uint8_t *t, size_t n)
{
	if (n >= 2 && t[0] == 'M' && t[1] == 'M')
		return 1;
	if (n >= 2 && t[0] == 'I' && t[1] == 'I')
		return 0;
	return -1;
}

int exif_orientation(const uint8_t *t, size_t n, size_t *at, char *why, size_t why_size)
{
	int be = byte_order(t, n);
	uint32_t ifd;
	unsigned count;

	if (n < 8 || be < 0 || rd16(t + 2, be) != 42) {
		snprintf(why, why_size, "no TIFF header");
		return -1;
	}
	ifd = rd32(t + 4, be);
	if (ifd > n || n - ifd < 2) {
		snprintf(why, why_size, "IFD0 at offset %lu lies outside the %zu-byte block",
			 (unsigned long)ifd, n);
		return -1;
	}
	count = rd16(t + ifd, be);
	if ((n - ifd - 2) / 12 < count) {
		snprintf(why, why_size, "IFD0's %u entries run past the end of the block", count);
		return -1;
	}
	for (unsigned i = 0; i < count; i++) {
		const uint8_t *e = t + ifd + 2 + 12 * (size_t)i;
		unsigned v;
		if (rd16(e, be) != ORIENTATION_TAG)
			continue;
		if (rd16(e + 2, be) != TYPE_SHORT || rd32(e + 4, be) != 1) {
			snprintf(why, why_size, "the orientation is not one 16-bit number");
			return -1;
		}
		v = rd16(e + 8, be);
		if (v < 1 || v > 8) {
			snprintf(why, why_size, "the orientation is %u, not 1 to 8", v);
			return -1;
		}
		*at = (size_t)(e + 8 - t);
		return (int)v;
	}
	return 0;
}

void exif_set_orientation(uint8_t *t, size_t n, size_t at, int orient)
{
	int be = byte_order(t, n);

	if (be < 0 || at > n || n - at < 2)
		return;
	t[at] = (uint8_t)(be ? 0 : orient);
	t[at + 1] = (uint8_t)(be ? orient : 0);
}
