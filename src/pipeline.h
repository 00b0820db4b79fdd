// SPDX-License-Identifier: MIT
// The chain of stages: parsed from argv tokens once (struct chain), planned for each input's
// geometry before any pixel is decoded (struct plan), then run on the CPU (the reference),
// on an OpenCL device, or on both with a byte-for-byte comparison after every stage
// (--verify). Stages' side outputs (see stages/stage.h) live in the plan: after a run,
// st[i].side holds stage i's.
#ifndef CLIMG_PIPELINE_H
#define CLIMG_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "img.h"
#include "stages/stage.h"

struct ocl;
struct ocl_program_id;

// A parsed chain: each stage's operations and parameters, made from argv tokens once and
// never written afterwards, so the plans of many images (on many threads) share it.
struct chain_stage {
	const struct stage_ops *ops;
	const char *token; // the argv token, for messages
	void *params;      // ops->params_size bytes, owned by the chain
};

// The most stages one chain may have: enough for any real use, and a bound on the
// per-stage work (parsing, kernel launches, --verify downloads) a hostile command line
// can ask for.
#define CHAIN_MAX_STAGES 10000

struct chain {
	int n;
	struct chain_stage *st;
};

// Parses tokens ("NAME" or "NAME:ARG[:ARG...]") into c; at most CHAIN_MAX_STAGES. -1 with
// err set naming the bad token; c is then already freed.
int chain_parse(struct chain *c, int n, char *const *tokens);

void chain_free(struct chain *c);

// One image's plan of a chain: every stage's input and output geometry, the memory the run
// needs, and the side outputs a run fills. The stage's ops, token and params are the
// chain's (borrowed: the chain outlives its plans).
struct plan_stage {
	const struct stage_ops *ops;
	const char *token;
	const void *params;
	struct geom in;
	struct stage_plan plan;
	size_t side_offset;    // where this stage's side output starts in plan.side, in bytes
	size_t side_cl_offset; // and its copies (stage_side_cl_bytes) in the device's side buffer
	void *side;            // plan.side_bytes bytes in plan.side (NULL when none), filled by a run
};

struct plan {
	int n;
	struct plan_stage *st;
	struct geom in, out;
	size_t max_bytes;     // the largest image anywhere in the chain
	size_t host_bytes;    // host memory the CPU path needs: the input and two buffers of
	                      // max_bytes (--verify one more)
	void *side;           // every stage's side output, one after another; owned by the plan
	size_t side_bytes;    // their total
	size_t side_cl_bytes; // the device's: every stage's copies (see stages/stage.h)
};

// Plans chain c for an input of geometry in (its orient 0 to 8, the Exif orientation that
// autoorient reads): every stage's input and output geometry, the memory the run needs,
// and the side outputs (allocated, zeroed). max_pixels is the largest area any stage may
// output (--max-pixels; 0 = none); every stage's output must also be 1..IMG_MAX_SIDE pixels
// a side, so a chain that grows the image is refused here, before anything is allocated.
// -1 with err set naming the stage; p is then freed.
int plan_make(struct plan *p, const struct chain *c, const struct geom *in, uint64_t max_pixels);

void plan_free(struct plan *p); // NULL-safe, and safe on a zeroed or freed plan

// The distinct OpenCL programs the chain needs, at most max; returns how many. Each stage
// that runs a kernel needs its program (stage_ops.program) for the channel count of the
// image it gets (st[i].in.ch, set by chain_plan).
int plan_programs(const struct plan *c, struct ocl_program_id *programs, int max);
// The same for the stages from `from` on (what pipeline_cl_from runs).
int plan_programs_from(const struct plan *c, int from, struct ocl_program_id *programs, int max);

// What a run records of its phases for --time, in milliseconds: device execution time
// from OpenCL profiling events on the device (the queue must have profiling on, see
// ocl_profile), the host clock on the CPU path. build_ms is host time of ocl_build.
// Zero-copy (see pipeline_cl) moves no image: then upload_in_place is set and upload_ms is
// the host time of wrapping the input, and download_in_place is set and download_ms is the
// device time of the map that hands the output to the host. download_ms includes the side
// outputs' download either way. A download that copies goes into the input's memory
// (download_into_input, see reuse_bytes) or into memory allocated for it, which took
// out_alloc_ms of host time.
struct run_times {
	double build_ms, upload_ms, download_ms, out_alloc_ms;
	double *stage_ms; // c->n entries, provided by the caller
	bool upload_in_place, download_in_place, download_into_input; // set by pipeline_cl
	bool verified; // set by pipeline_verify: the output is the CPU path's, not downloaded
};

// Host memory for the images a run writes on the CPU path or zero-copy (see pipeline_cl),
// made before the run so that the caller can make its pages present while the input
// decodes: two blocks of bytes (c->max_bytes) each, out and tmp, the stages' images in
// turn, out the one that the only or (zero-copy) the last image-writing stage writes; tmp
// NULL where fewer than two stages write an image, both NULL where none does. A run takes
// the blocks it has and makes those it lacks.
struct pipeline_mem {
	void *out, *tmp;
	size_t bytes;
};

// Makes m for c: on device o (a zero-copy one) ocl_wrap_alloc memory, for the CPU path
// (o NULL) plain memory. -1 with err set, m then empty.
int pipeline_mem_alloc(const struct plan *c, struct ocl *o, struct pipeline_mem *m);

