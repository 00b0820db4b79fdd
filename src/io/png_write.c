// SPDX-License-Identifier: MIT
// PNG output, written here rather than through libpng so that every core can compress:
// the chunk container (signature, IHDR, IDAT, IEND, each with its CRC-32), the row
// filters and one zlib stream; the input's ICC profile (iCCP) and Exif block (eXIf) after
// IHDR. libpng stays the reader (png.c).
//
// The rows are cut into segments of about SEG_BYTES filtered bytes, a size fixed by the
// image and never by the thread count. Each segment is filtered and compressed on its own
// thread (deflate.c), with the 32 KiB before it as history, and ends on a byte boundary,
// so the segments join into one stream; the Adler-32s of the segments are combined. One
// IDAT chunk per segment. The bytes are the same whatever the thread count, on every run.
//
// --png-level (the zlib scale: 0 none, 9 smallest):
//   0      no compression: rows unfiltered, stored blocks
//   1, 2   Huffman coding only, adaptive row filters (what photographs need most)
//   3..5   a trial on the first rows of each segment picks the filters (adaptive, or Up
//          on every row) and whether to look for repeated strings (greedy LZ77, blocks
//          that do not gain from matches stay literal)
//   6      as 3..5, and every position inside a match is indexed too (default)
//   7,8,9  as 6, and libdeflate levels 6, 9 and 12 compress the whole stream again on one
//          thread; the smaller stream is written. Several times slower
// Adaptive filters (pngfilter.h): per row, the filter type whose residuals, read as signed
// bytes, have the smallest sum of magnitudes (libpng's rule).
#include <libdeflate.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../err.h"
#include "../par.h"
#include "codec.h"
#include "deflate.h"
#include "pngfilter.h"

#define SEG_BYTES ((size_t)1 << 20) // filtered bytes per segment, about
#define TRIAL_DIV 16                // the trial sample: this fraction of a segment's rows
#define IDAT_MAX ((size_t)1 << 20)  // chunk size when libdeflate writes the whole stream
#define BLOCK_IN ((size_t)1 << 17)  // input bytes per deflate block

// How a segment is filtered and coded.
enum { MODE_STORE, MODE_HUFF, MODE_LZ, MODE_UP_LZ };

struct png_level {
	int mode;       // MODE_STORE or MODE_HUFF for every segment; -1: a trial per segment
	int insert_all; // index every position inside a match
	int libdeflate; // > 0: libdeflate compresses the whole stream at this level
};

static const struct png_level levels[10] = {
    {MODE_STORE, 0, 0}, {MODE_HUFF, 0, 0}, {MODE_HUFF, 0, 0}, {-1, 0, 0}, {-1, 0, 0},
    {-1, 0, 0},         {-1, 1, 0},        {-1, 1, 6},        {-1, 1, 9}, {-1, 1, 12},
};

// Filters one row for mode into out (n + 1 bytes). first: the image's first row.
static void filter_mode(int mode, const uint8_t *cur, const uint8_t *prev, int first, uint8_t *out,
                        size_t n, size_t bpp)
{
	if (mode == MODE_STORE)
		pngf_row(PNGF_NONE, cur, prev, out, n, bpp);
	else if (mode == MODE_UP_LZ)
		pngf_row(first ? PNGF_SUB : PNGF_UP, cur, prev, out, n, bpp);
	else
		pngf_adaptive(cur, prev, out, n, bpp);
}

// ---- the job -------------------------------------------------------------------------

struct png_worker {
	struct dfl *dfl;
	uint8_t *rows; // filtered history and segment rows
	uint8_t *out;  // trial output
};

struct png_seg {
	uint8_t *data; // 2 bytes of room, the compressed bytes, 4 bytes of room
	size_t len;    // compressed bytes, from data + 2
	uint32_t adler;
};

