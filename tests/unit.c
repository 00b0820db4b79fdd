// SPDX-License-Identifier: MIT
// C unit tests: the number parsers, the chain parser and planner, and each stage's CPU
// reference on tiny images with hand-computed results (the histogram's side output, CSV
// and plot included); and pipeline_cl's input memory cases on the default OpenCL device. Prints one "PASS name" or
// "FAIL name: ..." line per check; tests/run.sh counts them.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/err.h"
#include "../src/hostmem.h"
#include "../src/ocl.h"
#include "../src/parse.h"
#include "../src/pipeline.h"
#include "../src/stages/convolve.h"
#include "../src/stages/histogram.h"
#include "../src/stages/remap.h"
#include "../src/stages/resize.h"
#include "../src/stages/rotate.h"
#include "../src/suggest.h"

#include "check.h"

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

// Every token of good (NULL-ended) parses as a one-stage chain; every token of bad fails
// with a message.
static void check_tokens(const char *const *good, const char *const *bad)
{
	char name[80];
	for (int i = 0; good[i]; i++) {
		snprintf(name, sizeof name, "chain accepts '%s'", good[i]);
		CHECK(name, parse_one(good[i]) == 0);
	}
	for (int i = 0; bad[i]; i++) {
		snprintf(name, sizeof name, "chain rejects '%s'", bad[i]);
		CHECK(name, parse_one(bad[i]) < 0 && *err_msg());
	}
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
	check_tokens(good, bad);
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
	struct plan p;
	struct img out = { 0 };
	struct geom g = { in->w, in->h, in->ch, 0 };
	if (chain_parse(&c, n, (char **)tokens) < 0 || plan_make(&p, &c, &g, 0) < 0 ||
	    pipeline_cpu(&p, in, NULL, &out, NULL) < 0) {
		printf("FAIL run_chain: %s\n", err_msg());
		failures++;
		exit(1);
	}
	plan_free(&p);
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

// ---- convolve ------------------------------------------------------------------------

// Runs one stage token on the CPU.
static struct img run_one(const char *token, const struct img *in)
{
	const char *t[] = { token };
	return run_chain(1, t, in);
}

// The expected 5x5 results below were worked out from the issue's border diagrams with the
// contract out = floor((acc + floor(D/2)) / D); e.g. kernel 1..9 (D = 45), replicate,
// (0,0): rows 0 0 10 / 0 0 10 / 40 40 50 give 30 + 60 + 1050 = 1140, (1140 + 22) / 45 = 25;
// wrap, (0,0): 240 200 210 / 250 0 10 / 80 40 50 give 3660 -> 81; zero, (4,4): 530 + 2120
// = 2650 -> 59; reflect, (4,0): 70 80 70 / 30 250 30 / 70 80 70 give 3750 -> 83.
static void test_convolve_borders(void)
{
	static uint8_t px[25] = { 0,   10,  20,  30,  250, 40,  50,  60,  70,  80,  90,  100, 110,
				  120, 130, 140, 150, 160, 170, 180, 200, 210, 220, 230, 240 };
	static const char *const modes[] = { "replicate", "reflect", "wrap", "zero" };
	// kernel=1,2,3,4,5,6,7,8,9 (not separable: the 2-D path)
	static const uint8_t k19[4][25] = {
		{ 25, 33, 43, 95, 133, 65, 73, 83, 107, 122, 114, 121, 131, 141, 147, 169, 177, 187,
		  197, 203, 196, 203, 213, 223, 229 },
		{ 33, 38, 48, 86, 83, 68, 73, 83, 107, 104, 117, 121, 131, 141, 143, 172, 177, 187,
		  197, 199, 167, 171, 181, 191, 193 },
		{ 81, 59, 69, 107, 93, 81, 73, 83, 107, 92, 125, 121, 131, 141, 131, 180, 177, 187,
		  197, 187, 133, 97, 107, 159, 144 },
		{ 18, 31, 40, 76, 56, 48, 73, 83, 107, 69, 83, 121, 131, 141, 89, 124, 177, 187, 197,
		  122, 66, 91, 96, 100, 59 },
	};
	// kernel=1,2,1,2,4,2,1,2,1 (rank one: the two-pass path), D = 16
	static const uint8_t g121[4][25] = {
		{ 13, 20, 30, 79, 166, 45, 53, 63, 86, 119, 93, 100, 110, 120, 128, 145, 153, 163,
		  173, 180, 188, 195, 205, 215, 223 },
		{ 25, 30, 40, 76, 108, 48, 53, 63, 86, 104, 95, 100, 110, 120, 125, 148, 153, 163,
		  173, 178, 175, 180, 190, 200, 205 },
		{ 99, 70, 80, 116, 140, 68, 53, 63, 86, 96, 103, 100, 110, 120, 118, 155, 153, 163,
		  173, 170, 161, 145, 155, 178, 189 },
		{ 9, 18, 25, 59, 81, 34, 53, 63, 86, 86, 70, 100, 110, 120, 95, 109, 153, 163, 173,
		  134, 103, 143, 150, 158, 122 },
	};
	struct img in = { 5, 5, 1, px }, o;
	char tok[96], name[96];
	for (int m = 0; m < 4; m++) {
		snprintf(tok, sizeof tok, "convolve:kernel=1,2,3,4,5,6,7,8,9:border=%s", modes[m]);
		o = run_one(tok, &in);
		snprintf(name, sizeof name, "convolve 5x5 by hand, 3x3 kernel, border=%s", modes[m]);
		CHECK(name, img_is(&o, 5, 5, 1, k19[m]));
		free(o.data);
		snprintf(tok, sizeof tok, "convolve:kernel=1,2,1,2,4,2,1,2,1:border=%s", modes[m]);
		o = run_one(tok, &in);
		snprintf(name, sizeof name, "convolve 5x5 by hand, separable kernel, border=%s",
			 modes[m]);
		CHECK(name, img_is(&o, 5, 5, 1, g121[m]));
		free(o.data);
	}
}

// An impulse comes out as the kernel turned by 180 degrees (correlation): with norm=255,
// out(X - dx, Y - dy) = k[dy][dx] exactly.
static void test_convolve_impulse(void)
{
	static const char *const kernels[] = {
		"convolve:kernel=1,2,3,4,5,6,7,8,9:norm=255",
		"convolve:kernel=1,2,3,2,4,6,3,6,9:norm=255", // rank one
		"convolve:kernel=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25:"
		"norm=255",
		NULL,
	};
	uint8_t px[9 * 9] = { 0 };
	struct img in = { 9, 9, 1, px };
	char name[96];
	px[4 * 9 + 4] = 255;
	for (int t = 0; kernels[t]; t++) {
		struct img o = run_one(kernels[t], &in);
		const char *list = strchr(kernels[t], '=') + 1;
		int n = t == 2 ? 5 : 3, r = n / 2, ok = 1, k[25];
		for (int i = 0; i < n * n; i++)
			k[i] = (int)strtol(list, (char **)&list, 10), list++;
		for (int y = 0; y < 9; y++)
			for (int x = 0; x < 9; x++) {
				int dx = 4 - x, dy = 4 - y, want = 0;
				if (dx >= -r && dx <= r && dy >= -r && dy <= r)
					want = k[(dy + r) * n + dx + r];
				ok &= o.data[y * 9 + x] == want;
			}
		snprintf(name, sizeof name, "convolve impulse response is the kernel turned (%dx%d%s)",
			 n, n, t == 1 ? ", separable" : "");
		CHECK(name, ok);
		free(o.data);
	}
}

static void test_convolve_identities(void)
{
	static const char *const ids[] = { "convolve:identity",
					   "convolve:kernel=0,0,0,0,1,0,0,0,0:border=wrap",
					   "convolve:kernel=0,0,0,0,2,0,0,0,0:norm=2:border=zero",
					   "convolve:box:size=1:border=reflect",
					   "convolve:gauss:radius=0",
					   NULL };
	static const char *const normed[] = { "convolve:box",
					      "convolve:box:size=5:border=wrap",
					      "convolve:gauss:sigma=2",
					      "convolve:gauss:sigma=0.5:border=reflect",
					      "convolve:sharpen",
					      "convolve:emboss:border=wrap",
					      "convolve:kernel=0.05,0.1,0.05,0.1,0.4,0.1,0.05,0.1,0.05",
					      "convolve:kernel=1,-2,3,-4,5.5,-6,7,-8,9.25:border=reflect",
					      NULL };
	uint8_t noise[13 * 7 * 4], flat[13 * 7 * 4];
	uint32_t v = 12345;
	char name[128];
	for (size_t i = 0; i < sizeof noise; i++) {
		v ^= v << 13, v ^= v >> 17, v ^= v << 5;
		noise[i] = (uint8_t)(v >> 24);
		flat[i] = 77;
	}
	for (int ch = 1; ch <= 4; ch++) {
		struct img in = { 13, 7, ch, noise }, cin = { 13, 7, ch, flat };
		for (int t = 0; ids[t]; t++) {
			struct img o = run_one(ids[t], &in);
			snprintf(name, sizeof name, "%s changes nothing (%d channels)", ids[t], ch);
			CHECK(name, img_is(&o, 13, 7, ch, noise));
			free(o.data);
		}
		for (int t = 0; normed[t]; t++) {
			struct img o = run_one(normed[t], &cin);
			snprintf(name, sizeof name, "%s keeps a constant image (%d channels)", normed[t],
				 ch);
			CHECK(name, img_is(&o, 13, 7, ch, flat));
			free(o.data);
		}
	}
	// alpha passes through: box on RGBA noise keeps every fourth byte
	struct img in4 = { 13, 7, 4, noise }, o = run_one("convolve:box:size=5", &in4);
	int ok = 1;
	for (int i = 3; i < 13 * 7 * 4; i += 4)
		ok &= o.data[i] == noise[i];
	CHECK("convolve keeps alpha", ok);
	free(o.data);
}

static void test_convolve_values(void)
{
	// sobel-x with bias=128 on rows 10 20 30 40 50: 168 208 208 208 168 (the man page's
	// worked example: (30 - 10) * 4 + 128 = 208; replicate at the edges: 10 * 4 + 128)
	uint8_t ramp[15] = { 10, 20, 30, 40, 50, 10, 20, 30, 40, 50, 10, 20, 30, 40, 50 };
	struct img in = { 5, 3, 1, ramp }, o = run_one("convolve:sobel-x:bias=128", &in);
	CHECK("sobel-x bias=128 on a ramp: the documented values",
	      img_is(&o, 5, 3, 1,
		     (uint8_t[]){ 168, 208, 208, 208, 168, 168, 208, 208, 208, 168, 168, 208, 208,
				  208, 168 }));
	free(o.data);
	o = run_one("convolve:sobel-y:bias=128", &in);
	CHECK("sobel-y on a horizontal ramp is flat", img_is(&o, 5, 3, 1, (uint8_t[]){
		128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128 }));
	free(o.data);

	// rounding: half up, one step; saturation
	uint8_t p5[5] = { 0, 1, 2, 3, 255 };
	struct img row = { 5, 1, 1, p5 };
	o = run_one("convolve:kernel=1:norm=2", &row);
	CHECK("p / 2 rounds half up", img_is(&o, 5, 1, 1, (uint8_t[]){ 0, 1, 1, 2, 128 }));
	free(o.data);
	o = run_one("convolve:kernel=-1:norm=2:bias=1", &row);
	// 1, 0.5 -> 1, 0, -0.5 -> 0, -126.5 -> 0
	CHECK("1 - p / 2 rounds half up and saturates at 0",
	      img_is(&o, 5, 1, 1, (uint8_t[]){ 1, 1, 0, 0, 0 }));
	free(o.data);
	o = run_one("convolve:kernel=1:norm=-2:bias=100", &row);
	// 100, 99.5 -> 100, 99, 98.5 -> 99, -27.5 -> 0
	CHECK("a negative norm negates", img_is(&o, 5, 1, 1, (uint8_t[]){ 100, 100, 99, 99, 0 }));
	free(o.data);
	o = run_one("convolve:kernel=3:bias=-0.5", &row);
	// norm=sum: p - 0.5 -> p (ties up): 0 -> -0.5 -> 0
	CHECK("a decimal bias rounds half up", img_is(&o, 5, 1, 1, (uint8_t[]){ 0, 1, 2, 3, 255 }));
	free(o.data);
	uint8_t sp[3] = { 0, 255, 0 };
	struct img spike = { 3, 1, 1, sp };
	o = run_one("convolve:sharpen", &spike);
	CHECK("sharpen saturates to 0 and 255", img_is(&o, 3, 1, 1, (uint8_t[]){ 0, 255, 0 }));
	free(o.data);

	// decimals are exact: nine times 0.1 on a constant 5 is 4.5, which rounds up to 5
	// (0.1 scaled by 2^S and rounded would give 4.4999... -> 4)
	uint8_t c5[9] = { 5, 5, 5, 5, 5, 5, 5, 5, 5 };
	struct img five = { 3, 3, 1, c5 };
	o = run_one("convolve:kernel=0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1:norm=none", &five);
	CHECK("decimal weights are exact (4.5 rounds to 5)", img_is(&o, 3, 3, 1, (uint8_t[]){
		5, 5, 5, 5, 5, 5, 5, 5, 5 }));
	free(o.data);
	o = run_one("convolve:kernel=1,1,1,1,1,1,1,1,1:norm=10", &five);
	CHECK("kernel=1,...:norm=10 equals kernel=0.1,...", img_is(&o, 3, 3, 1, (uint8_t[]){
		5, 5, 5, 5, 5, 5, 5, 5, 5 }));
	free(o.data);
	o = run_one("convolve:kernel=1,1,1,1,1,1,1,1,1:norm=2.5e1:bias=0.5", &five);
	// 45 / 25 + 0.5 = 2.3 -> 2
	CHECK("decimal norm and bias are exact", img_is(&o, 3, 3, 1, (uint8_t[]){
		2, 2, 2, 2, 2, 2, 2, 2, 2 }));
	free(o.data);
	// box on 1 2 / 3 4 tiles (wrap, 3x3 on 2x2): sums of 9 taken from {1,2,3,4} -> exact
	uint8_t q[4] = { 1, 2, 3, 4 };
	struct img quad = { 2, 2, 1, q };
	o = run_one("convolve:box:border=wrap", &quad);
	// (0,0): rows 4 3 4 / 2 1 2 / 4 3 4 -> 27 / 9 = 3; (1,0): 3 4 3 / 1 2 1 / 3 4 3 -> 24/9
	// = 2.67 -> 3; (0,1): 2 1 2 / 4 3 4 / 2 1 2 -> 21/9 = 2.33 -> 2; (1,1): 18/9 = 2
	CHECK("box wraps around a 2x2 image", img_is(&o, 2, 2, 1, (uint8_t[]){ 3, 3, 2, 2 }));
	free(o.data);
	// gauss is symmetric: an impulse spreads equally left/right and up/down
	uint8_t imp[81] = { 0 };
	struct img im = { 9, 9, 1, imp };
	imp[40] = 255;
	o = run_one("convolve:gauss:sigma=1.3:norm=none", &im);
	int sym = o.data[40] > 0;
	for (int y = 0; y < 9; y++)
		for (int x = 0; x < 9; x++)
			sym &= o.data[y * 9 + x] == o.data[y * 9 + 8 - x] &&
			       o.data[y * 9 + x] == o.data[(8 - y) * 9 + x] &&
			       o.data[y * 9 + x] == o.data[x * 9 + y];
	CHECK("gauss impulse response is symmetric", sym);
	free(o.data);
}

// The integers of the fixed-point contract for one token. Returns 0 on a parse failure.
static int ints_of(const char *token, struct convolve_ints *ci, struct chain *c)
{
	char *t = (char *)token;
	if (chain_parse(c, 1, &t) < 0) {
		printf("FAIL %s: %s\n", token, err_msg());
		failures++;
		return 0;
	}
	convolve_ints(c->st[0].params, ci);
	return 1;
}

static int64_t sum32(const int32_t *w, int n)
{
	int64_t s = 0;
	for (int i = 0; i < n; i++)
		s += w[i];
	return s;
}

// Whether finish32's division (kernels/convolve.cl) by d with m, s - q = ((t m) >> 32) >> s,
// or t >> s where m is 0 - gives min(q, 255) = min(floor(t / d), 255) at t = q d - 1 and
// q d for q <= 257 (the largest error is just below a multiple) and at 2^31 - 1.
static bool div32_exact(int64_t d, uint32_t m, int s)
{
	if (s < 0 || s > 31)
		return false;
	for (int64_t k = 0; k <= 2 * 258; k++) {
		const int64_t t = k < 2 * 258 ? (k / 2) * d - (k % 2 == 0) : INT32_MAX;
		if (t < 0 || t > INT32_MAX)
			continue;
		const uint64_t q = m ? (((uint64_t)t * m) >> 32) >> s : (uint64_t)t >> s;
		if ((q < 255 ? (int64_t)q : 255) != (t / d < 255 ? t / d : 255))
			return false;
	}
	return true;
}

// Whether convolve_3x3_packed's integers (kernels/convolve.cl) hold for ci, worked out here
// from the weights: Z is 255 times the sum of the negative weights' |k|, 255 sum|k| <= 65535,
// and for every u = max(acc + off, 0) that the kernel can make, 0 <= u <= 255 (the sum of
// the positive weights) + off, u * pm < 2^32 and min((u pm) >> ps, 255) = min(u / D, 255).
static bool packed_exact(const struct convolve_ints *ci)
{
	int64_t pos = 0, neg = 0, umax;
	if (ci->n != 3 || ci->ps < 0 || ci->ps > 31)
		return false;
	for (int i = 0; i < 9; i++) {
		const int64_t k = ci->separable ? (int64_t)ci->w[3 + i / 3] * ci->w[i % 3] : ci->w[i];
		pos += k > 0 ? k : 0;
		neg += k < 0 ? -k : 0;
	}
	if (255 * (pos + neg) > 65535 || ci->pz != 255 * neg)
		return false;
	umax = 255 * pos + ci->B + ci->D / 2;
	for (int64_t u = 0; u <= umax; u++) {
		const uint64_t p = (uint64_t)u * ci->pm, q = p >> ci->ps;
		if (p > UINT32_MAX || (q < 255 ? (int64_t)q : 255) != (u / ci->D < 255 ? u / ci->D : 255))
			return false;
	}
	return true;
}

// Whether convolve_3x3_packed_norm's division (kernels/convolve.cl) holds for ci: no
// negative weight, off = B + D / 2 >= 0, every u = acc + off the kernel can make (0 .. umax =
// 255 (the sum of the weights) + off) below 256 D and 65536, and mul_hi(u, pn) = floor(u / D)
// for each of them.
static bool norm_exact(const struct convolve_ints *ci)
{
	int64_t pos = 0, umax;
	if (ci->n != 3 || ci->pn == 0 || !packed_exact(ci))
		return false;
	for (int i = 0; i < 9; i++) {
		const int64_t k = ci->separable ? (int64_t)ci->w[3 + i / 3] * ci->w[i % 3] : ci->w[i];
		if (k < 0)
			return false;
		pos += k;
	}
	umax = 255 * pos + ci->B + ci->D / 2;
	if (ci->B + ci->D / 2 < 0 || umax >= 256 * ci->D || umax > 65535)
		return false;
	for (int64_t u = 0; u <= umax; u++)
		if ((int64_t)(((uint64_t)u * ci->pn) >> 32) != u / ci->D)
			return false;
	return true;
}

static void test_convolve_ints(void)
{
	static const char *const gauss[] = { "convolve:gauss:sigma=0.5", "convolve:gauss",
					     "convolve:gauss:sigma=2", "convolve:gauss:sigma=8",
					     "convolve:gauss:sigma=50", "convolve:gauss:sigma=0.3",
					     "convolve:gauss:sigma=3:radius=2", NULL };
	static const int gauss_n[] = { 5, 7, 13, 49, 301, 3, 5 };
	struct convolve_ints ci;
	struct chain c;
	char name[128];

	for (int t = 0; gauss[t]; t++) {
		if (!ints_of(gauss[t], &ci, &c))
			continue;
		const int n = ci.n, m = n / 2;
		int sym = 1, mono = 1;
		for (int i = 0; i < n; i++)
			sym &= ci.w[i] == ci.w[n - 1 - i] && ci.w[i] == ci.w[n + i];
		for (int i = 0; i < m; i++)
			mono &= ci.w[i] <= ci.w[i + 1];
		snprintf(name, sizeof name, "%s: %dx%d, separable, D = 2^40", gauss[t], gauss_n[t],
			 gauss_n[t]);
		CHECK(name, n == gauss_n[t] && ci.separable && ci.D == (int64_t)1 << 40 && ci.B == 0);
		snprintf(name, sizeof name, "%s: each 1-D kernel sums to exactly 2^20", gauss[t]);
		CHECK(name, sum32(ci.w, n) == 1 << 20 && sum32(ci.w + n, n) == 1 << 20);
		snprintf(name, sizeof name, "%s: symmetric, kx = ky, rising to the centre", gauss[t]);
		CHECK(name, sym && mono);
		chain_free(&c);
	}
	// sigma=1: u(i) = exp(-i^2/2) / sum, times 2^20, checked against the formula to +-1
	if (ints_of("convolve:gauss", &ci, &c)) {
		double u[7], s = 0;
		int close = 1;
		for (int i = -3; i <= 3; i++)
			s += u[i + 3] = exp(-i * i / 2.0);
		for (int i = 0; i < 7; i++)
			close &= fabs(ci.w[i] - u[i] / s * 1048576.0) <= 1.0;
		CHECK("gauss weights follow exp(-i^2 / (2 sigma^2)) within one unit", close);
		chain_free(&c);
	}
	if (ints_of("convolve:gauss:sigma=2:bias=0.5", &ci, &c)) {
		CHECK("gauss bias is B = bias * D", ci.B == (int64_t)1 << 39);
		chain_free(&c);
	}
	if (ints_of("convolve:box:size=5", &ci, &c)) {
		int ones = 1;
		for (int i = 0; i < 10; i++)
			ones &= ci.w[i] == 1;
		CHECK("box:size=5 is ones x ones over 25", ci.separable && ci.n == 5 && ones && ci.D == 25);
		chain_free(&c);
	}
	if (ints_of("convolve:sobel-x", &ci, &c)) {
		CHECK("sobel-x factors exactly: (1 0 -1) x (-1 -2 -1), D = 1",
		      ci.separable && ci.n == 3 && ci.D == 1 && ci.w[0] == 1 && ci.w[1] == 0 &&
			      ci.w[2] == -1 && ci.w[3] == -1 && ci.w[4] == -2 && ci.w[5] == -1);
		chain_free(&c);
	}
	if (ints_of("convolve:sharpen:bias=10", &ci, &c)) {
		CHECK("sharpen is not separable, D = 1, B = 10", !ci.separable && ci.n == 3 &&
		      ci.D == 1 && ci.B == 10 && ci.w[4] == 5 && sum32(ci.w, 9) == 1);
		chain_free(&c);
	}
	if (ints_of("convolve:kernel=0.25,0.5,0.25,0.5,1,0.5,0.25,0.5,0.25:norm=none:bias=0.1", &ci, &c)) {
		// times 20 for the bias's tenths, over the gcd: k = 5 10 5 ..., D = 20, B = 2
		CHECK("decimals are exact: k = 5 10 5 x, D = 20, B = 2",
		      ci.separable && ci.D == 20 && ci.B == 2 && (int64_t)ci.w[0] * ci.w[3] == 5 &&
			      sum32(ci.w, 3) * sum32(ci.w + 3, 3) == 80);
		chain_free(&c);
	}
	if (ints_of("convolve:kernel=1,2,1,2,4,2,1,2,1:norm=2.5", &ci, &c)) {
		CHECK("a decimal norm is folded in exactly: D = 5, k twice the weights",
		      ci.D == 5 && sum32(ci.w, 3) * sum32(ci.w + 3, 3) == 32);
		chain_free(&c);
	}
	// 22 significant digits: not exact, scaled by 2^23 (255 * 2^23 < 2^31); every value
	// 2^23 / 9 = 932067.56 rounds down, the deficit of 5 goes to the first five (ties to the
	// lower index), so the integers sum to exactly D
	if (ints_of("convolve:kernel=0.1111111111111111111111,0.1111111111111111111111,"
		    "0.1111111111111111111111,0.1111111111111111111111,0.1111111111111111111111,"
		    "0.1111111111111111111111,0.1111111111111111111111,0.1111111111111111111111,"
		    "0.1111111111111111111111:border=wrap:bias=-1.5",
		    &ci, &c)) {
		int64_t want[9] = { 932068, 932068, 932068, 932068, 932068, 932067, 932067, 932067,
				    932067 };
		int same = !ci.separable && ci.n == 3;
		for (int i = 0; same && i < 9; i++)
			same = ci.w[i] == want[i];
		CHECK("scaled kernel: largest remainder, sum exactly D = 2^23", same &&
		      ci.D == 1 << 23 && sum32(ci.w, 9) == 1 << 23 && ci.B == -(3 << 22));
		chain_free(&c);
	}
	// the device's division: (t * M) >> S = floor(t / D) for every 0 <= t < 256 D, checked
	// for every D < 2^16 at t = q D - 1 and q D (the largest error is just below a multiple)
	int64_t bad_d = 0;
	for (int64_t d = 1; d < (1 << 16) && !bad_d; d++) {
		char tok[64];
		snprintf(tok, sizeof tok, "convolve:kernel=1:norm=%lld", (long long)d);
		if (!ints_of(tok, &ci, &c))
			break;
		for (int64_t q = 0; q <= 256 && !bad_d; q++)
			for (int64_t t = q * d - 1; t <= q * d && !bad_d; t++)
				if (t >= 0 && t < 256 * d && (ci.dev_m == 0 || ((t * ci.dev_m) >> ci.dev_s) != t / d))
					bad_d = d;
		chain_free(&c);
	}
	CHECK("the device's reciprocal division is exact for every D < 2^16", bad_d == 0);
	// convolve_3x3's 32-bit division (finish32), for every D < 2^16, the 4096 largest D
	// below 2^23 and every power of two up to 2^40
	bad_d = 0;
	int64_t n_d = 0;
	for (int64_t i = 1; i < (1 << 16) + 4096 + 41 && !bad_d; i++, n_d++) {
		const int64_t d = i < 1 << 16 ? i
		                  : i < (1 << 16) + 4096 ? (1 << 23) - ((1 << 16) + 4096 - i)
		                                         : (int64_t)1 << (i - (1 << 16) - 4096);
		char tok[64];
		snprintf(tok, sizeof tok, "convolve:kernel=1:norm=%lld", (long long)d);
		if (!ints_of(tok, &ci, &c))
			break;
		if (!div32_exact(d, ci.m32, ci.s32))
			bad_d = d;
		chain_free(&c);
	}
	CHECK("convolve_3x3's 32-bit division is exact for D < 2^16, below 2^23 and powers of 2",
	      bad_d == 0 && n_d == (1 << 16) - 1 + 4096 + 41);
	if (ints_of("convolve:kernel=1:norm=8388609", &ci, &c)) {
		CHECK("D = 2^23 + 1 has no 32-bit division", ci.s32 == -1);
		chain_free(&c);
	}
	if (ints_of("convolve:kernel=1:norm=65537", &ci, &c)) {
		CHECK("D = 65537 divides on the device", ci.dev_m == 0);
		chain_free(&c);
	}
	// convolve_3x3_packed: taken for 3 x 3 kernels with 255 sum|k| <= 65535 (257 the
	// largest sum), with its integers exact; left out for larger weights, other sizes and
	// a bias too large for its 32-bit division
	static const char *const packed[] = {
		"convolve:box", "convolve:sobel-x", "convolve:sobel-y:bias=128", "convolve:sharpen",
		"convolve:emboss:border=wrap", "convolve:edge:bias=64",
		"convolve:kernel=1,2,3,4,5,6,7,8,9:border=zero:bias=-60",
		"convolve:kernel=1,2,3,4,5,6,7,8,9:norm=255", "convolve:kernel=-1,0,1,0,0,0,0,0,-255",
		"convolve:kernel=1,2,1,2,4,2,1,2,1:norm=7:bias=3.5",
		"convolve:kernel=1,1,1,1,249,1,1,1,1", "convolve:kernel=0,0,0,0,-257,0,0,0,0:norm=none:bias=300",
		"convolve:kernel=1,2,3,4,5,6,7,8,9:norm=1000", NULL };
	for (int i = 0; packed[i]; i++)
		if (ints_of(packed[i], &ci, &c)) {
			snprintf(name, sizeof name, "%s: convolve_3x3_packed, exact", packed[i]);
			CHECK(name, packed_exact(&ci));
			chain_free(&c);
		}
	static const char *const unpacked[] = {
		"convolve:kernel=1,1,1,1,250,1,1,1,1", "convolve:kernel=0,0,0,0,-258,0,0,0,0:norm=none",
		"convolve:gauss:sigma=0.5", "convolve:box:size=5", "convolve:identity",
		"convolve:box:bias=1000000", NULL };
	for (int i = 0; unpacked[i]; i++)
		if (ints_of(unpacked[i], &ci, &c)) {
			snprintf(name, sizeof name, "%s: not convolve_3x3_packed", unpacked[i]);
			CHECK(name, ci.ps == -1 && ci.pn == 0);
			chain_free(&c);
		}
	// convolve_3x3_packed_norm: of those, the ones whose sums need no clamp (no negative
	// weight, no bias that could push a sum below 0 or past 255 D); the others keep
	// convolve_3x3_packed (a negative weight, a bias, a sum of 255 x 257, D = 1)
	static const char *const norm[] = {
		"convolve:box", "convolve:box:border=wrap", "convolve:kernel=1,2,1,2,4,2,1,2,1",
		"convolve:kernel=1,2,3,4,5,6,7,8,9:norm=255",
		"convolve:kernel=1,2,3,4,5,6,7,8,9:norm=1000", "convolve:box:bias=0.4", NULL };
	for (int i = 0; norm[i]; i++)
		if (ints_of(norm[i], &ci, &c)) {
			snprintf(name, sizeof name, "%s: convolve_3x3_packed_norm, exact", norm[i]);
			CHECK(name, norm_exact(&ci));
			chain_free(&c);
		}
	static const char *const packed_only[] = {
		"convolve:sobel-x", "convolve:box:bias=1", "convolve:box:bias=-1",
		"convolve:kernel=1,2,1,2,4,2,1,2,1:norm=7:bias=3.5", "convolve:kernel=1,1,1,1,249,1,1,1,1",
		"convolve:kernel=0,0,0,0,1,0,0,0,0", "convolve:kernel=1,2,3,4,5,6,7,8,9:norm=45:bias=1", NULL };
	for (int i = 0; packed_only[i]; i++)
		if (ints_of(packed_only[i], &ci, &c)) {
			snprintf(name, sizeof name, "%s: convolve_3x3_packed, not _norm", packed_only[i]);
			CHECK(name, packed_exact(&ci) && ci.pn == 0);
			chain_free(&c);
		}
	// integers too large for the bound are scaled too; a normalised kernel still sums to D
	if (ints_of("convolve:kernel=1000000000007,1000000000009,1000000000037,1000000000039,"
		    "1000000000061,1000000000063,1000000000091,1000000000121,1000000000163",
		    &ci, &c)) {
		CHECK("large integers are scaled: sum exactly D", !ci.separable &&
		      (ci.D & (ci.D - 1)) == 0 && sum32(ci.w, 9) == ci.D && ci.D >= 1 << 20);
		chain_free(&c);
	}
}

static void test_convolve_errors(void)
{
	static const struct {
		const char *token, *msg;
	} bad[] = {
		{ "convolve", "convolve: needs a kernel" },
		{ "convolve:blur", "convolve: unknown kernel 'blur'" },
		{ "convolve:Box", "unknown kernel 'Box'" },
		{ "convolve:box:gauss", "two kernels given, 'box' and 'gauss'" },
		{ "convolve:box:kernel=1", "two kernels" },
		{ "convolve:box:foo=1", "unknown option 'foo='" },
		{ "convolve:box:norm=2:norm=3", "norm= given twice" },
		{ "convolve:kernel=", "kernel= needs" },
		{ "convolve:kernel=1,2,3,4", "the kernel is 2x2; its side must be odd" },
		{ "convolve:kernel=1,2,3,4,5,6,7,8", "8 numbers do not make a square kernel" },
		{ "convolve:kernel=1,2,3,4,5,6,7,8,9,10", "10 numbers do not make a square kernel" },
		{ "convolve:kernel=1,2,x,4,5,6,7,8,9", "weight 3 must be a number, not 'x'" },
		{ "convolve:kernel=1,,3,4,5,6,7,8,9", "weight 2 must be a number, not ''" },
		{ "convolve:kernel=1,2,3,4,nan,6,7,8,9", "weight 5 must be a number, not 'nan'" },
		{ "convolve:kernel=1,0,-1,2,0,-2,1,0,-1:norm=sum", "sum to 0" },
		{ "convolve:sobel-x:norm=sum", "the weights of sobel-x sum to 0" },
		{ "convolve:kernel=0.1,0.2,-0.3:norm=sum", "3 numbers" },
		{ "convolve:kernel=@/nonexistent/k.txt",
		  "cannot read kernel file '/nonexistent/k.txt': No such file or directory" },
		{ "convolve:kernel=@", "kernel=@ needs a file name" },
		{ "convolve:gauss:sigma=0", "sigma must be a number above 0 and at most 1000, not '0'" },
		{ "convolve:gauss:sigma=-1", "not '-1'" },
		{ "convolve:gauss:sigma=nan", "not 'nan'" },
		{ "convolve:gauss:sigma=inf", "not 'inf'" },
		{ "convolve:gauss:sigma=1e9", "not '1e9'" },
		{ "convolve:gauss:sigma=abc", "not 'abc'" },
		{ "convolve:gauss:sigma=400", "needs a radius of ceil(3 * sigma) = 1200; the largest "
					      "is 1000" },
		{ "convolve:gauss:radius=1001", "radius must be a whole number from 0 to 1000" },
		{ "convolve:gauss:radius=1.5", "not '1.5'" },
		{ "convolve:box:size=4", "size must be an odd whole number from 1 to 2001, not '4'" },
		{ "convolve:box:size=0", "not '0'" },
		{ "convolve:box:size=2003", "not '2003'" },
		{ "convolve:sharpen:size=5", "size= applies to box only" },
		{ "convolve:box:sigma=2", "sigma= applies to gauss only" },
		{ "convolve:kernel=1:radius=2", "radius= applies to gauss only" },
		{ "convolve:box:border=mirror", "border must be replicate, reflect, wrap or zero, not "
						"'mirror'" },
		{ "convolve:box:norm=0", "norm must be sum, none or a number other than 0, not '0'" },
		{ "convolve:box:norm=avg", "not 'avg'" },
		{ "convolve:box:bias=x", "bias must be a number from -1000000 to 1000000, not 'x'" },
		{ "convolve:box:bias=2e6", "not '2e6'" },
		{ "convolve:kernel=1e300,1,1,1,1,1,1,1,-1e300:norm=none", "too large" },
		{ NULL, NULL },
	};
	char name[160];
	for (int i = 0; bad[i].token; i++) {
		snprintf(name, sizeof name, "%s is refused: %s", bad[i].token, bad[i].msg);
		CHECK(name, parse_one(bad[i].token) < 0 && strstr(err_msg(), bad[i].msg));
		if (!strstr(err_msg(), bad[i].msg))
			printf("    got: %s\n", err_msg());
	}
	static const char *const good[] = {
		"convolve:box", "convolve:box:size=1", "convolve:box:size=2001",
		"convolve:gauss", "convolve:gauss:sigma=0.5", "convolve:gauss:sigma=333.3",
		"convolve:gauss:sigma=1000:radius=3", "convolve:gauss:radius=1000",
		"convolve:gauss:sigma=1e-200",
		"convolve:sharpen:border=zero", "convolve:norm=2:edge:bias=-3.5",
		"convolve:kernel=.5", "convolve:kernel=1e-30,1,1,1,1,1,1,1,1",
		"convolve:kernel=0.3333333333333333333333,1,1,1,1,1,1,1,1",
		"convolve:kernel=0.1,0.2,-0.3,0,0,0,0,0,0", // sums to 0 exactly: norm=none
		"convolve:kernel=2147483647:norm=2147483647", NULL
	};
	for (int i = 0; good[i]; i++) {
		snprintf(name, sizeof name, "%s is accepted", good[i]);
		CHECK(name, parse_one(good[i]) == 0);
	}

	// the work limit of a kernel that is not separable is checked when planning
	char tok[8192] = "convolve:kernel=";
	for (int i = 0; i < 31 * 31; i++)
		snprintf(tok + strlen(tok), sizeof tok - strlen(tok), "%s%d", i ? "," : "",
			 (i * i) % 11);
	struct chain c;
	struct plan p = { 0 };
	char *t = tok;
	struct geom huge = { 65535, 65535, 3, 0 }, fine = { 1000, 1000, 4, 0 };
	CHECK("31x31 kernel parses", chain_parse(&c, 1, &t) == 0);
	CHECK("31x31 kernel on 65535x65535 is over the work limit",
	      plan_make(&p, &c, &huge, 0) < 0 && strstr(err_msg(), "over the limit of 2^40"));
	CHECK("31x31 kernel on 1000x1000 is fine", plan_make(&p, &c, &fine, 0) == 0);
	plan_free(&p);
	chain_free(&c);
	t = "convolve:box:size=2001";
	CHECK("box:size=2001 parses", chain_parse(&c, 1, &t) == 0);
	CHECK("a separable kernel has no work limit", plan_make(&p, &c, &huge, 0) == 0);
	plan_free(&p);
	chain_free(&c);
}

static void test_plan(void)
{
	struct chain c;
	struct plan p, q;
	const char *t[] = { "rotate:90", "grey", "transpose", "rotate:180" };
	struct geom g = { 7, 5, 4, 0 }, g2 = { 3, 2, 1, 0 };
	CHECK("plan parses", chain_parse(&c, 4, (char **)t) == 0);
	CHECK("plan runs", plan_make(&p, &c, &g, 0) == 0);
	CHECK("plan stage 1 output 5x7x4", p.st[0].plan.out.w == 5 && p.st[0].plan.out.h == 7 && p.st[0].plan.out.ch == 4);
	CHECK("plan stage 2 output 5x7x2", p.st[1].plan.out.w == 5 && p.st[1].plan.out.h == 7 && p.st[1].plan.out.ch == 2);
	CHECK("plan final 7x5x2", p.out.w == 7 && p.out.h == 5 && p.out.ch == 2);
	CHECK("plan max bytes", p.max_bytes == 7 * 5 * 4);
	// two plans of one chain for different images stand side by side
	CHECK("a second plan of the same chain runs", plan_make(&q, &c, &g2, 0) == 0);
	CHECK("the second plan has its own geometry", q.out.w == 3 && q.out.h == 2 && q.out.ch == 1);
	CHECK("the first plan is unchanged by the second", p.out.w == 7 && p.st[0].in.w == 7);
	plan_free(&q);
	plan_free(&p);
	chain_free(&c);

	// every stage's output obeys the area limit (the input is checked by io)
	CHECK("limit parses", chain_parse(&c, 4, (char **)t) == 0);
	CHECK("plan refuses an output over max_pixels", plan_make(&p, &c, &g, 34) < 0);
	CHECK("max_pixels message names the stage and the limit",
	      !strcmp(err_msg(), "rotate:90: the output would be 5x7 = 35 pixels, more than "
				 "--max-pixels 34"));
	CHECK("plan takes an output of exactly max_pixels", plan_make(&p, &c, &g, 35) == 0);
	plan_free(&p);
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
	struct plan p;
	char *t = (char *)token;
	struct geom g = { w, h, 3, 0 };
	if (chain_parse(&c, 1, &t) < 0)
		return -1;
	int rc = plan_make(&p, &c, &g, 0);
	*ow = rc == 0 ? p.out.w : 0;
	*oh = rc == 0 ? p.out.h : 0;
	plan_free(&p);
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

// The word-wide remap kernels' tile rows by the device's local memory: a 4-channel tile of
// 128 rows holds 64 rows of 129 words, and the unaligned kernel's 64 rows of 133 words,
// 34048 bytes; it wants 1 KiB to spare.
static void test_remap_tile_rows(void)
{
	CHECK("remap tiles: 4 channels, 48 KiB of local memory (NVIDIA): 128 rows",
	      remap_tile_rows(4, 49152) == 128);
	CHECK("remap tiles: 4 channels, 32 KiB (the OpenCL 1.2 minimum): 96 rows",
	      remap_tile_rows(4, 32768) == 96);
	CHECK("remap tiles: 4 channels, 34048 + 1024 bytes: 128 rows, a byte less: 96",
	      remap_tile_rows(4, 35072) == 128 && remap_tile_rows(4, 35071) == 96);
	CHECK("remap tiles: 1-3 channels, 32 KiB: 128 rows",
	      remap_tile_rows(1, 32768) == 128 && remap_tile_rows(2, 32768) == 128 &&
		      remap_tile_rows(3, 32768) == 128);
}

// resize's blocked tables (the GPU kernels of four outputs a work-item): by hand for
// bilinear 8 -> 4 (output i: inputs 2i, 2i + 1, 128 each), then for every filter and a few
// sizes, each output's weights found again at its place in its group, zeros elsewhere.
static void test_resize_blocks(void)
{
	static const struct {
		enum resize_filter f;
		int in, out;
	} cases[] = { { RESIZE_BILINEAR, 13, 5 },  { RESIZE_AREA, 13, 5 },   { RESIZE_CUBIC, 13, 5 },
		      { RESIZE_LANCZOS, 13, 5 },   { RESIZE_LANCZOS, 7681, 3840 },
		      { RESIZE_CUBIC, 10, 23 },    { RESIZE_AREA_UP, 10, 23 }, { RESIZE_LANCZOS, 1, 7 },
		      { RESIZE_LANCZOS, 300, 7 } };
	struct resize_axis a;
	struct resize_blocks b;
	if (resize_axis_make(&a, RESIZE_BILINEAR, 8, 4) == 0 && resize_blocks_make(&b, &a) == 0) {
		const int32_t *w = b.data + RESIZE_BW(1);
		CHECK("resize blocks, bilinear 8 -> 4: one group, inputs 0 to 7",
		      b.groups == 1 && b.len == 8 && b.data[0] == 0 && b.data[1] == 8 && b.ordered);
		CHECK("resize blocks, bilinear 8 -> 4: output 1 weighs inputs 2 and 3, 128 each",
		      w[2 * 4 + 1] == 128 && w[3 * 4 + 1] == 128 && w[1 * 4 + 1] == 0 &&
			      w[4 * 4 + 1] == 0);
		CHECK("resize blocks, bilinear 8 -> 4: output 3 weighs inputs 6 and 7",
		      w[6 * 4 + 3] == 128 && w[7 * 4 + 3] == 128 && w[5 * 4 + 3] == 0);
		resize_blocks_free(&b);
		resize_axis_free(&a);
	} else {
		CHECK("resize blocks, bilinear 8 -> 4: made", 0);
	}
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char name[96];
		bool same = true;
		snprintf(name, sizeof name, "resize blocks of filter %d, %d -> %d: the axis's sums",
			 (int)cases[c].f, cases[c].in, cases[c].out);
		if (resize_axis_make(&a, cases[c].f, cases[c].in, cases[c].out) < 0 ||
		    resize_blocks_make(&b, &a) < 0) {
			CHECK(name, 0);
			continue;
		}
		const int32_t *start = a.data, *count = start + a.n, *aw = count + a.n;
		const int32_t *w = b.data + RESIZE_BW(b.groups);
		same = b.groups == (a.n + 3) / 4 && b.ordered;
		for (int i = 0; i < a.n && same; i++) {
			int g = i / 4, off = start[i] - b.data[g];
			same = off >= 0 && off + count[i] <= b.data[b.groups + g] &&
			       b.data[b.groups + g] <= b.len;
			for (int k = 0; k < b.len && same; k++) {
				int32_t want = k >= off && k < off + count[i]
						       ? aw[(size_t)i * a.taps + (k - off)] : 0;
				same = w[((size_t)k * b.groups + g) * 4 + i % 4] == want;
			}
		}
		CHECK(name, same);
		resize_blocks_free(&b);
		resize_axis_free(&a);
	}
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

// Runs tokens on in (CPU path) with the chain and plan kept for its side outputs; out is the
// image.
static int run_kept(struct chain *c, struct plan *p, int n, const char **tokens,
		    const struct img *in, struct img *out)
{
	struct geom g = { in->w, in->h, in->ch, 0 };
	if (chain_parse(c, n, (char **)tokens) < 0)
		return -1;
	if (plan_make(p, c, &g, 0) < 0 || pipeline_cpu(p, in, NULL, out, NULL) < 0) {
		plan_free(p);
		chain_free(c);
		return -1;
	}
	return 0;
}

// pipeline_cpu given memory from pipeline_mem_alloc (for the CPU path: no device) takes it
// (mem emptied), writes the stages' images into its blocks in turn (the output is out after
// an odd number of image-writing stages, tmp after an even one) and gives the bytes it
// gives without it, for chains writing 0 to 3 images.
// hostmem: blocks given back are kept up to the limit and handed out again where they fit
// (the smallest that does), present and with what was written; past the limit the smallest
// go; a limit of 0 keeps none.
static void test_hostmem(void)
{
	const size_t mib = (size_t)1 << 20;
	bool fresh = false;
	uint8_t *a, *b, *c, *d;

	a = hostmem_get(3 * mib + 1, &fresh);
	CHECK("hostmem: fresh memory says so", a && fresh);
	CHECK("hostmem: aligned to a page", a && (uintptr_t)a % 4096 == 0);
	memset(a, 7, 3 * mib + 1);
	hostmem_put(a); // no limit yet: freed
	b = hostmem_get(2 * mib, &fresh);
	CHECK("hostmem: with no limit nothing is kept", b && fresh);
	hostmem_keep(14 * mib);
	c = hostmem_get(5 * mib, &fresh);
	memset(c, 9, 5 * mib);
	hostmem_put(b);
	hostmem_put(c);
	d = hostmem_get(4 * mib, &fresh);
	CHECK("hostmem: the smallest kept block that fits", d == c && !fresh && d[4 * mib] == 9);
	a = hostmem_get(mib, &fresh);
	CHECK("hostmem: a smaller block fits a smaller image", a == b && !fresh);
	b = hostmem_get(8 * mib, &fresh);
	CHECK("hostmem: none kept is large enough", b && fresh);
	hostmem_put(a);
	hostmem_put(d);
	hostmem_put(b); // 2 + 5 + 8 MiB: the 2 MiB block goes
	c = hostmem_get(mib, &fresh);
	CHECK("hostmem: past the limit the smallest block goes", c == d && !fresh);
	hostmem_put(c);
	hostmem_keep(0);
	c = hostmem_get(mib, &fresh);
	CHECK("hostmem: a limit of 0 frees those kept", c && fresh);
	hostmem_put(c);
	hostmem_put(NULL);
}

static void test_pipeline_cpu_mem(void)
{
	static const char *const chains[][4] = {
		{ "histogram" },
		{ "rotate:90" },
		{ "rotate:30", "grey" },
		{ "transpose", "histogram", "rotate:-30", "convolve:box" },
	};
	static const int writers[] = { 0, 1, 2, 3 };
	uint8_t px[11 * 7 * 3];
	struct img in = { 11, 7, 3, px };
	struct geom g = { 11, 7, 3, 0 };
	uint32_t v = 99;

	for (size_t i = 0; i < sizeof px; i++) {
		v = v * 1103515245u + 12345u;
		px[i] = (uint8_t)(v >> 24);
	}
	for (size_t k = 0; k < sizeof chains / sizeof chains[0]; k++) {
		struct chain ch;
		struct plan c = { 0 };
		struct pipeline_mem mem = { 0 };
		struct img plain = { 0 }, out = { 0 };
		void *blocks[2] = { NULL, NULL };
		char name[96];
		int n = 0, rc;
		while (n < 4 && chains[k][n])
			n++;
		if (chain_parse(&ch, n, (char **)chains[k]) < 0 || plan_make(&c, &ch, &g, 0) < 0 ||
		    pipeline_cpu(&c, &in, NULL, &plain, NULL) < 0) {
			CHECK("pipeline_cpu with pipeline_mem: chain runs", 0);
			continue;
		}
		rc = pipeline_mem_alloc(&c, NULL, &mem);
		snprintf(name, sizeof name, "pipeline_mem_alloc for the CPU path, %s...", chains[k][0]);
		CHECK(name, rc == 0 && mem.bytes == c.max_bytes && !mem.out == !writers[k] &&
				    !mem.tmp == (writers[k] < 2));
		blocks[0] = mem.out;
		blocks[1] = mem.tmp;
		rc = pipeline_cpu(&c, &in, &mem, &out, NULL);
		snprintf(name, sizeof name, "pipeline_cpu with pipeline_mem, %s...: taken, same bytes",
			 chains[k][0]);
		CHECK(name, rc == 0 && !mem.out && !mem.tmp &&
				    img_is(&out, plain.w, plain.h, plain.ch, plain.data) &&
				    (!writers[k] || out.data == blocks[(writers[k] - 1) % 2]));
		pipeline_mem_free(&mem);
		free(out.data);
		free(plain.data);
		plan_free(&c);
		chain_free(&ch);
	}
}

// The histogram want (ch * 256 counts, all zero except the (channel, value, count) triples
// in set, ended by a negative channel) equals got; every channel sums to pixels.
static int hist_is(const void *got_side, int ch, size_t pixels, const int *set)
{
	const uint32_t *got = got_side;
	uint32_t want[4 * 256] = { 0 };
	for (; set[0] >= 0; set += 3)
		want[set[0] * 256 + set[1]] = (uint32_t)set[2];
	for (int c = 0; c < ch; c++) {
		size_t sum = 0;
		for (int v = 0; v < 256; v++)
			sum += got[c * 256 + v];
		if (sum != pixels)
			return 0;
	}
	return !memcmp(got, want, (size_t)ch * 256 * sizeof *got);
}

static void test_histogram_parse(void)
{
	static const char *const good[] = { "histogram", "histogram:-", "histogram:h.csv",
					    "histogram:plot=p.png", "histogram:plot=-",
					    "histogram:h.csv:plot=p.png:scale=log",
					    "histogram:plot=p.png:scale=linear",
					    "histogram:plot=p.png:alpha=yes",
					    "histogram:alpha=no:plot=p.png:scale=log",
					    "histogram:./a=b.csv", NULL };
	static const char *const bad[] = { "histogram:", "histogram::", "histogram:a.csv:b.csv",
					   "histogram:-:-", "histogram:plot=",
					   "histogram:plot=a.png:plot=b.png", "histogram:scale=log",
					   "histogram:scale=cubic:plot=a.png", "histogram:plto=a.png",
					   "histogram:Plot=a.png",
					   "histogram:plot=a.png:scale=log:scale=log",
					   "histogram:alpha=yes", "histogram:plot=a.png:alpha=on",
					   "histogram:plot=a.png:alpha=yes:alpha=no", NULL };
	char name[80];
	check_tokens(good, bad);
	parse_one("histogram:plto=a.png");
	CHECK("histogram names an unknown option",
	      !strcmp(err_msg(), "histogram: unknown option 'plto=' (use plot=FILE, "
				 "scale=linear|log or alpha=yes|no); did you mean plot=?"));
	parse_one("histogram:h.csv:alpha=yes");
	CHECK("histogram: alpha= needs plot=",
	      !strcmp(err_msg(), "histogram: alpha= is for the plot; add plot=FILE"));

	// the files each form writes
	struct {
		const char *token;
		int n;
		const char *path[2];
		bool image[2];
	} f[] = {
		{ "histogram", 1, { "-" }, { false } },
		{ "histogram:plot=p.png", 1, { "p.png" }, { true } },
		{ "histogram:plot=p.png:-", 2, { "-", "p.png" }, { false, true } },
		{ "histogram:h.csv:scale=log:plot=p.bmp", 2, { "h.csv", "p.bmp" }, { false, true } },
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		struct chain c;
		struct stage_file files[STAGE_FILES_MAX];
		char *t = (char *)f[i].token;
		int n = -1, same = 0;
		if (chain_parse(&c, 1, &t) == 0) {
			n = c.st[0].ops->files(c.st[0].params, files);
			same = n == f[i].n;
			for (int k = 0; same && k < n; k++)
				same = !strcmp(files[k].path, f[i].path[k]) &&
				       files[k].image == f[i].image[k];
			chain_free(&c);
		}
		snprintf(name, sizeof name, "files of '%s'", f[i].token);
		CHECK(name, same);
	}
}

static void test_histogram_counts(void)
{
	const char *h[] = { "histogram" };
	struct chain ch;
	struct plan c = { 0 };
	struct img o;

	// 3x2 grey: 0 0 5 / 255 5 5
	uint8_t g1[] = { 0, 0, 5, 255, 5, 5 };
	struct img in1 = { 3, 2, 1, g1 };
	CHECK("histogram 1 channel runs", run_kept(&ch, &c, 1, h, &in1, &o) == 0);
	CHECK("histogram 1 channel by hand",
	      hist_is(c.st[0].side, 1, 6, (int[]){ 0, 0, 2, 0, 5, 3, 0, 255, 1, -1 }));
	CHECK("histogram passes the image through", img_is(&o, 3, 2, 1, g1));
	CHECK("histogram side output is 1 KiB", c.side_bytes == 1024);
	free(o.data);
	plan_free(&c);
	chain_free(&ch);

	// 2x2 grey+alpha: (10,255) (10,0) / (200,255) (10,255)
	uint8_t g2[] = { 10, 255, 10, 0, 200, 255, 10, 255 };
	struct img in2 = { 2, 2, 2, g2 };
	CHECK("histogram 2 channels runs", run_kept(&ch, &c, 1, h, &in2, &o) == 0);
	CHECK("histogram 2 channels by hand",
	      hist_is(c.st[0].side, 2, 4,
		      (int[]){ 0, 10, 3, 0, 200, 1, 1, 255, 3, 1, 0, 1, -1 }));
	free(o.data);
	plan_free(&c);
	chain_free(&ch);

	// 2x1 RGB: red, white (the example in climg(1))
	uint8_t g3[] = { 255, 0, 0, 255, 255, 255 };
	struct img in3 = { 2, 1, 3, g3 };
	CHECK("histogram 3 channels runs", run_kept(&ch, &c, 1, h, &in3, &o) == 0);
	CHECK("histogram 3 channels by hand",
	      hist_is(c.st[0].side, 3, 2,
		      (int[]){ 0, 255, 2, 1, 0, 1, 1, 255, 1, 2, 0, 1, 2, 255, 1, -1 }));
	struct stage_render r;
	const struct plan_stage *s = &c.st[0];
	CHECK("histogram renders its CSV", s->ops->render(s->params, &s->in, s->side, 0, &r) == 0);
	char want[4096];
	size_t len = (size_t)sprintf(want, "value,red,green,blue\n0,0,1,1\n");
	for (int v = 1; v < 255; v++)
		len += (size_t)sprintf(want + len, "%d,0,0,0\n", v);
	len += (size_t)sprintf(want + len, "255,2,1,1\n");
	CHECK("histogram CSV exactly", r.text && r.len == len && !memcmp(r.text, want, len));
	free(r.text);
	char where[96];
	s->ops->side_where(s->params, &s->in, 256 + 77, where, sizeof where);
	CHECK("histogram names a bin", !strcmp(where, "channel 1 (green) value 77"));
	free(o.data);
	plan_free(&c);
	chain_free(&ch);

	// 3x1 RGBA: (1,2,3,4) (1,2,3,4) (4,3,2,1)
	uint8_t g4[] = { 1, 2, 3, 4, 1, 2, 3, 4, 4, 3, 2, 1 };
	struct img in4 = { 3, 1, 4, g4 };
	CHECK("histogram 4 channels runs", run_kept(&ch, &c, 1, h, &in4, &o) == 0);
	CHECK("histogram 4 channels by hand",
	      hist_is(c.st[0].side, 4, 3,
		      (int[]){ 0, 1, 2, 0, 4, 1, 1, 2, 2, 1, 3, 1, 2, 3, 2, 2, 2, 1, 3, 4, 2,
			       3, 1, 1, -1 }));
	free(o.data);
	plan_free(&c);
	chain_free(&ch);

	// histograms around other stages: each sees its own input, the image is untouched
	const char *chain[] = { "histogram:a.csv", "grey", "histogram:b.csv", "rotate:90",
				"histogram:c.csv" };
	const char *plain[] = { "grey", "rotate:90" };
	CHECK("histogram chain runs", run_kept(&ch, &c, 5, chain, &in4, &o) == 0);
	CHECK("histogram chain side sizes", c.side_bytes == 4096 + 2048 + 2048 &&
						    c.st[0].side_offset == 0 &&
						    c.st[2].side_offset == 4096 &&
						    c.st[4].side_offset == 6144);
	// grey of (1,2,3) = (9798 + 38470 + 11205 + 16384) >> 15 = 2, of (4,3,2) = 3
	CHECK("histogram after grey by hand",
	      hist_is(c.st[2].side, 2, 3, (int[]){ 0, 2, 2, 0, 3, 1, 1, 4, 2, 1, 1, 1, -1 }));
	CHECK("rotation keeps the histogram", !memcmp(c.st[2].side, c.st[4].side, 2048));
	struct img p = run_chain(2, plain, &in4);
	CHECK("histograms leave the chain's image alone", img_is(&o, p.w, p.h, p.ch, p.data));
	free(p.data);
	free(o.data);
	plan_free(&c);
	chain_free(&ch);
}

// Whether pixel (x, y) of plot p is r, g, b.
static int plot_px(const struct img *p, int x, int y, int r, int g, int b)
{
	const uint8_t *q = p->data + ((size_t)y * p->w + x) * 3;
	return q[0] == r && q[1] == g && q[2] == b;
}

// The plot leaves alpha out unless asked, and its labels and legend stand where
// src/stages/histogram_plot.c says.
static void test_histogram_plot_alpha(void)
{
	static uint32_t d[4 * 256], g[256];
	struct img p, q, r;
	// red 10 at 50, green 10 at 100, blue 10 at 150, alpha 1000 at 255
	d[50] = 10, d[256 + 100] = 10, d[512 + 150] = 10, d[768 + 255] = 1000;
	g[128] = 7;
	CHECK("plot without alpha draws", histogram_plot(d, 4, false, false, &p) == 0);
	CHECK("plot with alpha draws", histogram_plot(d, 4, false, true, &q) == 0);
	CHECK("grey plot draws", histogram_plot(g, 1, false, false, &r) == 0);
	// without alpha the top is 10: the red bar at 50 (x = 12 + 100) reaches the top row
	CHECK("no alpha: red reaches the top", plot_px(&p, 112, 20, 220, 32, 32));
	CHECK("no alpha: green reaches the top", plot_px(&p, 212, 20, 32, 160, 32));
	CHECK("no alpha: blue reaches the top", plot_px(&p, 312, 20, 32, 64, 224));
	CHECK("no alpha: no alpha curve at 255", !plot_px(&p, 522, 20, 176, 176, 176));
	// with alpha the top is 1000: red's 10 is (2560 + 500) / 1000 = 3 pixels high, its
	// curve on row 20 + 256 - 3
	CHECK("alpha: the alpha bar reaches the top", plot_px(&q, 522, 20, 176, 176, 176));
	CHECK("alpha: red is 3 pixels high", plot_px(&q, 113, 273, 220, 32, 32) &&
						     plot_px(&q, 113, 272, 255, 255, 255));
	// the legend, ending at column 523, rows 4-13: without alpha RED (36 pixels), GREEN
	// (52), BLUE (44) 12 apart, from 524 - 156 = 368; with ALPHA (52) from 304
	CHECK("legend: red square", plot_px(&p, 368, 4, 220, 32, 32) &&
					    plot_px(&p, 377, 13, 220, 32, 32) &&
					    plot_px(&p, 367, 4, 255, 255, 255));
	CHECK("legend: green square", plot_px(&p, 416, 4, 32, 160, 32) &&
					      plot_px(&p, 425, 13, 32, 160, 32));
	CHECK("legend: blue square", plot_px(&p, 480, 4, 32, 64, 224) &&
					     plot_px(&p, 489, 13, 32, 64, 224) &&
					     plot_px(&p, 490, 4, 255, 255, 255));
	CHECK("legend: no alpha square", !plot_px(&p, 472, 4, 176, 176, 176));
	CHECK("legend with alpha: red square", plot_px(&q, 304, 4, 220, 32, 32));
	CHECK("legend with alpha: alpha square", plot_px(&q, 472, 4, 176, 176, 176) &&
							 plot_px(&q, 481, 13, 176, 176, 176));
	CHECK("legend: grey square", plot_px(&r, 480, 4, 64, 64, 64) &&
					     plot_px(&r, 479, 4, 255, 255, 255));
	// labels in 6 x 10 glyphs, 2 apart: "VALUE" from 249 on row 284 (V's top row is
	// 1 0 1), "COUNT" from 12 on row 4 (C's is 0 1 1), the top count 10 from 58 (1's top
	// row is 0 1 0)
	CHECK("label VALUE", plot_px(&p, 249, 284, 64, 64, 64) && plot_px(&p, 251, 284, 255, 255, 255) &&
				     plot_px(&p, 253, 285, 64, 64, 64));
	CHECK("label COUNT", plot_px(&p, 12, 4, 255, 255, 255) && plot_px(&p, 14, 4, 64, 64, 64) &&
				     plot_px(&p, 16, 5, 64, 64, 64));
	CHECK("the top count after COUNT", plot_px(&p, 58, 4, 255, 255, 255) &&
						   plot_px(&p, 60, 4, 64, 64, 64) &&
						   plot_px(&p, 62, 4, 255, 255, 255));
	free(p.data);
	free(q.data);
	free(r.data);
}

static void test_histogram_plot(void)
{
	static uint32_t a[3 * 256], b[3 * 256];
	struct img pa, pb, pc;
	CHECK("log2_q16(1) = 0", histogram_log2_q16(1) == 0);
	CHECK("log2_q16(2) = 65536", histogram_log2_q16(2) == 65536);
	CHECK("log2_q16(3) = floor(103872.10)", histogram_log2_q16(3) == 103872);
	CHECK("log2_q16(10) = floor(217705.88)", histogram_log2_q16(10) == 217705);
	CHECK("log2_q16(2^32) = 32 << 16", histogram_log2_q16((uint64_t)1 << 32) == 2097152);
	CHECK("log2_q16(65535^2 + 1) = floor(2097149.11)",
	      histogram_log2_q16(4294836226) == 2097149);
	a[0] = 5, a[256 + 7] = 5, a[512 + 255] = 5;
	memcpy(b, a, sizeof a);
	b[256 + 7] = 4, b[256 + 8] = 1;
	CHECK("plot draws", histogram_plot(a, 3, false, false, &pa) == 0);
	CHECK("plot size", pa.w == HISTOGRAM_PLOT_W && pa.h == HISTOGRAM_PLOT_H && pa.ch == 3 &&
				   pa.w == 536 && pa.h == 300);
	CHECK("plot draws again", histogram_plot(a, 3, false, false, &pb) == 0);
	CHECK("plot is reproducible", !memcmp(pa.data, pb.data, img_bytes(&pa)));
	free(pb.data);
	CHECK("plot of other counts", histogram_plot(b, 3, false, false, &pb) == 0);
	CHECK("plot changes with the counts", memcmp(pa.data, pb.data, img_bytes(&pa)));
	CHECK("plot log scale", histogram_plot(b, 3, true, false, &pc) == 0);
	CHECK("log scale differs", memcmp(pc.data, pb.data, img_bytes(&pa)));
	// value 255 of blue is a full-height bar: the top row of the plot area at the columns
	// of 255 (x = 12 + 510, y = 20) is the blue curve; value 100 is empty: its bottom row
	// holds a curve, and just above it the white background
	const uint8_t *top = pa.data + ((size_t)20 * pa.w + 522) * 3;
	const uint8_t *bg = pa.data + ((size_t)270 * pa.w + 12 + 200) * 3;
	CHECK("plot: the blue bar reaches the top", top[0] == 32 && top[1] == 64 && top[2] == 224);
	CHECK("plot: background is white", bg[0] == 255 && bg[1] == 255 && bg[2] == 255);
	free(pa.data);
	free(pb.data);
	free(pc.data);
	test_histogram_plot_alpha();
}

// A stage that doubles both sides, standing in for one that grows the image (a rotation
// by any angle onto an expanded canvas): the chain's limits must hold for its output.
static int grow_parse(void *params, int argc, char **argv)
{
	(void)params;
	(void)argv;
	return argc ? err_set("grow: takes no arguments") : 0;
}

static int grow_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = (struct geom){ in->w * 2, in->h * 2, in->ch, in->orient };
	return 0;
}

static void grow_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	(void)params, (void)in, (void)out; // planned, never run
}

