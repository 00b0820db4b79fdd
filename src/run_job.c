// SPDX-License-Identifier: MIT
// One image of a run: its outputs opened, its input read and planned, decoded while the
// device opens (or while the device's pinned memory is found), run through the chain on the
// device or the CPU path, encoded and committed.
#define _DEFAULT_SOURCE // madvise
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "hostmem.h"
#include "ocl.h"
#include "par.h"
#include "run_job.h"

// ---- decoding while the device opens --------------------------------------------------------
// Opening an OpenCL device takes 20 ms (PoCL) to over 200 ms (NVIDIA's driver), decoding an
// 8K image 50 ms (a JPEG in strips) to 1 s, and neither needs the other. So a second thread
// decodes the input into plain memory while the device opens (run_dev.c) and this one, on a
// device with memory of its own, gets the pinned memory the input will be uploaded from (and
// the output downloaded into); the decoded image is then copied there (copy_in), a few ms,
// and uploads at full speed. A zero-copy device (PoCL) reads the decoded image in place: no
// pinned memory, no copy. Meanwhile this thread makes the memory the decoder and the stages
// write present (populate_while_decoding). The decoder prints nothing; err_set() keeps a
// message per thread, so the decoding thread hands its message over in msg.
struct decode_job {
	struct img_reader *rd;
	void *dst;
	pthread_t thread;
	bool started;
	int rc;           // img_reader_decode's
	double ms, end;   // its time, and now_ms() when it ended
	char msg[1024];   // err_msg() of a failure
	atomic_bool done; // set when it has ended
};

static void *decode_thread(void *arg)
{
	struct decode_job *j = arg;
	double t0 = now_ms();

	j->rc = img_reader_decode(j->rd, j->dst);
	if (j->rc < 0)
		snprintf(j->msg, sizeof j->msg, "%s", err_msg());
	j->end = now_ms();
	j->ms = j->end - t0;
	atomic_store(&j->done, true);
	return NULL;
}

// Decodes rd into dst: on a second thread, or where none can be started, here and now.
static void decode_start(struct decode_job *j, struct img_reader *rd, void *dst)
{
	*j = (struct decode_job){ .rd = rd, .dst = dst };
	j->started = pthread_create(&j->thread, NULL, decode_thread, j) == 0;
	if (!j->started)
		decode_thread(j);
}

// ---- memory made present while the input decodes ------------------------------------------
// The first write to each page of fresh memory is a page fault, and on a small virtual
// machine those cost more than the stages (docs/BENCHMARKS.md gives the figures). Linux's
// MADV_POPULATE_WRITE (5.14 and later) makes a range present, without writing to it, in a
// fraction of that time. So while the input decodes, this thread makes the decoder's memory
// present ahead of it (the decoder's bytes are not touched), then, for the CPU path or a
// zero-copy device, the memory the stages will write. It stops as soon as the decoder has
// ended: from then on the run waits for nothing. Only a hint: where the kernel does not have
// it, nothing is made present.
// Only a run of one image does it: populating holds the process's one memory map for long
// stretches, and in a batch every allocation and page fault of the other images waits
// behind it, while the cores it would use are busy with those images anyway (a batch took a
// third longer on 16 cores; docs/BENCHMARKS.md, "Batches"); nor does a batch's memory then
// depend on when its images happen to run alone.
#define POPULATE_CHUNK ((size_t)8 << 20)

