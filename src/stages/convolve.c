// SPDX-License-Identifier: MIT
// convolve: correlate the image with a kernel, each colour channel on its own, alpha kept.
// Correlation: the kernel is not flipped, as OpenCV filter2D, libvips conv and ImageMagick
// -convolve: out(x, y) = sum k[dy][dx] * in(x + dx, y + dy), k[0][0] the top-left weight.
//
//   convolve:KERNEL[:OPTION...]   one argv token, ':' between arguments, any order
//   KERNEL  box[:size=N]               N x N ones, N odd (default 3)
//           gauss[:sigma=S][:radius=R] exp(-(dx^2 + dy^2) / (2 S^2)), S = 1, R = ceil(3 S)
//           sharpen edge sobel-x sobel-y emboss (3x3) identity (1x1): see named[] below
//           kernel=W,W,...             N*N numbers row by row, N odd, integers or decimals
//           kernel=@FILE               the same, separated by white space, one row a line
//   OPTION  norm=sum|none|D  divide by the sum of the weights (the default when it is not
//                            0, else none), by nothing, or by D
//           bias=B           added after dividing
//           border=replicate|reflect|wrap|zero   (default replicate)
//
// Output size: the input's. Border rule, for a column (row) index i outside 0..n-1:
// replicate clamps it (aaa|abcd|ddd); reflect mirrors without repeating the edge
// (dcb|abcd|cba, OpenCV's BORDER_REFLECT_101); wrap takes i mod n (bcd|abcd|abc); zero reads
// 0. Rows and columns are mapped independently and as often as needed, so a kernel wider
// than the image is fine.
//
// FIXED-POINT CONTRACT (kernels/convolve.cl and climg(1) cite this; the CPU path,
// convolve_cpu.c, is its reference). The kernel becomes integers: weights k[dy][dx] (dy, dx =
// -r..r), a divisor D >= 1 and a bias numerator B. For each output sample of a colour channel c:
//     acc = sum over dy, dx of k[dy][dx] * in(x + dx, y + dy, c)      (an exact integer)
//     t   = acc + B + floor(D / 2)
//     out = 0 if t < 0, else min(floor(t / D), 255)
// that is acc / D + B / D rounded half up (ties upwards), then saturated to 0..255: one
// rounding step. A negative t always gives 0, so only t >= 0 is ever divided and C's
// truncating division is floor division there.
// The integers come from the weights w, the norm and the bias in one of two ways:
//   exact   integers and decimals (as written: 0.1 is 1/10) are converted exactly: every
//           number multiplied by the powers of ten and the norm it needs, then all divided
//           by their common gcd. The result is exactly sum(w * in) / norm + bias, rounded
//           half up. Used whenever these integers keep within the bounds below.
//   scaled  D = 2^S: k = w / norm * 2^S rounded by largest remainder (every value rounded
//           down, then 1 added to those with the largest fractions, ties to the lower
//           index) so that the k sum to exactly round(sum(w / norm) * 2^S): for a
//           normalised kernel exactly 2^S = D, so a constant image stays constant;
//           B = round(bias * 2^S). S is the largest of 24..0 whose integers keep within
//           the bounds. Used for kernels whose exact integers would not fit.
//   gauss   scaled, one dimension at a time: u(i) = exp(-i^2 / (2 sigma^2)), i = -R..R,
//           computed once on the host in double precision; kx = ky = u / sum(u) * 2^20
//           rounded by largest remainder kept symmetric (pairs +i, -i get the same
//           weight; an odd unit goes to the centre; ties to the smaller |i|), summing to
//           2^20; D = 2^40. (With norm=none or norm=D, ky carries the factor
//           sum(u)^2 / norm and sums to round(that * 2^20); 20 drops if the bounds ask.)
// Bounds, checked when the stage is parsed so that no accumulator can overflow:
//   not separable   255 * sum|k| <= 2^31 - 1                        (int32 accumulator)
//   separable       k[dy][dx] = ky[dy] * kx[dx]: 255 * sum|kx| <= 2^31 - 1 and
//                   255 * sum|ky| <= 2^31 - 1 (int32 first pass); 255 * sum|kx| * sum|ky|
//                   + |B| + D <= 2^62 (int64 second pass); D <= 2^54.
// Separable kernels - box, gauss, and every kernel whose integers are exactly of rank one
// (found by factoring them, e.g. sobel-x = (1 2 1)^T x (-1 0 1)) - run as two 1-D passes.
// The intermediate is the exact integer partial sum (int32, never rounded), so the two
// passes give, bit for bit, the one-pass result above: the two-pass form adds no rounding.
// The CPU filters columns first, the device rows first; exact integer sums do not care.
//
// Limits: radius at most 1000 (N <= 2001); a kernel that is not separable at most 2^40
// multiply-adds per image (width * height * colour channels * N * N); a kernel file at most
// 16 MiB; |bias| <= 1000000.
//
// The stage is split by idea (src/stages/convolve_impl.h lists the files): this file holds
// the options, parse and plan; convolve_spec.c reads kernel=...; convolve_weights.c makes the
// integers above; convolve_cpu.c is the reference; convolve_cl.c picks the device kernel.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "../parse.h"
#include "../suggest.h"
#include "convolve.h"
#include "convolve_impl.h"
#include "stage.h"

