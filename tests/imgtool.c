// SPDX-License-Identifier: MIT
// imgtool: a test helper built on src/io (img_reader_*, img_encode, outfile_*).
//
//   imgtool [OPTIONS] make W H CH PATTERN OUT   write a deterministic image
//   imgtool [OPTIONS] convert IN OUT            decode IN, encode OUT
//   imgtool [OPTIONS] mirror IN OUT             left-right mirror of IN
//   imgtool [OPTIONS] flip IN OUT               top-bottom flip of IN
//   imgtool [OPTIONS] cmp A B                   exit 0 when geometry and bytes are equal
//   imgtool [OPTIONS] maxdiff A B               largest absolute sample difference
//   imgtool [OPTIONS] info A                    "W H CH FORMAT"
//   imgtool [OPTIONS] dump A                    pixels as text, one line per row
//   imgtool [OPTIONS] pngvariant KIND OUT       PNGs climg does not write (see below)
//   imgtool [OPTIONS] jpegvariant KIND OUT      cmyk, progressive, baseline, arith, 12bit,
//                                               restart, restart-grey, scans:N (see below)
//   imgtool [OPTIONS] bmpvariant KIND OUT       pal8, pal4, pal1, topdown, rgb565, rle8
//   imgtool [OPTIONS] rawpng KIND OUT           hand-made PNGs: huge-header, bomb,
//                                               palette-oob (see below)
//   imgtool measure RESULT CMD [ARG...]         run CMD (signals at their defaults); write
//                                               "EXIT MAXRSS_KIB MS CPU_MS" to RESULT;
//                                               exit EXIT
//
// OPTIONS: -p MAX_PIXELS, -b MAX_INPUT_BYTES (reader limits; defaults 268435456 and
// 1 GiB), -q JPEG_QUALITY (90), -l PNG_LEVEL (6), -f FORMAT (output format instead of
// the extension), -k SIGNAL (raise SIGNAL after encoding, before the commit: tests the
// temporary-file cleanup).
//
// PATTERN (sample for pixel x, y, channel c; alpha is the last channel of 2 and 4):
//   grad        (x*5 + y*11 + c*67 + (x*y)%7) & 255: no symmetry, channels differ
//   smooth      c0 = x*255/(w-1), c1 = y*255/(h-1), c2 = (x+y)*255/(w+h-2),
//               c3 = 255 - c0/2 (for JPEG tests)
//   photo:SEED  smooth plus xorshift32 noise in -8..7, clamped
//   opaque:SEED photo:SEED with alpha 255
//   noise:SEED  xorshift32 from SEED, top byte per sample, row by row
//   const:V     every sample V
//   F           a letter F, 255 in every colour channel on 0, no rotation or mirror
//               symmetry; alpha = max(0, 255 - 3x - y)
//   impulse:X:Y colour channels 0 except 255 at (X, Y); alpha 255
//   xy          colour channel c = (x + 85 c) & 255, alpha = y & 255: on 256 x 256 every
//               pair of a colour value and an alpha value, in every colour channel
//
// TGA is an output format only in climg; imgtool reads .tga files (by extension) with
// its own small decoder so the round trip of stb's writer can be checked.
//
// Exit status: 0 success, 1 "different" (cmp), 2 error.
#include <errno.h>
#include <limits.h>
#include <png.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <jpeglib.h>

#include "../src/err.h"
#include "../src/io/io.h"

static struct io_limits limits = {268435456, (uint64_t)1 << 30};
static struct write_opts wopts = {90, 6, NULL};
static enum img_format force_fmt = FMT_NONE;
static int kill_sig;

static int fail(const char *msg)
{
	fprintf(stderr, "imgtool: %s\n", msg);
	return 2;
}

static int usage(void)
{
	fprintf(stderr,
	        "usage: imgtool [-p PIXELS] [-b BYTES] [-q QUALITY] [-l LEVEL] "
	        "[-f FORMAT] [-k SIGNAL]\n"
	        "               make W H CH PATTERN OUT | convert IN OUT | mirror IN OUT |\n"
	        "               flip IN OUT | cmp A B | poke IN OUT X Y C V |\n"
	        "               maxdiff A B | info A | dump A | pngvariant KIND OUT |\n"
	        "               jpegvariant KIND OUT | bmpvariant KIND OUT | rawpng KIND OUT |\n"
	        "       imgtool measure RESULT CMD [ARG...]\n");
	return 2;
}

// Whole string a decimal number in [min, max].
static int parse_num(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

// ---- reading, with a test-only TGA decoder -------------------------------------------

// Decodes the TGA subset stb_image_write produces (and a little more): types 2, 3, 10,
// 11; 8 (grey), 16 (grey+alpha), 24 and 32 bits; either vertical origin.
static int tga_decode(const uint8_t *p, size_t n, struct img *im)
{
	size_t pos, total, i, stride;
	int type, bpp, top_down, ch, y;
	uint8_t *raw = NULL;

	if (n < 18)
		return err_set("tga: file too short");
	type = p[2];
	im->w = p[12] | p[13] << 8;
	im->h = p[14] | p[15] << 8;
	bpp = p[16];
	top_down = (p[17] & 0x20) != 0;
	if (p[1] != 0)
		return err_set("tga: colour-mapped files are not supported");
	if (type == 3 || type == 11)
		ch = bpp == 8 ? 1 : bpp == 16 ? 2 : 0;
	else if (type == 2 || type == 10)
		ch = bpp == 24 ? 3 : bpp == 32 ? 4 : 0;
	else
		return err_set("tga: image type %d is not supported", type);
	if (!ch || im->w == 0 || im->h == 0)
		return err_set("tga: unsupported header (type %d, %d bits, %dx%d)", type, bpp,
		               im->w, im->h);
	im->ch = ch;
	total = img_bytes(im);
	stride = (size_t)im->w * (size_t)ch;
	raw = malloc(total);
	im->data = malloc(total);
	if (!raw || !im->data) {
		err_set("tga: out of memory");
		goto fail;
	}
	pos = 18 + (size_t)p[0];
	if (type < 8) {
		if (pos > n || n - pos < total)
			goto truncated;
		memcpy(raw, p + pos, total);
	} else {
		i = 0;
		while (i < total) {
			size_t count, k;
			int rep;

			if (pos >= n)
				goto truncated;
			rep = p[pos] & 0x80;
			count = (size_t)(p[pos] & 0x7f) + 1;
			pos++;
			if (count * (size_t)ch > total - i) {
				err_set("tga: a run crosses the end of the image");
				goto fail;
			}
			for (k = 0; k < count; k++) {
				if (n - pos < (size_t)ch)
					goto truncated;
				memcpy(raw + i, p + pos, (size_t)ch);
				i += (size_t)ch;
				if (!rep)
					pos += (size_t)ch;
			}
			if (rep)
				pos += (size_t)ch;
		}
	}
	// Bottom-up rows and BGR(A) samples become our top-down RGB(A).
	for (y = 0; y < im->h; y++) {
		const uint8_t *src = raw + (size_t)(top_down ? y : im->h - 1 - y) * stride;
		uint8_t *dst = im->data + (size_t)y * stride;

		memcpy(dst, src, stride);
		if (ch >= 3)
			for (i = 0; i < stride; i += (size_t)ch) {
				uint8_t t = dst[i];

				dst[i] = dst[i + 2];
				dst[i + 2] = t;
			}
	}
	free(raw);
	return 0;
truncated:
	err_set("tga: the file is truncated");
fail:
	free(raw);
	free(im->data);
	im->data = NULL;
	return -1;
}

static int read_tga(const char *path, struct img *im)
{
	FILE *fp = NULL;
	uint8_t *buf = NULL;
	size_t n = 0, cap = 1 << 16, got;
	int rc = -1;

	fp = fopen(path, "rb");
	if (!fp)
		return err_set("%s: cannot open: %s", path, strerror(errno));
	buf = malloc(cap);
	if (!buf)
		goto oom;
	while ((got = fread(buf + n, 1, cap - n, fp)) > 0) {
		n += got;
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap * 2);

			if (!nb)
				goto oom;
			buf = nb;
			cap *= 2;
		}
	}
	if (ferror(fp))
		err_set("%s: cannot read: %s", path, strerror(errno));
	else if (tga_decode(buf, n, im) != 0)
		err_prefix("%s", path);
	else
		rc = 0;
	goto done;
