// SPDX-License-Identifier: MIT
// The automatic choice's parts, in-process (tests/t-auto.sh runs this): cost_split on
// hand-built estimates, the model's estimates and learning, its profile kept and refused,
// and the chain split between the CPU path and the device at every stage boundary (the
// CPU path a stage at a time, then pipeline_cl_from) giving the CPU path's bytes and side
// outputs. Needs CLIMG_CACHE_DIR pointing at an empty scratch directory.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/cost.h"
#include "../src/cost_profile.h"
#include "../src/err.h"
#include "../src/ocl.h"
#include "../src/pipeline.h"

#include "check.h"

// Estimates of n stages from the arrays given (in_ms n entries).
static struct cost_est est(int n, double *cpu, double *dev, double *in, double out)
{
	return (struct cost_est){ .n = n, .cpu_ms = cpu, .dev_ms = dev, .in_ms = in,
				  .out_ms = out };
}

static void test_split(void)
{
	double cpu[] = { 10, 100, 10 }, dev[] = { 1, 1, 1 }, in[] = { 2, 2, 2 }, ms = 0;
	struct cost_est e = est(3, cpu, dev, in, 2);
	double cpu1[] = { 5 }, dev1[] = { 3 }, in1[] = { 1 };
	struct cost_est one = est(1, cpu1, dev1, in1, 1);
	double lcpu[] = { 50, 50, 50, 50 }, ldev[] = { 60, 60, 1, 1 }, lin[] = { 1, 1, 1, 1 };
	struct cost_est later = est(4, lcpu, ldev, lin, 1);

	// The device ready now: all of it there, 2 + 3 + 2 ms against 120.
	CHECK("cost_split: a ready device takes the chain", cost_split(&e, 0, 0, &ms) == 0 && ms == 7);
	// Never ready, or ready too late: the CPU path.
	CHECK("cost_split: no device, the CPU path", cost_split(&e, 0, -1, &ms) == 3 && ms == 120);
	CHECK("cost_split: a device ready late, the CPU path", cost_split(&e, 0, 1000, NULL) == 3);
	// Ready in 15 ms: the CPU path runs stage 1 (10 ms) meanwhile, then the device the rest
	// (max(10, 15) + 2 + 2 + 2 = 21 against 15 + 7 = 22 from stage 1 and 120 on the CPU).
	CHECK("cost_split: the CPU path runs the first stage while the device opens",
	      cost_split(&e, 0, 15, &ms) == 1 && ms == 21);
	// From a later boundary, the rest only.
	CHECK("cost_split: from stage 2", cost_split(&e, 1, 0, &ms) == 1 && ms == 6);
	CHECK("cost_split: nothing left", cost_split(&e, 3, 0, &ms) == 3 && ms == 0);
	// A tie goes to the CPU path: 5 ms either way.
	CHECK("cost_split: a tie, the CPU path", cost_split(&one, 0, 0, &ms) == 1 && ms == 5);
	// The device pays only for the cheap last stages: it takes them, from stage 3 (104 ms,
	// against 124 from stage 1, 114 from stage 2, 153 from stage 4 and 200 on the CPU).
	CHECK("cost_split: the device for the last stages only", cost_split(&later, 0, 0, &ms) == 2 &&
									  ms == 100 + 1 + 2 + 1);
	CHECK("cost_cpu_rest / cost_dev_rest", cost_cpu_rest(&e, 1) == 110 &&
						       cost_dev_rest(&e, 1) == 6 &&
						       cost_dev_rest(&e, 3) == 0);
}

// The plan of tokens on geometry g, or -1.
static int plan_of(struct chain *ch, struct plan *p, const char *tokens, const struct geom *g)
{
	char buf[256], *argv[16];
	int n = 0;
	snprintf(buf, sizeof buf, "%s", tokens);
	for (char *t = strtok(buf, " "); t && n < 16; t = strtok(NULL, " "))
		argv[n++] = t;
	if (chain_parse(ch, n, argv) < 0)
		return -1;
	if (plan_make(p, ch, g, 0) < 0) {
		chain_free(ch);
		return -1;
	}
	return 0;
}

