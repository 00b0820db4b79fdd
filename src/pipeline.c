// SPDX-License-Identifier: MIT
// Plan and run the chain: parsing and planning, the OpenCL path and both compared
// (--verify); the CPU path and the memory the stages write are in pipeline_cpu.c. The
// pipeline owns every buffer: a stage reads one and writes another (ping-pong on the host
// and on the device), so a stage never writes its input and the CPU path can always run in
// its place.
#include "pipeline.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "hostmem.h"
#include "ocl.h"
#include "pipeline_impl.h"
#include "suggest.h"

#define FREE(p) (free(p), (p) = NULL)

// ---- parsing and planning ----------------------------------------------------------

// Parses one token into s; the copy of the token the arguments point into is kept after
// the params block so that string arguments stay valid for the chain's life.
static int stage_parse(struct chain_stage *s, const char *token)
{
	size_t len = strlen(token), colons = 0;
	char *copy = NULL, **argv = NULL, *p;
	int argc = 0, rc = -1;

	s->token = token;
	for (const char *q = token; *q; q++)
		colons += *q == ':';
	copy = malloc(len + 1);
	// One argument after each ':' ("a::" has two empty ones), and a NULL. (Found by
	// tests/fuzz/fuzz-chain.c: len / 2 + 2 was too few for runs of ':'.)
	argv = malloc((colons + 2) * sizeof *argv);
	if (!copy || !argv) {
		err_set("out of memory");
		goto fail;
	}
	memcpy(copy, token, len + 1);
	p = strchr(copy, ':');
	if (p)
		*p++ = '\0';
	while (p) {
		argv[argc++] = p;
		p = strchr(p, ':');
		if (p)
			*p++ = '\0';
	}
	argv[argc] = NULL;

	s->ops = stage_find(copy);
	if (!s->ops) {
		err_set("unknown stage '%s' (see climg --list-stages)", copy);
		suggest_err(stage_suggest(copy));
		goto fail;
	}
	// params, then the token copy the arguments point into
	s->params = calloc(1, s->ops->params_size + len + 1);
	if (!s->params) {
		err_set("out of memory");
		goto fail;
	}
	char *kept = (char *)s->params + s->ops->params_size;
	memcpy(kept, copy, len + 1);
	for (int i = 0; i < argc; i++)
		argv[i] = kept + (argv[i] - copy);
	rc = s->ops->parse(s->params, argc, argv);
fail:
	free(copy);
	free(argv);
	return rc;
}

int chain_parse(struct chain *c, int n, char *const *tokens)
{
	memset(c, 0, sizeof *c);
	if (n > CHAIN_MAX_STAGES)
		return err_set("too many stages (%d; at most %d)", n, CHAIN_MAX_STAGES);
	c->st = calloc(n ? (size_t)n : 1, sizeof *c->st);
	if (!c->st)
		return err_set("out of memory");
	for (c->n = 0; c->n < n; c->n++) {
		if (stage_parse(&c->st[c->n], tokens[c->n]) < 0) {
			c->n++; // free the failed stage's params too
			chain_free(c);
			return -1;
		}
	}
	return 0;
}

// Prefixes err with the stage's token, shortened when long (a custom kernel can be
// thousands of numbers), and returns -1.
static int stage_err(const struct plan_stage *s)
{
	const int max = 48;
	if (strlen(s->token) <= (size_t)max)
		return err_prefix("%s", s->token);
	return err_prefix("%.*s...", max - 3, s->token);
}

