// SPDX-License-Identifier: MIT
// A stage is data plus a few functions, looked up by name. Each stage lives in
// src/stages/<name>.c, ends in `const struct stage_ops stage_<name>`, and (when it has an
// OpenCL path) has its kernels in kernels/<name>.cl. The CPU path is the specification:
// run_cl must produce the same bytes.
#ifndef CLIMG_STAGE_H
#define CLIMG_STAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "../img.h"

struct ocl;
struct ocl_buf;

// What a stage will do to an image of a given geometry, decided before any pixel moves.
struct stage_plan {
	struct geom out;  // output geometry
	bool passthrough; // the stage writes no image: the next stage reads this stage's input
};

// The OpenCL side of one stage run. in and out are distinct device buffers (a stage never
// writes its input); out is NULL when the plan is passthrough.
struct stage_cl {
	struct ocl *ocl;
	struct ocl_buf *in, *out;
	struct geom gin, gout;
};

struct stage_ops {
	const char *name;    // the CLI name, file stem and kernel program name
	const char *usage;   // e.g. "rotate:DEGREES"
	const char *summary; // one line for --list-stages and --help
	size_t params_size;  // bytes of the private parameter block the pipeline allocates

	// Parses the arguments after the name (the token split at ':'), filling the zeroed
	// params block. -1 with err set, e.g. "rotate: angle must be a number, not 'abc'".
	int (*parse)(void *params, int argc, char **argv);

	// Output geometry for an input geometry. -1 with err set if the input cannot be taken.
	int (*plan)(const void *params, const struct geom *in, struct stage_plan *plan);

	// The reference implementation. out is NULL when the plan is passthrough.
	void (*run_cpu)(const void *params, const struct img *in, struct img *out);

	// Optional OpenCL path; program is the kernels/<program>.cl it needs (normally name).
	const char *program;
	int (*run_cl)(const void *params, const struct stage_cl *c);

	// Optional: frees what parse allocated and stored in params (e.g. a kernel's weights),
	// not the block itself. Called once when the chain is freed, also after a failed parse,
	// so it must accept a block that parse filled only in part (it starts zeroed).
	void (*free_params)(void *params);
};

// The registry (src/stages/registry.c): every stage, NULL-terminated, in --list-stages order.
extern const struct stage_ops *const stage_list[];

// The stage called name, or NULL.
const struct stage_ops *stage_find(const char *name);

#endif
