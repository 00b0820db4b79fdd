// SPDX-License-Identifier: MIT
// Threads for independent tasks: a shared counter hands out task numbers.
#define _GNU_SOURCE // sched_getaffinity, CPU_COUNT

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "err.h"
#include "par.h"
#include "parse.h"

static _Thread_local int share;

void par_set_share(int n)
{
	share = n;
}

// The threads the process may use, the same on every thread.
static int threads_all(void)
{
	static int cached;
	const char *env = getenv("CLIMG_THREADS");
	long n = 0;

	if (cached)
		return cached;
	if (env && *env && !parse_long(env, 1, PAR_MAX_THREADS, &n)) {
		warn("CLIMG_THREADS must be a whole number from 1 to %d, not '%s'; ignored",
		     PAR_MAX_THREADS, env);
		n = 0;
	}
	if (n == 0) {
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set) == 0)
			n = CPU_COUNT(&set);
		if (n <= 0)
			n = sysconf(_SC_NPROCESSORS_ONLN);
		if (n <= 0)
			n = 1;
		if (n > PAR_DEFAULT_MAX)
			n = PAR_DEFAULT_MAX;
	}
	cached = (int)n;
	return cached;
}

int par_threads(void)
{
	int n = threads_all();
	return share > 0 && share < n ? share : n;
}

struct par_job {
	void (*fn)(void *ctx, int task, int worker);
	void *ctx;
	int ntasks;
	atomic_int next;
};

struct par_worker {
	struct par_job *job;
	int id;
};

static void work(struct par_job *job, int id)
{
	for (;;) {
		int t = atomic_fetch_add(&job->next, 1);

		if (t >= job->ntasks)
			return;
		job->fn(job->ctx, t, id);
	}
}

static void *thread_main(void *arg)
{
	struct par_worker *w = arg;

	work(w->job, w->id);
	return NULL;
}

void par_run(int nworkers, int ntasks, void (*fn)(void *ctx, int task, int worker), void *ctx)
{
	struct par_job job = {fn, ctx, ntasks, 0};
	struct par_worker *w = NULL;
	pthread_t *tid = NULL;
	int i, started = 0;

	if (nworkers > ntasks)
		nworkers = ntasks;
	if (nworkers > 1) {
		w = malloc(sizeof(*w) * (size_t)nworkers);
		tid = malloc(sizeof(*tid) * (size_t)nworkers);
	}
	if (w && tid)
		for (i = 1; i < nworkers; i++) {
			w[i].job = &job;
			w[i].id = i;
			if (pthread_create(&tid[i], NULL, thread_main, &w[i]) != 0)
				break;
			started = i;
		}
	work(&job, 0);
	for (i = 1; i <= started; i++)
		pthread_join(tid[i], NULL);
	free(w);
	free(tid);
}
