// SPDX-License-Identifier: MIT
// climg compare on an OpenCL device: the integers of cmp_images (counts, largest differences
// and where, sums) computed by kernels/compare.cl, the same bit for bit, and the choice
// between the device and the CPU path (cmp_run) for `climg compare`, its directory mode
// and --expect.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "err.h"
#include "ocl.h"
#include "pipeline.h"
#include "run_dev.h"

// kernels/compare.cl's record: 2 counts, then 6 words a channel.
#define CMP_REC(ch) (2 + 6 * (size_t)(ch))
#define CMP_NONE 0xffffffffu

// Work sizes, as src/stages/stats.c's: the GPU family in work-groups of a power of two
// items, at most CMP_WG_MAX (CMP_LOCAL_BYTES of local memory an item), CMP_ITEMS_PER_CU
// items per compute unit in all but at least CMP_MIN_GROUP_BYTES of each image a group; the
// CPU family in slices of at least CMP_CPU_MIN_SLICE pixels, about CMP_CPU_SLICES_PER_CU
// a compute unit.
#define CMP_WG_MAX 256
#define CMP_LOCAL_BYTES 24 // two uints and two ulongs
#define CMP_ITEMS_PER_CU 2048
#define CMP_MIN_GROUP_BYTES ((size_t)64 << 10)
#define CMP_CPU_MIN_SLICE ((size_t)16384)
#define CMP_CPU_SLICES_PER_CU 8

// A device buffer over im: the image's own memory on a zero-copy device where it is aligned
// as the device wants, else a copy uploaded. NULL with err set.
static struct ocl_buf *image_buf(struct ocl *o, const struct img *im)
{
	struct ocl_buf *b;
	if (pipeline_zero_copy(o) && ocl_wrap_aligned(o, im->data))
		return ocl_buf_wrap(o, im->data, img_bytes(im), true);
	b = ocl_buf_new(o, img_bytes(im));
	if (b && ocl_upload(o, b, im->data, img_bytes(im)) < 0) {
		ocl_buf_free(b);
		return NULL;
	}
	return b;
}

// Enqueues the kernel over a and b into records in part (made here, *n of them).
static int launch(struct ocl *o, const struct img *a, struct ocl_buf *ba, struct ocl_buf *bb,
		  const struct cmp_opts *opts, struct ocl_buf *rects, struct ocl_buf **part,
		  size_t *n)
{
	static const char *const gpu[] = { "compare_1", "compare_2", "compare_3", "compare_4" };
	static const char *const cpu[] = { "compare_cpu_1", "compare_cpu_2", "compare_cpu_3",
					   "compare_cpu_4" };
	struct ocl_limits lim = ocl_get_limits(o);
	size_t npx = (size_t)a->w * (size_t)a->h, wg = 1, max, slice;
	int ch = a->ch;

	if (ocl_cpu_kernels(o)) {
		slice = npx / ((size_t)lim.compute_units * CMP_CPU_SLICES_PER_CU);
		if (slice < CMP_CPU_MIN_SLICE)
			slice = CMP_CPU_MIN_SLICE;
		*n = (npx + slice - 1) / slice;
		*part = ocl_buf_new(o, *n * CMP_REC(ch) * sizeof(uint32_t));
		if (!*part)
			return -1;
		return ocl_run(o, "compare", ch, cpu[ch - 1], *n, 1, 1, 1,
			       (struct ocl_arg[]){ OCL_BUF(ba), OCL_BUF(bb), OCL_INT(a->w),
						   OCL_INT(a->h), OCL_UINT(opts->tolerance),
						   OCL_BUF(rects), OCL_UINT(opts->nignore),
						   OCL_BUF(*part), OCL_UINT(slice), OCL_END });
	}
	if (ocl_kernel_wg_max(o, "compare", ch, gpu[ch - 1], &max) < 0)
		return -1;
	if (max > lim.item_max[0])
		max = lim.item_max[0];
	// the largest power of two the kernel, the device and its local memory allow
	while (wg * 2 <= max && wg * 2 <= CMP_WG_MAX &&
	       wg * 2 * CMP_LOCAL_BYTES <= lim.local_mem_bytes)
		wg *= 2;
	*n = (img_bytes(a) + CMP_MIN_GROUP_BYTES - 1) / CMP_MIN_GROUP_BYTES;
	max = (size_t)lim.compute_units * ((CMP_ITEMS_PER_CU + wg - 1) / wg);
	if (*n > max)
		*n = max;
	*part = ocl_buf_new(o, *n * CMP_REC(ch) * sizeof(uint32_t));
	if (!*part)
		return -1;
	return ocl_run(o, "compare", ch, gpu[ch - 1], *n * wg, 1, wg, 1,
		       (struct ocl_arg[]){ OCL_BUF(ba), OCL_BUF(bb), OCL_INT(a->w), OCL_INT(a->h),
					   OCL_UINT(opts->tolerance), OCL_BUF(rects),
					   OCL_UINT(opts->nignore), OCL_BUF(*part),
					   OCL_LOCAL(wg * 2 * sizeof(uint32_t)),
					   OCL_LOCAL(wg * 2 * sizeof(uint64_t)), OCL_END });
}