static void test_estimates(void)
{
	struct cost_model m;
	struct chain ch;
	struct plan p;
	struct cost_est e;
	struct geom tiny = { 8, 6, 3, 0 }, big = { 6028, 3391, 3, 0 };
	struct stage_cost sc;

	cost_init(&m, COST_DEV_CPU);
	// a tiny image: microseconds of work, the device's opening alone is 100s of ms
	if (plan_of(&ch, &p, "grey rotate:90", &tiny) == 0 && cost_estimate(&m, &p, 2, 2, false, &e) == 0) {
		CHECK("estimates: a tiny image is microseconds on the CPU path",
		      cost_cpu_rest(&e, 0) < 0.01);
		CHECK("estimates: a tiny image never goes to a device that opens in 120 ms",
		      cost_split(&e, 0, m.open_ms, NULL) == e.n);
		cost_est_free(&e);
		plan_free(&p);
		chain_free(&ch);
	} else {
		CHECK("estimates: tiny plan", 0);
	}
	// 20 MP through gauss sigma 8: seconds on the CPU path, the device far quicker
	if (plan_of(&ch, &p, "convolve:gauss:sigma=8", &big) == 0 &&
	    cost_estimate(&m, &p, 2, 2, false, &e) == 0) {
		CHECK("estimates: 20 MP gauss sigma 8 takes seconds on the CPU path",
		      cost_cpu_rest(&e, 0) > 2000);
		CHECK("estimates: ... and goes to the device even opening in 250 ms",
		      cost_split(&e, 0, 250, NULL) == 0);
		cost_stage(&p.st[0], &sc);
		// 61.3 M colour samples, 2 x 49 taps and 8 more each, on one core
		CHECK("stage cost: convolve's units are samples times taps",
		      !strcmp(sc.kind, "convolve") && !sc.cpu_par &&
			      fabs(sc.units - 6028.0 * 3391 * 3 * (98 + 8)) < 1);
		cost_est_free(&e);
		plan_free(&p);
		chain_free(&ch);
	} else {
		CHECK("estimates: big plan", 0);
	}
	// the remaps run on every core: twice the threads, half the time
	if (plan_of(&ch, &p, "rotate:90 histogram", &big) == 0) {
		struct cost_est e1, e2;
		cost_stage(&p.st[0], &sc);
		CHECK("stage cost: rotate:90 is a remap of the bytes read and written, on every core",
		      !strcmp(sc.kind, "remap") && sc.cpu_par &&
			      sc.units == 2.0 * 6028 * 3391 * 3);
		cost_stage(&p.st[1], &sc);
		CHECK("stage cost: without a hook a stage is of its own kind, on one core",
		      !strcmp(sc.kind, "histogram") && !sc.cpu_par && sc.units == 6028.0 * 3391 * 3);
		if (cost_estimate(&m, &p, 1, 2, false, &e1) == 0 && cost_estimate(&m, &p, 2, 2, false, &e2) == 0) {
			CHECK("estimates: a remap on 2 cores takes half its time on 1, a histogram the same",
			      fabs(e1.cpu_ms[0] - 2 * e2.cpu_ms[0]) < 1e-9 && e1.cpu_ms[1] == e2.cpu_ms[1]);
			// an image with one of two cores (a batch): a CPU device takes both
			CHECK("estimates: a CPU device's time counts twice on one of two cores",
			      fabs(e1.dev_ms[0] - 2 * e2.dev_ms[0]) < 1e-9 &&
				      fabs(e1.out_ms - 2 * e2.out_ms) < 1e-9);
		}
		cost_est_free(&e1);
		cost_est_free(&e2);
		// a remap that scaled badly over 2 threads (per core 3 ns a unit) and runs at 1 ns
		// on one: each estimate takes its own rate
		cost_kind(&m, "remap")->cpu_ns = 3;
		cost_kind(&m, "remap")->cpu1_ns = 1;
		if (cost_estimate(&m, &p, 1, 2, false, &e1) == 0 && cost_estimate(&m, &p, 2, 2, false, &e2) == 0)
			CHECK("estimates: one thread at the one-thread rate, two at the rate over threads",
			      fabs(e1.cpu_ms[0] - 2.0 * 6028 * 3391 * 3 * 1 / 1e6) < 1e-6 &&
				      fabs(e2.cpu_ms[0] - 2.0 * 6028 * 3391 * 3 * 3 / 2 / 1e6) < 1e-6);
		cost_est_free(&e1);
		cost_est_free(&e2);
		plan_free(&p);
		chain_free(&ch);
	}
}

