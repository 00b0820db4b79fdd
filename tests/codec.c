// SPDX-License-Identifier: MIT
// C checks of the codec internals in src/io: the segment DEFLATE encoder (every stream
// it writes is inflated by zlib and by libdeflate and compared), the Huffman length
// limit, the PNG row filters (the SSE2 versions against the plain C specification,
// and hand-computed residuals) and PNG decoding without libpng's row loop (every filter
// type, IDAT splits, and the files it must leave to libpng). Prints one "PASS name" or "FAIL name: ..." line per
// check; tests/t-codec.sh counts them. JPEG output in strips is compared byte for byte
// with libjpeg's own single-threaded encoding with restart markers. Usage: codec SCRATCHDIR
#include <libdeflate.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <jpeglib.h>

#include "../src/err.h"
#include "../src/io/codec.h"
#include "../src/io/deflate.h"
#include "../src/io/io.h"
#include "../src/io/pngfilter.h"

#include "check.h"

static uint32_t rng_state = 12345;

static uint32_t rng(void)
{
	uint32_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	rng_state = x;
	return x;
}

// ---- deflate -------------------------------------------------------------------------

enum { D_RANDOM, D_ZEROS, D_PERIOD3, D_TEXT, D_FIBONACCI, D_SMOOTH, D_KINDS };
static const char *const kind_name[D_KINDS] = {"random", "zeros",     "period-3",
                                               "text",   "fibonacci", "smooth"};

static void fill(uint8_t *p, size_t n, int kind)
{
	static const char words[] = "the quick brown fox jumps over the lazy dog and then ";
	size_t i;

	switch (kind) {
	case D_RANDOM:
		for (i = 0; i < n; i++)
			p[i] = (uint8_t)(rng() >> 24);
		break;
	case D_ZEROS: memset(p, 0, n); break;
	case D_PERIOD3:
		for (i = 0; i < n; i++)
			p[i] = (uint8_t)(i % 3 * 40);
		break;
	case D_TEXT:
		for (i = 0; i < n; i++)
			p[i] = (uint8_t)words[(i * 7 + i / 97) % (sizeof(words) - 1)];
		break;
	case D_FIBONACCI: {
		// Byte k appears about fib(k) times: an unlimited Huffman code would need
		// codes of more than 20 bits, so the 15-bit limit must act.
		size_t fib[26] = {1, 1}, k, total = 0;

		for (k = 2; k < 26; k++)
			fib[k] = fib[k - 1] + fib[k - 2];
		for (i = 0; i < n; i++) {
			size_t r = rng() % 196417; // fib[0] + ... + fib[25] - 1
			total = 0;
			for (k = 0; k < 25 && r >= total + fib[k]; k++)
				total += fib[k];
			p[i] = (uint8_t)k;
		}
		break;
	}
	default:
		for (i = 0; i < n; i++)
			p[i] = (uint8_t)((i / 7) % 50 + (rng() >> 30));
		break;
	}
}

// Compresses in[0 .. n) as segments of seg bytes with params p into a zlib stream;
// returns its length (0 on failure). *tails_ok: every non-final segment ends in 00 00 ff ff.
static size_t zcompress(struct dfl *d, const struct dfl_params *p, const uint8_t *in, size_t n,
                        size_t seg, uint8_t *out, int *tails_ok)
{
	size_t o = 2, pos;
	uLong a = adler32(1, in, (uInt)n);

	out[0] = 0x78;
	out[1] = 0x9c;
	*tails_ok = 1;
	for (pos = 0; pos < n; pos += seg) {
		size_t len = n - pos < seg ? n - pos : seg;
		size_t hist = pos < DFL_WINDOW ? pos : DFL_WINDOW;
		int last = pos + len == n;
		size_t k = dfl_segment(d, p, in + pos - hist, hist, len, last, out + o);

		if (!k || k > dfl_bound(len))
			return 0;
		if (!last && (k < 4 || memcmp(out + o + k - 4, "\0\0\xff\xff", 4) != 0))
			*tails_ok = 0;
		o += k;
	}
	out[o++] = (uint8_t)(a >> 24);
	out[o++] = (uint8_t)(a >> 16);
	out[o++] = (uint8_t)(a >> 8);
	out[o++] = (uint8_t)a;
	return o;
}

