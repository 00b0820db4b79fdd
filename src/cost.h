// SPDX-License-Identifier: MIT
// The cost model behind the automatic choice between the CPU path and the device (a run
// without --device, CLIMG_DEVICE, --devices, --cpu or --verify): how long each stage of a
// plan takes on each path, what the device costs before it computes anything (opening it,
// building its programs, moving the image in and out), and, from those, where the stages
// should run. A stage's work is its struct stage_cost (units of a kind: samples times taps,
// or bytes moved); each kind has a rate on one core of the CPU path and a rate on the
// device. The rates start from built-in values measured on the machines of
// docs/BENCHMARKS.md and follow what runs on this machine measure (cost_learn_*), which
// src/cost_profile.c keeps in the cache directory from run to run. Only the time a run
// takes depends on any of this: every path gives the same bytes.
#ifndef CLIMG_COST_H
#define CLIMG_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline.h"

enum cost_dev_type {
	COST_DEV_UNKNOWN, // never opened on this machine (or not since the profile went stale)
	COST_DEV_NONE,    // no OpenCL device was found
	COST_DEV_CPU,     // a CPU device such as PoCL
	COST_DEV_GPU,     // anything else
};

#define COST_KINDS 24
#define COST_PROGRAMS 64

struct cost_kind {
	char name[24];
	// ns a unit a core on the CPU path: cpu_ns where the stage spreads over several threads
	// (the time a run took times its threads), cpu1_ns on one thread. Each is learned only
	// from runs of its own kind: memory-bound stages gain little from more threads, and a
	// rate learned on many would price a batch's one-thread images many times too high.
	double cpu_ns, cpu1_ns;
	double dev_ns; // ns a unit on the device
};

// A program of the automatic device that a run compiled, and how long that took.
struct cost_program {
	char name[24];
	int ch;
	double compile_ms;
};

struct cost_model {
	int nkinds;
	struct cost_kind kind[COST_KINDS];
	enum cost_dev_type dev_type;
	char device[256];   // the automatic device: "NAME (PLATFORM), DRIVER", "" unknown
	uint64_t ident;     // what names its programs in the binary cache (ocl_cache_ident)
	double open_ms;     // opening it
	double xfer_ns;     // ns a byte moved into or out of it (copies; on a zero-copy device
	                    // what stands for them: first touches of fresh memory, the map)
	double switch_ns;   // ns more a byte of the image handed over at a later stage than the
	                    // first (copied to pinned memory, or, zero-copy, into fresh memory)
	double copy_ns;     // ns a byte copied on the host between an image's own memory and
	                    // the device's pinned memory, wall time: the decoded input, and in a
	                    // batch the result (0 on a zero-copy device, which copies neither)
	double launch_ms;   // a stage's launch and wait
	double load_ms;     // building a program from the binary cache
	double compile_ms;  // compiling one from source (where none of its own is known)
	double decode_ns[2]; // decoding a pixel, wall time: a JPEG, any other file
	int nprog;
	struct cost_program prog[COST_PROGRAMS];
	bool learned;       // something was measured since cost_init or the last save
	bool dev_learned;   // of that, something of the device: its name and any value above
	                    // that says how it opens, builds, moves or runs (dev_ns)
};

// The built-in model for a device of type t (COST_DEV_UNKNOWN before one was opened).
void cost_init(struct cost_model *m, enum cost_dev_type t);

// Makes the model that of device `name` of type t: where it was another device's (or none
// was known), the device's part of the model starts again from the built-in values.
void cost_set_device(struct cost_model *m, const char *name, enum cost_dev_type t);

// The kind called name, added with the built-in rates where it is new; NULL when the table
// is full.
struct cost_kind *cost_kind(struct cost_model *m, const char *name);

// What stage s of a plan costs (struct stage_cost; the default for stages without a hook).
void cost_stage(const struct plan_stage *s, struct stage_cost *sc);

// The estimates for one image's plan, in ms: each stage on the CPU path with `threads`
// cores (cpu_ms) and on the device (dev_ms, launch included); moving the image stage k reads
// into the device (in_ms[k], handing it over included) and the output and side outputs out
// of it (out_ms); the host's copies around the device that its own time leaves out
// (copy_in_ms: the decoded input into pinned memory, where the device takes the chain from
// its first stage; copy_out_ms: in a batch, the result out of pinned memory, which then
// serves another image). Where the
// device is a CPU device and the image has fewer than the machine's `cores` (other images
// in flight take the rest), the device's times count as on the image's share of them:
// the device runs on every core, the others' too.
struct cost_est {
	int n;
	double *cpu_ms, *dev_ms, *in_ms;
	double out_ms, copy_in_ms, copy_out_ms;
	int threads, cores; // what cost_estimate was given
	bool batch;
};
int cost_estimate(struct cost_model *m, const struct plan *p, int threads, int cores,
		  bool batch, struct cost_est *e);
void cost_est_free(struct cost_est *e);

// The stages from k on: on the CPU path, and on the device (ready now; the device's own
// time, which the host's copies around it are not part of).
double cost_cpu_rest(const struct cost_est *e, int k);
double cost_dev_rest(const struct cost_est *e, int k);

// Where stages k .. n-1 should run when the device is ready in ready_ms (0: now; a negative
// value: never): returns j, k <= j <= n, for the CPU path running stages k .. j-1 and the
// device the rest, taking them when it is ready and the CPU path is through; j == n for the
// CPU path running them all; the device's share counts the host's copies around it. A tie
// goes to the CPU path. *ms (may be NULL) gets the estimate of that choice.
int cost_split(const struct cost_est *e, int k, double ready_ms, double *ms);

// A program's build on the automatic device: from the binary cache where its file is there
// (ocl_cache_file_of), else compiled.
double cost_build_ms(const struct cost_model *m, const char *name, int ch);

// What runs measured, folded into the model (each a running average).
void cost_learn_cpu(struct cost_model *m, const struct stage_cost *sc, int threads, double ms);
// The device ran stages from .. n-1 of e's plan p in ms, transfers included. Measured
// against the model as it is now (e's threads and cores), not e's figures: the images of a
// batch that ran at once were estimated from the same model, and each correcting it by its
// own ratio to that estimate would compound one error into as many as ran.
void cost_learn_dev(struct cost_model *m, const struct plan *p, const struct cost_est *e, int from,
		    double ms);
// For the device's opening and its builds, upper: measured at the lowest priority (an
// upper bound, which only ever lowers the model's value).
void cost_learn_open(struct cost_model *m, double ms, bool upper);
// Program name for ch channels built in ms: from the cache or compiled.
void cost_learn_build(struct cost_model *m, const char *name, int ch, bool from_cache, double ms,
		      bool upper);
void cost_learn_decode(struct cost_model *m, bool jpeg, double pixels, double ms);
// bytes copied between an image's memory and the device's pinned memory in ms.
void cost_learn_copy(struct cost_model *m, double bytes, double ms);

// Decoding that many pixels, as the model expects it.
double cost_decode_ms(const struct cost_model *m, bool jpeg, double pixels);

#endif
