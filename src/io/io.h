// SPDX-License-Identifier: MIT
// Image input and output. Formats are recognised by content on input and by the
// output name's extension (or --format) on output. This module never talks to OpenCL.
#ifndef CLIMG_IO_H
#define CLIMG_IO_H

#include <stddef.h>
#include <stdint.h>

#include "../img.h"

enum img_format { FMT_NONE = 0, FMT_PNG, FMT_JPEG, FMT_BMP, FMT_TGA, FMT_PGM, FMT_PPM };

struct io_limits {
	uint64_t max_pixels;      // w * h above this is refused before decoding
	uint64_t max_input_bytes; // input files (and stdin) larger than this are refused
};

// ---- reading -------------------------------------------------------------------------

struct img_reader;

// Reads the whole input ("-" = standard input), recognises its format by content, parses
// the header and checks the limits, without decoding pixels. NULL with err set on failure;
// messages start with the input name ("stdin" for "-"), e.g.
// "in.png: unrecognised image format (not PNG, JPEG, BMP, PGM or PPM)".
struct img_reader *img_reader_open(const char *path, const struct io_limits *lim);

// The same for an input already in memory (copied; name is used in messages). Fuzzing
// and tests use it.
struct img_reader *img_reader_open_mem(const char *name, const uint8_t *data, size_t size,
                                       const struct io_limits *lim);

// The image's geometry as it will be decoded (channel count after palette expansion).
struct geom img_reader_geom(const struct img_reader *r);

// The input's format.
enum img_format img_reader_format(const struct img_reader *r);

// Bytes past the image that img_reader_decode may use in dst as room to work in: PNG's
// filter bytes, one a row (src/io/png_fast.c); 0 for the other formats.
size_t img_reader_slack(const struct img_reader *r);

// Decodes the pixels into dst, which holds geom_bytes(img_reader_geom(r)) +
// img_reader_slack(r) bytes; only the image's bytes are its result. Once
// only: it frees the input bytes and the decoder whether it succeeds or not. A truncated
// or corrupt file is an error (never an image with holes); bytes after the end of the
// image (PNG's IEND, JPEG's EOI, the BMP or PNM pixel data) are ignored.
int img_reader_decode(struct img_reader *r, uint8_t *dst);

// How many strips img_reader_decode decoded at once, on separate threads: 1 unless the
// input is a JPEG with restart markers at the starts of MCU rows (src/io/jpeg.c); 0 before
// decoding.
int img_reader_strips(const struct img_reader *r);

// NULL-safe.
void img_reader_close(struct img_reader *r);

// ---- metadata ------------------------------------------------------------------------

// What climg keeps of an input besides its pixels (climg(1), METADATA): the ICC colour
// profile (PNG iCCP; JPEG APP2 ICC_PROFILE segments, joined) and the Exif block (PNG eXIf;
// JPEG APP1 "Exif\0\0", the first) as its TIFF structure, with what its Orientation tag
// says. Read with the header by img_reader_open; BMP, PGM and PPM have none.
struct img_meta {
	uint8_t *icc; // the profile (malloc'd), or NULL
	size_t icc_bytes;
	uint8_t *exif; // the Exif TIFF structure from its "II" or "MM" (malloc'd), or NULL
	size_t exif_bytes;
	int orient;       // the Orientation tag's value, 1..8; 0 where there is none, or where
	                  // the block is malformed (kept as it is, its orientation not read)
	size_t orient_at; // where that 16-bit value is in exif (when orient is not 0)
};

// Moves the input's metadata into m (r keeps none). The geometry keeps its orient.
void img_reader_meta_take(struct img_reader *r, struct img_meta *m);

// Sets the Orientation tag of m's Exif block to orient (1..8), where it has one (m->orient
// not 0): after a stage that turned the pixels as it said.
void img_meta_orient(struct img_meta *m, int orient);

// Frees what m holds and empties it. NULL-safe.
void img_meta_free(struct img_meta *m);

// ---- writing -------------------------------------------------------------------------

// The format for an output name by its extension (.png .jpg .jpeg .bmp .tga .pgm .ppm,
// any case), FMT_NONE when unknown.
enum img_format img_format_from_ext(const char *path);

// The format for a --format word (png, jpg, jpeg, bmp, tga, pgm, ppm), FMT_NONE if unknown.
enum img_format img_format_from_name(const char *name);

// "png", "jpeg", ...
const char *img_format_name(enum img_format fmt);

// Whether an image of ch channels can be written in fmt: -1 with err set when it cannot
// (.pgm needs 1 channel, .ppm needs 3). Sets *drops_alpha when the format will drop an
// alpha channel (JPEG; BMP for grey+alpha) so the caller can warn.
int img_format_check(enum img_format fmt, int ch, int *drops_alpha);

struct write_opts {
	int jpeg_quality; // 1..100
	int png_level;    // 0..9, the zlib scale; what each does: png_write.c, climg(1)
	const struct img_meta *meta; // written into PNG and JPEG output (climg(1), METADATA);
	                             // NULL: none
};

// An output destination written atomically: a temporary file in the target directory,
// renamed over the final name by outfile_commit(). "-" is standard output; an existing
// path that is not a regular file (/dev/null, a FIFO) is written directly. Every write is
// checked. While a temporary file exists, SIGINT/SIGTERM/SIGHUP remove it before exiting.
// Different outfiles may be used on different threads at once (one outfile, one thread);
// at most 1024 temporary files exist at once (outfile_open fails beyond that).
struct outfile;

// Opens the destination now, so a missing or read-only directory, or a path that is a
// directory, is reported before any decoding. NULL with err set on failure.
struct outfile *outfile_open(const char *path);

// Appends bytes; -1 with err set on a write failure (ENOSPC, EPIPE, ...).
int outfile_write(struct outfile *f, const void *data, size_t len);

// Flushes, closes and renames into place; frees f. -1 with err set on failure, in which
// case the temporary file is removed and any previous file at the path is untouched.
int outfile_commit(struct outfile *f);

// Removes the temporary file and frees f. NULL-safe.
void outfile_abort(struct outfile *f);

// The size and SHA-256 of an output, as written (SHA-256 by nettle).
struct outfile_sum {
	uint64_t bytes;     // every byte outfile_write was given
	uint8_t sha256[32]; // of the bytes written since outfile_sum_on; all zero without it
};

// From now on, hashes what is written; call it before the first outfile_write so the sum
// covers the whole output.
void outfile_sum_on(struct outfile *f);

// As outfile_commit, and fills *sum (NULL allowed) first, whether the commit succeeds or
// not (the caller uses it only on success).
int outfile_commit_sum(struct outfile *f, struct outfile_sum *sum);

// Encodes im in fmt into f (does not commit). Checks img_format_check() and opts (NULL
// means quality 90, level 6, no metadata); messages start with the output name ("stdout"
// for "-"). PNG and JPEG get opts->meta's ICC profile where its colour space is the
// image's (else a warning says it is left out) and its Exif block (JPEG: where it fits
// one APP1 segment, else a warning); other formats get none.
int img_encode(struct outfile *f, enum img_format fmt, const struct img *im,
	       const struct write_opts *opts);

#endif