int plan_make(struct plan *c, const struct chain *ch, const struct geom *in, uint64_t max_pixels)
{
	struct geom g = *in;
	uint64_t host;
	*c = (struct plan){ .in = *in };
	// The readers check the input; callers that build images themselves get the same.
	if (in->ch < 1 || in->ch > 4 || in->w < 1 || in->h < 1 || in->w > IMG_MAX_SIDE ||
	    in->h > IMG_MAX_SIDE)
		return err_set("the input is %dx%d with %d channels (1 to %d pixels a side and 1 "
			       "to 4 channels are possible)",
			       in->w, in->h, in->ch, IMG_MAX_SIDE);
	if (in->orient < 0 || in->orient > 8)
		return err_set("the input's orientation is %d (0 to 8 are possible)", in->orient);
	c->st = calloc(ch->n ? (size_t)ch->n : 1, sizeof *c->st);
	if (!c->st)
		return err_set("out of memory");
	c->n = ch->n;
	c->max_bytes = geom_bytes(in);
	for (int i = 0; i < c->n; i++) {
		struct plan_stage *s = &c->st[i];
		s->ops = ch->st[i].ops;
		s->token = ch->st[i].token;
		s->params = ch->st[i].params;
		s->in = g;
		if (s->ops->plan(s->params, &g, &s->plan) < 0) {
			stage_err(s);
			goto fail;
		}
		// a stage without run_cpu only measures; side outputs are arrays of uint32_t
		if ((!s->ops->run_cpu && !s->plan.passthrough) || s->plan.side_bytes % 4 ||
		    (s->plan.side_bytes && !s->ops->side_cpu) ||
		    s->plan.side_copies < 0 || s->plan.out.orient < 0 || s->plan.out.orient > 8) {
			err_set("%s: internal error: inconsistent stage plan", s->token);
			goto fail;
		}
		if (s->plan.passthrough)
			s->plan.out = g;
		g = s->plan.out;
		if (g.ch < 1 || g.ch > 4 || g.w < 1 || g.h < 1) {
			err_set("%s: the output would be %dx%d with %d channels", s->token, g.w,
				g.h, g.ch);
			goto fail;
		}
		if (g.w > IMG_MAX_SIDE || g.h > IMG_MAX_SIDE) {
			err_set("%s: the output would be %dx%d pixels; sides are limited to %d",
				s->token, g.w, g.h, IMG_MAX_SIDE);
			goto fail;
		}
		if (max_pixels && (uint64_t)g.w * (uint64_t)g.h > max_pixels) {
			err_set("%s: the output would be %dx%d = %llu pixels, more than "
				"--max-pixels %llu",
				s->token, g.w, g.h, (unsigned long long)g.w * (unsigned long long)g.h,
				(unsigned long long)max_pixels);
			goto fail;
		}
		if (geom_bytes(&g) > c->max_bytes)
			c->max_bytes = geom_bytes(&g);
		s->side_offset = c->side_bytes;
		c->side_bytes += s->plan.side_bytes;
		s->side_cl_offset = c->side_cl_bytes;
		c->side_cl_bytes += stage_side_cl_bytes(&s->plan);
	}
	c->out = g;
	// Every image is at most 65535 x 65535 x 4 bytes (16 GiB), so the sum cannot overflow
	// 64 bits; where size_t is narrower this says so rather than wrapping. The input,
	// two ping-pong buffers and (for --verify) one for the downloaded image.
	host = (uint64_t)geom_bytes(in) + 3 * (uint64_t)c->max_bytes;
	if (host > SIZE_MAX) {
		err_set("the chain needs %llu bytes of memory, more than this system can address",
			(unsigned long long)host);
		goto fail;
	}
	c->host_bytes = geom_bytes(in) + 2 * c->max_bytes;
	if (c->side_bytes) {
		c->side = calloc(1, c->side_bytes);
		if (!c->side) {
			err_set("out of memory");
			goto fail;
		}
		for (int i = 0; i < c->n; i++)
			if (c->st[i].plan.side_bytes)
				c->st[i].side = (char *)c->side + c->st[i].side_offset;
	}
	return 0;
fail:
	plan_free(c);
	return -1;
}

void plan_free(struct plan *c)
{
	for (int i = 0; c->st && i < c->n; i++)
		if (c->st[i].plan.priv && c->st[i].ops->free_plan)
			c->st[i].ops->free_plan(c->st[i].plan.priv);
	FREE(c->st);
	FREE(c->side);
	c->n = 0;
}

void chain_free(struct chain *c)
{
	for (int i = 0; i < c->n; i++) {
		const struct chain_stage *s = &c->st[i];
		if (s->params && s->ops && s->ops->free_params)
			s->ops->free_params(s->params);
		free(s->params);
	}
	FREE(c->st);
	c->n = 0;
}

