// SPDX-License-Identifier: MIT
// stats: per channel the least and largest value, the mean and the standard deviation, at
// this point of the chain; the image passes through unchanged (no copy on the device).
//
//   stats[:DEST]
//     DEST   where the statistics go: a file (written atomically) or - for standard output
//            (the default). JSON when DEST ends in .json, CSV when it ends in .csv or has
//            no extension (-, /dev/stdout); any other extension is a usage error. A
//            template in a batch, as -o.
//
// Output size: the input's, unchanged (a passthrough). Border rule: none (every pixel is
// counted once). The measure is exact integers; over the N = W x H pixels, for channel c:
//   min_c = min v, max_c = max v, S1_c = sum v, S2_c = sum v^2   (v = in(x, y) channel c)
// S1 <= 255 N < 2^41 and S2 <= 255^2 N < 2^49, as N <= 65535 * 65535. The side output holds
// them as 6 uint32 words a channel, at 6c:
//   [0] 255 - min  [1] max  [2] S1 low 32 bits  [3] S1 high  [4] S2 low  [5] S2 high
// The least value is stored as 255 - min so that the zeroed side output is the identity for
// both extremes (the device folds them with atomic_max). kernels/stats.cl computes the same.
// From the integers, on the host (so the same on every device):
//   mean = S1 / N,  stddev = sqrt(N S2 - S1^2) / N   (the population deviation, numpy's std)
// in IEEE double: N S2 - S1^2 (>= 0) is computed exactly in 128 bits, then rounded once.
//
// CSV: the header "channel,min,max,mean,stddev,pixels,sum,sum_sq", then one line a channel
// (grey | grey,alpha | red,green,blue | red,green,blue,alpha), mean and stddev with 6
// decimals, the rest decimal integers; lines end in "\n". JSON: one object and "\n":
//   {"width":W,"height":H,"pixels":N,"channels":[{"channel":"red","min":0,"max":255,
//    "mean":127.500000,"stddev":127.500000,"sum":255,"sum_sq":65025},...]}
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../err.h"
#include "../ocl.h"
#include "histogram.h"
#include "stage.h"

struct stats_params {
	const char *dest; // the destination ("-" = stdout); points into the params block
	bool json;
};

// The words a channel takes in the side output, and their meaning (see the top).
#define STATS_WORDS 6

// The extension of the last component of path (after its last '.'), or "" for none.
static const char *path_ext(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;
	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	return dot && dot != base ? dot + 1 : "";
}

static int stats_parse(void *params, int argc, char **argv)
{
	struct stats_params *p = params;
	const char *ext;
	if (argc > 1)
		return err_set("stats: takes at most one argument, the destination (FILE.csv, "
			       "FILE.json or -)");
	p->dest = argc ? argv[0] : "-";
	if (!*p->dest)
		return err_set("stats: empty destination (use FILE.csv, FILE.json or -)");
	ext = path_ext(p->dest);
	p->json = !strcasecmp(ext, "json");
	if (*ext && !p->json && strcasecmp(ext, "csv"))
		return err_set("stats: cannot tell the format of '%s' (use .csv or .json)",
			       p->dest);
	return 0;
}

static int stats_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = *in;
	plan->passthrough = true;
	plan->side_bytes = (size_t)in->ch * STATS_WORDS * sizeof(uint32_t);
	return 0;
}

// Adds v to the 64-bit number held as two words, low first.
static void add64(uint32_t *w, uint64_t v)
{
	uint64_t s = ((uint64_t)w[1] << 32 | w[0]) + v;
	w[0] = (uint32_t)s;
	w[1] = (uint32_t)(s >> 32);
}

static void stats_side_cpu(const void *params, const struct img *in, void *side)
{
	uint32_t *words = side;
	size_t n = (size_t)in->w * (size_t)in->h;
	int ch = in->ch;
	(void)params;
	for (int c = 0; c < ch; c++) {
		const uint8_t *s = in->data + c;
		unsigned mn = 255, mx = 0;
		uint64_t s1 = 0, s2 = 0;
		uint32_t *w = words + c * STATS_WORDS;
		for (size_t i = 0; i < n; i++, s += ch) {
			unsigned v = *s;
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
			s1 += v;
			s2 += v * v;
		}
		if (255 - mn > w[0])
			w[0] = 255 - mn;
		if (mx > w[1])
			w[1] = mx;
		add64(w + 2, s1);
		add64(w + 4, s2);
	}
}