static const struct stage_ops stage_grow = {
	.name = "grow", .usage = "grow", .summary = "doubles the sides (unit test only)",
	.params_size = 1, .parse = grow_parse, .plan = grow_plan, .run_cpu = grow_run_cpu,
};

// A chain of n grow stages (built by hand: grow is not in the registry).
static uint64_t grow_max_pixels; // the limit the last grow_chain asked for

static void grow_chain(struct chain *c, struct chain_stage *st, int n, uint64_t max_pixels)
{
	memset(c, 0, sizeof *c);
	memset(st, 0, (size_t)n * sizeof *st);
	for (int i = 0; i < n; i++)
		st[i] = (struct chain_stage){ .ops = &stage_grow, .token = "grow" };
	c->n = n;
	c->st = st;
	grow_max_pixels = max_pixels;
}

static void test_limits(void)
{
	struct chain ch;
	struct plan c = { 0 };
	struct chain_stage st[16];
	struct geom g = { 100, 50, 3, 0 };

	// 100x50 -> 200x100 -> 400x200 -> ... -> 102400x51200 after 10 doublings
	grow_chain(&ch, st, 9, 0);
	CHECK("growth to 51200x25600 is within the side limit", plan_make(&c, &ch, &g, grow_max_pixels) == 0);
	CHECK("growth: max bytes is the last image", c.max_bytes == (size_t)51200 * 25600 * 3);
	CHECK("growth: host bytes planned", c.host_bytes == (size_t)100 * 50 * 3 + 2 * c.max_bytes);
	plan_free(&c);
	grow_chain(&ch, st, 10, 0);
	CHECK("growth past 65535 a side is refused", plan_make(&c, &ch, &g, grow_max_pixels) < 0);
	CHECK("growth message names stage and limit",
	      !strcmp(err_msg(), "grow: the output would be 102400x51200 pixels; sides are limited to 65535"));
	// 100x50 = 5000 pixels; after 2 doublings 400x200 = 80000
	grow_chain(&ch, st, 2, 80000);
	CHECK("growth to exactly --max-pixels passes", plan_make(&c, &ch, &g, grow_max_pixels) == 0);
	plan_free(&c);
	grow_chain(&ch, st, 2, 79999);
	CHECK("growth one pixel past --max-pixels is refused", plan_make(&c, &ch, &g, grow_max_pixels) < 0);
	CHECK("--max-pixels message", !strcmp(err_msg(), "grow: the output would be 400x200 = 80000 pixels, more than --max-pixels 79999"));
	grow_chain(&ch, st, 1, 0);
	CHECK("an empty input is refused by the plan", plan_make(&c, &ch, &(struct geom){ 0, 5, 3, 0 }, grow_max_pixels) < 0);
	CHECK("5 channels are refused by the plan", plan_make(&c, &ch, &(struct geom){ 5, 5, 5, 0 }, grow_max_pixels) < 0);

	// the number of stages
	static char *many[CHAIN_MAX_STAGES + 1];
	for (int i = 0; i <= CHAIN_MAX_STAGES; i++)
		many[i] = "transpose";
	CHECK("10000 stages parse", chain_parse(&ch, CHAIN_MAX_STAGES, many) == 0);
	chain_free(&ch);
	CHECK("10001 stages are refused", chain_parse(&ch, CHAIN_MAX_STAGES + 1, many) < 0);
	CHECK("stage count message", !strcmp(err_msg(), "too many stages (10001; at most 10000)"));
	// a run of ':' makes as many (empty) arguments: found by the chain fuzzer
	CHECK("a token of many colons is refused cleanly", parse_one("rotate::::::::::::::::::::::::") < 0);
}