static void test_deflate(void)
{
	static const size_t sizes[] = {1, 2, 3, 4, 5, 100, 258, 259, 65535, 65536, 70000, 300007};
	static const size_t segs[] = {(size_t)1 << 30, 1, 1000, 32768, 100000};
	static const struct dfl_params params[] = {
	    {0, 0, 1, 1 << 17}, {0, 0, 0, 1 << 17}, {1, 0, 0, 1 << 17}, {1, 1, 0, 16384}};
	static const char *const pname[] = {"store", "huffman", "lz", "lz-all"};
	size_t maxn = 300007, cap = dfl_bound(maxn) * 2 + 64;
	uint8_t *in = malloc(maxn), *z = malloc(cap), *z2 = malloc(cap), *back = malloc(maxn);
	struct dfl *d = dfl_new();
	struct libdeflate_decompressor *ld = libdeflate_alloc_decompressor();
	int kind, bad_zlib = 0, bad_ld = 0, bad_tail = 0, bad_repeat = 0, runs = 0;
	size_t fib_huff = 0;
	char name[160];

	if (!in || !z || !z2 || !back || !d || !ld) {
		CHECK("deflate: allocation", 0);
		goto done;
	}
	for (kind = 0; kind < D_KINDS; kind++)
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
			for (size_t gi = 0; gi < sizeof(segs) / sizeof(segs[0]); gi++)
				for (size_t pi = 0; pi < 4; pi++) {
					size_t n = sizes[si], seg = segs[gi], zn, zn2, got = 0;
					uLongf bl = (uLongf)n;
					int tails, tails2;

					// One-byte segments only on small inputs (slow otherwise).
					if (seg < 100 && n > 1000)
						continue;
					fill(in, n, kind);
					zn = zcompress(d, &params[pi], in, n, seg, z, &tails);
					zn2 = zcompress(d, &params[pi], in, n, seg, z2, &tails2);
					runs++;
					if (!zn || uncompress(back, &bl, z, zn) != Z_OK ||
					    bl != n || memcmp(back, in, n) != 0) {
						if (bad_zlib++ < 3)
							printf("  zlib fails: %s %zu bytes, seg "
							       "%zu, %s\n",
							       kind_name[kind], n, seg, pname[pi]);
					}
					if (!zn ||
					    libdeflate_zlib_decompress(ld, z, zn, back, n, &got) !=
					        LIBDEFLATE_SUCCESS ||
					    got != n || memcmp(back, in, n) != 0)
						bad_ld++;
					if (!tails)
						bad_tail++;
					if (zn != zn2 || memcmp(z, z2, zn) != 0)
						bad_repeat++;
					if (kind == D_FIBONACCI && n == 300007 && seg > n &&
					    pi == 1)
						fib_huff = zn;
				}
	snprintf(name, sizeof(name), "deflate: %d streams inflate with zlib", runs);
	CHECK(name, bad_zlib == 0);
	snprintf(name, sizeof(name), "deflate: %d streams inflate with libdeflate", runs);
	CHECK(name, bad_ld == 0);
	CHECK("deflate: segments end with a sync flush (00 00 ff ff)", bad_tail == 0);
	CHECK("deflate: the same input gives the same bytes", bad_repeat == 0);
	// 25 symbols of Fibonacci frequencies: entropy 2.51 bits a byte; a Huffman code
	// limited to 15 bits stays within 6% of it.
	printf("  fibonacci: %zu bytes\n", fib_huff);
	CHECK("deflate: length-limited code stays near the entropy",
	      fib_huff > 0 && fib_huff < 300007 * 266 / 800);

	// Stored and compressed sizes behave as they should.
	fill(in, 300007, D_RANDOM);
	{
		int t;
		size_t s0 = zcompress(d, &params[0], in, 300007, (size_t)1 << 30, z, &t);
		size_t s1 = zcompress(d, &params[2], in, 300007, (size_t)1 << 30, z, &t);

		CHECK("deflate: stored size is the input plus framing",
		      s0 == 300007 + 6 + 5 * ((300007 + 65534) / 65535));
		CHECK("deflate: random data falls back to stored blocks", s1 <= s0 + s0 / 1000);
	}
	fill(in, 300007, D_ZEROS);
	{
		int t;
		size_t s = zcompress(d, &params[2], in, 300007, (size_t)1 << 30, z, &t);

		printf("  zeros: %zu bytes\n", s);
		CHECK("deflate: zeros compress over 750 to 1", s > 0 && s < 400);
	}
done:
	libdeflate_free_decompressor(ld);
	dfl_free(d);
	free(in);
	free(z);
	free(z2);
	free(back);
}

