// SPDX-License-Identifier: MIT
// Binary PGM (P5, 1 channel) and PPM (P6, 3 channels) with maxval 255, read and written
// here. Header: magic, width, height, maxval, separated by whitespace, where '#' starts
// a comment running to the end of the line; exactly one whitespace byte follows maxval,
// then the rows, top to bottom. Bytes after the pixels (a second image) are ignored.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "codec.h"

struct pnm_state {
	size_t offset; // where the pixels start in the reader's data
};

static int is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Skips whitespace and comments, then reads a decimal number at *pos. -1 when there is
// none, -2 when it has more than 12 digits (far past every limit).
static long long read_number(const uint8_t *p, size_t n, size_t *pos)
{
	long long v = 0;
	size_t i = *pos;
	int digits = 0;

	for (;;) {
		while (i < n && is_space(p[i]))
			i++;
		if (i < n && p[i] == '#') {
			while (i < n && p[i] != '\n' && p[i] != '\r')
				i++;
			continue;
		}
		break;
	}
	while (i < n && p[i] >= '0' && p[i] <= '9') {
		if (++digits > 12)
			return -2;
		v = v * 10 + (p[i] - '0');
		i++;
	}
	*pos = i;
	return digits ? v : -1;
}

static int pnm_decode(struct img_reader *r, uint8_t *dst)
{
	struct pnm_state *s = r->state;

	memcpy(dst, r->data + s->offset, geom_bytes(&r->g));
	return 0;
}

static void pnm_release(struct img_reader *r)
{
	free(r->state);
	r->state = NULL;
}

int io_pnm_open(struct img_reader *r)
{
	const char *kind = r->fmt == FMT_PGM ? "pgm" : "ppm";
	int ch = r->fmt == FMT_PGM ? 1 : 3;
	const uint8_t *p = r->data;
	size_t n = r->size, pos = 2;
	long long w, h, maxval;
	uint64_t need;
	struct pnm_state *s;

	if (n > 2 && !is_space(p[2]) && p[2] != '#')
		return err_set("%s: %s: bad header (no space after the magic number)", r->name,
		               kind);
	w = read_number(p, n, &pos);
	h = w < 0 ? w : read_number(p, n, &pos);
	maxval = h < 0 ? h : read_number(p, n, &pos);
	if (maxval == -2)
		return err_set("%s: %s: bad header (a number is too large)", r->name, kind);
	if (maxval < 0)
		return err_set("%s: %s: bad header (expected width, height and maxval)", r->name,
		               kind);
	if (maxval < 1 || maxval > 65535)
		return err_set("%s: %s: bad header (maxval %lld)", r->name, kind, maxval);
	if (maxval != 255)
		return err_set("%s: %s: maxval %lld is not supported (only 255)", r->name, kind,
		               maxval);
	if (pos >= n || !is_space(p[pos]))
		return err_set("%s: %s: bad header (no whitespace after maxval)", r->name, kind);
	pos++;
	if (io_check_geom(r, w, h, ch) != 0)
		return -1;
	need = (uint64_t)w * (uint64_t)h * (uint64_t)ch;
	if (n - pos < need)
		return err_set("%s: %s: the pixel data is truncated (%zu of %llu bytes)", r->name,
		               kind, n - pos, (unsigned long long)need);

	s = calloc(1, sizeof(*s));
	if (!s)
		return err_set("%s: out of memory", r->name);
	s->offset = pos;
	r->state = s;
	r->decode = pnm_decode;
	r->release = pnm_release;
	return 0;
}

int io_pnm_encode(struct outfile *f, const struct img *im)
{
	char head[64];
	int len;

	len = snprintf(head, sizeof(head), "P%c\n%d %d\n255\n", im->ch == 1 ? '5' : '6', im->w,
	               im->h);
	if (len < 0 || (size_t)len >= sizeof(head))
		return err_set("%s: cannot format the header", outfile_name(f));
	if (outfile_write(f, head, (size_t)len) != 0)
		return -1;
	return outfile_write(f, im->data, img_bytes(im));
}
