// SPDX-License-Identifier: MIT
// PNG through libpng, from and to memory. Reading keeps the channel count (grey 1,
// grey+alpha 2, RGB 3, RGBA 4): a palette becomes RGB (RGBA with tRNS), grey or RGB with
// tRNS gains an alpha channel, 1/2/4-bit grey is scaled to 0..255 and 16-bit samples are
// reduced with png_set_scale_16, which computes round(v * 255 / 65535) exactly (the same
// as (v * 255 + 32767) / 65535 in integers; v / 257 is never exactly halfway). No gamma or
// colour-space conversion is applied. The ICC profile (iCCP, as libpng checks and
// decompresses it) and the Exif block (eXIf) before the image data are kept (meta.c). PNG
// output is written by png_write.c.
#include <png.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "codec.h"

// libpng errors end in a longjmp; the message is kept here until then. The first warning
// about the iCCP chunk, whose profile libpng then drops, is kept too.
struct png_msg {
	char text[200];
	char icc[200];
};

static void on_error(png_structp png, png_const_charp msg)
{
	struct png_msg *m = png_get_error_ptr(png);

	if (m) {
		strncpy(m->text, msg ? msg : "unknown error", sizeof(m->text) - 1);
		m->text[sizeof(m->text) - 1] = 0;
	}
	png_longjmp(png, 1);
}

// Warnings (bad ancillary chunks, sRGB profile complaints) are not worth a line each,
// except that an ICC profile is not kept (see io_png_open).
static void on_warning(png_structp png, png_const_charp msg)
{
	struct png_msg *m = png_get_error_ptr(png);

	if (m && msg && !m->icc[0] && !strncmp(msg, "iCCP", 4)) {
		strncpy(m->icc, msg, sizeof(m->icc) - 1);
		m->icc[sizeof(m->icc) - 1] = 0;
	}
}

// ---- reading -------------------------------------------------------------------------

struct png_state {
	png_structp png;
	png_infop info;
	size_t pos;      // read position in the reader's data
	png_bytepp rows; // row pointers into dst while decoding
	bool fast;       // io_png_fast may decode it (see io_png_open)
	struct png_msg msg;
	struct img_reader *r;
};

static void read_fn(png_structp png, png_bytep out, size_t len)
{
	struct png_state *s = png_get_io_ptr(png);
	struct img_reader *r = s->r;

	if (len > r->size - s->pos)
		png_error(png, "file is truncated");
	memcpy(out, r->data + s->pos, len);
	s->pos += len;
}

static void png_release(struct img_reader *r)
{
	struct png_state *s = r->state;

	if (!s)
		return;
	if (s->png)
		png_destroy_read_struct(&s->png, s->info ? &s->info : NULL, NULL);
	free(s->rows);
	free(s);
	r->state = NULL;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int png_decode(struct img_reader *r, uint8_t *dst)
{
	struct png_state *s = r->state;
	size_t stride = (size_t)r->g.w * (size_t)r->g.ch;
	int y;

	if (s->fast && io_png_fast(r->data, r->size, (uint32_t)r->g.w, (uint32_t)r->g.h, r->g.ch,
				   dst) == 0)
		return 0;
	s->rows = malloc((size_t)r->g.h * sizeof(*s->rows));
	if (!s->rows)
		return err_set("%s: out of memory", r->name);
	for (y = 0; y < r->g.h; y++)
		s->rows[y] = dst + (size_t)y * stride;
	if (setjmp(png_jmpbuf(s->png)))
		return err_set("%s: png: %s", r->name, s->msg.text);
	// Reads every pass of an interlaced image (png_set_interlace_handling was called).
	png_read_image(s->png, s->rows);
	return 0;
}

// Keeps the ICC profile and the Exif block libpng read before the image data in r->meta,
// or says why a profile is not kept. 0 / -1 with err set.
static int png_meta(struct img_reader *r, struct png_state *s)
{
	png_charp name;
	png_bytep icc, exif;
	png_uint_32 icc_bytes, exif_bytes;
	int method;

	if (png_get_iCCP(s->png, s->info, &name, &method, &icc, &icc_bytes) && icc_bytes) {
		r->meta.icc = malloc(icc_bytes);
		if (!r->meta.icc)
			return err_set("%s: out of memory", r->name);
		memcpy(r->meta.icc, icc, icc_bytes);
		r->meta.icc_bytes = icc_bytes;
	} else if (s->msg.icc[0]) {
		warn("%s: the ICC profile is not kept: %s", r->name, s->msg.icc);
	}
	if (png_get_eXIf_1(s->png, s->info, &exif_bytes, &exif) && exif_bytes)
		return io_meta_exif(r, exif, exif_bytes);
	return 0;
}

int io_png_open(struct img_reader *r)
{
	struct png_state *s;
	png_uint_32 w, h;
	int depth, type, interlace, ch;

	// Check the size in IHDR (always the first chunk) before libpng sees it, so the
	// message names our limit; png_set_user_limits below is the backstop.
	if (r->size >= 24 && memcmp(r->data + 12, "IHDR", 4) == 0) {
		w = be32(r->data + 16);
		h = be32(r->data + 20);
		if (w > 0 && h > 0 && io_check_geom(r, w, h, 1) != 0)
			return -1;
	}

	s = calloc(1, sizeof(*s));
	if (!s)
		return err_set("%s: out of memory", r->name);
	s->r = r;
	r->state = s;
	r->decode = png_decode;
	r->release = png_release;

	s->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s->msg, on_error, on_warning);
	if (!s->png)
		return err_set("%s: png: cannot create the decoder", r->name);
	s->info = png_create_info_struct(s->png);
	if (!s->info)
		return err_set("%s: png: cannot create the decoder", r->name);
	if (setjmp(png_jmpbuf(s->png)))
		return err_set("%s: png: %s", r->name, s->msg.text);

	png_set_read_fn(s->png, s, read_fn);
	png_set_user_limits(s->png, IMG_MAX_SIDE, IMG_MAX_SIDE);
	png_read_info(s->png, s->info);
	png_get_IHDR(s->png, s->info, &w, &h, &depth, &type, &interlace, NULL, NULL);

	if (type == PNG_COLOR_TYPE_PALETTE)
		png_set_palette_to_rgb(s->png);
	if (type == PNG_COLOR_TYPE_GRAY && depth < 8)
		png_set_expand_gray_1_2_4_to_8(s->png);
	if (png_get_valid(s->png, s->info, PNG_INFO_tRNS))
		png_set_tRNS_to_alpha(s->png);
	if (depth == 16)
		png_set_scale_16(s->png);
	if (interlace != PNG_INTERLACE_NONE)
		png_set_interlace_handling(s->png);
	png_read_update_info(s->png, s->info);

	ch = png_get_channels(s->png, s->info);
	if (png_get_bit_depth(s->png, s->info) != 8)
		return err_set("%s: png: unexpected bit depth %d after conversion", r->name,
		               png_get_bit_depth(s->png, s->info));
	if (io_check_geom(r, w, h, ch) != 0)
		return -1;
	if (png_get_rowbytes(s->png, s->info) != (size_t)w * (size_t)ch)
		return err_set("%s: png: unexpected row size after conversion", r->name);
	// Samples as they are stored need no conversion: png_fast.c decodes those, in room of
	// one byte a row past the image.
	s->fast = depth == 8 && interlace == PNG_INTERLACE_NONE && type != PNG_COLOR_TYPE_PALETTE &&
		  !png_get_valid(s->png, s->info, PNG_INFO_tRNS);
	r->slack = s->fast ? h : 0;
	return png_meta(r, s);
}