// ---- PNG decoding without libpng's row loop (src/io/png_fast.c) ----------------------------

// Appends a chunk of type t with n bytes of data at buf + *len.
static void png_chunk(uint8_t *buf, size_t *len, const char *t, const uint8_t *data, size_t n)
{
	uint8_t *p = buf + *len;
	uint32_t c;

	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(n >> (24 - 8 * i));
	memcpy(p + 4, t, 4);
	if (n)
		memcpy(p + 8, data, n);
	c = (uint32_t)crc32(0, p + 4, (uInt)n + 4);
	for (int i = 0; i < 4; i++)
		p[8 + n + i] = (uint8_t)(c >> (24 - 8 * i));
	*len += 12 + n;
}

// A PNG file of im (8-bit, not interlaced): row y filtered with type mode (0-4), type y % 5
// (mode 5) or the adaptive choice (6); bad_type (> 4) written as row 1's type where not 0;
// the zlib stream, cut short by `cut` bytes, in IDAT chunks of `piece` bytes. Malloc'ed.
static uint8_t *png_make(const struct img *im, int mode, int bad_type, size_t cut, size_t piece,
			 size_t *len)
{
	static const uint8_t type_of[5] = { 0, 0, 4, 2, 6 };
	size_t n = (size_t)im->w * (size_t)im->ch, raw_n = (size_t)im->h * (n + 1);
	uLongf zn = compressBound((uLong)raw_n);
	uint8_t *raw = malloc(raw_n), *zero = calloc(n + 1, 1), *z = malloc(zn);
	uint8_t *file = malloc(zn + 12 * (zn / piece + 1) + 64), ihdr[13];

	for (int y = 0; y < im->h; y++) {
		const uint8_t *cur = im->data + (size_t)y * n, *prev = y ? cur - n : zero;
		uint8_t *out = raw + (size_t)y * (n + 1);
		if (mode == 6)
			pngf_adaptive(cur, prev, out, n, (size_t)im->ch);
		else
			pngf_row_ref(mode == 5 ? y % 5 : mode, cur, prev, out, n, (size_t)im->ch);
		if (bad_type && y == 1)
			out[0] = (uint8_t)bad_type;
	}
	compress2(z, &zn, raw, (uLong)raw_n, 6);
	zn -= cut < zn ? cut : 0;
	memcpy(file, "\x89PNG\r\n\x1a\n", 8);
	*len = 8;
	for (int i = 0; i < 4; i++) {
		ihdr[i] = (uint8_t)((uint32_t)im->w >> (24 - 8 * i));
		ihdr[4 + i] = (uint8_t)((uint32_t)im->h >> (24 - 8 * i));
	}
	memcpy(ihdr + 8, (uint8_t[]){ 8, type_of[im->ch], 0, 0, 0 }, 5);
	png_chunk(file, len, "IHDR", ihdr, 13);
	for (size_t at = 0; at < zn; at += piece)
		png_chunk(file, len, "IDAT", z + at, zn - at < piece ? zn - at : piece);
	png_chunk(file, len, "IEND", NULL, 0);
	free(raw);
	free(zero);
	free(z);
	return file;
}

