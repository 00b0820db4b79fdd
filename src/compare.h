// SPDX-License-Identifier: MIT
// Comparing two images pixel by pixel: `climg compare A B` (compare.c, compare_dir.c) and a
// chain's --expect (the run layer). The counts, maxima and sums are integers computed
// exactly, on the CPU path or on an OpenCL device (compare_cl.c), the same bit for bit; the
// floating metrics come from them, so every run on every device gives the same.
#ifndef CLIMG_COMPARE_H
#define CLIMG_COMPARE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "img.h"
#include "io/io.h"

#define CMP_MAX_IGNORE 64

// climg compare's exit status: frozen (see climg(1), COMPARE).
enum { CMP_SAME = 0, CMP_DIFFER = 1, CMP_USAGE = 2, CMP_VERIFY = 3 };

// A rectangle of pixels left out of the comparison: x .. x + w - 1, y .. y + h - 1.
struct cmp_rect {
	int x, y, w, h;
};

// What counts as the same. A pixel differs when any channel differs by more than
// tolerance; the images are the same when at most allow_count pixels differ, or with
// allow_pct at most floor(allow_ppm * compared / 1000000) of them (P% is P * 10000 ppm,
// so a percentage has at most 4 decimals).
struct cmp_opts {
	int tolerance; // 0..255
	uint64_t allow_count;
	bool allow_pct;
	uint64_t allow_ppm; // with allow_pct: the share allowed, in parts per million
	struct cmp_rect ignore[CMP_MAX_IGNORE];
	int nignore;
	bool json;
	const char *diff; // --diff FILE, or NULL
};

// The result of comparing a with b. When the sizes or channel counts differ (mismatch
// set), only the geometries are filled.
struct cmp_result {
	struct geom a, b;
	const char *mismatch;   // NULL, "size" or "channels"
	uint64_t compared;      // pixels compared: w * h less those ignored
	uint64_t differing;     // pixels with a channel differing by more than the tolerance
	uint64_t allowed;       // differing pixels allowed (from allow_count or allow_ppm)
	int max[4];             // per channel: the largest |a - b|
	int max_x[4], max_y[4]; // where it is first reached (row by row); -1 when max is 0
	uint64_t sum_abs[4];    // per channel: the sum of |a - b|
	uint64_t sum_sq[4];     // per channel: the sum of (a - b)^2
	double mae, rmse, psnr; // over every compared sample; psnr is INFINITY when identical
	bool same;              // no mismatch and differing <= allowed
};

struct ocl;
struct run_dev;

// Parses one of the options compare and --expect share: "--tolerance", "--allow",
// "--ignore" with its value into o. 1 when name is one of them, 0 when not, -1 with err
// set for a bad value.
int cmp_parse_opt(struct cmp_opts *o, const char *name, const char *value);

// Compares a and b (any geometries) into r, on every core. Integer results are exact and
// never depend on the thread count; the floating ones are computed from them.
void cmp_images(const struct img *a, const struct img *b, const struct cmp_opts *o,
		struct cmp_result *r);

// Starts r for comparing a with b: zeroed, the geometries set, no largest difference's
// position yet. True, with r->mismatch set, when the sizes or channel counts differ.
bool cmp_result_start(struct cmp_result *r, const struct img *a, const struct img *b);

// The floating metrics and the verdict (mae, rmse, psnr, allowed, same), from r's integers.
void cmp_finish(struct cmp_result *r, const struct cmp_opts *o);

// cmp_images' integers (compared, differing, max and where, sum_abs, sum_sq; not the floating
// metrics) computed on device o by kernels/compare.cl, bit for bit the same; a and b have
// the same geometry. 0, or -1 with err set when the device fails.
int cmp_count_cl(struct ocl *o, const struct img *a, const struct img *b,
		 const struct cmp_opts *opts, struct cmp_result *r);

// Compares a and b into r as cmp_images does: on the device of d where it has one (d NULL:
// the CPU path), taking its lock for the comparison. An automatically chosen device that
// fails is dropped with one warning, and the CPU path compares instead; the failure of a
// named one (dev_named), or any with verify, is an error. With verify (d must have a device)
// both compare and their integers must agree. 0; -1 with err set; 1 when verify found a
// difference (err names the field and both values).
int cmp_run(struct run_dev *d, bool verify, const struct img *a, const struct img *b,
	    const struct cmp_opts *opts, struct cmp_result *r);

// Writes the metrics of r as one line, or one JSON object with --json, ending in '\n';
// label (a path, or NULL) starts the line, or is the JSON "path". -1 with err set.
int cmp_print(FILE *f, const struct cmp_result *r, const struct cmp_opts *o, const char *label);

// The picture of where a and b (same geometry) differ, 3 channels, a's size: every pixel
// a's luma Y (bt601) faded to the light grey 191 + Y / 4; a pixel that differs red,
// (128 + 127 * d / 255, 0, 0) with d its largest channel difference; an ignored pixel in
// blue-grey (g - 64, g - 64, g) with g its faded grey. out->data is malloc'd; -1 with err.
int cmp_diff_image(const struct img *a, const struct img *b, const struct cmp_opts *o,
		   struct img *out);

// Reads and decodes path into im (data malloc'd). -1 with err set.
int cmp_load(const char *path, const struct io_limits *lim, struct img *im);

// Writes im to path in the format of its extension (PNG level 6, JPEG quality 90).
// -1 with err set.
int cmp_write(const char *path, const struct img *im);

// `climg compare ...` with argv[0] = "compare" (compare_main.c): returns the exit status
// (CMP_SAME, CMP_DIFFER, CMP_USAGE for a usage error, an unreadable file or a failing named
// device, CMP_VERIFY for a --verify difference), having printed any error itself.
int compare_main(int argc, char **argv);

// Directory mode: dir_a and dir_b are directories (compare_dir.c), each pair compared by
// cmp_run on d with verify. Exit status as above.
int compare_dirs(const char *dir_a, const char *dir_b, const struct cmp_opts *o,
		 const struct io_limits *lim, struct run_dev *d, bool verify);

#endif
