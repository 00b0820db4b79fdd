// SPDX-License-Identifier: MIT
// convolve's OpenCL path: which kernel of kernels/convolve.cl runs an image, in what shape.
// All of them give the CPU path's bytes (the FIXED-POINT CONTRACT of src/stages/convolve.c);
// they differ in speed only. In order of preference:
//   3 x 3 kernels whose 32-bit sums are exact     convolve_3x3 and its packed forms (run_3x3)
//   separable, on CPU devices, radius <= 32       convolve_sep_cpu (run_sep_cpu)
//   separable, where a strip fits local memory    convolve_sep_strip (run_strip)
//   not separable, where a tile fits              convolve_2d_tile (run_tile)
//   separable, otherwise                          convolve_sep_h then _sep_v (run_two_pass)
//   not separable, otherwise                      convolve_2d
//
// Test-only hooks (not user options): CLIMG_CONVOLVE_PATH=cpu makes convolve_run_cl take
// convolve_sep_cpu where it applies, on CPU devices with the CPU kernels only (other programs
// lack it); elsewhere it acts as =tile. CLIMG_CONVOLVE_PATH=global makes it take the
// paths that use no local memory other than the 3 x 3 word path, =tile the local-memory
// paths (strips, tiles) where they fit (any non-empty value keeps the 3 x 3 word path out);
// CLIMG_CONVOLVE_STRIP=N caps the rows of one strip of the two-pass path and of the strip
// kernel, so tests reach several strips on small images.
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "../ocl.h"
#include "../parse.h"
#include "convolve_impl.h"

// kernels/convolve_cpu.clh's tile of convolve_sep_cpu_cN (CPU devices): samples, rows, and the
// largest radius its private arrays hold; keep in step with SEP_CPU_TW, _TH, _MAX_R there
#define SEP_CPU_TW 64
#define SEP_CPU_TH 128
#define SEP_CPU_MAX_R 32
// convolve_3x3's samples and rows a work-item, and convolve_3x3_packed's; keep in step with
// D3_SAMPLES, D3_ROWS (kernels/convolve_3x3.clh), D3P_SAMPLES and D3P_ROWS
// (kernels/convolve_3x3_packed.clh)
#define D3_SAMPLES 8
#define D3_ROWS(ch) ((ch) == 1 ? 2 : 4)
#define D3P_SAMPLES(ch) ((ch) == 1 ? 8 : 16)
#define D3P_ROWS 4

// __local bytes a tile may use: at most 47 KiB (occupancy; and NVIDIA reports exactly
// 48 KiB), and 1 KiB less than the device has, for drivers that keep some for themselves.
#define LOCAL_BUDGET (47 << 10)
#define LOCAL_RESERVE 1024
#define SCRATCH_CAP ((uint64_t)512 << 20)
// The work-group the kernels that take any shape ask for: 64 x 4 (rows of consecutive
// samples: coalesced); convolve_3x3 16 x 8, measured faster than ocl_run's own 16 x 16 on
// GPUs and CPU devices alike.
#define LOCAL_W 64
#define LOCAL_H 4
#define D3_LOCAL_W 16
#define D3_LOCAL_H 8
#define D3_EDGE_LOCAL 64 // convolve_3x3_edge_cN's work-group: 64 units

