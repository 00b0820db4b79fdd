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
	struct geom g;      // g.orient is meta.orient, set once the header is read
	struct img_meta meta;
	struct io_limits lim;
	int done;    // decode was called (data and state are gone)
	int strips;  // strips decode ran in on separate threads (1: in one piece)
	size_t slack; // bytes past the image decode may use in dst (img_reader_slack)
	void *state; // per-format decoder state
	int (*decode)(struct img_reader *r, uint8_t *dst);
	void (*release)(struct img_reader *r);
};

// The image data of the PNG file data (size bytes, as read into a reader: it is changed
// and put back), w x h pixels of ch 8-bit channels, not interlaced, no palette or tRNS,
// decoded into dst, which has room for h * (w * ch + 1) bytes. 0, or 1 where it was not
// (data is then as it was and libpng is to decode it). In png_fast.c.
int io_png_fast(uint8_t *data, size_t size, uint32_t w, uint32_t h, int ch, uint8_t *dst);

// Checks a header's geometry against IMG_MAX_SIDE and r->lim, naming the limit in the
// message; zero sizes are refused too. Sets r->g on success. 0 / -1 with err set. In geom.c,
// a leaf: the readers call it, and io.c calls the readers.
int io_check_geom(struct img_reader *r, long long w, long long h, int ch);

// ---- metadata (meta.c, exif.c) ----

// Keeps a copy of the Exif TIFF structure t (n bytes) in r->meta and reads its Orientation
// tag; a malformed block is kept as it is, with a warning naming the input that its
// orientation is not read. Keeps only the first block. 0 / -1 with err set (out of memory).
int io_meta_exif(struct img_reader *r, const uint8_t *t, size_t n);

// Whether ICC profile icc (n bytes) describes an image of ch channels: its data colour
// space (bytes 16-19) is GRAY for 1 and 2 channels, RGB for 3 and 4. Where not, warns that
// output out_name gets no profile.
int io_icc_fits(const uint8_t *icc, size_t n, int ch, const char *out_name);

// The Orientation tag of Exif TIFF structure t (n bytes): 1..8, with *at where its 16-bit
// value is in t; 0 when IFD0 has no Orientation tag; -1 when the structure is malformed or
// the tag is not one SHORT of 1..8, with why (why_size bytes) saying how in a few words.
int exif_orientation(const uint8_t *t, size_t n, size_t *at, char *why, size_t why_size);

// Writes orient as the 16-bit value at offset at of t, in t's byte order.
void exif_set_orientation(uint8_t *t, size_t n, size_t at, int orient);

// Header parsers, one per input format: 0 / -1 with err set (message starts r->name).
int io_png_open(struct img_reader *r);
int io_jpeg_open(struct img_reader *r);
int io_bmp_open(struct img_reader *r);
int io_pnm_open(struct img_reader *r);

// The output's name for messages ("stdout" for "-").
const char *outfile_name(const struct outfile *f);

// Encoders. im has 1..4 channels and img_format_check() accepted it; opts are in range.
// meta (NULL: none): the metadata PNG and JPEG output keep (climg(1), METADATA).
int io_png_encode(struct outfile *f, const struct img *im, int level,
		  const struct img_meta *meta);
int io_jpeg_encode(struct outfile *f, const struct img *im, int quality,
		   const struct img_meta *meta);
int io_bmp_encode(struct outfile *f, const struct img *im);
int io_tga_encode(struct outfile *f, const struct img *im);
int io_pnm_encode(struct outfile *f, const struct img *im);

#endif
