// SPDX-License-Identifier: MIT
// Input: the whole file (or stdin) is read into memory with a size bound, its format is
// recognised by its first bytes, and the format's reader parses the header and checks
// the limits before any pixel is decoded. Output: format names and extensions, the
// channel-count check and img_encode(), which hands the image to one format's writer.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../err.h"
#include "codec.h"

// First buffer size for inputs of unknown size (pipes, character devices).
#define READ_CHUNK ((size_t)1 << 16)

// Bytes enough to recognise every input format (and the plain PNM types we name).
#define SNIFF_BYTES 8

static enum img_format sniff(const uint8_t *p, size_t n);

// Reads all of fd into *out / *len, refusing more than max bytes. size_hint is the
// file's size when known (0 otherwise), so a regular file needs a single allocation.
// Reading stops early when the first SNIFF_BYTES are no image format climg reads: the
// caller then reports the format, and /dev/zero or a stream of text costs one read.
static int read_all(const char *name, int fd, size_t size_hint, uint64_t max, uint8_t **out,
                    size_t *len)
{
	uint8_t *buf = NULL;
	size_t cap = 0, used = 0;
	int sniffed = 0;
	// One more byte than the limit may be read, to tell "exactly max" from "larger".
	uint64_t cap_max = max < SIZE_MAX - 1 ? max + 1 : SIZE_MAX - 1;

	cap = size_hint ? size_hint + 1 : READ_CHUNK;
	if (cap > cap_max)
		cap = (size_t)cap_max;
	if (cap == 0)
		cap = 1;
	buf = malloc(cap);
	if (!buf) {
		err_set("%s: out of memory reading the input", name);
		goto fail;
	}
	for (;;) {
		ssize_t n;

		if (used == cap) {
			size_t ncap;
			uint8_t *nbuf;

			if (used > max)
				break;
			ncap = cap > cap_max / 2 ? (size_t)cap_max : cap * 2;
			nbuf = realloc(buf, ncap);
			if (!nbuf) {
				err_set("%s: out of memory reading the input (%zu bytes so far)",
				        name, used);
				goto fail;
			}
			buf = nbuf;
			cap = ncap;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err_set("%s: cannot read: %s", name, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (!sniffed && used >= SNIFF_BYTES) {
			sniffed = 1;
			if (sniff(buf, used) == FMT_NONE)
				break;
		}
	}
	if (used > max) {
		err_set("%s: input is larger than --max-input-bytes (%llu)", name,
		        (unsigned long long)max);
		goto fail;
	}
	*out = buf;
	*len = used;
	return 0;
fail:
	free(buf);
	return -1;
}

// Opens path ("-" = stdin) and reads it into r->data.
static int read_input(struct img_reader *r, const char *path)
{
	struct stat st;
	int fd = -1;
	int is_stdin = strcmp(path, "-") == 0;
	size_t hint = 0;
	int rc = -1;

	if (is_stdin) {
		fd = STDIN_FILENO;
	} else {
		do
			fd = open(path, O_RDONLY | O_CLOEXEC);
		while (fd < 0 && errno == EINTR);
		if (fd < 0) {
			err_set("%s: cannot open: %s", r->name, strerror(errno));
			goto done;
		}
	}
	if (fstat(fd, &st) != 0) {
		err_set("%s: cannot read: %s", r->name, strerror(errno));
		goto done;
	}
	if (S_ISDIR(st.st_mode)) {
		err_set("%s: cannot read: %s", r->name, strerror(EISDIR));
		goto done;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((uint64_t)st.st_size > r->lim.max_input_bytes) {
			err_set("%s: input is larger than --max-input-bytes (%llu)", r->name,
			        (unsigned long long)r->lim.max_input_bytes);
			goto done;
		}
		if ((uint64_t)st.st_size < SIZE_MAX - 1)
			hint = (size_t)st.st_size;
	}
	rc = read_all(r->name, fd, hint, r->lim.max_input_bytes, &r->data, &r->size);
done:
	if (fd >= 0 && !is_stdin)
		close(fd); // read-only: nothing to lose on close
	return rc;
}

// Recognises the format by the first bytes; FMT_NONE when none matches.
static enum img_format sniff(const uint8_t *p, size_t n)
{
	static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

	if (n >= 8 && memcmp(p, png_sig, 8) == 0)
		return FMT_PNG;
	if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
		return FMT_JPEG;
	if (n >= 2 && p[0] == 'B' && p[1] == 'M')
		return FMT_BMP;
	if (n >= 2 && p[0] == 'P' && p[1] == '5')
		return FMT_PGM;
	if (n >= 2 && p[0] == 'P' && p[1] == '6')
		return FMT_PPM;
	return FMT_NONE;
}

// The format's open function: parses the header and keeps the metadata.
static int format_open(struct img_reader *r)
{
	switch (r->fmt) {
	case FMT_PNG: return io_png_open(r);
	case FMT_JPEG: return io_jpeg_open(r);
	case FMT_BMP: return io_bmp_open(r);
	default: return io_pnm_open(r);
	}
}

// Recognises the format of r->data and parses the header (the format's open function).
static int reader_parse(struct img_reader *r)
{
	if (r->size == 0)
		return err_set("%s: the input is empty", r->name);
	r->fmt = sniff(r->data, r->size);
	if (r->fmt != FMT_NONE) {
		if (format_open(r) != 0)
			return -1;
		r->g.orient = r->meta.orient;
		return 0;
	}
	// Plain (ASCII) PNM and PAM start like binary PNM: say what they are.
	if (r->size >= 3 && r->data[0] == 'P' && r->data[1] != 0 && strchr("12347", r->data[1]) &&
	    r->data[2] != 0 && strchr(" \t\r\n", r->data[2]))
		return err_set("%s: PNM type P%c is not supported (only binary PGM P5 and PPM P6)",
		               r->name, r->data[1]);
	return err_set("%s: unrecognised image format (not PNG, JPEG, BMP, PGM or PPM)", r->name);
}

// A reader named name, with no data yet. NULL with err set.
static struct img_reader *reader_new(const char *name, const struct io_limits *lim)
{
	struct img_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		err_set("%s: out of memory", name);
		return NULL;
	}
	r->lim = *lim;
	r->name = strdup(name);
	if (!r->name) {
		err_set("%s: out of memory", name);
		free(r);
		return NULL;
	}
	return r;
}

struct img_reader *img_reader_open(const char *path, const struct io_limits *lim)
{
	struct img_reader *r = reader_new(strcmp(path, "-") == 0 ? "stdin" : path, lim);

	if (!r)
		return NULL;
	if (read_input(r, path) != 0 || reader_parse(r) != 0) {
		img_reader_close(r);
		return NULL;
	}
	return r;
}

struct img_reader *img_reader_open_mem(const char *name, const uint8_t *data, size_t size,
                                       const struct io_limits *lim)
{
	struct img_reader *r = reader_new(name, lim);

	if (!r)
		return NULL;
	if ((uint64_t)size > lim->max_input_bytes) {
		err_set("%s: input is larger than --max-input-bytes (%llu)", name,
		        (unsigned long long)lim->max_input_bytes);
		goto fail;
	}
	r->data = malloc(size ? size : 1);
	if (!r->data) {
		err_set("%s: out of memory", name);
		goto fail;
	}
	memcpy(r->data, data, size);
	r->size = size;
	if (reader_parse(r) != 0)
		goto fail;
	return r;
fail:
	img_reader_close(r);
	return NULL;
}

struct geom img_reader_geom(const struct img_reader *r)
{
	return r->g;
}

enum img_format img_reader_format(const struct img_reader *r)
{
	return r->fmt;
}

size_t img_reader_slack(const struct img_reader *r)
{
	return r->slack;
}

int img_reader_strips(const struct img_reader *r)
{
	return r->strips;
}

// Frees the decoder state and the input bytes, which are not needed after decoding.
static void reader_release(struct img_reader *r)
{
	if (r->release)
		r->release(r);
	r->release = NULL;
	r->state = NULL;
	free(r->data);
	r->data = NULL;
	r->size = 0;
}

int img_reader_decode(struct img_reader *r, uint8_t *dst)
{
	int rc;

	if (r->done)
		return err_set("%s: the image was already decoded", r->name);
	r->done = 1;
	r->strips = 1;
	rc = r->decode(r, dst);
	reader_release(r);
	return rc;
}

void img_reader_close(struct img_reader *r)
{
	if (!r)
		return;
	reader_release(r);
	img_meta_free(&r->meta);
	free(r->name);
	free(r);
}

// ---- output formats ------------------------------------------------------------------

static const struct {
	const char *name;
	enum img_format fmt;
} format_names[] = {
    {"png", FMT_PNG}, {"jpg", FMT_JPEG}, {"jpeg", FMT_JPEG}, {"bmp", FMT_BMP},
    {"tga", FMT_TGA}, {"pgm", FMT_PGM},  {"ppm", FMT_PPM},
};

enum img_format img_format_from_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (strcasecmp(name, format_names[i].name) == 0)
			return format_names[i].fmt;
	return FMT_NONE;
}

