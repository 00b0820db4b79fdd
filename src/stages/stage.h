// SPDX-License-Identifier: MIT
// A stage is data plus a few functions, looked up by name. Each stage lives in
// src/stages/<name>.c, ends in `const struct stage_ops stage_<name>`, and (when it has an
// OpenCL path) has its kernels in kernels/<name>.cl. The CPU path is the specification:
// run_cl must produce the same bytes.
#ifndef CLIMG_STAGE_H
#define CLIMG_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../img.h"

struct ocl;
struct ocl_buf;

// a / b rounded up: how many work-items or tiles cover a items of b each.
static inline size_t up_div(size_t a, size_t b)
{
	return (a + b - 1) / b;
}

// Side outputs. Besides (or instead of) transforming the image, a stage may measure it: its
// plan asks for side_bytes of side output, an array of uint32_t (host byte order on the CPU,
// device byte order on the device; the pipeline assumes they agree), such as a histogram's
// counts. The pipeline owns it: it allocates side_bytes on the host and on the device,
// zeroes both before the run, hands them to side_cpu / side_cl, downloads every stage's
// side output in one read at the end of the chain, and --verify compares them word by word.
// After a successful run the stage's files (a CSV, a plot) are rendered from it by render.
// A plan may give the device side_copies copies of its side output, for counts that many
// work-groups add into: they spread the additions over the copies (fewer atomics on each
// word), the pipeline zeroes all of them and, after the download, adds them word by word
// into the one side output the host sees (stage_side_fold).

// What a stage will do to an image of a given geometry, decided before any pixel moves.
struct stage_plan {
	struct geom out;   // output geometry
	bool passthrough;  // the stage writes no image: the next stage reads this stage's input
	size_t side_bytes; // bytes of side output (a multiple of 4), 0 for none
	int side_copies;   // copies of it on the device (see above); 0 means 1
	void *priv;        // what plan made for this geometry alone (e.g. resize's weight
	                   // tables), read by the runs, freed by free_plan; NULL for none. A
	                   // plan never writes params: one chain is planned for many images
	                   // at once.
	const char *program; // the OpenCL program run_cl needs for this geometry where that
	                     // is not the stage's (stage_ops.program), else NULL
};

// How many copies of its side output plan p has on the device, and their bytes.
static inline size_t stage_side_copies(const struct stage_plan *p)
{
	return p->side_copies > 1 ? (size_t)p->side_copies : 1;
}

static inline size_t stage_side_cl_bytes(const struct stage_plan *p)
{
	return p->side_bytes * stage_side_copies(p);
}

// Adds the copies of p's side output as downloaded from the device (dev, laid out as
// stage_side_cl_bytes says) word by word into host (side_bytes, which it overwrites).
static inline void stage_side_fold(const struct stage_plan *p, const uint32_t *dev,
				   uint32_t *host)
{
	size_t n = p->side_bytes / 4, copies = stage_side_copies(p);
	for (size_t i = 0; i < n; i++) {
		uint32_t sum = 0;
		for (size_t k = 0; k < copies; k++)
			sum += dev[k * n + i];
		host[i] = sum;
	}
}

// The OpenCL side of one stage run. in and out are distinct device buffers (a stage never
// writes its input); out is NULL when the plan is passthrough. side is the device buffer
// holding every stage's side output, this stage's (stage_side_cl_bytes of it) starting
// side_offset bytes in (a multiple of 4); NULL when the plan has no side output.
struct stage_cl {
	struct ocl *ocl;
	struct ocl_buf *in, *out;
	struct geom gin, gout;
	struct ocl_buf *side;
	size_t side_offset;
	const struct stage_plan *plan; // the stage's plan for this image
};

// What one run of a stage costs, for the automatic choice between the CPU path and the device
// (src/cost.h): its work in units of its kind (samples times taps, or bytes moved), and
// whether run_cpu spreads that work over the cores. Stages whose work is alike share a kind,
// and the kind's measured rates. Only the time a run takes depends on it, never a byte.
struct stage_cost {
	const char *kind; // static storage: "remap", "convolve", ...
	double units;
	bool cpu_par;     // run_cpu runs on par_threads() cores (par_run), else on one
};

