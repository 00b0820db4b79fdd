// SPDX-License-Identifier: MIT
// dropalpha: remove the alpha channel and keep the colour as it is, as ImageMagick
// -alpha off and cv2.cvtColor(img, COLOR_BGRA2BGR).
//
//   dropalpha        out(x, y) channel c = in(x, y) channel c, for every colour channel c
//
// No compositing: a transparent pixel shows whatever colour it holds (flatten composes onto
// a background instead). Output size: the input's. RGBA becomes RGB, grey+alpha becomes
// grey; grey and RGB input pass through unchanged. kernels/dropalpha.cl computes the same.
#include <string.h>

#include "../err.h"
#include "../ocl.h"
#include "../par.h"
#include "stage.h"

static int dropalpha_parse(void *params, int argc, char **argv)
{
	(void)params;
	(void)argv;
	if (argc)
		return err_set("dropalpha: takes no arguments");
	return 0;
}

static int dropalpha_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = *in;
	plan->passthrough = in->ch == 1 || in->ch == 3;
	if (!plan->passthrough)
		plan->out.ch = in->ch - 1; // 2 -> 1, 4 -> 3
	return 0;
}

// Pixels a task of the CPU path copies.
#define DROPALPHA_TASK_PX ((size_t)1 << 16)

struct dropalpha_job {
	const uint8_t *in;
	uint8_t *out;
	size_t npx;
	int ch; // the input's: 2 or 4
};

static void dropalpha_task(void *ctx, int task, int worker)
{
	const struct dropalpha_job *j = ctx;
	size_t p = (size_t)task * DROPALPHA_TASK_PX;
	size_t p1 = p + DROPALPHA_TASK_PX < j->npx ? p + DROPALPHA_TASK_PX : j->npx;
	const size_t nc = (size_t)j->ch - 1; // colour channels
	(void)worker;
	for (; p < p1; p++)
		memcpy(j->out + p * nc, j->in + p * (size_t)j->ch, nc);
}

static void dropalpha_run_cpu(const void *params, const struct stage_plan *plan,
			      const struct img *in, struct img *out)
{
	struct dropalpha_job j = { in->data, NULL, (size_t)in->w * (size_t)in->h, in->ch };
	(void)params;
	(void)plan;
	if (!out) // passthrough: no alpha
		return;
	j.out = out->data;
	par_run(par_threads(), (int)up_div(j.npx, DROPALPHA_TASK_PX), dropalpha_task, &j);
}

// Pixels a work-item copies: on a GPU one, so that neighbouring items touch neighbouring
// pixels; on a CPU device (one item a work-group) a large piece. Keep in step with
// kernels/dropalpha.cl.
#define DROPALPHA_GPU_CHUNK 1
#define DROPALPHA_CPU_CHUNK 16384

static int dropalpha_run_cl(const void *params, const struct stage_cl *c)
{
	size_t npx = (size_t)c->gin.w * (size_t)c->gin.h;
	bool cpu = ocl_cpu_kernels(c->ocl);
	size_t chunk = cpu ? DROPALPHA_CPU_CHUNK : DROPALPHA_GPU_CHUNK;
	(void)params;
	if (!c->out) // passthrough: no alpha
		return 0;
	return ocl_run(c->ocl, "dropalpha", c->gin.ch,
		       c->gin.ch == 2 ? "dropalpha_c2" : "dropalpha_c4", up_div(npx, chunk), 1,
		       cpu ? 1 : 0, cpu ? 1 : 0,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_LONG(npx),
					   OCL_UINT(chunk), OCL_END });
}

// A pass over the pixels, as grey's, spread over the cores.
static void dropalpha_cost(const void *params, const struct geom *in,
			   const struct stage_plan *plan, struct stage_cost *cost)
{
	(void)params;
	*cost = stage_cost_pass("grey", in, plan);
}

const struct stage_ops stage_dropalpha = {
	.name = "dropalpha",
	.usage = "dropalpha",
	.summary = "remove alpha, colour unchanged (RGBA to RGB, GA to grey)",
	.help =
		"Removes the alpha channel and keeps the colour as it is: RGBA becomes RGB,\n"
		"grey+alpha becomes grey; grey and RGB images pass through unchanged. There is\n"
		"no compositing: a transparent pixel shows the colour it holds (flatten composes\n"
		"onto a background instead). It takes no options.\n"
		"\n"
		"Formula:\n"
		"  out(x, y, c) = in(x, y, c) for each colour channel c\n"
		"\n"
		"Example:\n"
		"  climg in.png dropalpha grey -o out.pgm\n",
	.params_size = 0,
	.parse = dropalpha_parse,
	.plan = dropalpha_plan,
	.run_cpu = dropalpha_run_cpu,
	.program = "dropalpha",
	.run_cl = dropalpha_run_cl,
	.cost = dropalpha_cost,
};
