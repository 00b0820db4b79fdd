// SPDX-License-Identifier: MIT
// Where one image's stages run: the CPU path, the device, or the CPU path first and then,
// from a stage boundary on, the device. --cpu, --device (CLIMG_DEVICE), --devices and
// --verify force their path; otherwise the cost model (cost.h) chooses, twice:
//   - Before the input decodes (path_plan): whether to open the device at all. Only where
//     the device, ready when it will be (its opening, then its programs' builds, counted
//     from now, less the decoding they overlap), is estimated to finish the chain sooner
//     than the CPU path does, even with the open's own CPU time (about its duration on one
//     core) taken from the image and a quarter of the opening and builds as margin. A batch
//     weighs the opening and the builds against the images that start once the device is
//     ready. Where the device would pay once its programs are in the binary cache but not
//     while they still compile, the run marks them (jp->prepare) and, once done, leaves
//     them to a process of its own that compiles and stores them for later runs
//     (run_prepare.c): a compile in this process, even at the lowest priority, slows the
//     image (it holds the process's locks for loading libraries and mapping memory).
//   - At each stage boundary (decide): the split that cost_split finds best for the rest of
//     the chain, with the device ready when the model now expects it. The device takes the
//     rest of the chain when that split starts now: the run waits for it to be ready, hands
//     it the image (from pinned memory on a device with memory of its own) and runs the
//     remaining stages there. Otherwise the CPU path runs the next stage.
// CLIMG_AUTO_SWITCH=K (a test setting) makes the device take the chain from stage K + 1
// (0: all of it; K >= the stage count: none), as the automatic choice would, fallback
// included. An automatically chosen device that fails is dropped with one warning and the
// CPU path goes on from the image the device was given; --device makes that an error. Each
// image's stage times, and the device's opening and builds, teach the model (cost.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "hostmem.h"
#include "ocl.h"
#include "par.h"
#include "run_job.h"

// How long until the device can take the stages from `from` on, as the model expects it
// now: what is left of its opening, the builds still to come (each as loaded from the
// binary cache where as_cached), and the device time of the images ahead of this one on
// it. -1 where it never will (none, failed, dropped). *started: whether it opens at all.
static double ready_ms(struct run_ctx *x, struct job_dev *jd, const struct plan *p, int from,
		       bool as_cached, bool *started)
{
	struct run_auto *a = &x->aut;
	struct ocl_program_id prog[64];
	bool unbuilt[64];
	int n = plan_programs_from(p, from, prog, 64);
	struct dev_status st;
	double r = 0;

	*started = false;
	if (!jd->d)
		return -1;
	dev_status(jd->d, prog, n, unbuilt, &st);
	*started = st.started;
	if (!st.usable)
		return -1;
	pthread_mutex_lock(&a->mu);
	if (!st.opened) {
		// An opening that takes longer than expected has some time to go still.
		double left = a->m.open_ms - st.opening_ms;
		r += left > a->m.open_ms / 10 ? left : a->m.open_ms / 10;
	}
	for (int i = 0; i < n; i++)
		if (unbuilt[i])
			r += as_cached ? a->m.load_ms : cost_build_ms(&a->m, prog[i].name, prog[i].ch);
	pthread_mutex_unlock(&a->mu);
	return r + st.queue_ms;
}

int path_plan(struct run_ctx *x, struct job_dev *jd, const struct plan *p, bool jpeg,
	      struct job_path *jp, struct timing *tm)
{
	const struct run_opts *o = x->o;
	struct run_auto *a = &x->aut;
	int threads = par_threads(), cores = x->cores > 0 ? x->cores : 1, n = p->n, j, rc;
	double cpu, best = 0, r, rd, rc_ms, decode, open_ms;
	size_t left;
	bool started, want, unknown;