// Decodes file through a reader (the fast path where it may, else libpng) into got, which
// has room for the slack. 0, or -1 with err set.
static int png_read(const uint8_t *file, size_t len, const struct img *im, uint8_t *got)
{
	struct io_limits lim = { (uint64_t)1 << 30, (uint64_t)1 << 30 };
	struct img_reader *r = img_reader_open_mem("t.png", file, len, &lim);
	int rc = -1;

	if (r && img_reader_slack(r) == (size_t)im->h)
		rc = img_reader_decode(r, got);
	else if (r)
		err_set("slack %zu, not one byte a row", img_reader_slack(r));
	img_reader_close(r);
	return rc;
}

static void test_png_fast(void)
{
	static const int sizes[][2] = { { 1, 1 }, { 5, 3 }, { 17, 9 }, { 64, 33 }, { 301, 7 } };
	static const size_t pieces[] = { (size_t)1 << 30, 7, 1000 };
	char name[160];

	for (int ch = 1; ch <= 4; ch++) {
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
			struct img im = { sizes[k][0], sizes[k][1], ch, NULL };
			size_t bytes = img_bytes(&im), slack = (size_t)im.h;
			int bad = 0, fast_bad = 0;

			im.data = malloc(bytes);
			uint8_t *got = malloc(bytes + slack);
			fill(im.data, bytes / 2, D_RANDOM); // every branch of Paeth
			fill(im.data + bytes / 2, bytes - bytes / 2, D_SMOOTH);
			for (int mode = 0; mode <= 6; mode++) {
				for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
					size_t len;
					uint8_t *file = png_make(&im, mode, 0, 0, pieces[p], &len);
					memset(got, 0xa5, bytes + slack);
					bad += png_read(file, len, &im, got) != 0 ||
					       memcmp(got, im.data, bytes) != 0;
					// the fast path itself, not libpng after it gave up
					memset(got, 0xa5, bytes + slack);
					fast_bad += io_png_fast(file, len, (uint32_t)im.w, (uint32_t)im.h,
								ch, got) != 0 ||
						    memcmp(got, im.data, bytes) != 0;
					free(file);
				}
			}
			snprintf(name, sizeof name,
				 "png decode %dx%dx%d: every filter type, one IDAT or many: the pixels",
				 im.w, im.h, ch);
			CHECK(name, bad == 0);
			snprintf(name, sizeof name,
				 "png decode %dx%dx%d: io_png_fast decodes each itself", im.w, im.h, ch);
			CHECK(name, fast_bad == 0);
			free(im.data);
			free(got);
		}
	}

	// What the specification does not allow: io_png_fast gives up and leaves the file's
	// bytes as they were; the reader then fails as libpng does.
	struct img im = { 17, 9, 3, NULL };
	size_t bytes = img_bytes(&im);
	uint8_t *got = malloc(bytes + (size_t)im.h);
	im.data = malloc(bytes);
	fill(im.data, bytes, D_RANDOM);
	static const struct {
		const char *what;
		int bad_type;
		size_t cut;
		int flip; // a byte of the second IDAT's data flipped: its CRC is wrong
	} bad[] = {
		{ "a row of filter type 5", 5, 0, 0 },
		{ "a row of filter type 255", 255, 0, 0 },
		{ "the zlib stream cut short by 9 bytes", 0, 9, 0 },
		{ "the zlib stream without its Adler-32", 0, 4, 0 },
		{ "an IDAT whose CRC is wrong", 0, 0, 1 },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		size_t len;
		uint8_t *file = png_make(&im, 5, bad[i].bad_type, bad[i].cut, 100, &len), *copy;
		if (bad[i].flip)
			file[8 + 25 + 12 + 100 + 8 + 3] ^= 0x10;
		copy = malloc(len);
		memcpy(copy, file, len);
		snprintf(name, sizeof name, "png decode, %s: io_png_fast gives up, the bytes as they were",
			 bad[i].what);
		CHECK(name, io_png_fast(copy, len, 17, 9, 3, got) == 1 && memcmp(copy, file, len) == 0);
		snprintf(name, sizeof name, "png decode, %s: the reader fails, as libpng does",
			 bad[i].what);
		CHECK(name, png_read(file, len, &im, got) != 0);
		free(copy);
		free(file);
	}
	free(im.data);
	free(got);
}

