// SPDX-License-Identifier: MIT
// C unit tests: the number parsers, the chain parser and planner, and each stage's CPU
// reference on tiny images with hand-computed results (the histogram's side output, CSV
// and plot included). Prints one "PASS name" or
// "FAIL name: ..." line per check; tests/run.sh counts them.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/err.h"
#include "../src/parse.h"
#include "../src/pipeline.h"
#include "../src/stages/histogram.h"

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

// Runs tokens on in (CPU path) with the chain kept for its side outputs; out is the image.
static int run_kept(struct chain *c, int n, const char **tokens, const struct img *in,
		    struct img *out)
{
	struct geom g = { in->w, in->h, in->ch };
	if (chain_parse(c, n, (char **)tokens) < 0)
		return -1;
	if (chain_plan(c, &g) < 0 || pipeline_cpu(c, in, out) < 0) {
		chain_free(c);
		return -1;
	}
	return 0;
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
					    "histogram:./a=b.csv", NULL };
	static const char *const bad[] = { "histogram:", "histogram::", "histogram:a.csv:b.csv",
					   "histogram:-:-", "histogram:plot=",
					   "histogram:plot=a.png:plot=b.png", "histogram:scale=log",
					   "histogram:scale=cubic:plot=a.png", "histogram:plto=a.png",
					   "histogram:Plot=a.png",
					   "histogram:plot=a.png:scale=log:scale=log", NULL };
	char name[80];
	for (int i = 0; good[i]; i++) {
		snprintf(name, sizeof name, "chain accepts '%s'", good[i]);
		CHECK(name, parse_one(good[i]) == 0);
	}
	for (int i = 0; bad[i]; i++) {
		snprintf(name, sizeof name, "chain rejects '%s'", bad[i]);
		CHECK(name, parse_one(bad[i]) < 0 && *err_msg());
	}
	parse_one("histogram:plto=a.png");
	CHECK("histogram names an unknown option",
	      !strcmp(err_msg(), "histogram: unknown option 'plto=' (use plot=FILE or "
				 "scale=linear|log)"));

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
	struct chain c;
	struct img o;

	// 3x2 grey: 0 0 5 / 255 5 5
	uint8_t g1[] = { 0, 0, 5, 255, 5, 5 };
	struct img in1 = { 3, 2, 1, g1 };
	CHECK("histogram 1 channel runs", run_kept(&c, 1, h, &in1, &o) == 0);
	CHECK("histogram 1 channel by hand",
	      hist_is(c.st[0].side, 1, 6, (int[]){ 0, 0, 2, 0, 5, 3, 0, 255, 1, -1 }));
	CHECK("histogram passes the image through", img_is(&o, 3, 2, 1, g1));
	CHECK("histogram side output is 1 KiB", c.side_bytes == 1024);
	free(o.data);
	chain_free(&c);

	// 2x2 grey+alpha: (10,255) (10,0) / (200,255) (10,255)
	uint8_t g2[] = { 10, 255, 10, 0, 200, 255, 10, 255 };
	struct img in2 = { 2, 2, 2, g2 };
	CHECK("histogram 2 channels runs", run_kept(&c, 1, h, &in2, &o) == 0);
	CHECK("histogram 2 channels by hand",
	      hist_is(c.st[0].side, 2, 4,
		      (int[]){ 0, 10, 3, 0, 200, 1, 1, 255, 3, 1, 0, 1, -1 }));
	free(o.data);
	chain_free(&c);

	// 2x1 RGB: red, white (the example in climg(1))
	uint8_t g3[] = { 255, 0, 0, 255, 255, 255 };
	struct img in3 = { 2, 1, 3, g3 };
	CHECK("histogram 3 channels runs", run_kept(&c, 1, h, &in3, &o) == 0);
	CHECK("histogram 3 channels by hand",
	      hist_is(c.st[0].side, 3, 2,
		      (int[]){ 0, 255, 2, 1, 0, 1, 1, 255, 1, 2, 0, 1, 2, 255, 1, -1 }));
	struct stage_render r;
	const struct chain_stage *s = &c.st[0];
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
	chain_free(&c);

	// 3x1 RGBA: (1,2,3,4) (1,2,3,4) (4,3,2,1)
	uint8_t g4[] = { 1, 2, 3, 4, 1, 2, 3, 4, 4, 3, 2, 1 };
	struct img in4 = { 3, 1, 4, g4 };
	CHECK("histogram 4 channels runs", run_kept(&c, 1, h, &in4, &o) == 0);
	CHECK("histogram 4 channels by hand",
	      hist_is(c.st[0].side, 4, 3,
		      (int[]){ 0, 1, 2, 0, 4, 1, 1, 2, 2, 1, 3, 1, 2, 3, 2, 2, 2, 1, 3, 4, 2,
			       3, 1, 1, -1 }));
	free(o.data);
	chain_free(&c);

	// histograms around other stages: each sees its own input, the image is untouched
	const char *chain[] = { "histogram:a.csv", "grey", "histogram:b.csv", "rotate:90",
				"histogram:c.csv" };
	const char *plain[] = { "grey", "rotate:90" };
	CHECK("histogram chain runs", run_kept(&c, 5, chain, &in4, &o) == 0);
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
	chain_free(&c);
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
	CHECK("plot draws", histogram_plot(a, 3, false, &pa) == 0);
	CHECK("plot size", pa.w == HISTOGRAM_PLOT_W && pa.h == HISTOGRAM_PLOT_H && pa.ch == 3 &&
				   pa.w == 536 && pa.h == 300);
	CHECK("plot draws again", histogram_plot(a, 3, false, &pb) == 0);
	CHECK("plot is reproducible", !memcmp(pa.data, pb.data, img_bytes(&pa)));
	free(pb.data);
	CHECK("plot of other counts", histogram_plot(b, 3, false, &pb) == 0);
	CHECK("plot changes with the counts", memcmp(pa.data, pb.data, img_bytes(&pa)));
	CHECK("plot log scale", histogram_plot(b, 3, true, &pc) == 0);
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
}

int main(void)
{
	test_parse_numbers();
	test_chain_parse();
	test_grey();
	test_geometry();
	test_plan();
	test_histogram_parse();
	test_histogram_counts();
	test_histogram_plot();
	return failures ? 1 : 0;
}
