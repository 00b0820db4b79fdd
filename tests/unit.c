// SPDX-License-Identifier: MIT
// C unit tests: the number parsers, the chain parser and planner, and each stage's CPU
// reference on tiny images with hand-computed results. Prints one "PASS name" or
// "FAIL name: ..." line per check; tests/run.sh counts them.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/err.h"
#include "../src/parse.h"
#include "../src/pipeline.h"
#include "../src/stages/rotate.h"

static int failures;

#define CHECK(name, cond)                                                               \
	do {                                                                            \
		if (cond) {                                                             \
			printf("PASS %s\n", name);                                       \
		} else {                                                                \
			printf("FAIL %s: %s (line %d)\n", name, #cond, __LINE__);        \
			failures++;                                                     \
		}                                                                       \
	} while (0)

static void test_parse_numbers(void)
{
	static const char *const bad[] = { "", " 90", "90 ", "90abc", "0x1p3", "0x10", "nan",
					   "inf", "-inf", "1e309", "-1e309", "1e", "1e+", ".",
					   "+", "--1", "1..2", "1.2.3", "9O", NULL };
	static const char *const good[] = { "90", "-90", "+90", "1.5", ".5", "5.", "1e2",
					    "1E-2", "-0", "0.000", NULL };
	static const double good_v[] = { 90, -90, 90, 1.5, .5, 5, 100, .01, 0, 0 };
	char name[64];
	double d;
	long l;
	for (int i = 0; bad[i]; i++) {
		snprintf(name, sizeof name, "parse_double rejects '%s'", bad[i]);
		CHECK(name, !parse_double(bad[i], &d));
	}
	for (int i = 0; good[i]; i++) {
		snprintf(name, sizeof name, "parse_double reads '%s'", good[i]);
		CHECK(name, parse_double(good[i], &d) && d == good_v[i]);
	}
	CHECK("parse_long reads 42", parse_long("42", 0, 100, &l) && l == 42);
	CHECK("parse_long reads -7", parse_long("-7", -10, 10, &l) && l == -7);
	CHECK("parse_long rejects above max", !parse_long("101", 0, 100, &l));
	CHECK("parse_long rejects below min", !parse_long("-1", 0, 100, &l));
	CHECK("parse_long rejects decimals", !parse_long("1.0", 0, 100, &l));
	CHECK("parse_long rejects overflow", !parse_long("99999999999999999999", 0, 100, &l));
}

// Parses one token as a one-stage chain: 0 on success, -1 on failure.
static int parse_one(const char *token)
{
	struct chain c;
	char *t = (char *)token;
	if (chain_parse(&c, 1, &t) < 0)
		return -1;
	chain_free(&c);
	return 0;
}

static void test_chain_parse(void)
{
	static const char *const good[] = { "grey", "grey:bt601", "grey:bt709", "grey:avg",
					    "rotate:90", "rotate:-90", "rotate:450", "rotate:0",
					    "rotate:180.0", "rotate:-720", "rotate:30",
					    "rotate:-0.5", "rotate:1e300", "rotate:30:nearest",
					    "rotate:30:bilinear:crop", "rotate:30:crop:nearest:bg=7",
					    "rotate:30:bg=#ff000080:expand", "rotate:30:bg=#A0b0C0",
					    "rotate:90:crop:bg=255", "transpose", NULL };
	static const char *const bad[] = { "", ":", "nosuch", "Grey", "grey:", "grey:foo",
					   "grey:avg:avg", "rotate", "rotate:", "rotate:abc",
					   "rotate:90abc", "rotate:0x1p3", "rotate: 90",
					   "rotate:1e309", "rotate:1e999", "rotate:nan", "rotate:inf",
					   "rotate:90:90", "rotate:30:", "rotate:30:cubic",
					   "rotate:30:nearest:bilinear", "rotate:30:nearest:nearest",
					   "rotate:30:crop:expand", "rotate:30:bg=1:bg=1",
					   "rotate:30:bg=", "rotate:30:bg=256", "rotate:30:bg=-1",
					   "rotate:30:bg=#ff00", "rotate:30:bg=#ff00000",
					   "rotate:30:bg=#gg0000", "rotate:30:bg=ff0000",
					   "rotate:30:bg=#ff0000ff00", "rotate:30:BG=1", "transpose:1",
					   NULL };
	char name[80];
	for (int i = 0; good[i]; i++) {
		snprintf(name, sizeof name, "chain accepts '%s'", good[i]);
		CHECK(name, parse_one(good[i]) == 0);
	}
	for (int i = 0; bad[i]; i++) {
		snprintf(name, sizeof name, "chain rejects '%s'", bad[i]);
		CHECK(name, parse_one(bad[i]) < 0 && *err_msg());
	}
	parse_one("nosuch:1");
	CHECK("unknown stage message names it", strstr(err_msg(), "unknown stage 'nosuch'"));
	parse_one("rotate:abc");
	CHECK("rotate message names the argument",
	      !strcmp(err_msg(), "rotate: angle must be a number, not 'abc'"));
}

// Runs a chain given as tokens on the CPU; returns the output (caller frees data).
static struct img run_chain(int n, const char **tokens, const struct img *in)
{
	struct chain c;
	struct img out = { 0 };
	struct geom g = { in->w, in->h, in->ch };
	if (chain_parse(&c, n, (char **)tokens) < 0 || chain_plan(&c, &g) < 0 ||
	    pipeline_cpu(&c, in, &out, NULL) < 0) {
		printf("FAIL run_chain: %s\n", err_msg());
		failures++;
		exit(1);
	}
	chain_free(&c);
	return out;
}

static int img_is(const struct img *im, int w, int h, int ch, const uint8_t *want)
{
	return im->w == w && im->h == h && im->ch == ch && !memcmp(im->data, want, (size_t)w * h * ch);
}

static void test_grey(void)
{
	// red, green, blue, grey 100, (10,20,31), (10,20,32)
	uint8_t px[] = { 255, 0, 0, 0, 255, 0, 0, 0, 255, 100, 100, 100, 10, 20, 31, 10, 20, 32 };
	struct img in = { 6, 1, 3, px };
	const char *bt601[] = { "grey" }, *bt709[] = { "grey:bt709" }, *avg[] = { "grey:avg" };
	struct img o = run_chain(1, bt601, &in);
	// (9798*255+16384)>>15 = 76, (19235*255+16384)>>15 = 150, (3735*255+16384)>>15 = 29,
	// (32768*100+16384)>>15 = 100, (9798*10+19235*20+3735*31+16384)>>15 = 614849>>15 = 18
	// and with B=32: 618584>>15 = 18
	CHECK("grey bt601 pure colours", img_is(&o, 6, 1, 1, (uint8_t[]){ 76, 150, 29, 100, 18, 18 }));
	free(o.data);
	o = run_chain(1, bt709, &in);
	// 6967*255+16384 = 1792969 -> 54; 23435*255+16384 -> 182; 2366*255+16384 -> 18;
	// 100; (69670+468700+73346+16384)=628100 -> 19; +2366 = 630466 -> 19
	CHECK("grey bt709 pure colours", img_is(&o, 6, 1, 1, (uint8_t[]){ 54, 182, 18, 100, 19, 19 }));
	free(o.data);
	o = run_chain(1, avg, &in);
	// (255+1)/3 = 85 three times; 100; (61+1)/3 = 20; (62+1)/3 = 21
	CHECK("grey avg pure colours", img_is(&o, 6, 1, 1, (uint8_t[]){ 85, 85, 85, 100, 20, 21 }));
	free(o.data);

	uint8_t rgba[] = { 255, 0, 0, 7, 0, 0, 255, 200 };
	struct img in4 = { 1, 2, 4, rgba };
	o = run_chain(1, bt601, &in4);
	CHECK("grey keeps alpha", img_is(&o, 1, 2, 2, (uint8_t[]){ 76, 7, 29, 200 }));
	free(o.data);

	uint8_t ga[] = { 1, 2, 3, 4 };
	struct img in2 = { 2, 1, 2, ga };
	o = run_chain(1, bt601, &in2);
	CHECK("grey passes grey+alpha through", img_is(&o, 2, 1, 2, ga));
	free(o.data);
}

static void test_geometry(void)
{
	// 3x2 grey:  1 2 3
	//            4 5 6
	uint8_t px[] = { 1, 2, 3, 4, 5, 6 };
	struct img in = { 3, 2, 1, px };
	const char *r90[] = { "rotate:90" }, *r180[] = { "rotate:180" }, *r270[] = { "rotate:270" },
		   *rm90[] = { "rotate:-90" }, *tr[] = { "transpose" }, *r0[] = { "rotate:360" };
	struct img o = run_chain(1, r90, &in);
	CHECK("rotate:90 by hand", img_is(&o, 2, 3, 1, (uint8_t[]){ 4, 1, 5, 2, 6, 3 }));
	free(o.data);
	o = run_chain(1, r180, &in);
	CHECK("rotate:180 by hand", img_is(&o, 3, 2, 1, (uint8_t[]){ 6, 5, 4, 3, 2, 1 }));
	free(o.data);
	o = run_chain(1, r270, &in);
	CHECK("rotate:270 by hand", img_is(&o, 2, 3, 1, (uint8_t[]){ 3, 6, 2, 5, 1, 4 }));
	free(o.data);
	o = run_chain(1, rm90, &in);
	CHECK("rotate:-90 equals rotate:270", img_is(&o, 2, 3, 1, (uint8_t[]){ 3, 6, 2, 5, 1, 4 }));
	free(o.data);
	o = run_chain(1, tr, &in);
	CHECK("transpose by hand", img_is(&o, 2, 3, 1, (uint8_t[]){ 1, 4, 2, 5, 3, 6 }));
	free(o.data);
	o = run_chain(1, r0, &in);
	CHECK("rotate:360 is the identity", img_is(&o, 3, 2, 1, px));
	free(o.data);

	// two channels move together: 2x1 RG pixels (1,2) (3,4)
	uint8_t px2[] = { 1, 2, 3, 4 };
	struct img in2 = { 2, 1, 2, px2 };
	o = run_chain(1, r90, &in2);
	CHECK("rotate:90 keeps channels together", img_is(&o, 1, 2, 2, (uint8_t[]){ 1, 2, 3, 4 }));
	free(o.data);
	o = run_chain(1, r270, &in2);
	CHECK("rotate:270 keeps channels together", img_is(&o, 1, 2, 2, (uint8_t[]){ 3, 4, 1, 2 }));
	free(o.data);
}

static void test_plan(void)
{
	struct chain c;
	const char *t[] = { "rotate:90", "grey", "transpose", "rotate:180" };
	struct geom g = { 7, 5, 4 };
	CHECK("plan parses", chain_parse(&c, 4, (char **)t) == 0);
	CHECK("plan runs", chain_plan(&c, &g) == 0);
	CHECK("plan stage 1 output 5x7x4", c.st[0].plan.out.w == 5 && c.st[0].plan.out.h == 7 && c.st[0].plan.out.ch == 4);
	CHECK("plan stage 2 output 5x7x2", c.st[1].plan.out.w == 5 && c.st[1].plan.out.h == 7 && c.st[1].plan.out.ch == 2);
	CHECK("plan final 7x5x2", c.out.w == 7 && c.out.h == 5 && c.out.ch == 2);
	CHECK("plan max bytes", c.max_bytes == 7 * 5 * 4);
	chain_free(&c);

	// every stage's output obeys the area limit (the input is checked by io)
	CHECK("limit parses", chain_parse(&c, 4, (char **)t) == 0);
	c.max_pixels = 34;
	CHECK("plan refuses an output over max_pixels", chain_plan(&c, &g) < 0);
	CHECK("max_pixels message names the stage and the limit",
	      !strcmp(err_msg(), "rotate:90: the output would be 5x7 = 35 pixels, more than "
				 "--max-pixels 34"));
	c.max_pixels = 35;
	CHECK("plan takes an output of exactly max_pixels", chain_plan(&c, &g) == 0);
	chain_free(&c);
}

// ---- rotate by any angle ----------------------------------------------------------------

#define PI 3.14159265358979323846

static void test_rotate_sincos(void)
{
	static const double right[][3] = { { 0, 1, 0 },     { 90, 0, 1 },    { 180, -1, 0 },
					   { 270, 0, -1 },  { 360, 1, 0 },   { -90, 0, -1 },
					   { -720, 1, 0 },  { 450, 0, 1 },   { 1e300, 0, 0 } };
	double c, s, worst = 0, c2, s2;
	int exact = 1, sym = 1;
	for (size_t i = 0; i < sizeof right / sizeof right[0] - 1; i++) {
		rotate_sincos(right[i][0], &c, &s);
		exact &= c == right[i][1] && s == right[i][2];
	}
	CHECK("sincos exact at right angles", exact);
	rotate_sincos(45, &c, &s);
	CHECK("sincos 45: cos == sin", c == s && fabs(c - sqrt(0.5)) < 1e-16);
	rotate_sincos(135, &c, &s);
	CHECK("sincos 135: -cos == sin", -c == s && s == sqrt(0.5));
	// within a few units in the last place of libm's long double (measured: 5.6e-16, at
	// most 2 units in the last place between 0 and 45 degrees)
	for (double d = -725; d <= 725; d += 0.37) {
		rotate_sincos(d, &c, &s);
		long double r = fmodl(d, 360) * 3.14159265358979323846264338327950288L / 180;
		if (fabs(c - (double)cosl(r)) > worst)
			worst = fabs(c - (double)cosl(r));
		if (fabs(s - (double)sinl(r)) > worst)
			worst = fabs(s - (double)sinl(r));
	}
	printf("INFO rotate_sincos against libm: largest difference %.3g\n", worst);
	CHECK("sincos agrees with libm to 8e-16", worst < 8e-16);
	// symmetry: A and A + 180, A and -A, A and 90 - A
	for (double d = 0.5; d < 360; d += 7.25) {
		rotate_sincos(d, &c, &s);
		rotate_sincos(d + 180, &c2, &s2);
		sym &= c2 == -c && s2 == -s;
		rotate_sincos(-d, &c2, &s2);
		sym &= c2 == c && s2 == -s;
		rotate_sincos(90 - d, &c2, &s2);
		sym &= c2 == s && s2 == c;
	}
	CHECK("sincos symmetric under +180, negation and 90 - A", sym);
}

// Output size of rotate:ANGLE[:crop] for w x h, through the planner; 0 on success.
static int rotate_size(const char *token, int w, int h, int *ow, int *oh)
{
	struct chain c;
	char *t = (char *)token;
	struct geom g = { w, h, 3 };
	if (chain_parse(&c, 1, &t) < 0)
		return -1;
	int rc = chain_plan(&c, &g);
	*ow = c.out.w;
	*oh = c.out.h;
	chain_free(&c);
	return rc;
}

static void test_rotate_sizes(void)
{
	static const double angles[] = { 1, 10, 30, -30, 45, 60, 89, 89.999, 91, 135, 200,
					 315, 390, 0.001, 1e-7, -1e-9, 179.5 };
	static const int sizes[][2] = { { 1, 1 },    { 1, 17 },  { 17, 1 },   { 13, 7 },
					{ 100, 50 }, { 640, 480 }, { 3, 40000 } };
	char tok[64], name[128];
	int ow, oh, all = 1;
	// by hand: 100 cos 30 + 50 sin 30 = 111.60, 100 sin 30 + 50 cos 30 = 93.30;
	// 10 (cos 45 + sin 45) = 14.14; 1.41; 3 cos 60 + 2 sin 60 = 3.23, 3 sin 60 + 2 cos 60 = 3.60
	CHECK("rotate:30 of 100x50 is 112x94", !rotate_size("rotate:30", 100, 50, &ow, &oh) && ow == 112 && oh == 94);
	CHECK("rotate:45 of 10x10 is 15x15", !rotate_size("rotate:45", 10, 10, &ow, &oh) && ow == 15 && oh == 15);
	CHECK("rotate:45 of 1x1 is 2x2", !rotate_size("rotate:45", 1, 1, &ow, &oh) && ow == 2 && oh == 2);
	CHECK("rotate:60 of 3x2 is 4x4", !rotate_size("rotate:60", 3, 2, &ow, &oh) && ow == 4 && oh == 4);
	CHECK("rotate:90 of 7x5 is 5x7", !rotate_size("rotate:90", 7, 5, &ow, &oh) && ow == 5 && oh == 7);
	CHECK("rotate:-180 of 7x5 is 7x5", !rotate_size("rotate:-180", 7, 5, &ow, &oh) && ow == 7 && oh == 5);
	CHECK("rotate:90:crop of 7x5 is 7x5", !rotate_size("rotate:90:crop", 7, 5, &ow, &oh) && ow == 7 && oh == 5);
	CHECK("rotate:30:crop of 100x50 is 100x50", !rotate_size("rotate:30:crop", 100, 50, &ow, &oh) && ow == 100 && oh == 50);
	// the table against the formula computed here with libm
	for (size_t i = 0; i < sizeof angles / sizeof angles[0]; i++) {
		for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
			int w = sizes[j][0], h = sizes[j][1];
			double r = angles[i] * PI / 180, ca = fabs(cos(r)), sa = fabs(sin(r));
			int ew = (int)ceil(w * ca + h * sa - 1e-6), eh = (int)ceil(w * sa + h * ca - 1e-6);
			snprintf(tok, sizeof tok, "rotate:%.10g", angles[i]);
			if (rotate_size(tok, w, h, &ow, &oh) < 0 || ow != ew || oh != eh) {
				snprintf(name, sizeof name, "%s of %dx%d is %dx%d, got %dx%d", tok, w, h, ew, eh, ow, oh);
				CHECK(name, 0);
				all = 0;
			}
		}
	}
	CHECK("rotate output sizes match the formula for 17 angles x 7 sizes", all);
	CHECK("rotate:45 of 65535x30000 exceeds the side limit",
	      rotate_size("rotate:45", 65535, 30000, &ow, &oh) < 0 &&
		      strstr(err_msg(), "67554x67554") && strstr(err_msg(), "65535"));
	CHECK("rotate:45:crop of 65535x30000 is planned", !rotate_size("rotate:45:crop", 65535, 30000, &ow, &oh));
}