// ---- PNG filters ---------------------------------------------------------------------

static void test_filters(void)
{
	// Two rows of one RGB pixel pair; hand-computed residuals of the second row.
	static const uint8_t prev[6] = {100, 50, 200, 20, 15, 10};
	static const uint8_t cur[6] = {110, 40, 0, 30, 20, 250};
	static const uint8_t want[5][6] = {
	    {110, 40, 0, 30, 20, 250},
	    {110, 40, 0, 176, 236, 250}, // 30-110, 20-40, 250-0 (mod 256)
	    {10, 246, 56, 10, 5, 240},   // 110-100, 40-50, 0-200, 30-20, 20-15, 250-10
	    // Average: first pixel x - b/2; then x - floor((a + b) / 2)
	    {60, 15, 156, 221, 249, 245}, // 110-50, 40-25, 0-100, 30-65, 20-27, 250-5
	    // Paeth: first pixel x - b; then (a, b, c) = (110, 20, 100): |b-c| 80, |a-c| 10,
	    // |a+b-2c| 70 -> b; (40, 15, 50): 35, 10, 45 -> b; (0, 10, 200): 190, 200, 390 -> a
	    {10, 246, 56, 10, 5, 250},
	};
	uint8_t out[7], ref[7];
	uint64_t s[PNGF_TYPES], r[PNGF_TYPES];
	char name[96];
	int t, bad = 0, bad_scores = 0;

	for (t = 0; t < PNGF_TYPES; t++) {
		pngf_row_ref(t, cur, prev, out, 6, 3);
		snprintf(name, sizeof(name), "filter: type %d by hand", t);
		CHECK(name, out[0] == t && memcmp(out + 1, want[t], 6) == 0);
		pngf_row(t, cur, prev, ref, 6, 3);
		snprintf(name, sizeof(name), "filter: type %d vector version by hand", t);
		CHECK(name, memcmp(out, ref, 7) == 0);
	}
	// Paeth ties: a = b = c gives a; pa == pb < pc gives a.
	{
		uint8_t p2[2] = {5, 9}, c2[2] = {7, 100}, o2[3];

		// byte 1: a = 7, b = 9, c = 5: |b-c| 4, |a-c| 2, |a+b-2c| 6 -> b (9)
		pngf_row_ref(PNGF_PAETH, c2, p2, o2, 2, 1);
		CHECK("filter: Paeth picks b when |a-c| is smallest", o2[2] == 100 - 9);
	}
	// Vector against plain C on random rows of every bpp and many lengths.
	for (size_t bpp = 1; bpp <= 4; bpp++)
		for (size_t n = 1; n <= 300; n += n < 40 ? 1 : 37) {
			uint8_t a[300], b[300], o1[301], o2[301];

			for (size_t i = 0; i < n; i++) {
				a[i] = (uint8_t)(rng() >> 24);
				b[i] = (uint8_t)(rng() >> 24);
			}
			if (n % 5 == 0) // flat areas: ties everywhere
				memset(a, 7, n / 2);
			for (t = 0; t < PNGF_TYPES; t++) {
				pngf_row(t, a, b, o1, n, bpp);
				pngf_row_ref(t, a, b, o2, n, bpp);
				bad += memcmp(o1, o2, n + 1) != 0;
			}
			pngf_scores(a, b, n, bpp, s);
			pngf_scores_ref(a, b, n, bpp, r);
			bad_scores += memcmp(s, r, sizeof(s)) != 0;
		}
	CHECK("filter: vector rows equal plain C (bpp 1-4, 1-300 bytes)", bad == 0);
	CHECK("filter: vector scores equal plain C", bad_scores == 0);
	// Scores by hand for {1, 255, 128} under a row of zeros: None and Up 1 + 1 + 128;
	// Sub 1, 254, 129 -> 1 + 2 + 127; Average 1, 255 - 0, 128 - 127 -> 3; Paeth as Sub.
	{
		uint8_t z[3] = {0, 0, 0}, x[3] = {1, 255, 128};
		static const uint64_t want_s[PNGF_TYPES] = {130, 130, 130, 3, 130};

		pngf_scores(x, z, 3, 1, s);
		CHECK("filter: scores by hand (bytes read as signed)",
		      memcmp(s, want_s, sizeof(s)) == 0);
		t = pngf_adaptive(x, z, out, 3, 1);
		CHECK("filter: adaptive picks the smallest score", t == PNGF_AVG && out[0] == 3);
		t = pngf_adaptive(z, z, out, 3, 1);
		CHECK("filter: adaptive picks the lowest type on a tie", t == PNGF_NONE);
	}
	{
		uint8_t up[4] = {10, 20, 30, 40}, x[4] = {10, 20, 30, 40};

		t = pngf_adaptive(x, up, out, 4, 1);
		CHECK("filter: adaptive picks Up for a repeated row", t == PNGF_UP && !out[1]);
	}
}

