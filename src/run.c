// SPDX-License-Identifier: MIT
// The run layer's schedule (see run.h): worker threads take the inputs in order, each image
// whole (decode, plan, stages, encode, commit), so that images rather than strips of one are
// the unit of parallel work; the devices are shared (run_devs.h) and the images in flight are
// bounded in count (-j) and in bytes (budget_take).
#include "run.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "clock.h"
#include "cost_profile.h"
#include "err.h"
#include "hostmem.h"
#include "ocl.h"
#include "par.h"
#include "progress.h"
#include "report.h"
#include "run_job.h"

// Pinned blocks per device (dev_pinned_get): one for the image on the device and others
// for those being copied in and out around it (the device takes one image at a time); so
// few that pinning, which the driver does slowly and one block at a time, is paid a few
// times a run rather than once for each worker.
#define PINNED_BLOCKS 4

struct batch {
	struct run_ctx x;
	const struct job_input *in;
	size_t n;
	size_t *order;       // the inputs in the order they start: the largest files first
	atomic_size_t next;  // the next of order to start
	atomic_bool stop;    // --fail-fast: start no more
	pthread_mutex_t mu;  // guards the counts and the output of messages
	size_t done, failed, skipped, differ;
	struct progress *progress;
	struct report *report;
	bool report_failed;
	double decode_ms, stages_ms, encode_ms;
	size_t *dev_images; // per slot of the run's devices, then the CPU path's
	double *dev_ms;     // likewise: the stages' time holding the device
	size_t later;       // images the device took from a later stage than the first
};

// ---- the bytes in flight --------------------------------------------------------------------
// Each image holds, from its planning to its commit, its decoded input and two images of the
// largest size a stage makes (plan.host_bytes; one more with --verify). Images start only
// while the sum stays within the budget, half the machine's memory (or of ulimit -v), so a
// batch of 100,000 files needs no more memory than one of 100; an image larger than the
// budget runs alone.

static uint64_t budget_default(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t have = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)1 << 32;
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)rl.rlim_cur < have)
		have = rl.rlim_cur;
	return have / 2;
}

