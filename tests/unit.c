// SPDX-License-Identifier: MIT
// C unit tests: the number parsers, the chain parser and planner, and each stage's CPU
// reference on tiny images with hand-computed results. Prints one "PASS name" or
// "FAIL name: ..." line per check; tests/run.sh counts them.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/err.h"
#include "../src/parse.h"
#include "../src/pipeline.h"

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
	plan->out = (struct geom){ in->w * 2, in->h * 2, in->ch };
	return 0;
}

static const struct stage_ops stage_grow = {
	.name = "grow", .usage = "grow", .summary = "doubles the sides (unit test only)",
	.params_size = 1, .parse = grow_parse, .plan = grow_plan,
};

// A chain of n grow stages (built by hand: grow is not in the registry).
static void grow_chain(struct chain *c, struct chain_stage *st, int n, uint64_t max_pixels)
{
	memset(c, 0, sizeof *c);
	memset(st, 0, (size_t)n * sizeof *st);
	for (int i = 0; i < n; i++)
		st[i] = (struct chain_stage){ .ops = &stage_grow, .token = "grow" };
	c->n = n;
	c->st = st;
	c->max_pixels = max_pixels;
}

static void test_limits(void)
{
	struct chain c;
	struct chain_stage st[16];
	struct geom g = { 100, 50, 3 };

	// 100x50 -> 200x100 -> 400x200 -> ... -> 102400x51200 after 10 doublings
	grow_chain(&c, st, 9, 0);
	CHECK("growth to 51200x25600 is within the side limit", chain_plan(&c, &g) == 0);
	CHECK("growth: max bytes is the last image", c.max_bytes == (size_t)51200 * 25600 * 3);
	CHECK("growth: host bytes planned", c.host_bytes == (size_t)100 * 50 * 3 + 2 * c.max_bytes);
	grow_chain(&c, st, 10, 0);
	CHECK("growth past 65535 a side is refused", chain_plan(&c, &g) < 0);
	CHECK("growth message names stage and limit",
	      !strcmp(err_msg(), "grow (stage 10): output: 102400x51200 exceeds the 65535-pixel side limit"));
	// 100x50 = 5000 pixels; after 2 doublings 400x200 = 80000
	grow_chain(&c, st, 2, 80000);
	CHECK("growth to exactly --max-pixels passes", chain_plan(&c, &g) == 0);
	grow_chain(&c, st, 2, 79999);
	CHECK("growth one pixel past --max-pixels is refused", chain_plan(&c, &g) < 0);
	CHECK("--max-pixels message", !strcmp(err_msg(), "grow (stage 2): output: 400x200 exceeds --max-pixels (79999)"));
	grow_chain(&c, st, 1, 0);
	CHECK("an empty input is refused by the plan", chain_plan(&c, &(struct geom){ 0, 5, 3 }) < 0);
	CHECK("5 channels are refused by the plan", chain_plan(&c, &(struct geom){ 5, 5, 5 }) < 0);

	// the number of stages
	static char *many[CHAIN_MAX_STAGES + 1];
	for (int i = 0; i <= CHAIN_MAX_STAGES; i++)
		many[i] = "transpose";
	CHECK("10000 stages parse", chain_parse(&c, CHAIN_MAX_STAGES, many) == 0);
	chain_free(&c);
	CHECK("10001 stages are refused", chain_parse(&c, CHAIN_MAX_STAGES + 1, many) < 0);
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

int main(void)
{
	test_parse_numbers();
	test_chain_parse();
	test_grey();
	test_geometry();
	test_plan();
	test_limits();
	test_messages();
	return failures ? 1 : 0;
}
