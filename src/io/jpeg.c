// SPDX-License-Identifier: MIT
// JPEG reading through libjpeg(-turbo), from memory (io_jpeg_open, codec.h); writing is
// jpeg_write.c. Decoding gives grey (1 channel) or RGB (3) with the accurate integer IDCT
// (JDCT_ISLOW), so every machine decodes the same bytes; Huffman and arithmetic coding,
// sequential and progressive, are read; CMYK/YCCK and precisions other than 8 bits are
// refused. A file with restart markers at the starts of MCU rows is decoded in strips on
// several threads (see "reading in strips"), with the same bytes. The Exif block and the
// ICC profile are read by jpeg_meta.c.
//
// Damaged files are refused rather than decoded with grey holes (jpeg_err.h). A
// sequential file whose image data is complete but whose end-of-image marker is missing
// decodes, and so do the harmless warnings (extra bytes before a marker, unknown JFIF
// versions). Bytes after the end-of-image marker are never read.
#include <setjmp.h>
#include <stdio.h> // jpeglib.h needs FILE and size_t first
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "../err.h"
#include "../par.h"
#include "codec.h"
#include "jpeg_err.h"
#include "jpeg_meta.h"

// A progressive JPEG can hold any number of scans, each one a pass over a whole component's
// coefficients; a hostile file can make that take minutes. Encoders write about 10 (libjpeg's
// simple progression: 10 for colour, 6 for grey); 100 leaves a wide margin and bounds the
// work at about ten normal decodes of the same image. tests/t-hostile.sh tests 100 and 101.
#define JPEG_MAX_SCANS 100

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

// ---- reading in strips ------------------------------------------------------------------
// A sequential Huffman-coded JPEG whose restart markers all fall at the starts of MCU rows
// (climg's own output has them, see "writing") is decoded in strips on several threads.
// The entropy data restarts at every marker (the DC predictions are reset), so a run of
// restart intervals is a JPEG of its own: the file's header with that run's height, then
// its intervals with the markers renumbered from RST0. Chroma upsampling (libjpeg's fancy
// upsampling) reads a row beyond each MCU row, so a strip also decodes the interval above
// and the one below its own and keeps only its own rows: the bytes are those of decoding
// the file in one piece (tests/codec.c compares them). Any error or warning in a strip,
// or a file that is not laid out so, and the file is decoded in one piece instead, which
// gives damaged files their usual message.

#define JPEG_MAX_STRIPS 64

struct jpeg_split {
	const uint8_t *data;
	size_t head;          // the header: bytes [0, head), ending with the SOS segment
	size_t sof_h;         // where the SOF segment's 16-bit height is
	size_t *start, *end;  // restart interval k's entropy data: [start[k], end[k])
	int nint, rows;       // intervals; image rows per interval (the last may have fewer)
	int nstrips;
	J_COLOR_SPACE space;  // the output colour space
	int w, h, ch;
	uint8_t *dst;
	uint8_t **scratch;    // a row per worker, for the rows a strip decodes but does not keep
	int *ok;              // per strip: decoded without error or warning
};