// ---- JPEG in strips -------------------------------------------------------------------

// libjpeg's own encoding of im (alpha dropped) with climg's settings and restart_rows MCU
// rows per restart interval (0: none), or else restart_mcus MCUs; luma sampled h x v (0:
// libjpeg's default, 2 x 2) and chroma 1 x 1; progressive when asked. malloc'd into *out.
struct jpeg_opts {
	int quality, restart_rows, restart_mcus, h, v, progressive;
};

static int jpeg_encode_with(const struct img *im, const struct jpeg_opts *jo, uint8_t **out,
			    size_t *len)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr e;
	unsigned char *buf = NULL;
	unsigned long n = 0;
	int oc = im->ch >= 3 ? 3 : 1;
	uint8_t *row = malloc((size_t)im->w * 3);

	c.err = jpeg_std_error(&e);
	jpeg_create_compress(&c);
	jpeg_mem_dest(&c, &buf, &n);
	c.image_width = (JDIMENSION)im->w;
	c.image_height = (JDIMENSION)im->h;
	c.input_components = oc;
	c.in_color_space = oc == 3 ? JCS_RGB : JCS_GRAYSCALE;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, jo->quality, TRUE);
	c.dct_method = JDCT_ISLOW;
	c.optimize_coding = FALSE;
	c.restart_in_rows = jo->restart_rows;
	if (!jo->restart_rows)
		c.restart_interval = (unsigned)jo->restart_mcus;
	if (jo->h && oc == 3) {
		c.comp_info[0].h_samp_factor = jo->h;
		c.comp_info[0].v_samp_factor = jo->v;
	}
	if (jo->progressive)
		jpeg_simple_progression(&c);
	jpeg_start_compress(&c, TRUE);
	while (c.next_scanline < c.image_height) {
		const uint8_t *src = im->data + (size_t)c.next_scanline * im->w * im->ch;

		for (int x = 0; x < im->w; x++)
			for (int k = 0; k < oc; k++)
				row[x * oc + k] = src[x * im->ch + k];
		jpeg_write_scanlines(&c, &row, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	free(row);
	*out = malloc(n);
	if (!*out) {
		free(buf);
		return -1;
	}
	memcpy(*out, buf, n);
	*len = n;
	free(buf);
	return 0;
}

// The same with restart_in_rows only, as io_jpeg_encode plans its strips.
static int jpeg_reference(const struct img *im, int quality, int restart_rows, uint8_t **out,
			  size_t *len)
{
	return jpeg_encode_with(im, &(struct jpeg_opts){ quality, restart_rows, 0, 0, 0, 0 }, out,
				len);
}

// libjpeg's decoding of a whole file in one piece, as climg asks for it (accurate integer
// IDCT, grey or RGB out): the reference for decoding in strips. 0 / -1.
static int jpeg_plain_decode(const uint8_t *data, size_t len, int ch, uint8_t *dst)
{
	struct jpeg_decompress_struct c;
	struct jpeg_error_mgr e;

	c.err = jpeg_std_error(&e);
	jpeg_create_decompress(&c);
	jpeg_mem_src(&c, data, (unsigned long)len);
	jpeg_read_header(&c, TRUE);
	c.out_color_space = ch == 1 ? JCS_GRAYSCALE : JCS_RGB;
	c.dct_method = JDCT_ISLOW;
	jpeg_start_decompress(&c);
	while (c.output_scanline < c.output_height) {
		JSAMPROW row = dst + (size_t)c.output_scanline * c.output_width * (size_t)ch;
		jpeg_read_scanlines(&c, &row, 1);
	}
	jpeg_finish_decompress(&c);
	jpeg_destroy_decompress(&c);
	return e.num_warnings ? -1 : 0;
}

// Decoding in strips (src/io/jpeg.c, 4 threads here): the bytes of libjpeg's decoding in
// one piece for every sampling and restart layout, and in strips exactly where the
// restart markers fall at the starts of MCU rows and there are at least 4 intervals.
static void test_jpeg_decode_strips(void)
{
	static const struct {
		int w, h, ch;
		struct jpeg_opts o;
		int split; // decoded in more than one strip
	} cases[] = {
	    {1037, 611, 3, {85, 1, 0, 0, 0, 0}, 1}, // 4:2:0, 16-row intervals
	    {1037, 611, 3, {85, 3, 0, 0, 0, 0}, 1}, // 48-row intervals, the last 35 rows
	    {1037, 611, 3, {85, 2, 0, 1, 1, 0}, 1}, // 4:4:4, 16-row intervals of 8-row MCUs
	    {1037, 611, 3, {85, 1, 0, 2, 1, 0}, 1}, // 4:2:2
	    {1037, 611, 3, {85, 1, 0, 1, 2, 0}, 1}, // 4:4:0
	    {999, 457, 1, {85, 1, 0, 0, 0, 0}, 1},  // grey, 8-row intervals
	    {999, 457, 1, {85, 5, 0, 0, 0, 0}, 1},  // grey, 40-row intervals
	    {33, 2000, 3, {70, 1, 0, 0, 0, 0}, 1},  // narrow: 3 MCUs a row
	    {1037, 611, 3, {85, 0, 7, 0, 0, 0}, 0}, // intervals of 7 MCUs: not at row starts
	    {1037, 611, 3, {85, 0, 0, 0, 0, 0}, 0}, // no restart markers
	    {1037, 611, 3, {85, 1, 0, 0, 0, 1}, 0}, // progressive
	    {1037, 48, 3, {85, 1, 0, 0, 0, 0}, 0},  // 3 intervals: too few to split
	    {1037, 64, 3, {85, 1, 0, 0, 0, 0}, 1},  // 4 intervals: 2 strips
	};
	char name[160];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct img im = {cases[i].w, cases[i].h, cases[i].ch, NULL};
		uint8_t *file = NULL, *ref = NULL, *got = NULL;
		size_t n = 0, k;
		struct io_limits lim = {(uint64_t)1 << 30, (uint64_t)1 << 30};
		struct img_reader *r = NULL;
		int same = 0, strips = 0;

		im.data = malloc(img_bytes(&im));
		ref = malloc(img_bytes(&im));
		got = malloc(img_bytes(&im));
		if (!im.data || !ref || !got)
			break;
		for (k = 0; k < img_bytes(&im); k++) // smooth with some noise: real coding
			im.data[k] = (uint8_t)((k / 3 % 997) / 4 + (k * 7 / 1000) % 64 + (rng() >> 29));
		if (jpeg_encode_with(&im, &cases[i].o, &file, &n) == 0 &&
		    jpeg_plain_decode(file, n, im.ch, ref) == 0 &&
		    (r = img_reader_open_mem("strips.jpg", file, n, &lim)) &&
		    img_reader_decode(r, got) == 0) {
			same = memcmp(ref, got, img_bytes(&im)) == 0;
			strips = img_reader_strips(r);
		}
		snprintf(name, sizeof(name),
			 "jpeg decode: %dx%dx%d, sampling %dx%d, restart rows %d / MCUs %d%s: the "
			 "bytes of one piece, %s",
			 im.w, im.h, im.ch, cases[i].o.h, cases[i].o.v, cases[i].o.restart_rows,
			 cases[i].o.restart_mcus, cases[i].o.progressive ? ", progressive" : "",
			 cases[i].split ? "in strips" : "in one piece");
		CHECK(name, same && (cases[i].split ? strips > 1 : strips == 1));
		if (!same || (cases[i].split ? strips <= 1 : strips != 1))
			printf("  same %d, strips %d%s%s\n", same, strips, r ? "" : ": ",
			       r ? "" : err_msg());
		img_reader_close(r);
		free(file);
		free(ref);
		free(got);
		free(im.data);
	}
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) > 0 && fseek(fp, 0, SEEK_SET) == 0) {
		p = malloc((size_t)n);
		if (p && fread(p, 1, (size_t)n, fp) != (size_t)n) {
			free(p);
			p = NULL;
		}
		*len = (size_t)n;
	}
	fclose(fp);
	return p;
}