int plan_programs(const struct plan *c, struct ocl_program_id *programs, int max)
{
	return plan_programs_from(c, 0, programs, max);
}

int plan_programs_from(const struct plan *c, int from, struct ocl_program_id *programs, int max)
{
	int n = 0;
	for (int i = from; i < c->n; i++) {
		const struct plan_stage *s = &c->st[i];
		struct ocl_program_id p = { s->plan.program ? s->plan.program : s->ops->program,
					    s->in.ch };
		int seen = 0;
		// a passthrough without side output runs no kernel (run_cl gets no output and
		// returns): it needs no program
		if (!p.name || (s->plan.passthrough && !s->plan.side_bytes))
			continue;
		for (int j = 0; j < n && !seen; j++)
			seen = !strcmp(programs[j].name, p.name) && programs[j].ch == p.ch;
		if (!seen && n < max)
			programs[n++] = p;
	}
	return n;
}

// ---- the OpenCL path --------------------------------------------------------------------
// Two ways to move the image. On a device with memory of its own (a discrete GPU): one
// upload into device buffer A, the stages ping-pong between A and B, one download into
// pinned host memory (the input's, where the caller allows: reuse_bytes). On a device
// whose memory is the host's (PoCL; see pipeline_zero_copy()) there are no copies: the
// decoded input is wrapped read-only and read in place, the last image-writing stage
// writes straight into the output image's host memory (a wrapper of max_bytes, as earlier
// stages may write larger images into it), and the stages before it alternate between
// that and a wrapper of a second such block, made only when two or more stages write
// images (both blocks the caller's pipeline_mem where it made them). Stage j
// of k image-writing stages (1-based) writes buffer (k - j) % 2, so the last one writes
// buffer 0, the output. Either way no stage writes the input, so without reuse_bytes the
// caller's image stays intact for the CPU path after a device failure.

bool pipeline_zero_copy(const struct ocl *o)
{
	const char *env = getenv("CLIMG_ZERO_COPY");
	return ocl_host_unified(o) && !(env && !strcmp(env, "0"));
}

// Host memory for an image pipeline_cl on o makes: on a zero-copy device memory aligned for
// the device to use in place (ocl_wrap_alloc), else pinned memory that downloads at full
// speed (ocl_host_alloc). NULL with err set.
static void *host_alloc(struct ocl *o, size_t bytes)
{
	return pipeline_zero_copy(o) ? ocl_wrap_alloc(o, bytes) : ocl_host_alloc(o, bytes);
}

struct cl_run {
	struct ocl *ocl;
	struct ocl_buf *in;     // the input: uploaded (buf[0] then) or wrapped (zero-copy)
	struct ocl_buf *buf[2]; // the ping-pong buffers (NULL where not needed)
	struct ocl_buf *cur;    // the current image: in, then the last image a stage wrote
	int next;               // the next image-writing stage writes buf[next]
	struct geom g;
	struct ocl_buf *side; // every stage's side output, its copies at side_cl_offset; or NULL
	uint8_t *host_out; // zero-copy: the host memory buf[0] wraps, until handed to the caller
	uint8_t *host_tmp; // zero-copy: the host memory buf[1] wraps, or NULL
};

static void cl_release(struct cl_run *r)
{
	// Wrappers first: freeing one waits for every queued command, so the host memory under
	// them is free to go (or to be read by the CPU path) afterwards.
	if (r->in != r->buf[0])
		ocl_buf_free(r->in);
	ocl_buf_free(r->buf[0]);
	ocl_buf_free(r->buf[1]);
	ocl_buf_free(r->side);
	hostmem_put(r->host_out);
	hostmem_put(r->host_tmp);
	r->in = r->cur = r->buf[0] = r->buf[1] = r->side = NULL;
	r->host_out = r->host_tmp = NULL;
}

// Whether the stage can run on OpenCL: every CPU hook it has has its OpenCL twin.
static bool stage_has_cl(const struct stage_ops *ops)
{
	return (!ops->run_cpu || ops->run_cl) && (!ops->side_cpu || ops->side_cl);
}