// The exact remap of quarter turns q (1..3), for comparing with the mapping.
static void quarter_remap(int q, const struct img *in, struct img *out)
{
	int W = in->w, H = in->h, ch = in->ch;
	for (int y = 0; y < out->h; y++)
		for (int x = 0; x < out->w; x++) {
			int sx = q == 1 ? y : q == 2 ? W - 1 - x : W - 1 - y;
			int sy = q == 1 ? H - 1 - x : q == 2 ? H - 1 - y : x;
			memcpy(out->data + ((size_t)y * out->w + x) * ch,
			       in->data + ((size_t)sy * W + sx) * ch, (size_t)ch);
		}
}

static void test_rotate_mapping_right_angles(void)
{
	static const int sizes[][2] = { { 1, 1 }, { 1, 5 }, { 6, 1 }, { 6, 5 }, { 13, 7 } };
	static const int32_t cs[4][2] = { { 1 << 30, 0 }, { 0, 1 << 30 }, { -(1 << 30), 0 },
					  { 0, -(1 << 30) } };
	int same = 1;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		for (int ch = 1; ch <= 4; ch++) {
			int w = sizes[i][0], h = sizes[i][1];
			size_t n = (size_t)w * h * ch;
			uint8_t *a = malloc(n), *b = malloc(n), *src = malloc(n);
			for (size_t k = 0; k < n; k++)
				src[k] = (uint8_t)(k * 37 + 11 + (k * k) % 13);
			if (ch == 2 || ch == 4) // some transparent pixels, to exercise the alpha weighting
				for (size_t k = ch - 1; k < n; k += 3 * ch)
					src[k] = 0;
			struct img in = { w, h, ch, src };
			for (int q = 1; q < 4; q++) {
				int ow = q % 2 ? h : w, oh = q % 2 ? w : h;
				struct img ea = { ow, oh, ch, a }, eb = { ow, oh, ch, b };
				quarter_remap(q, &in, &ea);
				for (int bil = 0; bil < 2; bil++) {
					struct rotate_map m = { cs[q][0], cs[q][1], bil, { 9, 9, 9, 9 } };
					memset(b, 0xee, n);
					rotate_map_cpu(&m, &in, &eb);
					if (memcmp(a, b, n)) {
						printf("FAIL mapping %d quarters, %s, %dx%dx%d\n", q,
						       bil ? "bilinear" : "nearest", w, h, ch);
						same = 0;
					}
				}
			}
			free(a);
			free(b);
			free(src);
		}
	}
	CHECK("the mapping with 90, 180, 270 coefficients equals the exact remap", same);
}