struct png_job {
	const struct img *im;
	const struct png_level *lv;
	size_t stride; // unfiltered bytes per row
	size_t bpp;    // bytes per pixel
	int seg_rows;  // rows per segment (the last may have fewer)
	int hist_rows; // rows of history needed for DFL_WINDOW bytes
	int nseg;
	uint8_t *zero; // a row of zeros: the row above the first
	uint8_t *mode; // per segment
	struct png_worker *w;
	struct png_seg *seg;
	atomic_int *done;  // per segment, set when seg[] is complete
	atomic_int failed; // a worker ran out of memory
	uint8_t *whole;    // libdeflate levels: every filtered row
	struct outfile *f; // written by worker 0 (the calling thread) only
	int next;          // the next segment to write
	int write_failed;  // err is set
	uint32_t adler;    // of the segments written so far
};

static const uint8_t *row_ptr(const struct png_job *j, int y)
{
	return y < 0 ? j->zero : j->im->data + (size_t)y * j->stride;
}

// Filters rows y0 .. y1-1 for mode into out, (stride + 1) bytes a row.
static void filter_rows(const struct png_job *j, int mode, int y0, int y1, uint8_t *out)
{
	for (int y = y0; y < y1; y++, out += j->stride + 1)
		filter_mode(mode, row_ptr(j, y), row_ptr(j, y - 1), y == 0, out, j->stride, j->bpp);
}

static int seg_end(const struct png_job *j, int s)
{
	int y1 = (s + 1) * j->seg_rows;

	return y1 < j->im->h ? y1 : j->im->h;
}

static const struct dfl_params *params_for(int mode, int insert_all)
{
	static const struct dfl_params store = {0, 0, 1, BLOCK_IN};
	static const struct dfl_params huff = {0, 0, 0, BLOCK_IN};
	static const struct dfl_params lz = {1, 0, 0, BLOCK_IN};
	static const struct dfl_params lz_all = {1, 1, 0, BLOCK_IN};

	if (mode == MODE_STORE)
		return &store;
	if (mode == MODE_HUFF)
		return &huff;
	return insert_all ? &lz_all : &lz;
}

// Phase 1: the trial. Compresses the segment's first rows as MODE_HUFF, MODE_LZ and
// MODE_UP_LZ and keeps the smallest; string matching must save more than 1/64 to be
// chosen over the faster Huffman-only coding.
static void task_trial(void *ctx, int s, int wi)
{
	struct png_job *j = ctx;
	struct png_worker *w = &j->w[wi];
	int y0 = s * j->seg_rows, y1 = seg_end(j, s);
	int n = (y1 - y0) / TRIAL_DIV > 0 ? (y1 - y0) / TRIAL_DIV : 1;
	size_t len = (size_t)n * (j->stride + 1), huff, lz, up;

	filter_rows(j, MODE_HUFF, y0, y0 + n, w->rows);
	huff = dfl_segment(w->dfl, params_for(MODE_HUFF, 0), w->rows, 0, len, 1, w->out);
	lz =
	    dfl_segment(w->dfl, params_for(MODE_LZ, j->lv->insert_all), w->rows, 0, len, 1, w->out);
	filter_rows(j, MODE_UP_LZ, y0, y0 + n, w->rows);
	up = dfl_segment(w->dfl, params_for(MODE_UP_LZ, j->lv->insert_all), w->rows, 0, len, 1,
	                 w->out);
	if (!huff || !lz || !up) {
		atomic_store(&j->failed, 1);
		return;
	}
	if (up < lz && up + up / 64 < huff)
		j->mode[s] = MODE_UP_LZ;
	else if (lz + lz / 64 < huff)
		j->mode[s] = MODE_LZ;
	else
		j->mode[s] = MODE_HUFF;
}

// Writes one chunk: length, type, data, CRC-32 of type and data. 0 / -1 with err set.
static int chunk(struct outfile *f, const char *type, const uint8_t *data, size_t len)
{
	uint8_t head[8], tail[4];
	uint32_t crc;

	head[0] = (uint8_t)(len >> 24);
	head[1] = (uint8_t)(len >> 16);
	head[2] = (uint8_t)(len >> 8);
	head[3] = (uint8_t)len;
	memcpy(head + 4, type, 4);
	crc = libdeflate_crc32(0, head + 4, 4);
	if (len) // libdeflate_crc32(crc, NULL, 0) returns 0, not crc
		crc = libdeflate_crc32(crc, data, len);
	tail[0] = (uint8_t)(crc >> 24);
	tail[1] = (uint8_t)(crc >> 16);
	tail[2] = (uint8_t)(crc >> 8);
	tail[3] = (uint8_t)crc;
	if (outfile_write(f, head, 8) != 0 || (len && outfile_write(f, data, len) != 0) ||
	    outfile_write(f, tail, 4) != 0)
		return -1;
	return 0;
}