static void test_learning(void)
{
	struct cost_model m;
	struct stage_cost sc = { "remap", 1e8, true };
	double before;

	cost_init(&m, COST_DEV_UNKNOWN);
	before = cost_kind(&m, "remap")->cpu_ns;
	// 100 M units in 20 ms on 2 cores: 0.4 ns a unit a core, a third of the way there
	cost_learn_cpu(&m, &sc, 2, 20);
	CHECK("learning: a CPU stage moves its kind's rate toward what it measured",
	      fabs(cost_kind(&m, "remap")->cpu_ns - (before + 0.3 * (0.4 - before))) < 1e-9 &&
		      m.learned);
	CHECK("learning: a run on several threads leaves the one-thread rate alone",
	      cost_kind(&m, "remap")->cpu1_ns == before);
	// the same 100 M units in 60 ms on one thread: 0.6 ns a unit
	cost_learn_cpu(&m, &sc, 1, 60);
	CHECK("learning: a run on one thread moves the one-thread rate only",
	      fabs(cost_kind(&m, "remap")->cpu1_ns - (before + 0.3 * (0.6 - before))) < 1e-9 &&
		      fabs(cost_kind(&m, "remap")->cpu_ns - (before + 0.3 * (0.4 - before))) < 1e-9);
	before = cost_kind(&m, "remap")->cpu_ns;
	sc.units = 1000; // a tiny image: its time is the overhead's, not the rate's
	cost_learn_cpu(&m, &sc, 2, 0.5);
	CHECK("learning: a tiny run teaches nothing", cost_kind(&m, "remap")->cpu_ns == before);
	cost_learn_open(&m, 100, false);
	CHECK("learning: the opening's time averaged", fabs(m.open_ms - (250 + 0.3 * (100 - 250))) < 1e-9);
	cost_learn_open(&m, 1000, true);
	CHECK("learning: an upper bound above the model changes nothing", m.open_ms == 205);
	cost_learn_open(&m, 50, true);
	CHECK("learning: an upper bound below it lowers it", m.open_ms == 50);
	cost_learn_build(&m, "rotate", 3, false, 4000, false);
	CHECK("learning: a compile's time, per program", cost_build_ms(&m, "rotate", 3) == 4000 &&
								  cost_build_ms(&m, "rotate", 1) == 5000);
	before = cost_kind(&m, "remap")->cpu_ns; // learned above
	cost_set_device(&m, "Some GPU (Some platform), 1.0", COST_DEV_GPU);
	CHECK("learning: another device starts from the built-in values, the CPU path's kept",
	      m.open_ms == 250 && m.nprog == 0 && m.dev_type == COST_DEV_GPU &&
		      cost_kind(&m, "remap")->dev_ns < 0.01 &&
		      cost_kind(&m, "remap")->cpu_ns == before);
}

