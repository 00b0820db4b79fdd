// SPDX-License-Identifier: MIT
// One image of a run, from its input to its committed outputs (run_job.c), where its stages
// run (run_path.c), its outputs (run_out.c) and its --time report (run_time.c). Internal to
// the run layer.
#ifndef CLIMG_RUN_JOB_H
#define CLIMG_RUN_JOB_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cost.h"
#include "io/io.h"
#include "jobs.h"
#include "ocl.h"
#include "pipeline.h"
#include "run.h"
#include "run_devs.h"

// The automatic choice of path (run_path.c), shared by the images of a run.
struct run_auto {
	bool on;            // no --device, CLIMG_DEVICE, --devices, --cpu or --verify
	int force;          // CLIMG_AUTO_SWITCH, a test setting: the stage the device takes
	                    // the chain from, whatever the model says; -1 where not set
	bool keep;          // the model comes from the cache directory and goes back there
	pthread_mutex_t mu; // guards m and left
	struct cost_model m;
	size_t left;        // images not planned yet: a batch shares the device's opening
	struct ocl_program_id prep[64]; // programs to build for later runs (run_prepare.c)
	int nprep;
};

// What every image of the run shares.
struct run_ctx {
	const struct run_opts *o;
	const struct chain *c;
	struct run_devs *devs;
	struct run_auto aut;
	bool single; // one input: stdout may be an output, and --time reports its phases
	// the bytes of the images in flight (run.c)
	pthread_mutex_t budget_mu;
	pthread_cond_t budget_cv;
	uint64_t budget, used, peak; // peak: the most used at once, kept by hostmem
	int in_flight;
	int cores;   // par_threads() of the whole process
	int workers; // the threads that take images (at most this many in flight)
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
	bool open_waited;     // the image waited for it (else it opened alongside the CPU path)
	bool opened;          // a device was looked for: open_ms is reported
	double decode_ms, encode_ms, stages_ms;
	int decode_strips;    // strips the input decoded in at once (img_reader_strips)
	double copy_in_ms;    // copying the decoded image into pinned memory
	size_t copy_in_bytes; // 0: no copy (no device, zero-copy, or no pinned memory)
	struct run_times run;
	double *stage_ms;
	int programs, programs_cached; // built for the run; of those, from the binary cache
	bool on_cpu;          // no device phases to report
	double device_ms;     // the stages' time holding the device that ran them
	int dev_from;         // the first stage the device ran (plan.n: none)
	double switch_wait_ms; // the time waited for the device at that stage (not the first)
	bool fell_back;       // the device failed and the CPU path ran its stages
	char why[320];        // why the stages ran where they did
};

// One line per phase on stderr, or one JSON object (run_time.c).
void time_report(const struct timing *tm, const struct plan *p, bool json);

// Where an image's stages run and what holds its memory: the device taken for it (d, of
// slot slot in the run's devices; NULL and -1 for the CPU path) and its open handle, and
// the device whose memory the result is (NULL: plain memory).
struct job_dev {
	struct run_dev *d;
	int slot;
	struct ocl *dev;
	struct run_dev *res_dev;
};

// One image's choice of path (run_path.c): the plan's estimates and programs, and the
// stage from which the device is to take the chain as chosen before decoding (n: none).
struct job_path {
	struct cost_est e;
	struct ocl_program_id prog[64];
	int nprog;
	int planned;
	bool auto_on; // the choice is the model's (or CLIMG_AUTO_SWITCH's), else forced
	bool prepare; // the device would pay with these programs in the binary cache
};

// Chooses, before the input decodes, where the stages of plan p (a JPEG's or not) are to
// run: fills jp (jp->prepare where the device would pay with its programs in the binary
// cache, for prepare_note), starts opening the device and building its programs where that
// pays, and says why in tm->why. -1 with err set (out of memory).
int path_plan(struct run_ctx *x, struct job_dev *jd, const struct plan *p, bool jpeg,
	      struct job_path *jp, struct timing *tm);

// Runs the stages on the CPU path, the device, or the CPU path and then, from a stage
// boundary on, the device, as jp and the model choose as each stage ends (see run_path.c).
// in is the decoded input (or its copy in pinned memory, the plain copy then in *decoded,
// reuse_bytes its size); mem the stages' memory made while decoding. 0, -1 with err set, or
// 1 for a --verify difference; *dev_error where the failure is the device's.
int job_stages(struct run_ctx *x, struct job_dev *jd, struct job_path *jp, const struct plan *plan,
	       struct img *in, void **decoded, size_t reuse_bytes, struct pipeline_mem *mem,
	       struct img *res, struct timing *tm, bool *dev_error);

// Folds what the image measured into the run's model (a no-op where nothing is learned).
void path_learn_decode(struct run_ctx *x, bool jpeg, const struct geom *g, double ms);
// Folds a copy between an image's memory and the pinned memory of jd's device into the
// model, where that device is the automatic one and the run is no --verify run.
void path_learn_copy(struct run_ctx *x, const struct job_dev *jd, double bytes, double ms);

// Frees jp.
void path_free(struct job_path *jp);

// Notes the programs of jp where they are to be built for later runs (jp->prepare), and
// once the run is done starts the process that builds those not in the binary cache
// (run_prepare.c).
void prepare_note(struct run_auto *a, const struct job_path *jp);
void prepare_spawn(struct run_auto *a);

// Copies bytes from src to dst on every core (run_job.c).
void job_copy_in(void *dst, const void *src, size_t bytes);

// What a finished image reports.
struct job_result {
	int status;      // 0, EXIT_RUN, EXIT_USAGE or EXIT_VERIFY
	bool skipped;    // --skip-existing found every output
	char error[1024]; // the failure's message
	struct geom g;   // the input's, where known (w 0 otherwise)
	char device[224]; // the device that computed it ("cpu" for the CPU path), or ""
	int slot;         // its slot in the run's devices (devs_label), -1 the CPU path
	double device_ms; // the stages' time on that device (holding it)
	int dev_from;     // the first stage the device ran
	double decode_ms, stages_ms, encode_ms, total_ms;
	struct job_outs outs;     // paths of the outputs (kept for the report)
	struct outfile_sum *sums; // 1 + outs.nside entries where asked, else NULL
};

// Runs input in through the chain: 0 or an exit status, r filled either way (the caller
// frees r->outs and r->sums). Usage errors found from the arguments alone come out as
// EXIT_USAGE before anything is read.
int job_run(struct run_ctx *x, const struct job_input *in, struct job_result *r);

#endif