// Device work sizes; see kernels/stats.cl. The GPU family: work-groups of a power of two
// items, at most STATS_WG_MAX (the tree reduction halves them; STATS_LOCAL_BYTES of local
// memory an item), STATS_ITEMS_PER_CU items per compute unit in all, but at least
// STATS_MIN_GROUP_BYTES of image a group, so that the merges (6 atomics a channel and
// group) stay few. The CPU family: slices of at least STATS_CPU_MIN_SLICE bytes (a multiple
// of 48), about STATS_CPU_SLICES_PER_CU a compute unit.
#define STATS_WG_MAX 256
#define STATS_LOCAL_BYTES 24 // two uints and two ulongs
#define STATS_ITEMS_PER_CU 2048
#define STATS_MIN_GROUP_BYTES ((size_t)64 << 10)
#define STATS_CPU_MIN_SLICE ((size_t)48 * 1366)
#define STATS_CPU_SLICES_PER_CU 8
#define STATS_CPU_MAX_SLICE ((size_t)UINT32_MAX / 48 * 48)

static int stats_cpu_cl(const struct stage_cl *c)
{
	static const char *const kernel[] = { "stats_cpu_1", "stats_cpu_2", "stats_cpu_3",
					      "stats_cpu_4" };
	size_t bytes = geom_bytes(&c->gin), cu = ocl_get_limits(c->ocl).compute_units;
	size_t slice = (bytes / (cu * STATS_CPU_SLICES_PER_CU) + 47) / 48 * 48;
	if (slice < STATS_CPU_MIN_SLICE)
		slice = STATS_CPU_MIN_SLICE;
	if (slice > STATS_CPU_MAX_SLICE) // the kernel's argument is a uint
		slice = STATS_CPU_MAX_SLICE;
	return ocl_run(c->ocl, "stats", c->gin.ch, kernel[c->gin.ch - 1], up_div(bytes, slice),
		       1, 1, 1,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_INT(c->gin.w), OCL_INT(c->gin.h),
					   OCL_BUF(c->side),
					   OCL_UINT(c->side_offset / sizeof(uint32_t)),
					   OCL_UINT(slice), OCL_END });
}

static int stats_side_cl(const void *params, const struct stage_cl *c)
{
	static const char *const kernel[] = { "stats_1", "stats_2", "stats_3", "stats_4" };
	struct ocl_limits lim = ocl_get_limits(c->ocl);
	const char *name = kernel[c->gin.ch - 1];
	size_t bytes = geom_bytes(&c->gin), max, wg = 1, groups;
	(void)params;
	if (ocl_cpu_kernels(c->ocl))
		return stats_cpu_cl(c);
	if (ocl_kernel_wg_max(c->ocl, "stats", c->gin.ch, name, &max) < 0)
		return -1;
	if (max > lim.item_max[0])
		max = lim.item_max[0];
	// the largest power of two the kernel, the device and its local memory allow
	while (wg * 2 <= max && wg * 2 <= STATS_WG_MAX &&
	       wg * 2 * STATS_LOCAL_BYTES <= lim.local_mem_bytes)
		wg *= 2;
	groups = up_div(bytes, STATS_MIN_GROUP_BYTES);
	if (groups > (size_t)lim.compute_units * up_div(STATS_ITEMS_PER_CU, wg))
		groups = (size_t)lim.compute_units * up_div(STATS_ITEMS_PER_CU, wg);
	return ocl_run(c->ocl, "stats", c->gin.ch, name, groups * wg, 1, wg, 1,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_INT(c->gin.w), OCL_INT(c->gin.h),
					   OCL_BUF(c->side),
					   OCL_UINT(c->side_offset / sizeof(uint32_t)),
					   OCL_LOCAL(wg * 2 * sizeof(uint32_t)),
					   OCL_LOCAL(wg * 2 * sizeof(uint64_t)), OCL_END });
}

static void stats_side_where(const void *params, const struct geom *in, size_t i, char *buf,
			     size_t size)
{
	static const char *const what[STATS_WORDS] = { "255 - min", "max", "sum, low word",
						       "sum, high word", "sum_sq, low word",
						       "sum_sq, high word" };
	(void)params;
	snprintf(buf, size, "channel %zu (%s) %s", i / STATS_WORDS,
		 histogram_channel_name(in->ch, (int)(i / STATS_WORDS)), what[i % STATS_WORDS]);
}

static int stats_files(const void *params, struct stage_file *files)
{
	const struct stats_params *p = params;
	files[0] = (struct stage_file){ p->dest, false };
	return 1;
}