// The kernels, one for each channel count (kernel_names[kind][ch - 1]), by their literal
// names. The 3 x 3 forms come in the order run_3x3 indexes them: K_3X3 + form, and
// K_3X3_UNALIGNED + form for rows that do not start on a word (1 to 3 channels: rows of 4
// channels always do, so those have no 4-channel kernel).
enum kernel_kind {
	K_SEP_STRIP,
	K_2D_TILE,
	K_SEP_H,
	K_SEP_V,
	K_2D,
	K_SEP_CPU,
	K_3X3_EDGE,
	K_3X3,
	K_3X3_PACKED,
	K_3X3_PACKED_NORM,
	K_3X3_PACKED_SEP,
	K_3X3_PACKED_NORM_SEP,
	K_3X3_UNALIGNED,
	K_3X3_PACKED_UNALIGNED,
	K_3X3_PACKED_NORM_UNALIGNED,
	K_3X3_PACKED_SEP_UNALIGNED,
	K_3X3_PACKED_NORM_SEP_UNALIGNED,
	NKERNELS
};
static const char *const kernel_names[NKERNELS][4] = {
	[K_SEP_STRIP] = {
		"convolve_sep_strip_c1", "convolve_sep_strip_c2",
		"convolve_sep_strip_c3", "convolve_sep_strip_c4",
	},
	[K_2D_TILE] = {
		"convolve_2d_tile_c1", "convolve_2d_tile_c2",
		"convolve_2d_tile_c3", "convolve_2d_tile_c4",
	},
	[K_SEP_H] = {
		"convolve_sep_h_c1", "convolve_sep_h_c2",
		"convolve_sep_h_c3", "convolve_sep_h_c4",
	},
	[K_SEP_V] = {
		"convolve_sep_v_c1", "convolve_sep_v_c2",
		"convolve_sep_v_c3", "convolve_sep_v_c4",
	},
	[K_2D] = {"convolve_2d_c1", "convolve_2d_c2", "convolve_2d_c3", "convolve_2d_c4"},
	[K_SEP_CPU] = {
		"convolve_sep_cpu_c1", "convolve_sep_cpu_c2",
		"convolve_sep_cpu_c3", "convolve_sep_cpu_c4",
	},
	[K_3X3_EDGE] = {
		"convolve_3x3_edge_c1", "convolve_3x3_edge_c2",
		"convolve_3x3_edge_c3", "convolve_3x3_edge_c4",
	},
	[K_3X3] = {"convolve_3x3_c1", "convolve_3x3_c2", "convolve_3x3_c3", "convolve_3x3_c4"},
	[K_3X3_PACKED] = {
		"convolve_3x3_packed_c1", "convolve_3x3_packed_c2",
		"convolve_3x3_packed_c3", "convolve_3x3_packed_c4",
	},
	[K_3X3_PACKED_NORM] = {
		"convolve_3x3_packed_norm_c1", "convolve_3x3_packed_norm_c2",
		"convolve_3x3_packed_norm_c3", "convolve_3x3_packed_norm_c4",
	},
	[K_3X3_PACKED_SEP] = {
		"convolve_3x3_packed_sep_c1", "convolve_3x3_packed_sep_c2",
		"convolve_3x3_packed_sep_c3", "convolve_3x3_packed_sep_c4",
	},
	[K_3X3_PACKED_NORM_SEP] = {
		"convolve_3x3_packed_norm_sep_c1",
		"convolve_3x3_packed_norm_sep_c2",
		"convolve_3x3_packed_norm_sep_c3",
		"convolve_3x3_packed_norm_sep_c4",
	},
	[K_3X3_UNALIGNED] = {
		"convolve_3x3_unaligned_c1", "convolve_3x3_unaligned_c2",
		"convolve_3x3_unaligned_c3", NULL,
	},
	[K_3X3_PACKED_UNALIGNED] = {
		"convolve_3x3_packed_unaligned_c1",
		"convolve_3x3_packed_unaligned_c2",
		"convolve_3x3_packed_unaligned_c3",
		NULL,
	},
	[K_3X3_PACKED_NORM_UNALIGNED] = {
		"convolve_3x3_packed_norm_unaligned_c1",
		"convolve_3x3_packed_norm_unaligned_c2",
		"convolve_3x3_packed_norm_unaligned_c3",
		NULL,
	},
	[K_3X3_PACKED_SEP_UNALIGNED] = {
		"convolve_3x3_packed_sep_unaligned_c1",
		"convolve_3x3_packed_sep_unaligned_c2",
		"convolve_3x3_packed_sep_unaligned_c3",
		NULL,
	},
	[K_3X3_PACKED_NORM_SEP_UNALIGNED] = {
		"convolve_3x3_packed_norm_sep_unaligned_c1",
		"convolve_3x3_packed_norm_sep_unaligned_c2",
		"convolve_3x3_packed_norm_sep_unaligned_c3",
		NULL,
	},
};

