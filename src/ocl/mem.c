// SPDX-License-Identifier: MIT
// Memory: device buffers and the transfers between them and the host, pinned host memory, and
// zero-copy buffers over host memory the caller owns (the rules are in src/ocl.h).
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "../err.h"
#include "../hostmem.h"
#include "ocl_impl.h"

// ---- pinned host memory --------------------------------------------------------------------

void *ocl_host_alloc(struct ocl *o, size_t bytes)
{
	struct ocl_pinned *p = calloc(1, sizeof *p);
	cl_int e = CL_SUCCESS;

	if (!p) {
		err_set("out of memory");
		return NULL;
	}
	p->mem = CREATE(&e, clCreateBuffer(o->ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE,
					   bytes ? bytes : 1, NULL, &e));
	if (!p->mem) {
		ocl_fail(e, "clCreateBuffer(%zu pinned bytes)", bytes);
		free(p);
		return NULL;
	}
	p->ptr = CREATE(&e, clEnqueueMapBuffer(o->queue, p->mem, CL_TRUE,
					       CL_MAP_READ | CL_MAP_WRITE, 0, bytes ? bytes : 1,
					       0, NULL, NULL, &e));
	if (!p->ptr) {
		ocl_fail(e, "clEnqueueMapBuffer(%zu pinned bytes)", bytes);
		RELEASE(clReleaseMemObject, p->mem);
		free(p);
		return NULL;
	}
	p->next = o->pinned;
	o->pinned = p;
	return p->ptr;
}

void ocl_host_free(struct ocl *o, void *ptr)
{
	for (struct ocl_pinned **pp = o ? &o->pinned : NULL; pp && *pp; pp = &(*pp)->next) {
		struct ocl_pinned *p = *pp;
		if (p->ptr != ptr)
			continue;
		*pp = p->next;
		clEnqueueUnmapMemObject(o->queue, p->mem, p->ptr, 0, NULL, NULL);
		clFinish(o->queue);
		RELEASE(clReleaseMemObject, p->mem);
		free(p);
		return;
	}
	hostmem_put(ptr);
}

void ocl_pinned_free_all(struct ocl *o)
{
	while (o->pinned) {
		struct ocl_pinned *p = o->pinned;

		o->pinned = p->next;
		clEnqueueUnmapMemObject(o->queue, p->mem, p->ptr, 0, NULL, NULL);
		clFinish(o->queue);
		RELEASE(clReleaseMemObject, p->mem);
		free(p);
	}
}

// ---- buffers -------------------------------------------------------------------------------

// A buffer of flags over host (NULL unless CL_MEM_USE_HOST_PTR). NULL with err set.
static struct ocl_buf *buf_create(struct ocl *o, cl_mem_flags flags, void *host, size_t bytes)
{
	struct ocl_buf *b;
	char want[32], max[32];
	cl_int e = CL_SUCCESS;

	if (bytes == 0) {
		err_set("opencl: cannot allocate an empty buffer");
		return NULL;
	}
	// Checked here because some drivers (NVIDIA) accept a too large buffer and fail later.
	if ((uint64_t)bytes > o->max_alloc_bytes) {
		err_set("opencl: a buffer of %s exceeds the allocation limit of %s, %s "
		        "(CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
		        ocl_size_str(want, bytes), o->name, ocl_size_str(max, o->max_alloc_bytes));
		return NULL;
	}
	if (!(b = calloc(1, sizeof *b))) {
		err_set("out of memory");
		return NULL;
	}
	b->bytes = bytes;
	b->mem = CREATE(&e, clCreateBuffer(o->ctx, flags, bytes, host, &e));
	if (!b->mem) {
		ocl_fail(e, "clCreateBuffer(%zu bytes%s)", bytes, host ? ", host memory" : "");
		free(b);
		return NULL;
	}
	return b;
}

struct ocl_buf *ocl_buf_new(struct ocl *o, size_t bytes)
{
	return buf_create(o, CL_MEM_READ_WRITE, NULL, bytes);
}

struct ocl_buf *ocl_buf_const(struct ocl *o, const void *src, size_t bytes)
{
	// the OpenCL API takes a non-const pointer; with CL_MEM_COPY_HOST_PTR it only reads it
	return buf_create(o, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (void *)src, bytes);
}

void ocl_buf_free(struct ocl_buf *b)
{
	if (!b)
		return;
	// The wrapped memory is the caller's again only when no queued command can touch it
	// (a failed run may leave kernels queued). A real wait: never a counted fault.
	if (b->wrap_of)
		clFinish(b->wrap_of->queue);
	RELEASE(clReleaseMemObject, b->mem);
	free(b);
}

bool ocl_host_unified(const struct ocl *o)
{
	return o->host_unified;
}

void *ocl_wrap_alloc(const struct ocl *o, size_t bytes)
{
	size_t align = o->wrap_align;
	void *p = NULL;

	// Whole alignment units (a page or more): a driver may then use every byte in place.
	if (bytes > SIZE_MAX - align) {
		err_set("out of memory for %zu bytes", bytes);
		return NULL;
	}
	bytes = bytes ? (bytes + align - 1) / align * align : align;
	if (align <= (size_t)sysconf(_SC_PAGESIZE)) // hostmem's: whole pages, kept in a batch
		p = hostmem_get(bytes, NULL);
	else if (posix_memalign(&p, align, bytes))
		p = NULL;
	if (!p) {
		err_set("out of memory for %zu bytes", bytes);
		return NULL;
	}
	return p;
}

