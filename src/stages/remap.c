// SPDX-License-Identifier: MIT
#include "remap.h"

#include <stdio.h>

#include "../ocl.h"

// Tile geometry of kernels/remap.clh; keep in step with REMAP_T, REMAP_RY, REMAP_TP and
// REMAP_RY_FAST there.
enum { REMAP_T = 32, REMAP_RY = 8 };

static size_t up_div(size_t a, size_t b)
{
	return (a + b - 1) / b;
}

int remap_run_cl(const struct stage_cl *c, const char *program, const char *name)
{
	size_t wo = (size_t)c->gout.w, ho = (size_t)c->gout.h;
	int ch = c->gin.ch;
	if (c->gin.w % 4 == 0 && c->gin.h % 4 == 0) {
		size_t tp = ch == 1 ? 128 : 64, ry = ch == 1 ? 8 : 16;
		char fast[64];
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
