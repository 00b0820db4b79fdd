// SPDX-License-Identifier: MIT
// flip: mirror top to bottom, as ImageMagick -flip and OpenCV flip(img, 0).
//
//   flip             out(x, y) = in(x, H-1-y)
//
// Output size: the input's. Every row is copied whole (remap.c); kernels/flip.cl computes
// the same.
#include "../err.h"
#include "remap.h"
#include "stage.h"

static int flip_parse(void *params, int argc, char **argv)
{
	(void)params;
	(void)argv;
	if (argc)
		return err_set("flip: takes no arguments");
	return 0;
}

static int flip_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = *in;
	plan->passthrough = false;
	return 0;
}

static void flip_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	(void)params;
	remap_run_cpu(in, out, REMAP_FLIP);
}

static int flip_run_cl(const void *params, const struct stage_cl *c)
{
	int64_t row = (int64_t)c->gin.w * c->gin.ch;
	(void)params;
	return remap_rows_run_cl(c, "flip", "flip", (c->gin.h - 1) * row, -row);
}

const struct stage_ops stage_flip = {
	.name = "flip",
	.usage = "flip",
	.summary = "mirror top to bottom: out(x, y) = in(x, H-1-y)",
	.help =
		"Mirrors the image top to bottom, as ImageMagick -flip and OpenCV flip(img, 0).\n"
		"\n"
		"Formula:\n"
		"  out(x, y) = in(x, H-1-y)\n"
		"\n"
		"Example:\n"
		"  climg in.png flip -o out.png\n",
	.params_size = 0,
	.parse = flip_parse,
	.plan = flip_plan,
	.run_cpu = flip_run_cpu,
	.program = "flip",
	.run_cl = flip_run_cl,
	.cost = remap_cost,
};