// Adds n records (laid out as kernels/compare.cl says) into r's integers: counts and sums
// added, the largest difference of each channel with the least index where it is reached.
static void fold(const uint32_t *rec, size_t n, int ch, int w, struct cmp_result *r)
{
	uint32_t best[4] = { 0, 0, 0, 0 }, at[4] = { CMP_NONE, CMP_NONE, CMP_NONE, CMP_NONE };
	for (size_t g = 0; g < n; g++, rec += CMP_REC(ch)) {
		r->compared += rec[0];
		r->differing += rec[1];
		for (int c = 0; c < ch; c++) {
			const uint32_t *q = rec + 2 + 6 * c;
			r->sum_abs[c] += (uint64_t)q[3] << 32 | q[2];
			r->sum_sq[c] += (uint64_t)q[5] << 32 | q[4];
			if (q[0] > best[c] || (q[0] == best[c] && q[1] < at[c])) {
				best[c] = q[0];
				at[c] = q[1];
			}
		}
	}
	for (int c = 0; c < ch; c++) {
		r->max[c] = (int)best[c];
		r->max_x[c] = best[c] ? (int)(at[c] % (uint32_t)w) : -1;
		r->max_y[c] = best[c] ? (int)(at[c] / (uint32_t)w) : -1;
	}
}

int cmp_count_cl(struct ocl *o, const struct img *a, const struct img *b,
		 const struct cmp_opts *opts, struct cmp_result *r)
{
	const struct ocl_program_id prog = { "compare", a->ch };
	struct ocl_buf *ba = NULL, *bb = NULL, *rects = NULL, *part = NULL;
	int32_t box[4 * CMP_MAX_IGNORE] = { 0 };
	uint32_t *rec = NULL;
	size_t n = 0;
	int rc = -1;

	cmp_result_start(r, a, b);
	for (int i = 0; i < opts->nignore; i++) {
		box[4 * i] = opts->ignore[i].x;
		box[4 * i + 1] = opts->ignore[i].y;
		box[4 * i + 2] = opts->ignore[i].w;
		box[4 * i + 3] = opts->ignore[i].h;
	}
	if (ocl_build(o, &prog, 1) < 0 || !(ba = image_buf(o, a)) || !(bb = image_buf(o, b)) ||
	    !(rects = ocl_buf_const(o, box, 4 * sizeof(int32_t) *
						  (size_t)(opts->nignore ? opts->nignore : 1))) ||
	    launch(o, a, ba, bb, opts, rects, &part, &n) < 0)
		goto fail;
	rec = malloc(n * CMP_REC(a->ch) * sizeof *rec);
	if (!rec) {
		err_set("out of memory");
		goto fail;
	}
	if (ocl_download(o, part, rec, n * CMP_REC(a->ch) * sizeof *rec) < 0)
		goto fail;
	fold(rec, n, a->ch, a->w, r);
	rc = 0;
fail:
	free(rec);
	ocl_buf_free(part);
	ocl_buf_free(rects);
	ocl_buf_free(ba); // a wrapper waits for the queue before the caller's memory may go
	ocl_buf_free(bb);
	return rc;
}

// 0 when the integers of x (from the device) and y (the CPU path) agree, else 1 with the
// first difference in err.
static int cmp_verify(const struct cmp_result *x, const struct cmp_result *y)
{
	static const char *const what[] = { "max", "max_x", "max_y", "sum_abs", "sum_sq" };
	unsigned long long u[2];
	if (x->compared != y->compared || x->differing != y->differing) {
		bool c = x->compared != y->compared;
		u[0] = c ? x->compared : x->differing;
		u[1] = c ? y->compared : y->differing;
		err_set("verify: compare: OpenCL and CPU differ in %s: opencl %llu, cpu %llu",
			c ? "compared" : "differing", u[0], u[1]);
		return 1;
	}
	for (int c = 0; c < x->a.ch; c++) {
		const long long v[5][2] = { { x->max[c], y->max[c] },
					    { x->max_x[c], y->max_x[c] },
					    { x->max_y[c], y->max_y[c] },
					    { (long long)x->sum_abs[c], (long long)y->sum_abs[c] },
					    { (long long)x->sum_sq[c], (long long)y->sum_sq[c] } };
		for (int k = 0; k < 5; k++) {
			if (v[k][0] == v[k][1])
				continue;
			err_set("verify: compare: OpenCL and CPU differ in %s of channel %d: "
				"opencl %lld, cpu %lld",
				what[k], c, v[k][0], v[k][1]);
			return 1;
		}
	}
	return 0;
}

int cmp_run(struct run_dev *d, bool verify, const struct img *a, const struct img *b,
	    const struct cmp_opts *opts, struct cmp_result *r)
{
	struct cmp_result cpu;
	bool failed = false;
	struct ocl *o = d ? dev_get(d, &failed) : NULL;
	int rc;

	if (failed)
		return -1;
	if (!o || a->w != b->w || a->h != b->h || a->ch != b->ch) {
		cmp_images(a, b, opts, r);
		return 0;
	}
	dev_lock(d);
	rc = cmp_count_cl(o, a, b, opts, r);
	if (rc < 0 && !dev_named(d) && !verify)
		dev_drop(d, err_msg()); // one warning; from now on the CPU path
	dev_unlock(d);
	if (rc < 0 && (dev_named(d) || verify))
		return -1;
	if (rc < 0 || verify) {
		cmp_images(a, b, opts, &cpu);
		if (rc == 0 && cmp_verify(r, &cpu))
			return 1;
		*r = cpu;
		return 0;
	}
	cmp_finish(r, opts);
	return 0;
}