static const char *kernel_name(enum kernel_kind kind, int ch)
{
	return kernel_names[kind][ch - 1];
}

// __local bytes of a tile of the 2-D kernel, TW x TH output pixels: the input tile with its
// halo, then the weights.
static size_t tile_bytes_2d(const struct convolve_params *p, int tw, int th, int ch)
{
	size_t rh = (size_t)th + 2 * p->r, rw = (size_t)tw + 2 * p->r;
	return rh * rw * ch + 4 * (size_t)p->n * p->n;
}

// The __local bytes a work-group may use: LOCAL_BUDGET, or LOCAL_RESERVE less than the device
// has.
static uint64_t local_budget(const struct ocl_limits *lim)
{
	const uint64_t avail =
	    lim->local_mem_bytes > LOCAL_RESERVE ? lim->local_mem_bytes - LOCAL_RESERVE : 0;
	return avail < LOCAL_BUDGET ? avail : LOCAL_BUDGET;
}

// The rows of one strip of CLIMG_CONVOLVE_STRIP (a test hook), or 0 where it is unset.
static long strip_hook(void)
{
	const char *env = getenv("CLIMG_CONVOLVE_STRIP");
	long v = 0;
	return env && parse_long(env, 1, INT_MAX, &v) ? v : 0;
}

// The shape of a run of the separable strip kernel (kernels/convolve_local.clh, sep_strip).
struct strip {
	int tws, sh, cr;     // samples and rows a strip, rows a chunk (the ring: cr + 2r rows)
	size_t lx, ly;       // the work-group: tws / 8 items a row, ly rows of items
	size_t tile, mid;    // __local bytes: the chunk's input rows, the ring
};

// Picks the strip kernel's shape, or returns false (use the two-pass path) where no shape
// fits the local memory and the work-group limits. Preferred in order: strips of 128
// samples, then 64, 32 (wider strips load less halo a sample); chunks of 2 rows an
// item-row of the work-group, then of 1 (a chunk is a barrier's worth of work). Strips are
// 128 rows, or 8r where more: the 2r rows that start a strip are summed horizontally twice
// (for it and the strip above), at most a quarter more.
static bool strip_pick(const struct convolve_params *p, const struct ocl_limits *lim,
                       size_t wg_max, int ch, struct strip *st)
{
	static const int tws_list[] = {128, 64, 32};
	const uint64_t budget = local_budget(lim);
	const size_t rc = (size_t)p->r * ch, pad = (16 - rc % 16) % 16;
	const long hook = strip_hook();
	for (size_t i = 0; i < sizeof tws_list / sizeof tws_list[0]; i++) {
		const int tws = tws_list[i];
		size_t lx = (size_t)tws / 8, ly = 256 / lx < 32 ? 256 / lx : 32;
		if (lx > wg_max || lx > lim->item_max[0])
			continue;
		while (ly > 1 && (lx * ly > wg_max || ly > lim->item_max[1]))
			ly /= 2;
		const size_t l4 = (pad + tws + 2 * rc + ch + 15) / 16; // vectors a tile row
		for (int per = 2; per >= 1; per--) {
			const size_t cr = per * ly, nr = cr + 2 * (size_t)p->r;
			// a tile row is l4 vectors and a word (sep_strip says why)
			const size_t tile = cr * (16 * l4 + 4), mid = 4 * nr * tws;
			if (tile + mid + 8 * (size_t)p->n > budget)
				continue;
			st->tws = tws;
			st->cr = (int)cr;
			st->sh = 8 * p->r > 128 ? 8 * p->r : 128;
			if (hook)
				st->sh = (int)hook;
			st->lx = lx;
			st->ly = ly;
			st->tile = tile;
			st->mid = mid;
			return true;
		}
	}
	return false;
}

