// SPDX-License-Identifier: MIT
// JPEG through libjpeg(-turbo), from and to memory. Decoding gives grey (1 channel) or
// RGB (3) with the accurate integer IDCT (JDCT_ISLOW), so every machine decodes the same
// bytes; Huffman and arithmetic coding, sequential and progressive, are read; CMYK/YCCK
// and precisions other than 8 bits are refused. Encoding uses JDCT_ISLOW, standard Huffman
// tables (optimize_coding off) and libjpeg's default 4:2:0 chroma subsampling; an alpha
// channel is dropped (img_format_check() reports that so the caller can warn).
//
// Damaged files are refused rather than decoded with grey holes: libjpeg's warnings that
// mean lost image data (truncated or corrupt entropy data, a bad progression, the file
// ending inside a progressive image) end decoding at once with an error. A sequential
// file whose image data is complete but whose end-of-image marker is missing decodes, and
// so do the harmless warnings (extra bytes before a marker, unknown JFIF versions). Bytes
// after the end-of-image marker are never read.
#include <setjmp.h>
#include <stdio.h> // jpeglib.h needs FILE and size_t first
#include <stdlib.h>
#include <string.h>

// jpeglib.h first: it includes jconfig.h, whose *_ARITH_CODING_SUPPORTED jerror.h reads.
#include <jpeglib.h>
// clang-format off
#include <jerror.h>
// clang-format on

#include "../err.h"
#include "codec.h"

// A progressive JPEG can hold any number of scans, each one a pass over a whole component's
// coefficients; a hostile file can make that take minutes. Encoders write about 10 (libjpeg's
// simple progression: 10 for colour, 6 for grey); 100 leaves a wide margin and bounds the
// work at about ten normal decodes of the same image. tests/t-hostile.sh tests 100 and 101.
#define JPEG_MAX_SCANS 100

// Error manager: error_exit longjmps back; warnings that mean lost data do too (see the
// top of the file), the others are counted, not printed.
struct jpeg_err {
	struct jpeg_error_mgr mgr;
	jmp_buf jmp;
	char text[JMSG_LENGTH_MAX];
	int write_failed; // outfile_write failed (err is set): report that instead
};

static void on_error_exit(j_common_ptr cinfo)
{
	struct jpeg_err *e = (struct jpeg_err *)cinfo->err;

	if (e->mgr.msg_code == JERR_BAD_PRECISION)
		snprintf(e->text, sizeof(e->text), "%d-bit samples are not supported (only 8-bit)",
		         e->mgr.msg_parm.i[0]);
	else
		e->mgr.format_message(cinfo, e->text);
	longjmp(e->jmp, 1);
}

// Whether warning code means image data was lost. The end of the file is harmless only in
// a sequential decompressor (a missing end-of-image marker after complete image data;
// missing data there is reported as JWRN_HIT_MARKER when the decoder needs it).
static int data_lost(j_common_ptr cinfo, int code)
{
	switch (code) {
	case JWRN_HIT_MARKER:
	case JWRN_HUFF_BAD_CODE:
#if JPEG_LIB_VERSION >= 70 || defined(C_ARITH_CODING_SUPPORTED) || defined(D_ARITH_CODING_SUPPORTED)
	case JWRN_ARITH_BAD_CODE:
#endif
	case JWRN_MUST_RESYNC:
	case JWRN_BOGUS_PROGRESSION:
	case JWRN_NOT_SEQUENTIAL: return 1;
	case JWRN_JPEG_EOF:
		return cinfo->is_decompressor &&
		       ((struct jpeg_decompress_struct *)cinfo)->progressive_mode;
	default: return 0;
	}
}

static void on_emit_message(j_common_ptr cinfo, int level)
{
	struct jpeg_err *e = (struct jpeg_err *)cinfo->err;

	if (level >= 0)
		return;
	e->mgr.num_warnings++;
	if (data_lost(cinfo, e->mgr.msg_code)) {
		if (e->mgr.msg_code == JWRN_JPEG_EOF || e->mgr.msg_code == JWRN_HIT_MARKER)
			snprintf(e->text, sizeof(e->text),
			         "the file is truncated or its image data is corrupt (%s)",
			         e->mgr.msg_code == JWRN_JPEG_EOF
			             ? "it ends inside the image"
			             : "premature end of data segment");
		else
			e->mgr.format_message(cinfo, e->text);
		longjmp(e->jmp, 1);
	}
}

