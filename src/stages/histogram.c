// SPDX-License-Identifier: MIT
// histogram: count how many pixels have each value 0..255 in each channel, at this point of
// the chain; the image passes through unchanged (no copy on the device).
//
//   histogram[:DEST][:plot=FILE][:scale=linear|log][:alpha=yes|no]
//     DEST        the CSV destination: a file (written atomically) or - for standard
//                 output. Without DEST and without plot=, the CSV goes to standard output;
//                 with plot= alone, no CSV is written.
//     plot=FILE   also draw the histogram as an image, format by FILE's extension (- is
//                 standard output, as PNG); see src/stages/histogram_plot.c.
//     scale=log   the plot's vertical scale (linear by default).
//     alpha=yes   the plot draws the alpha channel too (by default it draws the colour
//                 channels only); the CSV always counts every channel.
//   An argument NAME=VALUE where NAME is only letters is an option; any other argument is
//   DEST (so ./a=b.csv is a file name, and a misspelt option is an error).
//
// Output size: the input's, unchanged (a passthrough). Border rule: none (every pixel is
// counted once). The side output is ch * 256 uint32 words, W x H the input size:
//   hist[c * 256 + v] = #{ (x, y) : in(x, y) channel c == v },  0 <= x < W, 0 <= y < H
// exact, since W * H <= 65535 * 65535 < 2^32. kernels/histogram.cl computes the same.
//
// CSV: a header "value,NAMES" (NAMES: grey | grey,alpha | red,green,blue |
// red,green,blue,alpha), then 256 rows "v,count,count..." for v = 0..255, zero bins
// included, each line ended by "\n".
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "../ocl.h"
#include "../suggest.h"
#include "histogram.h"
#include "stage.h"

struct histogram_params {
	const char *csv;  // the CSV destination ("-" = stdout), or NULL for none
	const char *plot; // the plot's destination, or NULL for none
	bool log_scale, scale_given;
	bool plot_alpha, alpha_given; // alpha=yes|no
};

const char *histogram_channel_name(int ch, int c)
{
	static const char *const names[4][4] = {
		{ "grey" },
		{ "grey", "alpha" },
		{ "red", "green", "blue" },
		{ "red", "green", "blue", "alpha" },
	};
	return names[ch - 1][c];
}

static int histogram_parse(void *params, int argc, char **argv)
{
	struct histogram_params *p = params;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '='), *k = a;
		if (!*a)
			return err_set("histogram: empty argument (use FILE.csv, -, plot=FILE, "
				       "scale=linear|log or alpha=yes|no)");
		while (eq && k < eq && ((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z')))
			k++;
		if (!eq || k != eq || eq == a) { // not NAME=VALUE: the CSV destination
			if (p->csv)
				return err_set("histogram: two CSV destinations, '%s' and '%s'",
					       p->csv, a);
			p->csv = a;
		} else if (!strncmp(a, "plot=", 5)) {
			if (p->plot)
				return err_set("histogram: plot= given twice");
			if (!eq[1])
				return err_set("histogram: plot= needs a file name, e.g. "
					       "plot=hist.png");
			p->plot = eq + 1;
		} else if (!strncmp(a, "scale=", 6)) {
			if (p->scale_given)
				return err_set("histogram: scale= given twice");
			if (strcmp(eq + 1, "linear") && strcmp(eq + 1, "log")) {
				static const char *const scales[] = { "linear", "log", NULL };
				err_set("histogram: scale must be linear or log, not '%s'", eq + 1);
				return suggest_err(suggest(eq + 1, scales));
			}
			p->log_scale = !strcmp(eq + 1, "log");
			p->scale_given = true;
		} else if (!strncmp(a, "alpha=", 6)) {
			if (p->alpha_given)
				return err_set("histogram: alpha= given twice");
			if (strcmp(eq + 1, "yes") && strcmp(eq + 1, "no"))
				return err_set("histogram: alpha must be yes or no, not '%s'",
					       eq + 1);
			p->plot_alpha = !strcmp(eq + 1, "yes");
			p->alpha_given = true;
		} else {
			static const char *const opts[] = { "plot=", "scale=", "alpha=", NULL };
			char name[SUGGEST_MAX_LEN + 2];
			snprintf(name, sizeof name, "%.*s", (int)(eq - a + 1), a);
			err_set("histogram: unknown option '%.*s' (use plot=FILE, scale=linear|log "
				"or alpha=yes|no)",
				(int)(eq - a + 1), a);
			return suggest_err(suggest(name, opts));
		}
	}
	if (p->scale_given && !p->plot)
		return err_set("histogram: scale= is for the plot; add plot=FILE");
	if (p->alpha_given && !p->plot)
		return err_set("histogram: alpha= is for the plot; add plot=FILE");
	if (!p->csv && !p->plot)
		p->csv = "-";
	return 0;
}

// The GPU kernels' work-groups add their counts into HIST_CL_COPIES copies of the histogram
// (group g into copy g % HIST_CL_COPIES), which the pipeline adds up after the download
// (stages/stage.h): with one copy every group's addition to a bin waits on the others' at
// the same word (docs/BENCHMARKS.md, "Kernel shapes"). The kernels for CPU devices use
// copy 0.
#define HIST_CL_COPIES 8
_Static_assert(HIST_CL_COPIES == HISTOGRAM_CL_COPIES, "histogram.h says how many copies");

static int histogram_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	(void)params;
	plan->out = *in;
	plan->passthrough = true;
	plan->side_bytes = (size_t)in->ch * 256 * sizeof(uint32_t);
	plan->side_copies = HIST_CL_COPIES;
	return 0;
}

