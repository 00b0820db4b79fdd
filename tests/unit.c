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
#include "../src/stages/convolve.h"

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
					    "rotate:180.0", "rotate:-720", "transpose", NULL };
	static const char *const bad[] = { "", ":", "nosuch", "Grey", "grey:", "grey:foo",
					   "grey:avg:avg", "rotate", "rotate:", "rotate:30",
					   "rotate:abc", "rotate:90abc", "rotate:0x1p3",
					   "rotate: 90", "rotate:1e309", "rotate:nan",
					   "rotate:90:90", "transpose:1", NULL };
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
	    pipeline_cpu(&c, in, &out) < 0) {
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
	if (ints_of("convolve:kernel=1:norm=65537", &ci, &c)) {
		CHECK("D = 65537 divides on the device", ci.dev_m == 0);
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
	char *t = tok;
	struct geom huge = { 65535, 65535, 3 }, fine = { 1000, 1000, 4 };
	CHECK("31x31 kernel parses", chain_parse(&c, 1, &t) == 0);
	CHECK("31x31 kernel on 65535x65535 is over the work limit",
	      chain_plan(&c, &huge) < 0 && strstr(err_msg(), "over the limit of 2^40"));
	CHECK("31x31 kernel on 1000x1000 is fine", chain_plan(&c, &fine) == 0);
	chain_free(&c);
	t = "convolve:box:size=2001";
	CHECK("box:size=2001 parses", chain_parse(&c, 1, &t) == 0);
	CHECK("a separable kernel has no work limit", chain_plan(&c, &huge) == 0);
	chain_free(&c);
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
}

int main(void)
{
	test_parse_numbers();
	test_chain_parse();
	test_grey();
	test_geometry();
	test_plan();
	test_convolve_borders();
	test_convolve_impulse();
	test_convolve_identities();
	test_convolve_values();
	test_convolve_errors();
	test_convolve_ints();
	return failures ? 1 : 0;
}