// Writes the finished segments that are next in order, as IDAT chunks: the first starts
// with the zlib header, the last ends with the Adler-32 of the whole stream.
static void write_ready(struct png_job *j)
{
	while (j->next < j->nseg && atomic_load(&j->done[j->next])) {
		struct png_seg *sg = &j->seg[j->next];
		uint8_t *p = sg->data + 2;
		size_t n = sg->len;
		int s = j->next++;

		if (!j->write_failed && !atomic_load(&j->failed)) {
			size_t raw = (size_t)(seg_end(j, s) - s * j->seg_rows) * (j->stride + 1);

			j->adler =
			    s == 0 ? sg->adler
			           : (uint32_t)adler32_combine(j->adler, sg->adler, (z_off_t)raw);
			if (s == 0) {
				// CMF 0x78: deflate, 32 KiB window. FLG: the level class, and a
				// check value that makes CMF * 256 + FLG a multiple of 31.
				// Level classes: 0x01 fastest, 0x5e fast, 0x9c default.
				p -= 2;
				n += 2;
				p[0] = 0x78;
				p[1] = j->lv->mode == MODE_STORE  ? 0x01
				       : j->lv->mode == MODE_HUFF ? 0x5e
				                                  : 0x9c;
			}
			if (s == j->nseg - 1) {
				p[n] = (uint8_t)(j->adler >> 24);
				p[n + 1] = (uint8_t)(j->adler >> 16);
				p[n + 2] = (uint8_t)(j->adler >> 8);
				p[n + 3] = (uint8_t)j->adler;
				n += 4;
			}
			if (chunk(j->f, "IDAT", p, n) != 0)
				j->write_failed = 1;
		}
		free(sg->data);
		sg->data = NULL;
	}
}

// For the libdeflate levels, before phase 2: filters segment s into the whole buffer.
static void task_filter(void *ctx, int s, int wi)
{
	struct png_job *j = ctx;
	int y0 = s * j->seg_rows;

	(void)wi;
	filter_rows(j, j->mode[s], y0, seg_end(j, s), j->whole + (size_t)y0 * (j->stride + 1));
}

// Phase 2: compresses segment s with the rows before it as history, filtering them all
// first unless they are in the whole buffer already.
static void task_segment(void *ctx, int s, int wi)
{
	struct png_job *j = ctx;
	struct png_worker *w = &j->w[wi];
	int y0 = s * j->seg_rows, y1 = seg_end(j, s), y;
	int h0 = y0 - j->hist_rows > 0 ? y0 - j->hist_rows : 0;
	int mode = j->lv->mode >= 0 ? j->lv->mode : j->mode[s];
	size_t rowb = j->stride + 1, hist = (size_t)(y0 - h0) * rowb;
	size_t len = (size_t)(y1 - y0) * rowb, keep = hist < DFL_WINDOW ? hist : DFL_WINDOW;
	struct png_seg *sg = &j->seg[s];
	const uint8_t *rows;

	if (j->whole) {
		rows = j->whole + (size_t)h0 * rowb;
	} else {
		// History: the rows before y0 as their own segment filters them.
		for (y = h0; y < y0; y++) {
			int m = j->lv->mode >= 0 ? j->lv->mode : j->mode[y / j->seg_rows];

			filter_rows(j, m, y, y + 1, w->rows + (size_t)(y - h0) * rowb);
		}
		filter_rows(j, mode, y0, y1, w->rows + hist);
		rows = w->rows;
	}
	sg->adler = (uint32_t)libdeflate_adler32(1, rows + hist, len);
	sg->data = malloc(dfl_bound(len) + 6);
	if (sg->data)
		sg->len =
		    dfl_segment(w->dfl, params_for(mode, j->lv->insert_all), rows + hist - keep,
		                keep, len, s == j->nseg - 1, sg->data + 2);
	if (!sg->data || !sg->len)
		atomic_store(&j->failed, 1);
	atomic_store(&j->done[s], 1);
	if (wi == 0 && !j->whole)
		write_ready(j);
}

