// SPDX-License-Identifier: MIT
// Fuzz target: the decode wrapper (src/io: format recognition, the header checks against the
// limits, then libpng, libjpeg, stb's BMP decoder or our PNM reader). The whole input is the
// file. Odd-sized inputs run with a small --max-pixels (4096) so the limit checks are
// exercised as well as decoding; even-sized ones with 4 Mpixels, which bounds the memory a
// fuzzed header can ask for. A file is either refused with a one-line message, or its
// geometry is within the limits and decoding fills exactly geom_bytes() (ASan checks the
// writes), succeeding or failing cleanly; an uncompressed format (BMP, PGM, PPM) that
// decodes had at least one bit per pixel in the file (no pixels made up past its end).
// The metadata read with the header (an ICC profile, an Exif block and its orientation,
// src/io/exif.c) is consistent, and a 1x1 PNG and JPEG are written with it (orientation
// set to 1, as after autoorient) to /dev/null.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/err.h"
#include "../../src/io/io.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct io_limits lim = {size & 1 ? 4096 : (uint64_t)1 << 22, (uint64_t)1 << 24};
	struct img_reader *r;
	enum img_format fmt;
	struct geom g;
	struct img_meta m;
	uint8_t *px;

	err_quiet = 1;
	r = img_reader_open_mem("fuzz", data, size, &lim);
	if (!r) {
		FUZZ_ASSERT(*err_msg() && !strchr(err_msg(), '\n'));
		return 0;
	}
	g = img_reader_geom(r);
	FUZZ_ASSERT(g.w >= 1 && g.w <= IMG_MAX_SIDE && g.h >= 1 && g.h <= IMG_MAX_SIDE);
	FUZZ_ASSERT(g.ch >= 1 && g.ch <= 4);
	FUZZ_ASSERT((uint64_t)g.w * (uint64_t)g.h <= lim.max_pixels);
	img_reader_meta_take(r, &m);
	FUZZ_ASSERT(g.orient >= 0 && g.orient <= 8 && g.orient == m.orient);
	FUZZ_ASSERT(!m.orient || (m.exif && m.orient_at + 2 <= m.exif_bytes));
	FUZZ_ASSERT(!m.icc == !m.icc_bytes);
	if (m.icc || m.exif) {
		uint8_t pixel[4] = {1, 2, 3, 4};
		struct img one = {1, 1, g.ch, pixel};
		struct write_opts wo = {90, 1, &m};
		img_meta_orient(&m, 1);
		for (int k = 0; k < 2; k++) {
			struct outfile *f = outfile_open("/dev/null");
			if (f && img_encode(f, k ? FMT_JPEG : FMT_PNG, &one, &wo) == 0)
				FUZZ_ASSERT(outfile_commit(f) == 0);
			else
				outfile_abort(f);
		}
	}
	img_meta_free(&m);
	fmt = img_reader_format(r);
	px = malloc(geom_bytes(&g) + img_reader_slack(r));
	if (px) {
		if (img_reader_decode(r, px) < 0)
			FUZZ_ASSERT(*err_msg() && !strchr(err_msg(), '\n'));
		else if (fmt == FMT_BMP || fmt == FMT_PGM || fmt == FMT_PPM)
			// uncompressed: a decoded image had at least a bit per pixel in the file
			FUZZ_ASSERT((uint64_t)size * 8 >= (uint64_t)g.w * (uint64_t)g.h);
		free(px);
	}
	img_reader_close(r);
	return 0;
}