static void histogram_side_cpu(const void *params, const struct img *in, void *side)
{
	uint32_t *hist = side;
	size_t n = (size_t)in->w * (size_t)in->h;
	const uint8_t *s = in->data;
	(void)params;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < in->ch; c++)
			hist[c * 256 + *s++]++;
}

// Device work sizes; see kernels/histogram.cl. Work-groups as large as the kernel may have
// on the device, up to HIST_WG_MAX items; HIST_ITEMS_PER_CU items per compute unit in all
// (on NVIDIA GPUs whose driver reports 256 as every kernel's limit, eight groups of 256
// fill a multiprocessor), but at least HIST_MIN_GROUP_BYTES of image per group so that
// the merge (ch * 256 global atomics per group) stays small.
#define HIST_WG_MAX 1024
#define HIST_ITEMS_PER_CU 2048
#define HIST_MIN_GROUP_BYTES ((size_t)256 * 16 * 16)
// The words between the first bins of two channels in the kernel's local sub-histogram;
// keep in step with HIST_STRIDE there
#define HIST_GPU_STRIDE 264

// The kernels for CPU devices count slices of at least HIST_CPU_MIN_SLICE bytes (a multiple
// of 48), about HIST_CPU_SLICES_PER_CU of them per compute unit, so that the cores stay busy
// to the end while the merge (ch * 256 atomics a slice) stays small.
#define HIST_CPU_MIN_SLICE ((size_t)48 * 1366) // 64 KiB, rounded up to a multiple of 48
#define HIST_CPU_SLICES_PER_CU 8
#define HIST_CPU_MAX_SLICE ((size_t)UINT32_MAX / 48 * 48)

static int histogram_cpu_cl(const struct stage_cl *c, const char *program)
{
	static const char *const kernel[] = { "histogram_cpu_1", "histogram_cpu_2",
					      "histogram_cpu_3", "histogram_cpu_4" };
	size_t bytes = geom_bytes(&c->gin), cu = ocl_get_limits(c->ocl).compute_units;
	size_t slice = (bytes / (cu * HIST_CPU_SLICES_PER_CU) + 47) / 48 * 48;
	if (slice < HIST_CPU_MIN_SLICE)
		slice = HIST_CPU_MIN_SLICE;
	if (slice > HIST_CPU_MAX_SLICE) // the kernel's argument is a uint
		slice = HIST_CPU_MAX_SLICE;
	return ocl_run(c->ocl, program, c->gin.ch, kernel[c->gin.ch - 1],
		       up_div(bytes, slice), 1, 1, 1,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_INT(c->gin.w), OCL_INT(c->gin.h),
					   OCL_BUF(c->side),
					   OCL_UINT(c->side_offset / sizeof(uint32_t)),
					   OCL_UINT(slice), OCL_END });
}

int histogram_count_cl(const struct stage_cl *c, const char *program)
{
	static const char *const kernel[] = { "histogram_1", "histogram_2", "histogram_3",
					      "histogram_4" };
	struct ocl_limits lim = ocl_get_limits(c->ocl);
	const char *name = kernel[c->gin.ch - 1];
	size_t bytes = geom_bytes(&c->gin), wg, groups, per_cu;
	if (ocl_cpu_kernels(c->ocl))
		return histogram_cpu_cl(c, program);
	if (ocl_kernel_wg_max(c->ocl, program, c->gin.ch, name, &wg) < 0)
		return -1;
	if (wg > HIST_WG_MAX)
		wg = HIST_WG_MAX;
	if (wg > lim.item_max[0])
		wg = lim.item_max[0];
	per_cu = wg < HIST_ITEMS_PER_CU ? HIST_ITEMS_PER_CU / wg : 1;
	groups = up_div(bytes, HIST_MIN_GROUP_BYTES);
	if (groups > (size_t)lim.compute_units * per_cu)
		groups = (size_t)lim.compute_units * per_cu;
	return ocl_run(c->ocl, program, c->gin.ch, name, groups * wg, 1, wg, 1,
		       (struct ocl_arg[]){ OCL_BUF(c->in), OCL_INT(c->gin.w), OCL_INT(c->gin.h),
					   OCL_BUF(c->side),
					   OCL_UINT(c->side_offset / sizeof(uint32_t)),
					   OCL_UINT(HIST_CL_COPIES),
					   OCL_LOCAL((size_t)c->gin.ch * HIST_GPU_STRIDE * sizeof(uint32_t)),
					   OCL_END });
}