// 1x1 and tiny cases worked out by hand in src/stages/rotate.c's integers.
static void test_rotate_by_hand(void)
{
	const char *r45[] = { "rotate:45" }, *r45n[] = { "rotate:45:nearest" };
	uint8_t g1[] = { 200 }, ga[] = { 200, 255 };
	struct img in1 = { 1, 1, 1, g1 }, in2 = { 1, 1, 2, ga };
	// 1x1 at 45: a 2x2 canvas; C = S = round(2^30 / sqrt 2) = 759250125. Pixel (0, 0):
	// dx = dy = -1, U = 2^48 - 2C, u = (U + 2^22) >> 23 = 2^25 - 181, so sx = -1, fx = 75;
	// V = 2^48, sy = 0, fy = 0: (256 - 75) 256 of the background and 75 * 256 of 200:
	// (75 * 256 * 200 + 2^15) >> 16 = 59. The other three by symmetry.
	struct img o = run_chain(1, r45, &in1);
	CHECK("rotate:45 of a 1x1 grey 200 by hand", img_is(&o, 2, 2, 1, (uint8_t[]){ 59, 59, 59, 59 }));
	free(o.data);
	// with alpha 255 on a transparent background: D = 75 * 256 * 255 = 4896000,
	// alpha = (D + 2^15) >> 16 = 75, colour = (D * 200 + D / 2) / D = 200: no dark fringe
	o = run_chain(1, r45, &in2);
	CHECK("rotate:45 of a 1x1 grey+alpha by hand",
	      img_is(&o, 2, 2, 2, (uint8_t[]){ 200, 75, 200, 75, 200, 75, 200, 75 }));
	free(o.data);
	// nearest: every output centre is 0.707 from the pixel's centre, rounding off it
	o = run_chain(1, r45n, &in1);
	CHECK("rotate:45:nearest of a 1x1 by hand", img_is(&o, 2, 2, 1, (uint8_t[]){ 0, 0, 0, 0 }));
	free(o.data);

	// 3x2 grey 1 2 3 / 4 5 6, cropped quarter turns (see rotate.c): k = ceil(1/2) = 1,
	// 90: out(x, y) = in(y + 1, 2 - x); m = ceil(-1/2) = 0, 270: out(x, y) = in(2 - y, x)
	uint8_t px[] = { 1, 2, 3, 4, 5, 6 };
	struct img in = { 3, 2, 1, px };
	const char *c90[] = { "rotate:90:crop:bg=9" }, *c270[] = { "rotate:-90:crop" },
		   *c180[] = { "rotate:180:crop" };
	o = run_chain(1, c90, &in);
	CHECK("rotate:90:crop of 3x2 by hand", img_is(&o, 3, 2, 1, (uint8_t[]){ 9, 5, 2, 9, 6, 3 }));
	free(o.data);
	o = run_chain(1, c270, &in);
	CHECK("rotate:-90:crop of 3x2 by hand", img_is(&o, 3, 2, 1, (uint8_t[]){ 3, 6, 0, 2, 5, 0 }));
	free(o.data);
	o = run_chain(1, c180, &in);
	CHECK("rotate:180:crop is rotate:180", img_is(&o, 3, 2, 1, (uint8_t[]){ 6, 5, 4, 3, 2, 1 }));
	free(o.data);
}

