// SPDX-License-Identifier: MIT
// flatten: compose the image onto an opaque background and drop its alpha, as ImageMagick
// -background COLOUR -flatten and Pillow's Image.alpha_composite onto an opaque colour.
//
//   flatten[:bg=COLOUR]
//     COLOUR  white (the default), black, a grey level V 0-255, #RRGGBB (hex digits in
//             either case) or R,G,B (three levels 0-255)
//
// Each colour channel c of a pixel with alpha a (the last channel), b the background's
// value for that channel:
//   out = (c a + b (255 - a) + 127) / 255
// in integers, division truncating: the nearest integer to (c a + b (255 - a)) / 255, which
// is never a tie (255 is odd); so a = 255 gives c and a = 0 gives b exactly. A grey+alpha
// image takes the background's BT.601 luma, (9798 R + 19235 G + 3735 B + 16384) >> 15, as
// the grey stage and rotate's bg= compute it (a grey level V gives V).
//
// Output size: the input's. RGBA becomes RGB, grey+alpha becomes grey; grey and RGB input
// pass through unchanged. kernels/flatten.cl computes the same.
#include <stdio.h>
#include <string.h>

#include "../err.h"
#include "../ocl.h"
#include "../par.h"
#include "../parse.h"
#include "stage.h"

struct flatten_params {
	uint8_t bg[3]; // the background: R, G, B
};

// COLOUR as the header says into bg; false when it is none of those forms.
static bool parse_colour(const char *v, uint8_t bg[3])
{
	long l[3];
	char part[3][8];
	if (!strcmp(v, "white") || !strcmp(v, "black")) {
		memset(bg, v[0] == 'w' ? 255 : 0, 3);
		return true;
	}
	if (v[0] == '#' && strlen(v) == 7) {
		return parse_hex_bytes(v + 1, 3, bg);
	}
	if (parse_long(v, 0, 255, &l[0])) {
		memset(bg, (int)l[0], 3);
		return true;
	}
	// R,G,B: three parts of at most 7 characters (longer ones are not levels 0-255)
	for (int i = 0; i < 3; i++) {
		size_t n = strcspn(v, ",");
		if (n >= sizeof part[i] || (i < 2) != (v[n] == ','))
			return false;
		memcpy(part[i], v, n);
		part[i][n] = '\0';
		if (!parse_long(part[i], 0, 255, &l[i]))
			return false;
		v += n + (i < 2);
	}
	for (int i = 0; i < 3; i++)
		bg[i] = (uint8_t)l[i];
	return true;
}

static int flatten_parse(void *params, int argc, char **argv)
{
	struct flatten_params *p = params;
	memset(p->bg, 255, 3);
	if (argc > 1)
		return err_set("flatten: takes one option at most, bg=COLOUR (e.g. flatten:bg=black)");
	if (argc == 1) {
		if (strncmp(argv[0], "bg=", 3))
			return err_set("flatten: unknown option '%s' (use bg=COLOUR, e.g. "
				       "flatten:bg=black)",
				       argv[0]);
		if (!parse_colour(argv[0] + 3, p->bg))
			return err_set("flatten: bg must be white, black, a grey level 0-255, "
				       "#RRGGBB or R,G,B, not '%s'",
				       argv[0] + 3);
	}
	return 0;
}

static int flatten_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = *in;
	plan->passthrough = in->ch == 1 || in->ch == 3;
	if (!plan->passthrough)
		plan->out.ch = in->ch - 1; // 2 -> 1, 4 -> 3
	return 0;
}

// The background for the colour channels of a ch-channel image (2 or 4), as the header says.
static void flatten_bg(const struct flatten_params *p, int ch, unsigned bg[3])
{
	for (int c = 0; c < 3; c++)
		bg[c] = p->bg[c];
	if (ch == 2)
		bg[0] = (9798u * p->bg[0] + 19235u * p->bg[1] + 3735u * p->bg[2] + 16384u) >> 15;
}

// Pixels a task of the CPU path composes.
#define FLATTEN_TASK_PX ((size_t)1 << 16)

struct flatten_job {
	const uint8_t *in;
	uint8_t *out;
	size_t npx;
	int ch; // the input's: 2 or 4
	unsigned bg[3];
};