static void test_messages(void)
{
	char big[5000];
	err_set("a\nb\tc\rd\033[31me\x7f");
	CHECK("control characters are escaped", !strcmp(err_msg(), "a\\nb\\tc\\rd\\x1b[31me\\x7f"));
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	big[0] = 'A';
	err_set("%s: cannot open: the reason", big);
	CHECK("a long message is at most 1023 bytes", strlen(err_msg()) <= 1023);
	CHECK("a long message keeps its start", err_msg()[0] == 'A');
	CHECK("a long message keeps its end", strstr(err_msg(), "...") &&
	      !strcmp(err_msg() + strlen(err_msg()) - 25, ": cannot open: the reason"));
	err_set("x\n");
	err_prefix("p\nq");
	CHECK("a prefix is escaped too", !strcmp(err_msg(), "p\\nq: x\\n"));
}

// pipeline_cl on the default OpenCL device (skipped when there is none): whether the input
// memory is aligned for zero-copy (ocl_wrap_alloc; read in place on a device whose memory
// is the host's, pinned elsewhere) or not (plain memory one byte off: uploaded), the image
// and the side outputs equal the CPU path's, the input is never written, and run_times
// says which transfers were left out. Then with reuse_bytes on pinned input memory of the
// input's size and of room for the output too: the same bytes, and the output takes the
// input's memory exactly where it fits and the run is not zero-copy; elsewhere the input
// is intact and stays the caller's. On a zero-copy device, a third run is given memory made
// by pipeline_mem_alloc: the same bytes, written into that memory (the output is its out
// block), which the run takes (mem emptied).
static void test_pipeline_cl(void)
{
	static const char *const chains[][6] = {
		{ "histogram" },
		{ "rotate:90" },
		{ "rotate:30", "grey", "transpose" },
		{ "histogram", "rotate:90", "convolve:box", "histogram", "rotate:-30", "transpose" },
	};
	const char *env = getenv("CLIMG_ZERO_COPY");
	struct geom g = { 13, 7, 3, 0 };
	uint8_t ref[13 * 7 * 3], *aligned = NULL, *raw = malloc(sizeof ref + 1);
	int none = 0;
	struct ocl *o = ocl_open(NULL, &none);
	char name[128];
	uint32_t v = 12345;

	if (!o) {
		printf("INFO pipeline_cl tests skipped: %s\n", err_msg());
		free(raw);
		return;
	}
	aligned = pipeline_zero_copy(o) ? ocl_wrap_alloc(o, sizeof ref)
					: ocl_host_alloc(o, sizeof ref);
	CHECK("pipeline_cl: input memory", aligned && raw);
	if (!aligned || !raw)
		goto done;
	for (size_t i = 0; i < sizeof ref; i++) {
		v = v * 1103515245u + 12345u;
		ref[i] = (uint8_t)(v >> 24);
	}
	for (size_t k = 0; k < sizeof chains / sizeof chains[0]; k++) {
		struct chain ch;
		struct plan c = { 0 };
		struct img cpu = { 0 }, in = { 13, 7, 3, ref };
		uint8_t cpu_side[2 * 3 * 256 * 4];
		double stage_ms[6];
		int n = 0, writers = 0;
		while (n < 6 && chains[k][n])
			n++;
		if (chain_parse(&ch, n, (char **)chains[k]) < 0 || plan_make(&c, &ch, &g, 0) < 0 ||
		    c.side_bytes > sizeof cpu_side || pipeline_cpu(&c, &in, NULL, &cpu, NULL) < 0) {
			CHECK("pipeline_cl: chain runs on the CPU", 0);
			continue;
		}
		if (c.side_bytes) // c.side is NULL without side outputs
			memcpy(cpu_side, c.side, c.side_bytes);
		for (int i = 0; i < c.n; i++)
			writers += !c.st[i].plan.passthrough;
		for (int a = 0; a < 3; a++) {
			static const char *const how[] = { "aligned", "unaligned",
							   "aligned, pipeline_mem," };
			struct img out = { 0 };
			struct run_times t = { .stage_ms = stage_ms };
			struct pipeline_mem mem = { 0 };
			void *mem_out = NULL;
			bool zero_copy = ocl_host_unified(o) && !(env && !strcmp(env, "0"));
			bool in_place = zero_copy && a != 1;
			int rc;
			if (a == 2) {
				if (!zero_copy)
					continue;
				rc = pipeline_mem_alloc(&c, o, &mem);
				CHECK("pipeline_mem_alloc", rc == 0 && mem.bytes == c.max_bytes &&
								    !mem.out == !writers &&
								    !mem.tmp == (writers < 2));
				mem_out = mem.out;
			}
			in.data = a == 1 ? raw + 1 : aligned;
			memcpy(in.data, ref, sizeof ref);
			if (c.side_bytes)
				memset(c.side, 0xee, c.side_bytes);
			rc = pipeline_cl(&c, o, &in, false, a == 2 ? &mem : NULL, &out, &t);
			if (a == 2) {
				snprintf(name, sizeof name, "pipeline_cl %s%s, pipeline_mem: taken",
					 chains[k][0], n > 1 ? "..." : "");
				CHECK(name, rc == 0 && !mem.out && !mem.tmp &&
						    (!writers || out.data == mem_out));
				pipeline_mem_free(&mem);
			}
			snprintf(name, sizeof name, "pipeline_cl %s%s, %s input: runs", chains[k][0],
				 n > 1 ? "..." : "", how[a]);
			CHECK(name, rc == 0);
			if (rc < 0) {
				printf("INFO %s\n", err_msg());
				continue;
			}
			snprintf(name, sizeof name, "pipeline_cl %s%s, %s input: the CPU bytes",
				 chains[k][0], n > 1 ? "..." : "", how[a]);
			CHECK(name, img_is(&out, cpu.w, cpu.h, cpu.ch, cpu.data) &&
					    (!c.side_bytes || !memcmp(c.side, cpu_side, c.side_bytes)));
			snprintf(name, sizeof name, "pipeline_cl %s%s, %s input: input intact",
				 chains[k][0], n > 1 ? "..." : "", how[a]);
			CHECK(name, !memcmp(in.data, ref, sizeof ref));
			snprintf(name, sizeof name, "pipeline_cl %s%s, %s input: zero-copy where due",
				 chains[k][0], n > 1 ? "..." : "", how[a]);
			CHECK(name, t.upload_in_place == in_place &&
					    t.download_in_place == (zero_copy && writers > 0));
			ocl_host_free(o, out.data);
		}
		for (int room = 0; room < 2; room++) {
			// the input's size, then room for a larger output
			size_t cap = room ? geom_bytes(&c.out) : sizeof ref;
			if (room && cap <= sizeof ref)
				continue;
			struct img out = { 0 }, pin = { 13, 7, 3, ocl_host_alloc(o, cap) };
			uint8_t *mem = pin.data;
			bool zero_copy = ocl_host_unified(o) && !(env && !strcmp(env, "0"));
			bool fits = geom_bytes(&c.out) <= cap;
			int rc = -1;
			if (mem) {
				memcpy(mem, ref, sizeof ref);
				if (c.side_bytes)
					memset(c.side, 0xee, c.side_bytes);
				rc = pipeline_cl(&c, o, &pin, cap, NULL, &out, NULL);
			}
			snprintf(name, sizeof name, "pipeline_cl %s%s, reuse_bytes %zu: the CPU bytes",
				 chains[k][0], n > 1 ? "..." : "", cap);
			CHECK(name, rc == 0 && img_is(&out, cpu.w, cpu.h, cpu.ch, cpu.data) &&
					    (!c.side_bytes || !memcmp(c.side, cpu_side, c.side_bytes)));
			snprintf(name, sizeof name, "pipeline_cl %s%s, reuse_bytes %zu: %s",
				 chains[k][0], n > 1 ? "..." : "", cap,
				 fits && !zero_copy ? "the output in the input's memory"
						    : "input intact and the caller's");
			if (fits && !zero_copy)
				CHECK(name, rc == 0 && out.data == mem && !pin.data);
			else
				CHECK(name, rc == 0 && out.data != mem && pin.data == mem &&
						    !memcmp(mem, ref, sizeof ref));
			ocl_host_free(o, out.data);
			ocl_host_free(o, pin.data);
		}
		free(cpu.data);
		plan_free(&c);
		chain_free(&ch);
	}
	// A program holds the kernels of the channel count it was built for, and only those.
	{
		const struct ocl_program_id c1 = { "convolve", 1 }, bad[] = { { "convolve", 0 },
									    { "convolve", 5 } };
		size_t wg;
		CHECK("ocl_build: 0 channels refused", ocl_build(o, &bad[0], 1) < 0 &&
		      strstr(err_msg(), "kernels/convolve.cl: no images have 0 channels"));
		CHECK("ocl_build: 5 channels refused", ocl_build(o, &bad[1], 1) < 0 &&
		      strstr(err_msg(), "no images have 5 channels"));
		CHECK("ocl_build: convolve for 1 channel", ocl_build(o, &c1, 1) == 0);
		CHECK("convolve for 1 channel holds convolve_2d_c1",
		      ocl_kernel_wg_max(o, "convolve", 1, "convolve_2d_c1", &wg) == 0);
		CHECK("convolve for 1 channel has no convolve_2d_c3",
		      ocl_kernel_wg_max(o, "convolve", 1, "convolve_2d_c3", &wg) < 0 &&
		      strstr(err_msg(), "convolve_2d_c3"));
		CHECK("convolve for 2 channels is another program, not built",
		      ocl_kernel_wg_max(o, "convolve", 2, "convolve_2d_c2", &wg) < 0 &&
		      strstr(err_msg(), "kernels/convolve.cl was not built for 2 channels"));
	}
done:
	ocl_host_free(o, aligned);
	free(raw);
	ocl_close(o);
}