// The cost of a stage of kind `kind` whose run reads its input and writes its output once,
// spread over the cores: the bytes of both.
static inline struct stage_cost stage_cost_pass(const char *kind, const struct geom *in,
						const struct stage_plan *plan)
{
	return (struct stage_cost){ kind, (double)geom_bytes(in) + (double)geom_bytes(&plan->out),
				    true };
}

// A file a stage writes from its side output, named by its arguments.
#define STAGE_FILES_MAX 4
struct stage_file {
	const char *path; // "-" is standard output; points into the params block
	bool image;       // an image (format by extension, PNG on streams), else text
};

// A rendered file: an image (data malloc'd) or text (malloc'd, len bytes), as stage_file says.
struct stage_render {
	struct img im;
	char *text;
	size_t len;
};

struct stage_ops {
	const char *name;    // the CLI name, file stem and kernel program name
	const char *usage;   // e.g. "rotate:DEGREES"
	const char *summary; // one line for --list-stages and --help
	const char *help;    // the text of `climg help NAME`: syntax, options, formula, defaults, example
	size_t params_size;  // bytes of the private parameter block the pipeline allocates

	// Parses the arguments after the name (the token split at ':'), filling the zeroed
	// params block. -1 with err set, e.g. "rotate: angle must be a number, not 'abc'".
	int (*parse)(void *params, int argc, char **argv);

	// Output geometry for an input geometry. -1 with err set if the input cannot be taken.
	int (*plan)(const void *params, const struct geom *in, struct stage_plan *plan);

	// The reference implementation. out is NULL when the plan is passthrough. May be NULL
	// for a stage that only measures: its plan is always passthrough and it has side_cpu.
	void (*run_cpu)(const void *params, const struct stage_plan *plan, const struct img *in,
			struct img *out);

	// Optional OpenCL path; program is the kernels/<program>.cl it needs (normally name),
	// built for the channel count of the stage's input (src/ocl.h, ocl_program_id). With a
	// passthrough plan c->out is NULL and run_cl runs no kernel: the chain then builds no
	// program for a stage without side output. NULL in a stage that only measures.
	const char *program;
	int (*run_cl)(const void *params, const struct stage_cl *c);

	// ---- side outputs (optional; see the top of this file) ----

	// The reference for the side output: reads in (this stage's input) and adds to side,
	// plan->side_bytes zeroed bytes. Runs before run_cpu.
	void (*side_cpu)(const void *params, const struct img *in, void *side);

	// The same on the device, into c->side at c->side_offset; required when side_cpu is set
	// for the chain to run on OpenCL. Runs before run_cl.
	int (*side_cl)(const void *params, const struct stage_cl *c);

	// Names word i of the side output for --verify messages, e.g. "channel green value 77".
	void (*side_where)(const void *params, const struct geom *in, size_t i, char *buf,
			   size_t size);

	// The files this stage writes, from params alone (before any input is read); returns
	// how many, at most STAGE_FILES_MAX.
	int (*files)(const void *params, struct stage_file *files);

	// Renders file `index` (as listed by files) from the side output of a run on an input
	// of geometry in. -1 with err set.
	int (*render)(const void *params, const struct geom *in, const void *side, int index,
		      struct stage_render *out);

	// Optional: what a run of the planned stage costs (see struct stage_cost). Without it a
	// stage is of its own kind (its name), costs the bytes it reads and writes, on one core.
	void (*cost)(const void *params, const struct geom *in, const struct stage_plan *plan,
		     struct stage_cost *cost);

	// Optional: frees plan->priv (called once per plan that set it).
	void (*free_plan)(void *priv);

	// Optional: frees what parse allocated and stored in params (e.g. a kernel's weights),
	// not the block itself. Called once when the chain is freed, also after a failed parse,
	// so it must accept a block that parse filled only in part (it starts zeroed).
	void (*free_params)(void *params);
};

// The registry (src/stages/registry.c): every stage, NULL-terminated, in --list-stages order.
extern const struct stage_ops *const stage_list[];

// The stage called name, or NULL.
const struct stage_ops *stage_find(const char *name);

// The stage name nearest to name where name reads as a slip of it (src/suggest.h), or NULL.
const char *stage_suggest(const char *name);

#endif
