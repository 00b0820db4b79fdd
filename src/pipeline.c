// SPDX-License-Identifier: MIT
// Plan and run the chain. The pipeline owns every buffer: a stage reads one and writes
// another (ping-pong on the host and on the device), so a stage never writes its input and
// the CPU path can always run in its place.
#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ocl.h"

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

// Checks one image of the chain against the limits; what names it in the message.
static int geom_check(const struct chain *c, const struct geom *g, const char *what)
{
	if (g->ch < 1 || g->ch > 4)
		return err_set("%s: %d channels (1 to 4 are possible)", what, g->ch);
	if (g->w < 1 || g->h < 1)
		return err_set("%s: an empty %dx%d image", what, g->w, g->h);
	if (g->w > IMG_MAX_SIDE || g->h > IMG_MAX_SIDE)
		return err_set("%s: %dx%d exceeds the %d-pixel side limit", what, g->w, g->h,
			       IMG_MAX_SIDE);
	if (c->max_pixels && (uint64_t)g->w * (uint64_t)g->h > c->max_pixels)
		return err_set("%s: %dx%d exceeds --max-pixels (%llu)", what, g->w, g->h,
			       (unsigned long long)c->max_pixels);
	return 0;
}

int chain_plan(struct chain *c, const struct geom *in)
{
	struct geom g = *in;
	uint64_t host;
	c->in = *in;
	if (geom_check(c, in, "input") < 0)
		return -1;
	c->max_bytes = geom_bytes(in);
	for (int i = 0; i < c->n; i++) {
		struct chain_stage *s = &c->st[i];
		s->in = g;
		memset(&s->plan, 0, sizeof s->plan);
		if (s->ops->plan(s->params, &g, &s->plan) < 0)
			return err_prefix("%s", s->token);
		if (s->plan.passthrough)
			s->plan.out = g;
		g = s->plan.out;
		if (geom_check(c, &g, "output") < 0)
			return err_prefix("%s (stage %d)", s->token, i + 1);
		if (geom_bytes(&g) > c->max_bytes)
			c->max_bytes = geom_bytes(&g);
	}
	c->out = g;
	// Every image is at most 65535 x 65535 x 4 bytes (16 GiB), so the sum cannot overflow
	// 64 bits; where size_t is narrower this says so rather than wrapping. The input,
	// two ping-pong buffers and (for --verify) one for the downloaded image.
	host = (uint64_t)geom_bytes(in) + 3 * (uint64_t)c->max_bytes;
	if (host > SIZE_MAX)
		return err_set("the chain needs %llu bytes of memory, more than this system "
			       "can address",
			       (unsigned long long)host);
	c->host_bytes = geom_bytes(in) + 2 * c->max_bytes;
	return 0;
}

void chain_free(struct chain *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->st[i].params);
	FREE(c->st);
	c->n = 0;
}

int chain_programs(const struct chain *c, const char **programs, int max)
{
	int n = 0;
	for (int i = 0; i < c->n; i++) {
		const char *p = c->st[i].ops->program;
		int seen = 0;
		for (int j = 0; j < n && !seen; j++)
			seen = !strcmp(programs[j], p);
		if (p && !seen && n < max)
			programs[n++] = p;
	}
	return n;
}

// ---- the CPU path ---------------------------------------------------------------------

// The host side of a run: cur is the current image (the caller's input until a stage
// writes), buf[next] is where the next stage writes.
struct cpu_run {
	const uint8_t *cur;
	uint8_t *buf[2];
	int next;
	struct geom g;
};

static int cpu_start(struct cpu_run *r, const struct chain *c, const struct img *in)
{
	r->cur = in->data;
	r->g = c->in;
	r->next = 0;
	r->buf[0] = malloc(c->max_bytes);
	r->buf[1] = malloc(c->max_bytes);
	if (!r->buf[0] || !r->buf[1]) {
		FREE(r->buf[0]);
		FREE(r->buf[1]);
		return err_set("out of memory for two %zu-byte image buffers", c->max_bytes);
	}
	return 0;
}

static void cpu_step(struct cpu_run *r, const struct chain_stage *s)
{
	struct img in = { r->g.w, r->g.h, r->g.ch, (uint8_t *)r->cur };
	if (s->plan.passthrough) {
		s->ops->run_cpu(s->params, &in, NULL);
		return;
	}
	struct img out = { s->plan.out.w, s->plan.out.h, s->plan.out.ch, r->buf[r->next] };
	s->ops->run_cpu(s->params, &in, &out);
	r->cur = r->buf[r->next];
	r->next ^= 1;
	r->g = s->plan.out;
}

// Hands the result to out (copying only when no stage wrote) and frees the rest.
static int cpu_finish(struct cpu_run *r, struct img *out)
{
	*out = (struct img){ r->g.w, r->g.h, r->g.ch, NULL };
	if (r->cur == r->buf[r->next ^ 1]) {
		out->data = r->buf[r->next ^ 1];
		r->buf[r->next ^ 1] = NULL;
	} else {
		out->data = malloc(geom_bytes(&r->g));
		if (out->data)
			memcpy(out->data, r->cur, geom_bytes(&r->g));
	}
	FREE(r->buf[0]);
	FREE(r->buf[1]);
	return out->data ? 0 : err_set("out of memory");
}