// Whether the separable kernels (sep_strip, sep_cpu) may add the two samples that share a
// weight before multiplying: kx and ky symmetric, and the sum of two first-pass values
// (each at most 255 sum|kx|) within int32.
static bool sep_sym(const struct convolve_params *p)
{
	const int n = p->n;
	for (int i = 0; i < n / 2; i++)
		if (p->w[i] != p->w[n - 1 - i] || p->w[n + i] != p->w[2 * n - 1 - i])
			return false;
	return 2 * 255 * convolve_abs_sum(p->w, n) <= INT32_BOUND;
}

// A separable kernel through convolve_sep_strip_cN in the shape st.
static int run_strip(const struct convolve_params *p, const struct stage_cl *c,
                     struct ocl_buf *wbuf, const char *kernel, const struct strip *st)
{
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch;
	const size_t gx = up_div((size_t)W * ch, (size_t)st->tws) * st->lx;
	const size_t gy = up_div((size_t)H, (size_t)st->sh) * st->ly;
	return ocl_run(c->ocl, "convolve", ch, kernel, gx, gy, st->lx, st->ly,
	               (struct ocl_arg[]){
	                   OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(W), OCL_INT(H), OCL_BUF(wbuf),
	                   OCL_INT(p->r), OCL_INT(p->border), OCL_LONG(p->off), OCL_LONG(p->D),
	                   OCL_LONG(p->dev_m), OCL_INT(p->dev_s), OCL_INT(st->tws),
	                   OCL_INT(st->sh), OCL_INT(st->cr), OCL_INT(sep_sym(p)),
	                   OCL_LOCAL(st->tile), OCL_LOCAL(st->mid),
	                   OCL_LOCAL(8 * (size_t)p->n), OCL_END});
}

// Picks the 2-D kernel's output tile, TW x TH pixels, the first that fits the local
// memory, or returns false (use the global path).
static bool tile_pick(const struct convolve_params *p, const struct ocl_limits *lim, int ch,
                      int *tw, int *th)
{
	static const int d2[][2] = {{64, 16}, {32, 16}, {32, 8}, {16, 8}, {16, 4}, {8, 4}};
	const uint64_t budget = local_budget(lim);
	for (size_t i = 0; i < sizeof d2 / sizeof d2[0]; i++)
		if (tile_bytes_2d(p, d2[i][0], d2[i][1], ch) <= budget) {
			*tw = d2[i][0];
			*th = d2[i][1];
			return true;
		}
	return false;
}

// A kernel that is not separable through convolve_2d_tile_cN, tw x th pixels a tile.
static int run_tile(const struct convolve_params *p, const struct stage_cl *c, struct ocl_buf *wbuf,
                    const char *kernel, int tw, int th, const struct ocl_limits *lim, size_t wg_max)
{
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch, r = p->r, n = p->n;
	const size_t rh = (size_t)th + 2 * r, rw = (size_t)tw + 2 * r;
	size_t lx, ly;
	ocl_local_shrink(lim, wg_max, LOCAL_W, LOCAL_H, &lx, &ly);
	return ocl_run(c->ocl, "convolve", ch, kernel, up_div((size_t)W, (size_t)tw) * lx,
	               up_div((size_t)H, (size_t)th) * ly, lx, ly,
	               (struct ocl_arg[]){
	                   OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(W), OCL_INT(H), OCL_BUF(wbuf),
	                   OCL_INT(r), OCL_INT(p->border), OCL_LONG(p->off), OCL_LONG(p->D),
	                   OCL_LONG(p->dev_m), OCL_INT(p->dev_s), OCL_INT(tw), OCL_INT(th),
	                   OCL_LOCAL(rh * rw * ch), OCL_LOCAL(4 * (size_t)n * n), OCL_END});
}