	*jp = (struct job_path){ .planned = n };
	tm->dev_from = n;
	jp->nprog = plan_programs(p, jp->prog, 64);
	pthread_mutex_lock(&a->mu);
	rc = cost_estimate(&a->m, p, threads, cores, !x->single, &jp->e);
	left = a->left > 0 ? a->left-- : 1;
	decode = cost_decode_ms(&a->m, jpeg, (double)p->in.w * p->in.h);
	unknown = a->m.dev_type == COST_DEV_UNKNOWN;
	open_ms = a->m.open_ms;
	pthread_mutex_unlock(&a->mu);
	if (rc < 0)
		return -1;
	if (!a->on) {
		jp->planned = o->cpu ? n : 0;
		snprintf(tm->why, sizeof tm->why, "%s",
			 o->cpu ? "--cpu" : o->verify ? "--verify runs both paths"
			 : o->devices ? "--devices gave the image a device"
				      : "the device is named (--device or CLIMG_DEVICE)");
		if (jd->d && !o->cpu)
			dev_request(jd->d, jp->prog, jp->nprog);
		return 0;
	}
	jp->auto_on = true;
	if (a->force >= 0) {
		struct ocl_program_id prog[64];
		jp->planned = a->force < n ? a->force : n;
		snprintf(tm->why, sizeof tm->why, "CLIMG_AUTO_SWITCH=%d (a test setting)", a->force);
		if (jp->planned < n && jd->d) {
			dev_open(jd->d);
			dev_request(jd->d, prog, plan_programs_from(p, jp->planned, prog, 64));
		}
		return 0;
	}
	cpu = cost_cpu_rest(&jp->e, 0);
	r = ready_ms(x, jd, p, 0, false, &started);
	if (r < 0) {
		snprintf(tm->why, sizeof tm->why, "the CPU path: the device failed or is missing");
		return 0;
	}
	rd = r > decode ? r - decode : 0;
	j = cost_split(&jp->e, 0, rd, &best);
	if (started) {
		want = j < n;
	} else if (left > 1) {
		// A batch: once under way, lanes images run at once on the CPU path (the workers,
		// or the images left), each on cores / lanes threads, whatever share of the cores
		// this one has now (the first image of a batch starts alone). Until the device is
		// ready (r) the lanes take about r / c images each, c an image's time there; the
		// rest, after, are then shared between the lanes and the device (ready0 an image),
		// which ends them after * (c / lanes - 1 / (lanes / c + 1 / ready0)) sooner than
		// the lanes alone would. That wall time must beat a quarter of r as margin.
		int lanes = x->workers < (int)left ? x->workers : (int)left, j0;
		int lane_threads = lanes > 0 && cores / lanes > 1 ? cores / lanes : 1;
		double c = cpu, ready0, after, gain;
		struct cost_est es;
		pthread_mutex_lock(&a->mu);
		rc = lane_threads == threads ? 1
					     : cost_estimate(&a->m, p, lane_threads, cores, true, &es);
		pthread_mutex_unlock(&a->mu);
		if (rc == 0) {
			c = cost_cpu_rest(&es, 0);
			j0 = cost_split(&es, 0, 0, &ready0);
			cost_est_free(&es);
		} else {
			j0 = cost_split(&jp->e, 0, 0, &ready0);
		}
		lanes = lanes > 0 ? lanes : 1;
		c = c > 0 ? c : 1;
		after = (double)left - r / c * lanes;
		gain = after * (c / lanes - 1 / (lanes / c + 1 / (ready0 > 0 ? ready0 : 1e-3)));
		want = j0 < n && after > 0 && gain > r / 4;
	} else {
		// Opening the device takes about its own time from one core; and what the device
		// costs before it computes (its opening and builds, r) is the least certain part
		// of the estimate (on a CPU device the opening also slows the decoding it
		// overlaps), so a quarter of it is kept as margin.
		want = j < n && best + open_ms / cores + r / 4 < cpu;
	}
	if (want) {
		struct ocl_program_id prog[64];
		dev_open(jd->d);
		dev_request(jd->d, prog, plan_programs_from(p, j < n ? j : 0, prog, 64));
	} else {
		// Would it pay with its programs in the binary cache (and, for a device never
		// opened here, with an opening in half the time assumed)? Then a process of its
		// own builds them for later runs once this one is done (run_prepare.c).
		rc_ms = ready_ms(x, jd, p, 0, true, &started) - (unknown ? open_ms / 2 : 0);
		jp->prepare = (rc_ms < r || unknown) &&
			      cost_split(&jp->e, 0, rc_ms > decode ? rc_ms - decode : 0, NULL) < n;
	}
	jp->planned = want ? j : n;
	if (jp->planned < n)
		snprintf(tm->why, sizeof tm->why,
			 "the device from stage %d: estimated %.1f ms (the device ready in %.1f ms "
			 "after decoding), %.1f ms on the CPU path",
			 jp->planned + 1, best, rd, cpu);
	else
		snprintf(tm->why, sizeof tm->why,
			 "the CPU path: estimated %.1f ms, %.1f ms with the device (ready in %.1f ms "
			 "after decoding%s)%s",
			 cpu, j < n ? best : cost_dev_rest(&jp->e, 0) + rd, rd,
			 started ? "" : ", not open: its opening would take about as long from one core",
			 jp->prepare ? "; its programs are built for later runs" : "");
	return 0;
}