#define MAX_WORK ((uint64_t)1 << 40) // multiply-adds of a kernel that is not separable
#define MAX_BIAS 1000000.0

static const char *const border_names[] = {"replicate", "reflect", "wrap", "zero"};

// The named kernels of fixed size (box and gauss are built from their options).
static const struct named named[] = {
    {"sharpen", 3, {0, -1, 0, -1, 5, -1, 0, -1, 0}},
    {"edge", 3, {0, -1, 0, -1, 4, -1, 0, -1, 0}}, // the Laplacian, centre positive
    {"sobel-x", 3, {-1, 0, 1, -2, 0, 2, -1, 0, 1}},
    {"sobel-y", 3, {-1, -2, -1, 0, 0, 0, 1, 2, 1}},
    {"emboss", 3, {-2, -1, 0, -1, 1, 1, 0, 1, 2}},
    {"identity", 1, {1}},
};
#define NNAMED (sizeof named / sizeof named[0])

// Records opt=value, refusing a second one.
static int opt_set(const char **slot, const char *name, const char *value)
{
	if (*slot)
		return err_set("convolve: %s= given twice", name);
	*slot = value;
	return 0;
}

static int args_read(struct spec *s, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		char *a = argv[i], *eq = strchr(a, '=');
		const char **slot = NULL;
		if (!eq) {
			if (s->kernel)
				return err_set("convolve: two kernels given, '%s' and '%s'",
				               s->kernel, a);
			s->kernel = a;
			if (!strcmp(a, "box"))
				s->kind = K_BOX;
			else if (!strcmp(a, "gauss"))
				s->kind = K_GAUSS;
			for (size_t j = 0; j < NNAMED && !s->kind; j++)
				if (!strcmp(a, named[j].name)) {
					s->kind = K_NAMED;
					s->named = &named[j];
				}
			if (!s->kind) {
				struct suggest near;
				suggest_init(&near, a);
				suggest_try(&near, "box");
				suggest_try(&near, "gauss");
				for (size_t j = 0; j < NNAMED; j++)
					suggest_try(&near, named[j].name);
				suggest_try(&near, "kernel=");
				err_set("convolve: unknown kernel '%s' (use box, gauss, sharpen, "
				        "edge, sobel-x, sobel-y, emboss, identity, kernel=W,W,... or "
				        "kernel=@FILE)",
				        a);
				return suggest_err(suggest_best(&near));
			}
			continue;
		}
		*eq = '\0';
		if (!strcmp(a, "kernel")) {
			if (s->kernel)
				return err_set("convolve: two kernels given, '%s' and 'kernel=%s'",
				               s->kernel, eq + 1);
			s->kernel = "kernel=...";
			s->kind = K_CUSTOM;
			slot = &s->kernel_s;
		} else if (!strcmp(a, "size"))
			slot = &s->size_s;
		else if (!strcmp(a, "sigma"))
			slot = &s->sigma_s;
		else if (!strcmp(a, "radius"))
			slot = &s->radius_s;
		else if (!strcmp(a, "norm"))
			slot = &s->norm_s;
		else if (!strcmp(a, "bias"))
			slot = &s->bias_s;
		else if (!strcmp(a, "border"))
			slot = &s->border_s;
		else {
			static const char *const opts[] = {"kernel=", "size=", "sigma=", "radius=",
			                                   "norm=",   "bias=", "border=", NULL};
			char key[SUGGEST_MAX_LEN + 2];
			snprintf(key, sizeof key, "%s=", a);
			err_set("convolve: unknown option '%s=' (use norm=, bias=, border=; "
			        "size= for box; sigma=, radius= for gauss)",
			        a);
			return suggest_err(suggest(key, opts));
		}
		if (opt_set(slot, a, eq + 1) < 0)
			return -1;
	}
	if (!s->kernel)
		return err_set("convolve: needs a kernel, e.g. convolve:gauss, convolve:sobel-x or "
		               "convolve:kernel=1,2,1,2,4,2,1,2,1");
	return 0;
}

