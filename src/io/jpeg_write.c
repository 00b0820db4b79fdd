// SPDX-License-Identifier: MIT
// JPEG writing through libjpeg(-turbo) (io_jpeg_encode, codec.h): JDCT_ISLOW, standard
// Huffman tables (optimize_coding off) and libjpeg's default 4:2:0 chroma subsampling; an
// alpha channel is dropped (img_format_check() reports that so the caller can warn); the
// Exif block and the ICC profile are written by jpeg_meta.c.
//
// A large image is encoded in strips on several threads and spliced into one baseline
// JPEG with restart markers: each strip is a whole number of MCU rows (the last excepted)
// and one restart interval. Entropy coding restarts at every marker (the DC predictions
// are reset and the bits padded to a byte), chroma is averaged within each MCU, and the
// tables are the standard ones, so a strip encoded on its own has exactly the bytes of
// its interval in a single-threaded encode with restart_in_rows set: the file is the one
// libjpeg writes with a DRI marker, whatever the thread count. An image of one strip is
// encoded without restart markers.
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

#define STRIP_PIXELS (1L << 20) // about this many pixels per strip

// A growing memory destination: libjpeg's jpeg_mem_dest leaks its buffer on an error.
struct mem_dest {
	struct jpeg_destination_mgr pub;
	uint8_t *buf;
	size_t cap, used;
};

// One strip and its encoder; compression state lives here, not in locals, because of
// the longjmp. Each strip runs on one thread.
struct jpeg_strip {
	struct jpeg_compress_struct cinfo;
	struct jpeg_err err;
	struct mem_dest dest;
	uint8_t *row; // a row with alpha stripped, when the image has alpha
	int created;
	int failed; // err.text says why
};

static void mem_init(j_compress_ptr cinfo)
{
	struct mem_dest *d = (struct mem_dest *)cinfo->dest;

	d->pub.next_output_byte = d->buf;
	d->pub.free_in_buffer = d->cap;
}

static boolean mem_empty(j_compress_ptr cinfo)
{
	struct mem_dest *d = (struct mem_dest *)cinfo->dest;
	uint8_t *nb = d->cap * 2 > d->cap ? realloc(d->buf, d->cap * 2) : NULL;

	if (!nb) {
		struct jpeg_err *e = (struct jpeg_err *)cinfo->err;

		snprintf(e->text, sizeof(e->text), "out of memory");
		longjmp(e->jmp, 1);
	}
	// libjpeg calls this with the buffer full (free_in_buffer is stale).
	d->buf = nb;
	d->pub.next_output_byte = nb + d->cap;
	d->pub.free_in_buffer = d->cap;
	d->cap *= 2;
	return TRUE;
}

static void mem_term(j_compress_ptr cinfo)
{
	struct mem_dest *d = (struct mem_dest *)cinfo->dest;

	d->used = d->cap - d->pub.free_in_buffer;
}

// Encodes rows y0 .. y1-1 of im as a JPEG of their own into s->dest, with the metadata
// meta (NULL: none) after its JFIF header. mcu_h: the MCU height the strip plan assumed,
// checked against libjpeg's. f names the output in warnings.
static void encode_strip(struct jpeg_strip *s, const struct img *im, int quality, int y0, int y1,
                         int mcu_h, const struct img_meta *meta, struct outfile *f)
{
	size_t stride = (size_t)im->w * (size_t)im->ch;
	int colour = im->ch >= 3, out_ch = colour ? 3 : 1;

	jpeg_err_init(&s->err);
	s->cinfo.err = &s->err.mgr;
	if (setjmp(s->err.jmp)) {
		s->failed = 1;
		return;
	}
	s->dest.cap = (size_t)(y1 - y0) * stride / 8 + 4096;
	s->dest.buf = malloc(s->dest.cap);
	if (im->ch != out_ch)
		s->row = malloc((size_t)im->w * (size_t)out_ch);
	if (!s->dest.buf || (im->ch != out_ch && !s->row)) {
		snprintf(s->err.text, sizeof(s->err.text), "out of memory");
		s->failed = 1;
		return;
	}
	jpeg_create_compress(&s->cinfo);
	s->created = 1;
	s->dest.pub.init_destination = mem_init;
	s->dest.pub.empty_output_buffer = mem_empty;
	s->dest.pub.term_destination = mem_term;
	s->cinfo.dest = &s->dest.pub;
	s->cinfo.image_width = (JDIMENSION)im->w;
	s->cinfo.image_height = (JDIMENSION)(y1 - y0);
	s->cinfo.input_components = out_ch;
	s->cinfo.in_color_space = colour ? JCS_RGB : JCS_GRAYSCALE;
	jpeg_set_defaults(&s->cinfo);
	jpeg_set_quality(&s->cinfo, quality, TRUE);
	s->cinfo.dct_method = JDCT_ISLOW;
	s->cinfo.optimize_coding = FALSE;
	jpeg_start_compress(&s->cinfo, TRUE);
	jpeg_meta_write(&s->cinfo, meta, im->ch, outfile_name(f));
	if (s->cinfo.max_v_samp_factor * DCTSIZE != mcu_h) {
		snprintf(s->err.text, sizeof(s->err.text), "unexpected MCU height %d",
		         s->cinfo.max_v_samp_factor * DCTSIZE);
		s->failed = 1;
		return;
	}
	while (s->cinfo.next_scanline < s->cinfo.image_height) {
		const uint8_t *src = im->data + (size_t)(y0 + (int)s->cinfo.next_scanline) * stride;
		JSAMPROW row = (JSAMPROW)src;

		if (s->row) {
			for (int x = 0; x < im->w; x++)
				for (int c = 0; c < out_ch; c++)
					s->row[x * out_ch + c] = src[x * im->ch + c];
			row = s->row;
		}
		jpeg_write_scanlines(&s->cinfo, &row, 1);
	}
	jpeg_finish_compress(&s->cinfo);
}