// Images of a batch that ran at once were estimated from the same model: each measurement
// corrects the model as the ones before it left it, so one error is not applied as many
// times as images reported it.
static void test_learning_at_once(void)
{
	struct cost_model m;
	struct chain ch;
	struct plan p;
	struct cost_est e1, e2, now;
	struct geom big = { 6028, 3391, 3, 0 };
	double d0, d1, x0, x1;

	cost_init(&m, COST_DEV_GPU);
	if (plan_of(&ch, &p, "convolve:gauss:sigma=8", &big) < 0) {
		CHECK("learning at once: the plan", 0);
		return;
	}
	if (cost_estimate(&m, &p, 16, 16, false, &e1) == 0 && cost_estimate(&m, &p, 16, 16, false, &e2) == 0) {
		d0 = cost_kind(&m, "convolve")->dev_ns;
		x0 = m.xfer_ns;
		CHECK("learning at once: the estimate is worth learning from", cost_dev_rest(&e1, 0) > 2);
		// the first image took four times its estimate: a third of the way from 1 to 4
		cost_learn_dev(&m, &p, &e1, 0, 4 * cost_dev_rest(&e1, 0));
		d1 = cost_kind(&m, "convolve")->dev_ns;
		x1 = m.xfer_ns;
		CHECK("learning at once: the first image moves the rates up",
		      fabs(d1 - d0 * 1.9) < 1e-9 * d0 && fabs(x1 - x0 * 1.9) < 1e-9 * x0);
		// the second took what the model now expects: nothing is left to correct
		if (cost_estimate(&m, &p, 16, 16, false, &now) == 0) {
			cost_learn_dev(&m, &p, &e2, 0, cost_dev_rest(&now, 0));
			CHECK("learning at once: what the model now expects changes nothing, "
			      "whatever the older estimate said",
			      fabs(cost_kind(&m, "convolve")->dev_ns - d1) < 1e-9 * d1 &&
				      fabs(m.xfer_ns - x1) < 1e-9 * x1);
			cost_est_free(&now);
		}
		// ten images at once, each ten times its (shared) estimate: the rates end near
		// ten times where they started, not 3.7^10 times
		for (int i = 0; i < 10; i++)
			cost_learn_dev(&m, &p, &e2, 0, 10 * cost_dev_rest(&e2, 0));
		CHECK("learning at once: ten reports of one error do not compound",
		      cost_kind(&m, "convolve")->dev_ns < 11 * d0);
	} else {
		CHECK("learning at once: the estimates", 0);
	}
	cost_est_free(&e1);
	cost_est_free(&e2);
	plan_free(&p);
	chain_free(&ch);
}