// The background on every channel count: a 1x1 image at 45 degrees, nearest, is all
// background (previous test).
static void test_rotate_bg(void)
{
	static const struct {
		const char *token;
		int ch;
		uint8_t want[4];
	} cases[] = {
		{ "rotate:45:nearest", 1, { 0 } },
		{ "rotate:45:nearest", 2, { 0, 0 } },
		{ "rotate:45:nearest", 3, { 0, 0, 0 } },
		{ "rotate:45:nearest", 4, { 0, 0, 0, 0 } },
		{ "rotate:45:nearest:bg=7", 1, { 7 } },
		{ "rotate:45:nearest:bg=7", 2, { 7, 255 } },
		{ "rotate:45:nearest:bg=7", 3, { 7, 7, 7 } },
		{ "rotate:45:nearest:bg=7", 4, { 7, 7, 7, 255 } },
		// BT.601 of red: (9798 * 255 + 16384) >> 15 = 76
		{ "rotate:45:nearest:bg=#ff0000", 1, { 76 } },
		{ "rotate:45:nearest:bg=#FF000080", 2, { 76, 128 } },
		{ "rotate:45:nearest:bg=#ff000080", 3, { 255, 0, 0 } },
		{ "rotate:45:nearest:bg=#0a0B0c", 4, { 10, 11, 12, 255 } },
		{ "rotate:45:nearest:bg=#0a0b0c0d", 4, { 10, 11, 12, 13 } },
	};
	uint8_t px[4] = { 100, 100, 100, 100 };
	char name[96];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct img in = { 1, 1, cases[i].ch, px };
		struct img o = run_chain(1, (const char *[]){ cases[i].token }, &in);
		int ok = o.w == 2 && o.h == 2;
		for (int k = 0; ok && k < 4; k++)
			ok = !memcmp(o.data + k * cases[i].ch, cases[i].want, (size_t)cases[i].ch);
		snprintf(name, sizeof name, "%s background on %d channels", cases[i].token, cases[i].ch);
		CHECK(name, ok);
		free(o.data);
	}
}

