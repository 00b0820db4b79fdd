// SPDX-License-Identifier: MIT
// rotate: turn the image clockwise by any angle. Multiples of 90 degrees are exact index
// remaps; other angles resample the input through an inverse mapping in integers.
//
//   rotate:DEGREES[:bilinear|nearest][:expand|crop][:bg=COLOUR]
//     DEGREES   any finite number, reduced modulo 360; positive is clockwise (as
//               ImageMagick -rotate and vips rot), negative anticlockwise
//     bilinear  (the default) or nearest: how angles that are not multiples of 90 sample
//               the input; right angles never interpolate
//     expand    (the default) the canvas holds the whole rotated image; crop keeps W x H
//     bg=V, bg=#RRGGBB, bg=#RRGGBBAA   the background of pixels the image does not cover:
//               V is an opaque grey 0-255, hex digits in either case. Default: black,
//               fully transparent where the image has alpha. An image without alpha
//               ignores AA; a grey image takes the colour's BT.601 luma,
//               (9798 R + 19235 G + 3735 B + 16384) >> 15, as the grey stage computes it
//   The options after the angle come in any order, each at most once.
//
// Output size, W x H the input's: crop keeps W x H. expand: W x H for 0 and 180, H x W for
// 90 and 270, otherwise (as ImageMagick -rotate)
//   W' = ceil(W |cos A| + H |sin A| - 1e-6),  H' = ceil(W |sin A| + H |cos A| - 1e-6)
// with cos A and sin A from rotate_sincos(). The pipeline refuses sides over 65535 pixels
// and areas over --max-pixels before any pixel moves.
//
// Right angles, (x, y) an output pixel:
//    90: out(x, y) = in(y, H-1-x)
//   180: out(x, y) = in(W-1-x, H-1-y)
//   270: out(x, y) = in(W-1-y, x)
// 0 (and 360, -720, ...) passes the image through. With crop, 90 and 270 of a non-square
// image are these remaps placed on the W x H canvas, computed exactly by the nearest
// mapping below (its positions are whole or half pixels, rounded up):
//    90: out(x, y) = in(y + k, H-1-x + k),  k = ceil((W-H)/2)
//   270: out(x, y) = in(W-1-y + m, x + m),  m = ceil((H-W)/2)
// and the background where that falls outside the input.
//
// Border rule and the mapping for any other angle (kernels/rotate.cl computes exactly this
// and cites it as "the mapping"). Pixel (x, y) is the square centred on (x + 1/2, y + 1/2);
// the input centre (W/2, H/2) goes to the output centre (W'/2, H'/2); each output pixel
// centre is mapped back into the input by the rotation through -A, so there are no holes:
//   C = round(2^30 cos A), S = round(2^30 sin A)   once, on the host (|C|, |S| <= 2^30)
//   dx = 2x + 1 - W',  dy = 2y + 1 - H'             twice the offset from the output centre
//   U = 2^30 (W-1) + C dx + S dy + 2^48             = 2^31 (source x + 2^17)
//   V = 2^30 (H-1) - S dx + C dy + 2^48             = 2^31 (source y + 2^17)
// in 64-bit integers: |C dx| < 2^46, and 2^48 (2^17 pixels) keeps U and V positive (a
// source point is within 46341 pixels of the centre of an input of at most 65535 a side),
// so >> is floor. Coefficient error: 2^-31 times at most 46341 pixels < 0.00003 pixel.
//   nearest:  sx = ((U + 2^30) >> 31) - 2^17, sy likewise from V        (half rounds up)
//             out = in(sx, sy), or the background outside the input
//   bilinear: u = (U + 2^22) >> 23, v likewise              (in 1/256 pixel, half rounds up)
//             sx = (u >> 8) - 2^17, fx = u & 255; sy, fy likewise from v
//             p00 = in(sx, sy), p10 = in(sx+1, sy), p01 = in(sx, sy+1), p11 = in(sx+1, sy+1),
//             each the background where outside the input, weigh
//             w00 = (256-fx)(256-fy), w10 = fx (256-fy), w01 = (256-fx) fy, w11 = fx fy
//             (summing to 2^16). Without alpha (1 and 3 channels), every channel:
//               out = (sum w p + 2^15) >> 16
//             With alpha (2 and 4 channels, alpha last) colour is weighted by alpha, so a
//             transparent sample lends no colour (no dark fringe on a transparent bg):
//               D = sum w a,  alpha = (D + 2^15) >> 16
//               colour = (sum w a p + D/2) / D, integer division (D/2 rounded down),
//                        or (sum w p + 2^15) >> 16 when D = 0
//             All sums fit 32 unsigned bits: sum w a p <= 2^16 * 255 * 255 < 2^32 - 2^23.
#if defined(__clang__)
// rotate_sincos must round every operation: no fused multiply-adds (GCC does not fuse in
// ISO C mode, -std=c11; clang needs telling)
#pragma STDC FP_CONTRACT OFF
#endif
#include "rotate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "../ocl.h"
#include "../parse.h"
#include "../suggest.h"
#include "remap.h"
#include "stage.h"