// Makes p .. p + bytes present, a chunk at a time, until the decoder j has ended. False
// where the kernel cannot.
static bool populate_while_decoding(const struct decode_job *j, void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p, end = a + bytes;

	if (!p || page <= 0)
		return true;
	a = (a + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
	end = end / (uintptr_t)page * (uintptr_t)page;
	for (; a < end && !atomic_load(&j->done); a += POPULATE_CHUNK)
		if (madvise((void *)a, end - a < POPULATE_CHUNK ? end - a : POPULATE_CHUNK,
			    MADV_POPULATE_WRITE) != 0)
			return false;
	return true;
#else
	(void)j, (void)p, (void)bytes;
	return false;
#endif
}

// Waits for the decoder, if it runs.
static void decode_join(struct decode_job *j)
{
	if (j->started)
		pthread_join(j->thread, NULL);
	j->started = false;
}

// Memory for the decoded input: hostmem's, aligned to a page and whole pages, as a
// zero-copy device wants to read host memory in place (ocl_wrap_alloc's alignment, which is
// a page on PoCL; pipeline_cl uploads it where a device wants more). No huge pages: they
// were not faster on every image, and at times waited long for the kernel to find them.
static void *image_alloc(size_t bytes)
{
	return hostmem_get(bytes, NULL);
}

// The decoded image into pinned memory, in pieces on every core.
struct copy_in {
	uint8_t *dst;
	const uint8_t *src;
	size_t bytes, piece;
};

static void copy_in_piece(void *ctx, int task, int worker)
{
	const struct copy_in *c = ctx;
	size_t at = (size_t)task * c->piece;
	(void)worker;
	memcpy(c->dst + at, c->src + at, c->bytes - at < c->piece ? c->bytes - at : c->piece);
}

void job_copy_in(void *dst, const void *src, size_t bytes)
{
	struct copy_in c = { dst, src, bytes, (size_t)4 << 20 };
	while (bytes / c.piece >= INT_MAX)
		c.piece *= 2;
	par_run(par_threads(), (int)((bytes + c.piece - 1) / c.piece), copy_in_piece, &c);
}

// "1.5 GiB" for messages.
static void bytes_str(char buf[32], uint64_t bytes)
{
	if (bytes >= (uint64_t)1 << 30)
		snprintf(buf, 32, "%.1f GiB", (double)bytes / (double)((uint64_t)1 << 30));
	else
		snprintf(buf, 32, "%.1f MiB", (double)bytes / (double)((uint64_t)1 << 20));
}

// Refuses a chain whose planned images cannot fit: more than the machine's memory, or than
// the address-space limit (ulimit -v). Better now than killed half-way, when the kernel's
// out-of-memory killer would leave the temporary output file behind. The plan counts the
// images only (the input and two of the largest size, one more for --verify); decoders and
// drivers need a little more, so this refuses the impossible, not the tight.
static int memory_check(const struct plan *c, bool verify)
{
	uint64_t need = (uint64_t)c->host_bytes + (verify ? c->max_bytes : 0), have = 0;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	const char *what = NULL;
	char need_s[32], have_s[32];
	struct rlimit rl;

	if (pages > 0 && page > 0) {
		have = (uint64_t)pages * (uint64_t)page;
		what = "this machine's memory";
	}
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (!have || (uint64_t)rl.rlim_cur < have)) {
		have = rl.rlim_cur;
		what = "the address-space limit (ulimit -v)";
	}
	if (!have || need <= have)
		return 0;
	bytes_str(need_s, need);
	bytes_str(have_s, have);
	return err_set("the chain's images need %s of memory, more than %s, %s", need_s, what,
		       have_s);
}

// Pinned memory for the input and, once that is uploaded, the output (pipeline_cl's
// reuse_bytes), as large as the larger of the two, found while the input decodes rather
// than allocated after the stages (when the device is to take the chain from its first
// stage). --verify downloads no output. NULL where none can be had: the input is then
// uploaded from plain memory and the output gets memory of its own.
// In a run of one image the block is found while the input decodes; in a batch, once it has
// decoded, the pool's blocks being few (dev_pinned_get waits for one).
static void *pinned_for(struct run_ctx *x, struct run_dev *d, const struct plan *p,
			size_t *bytes)
{
	size_t in_bytes = geom_bytes(&p->in), out_bytes = x->o->verify ? 0 : geom_bytes(&p->out);
	void *ptr;
	*bytes = in_bytes > out_bytes ? in_bytes : out_bytes;
	dev_lock(d);
	ptr = dev_pinned_get(d, *bytes, true);
	dev_unlock(d);
	return ptr;
}

// Plain memory for bytes, present: fresh memory by a write to each page; NULL where there
// is none.
static void *image_alloc_present(size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t step = page > 0 ? (size_t)page : 4096;
	bool fresh;
	uint8_t *p = hostmem_get(bytes, &fresh);
	for (size_t i = 0; p && fresh && i < bytes; i += step)
		p[i] = 0;
	return p;
}