// One bright pixel on black: where does it land? Checked against the rotation computed
// here in doubles: nearest exactly, bilinear to within 1.
static void test_rotate_bright_pixel(void)
{
	static const double angles[] = { 30, 45, 135 };
	static const int spots[][2] = { { 6, 1 }, { 2, 4 } };
	const int W = 9, H = 6;
	uint8_t px[9 * 6];
	char tok[2][48], name[128];
	for (size_t i = 0; i < sizeof angles / sizeof angles[0]; i++) {
		for (size_t j = 0; j < sizeof spots / sizeof spots[0]; j++) {
			int bx = spots[j][0], by = spots[j][1];
			double r = angles[i] * PI / 180, ca = cos(r), sa = sin(r);
			memset(px, 0, sizeof px);
			px[by * W + bx] = 255;
			struct img in = { W, H, 1, px };
			snprintf(tok[0], sizeof tok[0], "rotate:%g:nearest", angles[i]);
			snprintf(tok[1], sizeof tok[1], "rotate:%g", angles[i]);
			for (int bil = 0; bil < 2; bil++) {
				const char *t[] = { tok[bil] };
				struct img o = run_chain(1, t, &in);
				int ok = 1, maxv = -1, mx = -1, my = -1;
				// the forward image of the bright pixel's centre
				double Px = o.w / 2.0 + (bx + 0.5 - W / 2.0) * ca - (by + 0.5 - H / 2.0) * sa;
				double Py = o.h / 2.0 + (bx + 0.5 - W / 2.0) * sa + (by + 0.5 - H / 2.0) * ca;
				for (int y = 0; y < o.h; y++)
					for (int x = 0; x < o.w; x++) {
						double u = o.w / 2.0, v = o.h / 2.0;
						double fx = W / 2.0 + (x + 0.5 - u) * ca + (y + 0.5 - v) * sa - 0.5;
						double fy = H / 2.0 - (x + 0.5 - u) * sa + (y + 0.5 - v) * ca - 0.5;
						int got = o.data[y * o.w + x];
						double want;
						if (!bil)
							want = floor(fx + 0.5) == bx && floor(fy + 0.5) == by ? 255 : 0;
						else
							want = 255 * fmax(0, 1 - fabs(fx - bx)) * fmax(0, 1 - fabs(fy - by));
						ok &= fabs(got - want) <= (bil ? 1 : 0);
						if (got > maxv)
							maxv = got, mx = x, my = y;
					}
				snprintf(name, sizeof name, "%s: bright pixel (%d, %d) lands as rotated in doubles",
					 t[0], bx, by);
				CHECK(name, ok);
				if (bil) {
					snprintf(name, sizeof name, "%s: brightest output pixel (%d, %d) holds (%.2f, %.2f)",
						 t[0], mx, my, Px, Py);
					CHECK(name, mx == (int)floor(Px) && my == (int)floor(Py));
				}
				free(o.data);
			}
		}
	}
}

