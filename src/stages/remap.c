// SPDX-License-Identifier: MIT
#include "remap.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../ocl.h"
#include "../par.h"

// Tile geometry of kernels/remap.clh; keep in step with REMAP_T, REMAP_TX, REMAP_TY,
// REMAP_C4_TALL, REMAP_RY_FAST, REMAP_CPU_TX and REMAP_CPU_TY there. (REMAP_TY: 128 rows, or
// REMAP_TY_C4 for 4 channels on a device without room for 128. REMAP_RY: the rows of items
// of the byte-wise kernel's work-group, 32 x 8 or smaller.)
enum { REMAP_T = 32, REMAP_RY = 8, REMAP_TX = 64, REMAP_TY = 128, REMAP_TY_C4 = 96,
       REMAP_RY_FAST = 8, REMAP_CPU_TX = 256, REMAP_CPU_TY = 64 };

void remap_cost(const void *params, const struct geom *in, const struct stage_plan *plan,
		struct stage_cost *cost)
{
	(void)params;
	*cost = stage_cost_pass("remap", in, plan);
}

int remap_tile_rows(int ch, uint64_t local_mem_bytes)
{
	// REMAP_C4_TALL: a 4-channel tile of REMAP_TY rows (the unaligned kernel's, the larger:
	// REMAP_TX rows of REMAP_TY + 5 words in local memory) and 1 KiB to spare
	const uint64_t tall = (uint64_t)REMAP_TX * (REMAP_TY + 5) * 4 + 1024;
	return ch == 4 && local_mem_bytes < tall ? REMAP_TY_C4 : REMAP_TY;
}

struct remap_job {
	const struct img *in, *out;
	enum remap_mode mode;
};

// Copies n pixels of CH bytes to d, one after another, from s, s + step, s + 2 step, ...
// (memcpy of a constant size: one or two moves a pixel).
#define REMAP_COPY(CH)                                                                   \
	for (int i = 0; i < n; i++, s += step, d += (CH))                                \
		memcpy(d, s, (CH))

// Three channels: where a pixel's fourth byte can be read (a byte of the input before
// end), four bytes a pixel, the fourth overwritten by the next pixel's first, so one move
// a pixel; the run's last pixel three bytes, so nothing past the run is written.
static void remap_copy(uint8_t *d, const uint8_t *s, ptrdiff_t step, int n, int ch,
		       const uint8_t *end)
{
	const uint8_t *last;
	switch (ch) {
	case 1: REMAP_COPY(1); break;
	case 2: REMAP_COPY(2); break;
	case 3:
		last = s + (ptrdiff_t)(n - 1) * step;
		if (n > 0 && (s > last ? s : last) + 4 <= end) {
			for (int i = 1; i < n; i++, s += step, d += 3)
				memcpy(d, s, 4);
			memcpy(d, s, 3);
			break;
		}
		REMAP_COPY(3);
		break;
	default: REMAP_COPY(4); break;
	}
}

// One task of par_run: output rows [32 task, 32 task + 32), in blocks of 32 columns so that
// the input a block reads stays in cache. Each row of a block is one remap_copy from the
// input pixel of its first output pixel, stepping as the mapping moves with x.
static void remap_rows(void *ctx, int task, int worker)
{
	const struct remap_job *j = ctx;
	int W = j->in->w, H = j->in->h, ch = j->in->ch;
	int y0 = task * 32, y1 = y0 + 32 < j->out->h ? y0 + 32 : j->out->h;
	ptrdiff_t row = (ptrdiff_t)W * ch; // input bytes a row
	const uint8_t *end = j->in->data + (size_t)H * (size_t)row;
	(void)worker;
	for (int x0 = 0; x0 < j->out->w; x0 += 32) {
		int x1 = x0 + 32 < j->out->w ? x0 + 32 : j->out->w;
		for (int y = y0; y < y1; y++) {
			// the input pixel (sx, sy) of output pixel (x0, y), and the step in bytes
			// from the input pixel of (x, y) to that of (x + 1, y)
			int sx, sy;
			ptrdiff_t step;
			switch (j->mode) {
			case REMAP_TRANSPOSE: sx = y, sy = x0, step = row; break;
			case REMAP_90: sx = y, sy = H - 1 - x0, step = -row; break;
			case REMAP_180: sx = W - 1 - x0, sy = H - 1 - y, step = -ch; break;
			case REMAP_270: sx = W - 1 - y, sy = x0, step = row; break;
			case REMAP_TRANSVERSE: sx = W - 1 - y, sy = H - 1 - x0, step = -row; break;
			case REMAP_FLIP: sx = x0, sy = H - 1 - y, step = ch; break;
			default: sx = W - 1 - x0, sy = y, step = -ch; break; // REMAP_FLOP
			}
			remap_copy(j->out->data + ((size_t)y * j->out->w + x0) * ch,
				   j->in->data + ((size_t)sy * W + sx) * ch, step, x1 - x0, ch, end);
		}
	}
}