// In a batch, the device's pinned blocks go back to its pool once the device is done with
// the image: the result is copied into plain memory for the encoder (*spare, out_bytes,
// where the job made it present before it took a block; else new), so that a few blocks
// serve every image (pinning is slow, and the driver pins one block at a time). In a run
// of one image nothing waits for the block. 0, or -1 with err set.
static int pinned_release(struct run_ctx *x, struct job_dev *jd, struct img *in,
			  struct img *res, void **spare, size_t out_bytes)
{
	if (x->single)
		return 0;
	if (jd->res_dev && dev_pinned_is(jd->res_dev, res->data)) {
		size_t bytes = img_bytes(res);
		void *plain = *spare && bytes <= out_bytes ? *spare : image_alloc(bytes);
		if (!plain)
			return err_set("out of memory for a %dx%d image", res->w, res->h);
		if (plain == *spare)
			*spare = NULL;
		double t0 = now_ms();
		job_copy_in(plain, res->data, bytes);
		path_learn_copy(x, jd, (double)bytes, now_ms() - t0);
		if (in->data == res->data)
			in->data = NULL;
		dev_free(jd->res_dev, res->data);
		res->data = plain;
		jd->res_dev = NULL;
	}
	if (jd->d && dev_pinned_is(jd->d, in->data)) {
		dev_free(jd->d, in->data);
		in->data = NULL;
	}
	return 0;
}

// --expect: compares the chain's result with the golden image the template names for
// input, on the device d that ran the stages (NULL: the CPU path; both with --verify; see
// cmp_run), the metrics on stderr (the input's path at the end). 0 the same, 1 they differ
// (err says so), 2 a --verify difference (err says where), -1 with err set when the golden
// image cannot be read or the device fails.
static int job_expect(const struct run_opts *o, const struct job_input *input,
		      const struct img *res, struct run_dev *d)
{
	struct img gold = { 0 };
	struct cmp_result cr;
	char *path = jobs_expand(o->expect, input);
	int rc = -1;

	if (!path || cmp_load(path, &o->limits, &gold) < 0)
		goto done;
	rc = cmp_run(d, o->verify, res, &gold, &o->cmp, &cr);
	if (rc != 0) {
		rc = rc > 0 ? 2 : -1;
		goto done;
	}
	err_stderr_lock(); // one whole line, whichever threads print at once, never diverted
	rc = cmp_print(stderr, &cr, &o->cmp, input->path);
	err_stderr_unlock();
	if (rc == 0 && (!cr.same || cr.mismatch)) {
		if (cr.mismatch)
			err_set("differs from %s in %s", path, cr.mismatch);
		else
			err_set("differs from %s: %llu pixels differ, %llu allowed", path,
				(unsigned long long)cr.differing, (unsigned long long)cr.allowed);
		rc = 1;
	}
done:
	free(path);
	free(gold.data);
	return rc;
}

