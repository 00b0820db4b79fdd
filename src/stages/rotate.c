// SPDX-License-Identifier: MIT
// rotate: turn the image clockwise by a multiple of 90 degrees, as an exact index remap.
//
//   rotate:DEGREES   DEGREES is a multiple of 90, negative or beyond 360 allowed;
//                    positive is clockwise (as ImageMagick -rotate and vips rot).
//
// Output size: W x H for 0 and 180, H x W for 90 and 270. With W, H the input size and
// (x, y) an output pixel:
//    90: out(x, y) = in(y, H-1-x)
//   180: out(x, y) = in(W-1-x, H-1-y)
//   270: out(x, y) = in(W-1-y, x)
// 0 (and 360, -720, ...) passes the image through. kernels/rotate.cl computes the same.
#include <math.h>

#include "../err.h"
#include "../ocl.h"
#include "../parse.h"
#include "remap.h"
#include "stage.h"

struct rotate_params {
	int quarters; // clockwise quarter turns, 0..3
};

static int rotate_parse(void *params, int argc, char **argv)
{
	struct rotate_params *p = params;
	double deg, r;
	if (argc != 1)
		return err_set("rotate: needs one angle in degrees, e.g. rotate:90");
	if (!parse_double(argv[0], &deg))
		return err_set("rotate: angle must be a number, not '%s'", argv[0]);
	r = fmod(deg, 360.0);
	if (r < 0)
		r += 360.0;
	if (r != 0.0 && r != 90.0 && r != 180.0 && r != 270.0)
		return err_set("rotate: angle must be a multiple of 90 degrees, not '%s'", argv[0]);
	p->quarters = (int)(r / 90.0);
	return 0;
}

static int rotate_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	const struct rotate_params *p = params;
	plan->out = *in;
	plan->passthrough = p->quarters == 0;
	if (p->quarters % 2) {
		plan->out.w = in->h;
		plan->out.h = in->w;
	}
	return 0;
}

static void rotate_run_cpu(const void *params, const struct img *in, struct img *out)
{
	const struct rotate_params *p = params;
	int W = in->w, H = in->h, ch = in->ch;
	if (!out)
		return;
	for (int y = 0; y < out->h; y++) {
		uint8_t *d = out->data + (size_t)y * out->w * ch;
		for (int x = 0; x < out->w; x++, d += ch) {
			int sx, sy;
			switch (p->quarters) {
			case 1: sx = y, sy = H - 1 - x; break;
			case 2: sx = W - 1 - x, sy = H - 1 - y; break;
			default: sx = W - 1 - y, sy = x; break;
			}
			const uint8_t *s = in->data + ((size_t)sy * W + sx) * ch;
			for (int c = 0; c < ch; c++)
				d[c] = s[c];
		}
	}
}

static int rotate_run_cl(const void *params, const struct stage_cl *c)
{
	const struct rotate_params *p = params;
	int W = c->gin.w, H = c->gin.h, ch = c->gin.ch;
	if (!c->out)
		return 0;
	if (p->quarters == 1)
		return remap_run_cl(c, "rotate", "rotate_90");
	if (p->quarters == 3)
		return remap_run_cl(c, "rotate", "rotate_270");
	if (W % 4 == 0) {
		// rotate_180_cN: each item reverses 4 groups of 4 pixels, 256 items a group
		static const char *const name[] = { NULL, "rotate_180_c1", "rotate_180_c2",
						     "rotate_180_c3", "rotate_180_c4" };
		size_t groups = (size_t)W / 4, items = (groups + 3) / 4;
		return ocl_run(c->ocl, "rotate", name[ch], (items + 255) / 256 * 256, (size_t)H,
			       256, 1,
			       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(W),
						   OCL_INT(H), OCL_END });
	}
	return ocl_run(c->ocl, "rotate", "rotate_180", (size_t)W, (size_t)H, 0, 0,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(W), OCL_INT(H),
					   OCL_INT(ch), OCL_END });
}

const struct stage_ops stage_rotate = {
	.name = "rotate",
	.usage = "rotate:DEGREES",
	.summary = "turn clockwise by a multiple of 90 degrees (exact remap)",
	.params_size = sizeof(struct rotate_params),
	.parse = rotate_parse,
	.plan = rotate_plan,
	.run_cpu = rotate_run_cpu,
	.program = "rotate",
	.run_cl = rotate_run_cl,
};
