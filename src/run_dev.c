// SPDX-License-Identifier: MIT
// The device of a run: see run_dev.h.
#include "run_dev.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cost.h"
#include "err.h"
#include "hostmem.h"
#include "ocl.h"

#define DEV_PROGRAMS 64

struct pinned {
	void *ptr;
	size_t bytes;
	bool busy;
	struct pinned *next;
};

// A program asked for (dev_request) and what became of it.
struct dev_program {
	const char *name; // static storage (the stage's)
	int ch;
	enum { WANTED, BUILDING, BUILT } state;
	bool from_cache, learned;
	double ms;
};

struct run_dev {
	struct run_dev_opts o;
	bool named;
	pthread_t thread;
	bool threaded;
	pthread_mutex_t state_mu; // guards the fields below up to `lock`
	pthread_cond_t cv;        // any change of them
	bool started;      // the opening was asked for
	bool opened;       // the opening has ended, one way or another
	bool failed;       // ... or a build, with an error that stops the run (msg)
	bool dropped;      // the device is no longer used (msg warned once)
	bool closing;      // dev_close: the thread ends
	bool busy;         // the thread opens or builds
	bool open_learned;
	char msg[1024];
	double open_t0, open_ms, open_end;
	double queue_ms;
	uint64_t ident;    // ocl_cache_ident, found once the device opened
	struct dev_program prog[DEV_PROGRAMS];
	int nprog;
	struct ocl *ocl;
	pthread_mutex_t lock; // held while an image uses the device, and for each build
	struct pinned *pool;  // at most o.pool blocks, under lock
	pthread_cond_t pool_cv; // a block became free
};

static atomic_bool left_behind;

// Opens the device; state_mu not held.
static struct ocl *open_device(struct run_dev *d, bool *failed, char msg[1024])
{
	int none = 0;
	struct ocl *o = ocl_open(d->o.spec, &none);

	*failed = false;
	msg[0] = '\0';
	if (o && d->o.profile && ocl_profile(o) < 0) {
		*failed = true; // as a device error before decoding ended always was
		snprintf(msg, 1024, "%s", err_msg());
	} else if (o) {
		if (d->o.no_cache)
			ocl_set_cache(o, false);
		if (d->o.lazy) // it builds while the run goes on (see ocl_set_divert)
			ocl_set_divert(o, false);
	} else if (!d->named && !d->o.verify) {
		if (none)
			snprintf(msg, 1024, "no OpenCL device found; %s", d->o.then);
		else
			snprintf(msg, 1024, "%s; %s", err_msg(), d->o.then);
		warn("%s", msg);
	} else {
		*failed = true;
		snprintf(msg, 1024, "%s", err_msg());
	}
	return o;
}

// Builds program p (state_mu not held; the device's lock taken for it). 0 or -1 with err set.
static int build_one(struct run_dev *d, struct dev_program *p)
{
	struct ocl_program_id id = { p->name, p->ch };
	int built0, cached0, built1, cached1, rc;
	double t0;

	dev_lock(d);
	ocl_build_count(d->ocl, &built0, &cached0);
	t0 = now_ms();
	rc = ocl_build(d->ocl, &id, 1);
	p->ms = now_ms() - t0;
	ocl_build_count(d->ocl, &built1, &cached1);
	p->from_cache = cached1 > cached0;
	dev_unlock(d);
	return rc;
}

// Records the opening's outcome (state_mu held): o, NULL where it failed (failed: a named
// device's error, msg its message) or there is no device.
static void set_opened(struct run_dev *d, struct ocl *o, bool failed, const char *msg)
{
	d->ocl = o;
	d->failed = failed;
	d->dropped = !o;
	snprintf(d->msg, sizeof d->msg, "%s", msg);
	d->open_end = now_ms();
	d->open_ms = d->open_end - d->open_t0;
	d->opened = true;
}

static void *device_main(void *arg)
{
	struct run_dev *d = arg;
	bool failed;
	char msg[1024];
	struct ocl *o;

	o = open_device(d, &failed, msg);
	if (o && !failed) {
		dev_lock(d);
		d->ident = ocl_cache_ident(o);
		dev_unlock(d);
	}
	pthread_mutex_lock(&d->state_mu);
	set_opened(d, o, failed, msg);
	pthread_cond_broadcast(&d->cv);
	// Then the programs asked for, in order, until dev_close.
	while (o && !d->failed && !d->dropped) {
		struct dev_program *p = NULL;
		for (int i = 0; i < d->nprog && !p; i++)
			if (d->prog[i].state == WANTED)
				p = &d->prog[i];
		if (!p) {
			d->busy = false;
			if (d->closing)
				break;
			pthread_cond_wait(&d->cv, &d->state_mu);
			continue;
		}
		d->busy = true;
		p->state = BUILDING;
		pthread_mutex_unlock(&d->state_mu);
		int rc = build_one(d, p);
		snprintf(msg, sizeof msg, "%s", rc < 0 ? err_msg() : "");
		pthread_mutex_lock(&d->state_mu);
		p->state = BUILT;
		if (rc < 0 && (d->named || d->o.verify)) {
			d->failed = true;
			snprintf(d->msg, sizeof d->msg, "%s", msg);
		} else if (rc < 0 && !d->dropped) {
			d->dropped = true;
			warn("%s; %s", msg, d->o.then); // one warning: the build log stays out
		}
		pthread_cond_broadcast(&d->cv);
	}
	d->busy = false;
	pthread_cond_broadcast(&d->cv);
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
	pthread_cond_init(&d->cv, NULL);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->pool_cv, NULL);
	if (o->cpu) { // never opened
		d->opened = d->dropped = true;
		return d;
	}
	if (!o->lazy)
		dev_open(d);
	return d;
}