#define BIAS_PX (1 << 17)       // pixels added to source positions to keep them positive
#define BIAS ((int64_t)1 << 48) // the same, in units of 2^-31 pixel
#define ONE ((int64_t)1 << 30)  // the scale of C and S

enum bg_kind { BG_DEFAULT = 0, BG_GREY, BG_RGBA };

struct rotate_params {
	int quarters; // right angles: clockwise quarter turns 0..3; -1 for other angles
	bool nearest, crop;
	double cos_a, sin_a; // from rotate_sincos(), for the canvas size
	int32_t c, s;        // round(2^30 cos A), round(2^30 sin A)
	enum bg_kind bg_kind;
	uint8_t bg[4]; // BG_GREY: bg[0]; BG_RGBA: R, G, B, A
};

// ---- the angle ------------------------------------------------------------------------------

// sin and cos of t degrees, 0 < t <= 45, by their Taylor series to x^17 and x^16 (the next
// terms are below 1e-17) in Horner form, sin x = x (1 - x^2/(2*3) (1 - x^2/(4*5) (...))):
// a fixed sequence of correctly rounded IEEE operations, so the same bits on every host.
static void sincos_45(double t, double *sin_t, double *cos_t)
{
	double x = t * 0.017453292519943295; // pi / 180
	double x2 = x * x, s = 1, c = 1;
	for (int k = 8; k >= 1; k--) {
		s = 1 - x2 / ((2 * k) * (2 * k + 1)) * s;
		c = 1 - x2 / ((2 * k - 1) * (2 * k)) * c;
	}
	*sin_t = x * s;
	*cos_t = c;
}

// The angle reduced to 0 <= r < 360 degrees. fmod is exact; adding 360 to a tiny negative
// remainder may round to 360, which is 0.
static double reduce_360(double degrees)
{
	double r = fmod(degrees, 360.0);
	if (r < 0)
		r += 360.0;
	return r >= 360.0 ? 0.0 : r;
}

void rotate_sincos(double degrees, double *cos_a, double *sin_a)
{
	double r = reduce_360(degrees), t, st, ct;
	int q = r >= 270 ? 3 : r >= 180 ? 2 : r >= 90 ? 1 : 0;
	t = r - 90.0 * q; // exact (Sterbenz), 0 <= t < 90
	if (t == 0)
		st = 0, ct = 1;
	else if (t == 45)
		st = ct = 0.70710678118654752440; // sqrt(1/2): sin and cos exactly equal
	else if (t < 45)
		sincos_45(t, &st, &ct);
	else
		sincos_45(90.0 - t, &ct, &st); // 90 - t is exact
	// sin(t + 90) = cos t, cos(t + 90) = -sin t
	switch (q) {
	case 0: *cos_a = ct, *sin_a = st; break;
	case 1: *cos_a = -st, *sin_a = ct; break;
	case 2: *cos_a = -ct, *sin_a = -st; break;
	default: *cos_a = st, *sin_a = -ct; break;
	}
}

// ---- parsing --------------------------------------------------------------------------------

// bg=V, bg=#RRGGBB or bg=#RRGGBBAA (v is the part after "bg=").
static int parse_bg(struct rotate_params *p, const char *v)
{
	size_t n = strlen(v);
	long grey;
	if (v[0] == '#' && (n == 7 || n == 9)) {
		p->bg[3] = 255;
		if (!parse_hex_bytes(v + 1, (int)(n - 1) / 2, p->bg))
			goto bad;
		p->bg_kind = BG_RGBA;
		return 0;
	}
	if (parse_long(v, 0, 255, &grey)) {
		p->bg[0] = (uint8_t)grey;
		p->bg_kind = BG_GREY;
		return 0;
	}
bad:
	return err_set("rotate: bg must be a grey level 0-255, #RRGGBB or #RRGGBBAA, not '%s'", v);
}