// rotate:30:crop then rotate:-30:crop on smooth and on sharp images: the interior (the
// disc that stays inside the image under any rotation, less 2 pixels) comes back close.
static int roundtrip_maxdiff(int w, int h, int ch, int sharp, double *mean)
{
	const char *t[] = { "rotate:30:crop", "rotate:-30:crop" };
	uint8_t *px = malloc((size_t)w * h * ch);
	double rad = (w < h ? w : h) / 2.0 - 2, sum = 0;
	int maxd = 0, n = 0;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			for (int c = 0; c < ch; c++)
				px[(y * w + x) * ch + c] =
					sharp ? (uint8_t)(((x / 8 + y / 8 + c) % 2) * 255)
					      : (uint8_t)(c == 0 ? x * 255 / (w - 1) : c == 1 ? y * 255 / (h - 1) : (x + y) * 255 / (w + h - 2));
	struct img in = { w, h, ch, px };
	struct img o = run_chain(2, t, &in);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			double dx = x + 0.5 - w / 2.0, dy = y + 0.5 - h / 2.0;
			if (dx * dx + dy * dy > rad * rad)
				continue;
			for (int c = 0; c < ch; c++) {
				int d = abs(o.data[(y * w + x) * ch + c] - px[(y * w + x) * ch + c]);
				maxd = d > maxd ? d : maxd;
				sum += d;
				n++;
			}
		}
	*mean = sum / n;
	free(o.data);
	free(px);
	return maxd;
}