oom:
	err_set("%s: out of memory", path);
done:
	free(buf);
	fclose(fp);
	return rc;
}

// Reads any supported image into im (data malloc'd); *fmt gets its format.
static int load(const char *path, struct img *im, enum img_format *fmt)
{
	struct img_reader *r;
	struct geom g;

	memset(im, 0, sizeof(*im));
	if (strcmp(path, "-") != 0 && img_format_from_ext(path) == FMT_TGA) {
		if (fmt)
			*fmt = FMT_TGA;
		return read_tga(path, im);
	}
	r = img_reader_open(path, &limits);
	if (!r)
		return -1;
	g = img_reader_geom(r);
	if (fmt)
		*fmt = img_reader_format(r);
	im->w = g.w;
	im->h = g.h;
	im->ch = g.ch;
	im->data = malloc(geom_bytes(&g) + img_reader_slack(r));
	if (!im->data) {
		img_reader_close(r);
		return err_set("%s: out of memory", path);
	}
	if (img_reader_decode(r, im->data) != 0) {
		img_reader_close(r);
		free(im->data);
		im->data = NULL;
		return -1;
	}
	img_reader_close(r);
	return 0;
}

// ---- writing -------------------------------------------------------------------------

static enum img_format out_format(const char *path)
{
	if (force_fmt != FMT_NONE)
		return force_fmt;
	return img_format_from_ext(path);
}

// Before the commit: the -k test hook.
static void maybe_kill(void)
{
	if (kill_sig)
		raise(kill_sig);
}

static int save(const char *path, const struct img *im)
{
	enum img_format fmt = out_format(path);
	struct outfile *f;
	int drops;

	if (fmt == FMT_NONE)
		return err_set("%s: unknown output format (use -f)", path);
	if (img_format_check(fmt, im->ch, &drops) != 0)
		return err_prefix("%s", path);
	f = outfile_open(path);
	if (!f)
		return -1;
	if (img_encode(f, fmt, im, &wopts) != 0) {
		outfile_abort(f);
		return -1;
	}
	maybe_kill();
	return outfile_commit(f);
}

// ---- patterns ------------------------------------------------------------------------

static uint32_t xorshift32(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

static int clamp255(int v)
{
	return v < 0 ? 0 : v > 255 ? 255 : v;
}

static int in_f(int x, int y, int w, int h)
{
	int left = w / 5, right = w - w / 6;
	int top = h / 6, bottom = h - h / 6;
	int sw = w / 8 > 1 ? w / 8 : 1, sh = h / 8 > 1 ? h / 8 : 1;
	int mid = top + (bottom - top) / 2 - sh / 2;
	int mid_right = left + (right - left) * 2 / 3;

	if (y < top || y >= bottom || x < left)
		return 0;
	if (x < left + sw)
		return 1; // the stem
	if (y < top + sh && x < right)
		return 1; // the top bar
	if (y >= mid && y < mid + sh && x < mid_right)
		return 1; // the middle bar, shorter
	return 0;
}

static int smooth(int x, int y, int c, int w, int h)
{
	int c0 = w > 1 ? x * 255 / (w - 1) : 0;

	switch (c) {
	case 0: return c0;
	case 1: return h > 1 ? y * 255 / (h - 1) : 0;
	case 2: return w + h > 2 ? (x + y) * 255 / (w + h - 2) : 0;
	default: return 255 - c0 / 2;
	}
}

static int pattern(struct img *im, const char *pat)
{
	int w = im->w, h = im->h, ch = im->ch;
	int has_alpha = ch == 2 || ch == 4;
	long long a = 0, b = 0;
	uint32_t seed = 0;
	int x, y, c;
	uint8_t *p = im->data;
	enum { GRAD, SMOOTH, PHOTO, NOISE, CONST, LETTER_F, IMPULSE, XY } kind;
	int opaque = 0;

	if (strcmp(pat, "grad") == 0) {
		kind = GRAD;
	} else if (strcmp(pat, "smooth") == 0) {
		kind = SMOOTH;
	} else if (strncmp(pat, "photo:", 6) == 0 || strncmp(pat, "noise:", 6) == 0 ||
	           strncmp(pat, "opaque:", 7) == 0) {
		kind = pat[0] == 'n' ? NOISE : PHOTO;
		opaque = pat[0] == 'o';
		if (parse_num(strchr(pat, ':') + 1, 0, UINT32_MAX, &a) != 0)
			return err_set("bad seed in '%s'", pat);
		seed = a ? (uint32_t)a : 2463534242u;
	} else if (strcmp(pat, "xy") == 0) {
		kind = XY;
	} else if (strncmp(pat, "const:", 6) == 0) {
		kind = CONST;
		if (parse_num(pat + 6, 0, 255, &a) != 0)
			return err_set("bad value in '%s'", pat);
	} else if (strcmp(pat, "F") == 0) {
		kind = LETTER_F;
	} else if (strncmp(pat, "impulse:", 8) == 0) {
		char xs[32];
		const char *colon = strchr(pat + 8, ':');

		kind = IMPULSE;
		if (!colon || (size_t)(colon - pat - 8) >= sizeof(xs))
			return err_set("bad impulse '%s' (impulse:X:Y)", pat);
		memcpy(xs, pat + 8, (size_t)(colon - pat - 8));
		xs[colon - pat - 8] = 0;
		if (parse_num(xs, 0, w - 1, &a) != 0 || parse_num(colon + 1, 0, h - 1, &b) != 0)
			return err_set("bad impulse '%s' (impulse:X:Y inside the image)", pat);
	} else {
		return err_set("unknown pattern '%s'", pat);
	}

	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++)
			for (c = 0; c < ch; c++) {
				int alpha = has_alpha && c == ch - 1;
				int v = 0;

				switch (kind) {
				case GRAD: v = (x * 5 + y * 11 + c * 67 + (x * y) % 7) & 255; break;
				case SMOOTH: v = smooth(x, y, c, w, h); break;
				case PHOTO:
					v = clamp255(smooth(x, y, c, w, h) +
					             (int)(xorshift32(&seed) >> 28) - 8);
					break;
				case NOISE: v = (int)(xorshift32(&seed) >> 24); break;
				case CONST: v = (int)a; break;
				case LETTER_F:
					v = alpha ? clamp255(255 - 3 * x - y)
					          : in_f(x, y, w, h) * 255;
					break;
				case IMPULSE: v = alpha || (x == a && y == b) ? 255 : 0; break;
				case XY: v = alpha ? y & 255 : (x + 85 * c) & 255; break;
				}
				if (opaque && alpha)
					v = 255;
				*p++ = (uint8_t)v;
			}
	return 0;
}