// The separable kernel without local memory: a horizontal pass into an int32 scratch buffer
// and a vertical pass from it, strip by strip of rows so that the scratch stays bounded.
static int run_two_pass(const struct convolve_params *p, const struct stage_cl *c,
                        struct ocl_buf *wbuf, const struct ocl_limits *lim)
{
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch, r = p->r;
	const uint64_t row_bytes = (uint64_t)W * ch * 4;
	uint64_t cap = lim->max_alloc_bytes < SCRATCH_CAP ? lim->max_alloc_bytes : SCRATCH_CAP;
	const long strip = strip_hook();
	struct ocl_buf *scratch = NULL;
	size_t wh, wv;
	const char *kh = kernel_name(K_SEP_H, ch), *kv = kernel_name(K_SEP_V, ch);
	long rows_max = (long)(cap / row_bytes) - 2 * r;
	size_t lx, ly;
	int rc = -1;

	if (strip && strip < rows_max)
		rows_max = strip;
	if (rows_max < 1)
		return err_set("a %s kernel on an image %d pixels wide needs %llu bytes of scratch "
		               "memory; the device allows %llu",
		               p->what, W, (unsigned long long)((2 * r + 1) * row_bytes),
		               (unsigned long long)cap);
	if (rows_max > H)
		rows_max = H;
	if (ocl_kernel_wg_max(c->ocl, "convolve", ch, kh, &wh) < 0 ||
	    ocl_kernel_wg_max(c->ocl, "convolve", ch, kv, &wv) < 0)
		return -1;
	ocl_local_shrink(lim, wh < wv ? wh : wv, LOCAL_W, LOCAL_H, &lx, &ly);
	scratch = ocl_buf_new(c->ocl, (size_t)((rows_max + 2 * r) * row_bytes));
	if (!scratch)
		return -1;
	for (int y0 = 0; y0 < H; y0 += (int)rows_max) {
		int rows = H - y0 < rows_max ? H - y0 : (int)rows_max;
		if (ocl_run(c->ocl, "convolve", ch, kh, (size_t)W * ch, (size_t)rows + 2 * r, lx,
		            ly,
		            (struct ocl_arg[]){OCL_BUF(c->in), OCL_BUF(scratch), OCL_INT(W),
		                               OCL_INT(H), OCL_BUF(wbuf), OCL_INT(r),
		                               OCL_INT(p->border), OCL_INT(y0 - r),
		                               OCL_INT(rows + 2 * r), OCL_END}) < 0 ||
		    ocl_run(c->ocl, "convolve", ch, kv, (size_t)W * ch, (size_t)rows, lx, ly,
		            (struct ocl_arg[]){OCL_BUF(c->in), OCL_BUF(scratch), OCL_BUF(c->out),
		                               OCL_INT(W), OCL_INT(H), OCL_BUF(wbuf), OCL_INT(r),
		                               OCL_INT(y0), OCL_INT(rows), OCL_LONG(p->off),
		                               OCL_LONG(p->D), OCL_LONG(p->dev_m),
		                               OCL_INT(p->dev_s), OCL_END}) < 0)
			goto done;
	}
	rc = 0;
done:
	ocl_buf_free(scratch); // released by OpenCL once the queued kernels are done with it
	return rc;
}