static int rotate_parse(void *params, int argc, char **argv)
{
	struct rotate_params *p = params;
	bool interp_set = false, canvas_set = false, bg_set = false;
	double deg, r;
	if (argc < 1)
		return err_set("rotate: needs an angle in degrees, e.g. rotate:90 or rotate:30");
	if (!parse_double(argv[0], &deg))
		return err_set("rotate: angle must be a number, not '%s'", argv[0]);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool *seen;
		if (!strcmp(a, "nearest") || !strcmp(a, "bilinear")) {
			seen = &interp_set;
			p->nearest = a[0] == 'n';
		} else if (!strcmp(a, "expand") || !strcmp(a, "crop")) {
			seen = &canvas_set;
			p->crop = a[0] == 'c';
		} else if (!strncmp(a, "bg=", 3)) {
			seen = &bg_set;
			if (!bg_set && parse_bg(p, a + 3) < 0)
				return -1;
		} else {
			static const char *const opts[] = { "bilinear", "nearest", "expand",
							    "crop", "bg=", NULL };
			err_set("rotate: unknown option '%s' (use bilinear, nearest, expand, crop "
				"or bg=COLOUR)",
				a);
			return suggest_err(suggest(a, opts));
		}
		if (*seen)
			return err_set("rotate: '%s' repeats or contradicts an earlier option", a);
		*seen = true;
	}
	rotate_sincos(deg, &p->cos_a, &p->sin_a);
	p->c = (int32_t)lround(p->cos_a * (double)ONE); // exact scaling, then half away from 0
	p->s = (int32_t)lround(p->sin_a * (double)ONE);
	r = reduce_360(deg);
	p->quarters = -1;
	if (r == 0.0 || r == 90.0 || r == 180.0 || r == 270.0)
		p->quarters = (int)(r / 90.0);
	return 0;
}

// ---- geometry -------------------------------------------------------------------------------

// Whether a run takes the mapping rather than the right-angle remaps: any angle that is not
// a multiple of 90, and 90 or 270 cropped to a non-square canvas.
static bool use_mapping(const struct rotate_params *p, const struct geom *in)
{
	return p->quarters < 0 || (p->crop && p->quarters % 2 && in->w != in->h);
}

static int rotate_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	const struct rotate_params *p = params;
	plan->out = *in;
	plan->passthrough = p->quarters == 0;
	if (p->crop)
		return 0;
	if (p->quarters > 0) {
		if (p->quarters % 2) {
			plan->out.w = in->h;
			plan->out.h = in->w;
		}
		return 0;
	}
	// At most 65535 * sqrt(2): the pipeline refuses what exceeds its limits.
	double ca = fabs(p->cos_a), sa = fabs(p->sin_a);
	plan->out.w = (int)ceil(in->w * ca + in->h * sa - 1e-6);
	plan->out.h = (int)ceil(in->w * sa + in->h * ca - 1e-6);
	return 0;
}

// Right angles are remaps (remap_cost); other angles cost their output samples times the taps
// each reads (4 bilinear, 1 nearest), on one core.
static void rotate_cost(const void *params, const struct geom *in, const struct stage_plan *plan,
			struct stage_cost *cost)
{
	const struct rotate_params *p = params;
	if (p->quarters >= 0) {
		remap_cost(params, in, plan, cost);
		return;
	}
	*cost = (struct stage_cost){ "rotate",
				     (double)geom_bytes(&plan->out) * (p->nearest ? 1 : 4), false };
}

// ---- the mapping on the CPU -----------------------------------------------------------------

// The background for an image of ch channels (see the header).
static void bg_pixel(const struct rotate_params *p, int ch, uint8_t bg[4])
{
	uint8_t r = p->bg[0], g = p->bg[1], b = p->bg[2], a = p->bg[3];
	memset(bg, 0, 4);
	if (p->bg_kind == BG_DEFAULT)
		return; // black, transparent
	if (p->bg_kind == BG_GREY)
		g = b = r, a = 255;
	if (ch <= 2)
		bg[0] = (uint8_t)((9798 * r + 19235 * g + 3735 * b + 16384) >> 15);
	else
		bg[0] = r, bg[1] = g, bg[2] = b;
	if (ch == 2 || ch == 4)
		bg[ch - 1] = a;
}