void remap_run_cpu(const struct img *in, struct img *out, enum remap_mode mode)
{
	if (mode == REMAP_FLIP) { // whole rows
		size_t row = (size_t)in->w * in->ch;
		for (int y = 0; y < out->h; y++)
			memcpy(out->data + (size_t)y * row, in->data + (size_t)(in->h - 1 - y) * row,
			       row);
		return;
	}
	struct remap_job j = { in, out, mode };
	par_run(par_threads(), (out->h + 31) / 32, remap_rows, &j);
}

int remap_run_cl(const struct stage_cl *c, const char *program, const char *name)
{
	size_t wo = (size_t)c->gout.w, ho = (size_t)c->gout.h;
	int ch = c->gin.ch;
	// the arguments of name_cpu_cN, name_cN and name_unaligned_cN (the byte-wise kernel also
	// takes ch)
	struct ocl_arg args[] = { OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(c->gin.w),
				  OCL_INT(c->gin.h), OCL_END };
	char kernel[64];
	if (ocl_cpu_kernels(c->ocl)) {
		// one tile a work-group (kernels/remap.clh)
		snprintf(kernel, sizeof kernel, "%s_cpu_c%d", name, ch);
		return ocl_run(c->ocl, program, ch, kernel, up_div(wo, REMAP_CPU_TX),
			       up_div(ho, REMAP_CPU_TY), 1, 1, args);
	}
	// the word-wise kernel, where the device allows its work-group of tx/4 x ry items:
	// name_cN where both sides are multiples of 4, else name_unaligned_cN
	struct ocl_limits lim = ocl_get_limits(c->ocl);
	size_t tx = REMAP_TX, ry = REMAP_RY_FAST;
	size_t ty = (size_t)remap_tile_rows(ch, lim.local_mem_bytes);
	bool aligned = c->gin.w % 4 == 0 && c->gin.h % 4 == 0;
	snprintf(kernel, sizeof kernel, "%s_%sc%d", name, aligned ? "" : "unaligned_", ch);
	int fits = ocl_kernel_fits(c->ocl, program, ch, kernel, tx / 4, ry);
	if (fits < 0)
		return -1;
	if (fits)
		return ocl_run(c->ocl, program, ch, kernel, up_div(wo, tx) * (tx / 4),
			       up_div(ho, ty) * ry, tx / 4, ry, args);
	// else the byte-wise kernel, in work-groups of REMAP_T x REMAP_RY items or as many as the
	// device allows
	size_t wg, lw, lh;
	if (ocl_kernel_wg_max(c->ocl, program, ch, name, &wg) < 0)
		return -1;
	ocl_local_shrink(&lim, wg, REMAP_T, REMAP_RY, &lw, &lh);
	return ocl_run(c->ocl, program, ch, name, up_div(wo, REMAP_T) * lw,
		       up_div(ho, REMAP_T) * lh, lw, lh,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(c->gin.w),
					   OCL_INT(c->gin.h), OCL_INT(ch), OCL_END });
}