// At the boundary before stage k: the stage the device is to take the chain from (k: now),
// or n for the CPU path's next stage (or all of them).
static int decide(struct run_ctx *x, struct job_dev *jd, struct job_path *jp,
		  const struct plan *p, int k, struct timing *tm)
{
	struct run_auto *a = &x->aut;
	double r, best;
	bool started;
	int j;

	if (!jp->auto_on || !jd->d)
		return p->n;
	if (a->force >= 0)
		return jp->planned >= k ? jp->planned : p->n;
	r = ready_ms(x, jd, p, k, false, &started);
	if (r < 0 || !started)
		return p->n;
	j = cost_split(&jp->e, k, r, &best);
	if (j == k)
		snprintf(tm->why, sizeof tm->why,
			 "the device from stage %d: estimated %.1f ms (ready in %.1f ms), %.1f ms on "
			 "the CPU path",
			 k + 1, best, r, cost_cpu_rest(&jp->e, k));
	else if (jp->planned == k)
		snprintf(tm->why, sizeof tm->why,
			 "the CPU path from stage %d: the device was not ready as soon as expected "
			 "(in %.1f ms), estimated %.1f ms against %.1f ms",
			 k + 1, r, cost_cpu_rest(&jp->e, k), cost_dev_rest(&jp->e, k) + r);
	return j;
}

// Folds a CPU stage's time into the model.
static void learn_cpu(struct run_ctx *x, const struct plan_stage *s, int threads, double ms)
{
	struct stage_cost sc;
	cost_stage(s, &sc);
	pthread_mutex_lock(&x->aut.mu);
	cost_learn_cpu(&x->aut.m, &sc, threads, ms);
	pthread_mutex_unlock(&x->aut.mu);
}

void path_learn_decode(struct run_ctx *x, bool jpeg, const struct geom *g, double ms)
{
	pthread_mutex_lock(&x->aut.mu);
	cost_learn_decode(&x->aut.m, jpeg, (double)g->w * g->h, ms);
	pthread_mutex_unlock(&x->aut.mu);
}

void path_learn_copy(struct run_ctx *x, const struct job_dev *jd, double bytes, double ms)
{
	if (!jd->dev || !ocl_is_default(jd->dev) || x->o->verify)
		return;
	pthread_mutex_lock(&x->aut.mu);
	cost_learn_copy(&x->aut.m, bytes, ms);
	pthread_mutex_unlock(&x->aut.mu);
}

// The device runs stages from k on from image at (the job's *in where k is 0, else the
// CPU path's image, which the device leaves intact): waits until it is ready, copies the
// image into pinned memory where the device has memory of its own (at stage 0 the job did,
// the plain copy in *decoded), and runs them. 0 with res set; 1 where the CPU path is to go
// on from `at` (the device is gone: dropped with a warning, or failed on this image, and at
// is as it was); -1 with err set where the run must stop (a named device failed).
static int run_device(struct run_ctx *x, struct job_dev *jd, struct job_path *jp,
		      const struct plan *plan, int k, struct img *at, void **decoded,
		      size_t reuse_bytes, struct pipeline_mem *mem, struct img *res,
		      struct timing *tm, bool *dev_error)
{
	struct run_times *times = tm->stage_ms ? &tm->run : NULL;
	struct ocl_program_id prog[64];
	int np = plan_programs_from(plan, k, prog, 64);
	bool failed = false, named = dev_named(jd->d), model;
	struct img img = *at;
	void *pin = NULL;
	double est, t0;
	int rc;