enum img_format img_format_from_ext(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dot = strrchr(base, '.');

	// ".png" alone is a hidden file's name, not an extension.
	if (!dot || dot == base)
		return FMT_NONE;
	return img_format_from_name(dot + 1);
}

const char *img_format_name(enum img_format fmt)
{
	switch (fmt) {
	case FMT_PNG: return "png";
	case FMT_JPEG: return "jpeg";
	case FMT_BMP: return "bmp";
	case FMT_TGA: return "tga";
	case FMT_PGM: return "pgm";
	case FMT_PPM: return "ppm";
	case FMT_NONE: break;
	}
	return "none";
}

int img_format_check(enum img_format fmt, int ch, int *drops_alpha)
{
	int drops = 0;

	if (drops_alpha)
		*drops_alpha = 0;
	if (ch < 1 || ch > 4)
		return err_set("cannot write an image of %d channels", ch);
	switch (fmt) {
	case FMT_PNG:
	case FMT_TGA: break;
	case FMT_JPEG: drops = ch == 2 || ch == 4; break;
	case FMT_BMP:
		// stb writes grey+alpha as 24-bit RGB; RGBA keeps its alpha (32-bit BMP).
		drops = ch == 2;
		break;
	case FMT_PGM:
		if (ch != 1)
			return err_set("pgm output needs a 1-channel image; the result has %d "
			               "channels",
			               ch);
		break;
	case FMT_PPM:
		if (ch != 3)
			return err_set("ppm output needs a 3-channel image; the result has %d "
			               "channel%s",
			               ch, ch == 1 ? "" : "s");
		break;
	default: return err_set("unknown output format");
	}
	if (drops_alpha)
		*drops_alpha = drops;
	return 0;
}