// ---- subcommands ---------------------------------------------------------------------

static int cmd_make(char **av)
{
	long long w, h, ch;
	struct img im = {0};
	int rc;

	if (parse_num(av[0], 1, 1 << 20, &w) || parse_num(av[1], 1, 1 << 20, &h) ||
	    parse_num(av[2], 1, 4, &ch))
		return err_set("make: bad size or channel count");
	im.w = (int)w;
	im.h = (int)h;
	im.ch = (int)ch;
	im.data = malloc(img_bytes(&im));
	if (!im.data)
		return err_set("make: out of memory");
	rc = pattern(&im, av[3]);
	if (rc == 0)
		rc = save(av[4], &im);
	free(im.data);
	return rc;
}

static int cmd_convert(char **av)
{
	struct img im;
	int rc;

	if (load(av[0], &im, NULL) != 0)
		return -1;
	rc = save(av[1], &im);
	free(im.data);
	return rc;
}

// poke IN OUT X Y C V: IN with channel C of pixel (X, Y) set to V, into OUT (hand-made
// pairs for climg compare).
static int cmd_poke(char **av)
{
	struct img im;
	long long x, y, c, v;
	int rc;

	if (load(av[0], &im, NULL) != 0)
		return -1;
	if (parse_num(av[2], 0, im.w - 1, &x) || parse_num(av[3], 0, im.h - 1, &y) ||
	    parse_num(av[4], 0, im.ch - 1, &c) || parse_num(av[5], 0, 255, &v)) {
		free(im.data);
		return err_set("poke: X Y C V outside the image or 0..255");
	}
	im.data[((size_t)y * (size_t)im.w + (size_t)x) * (size_t)im.ch + (size_t)c] = (uint8_t)v;
	rc = save(av[1], &im);
	free(im.data);
	return rc;
}

// mirror (left-right, x -> w-1-x) or flip (top-bottom, y -> h-1-y) IN into OUT, for
// identities such as rotate:90 == transpose then mirror.
static int cmd_mirror(char **av, int vertical)
{
	struct img in, out;
	size_t px = 0;
	int x, y, rc;

	if (load(av[0], &in, NULL) != 0)
		return -1;
	out = in;
	out.data = malloc(img_bytes(&in));
	if (!out.data) {
		free(in.data);
		return err_set("out of memory");
	}
	for (y = 0; y < in.h; y++)
		for (x = 0; x < in.w; x++, px++) {
			int sx = vertical ? x : in.w - 1 - x;
			int sy = vertical ? in.h - 1 - y : y;

			memcpy(out.data + px * (size_t)in.ch,
			       in.data + ((size_t)sy * (size_t)in.w + (size_t)sx) * (size_t)in.ch,
			       (size_t)in.ch);
		}
	rc = save(av[1], &out);
	free(in.data);
	free(out.data);
	return rc;
}

static int cmd_info(char **av)
{
	struct img im;
	enum img_format fmt;

	if (load(av[0], &im, &fmt) != 0)
		return -1;
	printf("%d %d %d %s\n", im.w, im.h, im.ch, img_format_name(fmt));
	free(im.data);
	return 0;
}

static int cmd_dump(char **av)
{
	struct img im;
	const uint8_t *p;
	int x, y, c;

	if (load(av[0], &im, NULL) != 0)
		return -1;
	p = im.data;
	for (y = 0; y < im.h; y++) {
		for (x = 0; x < im.w; x++) {
			if (x)
				putchar(' ');
			for (c = 0; c < im.ch; c++)
				printf(c ? ",%d" : "%d", *p++);
		}
		putchar('\n');
	}
	free(im.data);
	return 0;
}

// cmp (max == 0) or maxdiff (max != 0). For cmp, *differs is set on a difference.
static int compare(char **av, int want_max, int *differs)
{
	struct img a, b;
	size_t i, n;
	int rc = -1, maxd = 0;

	if (load(av[0], &a, NULL) != 0)
		return -1;
	if (load(av[1], &b, NULL) != 0) {
		free(a.data);
		return -1;
	}
	if (a.w != b.w || a.h != b.h || a.ch != b.ch) {
		printf("geometry differs: %s is %dx%dx%d, %s is %dx%dx%d\n", av[0], a.w, a.h, a.ch,
		       av[1], b.w, b.h, b.ch);
		if (want_max)
			err_set("maxdiff needs images of the same geometry");
		else
			*differs = 1, rc = 0;
		goto done;
	}
	n = img_bytes(&a);
	for (i = 0; i < n; i++) {
		int d = abs(a.data[i] - b.data[i]);

		if (d && !want_max) {
			size_t px = i / (size_t)a.ch;

			printf("x=%zu y=%zu c=%zu: A=%d B=%d\n", px % (size_t)a.w, px / (size_t)a.w,
			       i % (size_t)a.ch, a.data[i], b.data[i]);
			*differs = 1;
			break;
		}
		if (d > maxd)
			maxd = d;
	}
	if (want_max)
		printf("%d\n", maxd);
	rc = 0;
done:
	free(a.data);
	free(b.data);
	return rc;
}