static void flatten_task(void *ctx, int task, int worker)
{
	const struct flatten_job *j = ctx;
	size_t p = (size_t)task * FLATTEN_TASK_PX;
	size_t p1 = p + FLATTEN_TASK_PX < j->npx ? p + FLATTEN_TASK_PX : j->npx;
	const int nc = j->ch - 1; // colour channels
	(void)worker;
	for (; p < p1; p++) {
		const uint8_t *s = j->in + p * (size_t)j->ch;
		uint8_t *d = j->out + p * (size_t)nc;
		unsigned a = s[nc];
		for (int c = 0; c < nc; c++)
			d[c] = (uint8_t)((s[c] * a + j->bg[c] * (255 - a) + 127) / 255);
	}
}

static void flatten_run_cpu(const void *params, const struct stage_plan *plan,
			    const struct img *in, struct img *out)
{
	struct flatten_job j = { in->data, NULL, (size_t)in->w * (size_t)in->h, in->ch, { 0 } };
	(void)plan;
	if (!out) // passthrough: no alpha
		return;
	j.out = out->data;
	flatten_bg(params, in->ch, j.bg);
	par_run(par_threads(), (int)up_div(j.npx, FLATTEN_TASK_PX), flatten_task, &j);
}

// Pixels a work-item composes: on a GPU one, so that neighbouring items touch neighbouring
// pixels; on a CPU device (one item a work-group) a large piece. Keep in step with
// kernels/flatten.cl.
#define FLATTEN_GPU_CHUNK 1
#define FLATTEN_CPU_CHUNK 16384

static int flatten_run_cl(const void *params, const struct stage_cl *c)
{
	size_t npx = (size_t)c->gin.w * (size_t)c->gin.h;
	bool cpu = ocl_cpu_kernels(c->ocl);
	size_t chunk = cpu ? FLATTEN_CPU_CHUNK : FLATTEN_GPU_CHUNK;
	unsigned bg[3];
	if (!c->out) // passthrough: no alpha
		return 0;
	flatten_bg(params, c->gin.ch, bg);
	return ocl_run(c->ocl, "flatten", c->gin.ch, c->gin.ch == 2 ? "flatten_c2" : "flatten_c4",
		       up_div(npx, chunk), 1, cpu ? 1 : 0, cpu ? 1 : 0,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_LONG(npx),
					   OCL_UINT(chunk), OCL_UINT(bg[0]), OCL_UINT(bg[1]),
					   OCL_UINT(bg[2]), OCL_END });
}

// A pass over the pixels, as grey's, spread over the cores.
static void flatten_cost(const void *params, const struct geom *in,
			 const struct stage_plan *plan, struct stage_cost *cost)
{
	(void)params;
	*cost = stage_cost_pass("grey", in, plan);
}

const struct stage_ops stage_flatten = {
	.name = "flatten",
	.usage = "flatten[:bg=COLOUR]",
	.summary = "compose onto a background (default white), drop alpha",
	.help =
		"Composes the image onto an opaque background and drops its alpha: RGBA becomes\n"
		"RGB, grey+alpha becomes grey; grey and RGB images pass through unchanged, so\n"
		"the stage may stand before any output that has no alpha (JPEG, PGM, PPM).\n"
		"\n"
		"Options:\n"
		"  bg=COLOUR  white (the default), black, a grey level 0-255, #RRGGBB or R,G,B;\n"
		"             a grey+alpha image takes the colour's BT.601 luma,\n"
		"             (9798 R + 19235 G + 3735 B + 16384) >> 15\n"
		"\n"
		"Formula, per colour channel c of a pixel with alpha a, b the background's value:\n"
		"  out = (c a + b (255 - a) + 127) / 255   (the nearest integer, never a tie)\n"
		"  so an opaque pixel keeps its colour and a transparent one becomes b.\n"
		"\n"
		"Example:\n"
		"  climg in.png flatten:bg=#336699 -o out.jpg\n",
	.params_size = sizeof(struct flatten_params),
	.parse = flatten_parse,
	.plan = flatten_plan,
	.run_cpu = flatten_run_cpu,
	.program = "flatten",
	.run_cl = flatten_run_cl,
	.cost = flatten_cost,
};
