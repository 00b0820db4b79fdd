// SPDX-License-Identifier: MIT
// The run layer: takes a parsed chain and a list of inputs and runs each image through
// decode -> plan -> stages -> encode -> commit. It owns what lives across images: the
// device (opened once, programs built once, the fallback to the CPU path decided once; see
// run_dev.h), the memory policy (pinned memory reused, zero-copy, a bound on the bytes in
// flight) and the scheduling of images over worker threads, so that while one image is on
// the device others decode and encode on every core. Each image's output bytes depend on
// nothing but that image and the chain.
#ifndef CLIMG_RUN_H
#define CLIMG_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compare.h"
#include "io/io.h"
#include "jobs.h"
#include "pipeline.h"

enum { EXIT_RUN = 1, EXIT_USAGE = 2, EXIT_VERIFY = 3 };

struct run_opts {
	const char *output; // -o: a path or a template (%n %e %d %i %%); NULL: no image
	const char *format; // --format, or NULL: by the output's extension
	const char *device; // --device or CLIMG_DEVICE; NULL: automatic
	const char *devices; // --devices or CLIMG_DEVICES ("all", or a list); NULL: one device
	bool cpu, verify, no_cache;
	bool strip; // --strip: the output gets none of the input's metadata (write.meta)
	bool force; // --force: an image may go to standard output when it is a terminal
	bool time, time_json;
	struct write_opts write;
	bool quality_given, png_level_given; // --quality, --png-level: warned about where no
	                                     // output is JPEG (PNG)
	struct io_limits limits;
	int jobs;           // -j: images in flight at most; 0: one per core
	bool fail_fast;     // stop starting images after the first failure
	bool skip_existing; // skip an input whose every output exists
	bool progress;      // draw the progress line on stderr
	const char *report; // --report: a file, "-" for stdout, or NULL
	const char *expect; // --expect: a golden image's path or template (as -o), or NULL
	struct cmp_opts cmp; // --tolerance, --allow, --ignore for --expect
};

// Runs chain c over the inputs (n of them, n >= 1). Returns the exit status: 0 every input
// written (or skipped) and, with --expect, the same as its golden image, EXIT_RUN one or
// more failed or differed (a last line says how many), EXIT_USAGE
// for what the arguments and the chain alone make impossible (found before any work where
// it can be), EXIT_VERIFY a --verify difference. Prints each failure (one line, naming the
// input) itself; a usage error is left in err for the caller to print.
int run_batch(const struct run_opts *o, const struct chain *c, const struct job_input *in,
	      size_t n);

// The checks run_batch makes before any work (templates, two inputs writing one file,
// output formats), over inputs in[0..n): main runs them over the whole list before it keeps
// one --shard, so that the shards of a list refuse what one process would refuse and no two
// shards write the same file. 0, or EXIT_USAGE with err set.
int run_check_outputs(const struct run_opts *o, const struct chain *c,
		      const struct job_input *in, size_t n);

// Lists the OpenCL devices (--list-devices; see ocl_list_devices). -1 with err set.
int run_list_devices(FILE *out);

// The process that builds programs for later runs, which a run starts with CLIMG_PREPARE
// set to list (run_prepare.c). Returns the exit status (0).
int run_prepare(const char *list);

// Whether run_batch left a device's thread running (still opening, or building a program
// for later runs, which the automatic choice does not wait for): the process must then end
// with _exit once its output is flushed, as exit would run the driver's destructors under
// that thread.
bool run_left_behind(void);

#endif
