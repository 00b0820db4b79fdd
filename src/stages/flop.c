// SPDX-License-Identifier: MIT
// flop: mirror left to right, as ImageMagick -flop and OpenCV flip(img, 1).
//
//   flop             out(x, y) = in(W-1-x, y)
//
// Output size: the input's. Each row is reversed pixel by pixel; kernels/flop.cl computes
// the same.
#include "../err.h"
#include "remap.h"
#include "stage.h"

static int flop_parse(void *params, int argc, char **argv)
{
	(void)params;
	(void)argv;
	if (argc)
		return err_set("flop: takes no arguments");
	return 0;
}

static int flop_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = *in;
	plan->passthrough = false;
	return 0;
}

static void flop_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	(void)params;
	remap_run_cpu(in, out, REMAP_FLOP);
}

static int flop_run_cl(const void *params, const struct stage_cl *c)
{
	(void)params;
	return remap_flop_run_cl(c, "flop");
}

const struct stage_ops stage_flop = {
	.name = "flop",
	.usage = "flop",
	.summary = "mirror left to right: out(x, y) = in(W-1-x, y)",
	.help =
		"Mirrors the image left to right, as ImageMagick -flop and OpenCV flip(img, 1).\n"
		"\n"
		"Formula:\n"
		"  out(x, y) = in(W-1-x, y)\n"
		"\n"
		"Example:\n"
		"  climg in.png flop -o out.png\n",
	.params_size = 0,
	.parse = flop_parse,
	.plan = flop_plan,
	.run_cpu = flop_run_cpu,
	.program = "flop",
	.run_cl = flop_run_cl,
	.cost = remap_cost,
};