int pipeline_cpu(const struct chain *c, const struct img *in, struct img *out)
{
	struct cpu_run r;
	if (cpu_start(&r, c, in) < 0)
		return -1;
	for (int i = 0; i < c->n; i++)
		cpu_step(&r, &c->st[i]);
	return cpu_finish(&r, out);
}

// ---- the OpenCL path --------------------------------------------------------------------

struct cl_run {
	struct ocl *ocl;
	struct ocl_buf *buf[2];
	int cur; // buf[cur] holds the current image
	struct geom g;
};

static void cl_release(struct cl_run *r)
{
	ocl_buf_free(r->buf[0]);
	ocl_buf_free(r->buf[1]);
	r->buf[0] = r->buf[1] = NULL;
}

static int cl_start(struct cl_run *r, const struct chain *c, struct ocl *o, const struct img *in)
{
	const char *programs[64];
	int n = chain_programs(c, programs, 64);
	*r = (struct cl_run){ .ocl = o, .g = c->in };
	if (ocl_build(o, programs, n) < 0)
		return -1;
	r->buf[0] = ocl_buf_new(o, c->max_bytes);
	r->buf[1] = r->buf[0] ? ocl_buf_new(o, c->max_bytes) : NULL;
	if (!r->buf[1] || ocl_upload(o, r->buf[0], in->data, img_bytes(in)) < 0) {
		cl_release(r);
		return -1;
	}
	return 0;
}

static int cl_step(struct cl_run *r, const struct chain_stage *s)
{
	struct stage_cl sc = { r->ocl, r->buf[r->cur], NULL, r->g, s->plan.out };
	if (!s->plan.passthrough)
		sc.out = r->buf[r->cur ^ 1];
	if (s->ops->run_cl(s->params, &sc) < 0)
		return err_prefix("%s", s->token);
	if (!s->plan.passthrough) {
		r->cur ^= 1;
		r->g = s->plan.out;
	}
	return 0;
}

int pipeline_cl(const struct chain *c, struct ocl *o, const struct img *in, struct img *out)
{
	struct cl_run r;
	int rc = -1;
	*out = (struct img){ c->out.w, c->out.h, c->out.ch, NULL };
	for (int i = 0; i < c->n; i++)
		if (!c->st[i].ops->run_cl)
			return err_set("%s: stage has no OpenCL path", c->st[i].token);
	if (cl_start(&r, c, o, in) < 0)
		return -1;
	for (int i = 0; i < c->n; i++)
		if (cl_step(&r, &c->st[i]) < 0)
			goto fail;
	// The blocking download would wait too; clFinish names a failure of the kernels.
	if (ocl_finish(o) < 0)
		goto fail;
	out->data = malloc(geom_bytes(&c->out));
	if (!out->data) {
		err_set("out of memory");
		goto fail;
	}
	if (ocl_download(o, r.buf[r.cur], out->data, geom_bytes(&c->out)) < 0)
		goto fail;
	rc = 0;
fail:
	if (rc < 0)
		FREE(out->data);
	cl_release(&r);
	return rc;
}

// ---- both, compared -----------------------------------------------------------------------

// 0 when a and b (both of geometry g) are equal, else 1 with the first difference in err.
static int compare(const struct chain_stage *s, int index, const struct geom *g,
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

int pipeline_verify(const struct chain *c, struct ocl *o, const struct img *in, struct img *out)
{
	struct cpu_run cpu;
	struct cl_run cl = { 0 };
	uint8_t *check = NULL;
	int rc = -1;

	*out = (struct img){ c->out.w, c->out.h, c->out.ch, NULL };
	for (int i = 0; i < c->n; i++)
		if (!c->st[i].ops->run_cl)
			return err_set("%s: stage has no OpenCL path to verify", c->st[i].token);
	if (cpu_start(&cpu, c, in) < 0)
		return -1;
	check = malloc(c->max_bytes);
	if (!check) {
		err_set("out of memory");
		goto fail;
	}
	if (cl_start(&cl, c, o, in) < 0)
		goto fail;
	for (int i = 0; i < c->n; i++) {
		const struct chain_stage *s = &c->st[i];
		cpu_step(&cpu, s);
		if (cl_step(&cl, s) < 0)
			goto fail;
		if (s->plan.passthrough)
			continue;
		if (ocl_download(o, cl.buf[cl.cur], check, geom_bytes(&cl.g)) < 0)
			goto fail;
		if (compare(s, i, &cl.g, check, cpu.cur)) {
			rc = 1;
			goto fail;
		}
	}
	rc = cpu_finish(&cpu, out);
fail:
	if (rc != 0) {
		FREE(cpu.buf[0]);
		FREE(cpu.buf[1]);
	}
	free(check);
	cl_release(&cl);
	return rc;
}
