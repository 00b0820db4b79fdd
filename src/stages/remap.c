// SPDX-License-Identifier: MIT
#include "remap.h"

#include <stdio.h>

#include "../ocl.h"
#include "../par.h"

// Tile geometry of kernels/remap.clh; keep in step with REMAP_T, REMAP_RY, REMAP_TP,
// REMAP_RY_FAST, REMAP_CPU_TX and REMAP_CPU_TY there.
enum { REMAP_T = 32, REMAP_RY = 8, REMAP_CPU_TX = 256, REMAP_CPU_TY = 64 };

struct remap_job {
	const struct img *in, *out;
	enum remap_mode mode;
};

// One task of par_run: output rows [32 task, 32 task + 32).
static void remap_rows(void *ctx, int task, int worker)
{
	const struct remap_job *j = ctx;
	int W = j->in->w, H = j->in->h, ch = j->in->ch;
	int y0 = task * 32, y1 = y0 + 32 < j->out->h ? y0 + 32 : j->out->h;
	(void)worker;
	for (int x0 = 0; x0 < j->out->w; x0 += 32) {
		int x1 = x0 + 32 < j->out->w ? x0 + 32 : j->out->w;
		for (int y = y0; y < y1; y++) {
			uint8_t *d = j->out->data + ((size_t)y * j->out->w + x0) * ch;
			for (int x = x0; x < x1; x++, d += ch) {
				int sx, sy;
				switch (j->mode) {
				case REMAP_TRANSPOSE: sx = y, sy = x; break;
				case REMAP_90: sx = y, sy = H - 1 - x; break;
				case REMAP_180: sx = W - 1 - x, sy = H - 1 - y; break;
				default: sx = W - 1 - y, sy = x; break;
				}
				const uint8_t *s = j->in->data + ((size_t)sy * W + sx) * ch;
				for (int c = 0; c < ch; c++)
					d[c] = s[c];
			}
		}
	}
}

void remap_run_cpu(const struct img *in, struct img *out, enum remap_mode mode)
{
	struct remap_job j = { in, out, mode };
	par_run(par_threads(), (out->h + 31) / 32, remap_rows, &j);
}

static size_t up_div(size_t a, size_t b)
{
	return (a + b - 1) / b;
}

int remap_run_cl(const struct stage_cl *c, const char *program, const char *name)
{
	size_t wo = (size_t)c->gout.w, ho = (size_t)c->gout.h;
	int ch = c->gin.ch;
	char fast[64];
	if (ocl_cpu_kernels(c->ocl)) {
		// one tile a work-group (kernels/remap.clh)
		snprintf(fast, sizeof fast, "%s_cpu_c%d", name, ch);
		return ocl_run(c->ocl, program, fast, up_div(wo, REMAP_CPU_TX),
			       up_div(ho, REMAP_CPU_TY), 1, 1,
			       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out),
						   OCL_INT(c->gin.w), OCL_INT(c->gin.h), OCL_END });
	}
	if (c->gin.w % 4 == 0 && c->gin.h % 4 == 0) {
		size_t tp = ch == 1 ? 128 : 64, ry = ch == 1 ? 8 : 16;
		snprintf(fast, sizeof fast, "%s_c%d", name, ch);
		return ocl_run(c->ocl, program, fast, up_div(wo, tp) * (tp / 4), up_div(ho, tp) * ry,
			       tp / 4, ry,
			       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out),
						   OCL_INT(c->gin.w), OCL_INT(c->gin.h), OCL_END });
	}
	return ocl_run(c->ocl, program, name, up_div(wo, REMAP_T) * REMAP_T,
		       up_div(ho, REMAP_T) * REMAP_RY, REMAP_T, REMAP_RY,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(c->gin.w),
					   OCL_INT(c->gin.h), OCL_INT(ch), OCL_END });
}