bool ocl_wrap_aligned(const struct ocl *o, const void *ptr)
{
	return (uintptr_t)ptr % o->wrap_align == 0;
}

struct ocl_buf *ocl_buf_wrap(struct ocl *o, void *host, size_t bytes, bool read_only)
{
	cl_mem_flags flags =
	    CL_MEM_USE_HOST_PTR | (read_only ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE);
	struct ocl_buf *b;

	if (!host) {
		err_set("opencl: cannot wrap NULL host memory");
		return NULL;
	}
	b = buf_create(o, flags, host, bytes);
	if (b) {
		b->wrap_of = o;
		b->host = host;
	}
	return b;
}

int ocl_wrap_sync(struct ocl *o, struct ocl_buf *b, size_t bytes)
{
	cl_event *ev;
	cl_int e = CL_SUCCESS;
	void *p;

	if (!b->host || bytes > b->bytes)
		return err_set("opencl: cannot sync %zu bytes of a buffer of %zu%s", bytes,
		               b->bytes, b->host ? "" : " that wraps no host memory");
	if (bytes == 0)
		return 0;
	ev = ocl_event_slot(o);
	p = CREATE(&e, clEnqueueMapBuffer(o->queue, b->mem, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL,
	                                  ev, &e));
	if (!p)
		return ocl_fail(e, "clEnqueueMapBuffer(%zu bytes, host memory)", bytes);
	ocl_event_keep(o, ev);
	// OpenCL 1.2 (clEnqueueMapBuffer): for a CL_MEM_USE_HOST_PTR buffer the pointer is
	// derived from host_ptr, here host_ptr itself (offset 0). Anything else breaks the
	// contract the caller relies on, so it is an error (the CPU path can take over).
	if (p != b->host) {
		clEnqueueUnmapMemObject(o->queue, b->mem, p, 0, NULL, NULL);
		return err_set("opencl: clEnqueueMapBuffer(%zu bytes, host memory) mapped the "
		               "buffer elsewhere than its host memory",
		               bytes);
	}
	ev = ocl_event_slot(o);
	e = CALL(clEnqueueUnmapMemObject(o->queue, b->mem, p, 0, NULL, ev));
	if (e != CL_SUCCESS)
		return ocl_fail(e, "clEnqueueUnmapMemObject(%zu bytes, host memory)", bytes);
	ocl_event_keep(o, ev);
	e = CALL(clFinish(o->queue));
	return e == CL_SUCCESS ? 0 : ocl_fail(e, "clFinish");
}

int ocl_upload(struct ocl *o, struct ocl_buf *dst, const void *src, size_t bytes)
{
	cl_event *ev;
	cl_int e;

	if (bytes > dst->bytes)
		return err_set("opencl: upload of %zu bytes into a buffer of %zu", bytes,
		               dst->bytes);
	ev = ocl_event_slot(o);
	e = CALL(clEnqueueWriteBuffer(o->queue, dst->mem, CL_TRUE, 0, bytes, src, 0, NULL, ev));
	if (e != CL_SUCCESS)
		return ocl_fail(e, "clEnqueueWriteBuffer(%zu bytes)", bytes);
	ocl_event_keep(o, ev);
	return 0;
}

int ocl_download(struct ocl *o, struct ocl_buf *src, void *dst, size_t bytes)
{
	cl_event *ev;
	cl_int e;

	if (bytes > src->bytes)
		return err_set("opencl: download of %zu bytes from a buffer of %zu", bytes,
		               src->bytes);
	ev = ocl_event_slot(o);
	e = CALL(clEnqueueReadBuffer(o->queue, src->mem, CL_TRUE, 0, bytes, dst, 0, NULL, ev));
	if (e != CL_SUCCESS)
		return ocl_fail(e, "clEnqueueReadBuffer(%zu bytes)", bytes);
	ocl_event_keep(o, ev);
	return 0;
}

int ocl_zero(struct ocl *o, struct ocl_buf *b, size_t bytes)
{
	const cl_uint zero = 0;
	cl_int e;

	if (bytes > b->bytes || bytes % sizeof zero)
		return err_set("opencl: cannot zero %zu bytes of a buffer of %zu", bytes, b->bytes);
	if (bytes == 0)
		return 0;
	e = CALL(clEnqueueFillBuffer(o->queue, b->mem, &zero, sizeof zero, 0, bytes, 0, NULL,
	                             NULL));
	return e == CL_SUCCESS ? 0 : ocl_fail(e, "clEnqueueFillBuffer(%zu bytes)", bytes);
}

int ocl_copy(struct ocl *o, struct ocl_buf *dst, struct ocl_buf *src, size_t bytes)
{
	cl_event *ev;
	cl_int e;

	if (bytes > src->bytes || bytes > dst->bytes)
		return err_set("opencl: copy of %zu bytes from a buffer of %zu into one of %zu",
		               bytes, src->bytes, dst->bytes);
	if (bytes == 0)
		return 0;
	ev = ocl_event_slot(o);
	e = CALL(clEnqueueCopyBuffer(o->queue, src->mem, dst->mem, 0, 0, bytes, 0, NULL, ev));
	if (e != CL_SUCCESS)
		return ocl_fail(e, "clEnqueueCopyBuffer(%zu bytes)", bytes);
	ocl_event_keep(o, ev);
	return 0;
}
