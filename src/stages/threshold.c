// SPDX-License-Identifier: MIT
// threshold: binary threshold per colour channel, as cv2.threshold(img, T, 255,
// THRESH_BINARY) on every channel but alpha.
//
//   threshold:T      v' = 255 if v > T, else 0, in every colour channel (T: 0 to 255);
//                    alpha (the last channel of 2 and 4) is kept
//
// Output size: the input's. A colour image stays colour: each channel is thresholded on its
// own (put grey before it for one level). A per-channel lookup table (src/stages/lut.h);
// kernels/threshold.cl applies the same table.
#include "../err.h"
#include "../parse.h"
#include "lut.h"
#include "stage.h"

struct threshold_params {
	uint8_t colour[256]; // the colour channels' table
};

static int threshold_parse(void *params, int argc, char **argv)
{
	struct threshold_params *p = params;
	long t;
	if (argc != 1)
		return err_set("threshold: needs one argument, the level T 0-255 (e.g. threshold:128)");
	if (!parse_long(argv[0], 0, 255, &t))
		return err_set("threshold: level must be a whole number 0-255, not '%s'", argv[0]);
	for (int v = 0; v < 256; v++)
		p->colour[v] = v > t ? 255 : 0;
	return 0;
}

static int threshold_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = *in;
	plan->passthrough = false;
	return 0;
}

static void threshold_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	const struct threshold_params *p = params;
	uint8_t lut[4 * 256];
	lut_fill_colour(lut, in->ch, p->colour);
	lut_run_cpu(lut, in, out);
}

static int threshold_run_cl(const void *params, const struct stage_cl *c)
{
	const struct threshold_params *p = params;
	uint8_t lut[4 * 256];
	lut_fill_colour(lut, c->gin.ch, p->colour);
	return lut_run_cl_host(c, "threshold", lut);
}

const struct stage_ops stage_threshold = {
	.name = "threshold",
	.usage = "threshold:T",
	.summary = "per colour channel v' = 255 if v > T else 0 (T 0-255), alpha kept",
	.help =
		"Binary threshold, each colour channel on its own, as cv2.threshold(img, T, 255,\n"
		"THRESH_BINARY). Alpha is kept, and a colour image stays colour: put grey before\n"
		"it for one level per pixel. T is a whole number 0 to 255; there is no default.\n"
		"\n"
		"Formula:\n"
		"  v' = 255 where v > T, else 0\n"
		"\n"
		"Example:\n"
		"  climg in.png grey threshold:128 -o black-and-white.png\n",
	.params_size = sizeof(struct threshold_params),
	.parse = threshold_parse,
	.plan = threshold_plan,
	.run_cpu = threshold_run_cpu,
	.program = "threshold",
	.run_cl = threshold_run_cl,
	.cost = lut_cost,
};
