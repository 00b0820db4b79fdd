// SPDX-License-Identifier: MIT
// The cost model: see cost.h.
#include "cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "ocl.h"

// How much of a new measurement a running average takes.
#define LEARN 0.3

// The built-in rates, ns a unit: on one core of the CPU path, on a CPU device (PoCL), on a
// GPU. The first two are what the model learned on the 2-core development machine over
// `make bench-auto` (whole commands, first touches of fresh memory included; equalize,
// crop and resize, which it does not run, from `climg --time` runs of their own), the
// GPU's from the kernel tables of docs/BENCHMARKS.md for the H100; runs on the machine
// itself then take over.
static const struct {
	const char *kind;
	double cpu, dev_cpu, dev_gpu;
} builtin[] = {
	{ "grey", 0.45, 0.09, 0.0005 },  { "remap", 1.6, 0.1, 0.0005 },
	{ "lut", 1.2, 0.05, 0.0005 },    { "histogram", 0.6, 0.2, 0.0005 },
	{ "equalize", 1.8, 0.3, 0.001 }, { "crop", 0.5, 0.1, 0.0005 },
	{ "resize", 20, 1.5, 0.005 },    { "rotate", 1.9, 0.16, 0.001 },
	{ "convolve", 0.55, 0.016, 0.0002 },
};
// A kind without built-in rates (a stage added without them).
static const double other_cpu = 2.0, other_dev_cpu = 0.5, other_dev_gpu = 0.002;

static double builtin_dev(const char *kind, enum cost_dev_type t)
{
	for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		if (!strcmp(builtin[i].kind, kind))
			return t == COST_DEV_GPU ? builtin[i].dev_gpu : builtin[i].dev_cpu;
	return t == COST_DEV_GPU ? other_dev_gpu : other_dev_cpu;
}

static double builtin_cpu(const char *kind)
{
	for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		if (!strcmp(builtin[i].kind, kind))
			return builtin[i].cpu;
	return other_cpu;
}

// The device's part of the model for type t: before a device was opened the slower
// device's rates and the longer opening, so that a guess never makes a run wait for it
// where the CPU path is quicker.
static void device_init(struct cost_model *m, enum cost_dev_type t)
{
	m->dev_type = t;
	m->device[0] = '\0';
	m->open_ms = t == COST_DEV_CPU ? 120 : 250;
	m->xfer_ns = t == COST_DEV_GPU ? 0.05 : 0.4;
	// a zero-copy device handed an image at a later stage wraps it in place or copies it,
	// and writes fresh memory (first touches: 2.6 ns a byte on the 2-core machine)
	m->switch_ns = t == COST_DEV_GPU ? 0.3 : 4.5;
	// a CPU device is zero-copy; a GPU's copies, 16 images at once on the H200's 16 cores
	m->copy_ns = t == COST_DEV_CPU ? 0 : 0.25;
	m->launch_ms = t == COST_DEV_GPU ? 0.03 : 0.1;
	m->load_ms = 10;
	m->compile_ms = 5000;
	m->ident = 0;
	m->nprog = 0;
	for (int i = 0; i < m->nkinds; i++)
		m->kind[i].dev_ns = builtin_dev(m->kind[i].name, t);
}

void cost_init(struct cost_model *m, enum cost_dev_type t)
{
	memset(m, 0, sizeof *m);
	for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		cost_kind(m, builtin[i].kind);
	device_init(m, t);
	m->decode_ns[0] = 13; // wall time on the 2 cores of the development machine
	m->decode_ns[1] = 12;
}

void cost_set_device(struct cost_model *m, const char *name, enum cost_dev_type t)
{
	if (m->dev_type == t && !strcmp(m->device, name))
		return;
	device_init(m, t);
	snprintf(m->device, sizeof m->device, "%s", name);
	m->learned = m->dev_learned = true;
}

struct cost_kind *cost_kind(struct cost_model *m, const char *name)
{
	struct cost_kind *k;
	for (int i = 0; i < m->nkinds; i++)
		if (!strcmp(m->kind[i].name, name))
			return &m->kind[i];
	if (m->nkinds == COST_KINDS || strlen(name) >= sizeof k->name)
		return NULL;
	k = &m->kind[m->nkinds++];
	snprintf(k->name, sizeof k->name, "%s", name);
	k->cpu_ns = k->cpu1_ns = builtin_cpu(name);
	k->dev_ns = builtin_dev(name, m->dev_type);
	return k;
}