// The host's copies around a device with memory of its own: the decoded input into pinned
// memory, and in a batch the result out of it. They count against the device where the
// chain is split, not in its own time (which the device's runs measure without them).
static void test_copies(void)
{
	double cpu[] = { 5 }, dev[] = { 1 }, in[] = { 1 }, lcpu[] = { 5, 5 }, ldev[] = { 1, 1 },
	       lin[] = { 1, 1 }, ms;
	struct cost_est e = est(1, cpu, dev, in, 1), later = est(2, lcpu, ldev, lin, 1);
	struct cost_model m;
	struct chain ch;
	struct plan p;
	struct cost_est one, batch, now;
	struct geom big = { 6028, 3391, 3, 0 };
	double bytes = 6028.0 * 3391 * 3, x0, d0;

	// 3 ms on the device against 5 on the CPU path; with 1.5 ms of copies each way, 6
	CHECK("copies: without them the device", cost_split(&e, 0, 0, &ms) == 0 && ms == 3);
	e.copy_in_ms = e.copy_out_ms = 1.5;
	CHECK("copies: with them the CPU path", cost_split(&e, 0, 0, &ms) == 1 && ms == 5);
	CHECK("copies: not part of the device's own time", cost_dev_rest(&e, 0) == 3);
	// from stage 1: 1 + 2 + 1 and 1.5 + 1.5 of copies, 7 against 10 on the CPU path
	later.copy_in_ms = later.copy_out_ms = 1.5;
	CHECK("copies: the device from stage 1, both copies counted",
	      cost_split(&later, 0, 0, &ms) == 0 && ms == 7);
	// with 5 ms to copy the input in, 10.5 from stage 1; handed over at stage 2 the image is
	// no decoded input: 5 + 1 + 1 + 1 + 1.5 = 9.5
	later.copy_in_ms = 5;
	CHECK("copies: the input's copy only where the device takes the first stage",
	      cost_split(&later, 0, 0, &ms) == 1 && ms == 9.5);

	cost_init(&m, COST_DEV_GPU);
	CHECK("copies: a GPU copies, a CPU device does not",
	      m.copy_ns > 0 && (cost_set_device(&m, "cpu", COST_DEV_CPU), m.copy_ns == 0));
	cost_init(&m, COST_DEV_GPU);
	if (plan_of(&ch, &p, "rotate:90", &big) < 0) {
		CHECK("copies: the plan", 0);
		return;
	}
	if (cost_estimate(&m, &p, 16, 16, false, &one) == 0 &&
	    cost_estimate(&m, &p, 1, 16, true, &batch) == 0) {
		CHECK("copies: the input's bytes at copy_ns, the result's only in a batch",
		      fabs(one.copy_in_ms - bytes * m.copy_ns / 1e6) < 1e-9 && one.copy_out_ms == 0 &&
			      fabs(batch.copy_out_ms - bytes * m.copy_ns / 1e6) < 1e-9 &&
			      batch.copy_in_ms == one.copy_in_ms);
		// the device's time as the model expects it teaches nothing, copies or none
		d0 = cost_kind(&m, "remap")->dev_ns;
		x0 = m.xfer_ns;
		if (cost_estimate(&m, &p, 1, 16, true, &now) == 0) {
			cost_learn_dev(&m, &p, &batch, 0, cost_dev_rest(&now, 0));
			CHECK("copies: a batch's device time, as expected, changes no rate",
			      fabs(cost_kind(&m, "remap")->dev_ns - d0) < 1e-9 * d0 &&
				      fabs(m.xfer_ns - x0) < 1e-9 * x0);
			cost_est_free(&now);
		}
	} else {
		CHECK("copies: the estimates", 0);
	}
	cost_est_free(&one);
	cost_est_free(&batch);
	plan_free(&p);
	chain_free(&ch);
	// 10 MB in 5 ms: 0.5 ns a byte, a third of the way from 0.25; a small copy teaches nothing
	x0 = m.copy_ns;
	cost_learn_copy(&m, 1e7, 5);
	CHECK("copies: learned", fabs(m.copy_ns - (x0 + 0.3 * (0.5 - x0))) < 1e-12 && m.dev_learned);
	x0 = m.copy_ns;
	cost_learn_copy(&m, 1e5, 5);
	CHECK("copies: a small copy teaches nothing", m.copy_ns == x0);
}

