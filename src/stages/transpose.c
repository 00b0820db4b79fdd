// SPDX-License-Identifier: MIT
// transpose: mirror about the main diagonal, as ImageMagick -transpose and OpenCV transpose.
//
//   transpose        out(x, y) = in(y, x)
//
// Output size: H x W for a W x H input. kernels/transpose.cl computes the same.
#include "../err.h"
#include "remap.h"
#include "stage.h"

static int transpose_parse(void *params, int argc, char **argv)
{
	(void)params;
	(void)argv;
	if (argc)
		return err_set("transpose: takes no arguments");
	return 0;
}

static int transpose_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = (struct geom){ in->h, in->w, in->ch, in->orient };
	plan->passthrough = false;
	return 0;
}

static void transpose_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	(void)params;
	remap_run_cpu(in, out, REMAP_TRANSPOSE);
}

static int transpose_run_cl(const void *params, const struct stage_cl *c)
{
	(void)params;
	return remap_run_cl(c, "transpose", "transpose");
}

const struct stage_ops stage_transpose = {
	.name = "transpose",
	.usage = "transpose",
	.summary = "mirror about the main diagonal: out(x, y) = in(y, x)",
	.help =
		"Mirrors the image about its main diagonal, as ImageMagick -transpose and OpenCV\n"
		"transpose; a W x H input gives an H x W output.\n"
		"\n"
		"Formula:\n"
		"  out(x, y) = in(y, x)\n"
		"\n"
		"Example:\n"
		"  climg in.png transpose -o out.png\n",
	.params_size = 0,
	.parse = transpose_parse,
	.plan = transpose_plan,
	.run_cpu = transpose_run_cpu,
	.program = "transpose",
	.run_cl = transpose_run_cl,
	.cost = remap_cost,
};
