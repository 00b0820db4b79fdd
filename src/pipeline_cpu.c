// SPDX-License-Identifier: MIT
// The CPU path of the pipeline, a stage at a time, and the host memory the stages write
// (pipeline.h); the OpenCL path takes that memory through pipeline_impl.h.
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "hostmem.h"
#include "ocl.h"
#include "pipeline.h"
#include "pipeline_impl.h"

#define FREE(p) (hostmem_put(p), (p) = NULL)

// ---- the memory a run writes its images into ----------------------------------------------

int pipeline_image_stages(const struct plan *c, int from)
{
	int k = 0;
	for (int i = from; i < c->n; i++)
		k += !c->st[i].plan.passthrough;
	return k;
}

// A block of a pipeline_mem: memory that o can use in place (ocl_wrap_alloc), or for the
// CPU path (o NULL) hostmem's, aligned to a page so that a zero-copy device taking over
// mid-chain (pipeline_cl_from) can use the image in place. NULL with err set.
static void *mem_block(struct ocl *o, size_t bytes)
{
	void *p;
	if (o)
		return ocl_wrap_alloc(o, bytes);
	p = hostmem_get(bytes, NULL);
	if (!p)
		err_set("out of memory for %zu bytes", bytes);
	return p;
}

int pipeline_mem_alloc(const struct plan *c, struct ocl *o, struct pipeline_mem *m)
{
	int k = pipeline_image_stages(c, 0);

	*m = (struct pipeline_mem){ .bytes = c->max_bytes };
	if ((k >= 1 && !(m->out = mem_block(o, c->max_bytes))) ||
	    (k >= 2 && !(m->tmp = mem_block(o, c->max_bytes)))) {
		pipeline_mem_free(m);
		return err_prefix("the stages' images");
	}
	return 0;
}

void pipeline_mem_free(struct pipeline_mem *m)
{
	hostmem_put(m->out);
	hostmem_put(m->tmp);
	*m = (struct pipeline_mem){ 0 };
}

int pipeline_mem_take(const struct plan *c, struct ocl *o, struct pipeline_mem *mem,
		    uint8_t **out, uint8_t **tmp)
{
	struct pipeline_mem own = { 0 };
	int k = pipeline_image_stages(c, 0);
	if (mem && mem->bytes == c->max_bytes) { // made for this chain, not taken yet
		own = *mem;
		*mem = (struct pipeline_mem){ 0 };
	}
	if ((k >= 1 && !own.out && !(own.out = mem_block(o, c->max_bytes))) ||
	    (k >= 2 && !own.tmp && !(own.tmp = mem_block(o, c->max_bytes)))) {
		pipeline_mem_free(&own);
		return err_prefix("the stages' images");
	}
	*out = own.out;
	*tmp = own.tmp;
	return 0;
}

// ---- the CPU path ---------------------------------------------------------------------

// The image buffers (NULL where no stage writes them): mem's where it holds them for c
// (taken from it), else allocated (pipeline_mem_take). The side outputs of the stages from `from`
// on are zeroed; those before are the stages' that ran already.
static int cpu_start(struct pipeline_cpu_run *r, const struct plan *c, int from,
		     const struct img *in, struct pipeline_mem *mem)
{
	*r = (struct pipeline_cpu_run){ .c = c, .stage = from, .cur = in->data,
					.g = from < c->n ? c->st[from].in : c->out };
	for (int i = from; i < c->n; i++)
		if (c->st[i].side)
			memset(c->st[i].side, 0, c->st[i].plan.side_bytes);
	return pipeline_mem_take(c, NULL, mem, &r->buf[0], &r->buf[1]);
}

static void cpu_step(struct pipeline_cpu_run *r, const struct plan_stage *s)
{
	struct img in = { r->g.w, r->g.h, r->g.ch, (uint8_t *)r->cur };
	r->stage++;
	if (s->plan.side_bytes)
		s->ops->side_cpu(s->params, &in, s->side);
	if (s->plan.passthrough) {
		if (s->ops->run_cpu)
			s->ops->run_cpu(s->params, &s->plan, &in, NULL);
		return;
	}
	struct img out = { s->plan.out.w, s->plan.out.h, s->plan.out.ch, r->buf[r->next] };
	s->ops->run_cpu(s->params, &s->plan, &in, &out);
	r->cur = r->buf[r->next];
	r->next ^= 1;
	r->g = s->plan.out;
}

// Hands the current image to out (copying only when no stage wrote), the other block to
// spare where given (a pipeline_mem for the chain with it as out, for the device taking the
// rest), and frees the rest.
static int cpu_finish(struct pipeline_cpu_run *r, struct img *out, struct pipeline_mem *spare)
{
	*out = (struct img){ r->g.w, r->g.h, r->g.ch, NULL };
	if (r->cur == r->buf[r->next ^ 1]) {
		out->data = r->buf[r->next ^ 1];
		r->buf[r->next ^ 1] = NULL;
	} else {
		out->data = mem_block(NULL, geom_bytes(&r->g));
		if (out->data)
			memcpy(out->data, r->cur, geom_bytes(&r->g));
	}
	if (spare) {
		*spare = (struct pipeline_mem){ .bytes = r->c->max_bytes };
		spare->out = r->buf[0] ? r->buf[0] : r->buf[1];
		if (spare->out == r->buf[0])
			r->buf[0] = NULL;
		else
			r->buf[1] = NULL;
	}
	FREE(r->buf[0]);
	FREE(r->buf[1]);
	return out->data ? 0 : err_set("out of memory");
}

int pipeline_cpu_begin(struct pipeline_cpu_run *r, const struct plan *c, int from,
		       const struct img *in, struct pipeline_mem *mem)
{
	return cpu_start(r, c, from, in, mem);
}

void pipeline_cpu_step(struct pipeline_cpu_run *r, struct run_times *t)
{
	int i = r->stage;
	double t0 = t ? now_ms() : 0;
	cpu_step(r, &r->c->st[i]);
	if (t)
		t->stage_ms[i] = now_ms() - t0;
}

int pipeline_cpu_end(struct pipeline_cpu_run *r, struct img *out, struct pipeline_mem *spare)
{
	return cpu_finish(r, out, spare);
}

void pipeline_cpu_abort(struct pipeline_cpu_run *r)
{
	FREE(r->buf[0]);
	FREE(r->buf[1]);
}

int pipeline_cpu(const struct plan *c, const struct img *in, struct pipeline_mem *mem,
		 struct img *out, struct run_times *t)
{
	struct pipeline_cpu_run r;
	if (cpu_start(&r, c, 0, in, mem) < 0)
		return -1;
	while (r.stage < c->n)
		pipeline_cpu_step(&r, t);
	return cpu_finish(&r, out, NULL);
}