static void test_profile(void)
{
	struct cost_model m, k;
	char path[1024];
	const char *dir = getenv("CLIMG_CACHE_DIR");
	FILE *f;

	if (!dir || !*dir) {
		CHECK("profile: CLIMG_CACHE_DIR is set", 0);
		return;
	}
	cost_init(&m, COST_DEV_UNKNOWN);
	cost_set_device(&m, "Test device (Test platform), 2.0", COST_DEV_CPU);
	m.ident = 0x1234abcd5678ef90u;
	cost_learn_open(&m, 42, false);
	cost_learn_copy(&m, 1e7, 7);
	cost_kind(&m, "convolve")->cpu_ns = 1.25;
	cost_kind(&m, "convolve")->cpu1_ns = 0.75;
	cost_learn_build(&m, "convolve", 3, false, 777, false);
	cost_profile_save(&m);
	CHECK("profile: saved", !m.learned);
	cost_profile_load(&k);
	CHECK("profile: read back", k.dev_type == COST_DEV_CPU &&
					    !strcmp(k.device, "Test device (Test platform), 2.0") &&
					    k.ident == m.ident && fabs(k.open_ms - m.open_ms) < 1e-3 &&
					    m.copy_ns > 0.2 && fabs(k.copy_ns - m.copy_ns) < 1e-5 &&
					    fabs(cost_kind(&k, "convolve")->cpu_ns - 1.25) < 1e-6 &&
					    fabs(cost_kind(&k, "convolve")->cpu1_ns - 0.75) < 1e-6 &&
					    fabs(cost_build_ms(&k, "convolve", 3) - 777) < 0.1 &&
					    !k.learned);
	// a run that learned nothing of the device (it loaded the model before the device was
	// known, as concurrent runs that never open it do) keeps the device's part kept since
	cost_init(&k, COST_DEV_UNKNOWN);
	cost_learn_cpu(&k, &(struct stage_cost){ "remap", 4e6, true }, 2, 10);
	double remap = cost_kind(&k, "remap")->cpu_ns;
	CHECK("profile: a CPU rate learned", k.learned && !k.dev_learned);
	cost_profile_save(&k);
	cost_profile_load(&k);
	CHECK("profile: a run without the device keeps the device's part",
	      k.dev_type == COST_DEV_CPU && !strcmp(k.device, "Test device (Test platform), 2.0") &&
		      k.ident == m.ident && fabs(k.open_ms - m.open_ms) < 1e-3 &&
		      fabs(cost_build_ms(&k, "convolve", 3) - 777) < 0.1 &&
		      fabs(cost_kind(&k, "remap")->cpu_ns - remap) < 1e-5 * remap);
	// one that learned the device hands back its own
	cost_set_device(&k, "Other device (Test platform), 1.0", COST_DEV_GPU);
	cost_profile_save(&k);
	cost_profile_load(&k);
	CHECK("profile: a run with another device keeps its own",
	      k.dev_type == COST_DEV_GPU && !strcmp(k.device, "Other device (Test platform), 1.0"));
	// a profile older than COST_PROFILE_MAX_DAYS, or of another climg, is not used
	snprintf(path, sizeof path, "%s/cost-profile.txt", dir);
	for (int t = 0; t < 2; t++) {
		char line[512], *text = NULL;
		size_t len = 0;
		FILE *in = fopen(path, "r");
		while (in && fgets(line, sizeof line, in)) {
			if (!strncmp(line, t ? "version " : "saved ", t ? 8 : 6))
				snprintf(line, sizeof line, t ? "version 0.0.0-other\n" : "saved %.0f\n",
					 (double)time(NULL) - (COST_PROFILE_MAX_DAYS + 1) * 86400.0);
			text = realloc(text, len + strlen(line) + 1);
			strcpy(text + len, line);
			len += strlen(line);
		}
		if (in)
			fclose(in);
		f = fopen(path, "w");
		if (f && text)
			fputs(text, f);
		if (f)
			fclose(f);
		free(text);
		cost_profile_load(&k);
		CHECK(t ? "profile: another climg's is not used" : "profile: a stale one is not used",
		      k.dev_type == COST_DEV_UNKNOWN && k.device[0] == '\0' && k.open_ms == 250);
		cost_profile_save(&m);
	}
	f = fopen(path, "w");
	if (f) {
		fputs("not a profile\n", f);
		fclose(f);
	}
	cost_profile_load(&k);
	CHECK("profile: a file of another format is not used", k.dev_type == COST_DEV_UNKNOWN);
}