void rotate_map_cpu(const struct rotate_map *m, const struct img *in, struct img *out)
{
	const int W = in->w, H = in->h, ch = in->ch, ow = out->w, oh = out->h;
	const bool alpha = ch == 2 || ch == 4;
	for (int y = 0; y < oh; y++) {
		uint8_t *d = out->data + (size_t)y * ow * ch;
		for (int x = 0; x < ow; x++, d += ch) {
			int64_t dx = 2 * x + 1 - ow, dy = 2 * y + 1 - oh;
			int64_t U = ((int64_t)(W - 1) << 30) + dx * m->c + dy * m->s + BIAS;
			int64_t V = ((int64_t)(H - 1) << 30) - dx * m->s + dy * m->c + BIAS;
			if (!m->bilinear) {
				int sx = (int)((U + ONE) >> 31) - BIAS_PX;
				int sy = (int)((V + ONE) >> 31) - BIAS_PX;
				const uint8_t *s = m->bg;
				if (sx >= 0 && sx < W && sy >= 0 && sy < H)
					s = in->data + ((size_t)sy * W + sx) * ch;
				memcpy(d, s, (size_t)ch);
				continue;
			}
			uint32_t u = (uint32_t)((U + (1 << 22)) >> 23);
			uint32_t v = (uint32_t)((V + (1 << 22)) >> 23);
			int sx = (int)(u >> 8) - BIAS_PX, sy = (int)(v >> 8) - BIAS_PX;
			uint32_t fx = u & 255, fy = v & 255;
			uint32_t w[4] = { (256 - fx) * (256 - fy), fx * (256 - fy), (256 - fx) * fy,
					  fx * fy };
			const uint8_t *p[4];
			for (int k = 0; k < 4; k++) {
				int px = sx + (k & 1), py = sy + (k >> 1);
				p[k] = m->bg;
				if (px >= 0 && px < W && py >= 0 && py < H)
					p[k] = in->data + ((size_t)py * W + px) * ch;
			}
			uint32_t D = 0, wa[4] = { 0, 0, 0, 0 };
			if (alpha) {
				for (int k = 0; k < 4; k++)
					D += wa[k] = w[k] * p[k][ch - 1];
				d[ch - 1] = (uint8_t)((D + 32768) >> 16);
			}
			for (int c = 0; c < ch - alpha; c++) {
				uint32_t n = 0;
				if (D) {
					for (int k = 0; k < 4; k++)
						n += wa[k] * p[k][c];
					d[c] = (uint8_t)((n + D / 2) / D);
				} else {
					for (int k = 0; k < 4; k++)
						n += w[k] * p[k][c];
					d[c] = (uint8_t)((n + 32768) >> 16);
				}
			}
		}
	}
}

// The mapping for params p on an image of ch channels.
static struct rotate_map map_of(const struct rotate_params *p, int ch)
{
	struct rotate_map m = { .c = p->c, .s = p->s, .bilinear = !p->nearest };
	if (p->quarters >= 0)
		m.bilinear = false; // right angles never interpolate
	bg_pixel(p, ch, m.bg);
	return m;
}

// ---- the right-angle remaps -------------------------------------------------------------------

// Pixels a work-item of rotate_180_cpu_cN reverses; keep in step with kernels/rotate.cl.
#define ROTATE_180_CPU_PX 16384
// The mapping kernels' tile and work-group, ROTATE_TILE x ROTATE_RY(ch) items; keep in step too.
enum { ROTATE_TILE = 32 };
#define ROTATE_RY(ch) ((ch) == 1 ? 2 : 4)

