// SPDX-License-Identifier: MIT
// The common PNG (8-bit grey, grey+alpha, RGB or RGBA, not interlaced, no palette, no tRNS)
// decoded without libpng's row loop: the IDAT chunks, their CRCs checked, are joined in
// place in the file's bytes, inflated by libdeflate in one call straight into the
// destination, and unfiltered there row by row. The rows' filter bytes make the inflated
// data h bytes longer than the image: the caller's destination has that room
// (img_reader_slack). Anything the specification does not allow (a CRC, the zlib stream, a
// filter type, too little or too much data) ends the attempt with the file's bytes as they
// were, and libpng decodes it instead, with its own messages.
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "pngfilter.h"

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

// The IDAT chunks, consecutive from the first: chunk i's data starts at data + at[i].
struct idats {
	size_t *at, *len;
	uint8_t (*gap)[12]; // gap[i]: the 12 bytes before chunk i's data that joining overwrote
	size_t n;
};

// Finds the IDAT chunks and checks their CRCs. 0, or 1 where they are not as they should be.
static int idats_find(const uint8_t *data, size_t size, struct idats *c)
{
	size_t p = 8, cap = 0;

	while (p + 12 <= size && memcmp(data + p + 4, "IDAT", 4) != 0)
		p += 12 + (size_t)be32(data + p); // the chunks before: libpng has read them
	while (p + 12 <= size && memcmp(data + p + 4, "IDAT", 4) == 0) {
		size_t len = be32(data + p);
		if (len > 0x7fffffff || len > size - p - 12 ||
		    libdeflate_crc32(0, data + p + 4, len + 4) != be32(data + p + 8 + len))
			return 1;
		if (c->n == cap) {
			cap = cap ? 2 * cap : 64;
			size_t *at = realloc(c->at, cap * sizeof *at);
			if (at)
				c->at = at;
			size_t *l = realloc(c->len, cap * sizeof *l);
			if (l)
				c->len = l;
			uint8_t(*g)[12] = realloc(c->gap, cap * sizeof *g);
			if (g)
				c->gap = g;
			if (!at || !l || !g)
				return 1;
		}
		c->at[c->n] = p + 8;
		c->len[c->n++] = len;
		p += 12 + len;
	}
	return c->n == 0;
}

// Moves the chunks' data together after the first's, keeping what it overwrites. Returns the
// joined stream's length.
static size_t idats_join(uint8_t *data, struct idats *c)
{
	size_t to = c->at[0] + c->len[0];
	for (size_t i = 1; i < c->n; i++) {
		memcpy(c->gap[i], data + c->at[i] - 12, 12);
		memmove(data + to, data + c->at[i], c->len[i]);
		to += c->len[i];
	}
	return to - c->at[0];
}

// Undoes idats_join.
static void idats_split(uint8_t *data, const struct idats *c)
{
	size_t to = c->at[0];
	for (size_t i = 0; i < c->n; i++)
		to += c->len[i];
	for (size_t i = c->n; i-- > 1;) {
		to -= c->len[i];
		memmove(data + c->at[i], data + to, c->len[i]);
		memcpy(data + c->at[i] - 12, c->gap[i], 12);
	}
}

// Row y of the inflated data, its filter type t and n bytes in s, unfiltered into d (prev:
// the row above, already unfiltered; NULL on the first row). d lies before s in the same
// memory (y + 1 bytes before): each byte is read before any write reaches it. 0, or 1 for a
// filter type the specification does not have.
static int unfilter(int t, const uint8_t *s, uint8_t *d, const uint8_t *prev, size_t n,
		    size_t bpp)
{
	size_t i;
	switch (t) {
	case 0:
		memmove(d, s, n);
		return 0;
	case 1:
		for (i = 0; i < n; i++)
			d[i] = (uint8_t)(s[i] + (i >= bpp ? d[i - bpp] : 0));
		return 0;
	case 2:
		for (i = 0; i < n; i++)
			d[i] = (uint8_t)(s[i] + (prev ? prev[i] : 0));
		return 0;
	case 3:
		for (i = 0; i < n; i++) {
			int a = i >= bpp ? d[i - bpp] : 0, b = prev ? prev[i] : 0;
			d[i] = (uint8_t)(s[i] + ((a + b) >> 1));
		}
		return 0;
	case 4:
		for (i = 0; i < n; i++) {
			int a = i >= bpp ? d[i - bpp] : 0, b = prev ? prev[i] : 0;
			int c = prev && i >= bpp ? prev[i - bpp] : 0;
			d[i] = (uint8_t)(s[i] + pngf_paeth(a, b, c));
		}
		return 0;
	}
	return 1;
}

int io_png_fast(uint8_t *data, size_t size, uint32_t w, uint32_t h, int ch, uint8_t *dst)
{
	struct idats c = { 0 };
	struct libdeflate_decompressor *z = NULL;
	size_t n = (size_t)w * (size_t)ch, joined = 0;
	int rc = 1;

	if (idats_find(data, size, &c) != 0 || !(z = libdeflate_alloc_decompressor()))
		goto done;
	joined = idats_join(data, &c);
	// exactly the rows and their filter bytes, or libpng says what is wrong
	if (libdeflate_zlib_decompress(z, data + c.at[0], joined, dst, (size_t)h * (n + 1), NULL) !=
	    LIBDEFLATE_SUCCESS)
		goto done;
	rc = 0;
	for (size_t y = 0; y < h && !rc; y++) {
		const uint8_t *s = dst + y * (n + 1);
		rc = unfilter(s[0], s + 1, dst + y * n, y ? dst + (y - 1) * n : NULL, n,
			      (size_t)ch);
	}
done:
	if (joined && rc)
		idats_split(data, &c);
	libdeflate_free_decompressor(z);
	free(c.at);
	free(c.len);
	free(c.gap);
	return rc;
}