// Finds the restart intervals of sp->data (size bytes, its header read into c): 1, or 0
// when the file is not one to decode in strips.
static int split_find(struct jpeg_split *sp, const struct jpeg_decompress_struct *c,
		      size_t size)
{
	const uint8_t *d = sp->data;
	int hmax = c->max_h_samp_factor, vmax = c->max_v_samp_factor;
	long mcus_row, mcu_rows, per_int;
	size_t off = 2, k;
	int n = 0;

	if (c->progressive_mode || c->arith_code || !c->restart_interval ||
	    c->comps_in_scan != c->num_components ||
	    (c->num_components == 1 && (hmax != 1 || vmax != 1)))
		return 0;
	// an MCU: one 8x8 block of a single component, else hmax x vmax blocks
	mcus_row = ((long)c->image_width + 8 * hmax - 1) / (8 * hmax);
	mcu_rows = ((long)c->image_height + 8 * vmax - 1) / (8 * vmax);
	if (c->restart_interval % mcus_row)
		return 0;
	per_int = (long)c->restart_interval / mcus_row;
	sp->rows = (int)(per_int * 8 * vmax);
	sp->nint = (int)((mcu_rows + per_int - 1) / per_int);
	sp->head = (size_t)(c->src->next_input_byte - d);
	if (sp->nint < 4 || sp->head < 4 || sp->head > size)
		return 0;
	// the SOF segment's height, walking the header's segments
	sp->sof_h = 0;
	while (off + 4 <= sp->head) {
		int m, len;
		if (d[off] != 0xFF)
			return 0;
		while (off + 4 <= sp->head && d[off + 1] == 0xFF) // fill bytes
			off++;
		m = d[off + 1];
		len = d[off + 2] << 8 | d[off + 3];
		if ((m == 0xC0 || m == 0xC1) && len >= 8)
			sp->sof_h = off + 5;
		if (len < 2)
			return 0;
		off += 2 + (size_t)len;
		if (m == 0xDA)
			break;
	}
	if (!sp->sof_h || off != sp->head)
		return 0;
	sp->start = malloc((size_t)sp->nint * sizeof *sp->start);
	sp->end = malloc((size_t)sp->nint * sizeof *sp->end);
	if (!sp->start || !sp->end)
		return 0;
	// the intervals: RST0..RST7 in turn between them, and the end-of-image marker after
	// the last (any other marker, such as another scan's, and the file is read whole)
	sp->start[0] = sp->head;
	for (k = sp->head; k < size; k++) {
		const uint8_t *ff = memchr(d + k, 0xFF, size - k);
		if (!ff || (size_t)(ff - d) + 1 >= size)
			break;
		k = (size_t)(ff - d);
		if (d[k + 1] == 0x00 || d[k + 1] == 0xFF)
			continue; // a stuffed byte; fill before a marker
		if (d[k + 1] < 0xD0 || d[k + 1] > 0xD7) {
			sp->end[n++] = k;
			return n == sp->nint && d[k + 1] == 0xD9;
		}
		if (d[k + 1] != 0xD0 + n % 8 || n + 1 >= sp->nint)
			return 0;
		sp->end[n++] = k;
		sp->start[n] = ++k + 1;
	}
	return 0;
}

// Decodes strip `task` (intervals [a, b) of the nstrips) into dst; sets ok[task].
static void split_task(void *ctx, int task, int worker)
{
	struct jpeg_split *sp = ctx;
	int a = (int)((long)sp->nint * task / sp->nstrips);
	int b = (int)((long)sp->nint * (task + 1) / sp->nstrips);
	int a0 = a > 0 ? a - 1 : 0, b0 = b < sp->nint ? b + 1 : sp->nint;
	int y0 = a0 * sp->rows, y1 = b0 * sp->rows < sp->h ? b0 * sp->rows : sp->h;
	int keep0 = a * sp->rows - y0, keep1 = (b * sp->rows < sp->h ? b * sp->rows : sp->h) - y0;
	size_t cap = sp->head + 2 * (size_t)(b0 - a0) + 2, len = sp->head;
	// the decoder's state on the heap, not in locals, because of the longjmp
	struct jpeg_state *st = calloc(1, sizeof *st);
	uint8_t *buf;

	sp->ok[task] = 0;
	for (int i = a0; i < b0; i++)
		cap += sp->end[i] - sp->start[i];
	buf = malloc(cap);
	if (!buf || !st) {
		free(buf);
		free(st);
		return;
	}
	memcpy(buf, sp->data, sp->head);
	buf[sp->sof_h] = (uint8_t)((y1 - y0) >> 8);
	buf[sp->sof_h + 1] = (uint8_t)(y1 - y0);
	for (int i = a0; i < b0; i++) {
		if (i > a0) {
			buf[len++] = 0xFF;
			buf[len++] = (uint8_t)(0xD0 + (i - a0 - 1) % 8);
		}
		memcpy(buf + len, sp->data + sp->start[i], sp->end[i] - sp->start[i]);
		len += sp->end[i] - sp->start[i];
	}
	buf[len++] = 0xFF;
	buf[len++] = 0xD9;

	jpeg_err_init(&st->err);
	st->cinfo.err = &st->err.mgr;
	if (setjmp(st->err.jmp))
		goto done;
	jpeg_create_decompress(&st->cinfo);
	st->created = 1;
	jpeg_mem_src(&st->cinfo, buf, (unsigned long)len);
	jpeg_read_header(&st->cinfo, TRUE);
	st->cinfo.out_color_space = sp->space;
	st->cinfo.dct_method = JDCT_ISLOW;
	jpeg_start_decompress(&st->cinfo);
	if ((int)st->cinfo.output_width != sp->w || (int)st->cinfo.output_height != y1 - y0 ||
	    st->cinfo.output_components != sp->ch)
		goto done;
	while ((int)st->cinfo.output_scanline < keep1) {
		int y = (int)st->cinfo.output_scanline;
		JSAMPROW row = y >= keep0 ? sp->dst + (size_t)(y0 + y) * sp->w * sp->ch
					  : sp->scratch[worker];
		jpeg_read_scanlines(&st->cinfo, &row, 1);
	}
	sp->ok[task] = st->err.mgr.num_warnings == 0;
done:
	if (st->created)
		jpeg_destroy_decompress(&st->cinfo);
	free(st);
	free(buf);
}

