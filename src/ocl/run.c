// SPDX-License-Identifier: MIT
// Running kernels: each kernel of a built program created on first use, its arguments set and
// its range enqueued on the device's one in-order queue; waiting for the queue; and the
// device timing of what was queued (profiling, for --time).
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "ocl_impl.h"

// ---- profiling -----------------------------------------------------------------------------

cl_event *ocl_event_slot(struct ocl *o)
{
	if (!o->profiling)
		return NULL;
	if (o->nevents == o->events_cap) {
		size_t cap = o->events_cap ? 2 * o->events_cap : 64;
		cl_event *ev = realloc(o->events, cap * sizeof *ev);
		if (!ev)
			return NULL; // this command goes untimed rather than failing
		o->events = ev;
		o->events_cap = cap;
	}
	return &o->events[o->nevents];
}

void ocl_event_keep(struct ocl *o, cl_event *slot)
{
	if (slot)
		o->nevents++;
}

void ocl_events_release(struct ocl *o)
{
	for (size_t i = 0; i < o->nevents; i++)
		RELEASE(clReleaseEvent, o->events[i]);
	o->nevents = 0;
}

int ocl_profile(struct ocl *o)
{
	cl_int e = CL_SUCCESS;
	cl_command_queue q;

	q = CREATE(&e, clCreateCommandQueue(o->ctx, o->device,
					    OCL_QUEUE_PROPS | CL_QUEUE_PROFILING_ENABLE, &e));
	if (!q)
		return ocl_fail(e, "clCreateCommandQueue(%s, profiling)", o->name);
	RELEASE(clReleaseCommandQueue, o->queue);
	o->queue = q;
	o->profiling = true;
	return 0;
}

int ocl_timer_take(struct ocl *o, double *ms)
{
	cl_int e = CL_SUCCESS;
	double total = 0;

	*ms = 0;
	if (!o->nevents)
		return 0;
	e = CALL(clWaitForEvents((cl_uint)o->nevents, o->events));
	for (size_t i = 0; i < o->nevents && e == CL_SUCCESS; i++) {
		cl_ulong start = 0, end = 0;
		e = CALL(clGetEventProfilingInfo(o->events[i], CL_PROFILING_COMMAND_START,
						 sizeof start, &start, NULL));
		if (e == CL_SUCCESS)
			e = CALL(clGetEventProfilingInfo(o->events[i], CL_PROFILING_COMMAND_END,
							 sizeof end, &end, NULL));
		total += (double)(end - start) * 1e-6;
	}
	ocl_events_release(o);
	if (e != CL_SUCCESS)
		return ocl_fail(e, "clGetEventProfilingInfo");
	*ms = total;
	return 0;
}

// ---- kernels -------------------------------------------------------------------------------

// The cached kernel `name` of program `program` for ch channels, created on first use. NULL
// with err set.
static struct ocl_kernel *kernel_get(struct ocl *o, const char *program, int ch, const char *name)
{
	struct ocl_kernel *k;
	struct ocl_program *p;
	cl_int e;

	for (k = o->kernels; k; k = k->next)
		if (!strcmp(k->name, name) && !strcmp(k->prog->name, program) && k->prog->ch == ch)
			return k;
	if (!(p = ocl_program_find(o, program, ch))) {
		err_set("opencl: kernels/%s.cl was not built for %d channels before running %s",
		        program, ch, name);
		return NULL;
	}
	if (!(k = calloc(1, sizeof *k + strlen(name) + 1))) {
		err_set("out of memory");
		return NULL;
	}
	strcpy(k->name, name);
	k->prog = p;
	k->kern = CREATE(&e, clCreateKernel(p->prog, name, &e));
	if (!k->kern) {
		ocl_fail(e, "clCreateKernel(%s)", name);
		goto fail;
	}
	e = CALL(clGetKernelWorkGroupInfo(k->kern, o->device, CL_KERNEL_WORK_GROUP_SIZE,
	                                  sizeof k->wg_max, &k->wg_max, NULL));
	if (e != CL_SUCCESS) {
		ocl_fail(e, "clGetKernelWorkGroupInfo(%s)", name);
		goto fail;
	}
	if (k->wg_max == 0 || k->wg_max > o->max_wg)
		k->wg_max = o->max_wg ? o->max_wg : 1;
	k->next = o->kernels;
	o->kernels = k;
	return k;
fail:
	RELEASE(clReleaseKernel, k->kern);
	free(k);
	return NULL;
}

// A local size for a gw x gh range: 16x16, or 256x1 (1x256) for a single row (column),
// halved while a half still covers the range in that dimension, then until it fits the
// device's per-dimension limits and the kernel's work-group size.
static void local_pick(const struct ocl *o, const struct ocl_kernel *k, size_t gw, size_t gh,
                       size_t local[2])
{
	size_t lw = 16, lh = 16;

	if (gh == 1) {
		lw = 256;
		lh = 1;
	} else if (gw == 1) {
		lw = 1;
		lh = 256;
	}
	while (lw > 1 && (lw > o->max_item[0] || lw / 2 >= gw)) // no group wider than needed
		lw /= 2;
	while (lh > 1 && (lh > o->max_item[1] || lh / 2 >= gh))
		lh /= 2;
	while (lw * lh > k->wg_max) {
		if (lw >= lh && lw > 1)
			lw /= 2;
		else if (lh > 1)
			lh /= 2;
		else
			break;
	}
	local[0] = lw;
	local[1] = lh;
}