// The libdeflate levels: compresses the whole buffer with libdeflate and writes that, or
// the segments (already compressed) when they came out smaller. 0 / -1 with err set.
static int write_whole(struct png_job *j, size_t raw)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(j->lv->libdeflate);
	uint8_t *z = NULL;
	size_t n = 0, off, segs = 6;
	int rc = -1, i;

	if (c) {
		size_t cap = libdeflate_zlib_compress_bound(c, raw);

		z = malloc(cap);
		if (z)
			n = libdeflate_zlib_compress(c, j->whole, raw, z, cap);
	}
	if (!n) {
		err_set("%s: out of memory compressing the image", outfile_name(j->f));
		goto done;
	}
	for (i = 0; i < j->nseg; i++)
		segs += j->seg[i].len;
	if (segs <= n) {
		write_ready(j);
		rc = j->write_failed ? -1 : 0;
		goto done;
	}
	for (off = 0; off < n; off += IDAT_MAX)
		if (chunk(j->f, "IDAT", z + off, n - off < IDAT_MAX ? n - off : IDAT_MAX) != 0)
			goto done;
	rc = 0;
done:
	libdeflate_free_compressor(c);
	free(z);
	return rc;
}

static void job_free(struct png_job *j, int nw)
{
	int i;

	if (j->w)
		for (i = 0; i < nw; i++) {
			dfl_free(j->w[i].dfl);
			free(j->w[i].rows);
			free(j->w[i].out);
		}
	if (j->seg)
		for (i = 0; i < j->nseg; i++)
			free(j->seg[i].data);
	free(j->w);
	free(j->seg);
	free(j->done);
	free(j->mode);
	free(j->whole);
	free(j->zero);
}

static void err_oom(struct outfile *f, const struct img *im)
{
	err_set("%s: out of memory writing a %dx%d png", outfile_name(f), im->w, im->h);
}

// The name iCCP gives the profile (PNG wants one; it is only a label).
#define ICC_NAME "ICC Profile"
// The most data a chunk may hold (2^31 - 1 bytes).
#define CHUNK_MAX ((size_t)0x7fffffff)

// Writes m's ICC profile (where io_icc_fits an image of ch channels) as iCCP: the name, a
// NUL, compression method 0, the profile as a zlib stream; then m's Exif block as eXIf.
// What does not fit a chunk is left out with a warning. 0 / -1 with err set.
static int meta_chunks(struct outfile *f, const struct img_meta *m, int ch)
{
	const size_t head = sizeof ICC_NAME + 1; // the name, its NUL, the method
	if (!m)
		return 0;
	if (m->icc && m->icc_bytes > CHUNK_MAX / 2) {
		warn("%s: the ICC profile (%zu bytes) does not fit a PNG chunk; the output has none",
		     outfile_name(f), m->icc_bytes);
	} else if (m->icc && io_icc_fits(m->icc, m->icc_bytes, ch, outfile_name(f))) {
		uLongf zlen = compressBound((uLong)m->icc_bytes);
		uint8_t *d = malloc(head + zlen);
		int rc;
		if (!d)
			return err_set("%s: out of memory writing the ICC profile", outfile_name(f));
		memcpy(d, ICC_NAME, sizeof ICC_NAME); // with its NUL
		d[head - 1] = 0;
		if (compress2(d + head, &zlen, m->icc, (uLong)m->icc_bytes, Z_BEST_COMPRESSION) !=
		    Z_OK) {
			free(d);
			return err_set("%s: cannot compress the ICC profile", outfile_name(f));
		}
		rc = chunk(f, "iCCP", d, head + zlen);
		free(d);
		if (rc != 0)
			return -1;
	}
	if (m->exif && m->exif_bytes > CHUNK_MAX)
		warn("%s: the Exif block (%zu bytes) does not fit a PNG chunk; the output has none",
		     outfile_name(f), m->exif_bytes);
	else if (m->exif && chunk(f, "eXIf", m->exif, m->exif_bytes) != 0)
		return -1;
	return 0;
}