void cost_stage(const struct plan_stage *s, struct stage_cost *sc)
{
	if (s->ops->cost) {
		s->ops->cost(s->params, &s->in, &s->plan, sc);
		return;
	}
	*sc = (struct stage_cost){ s->ops->name, (double)geom_bytes(&s->in), false };
	if (!s->plan.passthrough)
		sc->units += (double)geom_bytes(&s->plan.out);
	else if (!s->plan.side_bytes)
		sc->units = 0; // passes the image on and measures nothing: no work
}

void cost_est_free(struct cost_est *e)
{
	free(e->cpu_ms);
	*e = (struct cost_est){ 0 };
}

int cost_estimate(struct cost_model *m, const struct plan *p, int threads, int cores,
		  bool batch, struct cost_est *e)
{
	double out_bytes = (double)geom_bytes(&p->out) + (double)p->side_cl_bytes;
	double share = m->dev_type == COST_DEV_CPU && threads > 0 && threads < cores
			       ? (double)cores / threads : 1;

	*e = (struct cost_est){ .n = p->n, .threads = threads, .cores = cores, .batch = batch };
	// one block: cpu_ms, dev_ms and in_ms, n entries each (in_ms one more)
	e->cpu_ms = calloc(3 * (size_t)p->n + 1, sizeof *e->cpu_ms);
	if (!e->cpu_ms)
		return err_set("out of memory");
	e->dev_ms = e->cpu_ms + p->n;
	e->in_ms = e->dev_ms + p->n;
	for (int i = 0; i < p->n; i++) {
		const struct plan_stage *s = &p->st[i];
		struct stage_cost sc;
		struct cost_kind *k;
		bool has_cl = (!s->ops->run_cpu || s->ops->run_cl) &&
			      (!s->ops->side_cpu || s->ops->side_cl);

		cost_stage(s, &sc);
		k = cost_kind(m, sc.kind);
		bool par = sc.cpu_par && threads > 1;
		double cpu_ns = !k ? other_cpu : par ? k->cpu_ns : k->cpu1_ns;
		double dev_ns = k ? k->dev_ns : other_dev_cpu;
		e->cpu_ms[i] = sc.units * cpu_ns / (par ? threads : 1) / 1e6;
		e->dev_ms[i] = !has_cl ? INFINITY
			       : sc.units > 0 ? share * (sc.units * dev_ns / 1e6 + m->launch_ms) : 0;
		e->in_ms[i] = share * (double)geom_bytes(&s->in) *
			      (m->xfer_ns + (i > 0 ? m->switch_ns : 0)) / 1e6;
	}
	e->out_ms = share * out_bytes * m->xfer_ns / 1e6;
	e->copy_in_ms = p->n > 0 ? (double)geom_bytes(&p->st[0].in) * m->copy_ns / 1e6 : 0;
	e->copy_out_ms = batch ? (double)geom_bytes(&p->out) * m->copy_ns / 1e6 : 0;
	return 0;
}

double cost_cpu_rest(const struct cost_est *e, int k)
{
	double ms = 0;
	for (int i = k; i < e->n; i++)
		ms += e->cpu_ms[i];
	return ms;
}

double cost_dev_rest(const struct cost_est *e, int k)
{
	double ms = k < e->n ? e->in_ms[k] + e->out_ms : 0;
	for (int i = k; i < e->n; i++)
		ms += e->dev_ms[i];
	return ms;
}

int cost_split(const struct cost_est *e, int k, double ready_ms, double *ms)
{
	double best = cost_cpu_rest(e, k), cpu = 0, dev = 0;
	int bj = e->n;

	// dev: the kernels of stages j .. n-1, summed from the end
	for (int j = e->n - 1; ready_ms >= 0 && j >= k; j--)
		dev += e->dev_ms[j];
	for (int j = k; ready_ms >= 0 && j < e->n; j++) {
		double t = (cpu > ready_ms ? cpu : ready_ms) + e->in_ms[j] + dev + e->out_ms +
			   (j == 0 ? e->copy_in_ms : 0) + e->copy_out_ms;
		if (t < best) {
			best = t;
			bj = j;
		}
		cpu += e->cpu_ms[j];
		dev -= e->dev_ms[j];
	}
	if (ms)
		*ms = best;
	return bj;
}

// The record of program name for ch channels, added where new (NULL: the table is full).
static struct cost_program *program(struct cost_model *m, const char *name, int ch, bool add)
{
	struct cost_program *p;
	for (int i = 0; i < m->nprog; i++)
		if (!strcmp(m->prog[i].name, name) && m->prog[i].ch == ch)
			return &m->prog[i];
	if (!add || m->nprog == COST_PROGRAMS || strlen(name) >= sizeof p->name)
		return NULL;
	p = &m->prog[m->nprog++];
	*p = (struct cost_program){ .ch = ch };
	snprintf(p->name, sizeof p->name, "%s", name);
	return p;
}