static void on_output_message(j_common_ptr cinfo)
{
	(void)cinfo;
}

static void err_init(struct jpeg_err *e)
{
	jpeg_std_error(&e->mgr);
	e->mgr.error_exit = on_error_exit;
	e->mgr.emit_message = on_emit_message;
	e->mgr.output_message = on_output_message;
}

// ---- reading -------------------------------------------------------------------------

struct jpeg_state {
	struct jpeg_decompress_struct cinfo;
	struct jpeg_err err;
	struct jpeg_progress_mgr progress;
	int created;
};

static void on_progress(j_common_ptr cinfo)
{
	struct jpeg_decompress_struct *d = (struct jpeg_decompress_struct *)cinfo;

	if (d->is_decompressor && d->input_scan_number > JPEG_MAX_SCANS) {
		struct jpeg_err *e = (struct jpeg_err *)cinfo->err;

		snprintf(e->text, sizeof(e->text),
		         "more than %d progressive scans (a corrupt or hostile file)",
		         JPEG_MAX_SCANS);
		longjmp(e->jmp, 1);
	}
}

static void jpeg_release(struct img_reader *r)
{
	struct jpeg_state *s = r->state;

	if (!s)
		return;
	if (s->created)
		jpeg_destroy_decompress(&s->cinfo);
	free(s);
	r->state = NULL;
}

static int jpeg_decode(struct img_reader *r, uint8_t *dst)
{
	struct jpeg_state *s = r->state;
	size_t stride = (size_t)r->g.w * (size_t)r->g.ch;

	if (setjmp(s->err.jmp))
		return err_set("%s: jpeg: %s", r->name, s->err.text);
	jpeg_start_decompress(&s->cinfo);
	if ((int)s->cinfo.output_width != r->g.w || (int)s->cinfo.output_height != r->g.h ||
	    s->cinfo.output_components != r->g.ch)
		return err_set("%s: jpeg: unexpected output geometry", r->name);
	while (s->cinfo.output_scanline < s->cinfo.output_height) {
		JSAMPROW row = dst + (size_t)s->cinfo.output_scanline * stride;

		jpeg_read_scanlines(&s->cinfo, &row, 1);
	}
	jpeg_finish_decompress(&s->cinfo);
	return 0;
}

int io_jpeg_open(struct img_reader *r)
{
	struct jpeg_state *s;
	int ch;

	s = calloc(1, sizeof(*s));
	if (!s)
		return err_set("%s: out of memory", r->name);
	r->state = s;
	r->decode = jpeg_decode;
	r->release = jpeg_release;

	err_init(&s->err);
	s->cinfo.err = &s->err.mgr;
	if (setjmp(s->err.jmp))
		return err_set("%s: jpeg: %s", r->name, s->err.text);
	jpeg_create_decompress(&s->cinfo);
	s->created = 1;
	s->progress.progress_monitor = on_progress;
	s->cinfo.progress = &s->progress;
	jpeg_mem_src(&s->cinfo, r->data, (unsigned long)r->size);
	jpeg_read_header(&s->cinfo, TRUE);

	switch (s->cinfo.jpeg_color_space) {
	case JCS_GRAYSCALE:
		s->cinfo.out_color_space = JCS_GRAYSCALE;
		ch = 1;
		break;
	case JCS_YCbCr:
	case JCS_RGB:
		s->cinfo.out_color_space = JCS_RGB;
		ch = 3;
		break;
	case JCS_CMYK:
	case JCS_YCCK: return err_set("%s: CMYK JPEG is not supported", r->name);
	default:
		return err_set("%s: jpeg: unsupported colour space (%d components)", r->name,
		               s->cinfo.num_components);
	}
	s->cinfo.dct_method = JDCT_ISLOW;
	jpeg_calc_output_dimensions(&s->cinfo);
	if (s->cinfo.output_components != ch)
		return err_set("%s: jpeg: unexpected channel count %d", r->name,
		               s->cinfo.output_components);
	return io_check_geom(r, s->cinfo.output_width, s->cinfo.output_height, ch);
}

// ---- writing -------------------------------------------------------------------------

#define JPEG_OUT_BYTES 16384

