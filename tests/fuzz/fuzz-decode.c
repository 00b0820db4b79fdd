// SPDX-License-Identifier: MIT
// Fuzz target: the decode wrapper (src/io: format recognition, the header checks against the
// limits, then libpng, libjpeg, stb's BMP decoder or our PNM reader). The whole input is the
// file. Odd-sized inputs run with a small --max-pixels (4096) so the limit checks are
// exercised as well as decoding; even-sized ones with 4 Mpixels, which bounds the memory a
// fuzzed header can ask for. A file is either refused with a one-line message, or its
// geometry is within the limits and decoding fills exactly geom_bytes() (ASan checks the
// writes), succeeding or failing cleanly; an uncompressed format (BMP, PGM, PPM) that
// decodes had at least one bit per pixel in the file (no pixels made up past its end).
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
	fmt = img_reader_format(r);
	px = malloc(geom_bytes(&g));
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
