// SPDX-License-Identifier: MIT
#include "lut.h"

#include <stdio.h>
#include <string.h>

#include "../ocl.h"
#include "../par.h"

void lut_fill_colour(uint8_t *lut, int ch, const uint8_t *colour)
{
	for (int c = 0; c < ch; c++)
		for (int v = 0; v < 256; v++)
			lut[c * 256 + v] = (ch == 2 || ch == 4) && c == ch - 1 ? (uint8_t)v : colour[v];
}

// Bytes a task of lut_run_cpu (a multiple of 12, so that each task starts on channel 0), and
// of a work-item of the kernels for CPU devices (a multiple of 48, about 64 KiB). On a GPU a
// work-item maps LUT_GPU_VECS 16-byte vectors (keep in step with kernels/lut.clh), in
// work-groups of LUT_GPU_LOCAL items.
#define LUT_TASK_BYTES ((size_t)12 << 16)
#define LUT_CPU_CHUNK ((size_t)48 * 1366)
#define LUT_GPU_VECS 4
#define LUT_GPU_LOCAL 256

struct lut_job {
	const uint8_t *lut, *in;
	uint8_t *out;
	size_t n;
	int ch;
};

static void lut_task(void *ctx, int task, int worker)
{
	const struct lut_job *j = ctx;
	size_t b = (size_t)task * LUT_TASK_BYTES;
	size_t b1 = b + LUT_TASK_BYTES < j->n ? b + LUT_TASK_BYTES : j->n;
	(void)worker;
	if (j->ch == 1) {
		for (; b < b1; b++)
			j->out[b] = j->lut[j->in[b]];
		return;
	}
	for (int c = 0; b < b1; b++) {
		j->out[b] = j->lut[c * 256 + j->in[b]];
		if (++c == j->ch)
			c = 0;
	}
}

void lut_run_cpu(const uint8_t *lut, const struct img *in, struct img *out)
{
	struct lut_job j = { lut, in->data, out->data, (size_t)in->w * in->h * in->ch, in->ch };
	par_run(par_threads(), (int)up_div(j.n, LUT_TASK_BYTES), lut_task, &j);
}

void lut_cost(const void *params, const struct geom *in, const struct stage_plan *plan,
	      struct stage_cost *cost)
{
	(void)params;
	*cost = stage_cost_pass("lut", in, plan);
}

int lut_run_cl(const struct stage_cl *c, const char *program, struct ocl_buf *lut)
{
	size_t n = geom_bytes(&c->gin), lw;
	char kernel[64];
	snprintf(kernel, sizeof kernel, "lut_c%d", c->gin.ch);
	if (ocl_cpu_kernels(c->ocl))
		return ocl_run(c->ocl, program, c->gin.ch, kernel, up_div(n, LUT_CPU_CHUNK), 1, 1, 1,
			       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_LONG(n),
						   OCL_BUF(lut), OCL_UINT(LUT_CPU_CHUNK), OCL_END });
	if (!(lw = ocl_local_width(c->ocl, program, c->gin.ch, kernel, LUT_GPU_LOCAL)))
		return -1;
	return ocl_run(c->ocl, program, c->gin.ch, kernel,
		       up_div(n / 16 + 1, lw * LUT_GPU_VECS) * lw, 1, lw, 1,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_LONG(n),
					   OCL_BUF(lut), OCL_END });
}

int lut_run_cl_host(const struct stage_cl *c, const char *program, const uint8_t *lut)
{
	struct ocl_buf *b = ocl_buf_const(c->ocl, lut, (size_t)c->gin.ch * 256);
	int r;
	if (!b)
		return -1;
	r = lut_run_cl(c, program, b);
	ocl_buf_free(b); // released once the kernel is done with it
	return r;
}