// Whether convolve_3x3_cN (or its _unaligned form) takes the image: a 3 x 3 kernel, no
// CLIMG_CONVOLVE_PATH test hook, and the kernel's 32-bit arithmetic exact: the 2-D sum
// with the offset, 255 sum|k| + |off| <= 2^31 - 1 (for a separable kernel k = ky kx, so
// sum|k| = sum|ky| sum|kx|), and a D that finish32 divides by (s32 >= 0).
static bool words_3x3(const struct convolve_params *p)
{
	const char *force = getenv("CLIMG_CONVOLVE_PATH");
	int64_t sum;
	if (p->n != 3 || (force && *force) || p->s32 < 0)
		return false;
	// no overflow: bounds_ok holds, so 255 sum|kx| and 255 sum|ky| are below 2^31, and
	// |off| <= |B| + D / 2 is below 2^62
	sum = p->separable ? convolve_abs_sum(p->w, 3) * convolve_abs_sum(p->w + 3, 3)
	                   : convolve_abs_sum(p->w, 9);
	return 255 * sum <= INT32_BOUND - llabs(p->off);
}

// The interior of a 3 x 3 kernel's items (NS samples of NR rows each, at samples g = NS i
// and rows y0 = NR j): the samples gA .. gB - 1 and rows yA .. yB - 1 of the items whose
// input rows (y0 - 1 .. y0 + NR) and words (samples g - 4 .. g + NS + 3, and with unaligned
// rows one word more, which d3_load may read) lie inside the image; all four 0 where there
// is none. The kernels' edge items compute the rest, or, for the _unaligned kernels and the
// CPU family's, convolve_3x3_edge_cN, in units of 8 samples and 2 rows: the number of those
// units, for its range, in *units.
struct d3_rect {
	int ga, gb, ya, yb;
};

static struct d3_rect d3_interior(int64_t ns, int h, int nsamples, int nrows, bool unaligned,
                                  size_t *units)
{
	const int64_t right = nsamples + (unaligned ? 8 : 4); // g + right <= ns
	struct d3_rect r = {0, 0, 0, 0};
	const int64_t ux = (ns + 7) / 8;
	if (ns >= nsamples + right && h > 2 * nrows) {
		// g >= 4: from the second item on; y0 >= 1 and y0 + nrows < h
		r.ga = nsamples;
		r.gb = (int)(((ns - right) / nsamples + 1) * nsamples);
		r.ya = nrows;
		r.yb = (int)(((h - nrows - 1) / nrows + 1) * nrows);
	}
	*units = (size_t)((r.ya / 2 + (h - r.yb + 1) / 2) * ux +
	                  (r.yb - r.ya) / 2 * (r.ga / 8 + ux - r.gb / 8));
	return r;
}