static void test_rotate_roundtrip(void)
{
	double mean;
	int d = roundtrip_maxdiff(64, 48, 3, 0, &mean);
	printf("INFO rotate:30:crop rotate:-30:crop smooth 64x48: max %d, mean %.3f\n", d, mean);
	CHECK("rotate 30 and back: smooth interior within 1", d <= 1);
	d = roundtrip_maxdiff(61, 37, 1, 0, &mean);
	printf("INFO rotate:30:crop rotate:-30:crop smooth 61x37: max %d, mean %.3f\n", d, mean);
	CHECK("rotate 30 and back: smooth odd-sized interior within 1", d <= 1);
	d = roundtrip_maxdiff(64, 48, 1, 1, &mean);
	printf("INFO rotate:30:crop rotate:-30:crop 0/255 blocks 64x48: max %d, mean %.3f\n", d, mean);
	CHECK("rotate 30 and back: 8x8 blocks blur only at their edges (mean < 25)", mean < 25);
}

int main(void)
{
	test_parse_numbers();
	test_chain_parse();
	test_grey();
	test_geometry();
	test_plan();
	test_rotate_sincos();
	test_rotate_sizes();
	test_rotate_mapping_right_angles();
	test_rotate_by_hand();
	test_rotate_bg();
	test_rotate_bright_pixel();
	test_rotate_roundtrip();
	return failures ? 1 : 0;
}