int job_run(struct run_ctx *x, const struct job_input *input, struct job_result *r)
{
	const struct run_opts *o = x->o;
	struct img_reader *rd = NULL;
	struct job_dev jd = { .slot = -1 };
	struct job_path jp = { 0 };
	struct img in = { 0 }, res = { 0 };
	struct plan plan = { 0 };
	struct timing tm = { .t0 = now_ms() };
	struct decode_job dec = { 0 };
	struct pipeline_mem mem = { 0 };
	struct img_meta meta = { 0 };
	void *pinned = NULL, *decoded = NULL, *out_plain = NULL;
	size_t pinned_bytes = 0, reuse_bytes = 0;
	int status, rc, expect = 0;
	bool dev_failed = false, dev_error = false, taken = false, jpeg, waited = false;
	double open_end = 0, t0;
	uint64_t held = 0; // bytes counted in the budget of bytes in flight
	struct geom g;

	*r = (struct job_result){ .slot = -1 };
	status = outs_plan(x, input, &r->outs);
	if (status)
		goto fail;
	status = EXIT_RUN;
	if (o->skip_existing && outs_exist(&r->outs)) {
		r->skipped = true;
		status = 0;
		goto fail;
	}
	// The outputs first: a missing or read-only directory, or a directory named as an
	// output, is reported before the input is even read.
	if (outs_open(&r->outs, o->report != NULL) < 0)
		goto fail;
	rd = img_reader_open(input->path, &o->limits);
	if (!rd)
		goto fail;
	g = img_reader_geom(rd);
	img_reader_meta_take(rd, &meta);
	r->g = g;
	if (plan_make(&plan, x->c, &g, o->limits.max_pixels) < 0) {
		status = EXIT_USAGE;
		goto fail;
	}
	if (r->outs.f && img_format_check(r->outs.fmt, plan.out.ch, NULL) < 0) {
		err_prefix("%s", r->outs.path);
		status = EXIT_USAGE;
		goto fail;
	}
	if (memory_check(&plan, o->verify) < 0)
		goto fail;
	// --verify keeps one more image; so may the device taking over mid-chain (the CPU
	// path's image it was given, and its own two)
	held = (uint64_t)plan.host_bytes + (o->verify || x->aut.on ? plan.max_bytes : 0);
	budget_take(x, held);
	if (o->time && x->single) {
		tm.stage_ms = calloc((size_t)plan.n + 1, sizeof *tm.stage_ms);
		if (!tm.stage_ms)
			goto fail;
		tm.run.stage_ms = tm.stage_ms;
	}
	in = (struct img){ g.w, g.h, g.ch, image_alloc(geom_bytes(&g) + img_reader_slack(rd)) };
	if (!in.data) {
		err_set("out of memory for a %dx%d image", g.w, g.h);
		goto fail;
	}
	share_now(x);
	jpeg = img_reader_format(rd) == FMT_JPEG;
	jd.d = devs_take(x->devs, &jd.slot);
	taken = true;
	if (path_plan(x, &jd, &plan, jpeg, &jp, &tm) < 0)
		goto fail;
	decode_start(&dec, rd, in.data);
	// A device that is to take the chain from its first stage is waited for while the
	// input decodes (its opening, then its programs' builds), and its pinned memory found.
	if (jd.d && jp.planned == 0 && (plan.n > 0 || !jp.auto_on)) {
		jd.dev = dev_ready(jd.d, jp.prog, jp.nprog, &dev_failed);
		waited = true;
	}
	if (jd.d)
		dev_open_times(jd.d, &tm.open_ms, &open_end);
	if (jd.dev && !pipeline_zero_copy(jd.dev) && x->single) {
		t0 = now_ms();
		pinned = pinned_for(x, jd.d, &plan, &pinned_bytes);
		open_end = now_ms();
		tm.open_ms += open_end - t0;
	}
	// While the input still decodes: its memory made present ahead of the decoder, then,
	// for the CPU path or a zero-copy device, the memory the stages will write. Not having
	// that memory yet is no error: the run then makes its own, or says why it cannot.
	if (!dev_failed && dec.started && x->single &&
	    populate_while_decoding(&dec, in.data, geom_bytes(&g)) &&
	    (!jd.dev || pipeline_zero_copy(jd.dev)) && !o->verify) {
		if (pipeline_mem_alloc(&plan, jd.dev, &mem) == 0 &&
		    populate_while_decoding(&dec, mem.out, mem.bytes))
			populate_while_decoding(&dec, mem.tmp, mem.bytes);
	}
	decode_join(&dec);
	tm.decode_ms = dec.ms;
	tm.decode_strips = img_reader_strips(rd);
	tm.open_waited = waited;
	tm.open_wait_ms = waited && open_end > dec.end ? open_end - dec.end : 0;
	if (dev_failed) // a device error before a decode error, as when it was opened first
		goto fail;
	if (dec.rc < 0) {
		err_set("%s", dec.msg);
		goto fail;
	}
	if (!o->verify)
		path_learn_decode(x, jpeg, &g, dec.ms);
	img_reader_close(rd);
	rd = NULL;
	if (jd.dev && !pipeline_zero_copy(jd.dev) && !x->single) {
		// The result's plain memory first, its page faults paid before a block is held.
		out_plain = image_alloc_present(geom_bytes(&plan.out));
		pinned = pinned_for(x, jd.d, &plan, &pinned_bytes);
	}
	if (pinned) {
		t0 = now_ms();
		job_copy_in(pinned, in.data, geom_bytes(&g));
		tm.copy_in_ms = now_ms() - t0;
		tm.copy_in_bytes = geom_bytes(&g);
		path_learn_copy(x, &jd, (double)tm.copy_in_bytes, tm.copy_in_ms);
		// The output may be downloaded over the input: the CPU path taking over from an
		// automatically chosen device that fails then needs the decoded image as it was,
		// so that stays until the device is done; elsewhere it goes now.
		if (!o->verify && !dev_named(jd.d))
			decoded = in.data;
		else
			hostmem_put(in.data);
		in.data = pinned;
		pinned = NULL;
		reuse_bytes = o->verify ? 0 : pinned_bytes;
	}

	t0 = now_ms();
	rc = job_stages(x, &jd, &jp, &plan, &in, &decoded, reuse_bytes, &mem, &res, &tm,
			&dev_error);
	tm.stages_ms = now_ms() - t0;
	devs_give(x->devs, jd.slot);
	taken = false;
	if (rc == 1)
		status = EXIT_VERIFY;
	if (rc != 0 || pinned_release(x, &jd, &in, &res, &out_plain, geom_bytes(&plan.out)) < 0)
		goto fail;
	hostmem_put(out_plain);
	out_plain = NULL;
	r->slot = jd.dev && !tm.on_cpu ? jd.slot : -1;
	r->device_ms = tm.device_ms;
	r->dev_from = tm.dev_from;
	if (devs_multi(x->devs))
		devs_label(x->devs, r->slot, r->device, sizeof r->device);
	else
		snprintf(r->device, sizeof r->device, "%s",
			 r->slot < 0 ? "cpu" : ocl_device_name(jd.dev));
	hostmem_put(decoded);
	decoded = NULL;

	if (o->expect) {
		expect = job_expect(o, input, &res, r->slot >= 0 ? jd.d : NULL);
		if (expect == 2)
			status = EXIT_VERIFY;
		if (expect < 0 || expect == 2)
			goto fail;
	}
	share_now(x);
	t0 = now_ms();
	if (o->report) {
		r->sums = calloc((size_t)r->outs.nside + 1, sizeof *r->sums);
		if (!r->sums) {
			err_set("out of memory");
			goto fail;
		}
	}
	img_meta_orient(&meta, plan.out.orient); // 1 after autoorient
	if (outs_write(&r->outs, o, &plan, &res, &meta, r->sums) < 0)
		goto fail;
	tm.encode_ms = now_ms() - t0;
	if (o->time && x->single) {
		tm.on_cpu = tm.on_cpu || !jd.dev;
		if (jd.d) {
			struct dev_status st;
			dev_status(jd.d, NULL, 0, NULL, &st);
			tm.opened = st.started;
			dev_open_times(jd.d, &tm.open_ms, &open_end);
		}
		if (jd.d && !tm.on_cpu) {
			struct ocl_program_id prog[64];
			tm.programs = plan_programs_from(&plan, tm.dev_from, prog, 64);
			dev_build_times(jd.d, prog, tm.programs, &tm.run.build_ms,
					&tm.programs_cached);
		}
		err_stderr_lock(); // a device may still build, its stderr diverted
		time_report(&tm, &plan, o->time_json);
		err_stderr_unlock();
	}
	status = expect ? EXIT_RUN : 0; // what differs is still written, for a look at it
fail:
	if (status && !r->skipped) {
		snprintf(r->error, sizeof r->error, "%s", err_msg());
		// An OpenCL failure reported as an error: a failed build's log goes with it.
		if (dev_error && jd.dev) {
			dev_lock(jd.d);
			if (ocl_build_log(jd.dev))
				err_print(ocl_build_log(jd.dev));
			dev_unlock(jd.d);
		} else if ((dev_error || dev_failed) && jd.d && dev_build_log(jd.d)) {
			err_print(dev_build_log(jd.d));
		}
		outs_free(&r->outs); // removes what was not committed
		free(r->sums);
		r->sums = NULL;
	}
	r->status = status;
	r->decode_ms = tm.decode_ms;
	r->stages_ms = tm.stages_ms;
	r->encode_ms = tm.encode_ms;
	decode_join(&dec); // a failure while the input was decoding: it must finish first
	img_reader_close(rd);
	hostmem_put(decoded);
	hostmem_put(out_plain);
	dev_free(jd.d, in.data);
	dev_free(jd.d, pinned);
	dev_free(jd.res_dev, res.data);
	if (taken)
		devs_give(x->devs, jd.slot);
	pipeline_mem_free(&mem);
	if (jd.d && !o->verify) { // the device's opening and builds, into the run's model
		pthread_mutex_lock(&x->aut.mu);
		dev_learn(jd.d, &x->aut.m);
		pthread_mutex_unlock(&x->aut.mu);
	}
	if (!status)
		prepare_note(&x->aut, &jp);
	path_free(&jp);
	img_meta_free(&meta);
	plan_free(&plan);
	free(tm.stage_ms);
	if (held)
		budget_give(x, held);
	r->total_ms = now_ms() - tm.t0;
	return status;
}