void dev_open(struct run_dev *d)
{
	pthread_mutex_lock(&d->state_mu);
	if (d->started || d->o.cpu) {
		pthread_mutex_unlock(&d->state_mu);
		return;
	}
	d->started = d->busy = true;
	d->open_t0 = now_ms();
	pthread_mutex_unlock(&d->state_mu);
	d->threaded = pthread_create(&d->thread, NULL, device_main, d) == 0;
	if (!d->threaded) {
		// No thread: opened here, and each image builds its programs itself (pipeline_cl).
		bool failed;
		char msg[1024];
		struct ocl *o = open_device(d, &failed, msg);
		pthread_mutex_lock(&d->state_mu);
		set_opened(d, o, failed, msg);
		d->busy = false;
		pthread_mutex_unlock(&d->state_mu);
	}
}

// Waits (state_mu held) until the device is open; returns it, or NULL as dev_get (and at
// once for a lazy device never asked to open).
static struct ocl *wait_open(struct run_dev *d, bool *failed)
{
	if (failed)
		*failed = false;
	if (!d->started && !d->opened)
		return NULL;
	while (!d->opened)
		pthread_cond_wait(&d->cv, &d->state_mu);
	if (failed)
		*failed = d->failed;
	if (d->failed)
		err_set("%s", d->msg);
	return d->dropped || d->failed ? NULL : d->ocl;
}

struct ocl *dev_get(struct run_dev *d, bool *failed)
{
	struct ocl *o;
	pthread_mutex_lock(&d->state_mu);
	o = wait_open(d, failed);
	pthread_mutex_unlock(&d->state_mu);
	return o;
}

static struct dev_program *find(struct run_dev *d, const struct ocl_program_id *p)
{
	for (int i = 0; i < d->nprog; i++)
		if (d->prog[i].ch == p->ch && !strcmp(d->prog[i].name, p->name))
			return &d->prog[i];
	return NULL;
}

void dev_request(struct run_dev *d, const struct ocl_program_id *p, int n)
{
	pthread_mutex_lock(&d->state_mu);
	for (int i = 0; i < n; i++) {
		if (find(d, &p[i]) || d->nprog == DEV_PROGRAMS)
			continue; // past the table's end pipeline_cl builds them itself
		d->prog[d->nprog++] = (struct dev_program){ .name = p[i].name, .ch = p[i].ch };
		// the thread builds it, unless it has ended (the device failed or is gone)
		d->busy = d->busy || (d->threaded && !d->failed && !d->dropped);
	}
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->state_mu);
}

struct ocl *dev_ready(struct run_dev *d, const struct ocl_program_id *p, int n, bool *failed)
{
	struct ocl *o;
	pthread_mutex_lock(&d->state_mu);
	for (;;) {
		bool pending = false;
		o = wait_open(d, failed);
		for (int i = 0; o && d->threaded && i < n && !pending; i++) {
			const struct dev_program *q = find(d, &p[i]);
			pending = q && q->state != BUILT;
		}
		if (!pending)
			break;
		pthread_cond_wait(&d->cv, &d->state_mu);
	}
	pthread_mutex_unlock(&d->state_mu);
	return o;
}

void dev_status(struct run_dev *d, const struct ocl_program_id *p, int n, bool *unbuilt,
		struct dev_status *st)
{
	pthread_mutex_lock(&d->state_mu);
	st->started = d->started;
	st->opened = d->opened;
	st->usable = !(d->opened && (d->failed || d->dropped));
	st->failed = d->opened && d->failed;
	st->opening_ms = d->started ? now_ms() - d->open_t0 : 0;
	st->queue_ms = d->queue_ms;
	for (int i = 0; i < n; i++) {
		const struct dev_program *q = find(d, &p[i]);
		unbuilt[i] = !q || q->state != BUILT;
	}
	pthread_mutex_unlock(&d->state_mu);
}

void dev_queue(struct run_dev *d, double ms)
{
	pthread_mutex_lock(&d->state_mu);
	d->queue_ms += ms;
	if (d->queue_ms < 0)
		d->queue_ms = 0;
	pthread_mutex_unlock(&d->state_mu);
}