// Zero-copy buffers (see above). The input is wrapped when its memory has the alignment the
// device wants (ocl_wrap_aligned), else uploaded into a buffer of its own. The host memory
// the stages write: mem's where it has it (taken from it), else allocated here.
static int cl_start_zero_copy(struct cl_run *r, const struct plan *c, int from,
			      const struct img *in, struct pipeline_mem *mem, struct run_times *t)
{
	struct ocl *o = r->ocl;
	int k = pipeline_image_stages(c, from);
	double t0 = now_ms();

	if (ocl_wrap_aligned(o, in->data)) {
		r->in = ocl_buf_wrap(o, in->data, img_bytes(in), true);
		if (!r->in)
			return -1;
		if (t) {
			t->upload_ms = now_ms() - t0; // what the upload became: no copy
			t->upload_in_place = true;
		}
	} else {
		r->in = ocl_buf_new(o, img_bytes(in));
		if (!r->in || ocl_upload(o, r->in, in->data, img_bytes(in)) < 0)
			return -1;
		if (t && ocl_timer_take(o, &t->upload_ms) < 0)
			return -1;
	}
	if (pipeline_mem_take(c, o, mem, &r->host_out, &r->host_tmp) < 0)
		return -1;
	// made for the whole chain: from `from` on fewer stages may write images
	if (k < 2)
		FREE(r->host_tmp);
	if (k < 1)
		FREE(r->host_out);
	if (k >= 1 && !(r->buf[0] = ocl_buf_wrap(o, r->host_out, c->max_bytes, false)))
		return -1;
	if (k >= 2 && !(r->buf[1] = ocl_buf_wrap(o, r->host_tmp, c->max_bytes, false)))
		return -1;
	r->next = k >= 1 ? (k - 1) % 2 : 0;
	return 0;
}

static int cl_start(struct cl_run *r, const struct plan *c, int from, struct ocl *o,
		    const struct img *in, struct pipeline_mem *mem, struct run_times *t)
{
	struct ocl_program_id programs[64];
	int n = plan_programs_from(c, from, programs, 64);
	double t0 = now_ms();
	*r = (struct cl_run){ .ocl = o, .g = from < c->n ? c->st[from].in : c->in };
	if (t) {
		t->upload_in_place = t->download_in_place = t->download_into_input = false;
		t->out_alloc_ms = 0;
	}
	if (ocl_build(o, programs, n) < 0)
		return -1;
	if (t)
		t->build_ms = now_ms() - t0;
	if (pipeline_zero_copy(o)) {
		if (cl_start_zero_copy(r, c, from, in, mem, t) < 0)
			goto fail;
	} else {
		r->buf[0] = ocl_buf_new(o, c->max_bytes);
		r->buf[1] = r->buf[0] ? ocl_buf_new(o, c->max_bytes) : NULL;
		if (!r->buf[1] || ocl_upload(o, r->buf[0], in->data, img_bytes(in)) < 0)
			goto fail;
		if (t && ocl_timer_take(o, &t->upload_ms) < 0)
			goto fail;
		r->in = r->buf[0];
		r->next = 1;
	}
	r->cur = r->in;
	if (c->side_cl_bytes) {
		r->side = ocl_buf_new(o, c->side_cl_bytes);
		if (!r->side || ocl_zero(o, r->side, c->side_cl_bytes) < 0)
			goto fail;
		if (t && ocl_timer_take(o, &(double){ 0 }) < 0) // the zeroing is no stage's time
			goto fail;
	}
	return 0;
fail:
	cl_release(r);
	return -1;
}

int pipeline_stage_cl(const struct plan_stage *s, const struct stage_cl *sc)
{
	if (s->plan.side_bytes && s->ops->side_cl(s->params, sc) < 0)
		return stage_err(s);
	if (s->ops->run_cl && s->ops->run_cl(s->params, sc) < 0)
		return stage_err(s);
	return 0;
}