int img_encode(struct outfile *f, enum img_format fmt, const struct img *im,
               const struct write_opts *opts)
{
	int quality = opts ? opts->jpeg_quality : 90;
	int level = opts ? opts->png_level : 6;
	const struct img_meta *meta = opts ? opts->meta : NULL;

	if (img_format_check(fmt, im->ch, NULL) != 0)
		return err_prefix("%s", outfile_name(f));
	if (im->w <= 0 || im->h <= 0 || !im->data)
		return err_set("%s: cannot write an empty image (%dx%d)", outfile_name(f), im->w,
		               im->h);
	switch (fmt) {
	case FMT_PNG:
		if (level < 0 || level > 9)
			return err_set("%s: png compression level must be 0..9, not %d",
			               outfile_name(f), level);
		return io_png_encode(f, im, level, meta);
	case FMT_JPEG:
		if (quality < 1 || quality > 100)
			return err_set("%s: jpeg quality must be 1..100, not %d", outfile_name(f),
			               quality);
		return io_jpeg_encode(f, im, quality, meta);
	case FMT_BMP: return io_bmp_encode(f, im);
	case FMT_TGA: return io_tga_encode(f, im);
	case FMT_PGM:
	case FMT_PPM: return io_pnm_encode(f, im);
	default: return err_set("%s: unknown output format", outfile_name(f));
	}
}