// Any 3 x 3 kernel through convolve_3x3_cN (kernels/convolve_3x3.clh): D3_SAMPLES samples of
// D3_ROWS(ch) rows a work-item; with the GPU kernels (ocl_cpu_kernels false), where its
// integers exist (packed_setup), through convolve_3x3_packed_cN, or convolve_3x3_packed_norm_cN
// where pn is set: D3P_SAMPLES(ch) samples of D3P_ROWS rows; those two as their _sep forms
// where the kernel is separable, which also take kx and ky. Each as its _unaligned form
// where rows do not start on a word (W * ch not a multiple of 4). Those and the CPU family
// leave the edge items to convolve_3x3_edge_cN (D3_OWN_EDGES in kernels/convolve.cl says
// why). The CPU family keeps convolve_3x3: on CPU devices the packed kernels are slower.
static int run_3x3(const struct convolve_params *p, const struct stage_cl *c,
                   const struct ocl_limits *lim)
{
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch;
	const bool packed = p->ps >= 0 && !ocl_cpu_kernels(c->ocl), norm = packed && p->pn;
	const bool sep = packed && p->separable, unaligned = ((int64_t)W * ch) % 4 != 0;
	const bool own_edges = !unaligned && !ocl_cpu_kernels(c->ocl); // D3_OWN_EDGES
	const int nsamples = packed ? D3P_SAMPLES(ch) : D3_SAMPLES;
	const int nrows = packed ? D3P_ROWS : D3_ROWS(ch);
	size_t units;
	const struct d3_rect r = d3_interior((int64_t)W * ch, H, nsamples, nrows, unaligned, &units);
	// K_3X3 + form: plain, packed, packed_norm, packed_sep, packed_norm_sep
	const int form = !packed ? 0 : (norm ? 2 : 1) + (sep ? 2 : 0);
	const char *kernel = kernel_name((unaligned ? K_3X3_UNALIGNED : K_3X3) + form, ch);
	int32_t k[9];
	size_t wg, lx, ly;
	int n = 0;
	// the weights go as arguments: no buffer to create and free for each run. At most: the
	// buffers and size (4), the 9 weights, border, off, m32, s32 (4), the packed kernel's 3,
	// kx and ky (6), the interior (4), the end
	struct ocl_arg args[4 + 9 + 4 + 3 + 6 + 4 + 1];
	convolve_weights_3x3(p, k);
	if (ocl_kernel_wg_max(c->ocl, "convolve", ch, kernel, &wg) < 0)
		return -1;
	// at most D3_LOCAL_W x D3_LOCAL_H items: the _unaligned kernels' local memory (D3_LOCAL)
	ocl_local_shrink(lim, wg, D3_LOCAL_W, D3_LOCAL_H, &lx, &ly);
	args[n++] = OCL_BUF(c->in);
	args[n++] = OCL_BUF(c->out);
	args[n++] = OCL_INT(W);
	args[n++] = OCL_INT(H);
	for (int i = 0; i < 9; i++)
		args[n++] = OCL_INT(k[i]);
	args[n++] = OCL_INT(p->border);
	args[n++] = OCL_INT(p->off);
	args[n++] = OCL_UINT(p->m32);
	args[n++] = OCL_INT(p->s32);
	if (norm) { // and the packed kernels' own: norm's one, the other's three
		args[n++] = OCL_UINT(p->pn);
	} else if (packed) {
		args[n++] = OCL_UINT(p->pz);
		args[n++] = OCL_UINT(p->pm);
		args[n++] = OCL_INT(p->ps);
	}
	for (int i = 0; sep && i < 6; i++) // kx, then ky
		args[n++] = OCL_INT(p->w[i]);
	args[n++] = OCL_INT(r.ga);
	args[n++] = OCL_INT(r.gb);
	args[n++] = OCL_INT(r.ya);
	args[n++] = OCL_INT(r.yb);
	args[n] = OCL_END;
	// (without own edge items and without an interior, nothing for this kernel to do)
	if ((own_edges || r.gb > r.ga) &&
	    ocl_run(c->ocl, "convolve", ch, kernel, up_div((size_t)W * ch, nsamples),
	            up_div((size_t)H, nrows), lx, ly, args) < 0)
		return -1;
	if (own_edges)
		return 0;
	// the edge items: the same buffers, size, 9 weights, border, off, m32 and s32, then the
	// interior
	n = 4 + 9 + 4;
	args[n++] = OCL_INT(r.ga);
	args[n++] = OCL_INT(r.gb);
	args[n++] = OCL_INT(r.ya);
	args[n++] = OCL_INT(r.yb);
	args[n] = OCL_END;
	kernel = kernel_name(K_3X3_EDGE, ch);
	if (ocl_kernel_wg_max(c->ocl, "convolve", ch, kernel, &wg) < 0)
		return -1;
	ocl_local_shrink(lim, wg, D3_EDGE_LOCAL, 1, &lx, &ly);
	return ocl_run(c->ocl, "convolve", ch, kernel, units, 1, lx, ly, args);
}

// Whether convolve_sep_cpu_cN takes the image: a separable kernel of radius at most
// SEP_CPU_MAX_R with the stages' CPU kernels (ocl_cpu_kernels) on a CPU device, the only
// programs that have it (src/ocl/program.c); the test hook CLIMG_CONVOLVE_PATH keeps it out
// unless it is "cpu".
static bool sep_cpu(const struct convolve_params *p, const struct stage_cl *c)
{
	const char *force = getenv("CLIMG_CONVOLVE_PATH");
	if (!p->separable || p->r > SEP_CPU_MAX_R || !ocl_cpu_device(c->ocl) ||
	    !ocl_cpu_kernels(c->ocl))
		return false;
	return !force || !*force || !strcmp(force, "cpu");
}