void dev_build_times(struct run_dev *d, const struct ocl_program_id *p, int n, double *ms,
		     int *cached)
{
	*ms = 0;
	*cached = 0;
	pthread_mutex_lock(&d->state_mu);
	for (int i = 0; i < n; i++) {
		const struct dev_program *q = find(d, &p[i]);
		if (q && q->state == BUILT) {
			*ms += q->ms;
			*cached += q->from_cache;
		}
	}
	pthread_mutex_unlock(&d->state_mu);
}

const char *dev_build_log(struct run_dev *d)
{
	const char *log;
	pthread_mutex_lock(&d->state_mu);
	log = d->failed && d->ocl ? ocl_build_log(d->ocl) : NULL;
	pthread_mutex_unlock(&d->state_mu);
	return log;
}

bool dev_learn(struct run_dev *d, struct cost_model *m)
{
	struct ocl_about about;
	char name[256];
	bool mine = false;

	pthread_mutex_lock(&d->state_mu);
	if (!d->opened || !d->ocl || ocl_about(d->ocl, &about) < 0)
		goto done;
	snprintf(name, sizeof name, "%s, %s", ocl_device_name(d->ocl), about.driver);
	// A named device teaches the model where it is the one the automatic choice opens.
	if (!ocl_is_default(d->ocl))
		goto done;
	cost_set_device(m, name, about.is_gpu ? COST_DEV_GPU
			   : ocl_cpu_device(d->ocl) ? COST_DEV_CPU : COST_DEV_GPU);
	if (pipeline_zero_copy(d->ocl))
		m->copy_ns = 0; // the device works in the image's own memory
	m->ident = d->ident;
	if (!d->open_learned)
		cost_learn_open(m, d->open_ms, false);
	d->open_learned = true;
	for (int i = 0; i < d->nprog; i++) {
		struct dev_program *q = &d->prog[i];
		if (q->state != BUILT || q->learned)
			continue;
		cost_learn_build(m, q->name, q->ch, q->from_cache, q->ms, false);
		q->learned = true;
	}
	mine = true;
done:
	pthread_mutex_unlock(&d->state_mu);
	return mine;
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
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->state_mu);
}

void *dev_pinned_get(struct run_dev *d, size_t bytes, bool wait)
{
	int cap = d->o.pool > 0 ? d->o.pool : 1;
	size_t largest;
	for (;;) {
		struct pinned *best = NULL, *smallest = NULL, *p;
		int n = 0;
		largest = 0;
		for (p = d->pool; p; p = p->next) {
			n++;
			if (p->bytes > largest)
				largest = p->bytes;
			if (p->busy)
				continue;
			if (p->bytes >= bytes && (!best || p->bytes < best->bytes))
				best = p;
			if (!smallest || p->bytes < smallest->bytes)
				smallest = p;
		}
		if (best) {
			best->busy = true;
			return best->ptr;
		}
		if (n >= cap && smallest) { // a free block too small makes way for a larger one
			struct pinned **pp = &d->pool;
			while (*pp != smallest)
				pp = &(*pp)->next;
			*pp = smallest->next;
			ocl_host_free(d->ocl, smallest->ptr);
			free(smallest);
			n--;
		}
		if (n < cap)
			break;
		if (!wait)
			return NULL;
		pthread_cond_wait(&d->pool_cv, &d->lock);
	}
	// As large as the largest block: the blocks come to fit every image of the run.
	if (bytes < largest)
		bytes = largest;
	struct pinned *p = calloc(1, sizeof *p);
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

bool dev_pinned_is(struct run_dev *d, const void *ptr)
{
	struct pinned *p;
	if (!d || !ptr)
		return false;
	dev_lock(d);
	for (p = d->pool; p && p->ptr != ptr; p = p->next)
		;
	dev_unlock(d);
	return p != NULL;
}

void dev_free(struct run_dev *d, void *ptr)
{
	if (!ptr)
		return;
	if (!d || !d->ocl) {
		hostmem_put(ptr);
		return;
	}
	dev_lock(d);
	struct pinned *p;
	for (p = d->pool; p && p->ptr != ptr; p = p->next)
		;
	if (p) {
		p->busy = false;
		pthread_cond_signal(&d->pool_cv);
	} else {
		ocl_host_free(d->ocl, ptr);
	}
	dev_unlock(d);
}

void dev_close(struct run_dev *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->state_mu);
	d->closing = true;
	pthread_cond_broadcast(&d->cv);
	if (d->threaded && d->busy && d->o.lazy) {
		// Still opening or building for the automatic choice: nothing waits for it. It
		// stores no cache entry from now on, and the process ends under it.
		pthread_mutex_unlock(&d->state_mu);
		ocl_cache_end();
		pthread_detach(d->thread);
		atomic_store(&left_behind, true);
		return;
	}
	pthread_mutex_unlock(&d->state_mu);
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
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->pool_cv);
	free(d);
}

bool dev_left_behind(void)
{
	return atomic_load(&left_behind);
}
