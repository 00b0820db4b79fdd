// SPDX-License-Identifier: MIT
// The device of a run: see run_dev.h.
#include "run_dev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "ocl.h"


struct pinned {
	void *ptr;
	size_t bytes;
	bool busy;
	struct pinned *next;
};

struct run_dev {
	struct run_dev_opts o;
	bool named;
	pthread_t thread;
	bool threaded;
	pthread_mutex_t state_mu; // guards the fields below up to `lock`
	pthread_cond_t opened_cv;
	bool opened;       // the opening has ended, one way or another
	bool failed;       // ... with an error that stops the run (msg)
	bool dropped;      // the device is no longer used (msg warned once)
	char msg[1024];
	double open_ms, open_end;
	struct ocl *ocl;
	pthread_mutex_t lock; // held while an image uses the device
	struct pinned *pool;
};

static void *open_main(void *arg)
{
	struct run_dev *d = arg;
	double t0 = now_ms();
	int none = 0;
	struct ocl *o = ocl_open(d->o.spec, &none);
	bool failed = false;
	char msg[1024] = "";

	if (o && d->o.profile && ocl_profile(o) < 0) {
		failed = true; // as a device error before decoding ended always was
		snprintf(msg, sizeof msg, "%s", err_msg());
	} else if (o) {
		if (d->o.no_cache)
			ocl_set_cache(o, false);
	} else if (!d->named && !d->o.verify) {
		if (none)
			snprintf(msg, sizeof msg, "no OpenCL device found; %s", d->o.then);
		else
			snprintf(msg, sizeof msg, "%s; %s", err_msg(), d->o.then);
		warn("%s", msg);
	} else {
		failed = true;
		snprintf(msg, sizeof msg, "%s", err_msg());
	}
	pthread_mutex_lock(&d->state_mu);
	d->ocl = o;
	d->failed = failed;
	d->dropped = !o;
	snprintf(d->msg, sizeof d->msg, "%s", msg);
	d->open_end = now_ms();
	d->open_ms = d->open_end - t0;
	d->opened = true;
	pthread_cond_broadcast(&d->opened_cv);
	pthread_mutex_unlock(&d->state_mu);
	return NULL;
}

struct run_dev *dev_start(const struct run_dev_opts *o)
{
	struct run_dev *d = calloc(1, sizeof *d);
	if (!d) {
		err_set("out of memory");
		return NULL;
	}
	d->o = *o;
	if (d->o.spec && !*d->o.spec)
		d->o.spec = NULL;
	d->named = d->o.spec != NULL && !d->o.then;
	if (!d->o.then)
		d->o.then = "using the CPU path";
	pthread_mutex_init(&d->state_mu, NULL);
	pthread_cond_init(&d->opened_cv, NULL);
	pthread_mutex_init(&d->lock, NULL);
	if (o->cpu) {
		d->opened = d->dropped = true;
		return d;
	}
	d->threaded = pthread_create(&d->thread, NULL, open_main, d) == 0;
	if (!d->threaded)
		open_main(d);
	return d;
}

struct ocl *dev_get(struct run_dev *d, bool *failed)
{
	struct ocl *o;
	pthread_mutex_lock(&d->state_mu);
	while (!d->opened)
		pthread_cond_wait(&d->opened_cv, &d->state_mu);
	if (failed)
		*failed = d->failed;
	if (d->failed)
		err_set("%s", d->msg);
	o = d->dropped || d->failed ? NULL : d->ocl;
	pthread_mutex_unlock(&d->state_mu);
	return o;
}

bool dev_named(const struct run_dev *d)
{
	return d->named;
}

void dev_open_times(const struct run_dev *d, double *open_ms, double *end_ms)
{
	*open_ms = d->o.cpu ? 0 : d->open_ms;
	*end_ms = d->open_end;
}

void dev_lock(struct run_dev *d)
{
	pthread_mutex_lock(&d->lock);
}

void dev_unlock(struct run_dev *d)
{
	pthread_mutex_unlock(&d->lock);
}

void dev_drop(struct run_dev *d, const char *msg)
{
	pthread_mutex_lock(&d->state_mu);
	if (!d->dropped) {
		d->dropped = true;
		warn("%s; %s", msg, d->o.then);
	}
	pthread_mutex_unlock(&d->state_mu);
}

void *dev_pinned_get(struct run_dev *d, size_t bytes)
{
	struct pinned *best = NULL, *p;
	for (p = d->pool; p; p = p->next)
		if (!p->busy && p->bytes >= bytes && (!best || p->bytes < best->bytes))
			best = p;
	if (best) {
		best->busy = true;
		return best->ptr;
	}
	p = calloc(1, sizeof *p);
	if (!p) {
		err_set("out of memory");
		return NULL;
	}
	p->ptr = ocl_host_alloc(d->ocl, bytes);
	if (!p->ptr) {
		free(p);
		return NULL;
	}
	p->bytes = bytes;
	p->busy = true;
	p->next = d->pool;
	d->pool = p;
	return p->ptr;
}

// Gives free blocks beyond the pool's size (o.pool: one per image in flight) back to the
// driver, the smallest first.
static void pool_trim(struct run_dev *d)
{
	for (;;) {
		struct pinned **pp, **smallest = NULL;
		int nfree = 0;
		for (pp = &d->pool; *pp; pp = &(*pp)->next) {
			if ((*pp)->busy)
				continue;
			nfree++;
			if (!smallest || (*pp)->bytes < (*smallest)->bytes)
				smallest = pp;
		}
		if (nfree <= (d->o.pool > 0 ? d->o.pool : 1))
			return;
		struct pinned *p = *smallest;
		*smallest = p->next;
		ocl_host_free(d->ocl, p->ptr);
		free(p);
	}
}

void dev_free(struct run_dev *d, void *ptr)
{
	if (!ptr)
		return;
	if (!d || !d->ocl) {
		free(ptr);
		return;
	}
	dev_lock(d);
	struct pinned *p;
	for (p = d->pool; p && p->ptr != ptr; p = p->next)
		;
	if (p) {
		p->busy = false;
		pool_trim(d);
	} else {
		ocl_host_free(d->ocl, ptr);
	}
	dev_unlock(d);
}

void dev_close(struct run_dev *d)
{
	if (!d)
		return;
	if (d->threaded)
		pthread_join(d->thread, NULL);
	while (d->pool) {
		struct pinned *p = d->pool;
		d->pool = p->next;
		ocl_host_free(d->ocl, p->ptr);
		free(p);
	}
	ocl_close(d->ocl);
	pthread_mutex_destroy(&d->state_mu);
	pthread_cond_destroy(&d->opened_cv);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