	dev_request(jd->d, prog, np);
	t0 = now_ms();
	jd->dev = dev_ready(jd->d, prog, np, &failed);
	if (k > 0)
		tm->switch_wait_ms = now_ms() - t0;
	if (failed) {
		*dev_error = true;
		return -1;
	}
	if (!jd->dev)
		return 1;
	pthread_mutex_lock(&x->aut.mu);
	model = dev_learn(jd->d, &x->aut.m);
	pthread_mutex_unlock(&x->aut.mu);
	if (k > 0 && !pipeline_zero_copy(jd->dev)) {
		// Moved into pinned memory, from which it uploads at full speed and into which
		// the output downloads (as the job does for stage 0).
		size_t in_bytes = img_bytes(at), out_bytes = geom_bytes(&plan->out);
		reuse_bytes = in_bytes > out_bytes ? in_bytes : out_bytes;
		dev_lock(jd->d);
		pin = dev_pinned_get(jd->d, reuse_bytes, false); // the job may hold one already
		dev_unlock(jd->d);
		if (pin) {
			job_copy_in(pin, at->data, in_bytes);
			img.data = pin;
		} else {
			reuse_bytes = 0;
		}
	} else if (k > 0) {
		reuse_bytes = 0;
	}
	est = cost_dev_rest(&jp->e, k);
	dev_queue(jd->d, est);
	dev_lock(jd->d);
	t0 = now_ms();
	// mem: made while decoding (stage 0), or the CPU path's other block (zero-copy only)
	rc = pipeline_cl_from(plan, k, jd->dev, &img, reuse_bytes,
			      k == 0 || pipeline_zero_copy(jd->dev) ? mem : NULL, res, times);
	tm->device_ms = now_ms() - t0;
	if (rc < 0 && !named)
		devs_drop(x->devs, jd->slot, err_msg()); // one warning, a build log included
	dev_unlock(jd->d);
	dev_queue(jd->d, -est);
	if (rc == 0) {
		jd->res_dev = jd->d;
		tm->dev_from = k;
		if (k == 0)
			*at = img; // the input's pinned memory may have become the output's
		if (pin && res->data != pin)
			dev_free(jd->d, pin);
		if (model && !x->o->verify) {
			pthread_mutex_lock(&x->aut.mu);
			cost_learn_dev(&x->aut.m, plan, &jp->e, k, tm->device_ms);
			pthread_mutex_unlock(&x->aut.mu);
		}
		return 0;
	}
	dev_free(jd->d, pin);
	tm->device_ms = 0;
	if (named) {
		*dev_error = true;
		return -1;
	}
	// Every path gives the same bytes, from the image as it was given to the device.
	if (k == 0 && *decoded) {
		dev_free(jd->d, at->data);
		at->data = *decoded;
		*decoded = NULL;
	}
	return 1;
}

// The automatic choice (and --cpu, and the CPU path once the device is gone): the CPU path
// a stage at a time, the device taking the rest where decide says so.
static int stages_auto(struct run_ctx *x, struct job_dev *jd, struct job_path *jp,
		       const struct plan *plan, struct img *in, void **decoded, size_t reuse_bytes,
		       struct pipeline_mem *mem, struct img *res, struct timing *tm, bool *dev_error)
{
	struct pipeline_cpu_run r;
	struct img mid = { 0 }; // the CPU path's image the device was given (owned)
	struct pipeline_mem spare = { 0 }; // the CPU path's other block, for the device
	bool running = false;
	int k = 0, n = plan->n, rc = 0;

	for (;;) {
		if (k < n && decide(x, jd, jp, plan, k, tm) == k) {
			struct img *at = in;
			if (running) {
				running = false;
				if (pipeline_cpu_end(&r, &mid, &spare) < 0)
					return -1;
				at = &mid;
				mem = &spare;
			}
			rc = run_device(x, jd, jp, plan, k, at, decoded, reuse_bytes, mem, res, tm,
					dev_error);
			pipeline_mem_free(&spare);
			if (rc <= 0) {
				hostmem_put(mid.data);
				return rc;
			}
			tm->fell_back = true;
			jp->auto_on = false; // the CPU path from here on
			if (pipeline_cpu_begin(&r, plan, k, at, NULL) < 0) {
				hostmem_put(mid.data);
				return -1;
			}
			running = true;
		}
		if (!running) {
			if (pipeline_cpu_begin(&r, plan, 0, in, mem) < 0)
				return -1;
			running = true;
		}
		if (k == n)
			break;
		int threads = par_threads();
		double t0 = now_ms();
		pipeline_cpu_step(&r, NULL);
		double ms = now_ms() - t0;
		if (tm->stage_ms)
			tm->stage_ms[k] = ms;
		learn_cpu(x, &plan->st[k], threads, ms);
		k++;
	}
	rc = pipeline_cpu_end(&r, res, NULL);
	hostmem_put(mid.data);
	if (tm->dev_from == n || tm->fell_back)
		tm->on_cpu = true;
	return rc;
}