// The chain split at every stage boundary: the CPU path runs stages 0 .. k-1, the device
// the rest (pipeline_cl_from), and the image and side outputs are the CPU path's.
static void test_switch(void)
{
	static const char *const chains[] = {
		"histogram grey rotate:90 histogram convolve:box transpose",
		"rotate:30 histogram resize:70% grey",
		"grey histogram",
	};
	struct geom g = { 37, 23, 3, 0 };
	uint8_t src[37 * 23 * 3];
	uint32_t v = 99;
	int none = 0;
	struct ocl *o = ocl_open(NULL, &none);
	char name[200];

	for (size_t i = 0; i < sizeof src; i++) {
		v = v * 1103515245u + 12345u;
		src[i] = (uint8_t)(v >> 24);
	}
	for (size_t c = 0; c < sizeof chains / sizeof chains[0]; c++) {
		struct chain ch;
		struct plan p;
		struct img in = { g.w, g.h, g.ch, src }, ref = { 0 };
		uint8_t *ref_side = NULL;

		if (plan_of(&ch, &p, chains[c], &g) < 0 || pipeline_cpu(&p, &in, NULL, &ref, NULL) < 0) {
			CHECK("switch: the chain runs on the CPU path", 0);
			continue;
		}
		ref_side = malloc(p.side_bytes);
		memcpy(ref_side, p.side, p.side_bytes);
		for (int k = 0; k <= p.n; k++) {
			struct pipeline_cpu_run r;
			struct img mid = { 0 }, out = { 0 };
			int rc;
			memset(p.side, 0xee, p.side_bytes);
			rc = pipeline_cpu_begin(&r, &p, 0, &in, NULL);
			while (rc == 0 && r.stage < k)
				pipeline_cpu_step(&r, NULL);
			rc = rc == 0 ? pipeline_cpu_end(&r, &mid, NULL) : -1;
			// the CPU path resumed from the image handed out: what the fallback does
			if (rc == 0) {
				struct pipeline_cpu_run r2;
				rc = pipeline_cpu_begin(&r2, &p, k, &mid, NULL);
				while (rc == 0 && r2.stage < p.n)
					pipeline_cpu_step(&r2, NULL);
				rc = rc == 0 ? pipeline_cpu_end(&r2, &out, NULL) : -1;
			}
			snprintf(name, sizeof name, "switch: %s, the CPU path stopped and resumed at stage %d",
				 chains[c], k + 1);
			CHECK(name, rc == 0 && out.w == ref.w && out.h == ref.h && out.ch == ref.ch &&
					    !memcmp(out.data, ref.data, img_bytes(&ref)) &&
					    !memcmp(p.side, ref_side, p.side_bytes));
			free(out.data);
			out.data = NULL;
			if (o && k < p.n && rc == 0) {
				memset(p.side, 0xee, p.side_bytes);
				// the CPU path's side outputs up to k, the device's from k on
				rc = pipeline_cpu_begin(&r, &p, 0, &in, NULL);
				while (rc == 0 && r.stage < k)
					pipeline_cpu_step(&r, NULL);
				if (rc == 0) {
					pipeline_cpu_abort(&r);
					rc = pipeline_cl_from(&p, k, o, &mid, 0, NULL, &out, NULL);
				}
				snprintf(name, sizeof name, "switch: %s, the device from stage %d",
					 chains[c], k + 1);
				CHECK(name, rc == 0 && out.w == ref.w && out.h == ref.h &&
						    !memcmp(out.data, ref.data, img_bytes(&ref)) &&
						    !memcmp(p.side, ref_side, p.side_bytes));
				if (rc < 0)
					printf("INFO %s\n", err_msg());
				ocl_host_free(o, out.data);
			}
			free(mid.data);
		}
		free(ref_side);
		free(ref.data);
		plan_free(&p);
		chain_free(&ch);
	}
	if (!o)
		printf("INFO the device half of the switch tests skipped: %s\n", err_msg());
	ocl_close(o);
}

int main(void)
{
	test_split();
	test_estimates();
	test_learning();
	test_learning_at_once();
	test_copies();
	test_profile();
	test_switch();
	return failures ? 1 : 0;
}