// A separable kernel through convolve_sep_cpu_cN (kernels/convolve_cpu.clh): one work-item, in a
// work-group of its own, per tile of SEP_CPU_TW samples x SEP_CPU_TH rows.
static int run_sep_cpu(const struct convolve_params *p, const struct stage_cl *c,
                       struct ocl_buf *wbuf)
{
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch;
	return ocl_run(c->ocl, "convolve", ch, kernel_name(K_SEP_CPU, ch),
	               up_div((size_t)W * ch, SEP_CPU_TW), up_div((size_t)H, SEP_CPU_TH), 1, 1,
	               (struct ocl_arg[]){OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(W), OCL_INT(H),
	                                  OCL_BUF(wbuf), OCL_INT(p->r), OCL_INT(p->border),
	                                  OCL_LONG(p->off), OCL_LONG(p->D), OCL_LONG(p->dev_m),
	                                  OCL_INT(p->dev_s), OCL_INT(sep_sym(p)), OCL_END});
}

int convolve_run_cl(const void *params, const struct stage_cl *c)
{
	const struct convolve_params *p = params;
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch;
	const size_t nw = p->separable ? 2 * (size_t)p->n : (size_t)p->n * p->n;
	struct ocl_buf *wbuf = NULL;
	const struct ocl_limits lim = ocl_get_limits(c->ocl);
	const char *force = getenv("CLIMG_CONVOLVE_PATH");
	const bool local_off = force && !strcmp(force, "global"); // the test hook
	struct strip st;
	size_t wg;
	const char *kernel = kernel_name(p->separable ? K_SEP_STRIP : K_2D_TILE, ch);
	int tw, th, rc = -1;

	if (words_3x3(p))
		return run_3x3(p, c, &lim);
	wbuf = ocl_buf_const(c->ocl, p->w, nw * sizeof *p->w);
	if (!wbuf)
		return -1;
	if (sep_cpu(p, c)) {
		rc = run_sep_cpu(p, c, wbuf);
		goto done;
	}
	// the strip or tile kernel's work-group limit, which strip_pick and tile_pick need (the
	// CPU kernel above does not: it runs work-groups of one)
	if (ocl_kernel_wg_max(c->ocl, "convolve", ch, kernel, &wg) < 0)
		goto done;
	if (p->separable && !local_off && strip_pick(p, &lim, wg, ch, &st)) {
		rc = run_strip(p, c, wbuf, kernel, &st);
	} else if (!p->separable && !local_off && tile_pick(p, &lim, ch, &tw, &th)) {
		rc = run_tile(p, c, wbuf, kernel, tw, th, &lim, wg);
	} else if (p->separable) {
		rc = run_two_pass(p, c, wbuf, &lim);
	} else {
		size_t lx, ly;
		kernel = kernel_name(K_2D, ch);
		if (ocl_kernel_wg_max(c->ocl, "convolve", ch, kernel, &wg) < 0)
			goto done;
		ocl_local_shrink(&lim, wg, LOCAL_W, LOCAL_H, &lx, &ly);
		rc = ocl_run(c->ocl, "convolve", ch, kernel, (size_t)W * ch, (size_t)H, lx, ly,
		             (struct ocl_arg[]){
		                 OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(W), OCL_INT(H),
		                 OCL_BUF(wbuf), OCL_INT(p->r), OCL_INT(p->border), OCL_LONG(p->off),
		                 OCL_LONG(p->D), OCL_LONG(p->dev_m), OCL_INT(p->dev_s), OCL_END});
	}
done:
	ocl_buf_free(wbuf); // released by OpenCL once the queued kernels are done with it
	return rc;
}