// On a CPU device a work-item moves a large piece of a row (REMAP_ROWS: bytes; REMAP_FLOP:
// pixels, a multiple of 16), each work-item a work-group; on a GPU an aligned piece of the
// output (REMAP_ROWS: 16 bytes, REMAP_FLOP: 4; REMAP_FLOP_BLOCKS, where W is a multiple of
// 16: 16 pixels), in work-groups of REMAP_ROWS_GPU_LOCAL items along the row
// (kernels/remap.clh).
#define REMAP_ROWS_CPU_CHUNK 16384
#define REMAP_ROWS_GPU_LOCAL 256
#define REMAP_FLOP_GPU_LOCAL 256 // REMAP_FLOP_LOCAL, kernels/remap.clh

// The global width of the GPU's row kernels for rows of nb bytes in pieces of u: a piece of
// the output an item, one more for a row that does not start on a piece.
static size_t rows_gpu_items(size_t nb, size_t u)
{
	return nb / u + 2;
}

int remap_rows_run_cl(const struct stage_cl *c, const char *program, const char *kernel,
		      int64_t first, int64_t step)
{
	size_t nb = (size_t)c->gout.w * (size_t)c->gout.ch;
	if (ocl_cpu_kernels(c->ocl))
		return ocl_run(c->ocl, program, c->gin.ch, kernel, up_div(nb, REMAP_ROWS_CPU_CHUNK),
			       (size_t)c->gout.h, 1, 1,
			       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(nb),
						   OCL_INT(c->gout.h), OCL_LONG(first),
						   OCL_LONG(step), OCL_INT(REMAP_ROWS_CPU_CHUNK),
						   OCL_END });
	size_t lw = ocl_local_width(c->ocl, program, c->gin.ch, kernel, REMAP_ROWS_GPU_LOCAL);
	if (!lw)
		return -1;
	return ocl_run(c->ocl, program, c->gin.ch, kernel, rows_gpu_items(nb, 16), (size_t)c->gout.h,
		       lw, 1,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(nb),
					   OCL_INT(c->gout.h), OCL_LONG(first), OCL_LONG(step),
					   OCL_LONG((int64_t)geom_bytes(&c->gin)), OCL_END });
}

int remap_flop_run_cl(const struct stage_cl *c, const char *program)
{
	char kernel[64];
	snprintf(kernel, sizeof kernel, "%s_c%d", program, c->gin.ch);
	if (ocl_cpu_kernels(c->ocl)) {
		size_t chunk = REMAP_ROWS_CPU_CHUNK / (size_t)c->gin.ch / 16 * 16;
		return ocl_run(c->ocl, program, c->gin.ch, kernel, up_div((size_t)c->gin.w, chunk),
			       (size_t)c->gin.h, 1, 1,
			       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out),
						   OCL_INT(c->gin.w), OCL_INT(c->gin.h),
						   OCL_INT(chunk), OCL_END });
	}
	if (c->gin.w % 16 == 0) { // whole aligned runs of 16 pixels (kernels/remap.clh)
		strcat(kernel, "_blocks");
		size_t lw = ocl_local_width(c->ocl, program, c->gin.ch, kernel, REMAP_FLOP_GPU_LOCAL);
		if (!lw)
			return -1;
		return ocl_run(c->ocl, program, c->gin.ch, kernel,
			       (size_t)c->gin.w / 16, (size_t)c->gin.h, lw, 1,
			       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out),
						   OCL_INT(c->gin.w), OCL_INT(c->gin.h), OCL_END });
	}
	size_t lw = ocl_local_width(c->ocl, program, c->gin.ch, kernel, REMAP_ROWS_GPU_LOCAL);
	if (!lw)
		return -1;
	return ocl_run(c->ocl, program, c->gin.ch, kernel,
		       rows_gpu_items((size_t)c->gin.w * (size_t)c->gin.ch, 4), (size_t)c->gin.h, lw, 1,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(c->gin.w),
					   OCL_INT(c->gin.h), OCL_END });
}
