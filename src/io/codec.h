// SPDX-License-Identifier: MIT
// Internal to src/io: what io.c shares with the per-format readers and writers.
// Nothing outside src/io includes this header.
#ifndef CLIMG_IO_CODEC_H
#define CLIMG_IO_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "io.h"

// A reader owns the whole input in memory (data, size) from img_reader_open() until the
// pixels are decoded. A format's open function parses the header, sets g and, through
// io_check_geom(), checks the limits; it also sets decode and release. decode writes
// geom_bytes(&g) bytes to dst; release frees state (and must be NULL-safe about it).
struct img_reader {
	char *name;    // input name for messages ("stdin" for "-")
	uint8_t *data; // the whole input; freed after decoding
	size_t size;   // bytes in data
	enum img_format fmt;
	struct geom g;
	struct io_limits lim;
	int done;    // decode was called (data and state are gone)
	int strips;  // strips decode ran in on separate threads (1: in one piece)
	void *state; // per-format decoder state
	int (*decode)(struct img_reader *r, uint8_t *dst);
	void (*release)(struct img_reader *r);
};

// Checks a header's geometry against IMG_MAX_SIDE and r->lim, naming the limit in the
// message; zero sizes are refused too. Sets r->g on success. 0 / -1 with err set. In geom.c,
// a leaf: the readers call it, and io.c calls the readers.
int io_check_geom(struct img_reader *r, long long w, long long h, int ch);

// Header parsers, one per input format: 0 / -1 with err set (message starts r->name).
int io_png_open(struct img_reader *r);
int io_jpeg_open(struct img_reader *r);
int io_bmp_open(struct img_reader *r);
int io_pnm_open(struct img_reader *r);

// The output's name for messages ("stdout" for "-").
const char *outfile_name(const struct outfile *f);

// Encoders. im has 1..4 channels and img_format_check() accepted it; opts are in range.
int io_png_encode(struct outfile *f, const struct img *im, int level);
int io_jpeg_encode(struct outfile *f, const struct img *im, int quality);
int io_bmp_encode(struct outfile *f, const struct img *im);
int io_tga_encode(struct outfile *f, const struct img *im);
int io_pnm_encode(struct outfile *f, const struct img *im);

#endif
