// SPDX-License-Identifier: MIT
// grey: colour to luma, one rounding step in 15-bit fixed point.
//
//   grey         BT.601, as OpenCV's 8-bit RGB2GRAY:
//                  Y = (9798 R + 19235 G + 3735 B + 16384) >> 15
//   grey:bt709   BT.709 (0.2126, 0.7152, 0.0722 times 32768, rounded to sum to 32768):
//                  Y = (6967 R + 23435 G + 2366 B + 16384) >> 15
//   grey:avg     Y = (R + G + B + 1) / 3  (nearest; a sum of three never ties)
//
// Output size: the input's. RGB becomes 1 channel, RGBA becomes grey+alpha with alpha copied.
// Grey and grey+alpha input pass through unchanged. kernels/grey.cl computes the same.
#include <string.h>

#include "../err.h"
#include "../ocl.h"
#include "../suggest.h"
#include "stage.h"

struct grey_params {
	int wr, wg, wb; // 15-bit weights summing to 32768; all 0 for avg
};

static int grey_parse(void *params, int argc, char **argv)
{
	static const char *const modes[] = { "bt601", "bt709", "avg", NULL };
	struct grey_params *p = params;
	const char *mode = argc > 0 ? argv[0] : "bt601";
	if (argc > 1)
		return err_set("grey: takes at most one argument (bt601, bt709 or avg)");
	if (!strcmp(mode, "bt601"))
		*p = (struct grey_params){ 9798, 19235, 3735 };
	else if (!strcmp(mode, "bt709"))
		*p = (struct grey_params){ 6967, 23435, 2366 };
	else if (!strcmp(mode, "avg"))
		*p = (struct grey_params){ 0, 0, 0 };
	else {
		err_set("grey: unknown mode '%s' (use bt601, bt709 or avg)", mode);
		return suggest_err(suggest(mode, modes));
	}
	return 0;
}

static int grey_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = *in;
	plan->passthrough = in->ch < 3;
	if (in->ch >= 3)
		plan->out.ch = in->ch - 2; // 3 -> 1, 4 -> 2 (alpha kept)
	return 0;
}

static void grey_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	const struct grey_params *p = params;
	size_t n = (size_t)in->w * in->h;
	const uint8_t *s = in->data;
	uint8_t *d;
	if (!out) // passthrough: grey input
		return;
	d = out->data;
	for (size_t i = 0; i < n; i++, s += in->ch, d += out->ch) {
		unsigned r = s[0], g = s[1], b = s[2];
		if (p->wr)
			d[0] = (uint8_t)((p->wr * r + p->wg * g + p->wb * b + 16384) >> 15);
		else
			d[0] = (uint8_t)((r + g + b + 1) / 3);
		if (in->ch == 4)
			d[1] = s[3];
	}
}

// Pixels a work-item of grey_cpu_cN converts; keep in step with kernels/grey.cl.
#define GREY_CPU_PX 16384

static int grey_run_cl(const void *params, const struct stage_cl *c)
{
	const struct grey_params *p = params;
	size_t npx = (size_t)c->gin.w * (size_t)c->gin.h;
	struct ocl_arg args[] = { OCL_BUF(c->in), OCL_BUF(c->out), OCL_UINT(npx), OCL_INT(p->wr),
				  OCL_INT(p->wg), OCL_INT(p->wb), OCL_END };
	if (!c->out) // passthrough: grey input
		return 0;
	if (ocl_cpu_kernels(c->ocl)) // GREY_CPU_PX pixels a work-item, one a work-group
		return ocl_run(c->ocl, "grey", c->gin.ch,
			       c->gin.ch == 3 ? "grey_cpu_c3" : "grey_cpu_c4",
			       up_div(npx, GREY_CPU_PX), 1, 1, 1, args);
	return ocl_run(c->ocl, "grey", c->gin.ch, c->gin.ch == 3 ? "grey_c3" : "grey_c4",
		       up_div(npx, 16), 1, 0, 0, args);
}

const struct stage_ops stage_grey = {
	.name = "grey",
	.usage = "grey[:bt601|bt709|avg]",
	.summary = "colour to luma (alpha kept); grey input passes through",
	.help =
		"Colour to luma in 15-bit fixed point, one rounding step. RGB becomes one\n"
		"channel, RGBA grey+alpha with alpha unchanged; grey and grey+alpha input pass\n"
		"through unchanged.\n"
		"\n"
		"Options (one at most):\n"
		"  bt601   (the default) ITU-R BT.601 weights, exactly OpenCV's 8-bit RGB2GRAY\n"
		"  bt709   ITU-R BT.709 weights: 0.2126, 0.7152 and 0.0722 times 32768, rounded\n"
		"          so that they sum to 32768\n"
		"  avg     the mean of R, G and B, to the nearest integer (a sum of three never\n"
		"          ties)\n"
		"\n"
		"Formula:\n"
		"  bt601   Y = (9798 R + 19235 G + 3735 B + 16384) >> 15\n"
		"  bt709   Y = (6967 R + 23435 G + 2366 B + 16384) >> 15\n"
		"  avg     Y = (R + G + B + 1) / 3\n"
		"\n"
		"Example:\n"
		"  climg in.png grey:bt709 -o grey.png\n",
	.params_size = sizeof(struct grey_params),
	.parse = grey_parse,
	.plan = grey_plan,
	.run_cpu = grey_run_cpu,
	.program = "grey",
	.run_cl = grey_run_cl,
};