// "Did you mean": distances counted by hand, and which word is offered.
static void test_suggest(void)
{
	static const char *const stages[] = { "grey", "rotate", "flip", "flop", "crop", NULL };
	static const char *const modes[] = { "bt601", "bt709", "avg", NULL };
	char word[SUGGEST_MAX_LEN + 2];

	CHECK("distance kitten sitting", suggest_distance("kitten", "sitting") == 3);
	CHECK("distance of a swap is 1", suggest_distance("bilinaer", "bilinear") == 1);
	CHECK("distance ignores case", suggest_distance("GREY", "grey") == 0);
	CHECK("distance to empty", suggest_distance("", "abc") == 3);
	CHECK("distance bt710 bt709", suggest_distance("bt710", "bt709") == 2);
	memset(word, 'a', sizeof word - 1);
	word[sizeof word - 1] = '\0';
	CHECK("a word over the limit is far from everything",
	      suggest_distance(word, word) == SUGGEST_MAX_LEN + 1);
	CHECK("gray: grey", suggest("gray", stages) && !strcmp(suggest("gray", stages), "grey"));
	CHECK("rotat: rotate", suggest("rotat", stages) && !strcmp(suggest("rotat", stages), "rotate"));
	CHECK("blur: nothing near", !suggest("blur", stages));
	CHECK("a word of one letter gets nothing", !suggest("x", stages));
	// bt601 and bt709 are both 2 from bt710: the one sharing "bt7" wins
	CHECK("bt710: bt709", suggest("bt710", modes) && !strcmp(suggest("bt710", modes), "bt709"));
	CHECK("bt710: bt709 whatever the order",
	      suggest("bt710", modes + 1) && !strcmp(suggest("bt710", modes + 1), "bt709"));
	CHECK("three edits in a word of 5 are too many", !suggest("xyz01", modes));
	err_set("unknown thing 'gray'");
	CHECK("suggest_err appends the word", suggest_err("grey") == -1 &&
	      !strcmp(err_msg(), "unknown thing 'gray'; did you mean grey?"));
	err_set("unknown thing 'zzz'");
	CHECK("suggest_err without a word keeps the message", suggest_err(NULL) == -1 &&
	      !strcmp(err_msg(), "unknown thing 'zzz'"));
	CHECK("stage_suggest", stage_suggest("trasnpose") &&
	      !strcmp(stage_suggest("trasnpose"), "transpose"));
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
	test_remap_tile_rows();
	test_resize_blocks();
	test_rotate_by_hand();
	test_rotate_bg();
	test_rotate_bright_pixel();
	test_rotate_roundtrip();
	test_histogram_parse();
	test_histogram_counts();
	test_histogram_plot();
	test_convolve_borders();
	test_convolve_impulse();
	test_convolve_identities();
	test_convolve_values();
	test_convolve_errors();
	test_convolve_ints();
	test_limits();
	test_messages();
	test_suggest();
	test_hostmem();
	test_pipeline_cpu_mem();
	test_pipeline_cl();
	return failures ? 1 : 0;
}