static int options_read(struct spec *s, struct convolve_params *p)
{
	if (s->size_s && s->kind != K_BOX)
		return err_set("convolve: size= applies to box only");
	if ((s->sigma_s || s->radius_s) && s->kind != K_GAUSS)
		return err_set("convolve: %s= applies to gauss only",
		               s->sigma_s ? "sigma" : "radius");
	if (s->size_s && (!parse_long(s->size_s, 1, MAX_N, &s->size) || s->size % 2 == 0))
		return err_set("convolve: size must be an odd whole number from 1 to %d, not '%s'",
		               MAX_N, s->size_s);
	s->sigma = 1.0;
	if (s->sigma_s &&
	    (!parse_double(s->sigma_s, &s->sigma) || !(s->sigma > 0) || s->sigma > MAX_RADIUS))
		return err_set("convolve: sigma must be a number above 0 and at most %d, not '%s'",
		               MAX_RADIUS, s->sigma_s);
	if (s->radius_s && !parse_long(s->radius_s, 0, MAX_RADIUS, &s->radius))
		return err_set("convolve: radius must be a whole number from 0 to %d, not '%s'",
		               MAX_RADIUS, s->radius_s);
	if (s->kind == K_GAUSS && !s->radius_s) {
		double r = ceil(3.0 * s->sigma);
		if (r > MAX_RADIUS)
			return err_set(
			    "convolve: sigma=%s needs a radius of ceil(3 * sigma) = %.0f; "
			    "the largest is %d (give a smaller radius= or sigma=)",
			    s->sigma_s, r, MAX_RADIUS);
		s->radius = (long)r;
	}

	s->norm = NORM_DEFAULT;
	if (s->norm_s) {
		if (!strcmp(s->norm_s, "sum"))
			s->norm = NORM_SUM;
		else if (!strcmp(s->norm_s, "none"))
			s->norm = NORM_NONE;
		else if (parse_double(s->norm_s, &s->norm_v) && s->norm_v != 0) {
			s->norm = NORM_VALUE;
			s->norm_exact = convolve_dec_parse(s->norm_s, &s->norm_d);
		} else {
			static const char *const norms[] = {"sum", "none", NULL};
			err_set("convolve: norm must be sum, none or a number other than 0, not '%s'",
			        s->norm_s);
			return suggest_err(suggest(s->norm_s, norms));
		}
	}
	s->bias_exact = true;
	s->bias_d = (struct dec){0, 0};
	if (s->bias_s) {
		if (!parse_double(s->bias_s, &s->bias) || fabs(s->bias) > MAX_BIAS)
			return err_set(
			    "convolve: bias must be a number from %.0f to %.0f, not '%s'",
			    -MAX_BIAS, MAX_BIAS, s->bias_s);
		s->bias_exact = convolve_dec_parse(s->bias_s, &s->bias_d);
	}
	p->border = BORDER_REPLICATE;
	if (s->border_s) {
		int b;
		for (b = 0; b < 4 && strcmp(s->border_s, border_names[b]); b++)
			;
		if (b == 4) {
			struct suggest near;
			suggest_init(&near, s->border_s);
			for (b = 0; b < 4; b++)
				suggest_try(&near, border_names[b]);
			err_set("convolve: border must be replicate, reflect, wrap or zero, not '%s'",
			        s->border_s);
			return suggest_err(suggest_best(&near));
		}
		p->border = b;
	}
	return 0;
}