// A device given by --device, CLIMG_DEVICE or --devices: the whole chain there. A device of
// a --devices set that fails is dropped and the image redone on another (devs_take), on the
// CPU path once none is left (or where devs_enter sends the image there); jd follows it.
static int stages_forced(struct run_ctx *x, struct job_dev *jd, struct job_path *jp,
			 const struct plan *plan, struct img *in, void **decoded,
			 size_t reuse_bytes, struct pipeline_mem *mem, struct img *res,
			 struct timing *tm, bool *dev_error)
{
	double px = (double)plan->in.w * (double)plan->in.h, t0;
	bool failed = false;
	int rc;

	for (;;) {
		if (!jd->dev && jd->d && devs_multi(x->devs)) {
			// The device taken for the image is gone (a build failed): another, or the
			// CPU path once none is left (devs_take skips the dropped).
			devs_give(x->devs, jd->slot);
			jd->d = devs_take(x->devs, &jd->slot);
			if (jd->d) {
				dev_request(jd->d, jp->prog, jp->nprog);
				jd->dev = dev_ready(jd->d, jp->prog, jp->nprog, &failed);
				if (failed)
					return -1;
				continue;
			}
		}
		if (!jd->dev || !devs_enter(x->devs, jd->slot, px)) {
			bool entered = jd->dev != NULL;
			t0 = now_ms();
			jp->planned = plan->n;
			tm->dev_from = plan->n;
			rc = stages_auto(x, jd, jp, plan, in, decoded, 0, mem, res, tm, dev_error);
			if (entered)
				devs_leave(x->devs, -1, rc == 0 ? now_ms() - t0 : 0, px);
			return rc;
		}
		rc = run_device(x, jd, jp, plan, 0, in, decoded, reuse_bytes, mem, res, tm,
				dev_error);
		devs_leave(x->devs, jd->slot, rc == 0 ? tm->device_ms : 0, px);
		if (rc <= 0)
			return rc;
		reuse_bytes = 0;
		tm->fell_back = true;
		if (!devs_multi(x->devs)) {
			jd->dev = NULL;
			continue;
		}
		pipeline_mem_free(mem); // made for the device that failed
		devs_give(x->devs, jd->slot);
		jd->d = devs_take(x->devs, &jd->slot);
		jd->dev = NULL;
		if (jd->d) {
			dev_request(jd->d, jp->prog, jp->nprog);
			jd->dev = dev_ready(jd->d, jp->prog, jp->nprog, &failed);
		}
		if (failed)
			return -1;
		tm->fell_back = false;
	}
}

int job_stages(struct run_ctx *x, struct job_dev *jd, struct job_path *jp, const struct plan *plan,
	       struct img *in, void **decoded, size_t reuse_bytes, struct pipeline_mem *mem,
	       struct img *res, struct timing *tm, bool *dev_error)
{
	struct run_times *times = tm->stage_ms ? &tm->run : NULL;
	double t0;
	int rc;

	if (x->o->verify) {
		dev_lock(jd->d);
		t0 = now_ms();
		rc = pipeline_verify(plan, jd->dev, in, res, times);
		tm->device_ms = now_ms() - t0;
		dev_unlock(jd->d);
		jd->res_dev = jd->d;
		tm->dev_from = 0;
		*dev_error = rc < 0;
		return rc;
	}
	if (!jp->auto_on && jp->planned == 0)
		return stages_forced(x, jd, jp, plan, in, decoded, reuse_bytes, mem, res, tm,
				     dev_error);
	return stages_auto(x, jd, jp, plan, in, decoded, reuse_bytes, mem, res, tm, dev_error);
}

void path_free(struct job_path *jp)
{
	cost_est_free(&jp->e);
}
