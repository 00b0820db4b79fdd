// SPDX-License-Identifier: MIT
// crop: a rectangle of the image, in ImageMagick's geometry syntax.
//
//   crop:WxH+X+Y     out(x, y) = in(X + x, Y + y),  0 <= x < W, 0 <= y < H
//   crop:WxH         the same, centred: X = floor((Win - W) / 2), Y = floor((Hin - H) / 2),
//                    so an odd margin leaves its extra pixel on the right and at the bottom
//
// W and H are 1 to 65535, X and Y 0 to 65535, all plain decimal. Output size: W x H. A
// rectangle that reaches outside the input is refused when the chain is planned (before any
// pixel is decoded), naming the input's size. Each output row is one copy of bytes
// (REMAP_ROWS, kernels/remap.clh); kernels/crop.cl computes the same.
#include <stdio.h>
#include <string.h>

#include "../err.h"
#include "../img.h"
#include "remap.h"
#include "stage.h"

struct crop_params {
	long w, h, x, y;
	bool centred;
	char arg[48]; // the argument as given (shortened), for messages
};

// Reads a decimal number of at most 5 digits from *s, advancing it; false if none.
static bool crop_number(const char **s, long *v)
{
	int n = 0;
	*v = 0;
	while (**s >= '0' && **s <= '9' && n < 6) {
		*v = *v * 10 + (**s - '0');
		(*s)++;
		n++;
	}
	return n > 0 && n <= 5;
}

static int crop_parse(void *params, int argc, char **argv)
{
	struct crop_params *p = params;
	if (argc != 1)
		return err_set("crop: needs one argument, WxH+X+Y or WxH (e.g. crop:640x480+10+20)");
	const char *s = argv[0];
	snprintf(p->arg, sizeof p->arg, "%s", s);
	bool ok = crop_number(&s, &p->w) && *s++ == 'x' && crop_number(&s, &p->h);
	if (ok && *s == '+') {
		s++;
		ok = crop_number(&s, &p->x) && *s++ == '+' && crop_number(&s, &p->y);
	} else {
		p->centred = true;
	}
	if (!ok || *s)
		return err_set("crop: geometry must be WxH+X+Y or WxH in pixels, not '%s'", p->arg);
	if (p->w < 1 || p->h < 1 || p->w > IMG_MAX_SIDE || p->h > IMG_MAX_SIDE ||
	    p->x > IMG_MAX_SIDE || p->y > IMG_MAX_SIDE)
		return err_set("crop: sides must be 1 to %d and offsets 0 to %d, not '%s'",
			       IMG_MAX_SIDE, IMG_MAX_SIDE, p->arg);
	return 0;
}

// The rectangle's top left corner in an input of geometry in (centred or as given).
static void crop_origin(const struct crop_params *p, const struct geom *in, long *x, long *y)
{
	*x = p->centred ? (in->w - p->w) / 2 : p->x;
	*y = p->centred ? (in->h - p->h) / 2 : p->y;
}

static int crop_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	const struct crop_params *p = params;
	long x, y;
	crop_origin(p, in, &x, &y);
	if (p->w > in->w || p->h > in->h || x < 0 || y < 0 || x + p->w > in->w ||
	    y + p->h > in->h)
		return err_set("crop: the rectangle reaches outside the %dx%d image", in->w, in->h);
	plan->out = (struct geom){ (int)p->w, (int)p->h, in->ch, in->orient };
	plan->passthrough = false;
	return 0;
}

static void crop_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	long x, y;
	size_t row = (size_t)out->w * out->ch;
	crop_origin(params, &(struct geom){ in->w, in->h, in->ch, 0 }, &x, &y);
	for (int r = 0; r < out->h; r++)
		memcpy(out->data + (size_t)r * row,
		       in->data + (((size_t)y + r) * in->w + (size_t)x) * in->ch, row);
}

static int crop_run_cl(const void *params, const struct stage_cl *c)
{
	long x, y;
	int64_t row = (int64_t)c->gin.w * c->gin.ch;
	crop_origin(params, &c->gin, &x, &y);
	return remap_rows_run_cl(c, "crop", "crop", y * row + x * c->gin.ch, row);
}

const struct stage_ops stage_crop = {
	.name = "crop",
	.usage = "crop:WxH[+X+Y]",
	.summary = "the W x H rectangle at (X, Y), or centred: out(x, y) = in(X + x, Y + y)",
	.help =
		"The W x H rectangle whose top-left pixel is (X, Y), in ImageMagick's geometry\n"
		"syntax. W and H are 1 to 65535, X and Y 0 to 65535, in plain decimal. A\n"
		"rectangle that reaches outside the image is a usage error found when the chain\n"
		"is planned, before any pixel is decoded; the message names the image's size.\n"
		"\n"
		"Formula:\n"
		"  out(x, y) = in(X + x, Y + y)\n"
		"\n"
		"Default: without +X+Y the rectangle is centred, X = floor((W' - W) / 2) and\n"
		"Y = floor((H' - H) / 2) for a W' x H' input (an odd margin's extra pixel on the\n"
		"right and at the bottom).\n"
		"\n"
		"Example:\n"
		"  climg in.png crop:32x24+8+4 -o part.png\n",
	.params_size = sizeof(struct crop_params),
	.parse = crop_parse,
	.plan = crop_plan,
	.run_cpu = crop_run_cpu,
	.program = "crop",
	.run_cl = crop_run_cl,
};