struct jpeg_job {
	const struct img *im;
	int quality, strip_rows, mcu_h;
	struct jpeg_strip *st;
	const struct img_meta *meta; // written by strip 0
	struct outfile *f;
};

static void task_strip(void *ctx, int i, int worker)
{
	struct jpeg_job *j = ctx;
	int y0 = i * j->strip_rows;
	int y1 = y0 + j->strip_rows < j->im->h ? y0 + j->strip_rows : j->im->h;

	(void)worker;
	encode_strip(&j->st[i], j->im, j->quality, y0, y1, j->mcu_h, i == 0 ? j->meta : NULL,
		     j->f);
}

// Finds the SOF and SOS segments of a JPEG that libjpeg wrote: *sof is the SOF marker's
// offset, *data where the entropy-coded data starts (after the SOS segment). 0 / -1.
static int find_scan(const uint8_t *p, size_t n, size_t *sof, size_t *data)
{
	size_t pos = 2;

	*sof = 0;
	while (pos + 4 <= n && p[pos] == 0xff) {
		unsigned m = p[pos + 1], len = (unsigned)p[pos + 2] << 8 | p[pos + 3];

		if (m == 0xc0 || m == 0xc1)
			*sof = pos;
		if (m == 0xda) {
			*data = pos + 2 + len;
			return *sof && *data + 2 <= n && p[n - 2] == 0xff && p[n - 1] == 0xd9 ? 0
			                                                                      : -1;
		}
		pos += 2 + len;
	}
	return -1;
}

// Writes the strips as one JPEG: strip 0's headers (its metadata too) with the full height
// and a DRI marker before SOS, then each strip's entropy-coded data, RST0..RST7 in turn
// between them.
static int splice(struct outfile *f, const struct jpeg_job *j, int nstrips, unsigned interval)
{
	const struct mem_dest *d0 = &j->st[0].dest;
	uint8_t height[2] = {(uint8_t)(j->im->h >> 8), (uint8_t)j->im->h},
	    dri[6] = {0xff, 0xdd, 0, 4, (uint8_t)(interval >> 8), (uint8_t)interval};
	size_t sof, data, sos;
	int i;

	if (find_scan(d0->buf, d0->used, &sof, &data) != 0)
		return err_set("%s: jpeg: cannot find the scan in libjpeg's output",
		               outfile_name(f));
	// SOS is the last segment before the data: find where it starts.
	for (sos = 2; sos < data;) {
		size_t next = sos + 2 + ((size_t)d0->buf[sos + 2] << 8 | d0->buf[sos + 3]);

		if (next == data)
			break;
		sos = next;
	}
	// the headers up to SOS, the SOF's height (bytes 5-6) replaced
	if (outfile_write(f, d0->buf, sof + 5) != 0 || outfile_write(f, height, 2) != 0 ||
	    outfile_write(f, d0->buf + sof + 7, sos - sof - 7) != 0 ||
	    outfile_write(f, dri, sizeof(dri)) != 0 ||
	    outfile_write(f, d0->buf + sos, data - sos) != 0)
		return -1;
	for (i = 0; i < nstrips; i++) {
		const struct mem_dest *d = &j->st[i].dest;
		uint8_t rst[2] = {0xff, (uint8_t)(0xd0 + (i - 1) % 8)};
		size_t s_sof, s_data;

		if (find_scan(d->buf, d->used, &s_sof, &s_data) != 0)
			return err_set("%s: jpeg: cannot find the scan in libjpeg's output",
			               outfile_name(f));
		if ((i > 0 && outfile_write(f, rst, 2) != 0) ||
		    outfile_write(f, d->buf + s_data, d->used - 2 - s_data) != 0)
			return -1;
	}
	return outfile_write(f, "\xff\xd9", 2);
}

int io_jpeg_encode(struct outfile *f, const struct img *im, int quality,
		   const struct img_meta *meta)
{
	// libjpeg's defaults: RGB becomes YCbCr 4:2:0 (16x16 MCUs), grey has 8x8 MCUs.
	int mcu = im->ch >= 3 ? 16 : 8;
	long mcus_per_row = (im->w + mcu - 1) / mcu;
	long k = STRIP_PIXELS / ((long)im->w * mcu);
	struct jpeg_job j = {im, quality, 0, mcu, NULL, meta, f};
	int nstrips, i, rc = -1;

	// A restart interval counts MCUs and must fit in 16 bits.
	if (k > 65535 / mcus_per_row)
		k = 65535 / mcus_per_row;
	if (k < 1)
		k = 1;
	j.strip_rows = (int)(k * mcu);
	nstrips = (im->h + j.strip_rows - 1) / j.strip_rows;
	j.st = calloc((size_t)nstrips, sizeof(*j.st));
	if (!j.st)
		return err_set("%s: out of memory", outfile_name(f));
	par_run(par_threads(), nstrips, task_strip, &j);
	for (i = 0; i < nstrips; i++)
		if (j.st[i].failed) {
			err_set("%s: jpeg: %s", outfile_name(f), j.st[i].err.text);
			goto done;
		}
	if (nstrips == 1)
		rc = outfile_write(f, j.st[0].dest.buf, j.st[0].dest.used);
	else
		rc = splice(f, &j, nstrips, (unsigned)(k * mcus_per_row));
done:
	for (i = 0; i < nstrips; i++) {
		if (j.st[i].created)
			jpeg_destroy_compress(&j.st[i].cinfo);
		free(j.st[i].dest.buf);
		free(j.st[i].row);
	}
	free(j.st);
	return rc;
}