static int cl_step(struct cl_run *r, const struct plan_stage *s)
{
	struct stage_cl sc = { .ocl = r->ocl, .in = r->cur, .gin = r->g, .gout = s->plan.out,
			       .plan = &s->plan };
	if (!s->plan.passthrough)
		sc.out = r->buf[r->next];
	if (s->plan.side_bytes) {
		sc.side = r->side;
		sc.side_offset = s->side_cl_offset;
	}
	if (pipeline_stage_cl(s, &sc) < 0)
		return -1;
	if (!s->plan.passthrough) {
		r->cur = r->buf[r->next];
		r->next ^= 1;
		r->g = s->plan.out;
	}
	return 0;
}

// Downloads the device's side outputs (side, c->side_cl_bytes) and adds each stage's copies
// into host, laid out as c->side: those of the stages from `from` on (the others ran on the
// CPU path).
static int side_download(const struct plan *c, int from, struct ocl *o, struct ocl_buf *side,
			 void *host)
{
	uint32_t *dev = malloc(c->side_cl_bytes);
	if (!dev)
		return err_set("out of memory");
	if (ocl_download(o, side, dev, c->side_cl_bytes) < 0) {
		free(dev);
		return -1;
	}
	for (int i = from; i < c->n; i++) {
		const struct plan_stage *s = &c->st[i];
		if (s->plan.side_bytes)
			stage_side_fold(&s->plan, dev + s->side_cl_offset / 4,
					(uint32_t *)((char *)host + s->side_offset));
	}
	free(dev);
	return 0;
}

int pipeline_cl(const struct plan *c, struct ocl *o, struct img *in, size_t reuse_bytes,
		struct pipeline_mem *mem, struct img *out, struct run_times *t)
{
	return pipeline_cl_from(c, 0, o, in, reuse_bytes, mem, out, t);
}

int pipeline_cl_from(const struct plan *c, int from, struct ocl *o, struct img *in,
		     size_t reuse_bytes, struct pipeline_mem *mem, struct img *out,
		     struct run_times *t)
{
	struct cl_run r;
	size_t bytes = geom_bytes(&c->out);
	bool reused = false;
	int rc = -1;
	*out = (struct img){ c->out.w, c->out.h, c->out.ch, NULL };
	if (from < 0 || (from >= c->n && from > 0))
		return err_set("internal error: the device takes the chain from stage %d of %d",
			       from + 1, c->n);
	for (int i = from; i < c->n; i++)
		if (!stage_has_cl(c->st[i].ops))
			return err_set("%s: stage has no OpenCL path", c->st[i].token);
	if (cl_start(&r, c, from, o, in, mem, t) < 0)
		return -1;
	for (int i = from; i < c->n; i++) {
		if (cl_step(&r, &c->st[i]) < 0)
			goto fail;
		if (t && ocl_timer_take(o, &t->stage_ms[i]) < 0)
			goto fail;
	}
	// The blocking download would wait too; clFinish names a failure of the kernels.
	if (ocl_finish(o) < 0)
		goto fail;
	if (r.host_out) {
		// Zero-copy: the last stage wrote the output image in place; the map is all the
		// "download" there is.
		if (ocl_wrap_sync(o, r.buf[0], bytes) < 0)
			goto fail;
		out->data = r.host_out;
		r.host_out = NULL;
		if (t)
			t->download_in_place = true;
	} else if (bytes <= reuse_bytes && !pipeline_zero_copy(o)) {
		// Into the input's pinned memory, which the device no longer needs: no new pinned
		// memory to allocate (see pipeline.h).
		if (ocl_download(o, r.cur, in->data, bytes) < 0)
			goto fail;
		reused = true;
		if (t)
			t->download_into_input = true;
	} else {
		// A copy: from the device, or (zero-copy, no stage wrote an image) of the input.
		double t0 = now_ms();
		out->data = host_alloc(o, bytes);
		if (t)
			t->out_alloc_ms = now_ms() - t0;
		if (!out->data || ocl_download(o, r.cur, out->data, bytes) < 0)
			goto fail;
	}
	if (c->side_bytes && side_download(c, from, o, r.side, c->side) < 0)
		goto fail;
	if (t && ocl_timer_take(o, &t->download_ms) < 0)
		goto fail;
	if (reused) {
		out->data = in->data;
		in->data = NULL;
	}
	rc = 0;
fail:
	cl_release(&r); // before out->data may go: a failed run can leave kernels queued
	if (rc < 0) {
		ocl_host_free(o, out->data);
		out->data = NULL;
	}
	return rc;
}