// Whether kernel k may run in work-groups of lw x lh items on this device.
static bool local_fits(const struct ocl *o, const struct ocl_kernel *k, size_t lw, size_t lh)
{
	return lw <= o->max_item[0] && lh <= o->max_item[1] && lw * lh <= k->wg_max;
}

int ocl_run(struct ocl *o, const char *program, int ch, const char *kernel, size_t gw,
            size_t gh, size_t local_w, size_t local_h, const struct ocl_arg *args)
{
	struct ocl_kernel *k;
	size_t global[2], local[2] = {local_w, local_h};
	cl_ulong local_bytes = 0;
	cl_event *ev;
	cl_int e = CL_SUCCESS;

	if (!(k = kernel_get(o, program, ch, kernel)))
		return -1;
	for (cl_uint i = 0; args[i].kind != OCL_ARG_END; i++) {
		const struct ocl_arg *a = &args[i];
		cl_int iv = a->i;
		cl_uint uv = a->u;
		cl_long lv = a->l;
		cl_mem m;

		switch (a->kind) {
		case OCL_ARG_BUF:
			if (!a->buf)
				return err_set("opencl: %s: argument %u is a NULL buffer", kernel,
				               i);
			m = a->buf->mem;
			e = CALL(clSetKernelArg(k->kern, i, sizeof m, &m));
			break;
		case OCL_ARG_INT: e = CALL(clSetKernelArg(k->kern, i, sizeof iv, &iv)); break;
		case OCL_ARG_UINT: e = CALL(clSetKernelArg(k->kern, i, sizeof uv, &uv)); break;
		case OCL_ARG_LONG: e = CALL(clSetKernelArg(k->kern, i, sizeof lv, &lv)); break;
		case OCL_ARG_LOCAL:
			local_bytes += a->local_bytes;
			e = CALL(clSetKernelArg(k->kern, i, a->local_bytes, NULL));
			break;
		default:
			return err_set("opencl: %s: argument %u has unknown kind %d", kernel, i,
			               (int)a->kind);
		}
		if (e != CL_SUCCESS)
			return ocl_fail(e, "clSetKernelArg(%s, %u)", kernel, i);
	}
	if (local_bytes > o->local_mem_bytes)
		return err_set("opencl: %s needs %llu bytes of local memory, %s has %llu", kernel,
		               (unsigned long long)local_bytes, o->name,
		               (unsigned long long)o->local_mem_bytes);
	if (gw == 0 || gh == 0)
		return 0; // nothing to do (OpenCL 1.2 rejects an empty range)
	if (local_w == 0 && local_h == 0)
		local_pick(o, k, gw, gh, local);
	else if (local_w == 0 || local_h == 0)
		return err_set("opencl: %s: local size %zux%zu: give both or neither", kernel,
		               local_w, local_h);
	else if (!local_fits(o, k, local_w, local_h))
		return err_set("opencl: %s: work-groups of %zux%zu items, but %s allows %zu (%zux%zu "
		               "at most) for this kernel",
		               kernel, local_w, local_h, o->name, k->wg_max, o->max_item[0],
		               o->max_item[1]);
	if (gw > SIZE_MAX - local[0] || gh > SIZE_MAX - local[1])
		return err_set("opencl: %s: range %zux%zu is too large", kernel, gw, gh);
	global[0] = (gw + local[0] - 1) / local[0] * local[0];
	global[1] = (gh + local[1] - 1) / local[1] * local[1];
	ev = ocl_event_slot(o);
	e = CALL(clEnqueueNDRangeKernel(o->queue, k->kern, 2, NULL, global, local, 0, NULL, ev));
	if (e != CL_SUCCESS)
		return ocl_fail(e, "clEnqueueNDRangeKernel(%s)", kernel);
	ocl_event_keep(o, ev);
	return 0;
}

int ocl_kernel_wg_max(struct ocl *o, const char *program, int ch, const char *kernel,
                      size_t *wg_max)
{
	struct ocl_kernel *k = kernel_get(o, program, ch, kernel);

	if (!k)
		return -1;
	*wg_max = k->wg_max;
	return 0;
}

void ocl_local_shrink(const struct ocl_limits *lim, size_t wg_max, size_t x, size_t y, size_t *lx,
                      size_t *ly)
{
	while (x > 1 && x > lim->item_max[0])
		x /= 2;
	while (y > 1 && y > lim->item_max[1])
		y /= 2;
	while (x * y > wg_max && x * y > 1) {
		if (y > 1)
			y /= 2;
		else
			x /= 2;
	}
	*lx = x;
	*ly = y;
}

size_t ocl_local_width(struct ocl *o, const char *program, int ch, const char *kernel,
		       size_t want)
{
	struct ocl_limits lim = ocl_get_limits(o);
	size_t wg, lw, lh;
	if (ocl_kernel_wg_max(o, program, ch, kernel, &wg) < 0)
		return 0;
	ocl_local_shrink(&lim, wg, want, 1, &lw, &lh);
	return lw;
}

int ocl_kernel_fits(struct ocl *o, const char *program, int ch, const char *kernel, size_t lw,
                    size_t lh)
{
	struct ocl_kernel *k = kernel_get(o, program, ch, kernel);

	return k ? local_fits(o, k, lw, lh) : -1;
}

int ocl_finish(struct ocl *o)
{
	cl_int e = CALL(clFinish(o->queue));

	return e == CL_SUCCESS ? 0 : ocl_fail(e, "clFinish");
}