static int convolve_parse(void *params, int argc, char **argv)
{
	struct convolve_params *p = params;
	struct spec s = {0};
	int rc = -1;

	if (args_read(&s, argc, argv) < 0 || options_read(&s, p) < 0)
		goto done;
	switch (s.kind) {
	case K_BOX:
		s.n = s.size_s ? (int)s.size : 3;
		if (convolve_build_box(&s, p) < 0)
			goto done;
		snprintf(p->what, sizeof p->what, "%dx%d box", s.n, s.n);
		break;
	case K_GAUSS:
		s.n = 2 * (int)s.radius + 1;
		if (convolve_build_gauss(&s, p) < 0)
			goto done;
		snprintf(p->what, sizeof p->what, "%dx%d gauss", s.n, s.n);
		break;
	case K_NAMED:
		s.n = s.named->n;
		s.v = malloc(sizeof *s.v * 9);
		s.d = malloc(sizeof *s.d * 9);
		if (!s.v || !s.d) {
			err_set("out of memory");
			goto done;
		}
		for (int i = 0; i < s.n * s.n; i++) {
			s.v[i] = s.named->w[i];
			s.d[i] = (struct dec){s.named->w[i], 0};
		}
		if (convolve_build_list(&s, p) < 0)
			goto done;
		snprintf(p->what, sizeof p->what, "%dx%d %s", s.n, s.n, s.kernel);
		break;
	case K_CUSTOM:
		if (s.kernel_s[0] == '@' ? convolve_custom_file(&s, s.kernel_s + 1) < 0
		                         : convolve_custom_inline(&s, (char *)s.kernel_s) < 0)
			goto done;
		if (convolve_build_list(&s, p) < 0)
			goto done;
		snprintf(p->what, sizeof p->what, "%dx%d custom", s.n, s.n);
		break;
	default: err_set("convolve: needs a kernel"); goto done;
	}
	convolve_finish_setup(p);
	rc = 0;
done:
	free(s.v);
	free(s.d);
	return rc;
}

static void convolve_free(void *params)
{
	struct convolve_params *p = params;
	free(p->w);
	p->w = NULL;
}

void convolve_ints(const void *params, struct convolve_ints *out)
{
	const struct convolve_params *p = params;
	*out =
	    (struct convolve_ints){p->n,     p->separable != 0, p->D,   p->B,  p->w,  p->dev_m,
	                           p->dev_s, p->m32,            p->s32, p->pz, p->pm, p->ps,
	                           p->pn};
}

static int convolve_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	const struct convolve_params *p = params;
	plan->out = *in;
	if (!p->separable) {
		double work = (double)in->w * in->h * colour_channels(in->ch) * p->n * p->n;
		if (work > (double)MAX_WORK)
			return err_set(
			    "a %s kernel (not separable) on a %dx%d image with %d "
			    "colour channels is %.2g multiply-adds, over the limit of 2^40 "
			    "(%.2g); use a smaller or separable kernel",
			    p->what, in->w, in->h, colour_channels(in->ch), work, (double)MAX_WORK);
	}
	return 0;
}