// ---- both, compared -----------------------------------------------------------------------

int pipeline_compare_image(const struct plan_stage *s, int index, const struct geom *g,
			   const uint8_t *cl, const uint8_t *cpu)
{
	size_t n = geom_bytes(g);
	for (size_t i = 0; i < n; i++) {
		if (cl[i] != cpu[i]) {
			size_t px = i / (size_t)g->ch;
			err_set("verify: stage %d (%s): OpenCL and CPU differ at x=%zu y=%zu "
				"channel %zu: opencl %u, cpu %u",
				index + 1, s->token, px % (size_t)g->w, px / (size_t)g->w,
				i % (size_t)g->ch, cl[i], cpu[i]);
			return 1;
		}
	}
	return 0;
}

int pipeline_compare_side(const struct plan_stage *s, int index, const uint32_t *cl)
{
	const uint32_t *cpu = s->side;
	char where[96];
	for (size_t i = 0; i < s->plan.side_bytes / 4; i++) {
		if (cl[i] == cpu[i])
			continue;
		if (s->ops->side_where)
			s->ops->side_where(s->params, &s->in, i, where, sizeof where);
		else
			snprintf(where, sizeof where, "word %zu", i);
		err_set("verify: stage %d (%s): OpenCL and CPU differ at %s: opencl %u, cpu %u",
			index + 1, s->token, where, (unsigned)cl[i], (unsigned)cpu[i]);
		return 1;
	}
	return 0;
}

// 0 when the side outputs from the device (cl, laid out as c->side) equal the CPU's in
// c->side, else 1 with the first difference in err.
static int compare_side(const struct plan *c, const void *cl)
{
	for (int k = 0; k < c->n; k++)
		if (pipeline_compare_side(&c->st[k], k,
					  (const uint32_t *)((const char *)cl + c->st[k].side_offset)))
			return 1;
	return 0;
}

int pipeline_verify(const struct plan *c, struct ocl *o, const struct img *in, struct img *out,
		    struct run_times *t)
{
	struct pipeline_cpu_run cpu;
	struct cl_run cl = { 0 };
	uint8_t *check = NULL;
	int rc = -1;

	*out = (struct img){ c->out.w, c->out.h, c->out.ch, NULL };
	for (int i = 0; i < c->n; i++)
		if (!stage_has_cl(c->st[i].ops))
			return err_set("%s: stage has no OpenCL path to verify", c->st[i].token);
	if (pipeline_cpu_begin(&cpu, c, 0, in, NULL) < 0)
		return -1;
	// room for the largest image, and then for all side outputs
	check = malloc(c->max_bytes > c->side_bytes ? c->max_bytes : c->side_bytes);
	if (!check) {
		err_set("out of memory");
		goto fail;
	}
	if (t)
		t->verified = true;
	if (cl_start(&cl, c, 0, o, in, NULL, t) < 0)
		goto fail;
	for (int i = 0; i < c->n; i++) {
		const struct plan_stage *s = &c->st[i];
		pipeline_cpu_step(&cpu, NULL);
		if (cl_step(&cl, s) < 0)
			goto fail;
		if (t && ocl_timer_take(o, &t->stage_ms[i]) < 0)
			goto fail;
		if (s->plan.passthrough)
			continue;
		if (ocl_download(o, cl.cur, check, geom_bytes(&cl.g)) < 0)
			goto fail;
		if (t && ocl_timer_take(o, &(double){ 0 }) < 0) // the comparison's, no phase's
			goto fail;
		if (pipeline_compare_image(s, i, &cl.g, check, cpu.cur)) {
			rc = 1;
			goto fail;
		}
	}
	if (c->side_bytes) {
		if (side_download(c, 0, o, cl.side, check) < 0)
			goto fail;
		if (compare_side(c, check)) {
			rc = 1;
			goto fail;
		}
	}
	rc = pipeline_cpu_end(&cpu, out, NULL);
fail:
	if (rc != 0)
		pipeline_cpu_abort(&cpu);
	free(check);
	cl_release(&cl);
	return rc;
}