int io_png_encode(struct outfile *f, const struct img *im, int level,
		  const struct img_meta *meta)
{
	static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	static const uint8_t types[5] = {0, 0, 4, 2, 6}; // grey, grey+alpha, RGB, RGBA
	struct png_job j = {0};
	uint8_t ihdr[13];
	size_t rowb, trial_max;
	int nw = 0, i, rc = -1;

	j.im = im;
	j.lv = &levels[level];
	j.f = f;
	j.bpp = (size_t)im->ch;
	j.stride = (size_t)im->w * j.bpp;
	rowb = j.stride + 1;
	j.seg_rows = SEG_BYTES / rowb > 0 ? (int)(SEG_BYTES / rowb) : 1;
	if (j.seg_rows > im->h)
		j.seg_rows = im->h;
	j.nseg = (im->h + j.seg_rows - 1) / j.seg_rows;
	j.hist_rows = (int)((DFL_WINDOW + rowb - 1) / rowb);
	nw = par_threads();
	if (nw > j.nseg)
		nw = j.nseg;
	trial_max = (size_t)(j.seg_rows / TRIAL_DIV > 0 ? j.seg_rows / TRIAL_DIV : 1) * rowb;

	j.zero = calloc(1, j.stride);
	j.w = calloc((size_t)nw, sizeof(*j.w));
	j.seg = calloc((size_t)j.nseg, sizeof(*j.seg));
	j.done = calloc((size_t)j.nseg, sizeof(*j.done));
	j.mode = calloc((size_t)j.nseg, 1);
	if (!j.zero || !j.w || !j.seg || !j.done || !j.mode) {
		err_oom(f, im);
		goto done;
	}
	for (i = 0; i < nw; i++) {
		struct png_worker *w = &j.w[i];

		w->dfl = dfl_new();
		w->rows = malloc((size_t)(j.seg_rows + j.hist_rows) * rowb);
		w->out = j.lv->mode < 0 ? malloc(dfl_bound(trial_max)) : NULL;
		if (!w->dfl || !w->rows || (j.lv->mode < 0 && !w->out)) {
			err_oom(f, im);
			goto done;
		}
	}
	if (j.lv->libdeflate) {
		j.whole = malloc((size_t)im->h * rowb);
		if (!j.whole) {
			err_oom(f, im);
			goto done;
		}
	}

	ihdr[0] = (uint8_t)(im->w >> 24);
	ihdr[1] = (uint8_t)(im->w >> 16);
	ihdr[2] = (uint8_t)(im->w >> 8);
	ihdr[3] = (uint8_t)im->w;
	ihdr[4] = (uint8_t)(im->h >> 24);
	ihdr[5] = (uint8_t)(im->h >> 16);
	ihdr[6] = (uint8_t)(im->h >> 8);
	ihdr[7] = (uint8_t)im->h;
	ihdr[8] = 8;             // bits per sample
	ihdr[9] = types[im->ch]; // colour type
	ihdr[10] = 0;            // deflate
	ihdr[11] = 0;            // adaptive filtering (the five filter types)
	ihdr[12] = 0;            // not interlaced
	if (outfile_write(f, sig, sizeof(sig)) != 0 || chunk(f, "IHDR", ihdr, 13) != 0 ||
	    meta_chunks(f, meta, im->ch) != 0)
		goto done;

	if (j.lv->mode < 0) {
		par_run(nw, j.nseg, task_trial, &j);
		if (atomic_load(&j.failed)) {
			err_oom(f, im);
			goto done;
		}
	}
	if (j.whole)
		par_run(nw, j.nseg, task_filter, &j);
	par_run(nw, j.nseg, task_segment, &j);
	if (atomic_load(&j.failed)) {
		err_oom(f, im);
		goto done;
	}
	if (j.whole) {
		if (write_whole(&j, (size_t)im->h * rowb) != 0)
			goto done;
	} else {
		write_ready(&j);
		if (j.write_failed)
			goto done;
	}
	if (chunk(f, "IEND", NULL, 0) != 0)
		goto done;
	rc = 0;
done:
	job_free(&j, nw);
	return rc;
}
