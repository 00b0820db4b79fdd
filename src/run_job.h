// SPDX-License-Identifier: MIT
// One image of a run, from its input to its committed outputs (run_job.c), its outputs
// (run_out.c) and its --time report (run_time.c). Internal to the run layer.
#ifndef CLIMG_RUN_JOB_H
#define CLIMG_RUN_JOB_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "io/io.h"
#include "jobs.h"
#include "pipeline.h"
#include "run.h"
#include "run_devs.h"

// What every image of the run shares.
struct run_ctx {
	const struct run_opts *o;
	const struct chain *c;
	struct run_devs *devs;
	bool single; // one input: stdout may be an output, and --time reports its phases
	// the bytes of the images in flight (run.c)
	pthread_mutex_t budget_mu;
	pthread_cond_t budget_cv;
	uint64_t budget, used;
	int in_flight;
	int cores; // par_threads() of the whole process
};

// Gives the calling thread its share of the cores for what it runs next: the cores over the
// images in flight now (run.c). The bytes never depend on it.
void share_now(struct run_ctx *x);

// Waits until bytes more fit the budget of bytes in flight (or nothing else is in flight),
// then counts them; budget_give returns them (run.c).
void budget_take(struct run_ctx *x, uint64_t bytes);
void budget_give(struct run_ctx *x, uint64_t bytes);

// A file a stage writes from its side output (a histogram's CSV or plot).
struct side_out {
	int stage;             // its stage's index in the chain
	int index;             // the file's number in the stage's list, for render
	char *path;            // the template expanded for this input
	bool varies;           // the template has placeholders: its directories are made
	bool image;            // an image (format fmt), else text
	enum img_format fmt;   // for images
	struct outfile *f;     // opened before decoding, committed after the whole run
};

// One image's outputs: the image (-o) and the stages' files.
struct job_outs {
	char *path;          // -o expanded for this input, or NULL
	bool path_varies;    // -o has placeholders: the directories it names are made
	enum img_format fmt; // its format
	struct outfile *f;
	struct side_out *side;
	int nside;
};

// The outputs of input in, from the arguments alone (templates expanded, formats known,
// no two the same file): 0, or EXIT_USAGE / EXIT_RUN with err set. Opens nothing.
int outs_plan(const struct run_ctx *x, const struct job_input *in, struct job_outs *j);

// Whether every output of j exists already (--skip-existing).
bool outs_exist(const struct job_outs *j);

// Opens every output (the directories of those from templates with placeholders made first),
// so that a missing or read-only
// directory is reported before the input is read. -1 with err set.
int outs_open(struct job_outs *j, bool sums);

// Writes the image (res, unless there is no -o; with the input's metadata meta, unless
// --strip) and every stage file from the side outputs of plan p, then commits them all;
// sums (when not NULL) gets each committed file's size and SHA-256, the image's first,
// then the stage files in order (1 + nside entries). Nothing is committed before
// everything is written. -1 with err set.
int outs_write(struct job_outs *j, const struct run_opts *o, const struct plan *p,
	       const struct img *res, const struct img_meta *meta, struct outfile_sum *sums);

// Removes what was not committed and frees j. NULL-safe fields.
void outs_free(struct job_outs *j);

// What a run records of one image's phases, in milliseconds (now_ms clock).
struct timing {
	double t0;            // the image's work start, for the total
	double open_ms;       // opening the device and allocating pinned memory
	double open_wait_ms;  // of that, the time waited for it after decoding
	bool opened;          // a device was looked for (not --cpu): open_ms is reported
	double decode_ms, encode_ms, stages_ms;
	int decode_strips;    // strips the input decoded in at once (img_reader_strips)
	double copy_in_ms;    // copying the decoded image into pinned memory
	size_t copy_in_bytes; // 0: no copy (no device, zero-copy, or no pinned memory)
	struct run_times run;
	double *stage_ms;
	int programs, programs_cached; // built for the run; of those, from the binary cache
	bool on_cpu;          // no device phases to report
	double device_ms;     // the stages' time holding the device that ran them
};

// One line per phase on stderr, or one JSON object (run_time.c).
void time_report(const struct timing *tm, const struct plan *p, bool json);

// What a finished image reports.
struct job_result {
	int status;      // 0, EXIT_RUN, EXIT_USAGE or EXIT_VERIFY
	bool skipped;    // --skip-existing found every output
	char error[1024]; // the failure's message
	struct geom g;   // the input's, where known (w 0 otherwise)
	char device[224]; // the device that computed it ("cpu" for the CPU path), or ""
	int slot;         // its slot in the run's devices (devs_label), -1 the CPU path
	double device_ms; // the stages' time on that device (holding it)
	double decode_ms, stages_ms, encode_ms, total_ms;
	struct job_outs outs;     // paths of the outputs (kept for the report)
	struct outfile_sum *sums; // 1 + outs.nside entries where asked, else NULL
};

// Runs input in through the chain: 0 or an exit status, r filled either way (the caller
// frees r->outs and r->sums). Usage errors found from the arguments alone come out as
// EXIT_USAGE before anything is read.
int job_run(struct run_ctx *x, const struct job_input *in, struct job_result *r);

#endif