static void test_jpeg_strips(const char *dir)
{
	// W H CH, and the MCU rows per strip io_jpeg_encode plans: min(2^20 / (W * mcu),
	// 65535 / MCUs per row), at least 1; 0 for a single strip (no restart markers).
	static const int cases[][4] = {
	    {600, 2000, 3, 109},  // 2 strips of 1744 rows, the last 256
	    {1000, 3000, 1, 131}, // grey, 8-row MCUs: 3 strips of 1048 rows
	    {500, 2100, 4, 131},  // alpha dropped; the last strip has 4 rows
	    {65500, 40, 3, 1},    // 4094 MCUs a row (the JPEG limit): 16-row strips, the last 8
	    {333, 5000, 2, 393},  // grey + alpha: 2 strips
	    {640, 480, 3, 0},     // one strip: no restart markers
	};
	char path[4096], name[128];

	snprintf(path, sizeof(path), "%s/strips.jpg", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct img im = {cases[i][0], cases[i][1], cases[i][2], NULL};
		struct write_opts o = {80, 6, NULL};
		struct outfile *f;
		uint8_t *ref = NULL, *got = NULL;
		size_t rn = 0, gn = 0, k;
		int ok = 0;

		im.data = malloc(img_bytes(&im));
		if (!im.data)
			break;
		for (k = 0; k < img_bytes(&im); k++) // smooth with some noise: real coding
			im.data[k] = (uint8_t)((k / 3 % 997) / 4 + (k * 7 / 1000) % 64 + (rng() >> 29));
		f = outfile_open(path);
		if (f && img_encode(f, FMT_JPEG, &im, &o) == 0 && outfile_commit(f) == 0)
			got = read_file(path, &gn);
		else
			outfile_abort(f);
		if (got && jpeg_reference(&im, 80, cases[i][3], &ref, &rn) == 0)
			ok = rn == gn && memcmp(ref, got, rn) == 0;
		snprintf(name, sizeof(name),
			 "jpeg: %dx%dx%d in strips equals libjpeg with restart_in_rows %d", im.w,
			 im.h, im.ch, cases[i][3]);
		CHECK(name, ok);
		if (!got)
			printf("  %s\n", err_msg());
		free(ref);
		free(got);
		free(im.data);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: codec SCRATCHDIR\n");
		return 2;
	}
	setenv("CLIMG_THREADS", "4", 1); // for every check: par_threads() reads it once
	test_deflate();
	test_filters();
	test_png_fast();
	test_jpeg_strips(argv[1]);
	test_jpeg_decode_strips();
	return failures ? 1 : 0;
}
