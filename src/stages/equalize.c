// SPDX-License-Identifier: MIT
// equalize: histogram equalisation, as OpenCV's equalizeHist, each colour channel on its own.
//
//   equalize         for each colour channel c, with hist(v) its counts over the N = W x H
//                    pixels and m the least value present:
//                      lut(v) = rint(float(S(v)) * s)   for v > m, where S(v) = hist(m+1) +
//                               ... + hist(v) and s = 255.f / float(N - hist(m)), in IEEE
//                               single precision, rounded to nearest, ties to even, clamped
//                               to 0..255;
//                      lut(m) = 0; where every pixel has the value m, lut(m) = m
//                    then v' = lut(v). Alpha (the last channel of 2 and 4) is kept.
//
// On grey images this is byte for byte cv2.equalizeHist (whose arithmetic it follows: a
// float scale, the product rounded by cvRound); colour images are equalised per channel
// (R, G and B each get their own table, so hues may shift: put grey first for one level).
// Output size: the input's. On the device the histogram is counted by the histogram
// stage's kernels, the tables are made by equalize_lut and applied by lut_cN
// (kernels/equalize.cl); the division there is corrected to the nearest float, as C's is.
#include <math.h>

#include "../err.h"
#include "../ocl.h"
#include "histogram.h"
#include "lut.h"
#include "stage.h"

static int equalize_parse(void *params, int argc, char **argv)
{
	(void)params;
	(void)argv;
	if (argc)
		return err_set("equalize: takes no arguments");
	return 0;
}

static int equalize_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = *in;
	plan->passthrough = false;
	return 0;
}

// The table of one channel from its counts (256) over n pixels, as the top of this file says;
// kernels/equalize.cl's equalize_table is the same.
static void equalize_table(const uint32_t *hist, uint32_t n, uint8_t *lut)
{
	int m = 0;
	while (m < 255 && !hist[m])
		m++;
	for (int v = 0; v < 256; v++)
		lut[v] = 0;
	if (hist[m] == n) {
		lut[m] = (uint8_t)m;
		return;
	}
	float s = 255.f / (float)(n - hist[m]);
	uint32_t sum = 0;
	for (int v = m + 1; v < 256; v++) {
		sum += hist[v];
		float r = rintf((float)sum * s);
		lut[v] = (uint8_t)(r > 255.f ? 255 : r);
	}
}

static void equalize_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	uint32_t hist[4 * 256] = { 0 };
	uint8_t lut[4 * 256];
	size_t npx = (size_t)in->w * (size_t)in->h;
	const uint8_t *s = in->data;
	int colour = in->ch == 2 || in->ch == 4 ? in->ch - 1 : in->ch;
	(void)params;
	for (size_t i = 0; i < npx; i++, s += in->ch)
		for (int c = 0; c < colour; c++)
			hist[c * 256 + s[c]]++;
	for (int c = 0; c < in->ch; c++) {
		if (c < colour) {
			equalize_table(hist + c * 256, (uint32_t)npx, lut + c * 256);
		} else {
			for (int v = 0; v < 256; v++)
				lut[c * 256 + v] = (uint8_t)v;
		}
	}
	lut_run_cpu(lut, in, out);
}

static int equalize_run_cl(const void *params, const struct stage_cl *c)
{
	size_t nh = (size_t)HISTOGRAM_CL_COPIES * c->gin.ch * 256 * sizeof(uint32_t);
	uint32_t npx = (uint32_t)((size_t)c->gin.w * (size_t)c->gin.h);
	struct ocl_buf *hist = ocl_buf_new(c->ocl, nh);
	struct ocl_buf *lut = ocl_buf_new(c->ocl, (size_t)c->gin.ch * 256);
	struct stage_cl h = *c;
	int r = -1;
	(void)params;
	if (!hist || !lut)
		goto fail;
	h.side = hist;
	h.side_offset = 0;
	if (ocl_zero(c->ocl, hist, nh) < 0 || histogram_count_cl(&h, "equalize") < 0)
		goto fail;
	// one work-item a channel
	if (ocl_run(c->ocl, "equalize", c->gin.ch, "equalize_lut", (size_t)c->gin.ch, 1, 1, 1,
		    (struct ocl_arg[]){ OCL_BUF(hist), OCL_UINT(HISTOGRAM_CL_COPIES), OCL_INT(c->gin.ch),
					OCL_UINT(npx), OCL_BUF(lut), OCL_END }) < 0)
		goto fail;
	r = lut_run_cl(c, "equalize", lut);
fail:
	ocl_buf_free(hist); // released once the kernels are done with them
	ocl_buf_free(lut);
	return r;
}

const struct stage_ops stage_equalize = {
	.name = "equalize",
	.usage = "equalize",
	.summary = "histogram equalisation per colour channel, as cv2.equalizeHist; alpha kept",
	.help =
		"Histogram equalisation, each colour channel on its own, as cv2.equalizeHist\n"
		"(byte for byte on grey images); alpha is kept. A colour image gets one table per\n"
		"channel, so hues may shift: put grey before it for one level per pixel.\n"
		"\n"
		"Formula, for a channel whose counts over the N = W x H pixels are hist(v), and m\n"
		"the least value present:\n"
		"  lut(m) = 0 and, for v > m,\n"
		"  lut(v) = rint(float(hist(m+1) + ... + hist(v)) * (255.f / float(N - hist(m))))\n"
		"  in IEEE single precision, at most 255 (an image of one value keeps it);\n"
		"  then v' = lut(v)\n"
		"\n"
		"Example:\n"
		"  climg in.png grey equalize -o equalized.png\n",
	.params_size = 0,
	.parse = equalize_parse,
	.plan = equalize_plan,
	.run_cpu = equalize_run_cpu,
	.program = "equalize",
	.run_cl = equalize_run_cl,
};