// Decodes in strips where the file allows (see above): 1 when it did, 0 when it did not
// (the caller decodes in one piece; dst may hold part of an image).
static int jpeg_decode_split(struct img_reader *r, struct jpeg_state *s, uint8_t *dst)
{
	struct jpeg_split sp = { .data = r->data, .space = s->cinfo.out_color_space,
				 .w = r->g.w, .h = r->g.h, .ch = r->g.ch, .dst = dst };
	int done = 0, n = par_threads();

	if (n < 2 || !split_find(&sp, &s->cinfo, r->size))
		goto out;
	n = n < sp.nint / 2 ? n : sp.nint / 2;
	n = n < JPEG_MAX_STRIPS ? n : JPEG_MAX_STRIPS;
	sp.nstrips = n;
	sp.ok = calloc((size_t)n, sizeof *sp.ok);
	sp.scratch = calloc((size_t)n, sizeof *sp.scratch);
	if (!sp.ok || !sp.scratch)
		goto out;
	for (int i = 0; i < n; i++)
		if (!(sp.scratch[i] = malloc((size_t)r->g.w * (size_t)r->g.ch)))
			goto out;
	par_run(n, n, split_task, &sp);
	done = 1;
	for (int i = 0; i < n; i++)
		done = done && sp.ok[i];
	if (done)
		r->strips = n;
out:
	if (sp.scratch)
		for (int i = 0; i < n; i++)
			free(sp.scratch[i]);
	free(sp.scratch);
	free(sp.ok);
	free(sp.start);
	free(sp.end);
	return done;
}

static int jpeg_decode(struct img_reader *r, uint8_t *dst)
{
	struct jpeg_state *s = r->state;
	size_t stride = (size_t)r->g.w * (size_t)r->g.ch;

	if (jpeg_decode_split(r, s, dst))
		return 0;
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

	jpeg_err_init(&s->err);
	s->cinfo.err = &s->err.mgr;
	if (setjmp(s->err.jmp))
		return err_set("%s: jpeg: %s", r->name, s->err.text);
	jpeg_create_decompress(&s->cinfo);
	s->created = 1;
	s->progress.progress_monitor = on_progress;
	s->cinfo.progress = &s->progress;
	jpeg_mem_src(&s->cinfo, r->data, (unsigned long)r->size);
	jpeg_meta_save(&s->cinfo);
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
	if (io_check_geom(r, s->cinfo.output_width, s->cinfo.output_height, ch) != 0)
		return -1;
	return jpeg_meta_read(r, &s->cinfo);
}