// The memory an image frees stays with the process for the next images. With the C
// library's defaults each large block has memory mapped afresh and handed back when freed;
// in a process of many threads every first touch of a fresh page is a fault taken under the
// process's one memory map, and every unmapping stops each core the process runs on to flush
// its TLB, so the workers wait on one another. The images' own blocks are kept by hostmem
// (up to the most bytes the images in flight held at once, which the budget above bounds);
// the rest (the codecs' buffers) the C library keeps: a batch takes them from its heaps, not
// from mappings of their own, and never trims those heaps.
static void batch_keep_memory(void)
{
#ifdef __GLIBC__
	mallopt(M_MMAP_MAX, 0);
	mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

void budget_take(struct run_ctx *x, uint64_t bytes)
{
	pthread_mutex_lock(&x->budget_mu);
	while (x->in_flight > 0 && x->used + bytes > x->budget)
		pthread_cond_wait(&x->budget_cv, &x->budget_mu);
	x->used += bytes;
	x->in_flight++;
	if (x->used > x->peak) { // what the images gave back may stay for the next ones
		x->peak = x->used;
		hostmem_keep(x->peak);
	}
	pthread_mutex_unlock(&x->budget_mu);
}

void budget_give(struct run_ctx *x, uint64_t bytes)
{
	pthread_mutex_lock(&x->budget_mu);
	x->used -= bytes;
	x->in_flight--;
	pthread_cond_broadcast(&x->budget_cv);
	pthread_mutex_unlock(&x->budget_mu);
}

void share_now(struct run_ctx *x)
{
	int active;
	pthread_mutex_lock(&x->budget_mu);
	active = x->in_flight > 0 ? x->in_flight : 1;
	pthread_mutex_unlock(&x->budget_mu);
	par_set_share(x->cores / active > 1 ? x->cores / active : 1);
}

// ---- the order images start in --------------------------------------------------------------
// The largest files first, so that the last images to finish are small ones and the cores
// are busy to the end (longest processing time first). Outputs do not depend on the order;
// %i and --shard count in the list's own order.

struct sized {
	size_t index;
	off_t bytes;
};

static int by_size_desc(const void *a, const void *b)
{
	const struct sized *p = a, *q = b;
	if (p->bytes != q->bytes)
		return p->bytes < q->bytes ? 1 : -1;
	return p->index < q->index ? -1 : p->index > q->index;
}

static size_t *start_order(const struct job_input *in, size_t n)
{
	struct sized *s = malloc(n * sizeof *s);
	size_t *order = malloc(n * sizeof *order);
	if (!s || !order) {
		free(s);
		free(order);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		s[i] = (struct sized){ i, stat(in[i].path, &st) == 0 ? st.st_size : 0 };
	}
	qsort(s, n, sizeof *s, by_size_desc);
	for (size_t i = 0; i < n; i++)
		order[i] = s[i].index;
	free(s);
	return order;
}

// ---- one finished image -----------------------------------------------------------------------

// Adds path and its sum to outs (n so far).
static void add_output(struct report_output *outs, int *n, const char *path,
		       const struct outfile_sum *sum)
{
	outs[*n] = (struct report_output){ .path = path, .bytes = sum->bytes };
	memcpy(outs[*n].sha256, sum->sha256, sizeof outs[*n].sha256);
	++*n;
}

// The --report line of a finished image.
static void report_line(struct batch *b, const struct job_input *in, const struct job_result *r)
{
	bool ok = !r->status && !r->skipped;
	struct report_output *outs = calloc((size_t)r->outs.nside + 1, sizeof *outs);
	struct report_entry e = {
		.index = in->index, .input = in->path,
		.status = r->skipped ? "skipped" : ok ? "ok" : "failed",
		.error = ok || r->skipped ? NULL : r->error,
		.w = r->g.w, .h = r->g.h, .ch = r->g.ch, .outputs = outs,
		.device = r->device[0] ? r->device : NULL,
		.decode_ms = r->decode_ms, .stages_ms = r->stages_ms, .encode_ms = r->encode_ms,
		.total_ms = r->total_ms,
	};
	int rc = -1;
	if (outs) {
		if (ok && r->sums && r->outs.path)
			add_output(outs, &e.noutputs, r->outs.path, &r->sums[0]);
		for (int i = 0; ok && r->sums && i < r->outs.nside; i++)
			add_output(outs, &e.noutputs, r->outs.side[i].path, &r->sums[1 + i]);
		rc = report_write(b->report, &e);
	} else {
		err_set("out of memory");
	}
	if (rc < 0 && !b->report_failed) {
		char line[1100];
		b->report_failed = true;
		snprintf(line, sizeof line, "climg: %s", err_msg());
		progress_message(b->progress, line);
	}
	free(outs);
}

// Counts a finished image and reports a failure in one line naming the input (printed
// after the batch's lock is let go: it may wait for a build that holds stderr).
static void finish(struct batch *b, const struct job_input *in, const struct job_result *r)
{
	char line[1200];
	bool say = false;
	pthread_mutex_lock(&b->mu);
	b->done++;
	b->decode_ms += r->decode_ms;
	b->stages_ms += r->stages_ms;
	b->encode_ms += r->encode_ms;
	if (!r->status && !r->skipped && b->dev_images) {
		int k = r->slot >= 0 ? r->slot : devs_count(b->x.devs);
		b->dev_images[k]++;
		b->dev_ms[k] += r->device_ms;
		b->later += r->slot >= 0 && r->dev_from > 0;
	}
	if (r->skipped) {
		b->skipped++;
	} else if (r->status) {
		b->failed++;
		b->differ += r->status == EXIT_VERIFY;
		// Messages about the input itself already start with its name.
		size_t len = strlen(in->path);
		if (!strncmp(r->error, in->path, len) && r->error[len] == ':')
			snprintf(line, sizeof line, "climg: %s", r->error);
		else
			snprintf(line, sizeof line, "climg: %s: %s", in->path, r->error);
		say = true;
		if (b->x.o->fail_fast)
			atomic_store(&b->stop, true);
	}
	if (b->report)
		report_line(b, in, r);
	progress_update(b->progress, (long)b->done, (long)b->failed);
	pthread_mutex_unlock(&b->mu);
	if (say)
		progress_message(b->progress, line);
}

static void *worker(void *arg)
{
	struct batch *b = arg;
	while (!atomic_load(&b->stop)) {
		size_t k = atomic_fetch_add(&b->next, 1), i;
		struct job_result r;
		if (k >= b->n)
			break;
		i = b->order[k];
		job_run(&b->x, &b->in[i], &r);
		finish(b, &b->in[i], &r);
		outs_free(&r.outs);
		free(r.sums);
	}
	return NULL;
}

// --time for a batch: the totals. Each line under err_stderr_lock (a device may still
// build, its stderr diverted); the devices' labels fetched outside it, as devs_label may
// wait on a device that warns under its own lock.
static void time_totals(const struct batch *b, double ms)
{
	double s = ms / 1e3;
	err_stderr_lock();
	fprintf(stderr, "climg: time: %zu images in %.3f s, %.2f images/s (%zu failed, %zu skipped)\n",
		b->done, s, s > 0 ? (double)b->done / s : 0, b->failed, b->skipped);
	fprintf(stderr, "climg: time: summed over the images: decode %.1f ms, stages %.1f ms, "
		"encode %.1f ms\n",
		b->decode_ms, b->stages_ms, b->encode_ms);
	// Where the automatic choice ran the images.
	if (b->dev_images && b->x.aut.on)
		fprintf(stderr, "climg: time: the device took %zu images (%zu of them after the "
			"CPU path ran their first stages), the CPU path %zu\n",
			b->dev_images[0], b->later, b->dev_images[1]);
	err_stderr_unlock();
	// Which device took how many images: with --devices only (without, one device takes
	// them all, or the CPU path once it is dropped).
	for (int k = 0; b->dev_images && devs_multi(b->x.devs) && k <= devs_count(b->x.devs); k++) {
		bool cpu = k == devs_count(b->x.devs);
		char label[200];
		if (cpu && !b->dev_images[k])
			continue;
		devs_label(b->x.devs, cpu ? -1 : k, label, sizeof label);
		err_stderr_lock();
		fprintf(stderr, "climg: time: device %s: %zu images, %.2f images/s",
			cpu ? "cpu (the CPU path)" : label, b->dev_images[k],
			s > 0 ? (double)b->dev_images[k] / s : 0);
		if (cpu)
			fputs("\n", stderr);
		else
			fprintf(stderr, ", busy %.1f ms (%.0f%%)\n", b->dev_ms[k],
				ms > 0 ? 100 * b->dev_ms[k] / ms : 0);
		err_stderr_unlock();
	}
}

// --verify's line once every image it compared was the same on both paths (none with -q,
// none where one differed, whose message says where): for a batch, one line for all.
static void verify_line(const struct batch *b)
{
	size_t images = b->done - b->failed - b->skipped;
	int n = b->x.c->n;
	if (!b->x.o->verify || err_quiet || b->differ || images == 0)
		return;
	if (n == 0)
		fprintf(stderr, "climg: verify: no stage to compare\n");
	else if (b->n == 1)
		fprintf(stderr, "climg: verify: %d stage%s, OpenCL and CPU identical\n", n,
			n == 1 ? "" : "s");
	else
		fprintf(stderr, "climg: verify: %zu image%s, %d stage%s each, OpenCL and CPU "
			"identical\n",
			images, images == 1 ? "" : "s", n, n == 1 ? "" : "s");
}

// One input: on this thread, its failure left in err for the caller, its status as it was.
static int run_single(struct batch *b)
{
	struct job_result r;
	int status = job_run(&b->x, &b->in[0], &r);
	b->done = 1;
	b->skipped = r.skipped;
	b->failed = status && !r.skipped;
	b->differ = status == EXIT_VERIFY;
	if (b->report)
		report_line(b, &b->in[0], &r);
	if (status && !r.skipped)
		err_set("%s", r.error);
	outs_free(&r.outs);
	free(r.sums);
	return status;
}

// What the arguments alone make impossible, found before any work: a bad template, several
// inputs writing one file, an output whose format cannot be told. EXIT_USAGE with err set.
static int check_outputs(struct batch *b)
{
	const struct run_opts *o = b->x.o;
	const struct chain *c = b->x.c;
	const char **tmpls = calloc((size_t)c->n * STAGE_FILES_MAX + 1, sizeof *tmpls);
	struct job_list l = { (struct job_input *)b->in, b->n, b->n };
	int n = 0, rc = 0;
	bool jpeg = false, png = false; // whether any output is JPEG, PNG

	if (!tmpls) {
		err_set("out of memory");
		return EXIT_RUN;
	}
	if (o->output && jobs_template_check(o->output) < 0)
		rc = EXIT_USAGE;
	tmpls[n++] = o->output;
	for (int i = 0; !rc && i < c->n; i++) {
		struct stage_file files[STAGE_FILES_MAX];
		int k = c->st[i].ops->files ? c->st[i].ops->files(c->st[i].params, files) : 0;
		for (int f = 0; !rc && f < k; f++) {
			if (jobs_template_check_for(c->st[i].token, files[f].path) < 0)
				rc = EXIT_USAGE;
			tmpls[n++] = files[f].path;
		}
	}
	if (!rc && b->n > 1 && o->output && strcmp(o->output, "-") &&
	    !jobs_template_varies(o->output)) {
		err_set("%zu inputs would all write '%s': give -o a template such as "
			"'out/%%n.png' (%%n: the input's name; see climg --help)",
			b->n, o->output);
		rc = EXIT_USAGE;
	}
	for (size_t i = 0; !rc && i < b->n; i++) {
		struct job_outs j;
		rc = outs_plan(&b->x, &b->in[i], &j);
		for (int k = -1; !rc && k < j.nside; k++) {
			enum img_format f = k < 0 ? j.fmt : j.side[k].image ? j.side[k].fmt : FMT_NONE;
			jpeg |= f == FMT_JPEG;
			png |= f == FMT_PNG;
		}
		outs_free(&j);
	}
	if (!rc && b->n > 1 && jobs_check_collisions(&l, tmpls, n) < 0)
		rc = EXIT_USAGE;
	free(tmpls);
	// once for the whole batch: an option that changes nothing is likely a slip
	if (!rc && o->quality_given && !jpeg)
		warn("--quality has no effect: no output is JPEG (.jpg, .jpeg or --format jpeg)");
	if (!rc && o->png_level_given && !png)
		warn("--png-level has no effect: no output is PNG");
	return rc;
}

int run_check_outputs(const struct run_opts *o, const struct chain *c,
		      const struct job_input *in, size_t n)
{
	struct batch b = { .x = { .o = o, .c = c, .single = n == 1 }, .in = in, .n = n };

	return check_outputs(&b);
}

int run_list_devices(FILE *out)
{
	return ocl_list_devices(out);
}

bool run_left_behind(void)
{
	return dev_left_behind();
}

// The automatic choice, where no option or variable names a path: its model (kept in the
// cache directory unless --no-cache) and CLIMG_AUTO_SWITCH, a test setting.
static void auto_start(struct run_auto *a, const struct run_opts *o, size_t n)
{
	const char *env = getenv("CLIMG_AUTO_SWITCH");
	char *end = NULL;
	long k;

	a->on = !o->device && !o->devices && !o->cpu && !o->verify;
	a->force = -1;
	a->keep = !o->no_cache && !ocl_faults_set();
	a->left = n;
	pthread_mutex_init(&a->mu, NULL);
	if (a->keep)
		cost_profile_load(&a->m);
	else
		cost_init(&a->m, COST_DEV_UNKNOWN);
	if (!a->on || !env || !*env)
		return;
	k = strtol(env, &end, 10);
	if (*end || k < 0 || k > CHAIN_MAX_STAGES)
		warn("CLIMG_AUTO_SWITCH must be a stage number from 0 to %d, not '%s'; ignored",
		     CHAIN_MAX_STAGES, env);
	else
		a->force = (int)k;
}

int run_batch(const struct run_opts *o, const struct chain *c, const struct job_input *in,
	      size_t n)
{
	struct batch b = { .x = { .o = o, .c = c, .single = n == 1 }, .in = in, .n = n };
	int cores = par_threads(), workers = o->jobs > 0 ? o->jobs : cores, status;
	double t0 = now_ms();
	struct run_dev_opts dopts = { .spec = o->device, .cpu = o->cpu, .verify = o->verify,
				       .profile = o->time && n == 1, .no_cache = o->no_cache };
	bool usage = false;
	pthread_t *tid = NULL;
	int started = 0;
	char saved[1024];

	status = check_outputs(&b);
	if (status)
		return status;
	if (n > 0 && (size_t)workers > n)
		workers = (int)n;
	dopts.pool = PINNED_BLOCKS;
	auto_start(&b.x.aut, o, n);
	// The automatic choice opens the device only where an image asks for it; the test
	// setting that forces a switch opens it at once, as a named device is.
	dopts.lazy = b.x.aut.on && (b.x.aut.force < 0 || b.x.aut.force >= c->n);
	// The devices start opening now (a list that names none is a usage error, before any
	// work), while the first images decode.
	if (n > 0 && !(b.x.devs = devs_start(&dopts, o->devices, &usage))) {
		pthread_mutex_destroy(&b.x.aut.mu);
		return usage ? EXIT_USAGE : EXIT_RUN;
	}
	if (o->report && !(b.report = report_open(o->report))) {
		devs_close(b.x.devs);
		pthread_mutex_destroy(&b.x.aut.mu);
		return EXIT_RUN;
	}
	if (n == 0)
		goto done;
	b.x.budget = budget_default();
	b.x.cores = cores;
	b.x.workers = workers;
	pthread_mutex_init(&b.mu, NULL);
	pthread_mutex_init(&b.x.budget_mu, NULL);
	pthread_cond_init(&b.x.budget_cv, NULL);
	if (n == 1) {
		status = run_single(&b);
		err_stderr_lock(); // a device may still build, its stderr diverted
		verify_line(&b);
		err_stderr_unlock();
		goto done;
	}
	batch_keep_memory();
	b.order = start_order(in, n);
	if (!b.order) {
		err_set("out of memory");
		status = EXIT_RUN;
		goto done;
	}
	b.progress = progress_new((long)n, o->progress);
	b.dev_images = calloc((size_t)devs_count(b.x.devs) + 1, sizeof *b.dev_images);
	b.dev_ms = calloc((size_t)devs_count(b.x.devs) + 1, sizeof *b.dev_ms);
	if (!b.dev_ms) { // the totals are only --time's
		free(b.dev_images);
		b.dev_images = NULL;
	}
	tid = calloc((size_t)workers, sizeof *tid);
	for (int i = 1; tid && i < workers; i++) {
		if (pthread_create(&tid[i], NULL, worker, &b) != 0)
			break;
		started = i;
	}
	worker(&b); // this thread is a worker too
	par_set_share(0);
	for (int i = 1; i <= started; i++)
		pthread_join(tid[i], NULL);
	free(tid);
	progress_end(b.progress);
	if (o->time)
		time_totals(&b, now_ms() - t0);
	err_stderr_lock(); // a device may still build, its stderr diverted
	verify_line(&b);
	if (b.failed) {
		fprintf(stderr, "climg: %zu of %zu inputs failed%s\n", b.failed, n,
			atomic_load(&b.stop) && b.done < n ? "; --fail-fast started no more" : "");
		status = b.differ ? EXIT_VERIFY : EXIT_RUN;
	}
	err_stderr_unlock();
done:
	free(b.order);
	snprintf(saved, sizeof saved, "%s", err_msg()); // a single image's failure, for main
	if (b.report && report_close(b.report) < 0 && !b.report_failed) {
		if (n == 1 && !status) {
			status = EXIT_RUN; // main prints it
		} else {
			fprintf(stderr, "climg: %s\n", err_msg());
			err_set("%s", saved);
			b.report_failed = n > 1;
		}
	}
	if (b.report_failed && !status)
		status = EXIT_RUN;
	if (n > 1)
		err_clear(); // every failure of a batch was reported as it happened
	devs_close(b.x.devs);
	hostmem_keep(0);
	if (b.x.aut.keep && !o->verify)
		cost_profile_save(&b.x.aut.m);
	if (b.x.aut.keep && b.x.aut.on && b.x.aut.force < 0)
		prepare_spawn(&b.x.aut);
	pthread_mutex_destroy(&b.x.aut.mu);
	free(b.dev_images);
	free(b.dev_ms);
	if (n) {
		pthread_mutex_destroy(&b.mu);
		pthread_mutex_destroy(&b.x.budget_mu);
		pthread_cond_destroy(&b.x.budget_cv);
	}
	return status;
}