static void rotate_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	// quarters 0 is a passthrough (out is NULL): its entry is never used
	static const enum remap_mode mode[] = { REMAP_90, REMAP_90, REMAP_180, REMAP_270 };
	const struct rotate_params *p = params;
	if (out)
		remap_run_cpu(in, out, mode[p->quarters]);
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
	// the arguments of every rotate_180_* kernel
	struct ocl_arg args[] = { OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(W), OCL_INT(H),
				  OCL_END };
	if (ocl_cpu_kernels(c->ocl)) {
		// rotate_180_cpu_cN: ROTATE_180_CPU_PX pixels a work-item, one a work-group
		static const char *const name[] = { NULL, "rotate_180_cpu_c1", "rotate_180_cpu_c2",
						     "rotate_180_cpu_c3", "rotate_180_cpu_c4" };
		size_t items = up_div((size_t)W * (size_t)H, ROTATE_180_CPU_PX);
		return ocl_run(c->ocl, "rotate", ch, name[ch], items, 1, 1, 1, args);
	}
	if (ch == 1 && W % 16 == 0)
		return ocl_run(c->ocl, "rotate", ch, "rotate_180_c1_16", (size_t)W / 16, (size_t)H,
			       0, 0, args);
	// the others reverse 4 groups an item, 256 items a work-group or as many as the device
	// allows (the kernels take any): rotate_180_unaligned_c1_16 (one channel, any W: groups
	// of 16 bytes in the image as one row), rotate_180_cN (W a multiple of 4: groups of 4
	// pixels in each row) or rotate_180_unaligned_cN (any W: groups of 4 pixels in the image
	// as one row)
	static const char *const name[2][5] = {
		{ NULL, "rotate_180_unaligned_c1_16", "rotate_180_unaligned_c2",
		  "rotate_180_unaligned_c3", "rotate_180_unaligned_c4" },
		{ NULL, NULL, "rotate_180_c2", "rotate_180_c3", "rotate_180_c4" },
	};
	const size_t n = (size_t)W * (size_t)H;
	const bool rows = ch > 1 && W % 4 == 0;
	const size_t groups = ch == 1 ? n / 16 : rows ? (size_t)W / 4 : n / 4;
	const size_t items = up_div(groups, 4) + (groups == 0); // item 0 copies the last pixels too
	const size_t lw = ocl_local_width(c->ocl, "rotate", ch, name[rows][ch], 256);
	if (!lw)
		return -1;
	return ocl_run(c->ocl, "rotate", ch, name[rows][ch], up_div(items, lw) * lw,
		       rows ? (size_t)H : 1, lw, 1, args);
}

// ---- either path ------------------------------------------------------------------------------

static void rotate_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		       struct img *out)
{
	const struct rotate_params *p = params;
	struct geom g = { in->w, in->h, in->ch, 0 };
	if (out && use_mapping(p, &g)) {
		struct rotate_map m = map_of(p, in->ch);
		rotate_map_cpu(&m, in, out);
		return;
	}
	rotate_run_cpu(params, plan, in, out);
}

static int rotate_cl(const void *params, const struct stage_cl *c)
{
	const struct rotate_params *p = params;
	if (!c->out || !use_mapping(p, &c->gin))
		return rotate_run_cl(params, c);
	struct rotate_map m = map_of(p, c->gin.ch);
	uint32_t bg = m.bg[0] | m.bg[1] << 8 | m.bg[2] << 16 | (uint32_t)m.bg[3] << 24;
	int ch = c->gin.ch;
	// rotate_nearest_cN, rotate_bilinear_cN: tiles of ROTATE_TILE pixels a side, whose items
	// make their pixels in the order T and trans give (kernels/rotate.cl): along input rows.
	// Their _skew_cN forms where the output's rows are not whole words (ow ch not a multiple
	// of 4): each tile row then starts up to 3 pixels right, on a word (rotate_skew); and
	// there, for grey bilinear along output rows (trans), rotate_bilinear_wrap_c1.
	static const char *const tiles[2][2][5] = {
		{ { NULL, "rotate_nearest_c1", "rotate_nearest_c2", "rotate_nearest_c3",
		    "rotate_nearest_c4" },
		  { NULL, "rotate_bilinear_c1", "rotate_bilinear_c2", "rotate_bilinear_c3",
		    "rotate_bilinear_c4" } },
		{ { NULL, "rotate_nearest_skew_c1", "rotate_nearest_skew_c2", "rotate_nearest_skew_c3",
		    NULL },
		  { NULL, "rotate_bilinear_skew_c1", "rotate_bilinear_skew_c2",
		    "rotate_bilinear_skew_c3", NULL } },
	};
	const bool skew = (size_t)c->gout.w * ch % 4 != 0, trans = llabs(m.s) > llabs(m.c);
	const char *tile = skew && m.bilinear && ch == 1 && trans ? "rotate_bilinear_wrap_c1"
							       : tiles[skew][m.bilinear][ch];
	int fits = 0;
	if (!ocl_cpu_kernels(c->ocl) && geom_bytes(&c->gin) <= INT32_MAX) {
		fits = ocl_kernel_fits(c->ocl, "rotate", ch, tile, ROTATE_TILE, ROTATE_RY(ch));
		if (fits < 0)
			return -1;
	}
	if (!fits) {
		// one pixel a work-item, for CPU devices, for inputs too large for the tile
		// kernels' 32-bit offsets and for devices that do not allow their work-group;
		// bilinear without alpha (1 and 3 channels) is shorter
		const char *kernel = !m.bilinear ? "rotate_nearest_cpu"
				     : ch == 1	 ? "rotate_bilinear_cpu_c1"
				     : ch == 3	 ? "rotate_bilinear_cpu_c3"
						 : "rotate_bilinear_cpu";
		return ocl_run(c->ocl, "rotate", ch, kernel, (size_t)c->gout.w, (size_t)c->gout.h,
			       0, 0,
			       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(c->gin.w),
						   OCL_INT(c->gin.h), OCL_INT(ch), OCL_INT(c->gout.w),
						   OCL_INT(c->gout.h), OCL_INT(m.c), OCL_INT(m.s),
						   OCL_UINT(bg), OCL_END });
	}
	int64_t t = (int64_t)(trans ? m.c : m.s) * 65536 / (trans ? m.s : m.c);
	size_t tw = up_div((size_t)c->gout.w, ROTATE_TILE), th = up_div((size_t)c->gout.h, ROTATE_TILE);
	return ocl_run(c->ocl, "rotate", ch, tile, tw * ROTATE_TILE,
		       th * ROTATE_RY(ch), ROTATE_TILE, ROTATE_RY(ch),
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(c->gin.w),
					   OCL_INT(c->gin.h), OCL_INT(c->gout.w),
					   OCL_INT(c->gout.h), OCL_INT(m.c), OCL_INT(m.s),
					   OCL_UINT(bg), OCL_INT(t), OCL_INT(trans), OCL_END });
}

