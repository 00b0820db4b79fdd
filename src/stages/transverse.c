// SPDX-License-Identifier: MIT
// transverse: mirror about the anti-diagonal, as ImageMagick -transverse (transpose then
// rotate:180).
//
//   transverse       out(x, y) = in(W-1-y, H-1-x)
//
// Output size: H x W for a W x H input. kernels/transverse.cl computes the same.
#include "../err.h"
#include "remap.h"
#include "stage.h"

static int transverse_parse(void *params, int argc, char **argv)
{
	(void)params;
	(void)argv;
	if (argc)
		return err_set("transverse: takes no arguments");
	return 0;
}

static int transverse_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = (struct geom){ in->h, in->w, in->ch, in->orient };
	plan->passthrough = false;
	return 0;
}

static void transverse_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	(void)params;
	remap_run_cpu(in, out, REMAP_TRANSVERSE);
}

static int transverse_run_cl(const void *params, const struct stage_cl *c)
{
	(void)params;
	return remap_run_cl(c, "transverse", "transverse");
}

const struct stage_ops stage_transverse = {
	.name = "transverse",
	.usage = "transverse",
	.summary = "mirror about the anti-diagonal: out(x, y) = in(W-1-y, H-1-x)",
	.help =
		"Mirrors the image about its anti-diagonal, as ImageMagick -transverse (the same\n"
		"as transpose rotate:180); a W x H input gives an H x W output.\n"
		"\n"
		"Formula:\n"
		"  out(x, y) = in(W-1-y, H-1-x)\n"
		"\n"
		"Example:\n"
		"  climg in.png transverse -o out.png\n",
	.params_size = 0,
	.parse = transverse_parse,
	.plan = transverse_plan,
	.run_cpu = transverse_run_cpu,
	.program = "transverse",
	.run_cl = transverse_run_cl,
	.cost = remap_cost,
};