double cost_build_ms(const struct cost_model *m, const char *name, int ch)
{
	const struct cost_program *p = program((struct cost_model *)m, name, ch, false);
	char *path = ocl_cache_file_of(m->ident, name, ch);
	bool cached = path && access(path, R_OK) == 0;
	free(path);
	if (cached)
		return m->load_ms;
	return p && p->compile_ms > 0 ? p->compile_ms : m->compile_ms;
}

static void average(double *v, double sample)
{
	*v = *v > 0 ? *v + LEARN * (sample - *v) : sample;
}

// An upper bound on *v: lowers it, never raises it.
static void bound(double *v, double sample)
{
	if (sample < *v || !(*v > 0))
		*v = sample;
}

void cost_learn_cpu(struct cost_model *m, const struct stage_cost *sc, int threads, double ms)
{
	struct cost_kind *k;
	// Small runs are mostly the clock's and the threads' overhead.
	if (sc->units < 1e6 || ms < 0.2 || !(k = cost_kind(m, sc->kind)))
		return;
	if (sc->cpu_par && threads > 1)
		average(&k->cpu_ns, ms * 1e6 * threads / sc->units);
	else
		average(&k->cpu1_ns, ms * 1e6 / sc->units);
	m->learned = true;
}

// cost_learn_dev with e the estimate of p from the model as it is now.
static void learn_dev(struct cost_model *m, const struct plan *p, const struct cost_est *e,
		      int from, double ms)
{
	double est = cost_dev_rest(e, from), q;
	int launches = 0;

	for (int i = from; i < e->n; i++)
		launches += e->dev_ms[i] > 0;
	// Where launches are most of it, the rates say little.
	if (!(est - launches * m->launch_ms >= 1) || !(ms > 0))
		return;
	if (from > 0) {
		// What a handover costs: the time beyond the estimate without it, a byte.
		double bytes = (double)geom_bytes(&p->st[from].in), share = e->in_ms[from] /
			(bytes * (m->xfer_ns + m->switch_ns) / 1e6), rest = est - e->in_ms[from] +
			bytes * m->xfer_ns * share / 1e6;
		if (bytes >= 1e6 && share > 0) {
			double s = (ms - rest) * 1e6 / bytes / share;
			average(&m->switch_ns, s > 0 ? s : 0);
			m->learned = m->dev_learned = true;
		}
		return;
	}
	q = ms / est;
	q = q < 0.1 ? 0.1 : q > 10 ? 10 : q;
	for (int i = from; i < p->n; i++) {
		struct stage_cost sc;
		struct cost_kind *k;
		bool seen = false;
		cost_stage(&p->st[i], &sc);
		for (int j = from; j < i && !seen; j++) {
			struct stage_cost before;
			cost_stage(&p->st[j], &before);
			seen = !strcmp(before.kind, sc.kind);
		}
		if (!seen && sc.units > 0 && (k = cost_kind(m, sc.kind)))
			k->dev_ns *= 1 + LEARN * (q - 1);
	}
	m->xfer_ns *= 1 + LEARN * (q - 1);
	m->learned = m->dev_learned = true;
}

void cost_learn_dev(struct cost_model *m, const struct plan *p, const struct cost_est *e, int from,
		    double ms)
{
	struct cost_est now;

	if (cost_estimate(m, p, e->threads, e->cores, e->batch, &now) < 0)
		return;
	learn_dev(m, p, &now, from, ms);
	cost_est_free(&now);
}

void cost_learn_open(struct cost_model *m, double ms, bool upper)
{
	(upper ? bound : average)(&m->open_ms, ms);
	m->learned = m->dev_learned = true;
}

void cost_learn_build(struct cost_model *m, const char *name, int ch, bool from_cache, double ms,
		      bool upper)
{
	struct cost_program *p = program(m, name, ch, !from_cache);
	if (from_cache)
		(upper ? bound : average)(&m->load_ms, ms);
	else if (p)
		(upper ? bound : average)(&p->compile_ms, ms);
	m->learned = m->dev_learned = true;
}

void cost_learn_decode(struct cost_model *m, bool jpeg, double pixels, double ms)
{
	if (pixels < 1e5)
		return;
	average(&m->decode_ns[jpeg ? 0 : 1], ms * 1e6 / pixels);
	m->learned = true;
}

void cost_learn_copy(struct cost_model *m, double bytes, double ms)
{
	if (bytes < 1e6) // the clock's and the threads' overhead
		return;
	average(&m->copy_ns, ms * 1e6 / bytes);
	m->learned = m->dev_learned = true;
}

double cost_decode_ms(const struct cost_model *m, bool jpeg, double pixels)
{
	return pixels * m->decode_ns[jpeg ? 0 : 1] / 1e6;
}