const struct stage_ops stage_rotate = {
	.name = "rotate",
	.usage = "rotate:DEGREES[:bilinear|nearest][:expand|crop][:bg=COLOUR]",
	.summary = "turn clockwise by any angle: right angles exact, others bilinear or nearest",
	.help =
		"Turns the image clockwise about its centre by any angle. Multiples of 90 are an\n"
		"exact remap (90 and 270 give an H x W image, multiples of 360 pass it through);\n"
		"other angles sample the input through the inverse mapping in exact fixed point,\n"
		"the same bytes on every device.\n"
		"\n"
		"DEGREES: any finite number, reduced modulo 360; negative turns anticlockwise.\n"
		"\n"
		"Options (after the angle, any order, each at most once):\n"
		"  bilinear   (the default) blend the four nearest pixels; with alpha, colour is\n"
		"             weighted by alpha, so a transparent pixel lends no colour\n"
		"  nearest    the nearest pixel (halves round up)\n"
		"  expand     (the default) the canvas holds the whole turned image, as\n"
		"             ImageMagick -rotate\n"
		"  crop       the canvas keeps the input's W x H\n"
		"  bg=V, bg=#RRGGBB, bg=#RRGGBBAA\n"
		"             the colour of the pixels the image does not cover: V an opaque grey\n"
		"             0-255, hex digits in either case (default black, transparent where\n"
		"             the image has alpha; a grey image takes the colour's BT.601 luma)\n"
		"\n"
		"Formula, (x, y) an output pixel, W x H the input:\n"
		"   90: out(x, y) = in(y, H-1-x)\n"
		"  180: out(x, y) = in(W-1-x, H-1-y)\n"
		"  270: out(x, y) = in(W-1-y, x)\n"
		"  expand: W' = ceil(W |cos A| + H |sin A| - 1e-6),\n"
		"          H' = ceil(W |sin A| + H |cos A| - 1e-6)\n"
		"  other angles, C = round(2^30 cos A), S = round(2^30 sin A),\n"
		"  dx = 2x + 1 - W', dy = 2y + 1 - H':\n"
		"    U = 2^30 (W-1) + C dx + S dy, V = 2^30 (H-1) - S dx + C dy\n"
		"  are 2^31 times the source position; bilinear rounds it to 1/256 pixel and\n"
		"  weighs the four pixels around it, out = (sum w p + 2^15) >> 16. climg(1)\n"
		"  gives every step.\n"
		"\n"
		"Example:\n"
		"  climg in.png rotate:-12.5:bg=#ffffff -o turned.png\n",
	.params_size = sizeof(struct rotate_params),
	.parse = rotate_parse,
	.plan = rotate_plan,
	.run_cpu = rotate_cpu,
	.program = "rotate",
	.run_cl = rotate_cl,
	.cost = rotate_cost,
};