// ---- PNG variants with known pixels (16-bit, palette, tRNS, low bit depths, Adam7) ----

struct pngspec {
	int w, h, depth, type, interlace;
	png_color pal[16];
	int npal;
	png_byte trns[16];
	int ntrns;
	png_color_16 trns_color;
	int has_trns_color;
	uint16_t *samples; // w * h * channels, before packing
};

struct png_sink {
	struct outfile *f;
	int failed;
};

static void sink_write(png_structp png, png_bytep data, size_t len)
{
	struct png_sink *s = png_get_io_ptr(png);

	if (outfile_write(s->f, data, len) != 0) {
		s->failed = 1;
		png_error(png, "write failed");
	}
}

static void sink_flush(png_structp png)
{
	(void)png;
}

static int png_channels(int type)
{
	switch (type) {
	case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
	case PNG_COLOR_TYPE_RGB: return 3;
	case PNG_COLOR_TYPE_RGBA: return 4;
	default: return 1;
	}
}

// Encodes the packed rows with libpng into f; 0 / -1 with err set.
static int encode_spec(struct outfile *f, const char *path, struct pngspec *sp, png_bytep *rows)
{
	struct png_sink sink = {f, 0};
	png_structp png;
	png_infop info = NULL;

	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	if (png)
		info = png_create_info_struct(png);
	if (!info) {
		png_destroy_write_struct(&png, NULL);
		return err_set("%s: out of memory", path);
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		return sink.failed ? -1 : err_set("%s: libpng failed", path);
	}
	png_set_write_fn(png, &sink, sink_write, sink_flush);
	png_set_IHDR(png, info, sp->w, sp->h, sp->depth, sp->type, sp->interlace,
	             PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	if (sp->npal)
		png_set_PLTE(png, info, sp->pal, sp->npal);
	if (sp->ntrns || sp->has_trns_color)
		png_set_tRNS(png, info, sp->ntrns ? sp->trns : NULL, sp->ntrns,
		             sp->has_trns_color ? &sp->trns_color : NULL);
	png_write_info(png, info);
	if (sp->interlace)
		png_set_interlace_handling(png);
	png_write_image(png, rows);
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	return 0;
}

static int write_spec(const char *path, struct pngspec *sp)
{
	int chn = png_channels(sp->type);
	size_t rowbytes = ((size_t)sp->w * chn * sp->depth + 7) / 8;
	png_bytep *rows = NULL;
	uint8_t *raw = NULL;
	struct outfile *f = NULL;
	int x, y, c, rc = -1;

	raw = calloc((size_t)sp->h, rowbytes);
	rows = calloc((size_t)sp->h, sizeof(*rows));
	if (!raw || !rows) {
		err_set("%s: out of memory", path);
		goto done;
	}
	for (y = 0; y < sp->h; y++) {
		uint8_t *row = raw + (size_t)y * rowbytes;

		rows[y] = row;
		for (x = 0; x < sp->w; x++)
			for (c = 0; c < chn; c++) {
				size_t i = (size_t)x * chn + c;
				unsigned v = sp->samples[((size_t)y * sp->w + x) * chn + c];

				if (sp->depth == 16) {
					row[2 * i] = (uint8_t)(v >> 8);
					row[2 * i + 1] = (uint8_t)v;
				} else if (sp->depth == 8) {
					row[i] = (uint8_t)v;
				} else {
					int per = 8 / sp->depth;
					int shift = 8 - sp->depth * ((int)(i % per) + 1);

					row[i / per] |= (uint8_t)(v << shift);
				}
			}
	}
	f = outfile_open(path);
	if (!f)
		goto done;
	if (encode_spec(f, path, sp, rows) != 0) {
		outfile_abort(f);
		goto done;
	}
	rc = outfile_commit(f);
done:
	free(rows);
	free(raw);
	return rc;
}

// Fills sp->samples with the grad pattern (as make writes it), scaled for 16 bits as
// g*257 + 128: round((g*257 + 128) * 255 / 65535) == g, so decoding must give grad back.
static void grad_spec(struct pngspec *sp)
{
	int chn = png_channels(sp->type), x, y, c;
	uint16_t *p = sp->samples;

	for (y = 0; y < sp->h; y++)
		for (x = 0; x < sp->w; x++)
			for (c = 0; c < chn; c++) {
				unsigned g = (x * 5 + y * 11 + c * 67 + (x * y) % 7) & 255;

				*p++ =
				    (uint16_t)(sp->depth == 16 ? g * 257 + (g < 255 ? 128 : 0) : g);
			}
}

// Each kind's expected `imgtool dump` is written out in tests/t-io.sh.
static int cmd_pngvariant(char **av)
{
	static const png_color pal3[] = {{255, 0, 0}, {0, 255, 0}, {10, 20, 30}};
	static const png_color pal4[] = {{0, 0, 0}, {255, 255, 255}, {1, 2, 3}, {200, 100, 50}};
	static const unsigned grey16[] = {0, 128, 129, 385, 386, 32767, 32768, 65535};
	static const unsigned rgba16[] = {65535, 0, 25700, 32768, 128, 129, 65280, 65535};
	static const unsigned pal3_idx[] = {0, 1, 2, 0, 2, 2, 1, 0};
	static const unsigned pal4_idx[] = {0, 1, 2, 3, 1, 3, 2, 1, 0, 3};
	static const unsigned grey1[] = {1, 0, 1, 1, 0, 0, 1, 0, 1, 1};
	static const unsigned grey2[] = {0, 1, 2, 3, 2};
	static const unsigned grey4[] = {0, 1, 15, 7, 3, 4};
	static const unsigned grey_trns[] = {0, 50, 100, 50};
	static const unsigned grey4_trns[] = {3, 0, 15};
	static const unsigned rgb_trns[] = {1, 2, 3, 3, 2, 1, 1, 2, 3};
	const char *kind = av[0];
	const unsigned *v = NULL; // the samples, unless a pattern fills them
	enum { FIXED, GRAD, ALL16 } fill = FIXED;
	struct pngspec sp;
	size_t i, n;
	int rc;

	memset(&sp, 0, sizeof(sp));
	sp.depth = 8;
	sp.type = PNG_COLOR_TYPE_GRAY;
	if (strcmp(kind, "grey16") == 0) {
		sp.w = 8, sp.h = 1, sp.depth = 16, v = grey16;
	} else if (strcmp(kind, "grey16-all") == 0) {
		sp.w = 256, sp.h = 256, sp.depth = 16, fill = ALL16; // (x, y) = y * 256 + x
	} else if (strcmp(kind, "rgba16") == 0) {
		sp.w = 2, sp.h = 1, sp.depth = 16, sp.type = PNG_COLOR_TYPE_RGBA, v = rgba16;
	} else if (strcmp(kind, "palette") == 0 || strcmp(kind, "palette-trns") == 0) {
		sp.w = 4, sp.h = 2, sp.type = PNG_COLOR_TYPE_PALETTE, v = pal3_idx;
		memcpy(sp.pal, pal3, sizeof(pal3));
		sp.npal = 3;
		if (kind[7] == '-') {
			sp.trns[0] = 0, sp.trns[1] = 128; // entry 2 stays opaque
			sp.ntrns = 2;
		}
	} else if (strcmp(kind, "palette2") == 0) {
		sp.w = 5, sp.h = 2, sp.depth = 2, sp.type = PNG_COLOR_TYPE_PALETTE, v = pal4_idx;
		memcpy(sp.pal, pal4, sizeof(pal4));
		sp.npal = 4;
	} else if (strcmp(kind, "grey1") == 0) {
		sp.w = 10, sp.h = 1, sp.depth = 1, v = grey1;
	} else if (strcmp(kind, "grey2") == 0) {
		sp.w = 5, sp.h = 1, sp.depth = 2, v = grey2;
	} else if (strcmp(kind, "grey4") == 0) {
		sp.w = 3, sp.h = 2, sp.depth = 4, v = grey4; // odd width: rows end mid-byte
	} else if (strcmp(kind, "grey-trns") == 0) {
		sp.w = 4, sp.h = 1, v = grey_trns;
		sp.trns_color.gray = 50;
		sp.has_trns_color = 1;
	} else if (strcmp(kind, "grey4-trns") == 0) {
		sp.w = 3, sp.h = 1, sp.depth = 4, v = grey4_trns;
		sp.trns_color.gray = 3;
		sp.has_trns_color = 1;
	} else if (strcmp(kind, "rgb-trns") == 0) {
		sp.w = 3, sp.h = 1, sp.type = PNG_COLOR_TYPE_RGB, v = rgb_trns;
		sp.trns_color.red = 1, sp.trns_color.green = 2, sp.trns_color.blue = 3;
		sp.has_trns_color = 1;
	} else if (strcmp(kind, "grad16") == 0) {
		sp.w = 9, sp.h = 7, sp.depth = 16, sp.type = PNG_COLOR_TYPE_RGB, fill = GRAD;
	} else if (strcmp(kind, "interlaced") == 0) {
		sp.w = 13, sp.h = 11, sp.type = PNG_COLOR_TYPE_RGB, fill = GRAD;
		sp.interlace = PNG_INTERLACE_ADAM7;
	} else if (strcmp(kind, "interlaced-ga16") == 0) {
		sp.w = 7, sp.h = 5, sp.depth = 16, sp.type = PNG_COLOR_TYPE_GRAY_ALPHA;
		sp.interlace = PNG_INTERLACE_ADAM7;
		fill = GRAD;
	} else {
		return err_set("unknown png variant '%s'", kind);
	}
	n = (size_t)sp.w * (size_t)sp.h * (size_t)png_channels(sp.type);
	sp.samples = calloc(n, sizeof(*sp.samples));
	if (!sp.samples)
		return err_set("out of memory");
	if (fill == GRAD)
		grad_spec(&sp);
	for (i = 0; i < n; i++)
		if (fill == FIXED)
			sp.samples[i] = (uint16_t)v[i];
		else if (fill == ALL16)
			sp.samples[i] = (uint16_t)i;
	rc = write_spec(av[1], &sp);
	free(sp.samples);
	return rc;
}

// ---- JPEG variants -------------------------------------------------------------------

// Writes size bytes of mem to path through outfile.
static int write_bytes(const char *path, const void *mem, size_t size)
{
	struct outfile *f = outfile_open(path);

	if (!f || outfile_write(f, mem, size) != 0) {
		outfile_abort(f);
		return -1;
	}
	return outfile_commit(f);
}

// A grey progressive script of exactly n scans (64 <= n <= 704) for libjpeg: one scan per
// coefficient (DC, then AC 1..63), the first coefficients sent with successive
// approximation (a first scan at Al = a <= 10, then a refinement scans) until the n - 64
// extra scans are used up, so that every scan is a valid step. scans has room for 704.
static int scan_script(jpeg_scan_info *scans, int n)
{
	int extra = n - 64, a, j, i = 0;

	if (n < 64 || n > 704)
		return -1;
	for (int coef = 0; coef < 64; coef++) {
		a = extra > 10 ? 10 : extra;
		extra -= a;
		for (j = a; j >= 0; j--, i++) {
			scans[i].comps_in_scan = 1;
			scans[i].component_index[0] = 0;
			scans[i].Ss = scans[i].Se = coef;
			scans[i].Ah = j == a ? 0 : j + 1;
			scans[i].Al = j;
		}
	}
	return i == n ? 0 : -1;
}

// Variants of a 32x24 "smooth" JPEG (grey, 64x48 or W x H, for scans:N):
//   cmyk         4 components, Adobe CMYK (climg refuses it)
//   progressive  libjpeg's simple progression (10 scans)
//   baseline     sequential, Huffman-coded
//   arith        the baseline file's coefficients, arithmetic-coded: decodes to the
//                same pixels
//   12bit        the baseline file with its frame header claiming 12-bit samples
//   restart      sequential, 32x64, a restart marker every MCU row: 4 intervals, which
//                climg decodes in strips (src/io/jpeg.c)
//   restart-grey the same, grey, 32x32 (8-row MCUs)
//   scans:N[:WxH] a progressive grey file of exactly N scans; up to 704 every scan is a
//                valid step of the progression, beyond that the last scan is repeated
static int cmd_jpegvariant(char **av)
{
	struct jpeg_compress_struct cinfo;
	struct jpeg_error_mgr jerr;
	jpeg_scan_info scans[704];
	unsigned char *mem = NULL, *big = NULL;
	unsigned long size = 0;
	struct img im = {32, 24, 3, NULL};
	const char *kind = av[0];
	int cmyk = strcmp(kind, "cmyk") == 0, arith = strcmp(kind, "arith") == 0;
	int prog = strcmp(kind, "progressive") == 0, bits12 = strcmp(kind, "12bit") == 0;
	int restart = strncmp(kind, "restart", 7) == 0;
	long long nscans = 0;
	int y, rc;

	if (strncmp(kind, "scans:", 6) == 0) {
		char num[16];
		const char *size_at = strchr(kind + 6, ':');
		size_t len = size_at ? (size_t)(size_at - kind - 6) : strlen(kind + 6);
		long long w = 64, h = 48;

		snprintf(num, sizeof(num), "%.*s", (int)(len < 15 ? len : 15), kind + 6);
		if (parse_num(num, 64, 100000, &nscans) ||
		    (size_at && sscanf(size_at + 1, "%lldx%lld", &w, &h) != 2) || w < 1 || h < 1 ||
		    w > 65535 || h > 65535)
			return err_set("jpegvariant scans:N[:WxH] needs 64 <= N <= 100000");
		im = (struct img){(int)w, (int)h, 1, NULL};
	} else if (strcmp(kind, "restart") == 0) {
		im = (struct img){32, 64, 3, NULL};
	} else if (strcmp(kind, "restart-grey") == 0) {
		im = (struct img){32, 32, 1, NULL};
	} else if (!cmyk && !arith && !prog && !bits12 && strcmp(kind, "baseline") != 0) {
		return err_set("unknown jpeg variant '%s'", kind);
	}
	if (cmyk)
		im.ch = 4;
	im.data = malloc(img_bytes(&im));
	if (!im.data || pattern(&im, "smooth") != 0) {
		free(im.data);
		return err_set("out of memory");
	}
	// libjpeg's default error handler exits the process, which is fine for a test tool.
	cinfo.err = jpeg_std_error(&jerr);
	jpeg_create_compress(&cinfo);
	jpeg_mem_dest(&cinfo, &mem, &size);
	cinfo.image_width = im.w;
	cinfo.image_height = im.h;
	cinfo.input_components = im.ch;
	cinfo.in_color_space = cmyk ? JCS_CMYK : im.ch == 1 ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_set_defaults(&cinfo);
	jpeg_set_quality(&cinfo, 95, TRUE);
	cinfo.dct_method = JDCT_ISLOW;
	cinfo.arith_code = arith;
	cinfo.restart_in_rows = restart;
	if (prog)
		jpeg_simple_progression(&cinfo);
	if (nscans) {
		scan_script(scans, nscans > 704 ? 704 : (int)nscans);
		cinfo.scan_info = scans;
		cinfo.num_scans = nscans > 704 ? 704 : (int)nscans;
	}
	jpeg_start_compress(&cinfo, TRUE);
	for (y = 0; y < im.h; y++) {
		JSAMPROW row = im.data + (size_t)y * im.w * im.ch;

		jpeg_write_scanlines(&cinfo, &row, 1);
	}
	jpeg_finish_compress(&cinfo);
	jpeg_destroy_compress(&cinfo);
	free(im.data);
	if (bits12) {
		// SOF0 (sequential, 8-bit only) becomes SOF1 (extended) with precision 12.
		for (unsigned long i = 0; i + 4 < size; i++)
			if (mem[i] == 0xff && mem[i + 1] == 0xc0) {
				mem[i + 1] = 0xc1;
				mem[i + 4] = 12;
				break;
			}
	}
	if (nscans > 704) {
		// Repeat the last scan (its SOS marker up to the EOI) until there are N.
		unsigned long last = 0, seg, total;

		for (unsigned long i = 0; i + 1 < size; i++)
			if (mem[i] == 0xff && mem[i + 1] == 0xda)
				last = i;
		seg = size - 2 - last;
		total = size + seg * (unsigned long)(nscans - 704);
		big = malloc(total);
		if (!big) {
			free(mem);
			return err_set("out of memory");
		}
		memcpy(big, mem, size - 2);
		for (long long k = 0; k < nscans - 704; k++)
			memcpy(big + size - 2 + seg * (unsigned long)k, mem + last, seg);
		memcpy(big + total - 2, mem + size - 2, 2);
		rc = write_bytes(av[1], big, total);
		free(big);
		free(mem);
		return rc;
	}
	rc = write_bytes(av[1], mem, size);
	free(mem);
	return rc;
}

// ---- hand-made PNGs -------------------------------------------------------------------

// Appends a chunk (length, type, data, CRC) at p; returns the bytes written.
static size_t put_chunk(uint8_t *p, const char *type, const uint8_t *data, uint32_t len)
{
	uint32_t crc;

	p[0] = (uint8_t)(len >> 24), p[1] = (uint8_t)(len >> 16);
	p[2] = (uint8_t)(len >> 8), p[3] = (uint8_t)len;
	memcpy(p + 4, type, 4);
	if (len)
		memcpy(p + 8, data, len);
	crc = (uint32_t)crc32(crc32(0, NULL, 0), p + 4, len + 4);
	p[8 + len] = (uint8_t)(crc >> 24), p[9 + len] = (uint8_t)(crc >> 16);
	p[10 + len] = (uint8_t)(crc >> 8), p[11 + len] = (uint8_t)crc;
	return 12 + len;
}

static void ihdr(uint8_t d[13], uint32_t w, uint32_t h, int depth, int type)
{
	memset(d, 0, 13);
	d[0] = (uint8_t)(w >> 24), d[1] = (uint8_t)(w >> 16), d[2] = (uint8_t)(w >> 8);
	d[3] = (uint8_t)w;
	d[4] = (uint8_t)(h >> 24), d[5] = (uint8_t)(h >> 16), d[6] = (uint8_t)(h >> 8);
	d[7] = (uint8_t)h;
	d[8] = (uint8_t)depth;
	d[9] = (uint8_t)type;
}

// PNGs libpng would not write:
//   huge-header  68 bytes claiming 65535x65535 RGBA: signature, IHDR, an IDAT holding an
//                empty stored deflate block, IEND
//   bomb         20000x20000 1-bit grey, all zero: about 50 KB that inflate to 50 MB of
//                rows and decode to 400 MB of pixels
//   palette-oob  6x1 8-bit palette of 2 entries (red, green) whose pixels use indices
//                0 1 2 5 255 1
static int cmd_rawpng(char **av)
{
	static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	const char *kind = av[0];
	uint8_t hdr[13], *buf = NULL;
	size_t n = 0, cap;
	int rc = -1;

	if (strcmp(kind, "huge-header") == 0) {
		static const uint8_t empty_zlib[11] = {0x78, 0x01, 0x01, 0x00, 0x00, 0xff,
		                                       0xff, 0x00, 0x00, 0x00, 0x01};
		buf = malloc(cap = 128);
		if (!buf)
			return err_set("out of memory");
		memcpy(buf, sig, 8);
		n = 8;
		ihdr(hdr, 65535, 65535, 8, 6);
		n += put_chunk(buf + n, "IHDR", hdr, 13);
		n += put_chunk(buf + n, "IDAT", empty_zlib, sizeof(empty_zlib));
		n += put_chunk(buf + n, "IEND", NULL, 0);
	} else if (strcmp(kind, "bomb") == 0 || strcmp(kind, "palette-oob") == 0) {
		int bomb = kind[0] == 'b';
		uint32_t w = bomb ? 20000 : 6, h = bomb ? 20000 : 1;
		size_t row = bomb ? 1 + (w + 7) / 8 : 1 + w;
		static const uint8_t oob[7] = {0, 0, 1, 2, 5, 255, 1};
		static const uint8_t plte[6] = {255, 0, 0, 0, 255, 0};
		z_stream z;
		uint8_t *zeros = calloc(1, row);

		cap = bomb ? (size_t)1 << 20 : 1024;
		buf = malloc(cap);
		memset(&z, 0, sizeof(z));
		if (!zeros || !buf || deflateInit(&z, 9) != Z_OK) {
			free(zeros);
			free(buf);
			return err_set("out of memory");
		}
		memcpy(buf, sig, 8);
		n = 8;
		ihdr(hdr, w, h, bomb ? 1 : 8, bomb ? 0 : 3);
		n += put_chunk(buf + n, "IHDR", hdr, 13);
		if (!bomb)
			n += put_chunk(buf + n, "PLTE", plte, sizeof(plte));
		// The IDAT data goes 12 bytes on (room for length and type), sized afterwards.
		z.next_out = buf + n + 8;
		z.avail_out = (uInt)(cap - n - 8 - 12 - 12);
		for (uint32_t y = 0; y < h; y++) {
			z.next_in = bomb ? zeros : (uint8_t *)oob;
			z.avail_in = (uInt)row;
			if (deflate(&z, y + 1 == h ? Z_FINISH : Z_NO_FLUSH) == Z_STREAM_ERROR)
				break;
		}
		rc = z.avail_in == 0 && z.avail_out > 0 ? 0 : -1;
		{
			uint32_t len = (uint32_t)z.total_out;
			uint8_t *d = malloc(len);

			if (d && rc == 0) {
				memcpy(d, buf + n + 8, len);
				n += put_chunk(buf + n, "IDAT", d, len);
				n += put_chunk(buf + n, "IEND", NULL, 0);
			} else {
				rc = -1;
			}
			free(d);
		}
		deflateEnd(&z);
		free(zeros);
		if (rc != 0) {
			free(buf);
			return err_set("rawpng: cannot compress");
		}
	} else {
		return err_set("unknown rawpng kind '%s'", kind);
	}
	rc = write_bytes(av[1], buf, n);
	free(buf);
	return rc;
}

// ---- measure: exit status, peak memory and time of a command ---------------------------

// Runs argv[1..] and writes "EXIT MAXRSS_KIB MS CPU_MS" to argv[0] (MS the wall clock,
// CPU_MS the user and system time of the command and the children it waited for); EXIT is
// 128 + the signal for a command killed by one, and is measure's own exit status too. The command's own output
// passes through. SIGINT, SIGQUIT, SIGHUP and SIGTERM are reset to their defaults for it:
// a shell running tests in the background (JOBS=2) or under nohup has them ignored, and a
// test of the cleanup on a signal needs the command to see them as a terminal would.
static int cmd_measure(int argc, char **argv, int *status_out)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status, code;
	pid_t pid;
	FILE *f;

	if (argc < 2)
		return err_set("measure: needs RESULT and a command");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		return err_set("measure: cannot fork: %s", strerror(errno));
	if (pid == 0) {
		static const int sigs[] = {SIGINT, SIGQUIT, SIGHUP, SIGTERM};

		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			signal(sigs[i], SIG_DFL);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	// The only child: RUSAGE_CHILDREN's peak is its peak.
	if (waitpid(pid, &status, 0) < 0 || getrusage(RUSAGE_CHILDREN, &ru) != 0)
		return err_set("measure: wait: %s", strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	f = fopen(argv[0], "w");
	if (!f)
		return err_set("measure: %s: %s", argv[0], strerror(errno));
	fprintf(f, "%d %ld %lld %lld\n", code, ru.ru_maxrss,
	        (long long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000,
	        (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
	                (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000);
	if (fclose(f) != 0)
		return err_set("measure: %s: cannot write", argv[0]);
	*status_out = code;
	return 0;
}

// ---- BMP variants (stb_image_write only writes 24- and 32-bit) --------------------------

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

// Hand-made files; the expected dumps are in tests/t-io.sh.
//   pal8    3x2, 8-bit palette, bottom-up
//   pal4    3x2, 4-bit palette
//   pal1    10x2, 1-bit palette
//   topdown 2x2, 24-bit, negative height
//   rgb565  2x1, 16-bit BI_BITFIELDS 5-6-5
//   rle8    2x1, BI_RLE8 (stb refuses it)
static int cmd_bmpvariant(char **av)
{
	static const uint8_t pal[4][4] = {{0, 0, 255, 0},
	                                  {0, 255, 0, 0},
	                                  {255, 0, 0, 0},
	                                  {30, 20, 10, 0}}; // BGRx: red, green, blue, (10,20,30)
	uint8_t buf[512];
	const char *kind = av[0];
	int w, h, bpp, compress = 0, npal = 0, nmask = 0, i;
	size_t off, stride, size;
	struct outfile *f;

	memset(buf, 0, sizeof(buf));
	if (strcmp(kind, "pal8") == 0)
		w = 3, h = 2, bpp = 8, npal = 4;
	else if (strcmp(kind, "pal4") == 0)
		w = 3, h = 2, bpp = 4, npal = 4;
	else if (strcmp(kind, "pal1") == 0)
		w = 10, h = 2, bpp = 1, npal = 2;
	else if (strcmp(kind, "topdown") == 0)
		w = 2, h = -2, bpp = 24;
	else if (strcmp(kind, "rgb565") == 0)
		w = 2, h = 1, bpp = 16, compress = 3, nmask = 3;
	else if (strcmp(kind, "rle8") == 0)
		w = 2, h = 1, bpp = 8, npal = 4, compress = 1;
	else
		return err_set("unknown bmp variant '%s'", kind);

	off = 14 + 40 + (size_t)npal * 4 + (size_t)nmask * 4;
	stride = ((size_t)w * bpp + 31) / 32 * 4;
	size = off + stride * (size_t)abs(h);
	buf[0] = 'B', buf[1] = 'M';
	put32(buf + 2, (uint32_t)size);
	put32(buf + 10, (uint32_t)off);
	put32(buf + 14, 40);
	put32(buf + 18, (uint32_t)w);
	put32(buf + 22, (uint32_t)h);
	put16(buf + 26, 1);
	put16(buf + 28, (unsigned)bpp);
	put32(buf + 30, (uint32_t)compress);
	put32(buf + 46, (uint32_t)npal);
	for (i = 0; i < npal; i++)
		memcpy(buf + 54 + 4 * i, pal[i], 4);
	if (nmask) {
		put32(buf + 54, 0xf800);
		put32(buf + 58, 0x07e0);
		put32(buf + 62, 0x001f);
	}
	// Pixel rows, stored bottom row first unless h < 0.
	{
		uint8_t *p = buf + off;

		if (strcmp(kind, "pal8") == 0) {
			// bottom row: 3 2 1, top row: 0 1 2
			p[0] = 3, p[1] = 2, p[2] = 1;
			p[stride] = 0, p[stride + 1] = 1, p[stride + 2] = 2;
		} else if (strcmp(kind, "pal4") == 0) {
			p[0] = 0x32, p[1] = 0x10;               // bottom: 3 2 1
			p[stride] = 0x01, p[stride + 1] = 0x20; // top: 0 1 2
		} else if (strcmp(kind, "pal1") == 0) {
			p[0] = 0xb2, p[1] = 0xc0;               // bottom: 1011001011
			p[stride] = 0x0f, p[stride + 1] = 0x40; // top: 0000111101
		} else if (strcmp(kind, "topdown") == 0) {
			static const uint8_t px[] = {3, 2, 1, 6,  5,  4,  0, 0,
			                             9, 8, 7, 12, 11, 10, 0, 0};

			memcpy(p, px, sizeof(px)); // BGR: top row (1,2,3) (4,5,6)
		} else if (strcmp(kind, "rgb565") == 0) {
			put16(p, 0xf800);     // pure red
			put16(p + 2, 0x07ff); // green + blue
		} else {
			p[0] = 2, p[1] = 1, p[2] = 0, p[3] = 1; // RLE8: 2 x index 1, end of bitmap
			size = off + 4;
			put32(buf + 2, (uint32_t)size);
		}
	}
	f = outfile_open(av[1]);
	if (!f || outfile_write(f, buf, size) != 0) {
		outfile_abort(f);
		return -1;
	}
	return outfile_commit(f);
}

// ---- main ----------------------------------------------------------------------------

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int nargs;
	} cmds[] = {
	    {"make", 5},       {"convert", 2},     {"mirror", 2},     {"flip", 2},
	    {"cmp", 2},        {"maxdiff", 2},     {"info", 1},       {"dump", 1},
	    {"pngvariant", 2}, {"jpegvariant", 2}, {"bmpvariant", 2}, {"rawpng", 2},
	    {"poke", 6},
	};
	const char *cmd;
	long long v;
	int i = 1, k, rc = -1, differs = 0;

	signal(SIGPIPE, SIG_IGN); // as climg does: a closed pipe is a write error
	for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1] && !argv[i][2]; i += 2) {
		const char *arg = argv[i + 1];

		switch (argv[i][1]) {
		case 'p':
			if (parse_num(arg, 0, INT64_MAX, &v))
				return fail("bad -p");
			limits.max_pixels = (uint64_t)v;
			break;
		case 'b':
			if (parse_num(arg, 0, INT64_MAX, &v))
				return fail("bad -b");
			limits.max_input_bytes = (uint64_t)v;
			break;
		case 'q':
			if (parse_num(arg, INT_MIN, INT_MAX, &v))
				return fail("bad -q");
			wopts.jpeg_quality = (int)v;
			break;
		case 'l':
			if (parse_num(arg, INT_MIN, INT_MAX, &v))
				return fail("bad -l");
			wopts.png_level = (int)v;
			break;
		case 'f':
			force_fmt = img_format_from_name(arg);
			if (force_fmt == FMT_NONE)
				return fail("bad -f");
			break;
		case 'k':
			if (parse_num(arg, 1, 64, &v))
				return fail("bad -k");
			kill_sig = (int)v;
			break;
		default: return usage();
		}
	}
	if (i >= argc)
		return usage();
	if (strcmp(argv[i], "measure") == 0) {
		int code = 0;

		if (cmd_measure(argc - i - 1, argv + i + 1, &code) != 0)
			return fail(err_msg());
		return code;
	}
	cmd = argv[i++];
	for (k = 0; k < (int)(sizeof(cmds) / sizeof(cmds[0])); k++)
		if (strcmp(cmd, cmds[k].name) == 0)
			break;
	if (k == (int)(sizeof(cmds) / sizeof(cmds[0])) || argc - i != cmds[k].nargs)
		return usage();

	if (strcmp(cmd, "make") == 0)
		rc = cmd_make(argv + i);
	else if (strcmp(cmd, "convert") == 0)
		rc = cmd_convert(argv + i);
	else if (strcmp(cmd, "mirror") == 0 || strcmp(cmd, "flip") == 0)
		rc = cmd_mirror(argv + i, cmd[0] == 'f');
	else if (strcmp(cmd, "poke") == 0)
		rc = cmd_poke(argv + i);
	else if (strcmp(cmd, "cmp") == 0)
		rc = compare(argv + i, 0, &differs);
	else if (strcmp(cmd, "maxdiff") == 0)
		rc = compare(argv + i, 1, &differs);
	else if (strcmp(cmd, "info") == 0)
		rc = cmd_info(argv + i);
	else if (strcmp(cmd, "dump") == 0)
		rc = cmd_dump(argv + i);
	else if (strcmp(cmd, "pngvariant") == 0)
		rc = cmd_pngvariant(argv + i);
	else if (strcmp(cmd, "jpegvariant") == 0)
		rc = cmd_jpegvariant(argv + i);
	else if (strcmp(cmd, "rawpng") == 0)
		rc = cmd_rawpng(argv + i);
	else
		rc = cmd_bmpvariant(argv + i);

	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "imgtool: stdout: cannot write: %s\n", strerror(errno));
		return 2;
	}
	if (rc != 0)
		return fail(err_msg());
	return differs ? 1 : 0;
}