// The colour samples times the taps each sums (n * n, or 2n for a separable kernel) and 8
// more, about what a sample costs besides its taps on either path; on one core.
static void convolve_cost(const void *params, const struct geom *in, const struct stage_plan *plan,
			  struct stage_cost *cost)
{
	const struct convolve_params *p = params;
	double taps = (p->separable ? 2.0 * p->n : (double)p->n * p->n) + 8;
	(void)plan;
	*cost = (struct stage_cost){ "convolve",
				     (double)in->w * in->h * colour_channels(in->ch) * taps, false };
}

const struct stage_ops stage_convolve = {
    .name = "convolve",
    .usage = "convolve:KERNEL[:OPTION...]",
    .summary = "correlate with a named or custom kernel (exact fixed point), alpha kept",
    .help =
        "Correlates the image with a kernel (not flipped, as OpenCV filter2D): each\n"
        "colour channel on its own, alpha kept, the output the input's size. Exact fixed\n"
        "point: one rounding step, half up, then saturated to 0..255. Box, gauss and\n"
        "every other kernel that is a column times a row run as two exact 1-D passes.\n"
        "\n"
        "KERNEL (weights row by row, top row first):\n"
        "  box[:size=N]      N x N ones, N odd, 1 to 2001 (default 3)\n"
        "  gauss[:sigma=S][:radius=R]\n"
        "                    exp(-(x^2 + y^2) / (2 S^2)); S > 0 (default 1), R at most\n"
        "                    1000 (default ceil(3 S))\n"
        "  sharpen           0 -1 0 / -1 5 -1 / 0 -1 0\n"
        "  edge              0 -1 0 / -1 4 -1 / 0 -1 0 (the Laplacian)\n"
        "  sobel-x           -1 0 1 / -2 0 2 / -1 0 1\n"
        "  sobel-y           -1 -2 -1 / 0 0 0 / 1 2 1\n"
        "  emboss            -2 -1 0 / -1 1 1 / 0 1 2\n"
        "  identity          1 (1 x 1): the image unchanged\n"
        "  kernel=W,W,...    N*N numbers, N odd, integers or decimals\n"
        "  kernel=@FILE      the same read from FILE, one row a line (# starts a comment)\n"
        "\n"
        "OPTION (any order, each at most once):\n"
        "  norm=sum|none|D   divide by the sum of the weights (the default, unless they\n"
        "                    sum to 0: then none), by nothing, or by the number D\n"
        "  bias=B            added after dividing (default 0; 128 shows signed edges)\n"
        "  border=replicate|reflect|wrap|zero\n"
        "                    the pixels outside the image: replicate (the default)\n"
        "                    aaa|abcd|ddd, reflect dcb|abcd|cba, wrap bcd|abcd|abc, or\n"
        "                    zero, 0\n"
        "\n"
        "Formula:\n"
        "  out(x, y) = round(sum k[dy][dx] in(x + dx, y + dy) / norm + bias)\n"
        "  computed from integer weights k, a divisor D and a bias B made exactly from\n"
        "  the kernel, norm and bias:\n"
        "    t = sum k[dy][dx] in(x + dx, y + dy) + B + floor(D / 2)\n"
        "    out = 0 if t < 0, else min(floor(t / D), 255)\n"
        "\n"
        "Example:\n"
        "  climg in.png convolve:gauss:sigma=2 -o blur.png\n",
    .params_size = sizeof(struct convolve_params),
    .parse = convolve_parse,
    .plan = convolve_plan,
    .run_cpu = convolve_run_cpu,
    .program = "convolve",
    .run_cl = convolve_run_cl,
    .cost = convolve_cost,
    .free_params = convolve_free,
};