// One channel's numbers, from its words and the pixel count.
struct stats_channel {
	unsigned min, max;
	uint64_t sum, sum_sq;
	double mean, stddev;
};

static struct stats_channel stats_channel(const uint32_t *w, uint64_t n)
{
	__extension__ typedef unsigned __int128 u128;
	struct stats_channel s = { 255 - w[0], w[1], (uint64_t)w[3] << 32 | w[2],
				   (uint64_t)w[5] << 32 | w[4], 0, 0 };
	// N S2 - S1^2 >= 0 (Cauchy-Schwarz); exact in 128 bits, as N S2 < 2^81
	u128 m = (u128)n * s.sum_sq - (u128)s.sum * s.sum;
	s.mean = (double)s.sum / (double)n;
	s.stddev = sqrt((double)m) / (double)n;
	return s;
}

static int stats_render(const void *params, const struct geom *in, const void *side,
			int index, struct stage_render *out)
{
	const struct stats_params *p = params;
	uint64_t n = (uint64_t)in->w * (uint64_t)in->h;
	// the header or JSON's head at most 80 bytes; a channel at most 200
	size_t cap = 96 + 200 * (size_t)in->ch, len = 0;
	char *t = malloc(cap);
	(void)index;
	memset(out, 0, sizeof *out);
	if (!t)
		return err_set("out of memory");
	if (p->json)
		len += (size_t)snprintf(t, cap, "{\"width\":%d,\"height\":%d,\"pixels\":%llu,"
					"\"channels\":[", in->w, in->h, (unsigned long long)n);
	else
		len += (size_t)snprintf(t, cap, "channel,min,max,mean,stddev,pixels,sum,sum_sq\n");
	for (int c = 0; c < in->ch; c++) {
		struct stats_channel s = stats_channel((const uint32_t *)side + c * STATS_WORDS, n);
		const char *name = histogram_channel_name(in->ch, c);
		if (p->json)
			len += (size_t)snprintf(t + len, cap - len,
						"%s{\"channel\":\"%s\",\"min\":%u,\"max\":%u,"
						"\"mean\":%.6f,\"stddev\":%.6f,\"sum\":%llu,"
						"\"sum_sq\":%llu}",
						c ? "," : "", name, s.min, s.max, s.mean, s.stddev,
						(unsigned long long)s.sum,
						(unsigned long long)s.sum_sq);
		else
			len += (size_t)snprintf(t + len, cap - len,
						"%s,%u,%u,%.6f,%.6f,%llu,%llu,%llu\n", name, s.min,
						s.max, s.mean, s.stddev, (unsigned long long)n,
						(unsigned long long)s.sum,
						(unsigned long long)s.sum_sq);
	}
	if (p->json)
		len += (size_t)snprintf(t + len, cap - len, "]}\n");
	out->text = t;
	out->len = len;
	return 0;
}

const struct stage_ops stage_stats = {
	.name = "stats",
	.usage = "stats[:DEST]",
	.summary = "per-channel min, max, mean and standard deviation as CSV or JSON; image "
		   "unchanged",
	.help =
		"Measures each channel at this point of the chain from exact integer sums. The\n"
		"image passes through unchanged, so the stage may stand anywhere, and a chain\n"
		"may hold several; its files are written only after the whole chain succeeded.\n"
		"\n"
		"Options:\n"
		"  DEST  where the numbers go: a file, or - for standard output (the default);\n"
		"        JSON when DEST ends in .json, else CSV\n"
		"\n"
		"Formula, over the N pixels of a channel, v each one's value:\n"
		"  min, max  the least and the largest v\n"
		"  sum = S v, sum_sq = S v^2   (exact integers)\n"
		"  mean = sum / N, stddev = sqrt(N sum_sq - sum^2) / N (population, numpy's\n"
		"  std); N sum_sq - sum^2 exact in 128 bits, then one double; 6 decimals\n"
		"  The CSV: a header line channel,min,max,mean,stddev,pixels,sum,sum_sq, then a\n"
		"  line a channel (grey | grey, alpha | red, green, blue | and alpha).\n"
		"\n"
		"Example:\n"
		"  climg in.png grey stats:levels.json -o out.png\n",
	.params_size = sizeof(struct stats_params),
	.parse = stats_parse,
	.plan = stats_plan,
	.program = "stats",
	.side_cpu = stats_side_cpu,
	.side_cl = stats_side_cl,
	.side_where = stats_side_where,
	.files = stats_files,
	.render = stats_render,
};