static int histogram_side_cl(const void *params, const struct stage_cl *c)
{
	(void)params;
	return histogram_count_cl(c, "histogram");
}

static void histogram_side_where(const void *params, const struct geom *in, size_t i,
				 char *buf, size_t size)
{
	(void)params;
	snprintf(buf, size, "channel %zu (%s) value %zu", i / 256,
		 histogram_channel_name(in->ch, (int)(i / 256)), i % 256);
}

static int histogram_files(const void *params, struct stage_file *files)
{
	const struct histogram_params *p = params;
	int n = 0;
	if (p->csv)
		files[n++] = (struct stage_file){ p->csv, false };
	if (p->plot)
		files[n++] = (struct stage_file){ p->plot, true };
	return n;
}

// The CSV text described at the top of this file.
static int csv_render(const uint32_t *hist, int ch, struct stage_render *out)
{
	// header at most 27 bytes; a row at most "255" and ch times ",4294967295", "\n"
	size_t cap = 32 + 256 * (4 + 11 * (size_t)ch), len = 0;
	char *t = malloc(cap);
	int n;
	if (!t)
		return err_set("out of memory");
	len += (size_t)snprintf(t, cap, "value");
	for (int c = 0; c < ch; c++)
		len += (size_t)snprintf(t + len, cap - len, ",%s", histogram_channel_name(ch, c));
	t[len++] = '\n';
	for (int v = 0; v < 256; v++) {
		len += (size_t)snprintf(t + len, cap - len, "%d", v);
		for (int c = 0; c < ch; c++) {
			n = snprintf(t + len, cap - len, ",%lu", (unsigned long)hist[c * 256 + v]);
			len += (size_t)n;
		}
		t[len++] = '\n';
	}
	out->text = t;
	out->len = len;
	return 0;
}

static int histogram_render(const void *params, const struct geom *in, const void *side,
			    int index, struct stage_render *out)
{
	const struct histogram_params *p = params;
	memset(out, 0, sizeof *out);
	if (p->csv && index == 0)
		return csv_render(side, in->ch, out);
	return histogram_plot(side, in->ch, p->log_scale, p->plot_alpha, &out->im);
}

const struct stage_ops stage_histogram = {
	.name = "histogram",
	.usage = "histogram[:DEST][:plot=FILE][:scale=linear|log][:alpha=yes|no]",
	.summary = "per-channel counts of each value 0..255 as CSV (and a plot); image unchanged",
	.help =
		"Counts how many pixels have each value 0..255 in each channel at this point of\n"
		"the chain. The image passes through unchanged, so the stage may stand anywhere,\n"
		"and a chain may hold several; its files are written only after the whole chain\n"
		"succeeded.\n"
		"\n"
		"Options (any order, each at most once):\n"
		"  DEST        where the CSV goes: a file, or - for standard output (the default\n"
		"              unless plot= is given)\n"
		"  plot=FILE   also draw the counts: a 536x300 RGB picture with axis labels and\n"
		"              a legend, format by FILE's extension\n"
		"  scale=linear|log\n"
		"              the picture's count axis: linear (the default) or, with\n"
		"              scale=log, logarithmic; only with plot=\n"
		"  alpha=yes|no\n"
		"              alpha=yes draws the alpha channel's curve too; by default\n"
		"              (alpha=no) the plot leaves it out, the CSV never does; only\n"
		"              with plot=\n"
		"  An option is NAME=VALUE with NAME letters only; any other argument is DEST\n"
		"  (write ./a=b.csv for a file of that name).\n"
		"\n"
		"Formula:\n"
		"  hist(c, v) = the number of pixels whose channel c equals v, exact integers\n"
		"  The CSV: a header line (value,grey | value,grey,alpha | value,red,green,blue |\n"
		"  value,red,green,blue,alpha), then 256 lines v,count,... for v = 0..255.\n"
		"\n"
		"Example:\n"
		"  climg in.png histogram:counts.csv:plot=counts.png -o out.png\n",
	.params_size = sizeof(struct histogram_params),
	.parse = histogram_parse,
	.plan = histogram_plan,
	.program = "histogram",
	.side_cpu = histogram_side_cpu,
	.side_cl = histogram_side_cl,
	.side_where = histogram_side_where,
	.files = histogram_files,
	.render = histogram_render,
};
