// SPDX-License-Identifier: MIT
// invert: the negative, as ImageMagick -negate and cv2.bitwise_not on the colour channels.
//
//   invert           v' = 255 - v in every colour channel; alpha (the last channel of 2 and
//                    4) is kept
//
// Output size: the input's. A per-channel lookup table (src/stages/lut.h); kernels/invert.cl
// applies the same table.
#include "../err.h"
#include "lut.h"
#include "stage.h"

struct invert_params {
	uint8_t colour[256]; // the colour channels' table
};

static int invert_parse(void *params, int argc, char **argv)
{
	struct invert_params *p = params;
	(void)argv;
	if (argc)
		return err_set("invert: takes no arguments");
	for (int v = 0; v < 256; v++)
		p->colour[v] = (uint8_t)(255 - v);
	return 0;
}

static int invert_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = *in;
	plan->passthrough = false;
	return 0;
}

static void invert_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	const struct invert_params *p = params;
	uint8_t lut[4 * 256];
	lut_fill_colour(lut, in->ch, p->colour);
	lut_run_cpu(lut, in, out);
}

static int invert_run_cl(const void *params, const struct stage_cl *c)
{
	const struct invert_params *p = params;
	uint8_t lut[4 * 256];
	lut_fill_colour(lut, c->gin.ch, p->colour);
	return lut_run_cl_host(c, "invert", lut);
}

const struct stage_ops stage_invert = {
	.name = "invert",
	.usage = "invert",
	.summary = "negative: v' = 255 - v per colour channel, alpha kept",
	.help =
		"The negative, as ImageMagick -negate; alpha (the last channel of grey+alpha and\n"
		"RGBA images) is kept.\n"
		"\n"
		"Formula:\n"
		"  v' = 255 - v in every colour channel\n"
		"\n"
		"Example:\n"
		"  climg in.png invert -o negative.png\n",
	.params_size = sizeof(struct invert_params),
	.parse = invert_parse,
	.plan = invert_plan,
	.run_cpu = invert_run_cpu,
	.program = "invert",
	.run_cl = invert_run_cl,
	.cost = lut_cost,
};