struct jpeg_out {
	struct jpeg_destination_mgr dest;
	struct outfile *f;
	JOCTET buf[JPEG_OUT_BYTES];
};

static void dest_init(j_compress_ptr cinfo)
{
	struct jpeg_out *o = (struct jpeg_out *)cinfo->dest;

	o->dest.next_output_byte = o->buf;
	o->dest.free_in_buffer = sizeof(o->buf);
}

// Hands n bytes to the outfile; a failure (err already set) ends compression.
static void dest_write(j_compress_ptr cinfo, size_t n)
{
	struct jpeg_out *o = (struct jpeg_out *)cinfo->dest;

	if (outfile_write(o->f, o->buf, n) != 0) {
		struct jpeg_err *e = (struct jpeg_err *)cinfo->err;

		e->write_failed = 1;
		longjmp(e->jmp, 1);
	}
}

static boolean dest_empty(j_compress_ptr cinfo)
{
	struct jpeg_out *o = (struct jpeg_out *)cinfo->dest;

	// libjpeg calls this with the whole buffer full (free_in_buffer is stale).
	dest_write(cinfo, sizeof(o->buf));
	o->dest.next_output_byte = o->buf;
	o->dest.free_in_buffer = sizeof(o->buf);
	return TRUE;
}

static void dest_term(j_compress_ptr cinfo)
{
	struct jpeg_out *o = (struct jpeg_out *)cinfo->dest;

	dest_write(cinfo, sizeof(o->buf) - o->dest.free_in_buffer);
}

// Compression state on the heap: nothing that changes after setjmp is a local.
struct jpeg_enc {
	struct jpeg_compress_struct cinfo;
	struct jpeg_err err;
	struct jpeg_out out;
	uint8_t *row; // alpha stripped, when the image has alpha
	int created;
};

int io_jpeg_encode(struct outfile *f, const struct img *im, int quality)
{
	struct jpeg_enc *e = NULL;
	size_t stride = img_bytes(im) / (size_t)im->h;
	int colour = im->ch >= 3;
	volatile int out_ch = colour ? 3 : 1; // volatile: live across setjmp
	volatile int rc = -1; // read after longjmp

	e = calloc(1, sizeof(*e));
	if (!e)
		return err_set("%s: out of memory", outfile_name(f));
	if (im->ch != out_ch) {
		e->row = malloc((size_t)im->w * (size_t)out_ch);
		if (!e->row) {
			err_set("%s: out of memory", outfile_name(f));
			goto done;
		}
	}
	err_init(&e->err);
	e->cinfo.err = &e->err.mgr;
	if (setjmp(e->err.jmp)) {
		if (!e->err.write_failed)
			err_set("%s: jpeg: %s", outfile_name(f), e->err.text);
		goto done;
	}
	jpeg_create_compress(&e->cinfo);
	e->created = 1;
	e->out.f = f;
	e->out.dest.init_destination = dest_init;
	e->out.dest.empty_output_buffer = dest_empty;
	e->out.dest.term_destination = dest_term;
	e->cinfo.dest = &e->out.dest;

	e->cinfo.image_width = (JDIMENSION)im->w;
	e->cinfo.image_height = (JDIMENSION)im->h;
	e->cinfo.input_components = out_ch;
	e->cinfo.in_color_space = colour ? JCS_RGB : JCS_GRAYSCALE;
	jpeg_set_defaults(&e->cinfo);
	jpeg_set_quality(&e->cinfo, quality, TRUE);
	e->cinfo.dct_method = JDCT_ISLOW;
	e->cinfo.optimize_coding = FALSE;
	jpeg_start_compress(&e->cinfo, TRUE);
	while (e->cinfo.next_scanline < e->cinfo.image_height) {
		const uint8_t *src = im->data + (size_t)e->cinfo.next_scanline * stride;
		JSAMPROW row = (JSAMPROW)src;

		if (e->row) {
			int x, c;

			for (x = 0; x < im->w; x++)
				for (c = 0; c < out_ch; c++)
					e->row[x * out_ch + c] = src[x * im->ch + c];
			row = e->row;
		}
		jpeg_write_scanlines(&e->cinfo, &row, 1);
	}
	jpeg_finish_compress(&e->cinfo);
	rc = 0;
done:
	if (e->created)
		jpeg_destroy_compress(&e->cinfo);
	free(e->row);
	free(e);
	return rc;
}