// Frees what a run did not take of m, and empties it.
void pipeline_mem_free(struct pipeline_mem *m);

// The CPU path a stage at a time, so that the run layer can hand the rest of the chain to
// the device at any stage boundary (pipeline_cl_from). begin takes the image stage `from`
// reads (the plan's input for 0; not modified) and zeroes the side outputs of the stages
// from there on; each step runs stage `stage` (t, may be NULL, gets its time in
// t->stage_ms); end hands out the current image (the output once every stage ran, else the
// image stage `stage` reads), newly allocated (free() it), and where spare is not NULL the
// other block of the run (a pipeline_mem made for the chain, for pipeline_cl_from), and
// frees the rest. abort frees without handing anything out. mem as for pipeline_cpu.
struct pipeline_cpu_run {
	const struct plan *c;
	int stage;          // the next stage to run
	const uint8_t *cur; // the current image: the input until a stage writes
	uint8_t *buf[2];    // where the stages write in turn (NULL where none needs it)
	int next;           // the next image-writing stage writes buf[next]
	struct geom g;      // the current image's
};
int pipeline_cpu_begin(struct pipeline_cpu_run *r, const struct plan *c, int from,
		       const struct img *in, struct pipeline_mem *mem);
void pipeline_cpu_step(struct pipeline_cpu_run *r, struct run_times *t);
int pipeline_cpu_end(struct pipeline_cpu_run *r, struct img *out, struct pipeline_mem *spare);
void pipeline_cpu_abort(struct pipeline_cpu_run *r);

// Runs the planned chain on the CPU. in is not modified; out->data is newly allocated
// (free() it) and holds c->out; the side outputs are in c->side. t may be NULL. mem (may be
// NULL): the run takes its memory (emptying it) rather than allocating; made by
// pipeline_mem_alloc for c (for the CPU path or a device).
int pipeline_cpu(const struct plan *c, const struct img *in, struct pipeline_mem *mem,
		 struct img *out, struct run_times *t);

// Runs the planned chain on the device: one upload, every stage on one in-order queue
// with two device buffers in turn, one download of the image and one of all side outputs.
// On a device whose memory is the host's (ocl_host_unified) and unless CLIMG_ZERO_COPY=0,
// zero-copy instead: the stages read in->data in place (when it is aligned as
// ocl_wrap_aligned asks; else it is uploaded) and the last stage writes out->data in
// place. out->data is host memory to free with ocl_host_free(o, ...). t may be NULL.
// mem (may be NULL): zero-copy takes its memory (emptying it) rather than allocating; made
// by pipeline_mem_alloc for c.
// in is not written, unless reuse_bytes is not 0: then in->data must be that many bytes of
// ocl_host_alloc memory, and where the output fits in them and no zero-copy, the image is
// downloaded there (the device no longer needs the input once uploaded), which saves
// allocating pinned memory for the output (tens of ms for an 8K image on a GPU). On
// success out->data then takes in->data and in->data becomes NULL; on failure in->data
// stays the caller's, its bytes undefined.
int pipeline_cl(const struct plan *c, struct ocl *o, struct img *in, size_t reuse_bytes,
		struct pipeline_mem *mem, struct img *out, struct run_times *t);

// The same for the stages from `from` on (0 <= from < c->n, or 0), the earlier ones having run on
// the CPU path: in is the image stage `from` reads, and only those stages' side outputs are
// written into c->side (with the download). Gives the same bytes as pipeline_cpu.
int pipeline_cl_from(const struct plan *c, int from, struct ocl *o, struct img *in,
		     size_t reuse_bytes, struct pipeline_mem *mem, struct img *out,
		     struct run_times *t);

// Whether pipeline_cl on o copies nothing (see above): the device's memory is the host's,
// and CLIMG_ZERO_COPY does not say 0 (for comparisons and for drivers that misbehave).
// Elsewhere the input is uploaded, at full speed from pinned memory (ocl_host_alloc).
bool pipeline_zero_copy(const struct ocl *o);

// One stage on the device as the chain runs it: its side output (into sc->side, which
// holds its zeroed copies) first, then its image (sc->out; none for a passthrough). -1
// with err naming the stage on failure.
int pipeline_stage_cl(const struct plan_stage *s, const struct stage_cl *sc);

// --verify's comparisons of stage s (index in its chain): its image from the device (cl)
// against the CPU path's (cpu), both of geometry g, and its side output from the device,
// folded (stage_side_fold), against s->side. 0 when equal, else 1 with the first difference
// in err: the stage, then x, y and channel or the side output's word, and both values.
int pipeline_compare_image(const struct plan_stage *s, int index, const struct geom *g,
			   const uint8_t *cl, const uint8_t *cpu);
int pipeline_compare_side(const struct plan_stage *s, int index, const uint32_t *cl);

// Runs both paths and compares the image after every stage, and the side outputs at the
// end. Returns 0 when identical (out and c->side then hold the result), 1 on the first
// difference (err holds the stage, then x, y, channel or the side output's word, and both
// values), -1 on failure. t (may be NULL) gets the device's build, upload and stage times;
// the downloads for the comparisons are not counted.
int pipeline_verify(const struct plan *c, struct ocl *o, const struct img *in,
		    struct img *out, struct run_times *t);

#endif
