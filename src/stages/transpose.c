// SPDX-License-Identifier: MIT
// transpose: mirror about the main diagonal, as ImageMagick -transpose and OpenCV transpose.
//
//   transpose        out(x, y) = in(y, x)
//
// Output size: H x W for a W x H input. kernels/transpose.cl computes the same.
#include "../err.h"
#include "../par.h"
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
	plan->out = (struct geom){ in->h, in->w, in->ch };
	plan->passthrough = false;
	return 0;
}

// One task: output rows [32 task, 32 task + 32), walked in 32x32 blocks so that the input
// reads stay in cache. Tasks are independent (par_run).
struct transpose_job {
	const struct img *in, *out;
};

static void transpose_rows(void *ctx, int task, int worker)
{
	const struct transpose_job *j = ctx;
	int ch = j->in->ch, y0 = task * 32, y1 = y0 + 32 < j->out->h ? y0 + 32 : j->out->h;
	(void)worker;
	for (int x0 = 0; x0 < j->out->w; x0 += 32) {
		int x1 = x0 + 32 < j->out->w ? x0 + 32 : j->out->w;
		for (int y = y0; y < y1; y++) {
			uint8_t *d = j->out->data + ((size_t)y * j->out->w + x0) * ch;
			for (int x = x0; x < x1; x++, d += ch) {
				const uint8_t *s = j->in->data + ((size_t)x * j->in->w + y) * ch;
				for (int c = 0; c < ch; c++)
					d[c] = s[c];
			}
		}
	}
}

static void transpose_run_cpu(const void *params, const struct img *in, struct img *out)
{
	struct transpose_job j = { in, out };
	(void)params;
	par_run(par_threads(), (out->h + 31) / 32, transpose_rows, &j);
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
	.params_size = 0,
	.parse = transpose_parse,
	.plan = transpose_plan,
	.run_cpu = transpose_run_cpu,
	.program = "transpose",
	.run_cl = transpose_run_cl,
};
