// SPDX-License-Identifier: MIT
// autoorient: turn the image as the input file's Exif Orientation tag says, so that it stands
// as the camera held it, as Pillow's ImageOps.exif_transpose. The tag is read with the
// file's header (src/io/exif.c) and reaches the plan in the geometry (struct geom, orient).
// Each value is one of the right-angle stages, whose CPU paths and kernels run it:
//
//   1, or no tag   passes the image through
//   2   flop         out(x, y) = in(W-1-x, y)
//   3   rotate:180   out(x, y) = in(W-1-x, H-1-y)
//   4   flip         out(x, y) = in(x, H-1-y)
//   5   transpose    out(x, y) = in(y, x)
//   6   rotate:90    out(x, y) = in(y, H-1-x)
//   7   transverse   out(x, y) = in(W-1-y, H-1-x)
//   8   rotate:270   out(x, y) = in(W-1-y, x)
//
// Output size: W x H for 1 to 4, H x W for 5 to 8; its orientation is 1, which PNG and JPEG
// output then write into the Exif block. The tag turns whatever image the stage gets,
// wherever it stands in the chain: the other stages leave it as it was.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "stage.h"

extern const struct stage_ops stage_flip, stage_flop, stage_rotate, stage_transpose,
	stage_transverse;

// rotate's parameter blocks for 90, 180 and 270 degrees, made by its own parse.
struct autoorient_params {
	void *rot[3];
};

// What an orientation asks for: a stage, and for rotate which of the blocks (else -1).
struct orient_op {
	const struct stage_ops *ops;
	int rot;
};

static const struct orient_op ops_of[9] = {
	[2] = { &stage_flop, -1 },      [3] = { &stage_rotate, 1 },
	[4] = { &stage_flip, -1 },      [5] = { &stage_transpose, -1 },
	[6] = { &stage_rotate, 0 },     [7] = { &stage_transverse, -1 },
	[8] = { &stage_rotate, 2 },
};

// The parameter block op's stage runs with (NULL for the stages that take none).
static const void *op_params(const struct autoorient_params *p, const struct orient_op *op)
{
	return op->rot >= 0 ? p->rot[op->rot] : NULL;
}

static void autoorient_free_params(void *params)
{
	struct autoorient_params *p = params;
	for (int i = 0; i < 3; i++) {
		if (p->rot[i] && stage_rotate.free_params)
			stage_rotate.free_params(p->rot[i]);
		free(p->rot[i]);
	}
}

static int autoorient_parse(void *params, int argc, char **argv)
{
	struct autoorient_params *p = params;
	(void)argv;
	if (argc)
		return err_set("autoorient: takes no arguments");
	for (int i = 0; i < 3; i++) {
		static const char *const angles[3] = { "90", "180", "270" };
		char degrees[4];
		strcpy(degrees, angles[i]); // parse takes writable strings
		p->rot[i] = calloc(1, stage_rotate.params_size);
		if (!p->rot[i])
			return err_set("out of memory");
		if (stage_rotate.parse(p->rot[i], 1, (char *[]){ degrees }) < 0)
			return -1;
	}
	return 0;
}

static int autoorient_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	const struct orient_op *op = &ops_of[in->orient >= 1 && in->orient <= 8 ? in->orient : 0];
	if (!op->ops) {
		plan->out = *in;
		plan->passthrough = true;
		return 0;
	}
	if (op->ops->plan(op_params(params, op), in, plan) < 0)
		return -1;
	// the stages named keep nothing of their own in a plan and write no side output
	if (plan->priv || plan->side_bytes || plan->passthrough)
		return err_set("autoorient: internal error: %s planned more than a remap",
			       op->ops->name);
	plan->priv = (void *)op; // read only
	plan->program = op->ops->program;
	plan->out.orient = 1;
	return 0;
}

static void autoorient_run_cpu(const void *params, const struct stage_plan *plan,
			       const struct img *in, struct img *out)
{
	const struct orient_op *op = plan->priv;
	if (out) // not a passthrough
		op->ops->run_cpu(op_params(params, op), plan, in, out);
}

static int autoorient_run_cl(const void *params, const struct stage_cl *c)
{
	const struct orient_op *op = c->plan->priv;
	if (!c->out)
		return 0;
	return op->ops->run_cl(op_params(params, op), c);
}

// The cost of the stage the orientation names (nothing for a passthrough).
static void autoorient_cost(const void *params, const struct geom *in,
			    const struct stage_plan *plan, struct stage_cost *cost)
{
	const struct orient_op *op = plan->priv;
	if (!op) {
		*cost = (struct stage_cost){ "remap", 0, true };
		return;
	}
	op->ops->cost(op_params(params, op), in, plan, cost); // every stage it names has one
}

const struct stage_ops stage_autoorient = {
	.name = "autoorient",
	.usage = "autoorient",
	.summary = "turn as the input's Exif Orientation tag says (1-8), as Pillow's "
		   "exif_transpose",
	.help =
		"Turns the image upright as the Orientation tag (0x0112) of the input's Exif\n"
		"block says, the way cameras and phones record it, so that a later stage sees\n"
		"the picture as a viewer shows it. The turn is an exact remap. Kept metadata\n"
		"says Orientation 1 afterwards (--strip writes none). It takes no options; an\n"
		"input without Exif, or with a tag outside 1-8, passes through.\n"
		"\n"
		"Formula, by the tag's value (as Pillow's ImageOps.exif_transpose):\n"
		"  1 unchanged     2 flop          3 rotate:180    4 flip\n"
		"  5 transpose     6 rotate:90     7 transverse    8 rotate:270\n"
		"\n"
		"Example:\n"
		"  climg in.jpg autoorient resize:1024x1024:fit -o upright.jpg\n",
	.params_size = sizeof(struct autoorient_params),
	.parse = autoorient_parse,
	.plan = autoorient_plan,
	.run_cpu = autoorient_run_cpu,
	.program = NULL, // each plan names the program of the stage it runs
	.run_cl = autoorient_run_cl,
	.free_params = autoorient_free_params,
	.cost = autoorient_cost,
};
