// SPDX-License-Identifier: MIT
// resize: scale the image to a new size, separably (along rows, then along columns).
//
//   resize:SIZE[:fit][:FILTER]
//     SIZE     WxH (exactly), W or Wx (the width; the height keeps the aspect ratio), xH
//              (the height), P% (both sides times P / 100, P > 0, decimals allowed). A
//              derived side is round(H W / Win) (halves up; P%: round(Win P / 100)), at
//              least 1.
//     fit      with WxH: the largest size inside W x H that keeps the aspect ratio (as
//              vipsthumbnail): W x round(Hin W / Win) where W Hin <= H Win, else
//              round(Win H / Hin) x H.
//     FILTER   nearest (OpenCV INTER_NEAREST_EXACT, byte for byte), bilinear
//              (INTER_LINEAR_EXACT, byte for byte), area (INTER_AREA, within 1: box
//              averages when shrinking on both sides, else bilinear), cubic and lanczos
//              (Pillow's BICUBIC and LANCZOS, byte for byte). Default: lanczos where
//              neither side grows, else cubic. The same size passes the image through.
//
// Weights: src/stages/resize_tables.c. Pass 1 makes each output column of every input row
// from the taps along the row, pass 2 each output pixel from the taps down the column of
// pass 1's values; each rounds as resize_round_for says (bilinear keeps pass 1's 16 bits,
// as OpenCV; the others round to 8 bits in between, as Pillow); on a GPU one kernel does
// both for each output where the taps are few (resize_fused_suits). Alpha (the last
// channel of 2 and 4): nearest, bilinear and area treat it as any channel (as OpenCV); cubic
// and lanczos work on premultiplied colour, as Pillow's resize (RGBA through RGBa): before,
// c' = (t + (t >> 8)) >> 8 with t = c a + 128; after, with the result's alpha a, c =
// min(255, 255 c' / a) (integer division) unless a is 0 or 255.
// Output size: as above; the sides and --max-pixels are checked when the chain is planned.
// kernels/resize.cl computes the same.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "../img.h"
#include "../ocl.h"
#include "../par.h"
#include "../parse.h"
#include "../suggest.h"
#include "resize.h"
#include "stage.h"

// The tables of one planned geometry: plan makes them (the plan's priv), the runs of that
// plan read them, free_plan frees them.
struct resize_tables {
	struct resize_axis x, y;
	struct resize_blocks xb, yb; // their blocked forms, for the kernels (not nearest,
				     // neither side growing, more taps than resize_taps_few
				     // takes: resize_blocked_suits), else zeros
	enum resize_filter filter; // as run: never RESIZE_DEFAULT
	struct geom in, out;
};

struct resize_params {
	long w, h;      // 0 where derived
	double percent; // > 0 for P%
	bool fit;
	enum resize_filter filter;
};

static int resize_size(const char *s, struct resize_params *p)
{
	size_t n = strlen(s);
	char buf[32];
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n + 1);
	if (buf[n - 1] == '%') {
		buf[n - 1] = 0;
		return parse_double(buf, &p->percent) && p->percent > 0 && p->percent <= 1e6 ? 0 : -1;
	}
	char *x = strchr(buf, 'x');
	if (x)
		*x = 0;
	if (*buf && !parse_long(buf, 1, IMG_MAX_SIDE, &p->w))
		return -1;
	if (x && x[1] && !parse_long(x + 1, 1, IMG_MAX_SIDE, &p->h))
		return -1;
	return p->w || p->h ? 0 : -1;
}

static int resize_parse(void *params, int argc, char **argv)
{
	static const char *const names[] = { "", "nearest", "bilinear", "area", "cubic", "lanczos" };
	struct resize_params *p = params;
	if (argc < 1)
		return err_set("resize: needs a size: WxH, W, xH or P%% (e.g. resize:50%%)");
	if (resize_size(argv[0], p) < 0)
		return err_set("resize: size must be WxH, W, Wx, xH (1 to %d) or P%% (P > 0), "
			       "not '%s'",
			       IMG_MAX_SIDE, argv[0]);
	for (int i = 1; i < argc; i++) {
		int f = 0;
		if (!strcmp(argv[i], "fit")) {
			if (p->fit)
				return err_set("resize: fit given twice");
			p->fit = true;
			continue;
		}
		for (int k = 1; k < 6; k++)
			if (!strcmp(argv[i], names[k]))
				f = k;
		if (!f) {
			static const char *const opts[] = { "fit",   "nearest", "bilinear", "area",
							    "cubic", "lanczos", NULL };
			err_set("resize: unknown option '%s' (use fit, nearest, bilinear, area, "
				"cubic or lanczos)",
				argv[i]);
			return suggest_err(suggest(argv[i], opts));
		}
		if (p->filter)
			return err_set("resize: two filters, %s and %s", names[p->filter], argv[i]);
		p->filter = (enum resize_filter)f;
	}
	if (p->fit && !(p->w && p->h))
		return err_set("resize: fit needs both sides, WxH");
	return 0;
}

static void resize_free_plan(void *priv)
{
	struct resize_tables *t = priv;
	resize_axis_free(&t->x);
	resize_axis_free(&t->y);
	resize_blocks_free(&t->xb);
	resize_blocks_free(&t->yb);
	free(t);
}

// round(a b / c), halves up, at least 1; a, b, c >= 1 and at most 65535
static long resize_ratio(long a, long b, long c)
{
	long v = (2 * a * b + c) / (2 * c);
	return v < 1 ? 1 : v;
}

// Whether both axes' taps for each output cost at most twice the multiply-adds of the two
// passes, whose 16-bit image between them then costs more than the sums: on a GPU one
// kernel takes both (resize_fused_suits). Bilinear at any scale, area shrinking; not
// lanczos or cubic shrinking, whose rows' sums the passes share.
static bool resize_taps_few(const struct resize_tables *t)
{
	double tx = t->x.taps, ty = t->y.taps;
	return t->filter != RESIZE_NEAREST &&
	       t->out.h * tx * ty <= 2 * (t->in.h * tx + t->out.h * ty);
}

static int resize_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	const struct resize_params *p = params;
	struct resize_tables *t;
	long w = p->w, h = p->h;
	if (p->percent > 0) {
		double fw = floor(in->w * p->percent / 100 + 0.5), fh = floor(in->h * p->percent / 100 + 0.5);
		if (fw > IMG_MAX_SIDE || fh > IMG_MAX_SIDE)
			return err_set("resize: %g%% of %dx%d is more than %d pixels a side", p->percent,
				       in->w, in->h, IMG_MAX_SIDE);
		w = fw < 1 ? 1 : (long)fw;
		h = fh < 1 ? 1 : (long)fh;
	} else if (p->fit) {
		if (w * in->h <= h * in->w)
			h = resize_ratio(in->h, w, in->w);
		else
			w = resize_ratio(in->w, h, in->h);
	} else if (!h) {
		h = resize_ratio(in->h, w, in->w);
	} else if (!w) {
		w = resize_ratio(in->w, h, in->h);
	}
	if (w > IMG_MAX_SIDE || h > IMG_MAX_SIDE)
		return err_set("resize: %ldx%ld is more than %d pixels a side", w, h, IMG_MAX_SIDE);
	plan->out = (struct geom){ (int)w, (int)h, in->ch, in->orient };
	// the same size is the input, as with Pillow (which then copies) and OpenCV
	plan->passthrough = w == in->w && h == in->h;
	if (plan->passthrough)
		return 0;

	enum resize_filter f = p->filter;
	bool grows = w > in->w || h > in->h;
	if (f == RESIZE_DEFAULT)
		f = grows ? RESIZE_CUBIC : RESIZE_LANCZOS;
	if (f == RESIZE_AREA && grows)
		f = RESIZE_AREA_UP;
	t = calloc(1, sizeof *t);
	if (!t)
		return err_set("out of memory");
	t->filter = f;
	t->in = *in;
	t->out = plan->out;
	if (resize_axis_make(&t->x, f, in->w, (int)w) < 0 ||
	    resize_axis_make(&t->y, f, in->h, (int)h) < 0 ||
	    (f != RESIZE_NEAREST && !grows && !resize_taps_few(t) &&
	     (resize_blocks_make(&t->xb, &t->x) < 0 || resize_blocks_make(&t->yb, &t->y) < 0))) {
		resize_free_plan(t);
		return -1;
	}
	plan->priv = t;
	return 0;
}

// Whether colour is premultiplied by alpha around the passes (cubic and lanczos with alpha).
static bool resize_premul(const struct resize_tables *t)
{
	return (t->in.ch == 2 || t->in.ch == 4) &&
	       (t->filter == RESIZE_CUBIC || t->filter == RESIZE_LANCZOS);
}

static inline int resize_clamp(int64_t sum, int32_t r, int s, int32_t m)
{
	if (sum + r < 0)
		return 0;
	int64_t v = (sum + r) >> s;
	return v > m ? m : (int)v;
}

// Output pixels a chunk of the CPU path holds on the stack, and output rows a task makes at
// most.
#define RESIZE_CPU_CHUNK 256
#define RESIZE_CPU_BAND 16

struct resize_job {
	const struct resize_tables *t;
	const struct img *in, *out;
	int band; // output rows a task
};

// Pass 1 of input row r for output columns x0 .. x1 - 1 into h ((x - x0) ch + c).
static void resize_cpu_h(const struct resize_tables *t, const uint8_t *row, int x0, int x1,
			 int32_t *h)
{
	const int ch = t->in.ch, Wo = t->out.w;
	const int32_t *xs = t->x.data, *xc = xs + Wo, *xw = xc + Wo;
	const struct resize_round rd = resize_round_for(t->filter);
	const bool pm = resize_premul(t);
	for (int x = x0; x < x1; x++) {
		const int32_t *w = xw + (size_t)x * t->x.taps;
		for (int c = 0; c < ch; c++) {
			const uint8_t *p = row + (size_t)xs[x] * ch;
			int64_t sum = 0;
			for (int i = 0; i < xc[x]; i++, p += ch) {
				int v = p[c];
				if (pm && c < ch - 1) {
					int m = v * p[ch - 1] + 128;
					v = ((m >> 8) + m) >> 8;
				}
				sum += (int64_t)w[i] * v;
			}
			h[(x - x0) * ch + c] = resize_clamp(sum, rd.r1, rd.s1, rd.m1);
		}
	}
}

// Output rows band task .. band task + band - 1: for each chunk of columns, pass 1 of each
// input row their taps reach, once, added into pass 2's sums of every row that takes it
// (run_cpu cannot fail, so nothing is allocated: the sums are on the stack). The sums fit
// 32 bits, as in the kernels (kernels/resize.cl).
static void resize_band(void *ctx, int task, int worker)
{
	const struct resize_job *j = ctx;
	const struct resize_tables *t = j->t;
	const int ch = t->in.ch, W = t->in.w, Wo = t->out.w, Ho = t->out.h;
	const int y0 = task * j->band, y1 = y0 + j->band < Ho ? y0 + j->band : Ho;
	const int32_t *ys = t->y.data, *yc = ys + Ho, *yw = yc + Ho;
	const struct resize_round rd = resize_round_for(t->filter);
	const bool pm = resize_premul(t);
	int32_t acc[RESIZE_CPU_BAND][RESIZE_CPU_CHUNK * 4], h[RESIZE_CPU_CHUNK * 4];
	int r0 = INT32_MAX, r1 = 0;
	(void)worker;
	if (!j->out)
		return;
	if (t->filter == RESIZE_NEAREST) {
		for (int y = y0; y < y1; y++) {
			const uint8_t *s = j->in->data + (size_t)t->y.data[y] * W * ch;
			uint8_t *d = j->out->data + (size_t)y * Wo * ch;
			for (int x = 0; x < Wo; x++)
				memcpy(d + (size_t)x * ch, s + (size_t)t->x.data[x] * ch, (size_t)ch);
		}
		return;
	}
	for (int y = y0; y < y1; y++) {
		r0 = ys[y] < r0 ? ys[y] : r0;
		r1 = ys[y] + yc[y] > r1 ? ys[y] + yc[y] : r1;
	}
	for (int x0 = 0; x0 < Wo; x0 += RESIZE_CPU_CHUNK) {
		int x1 = x0 + RESIZE_CPU_CHUNK < Wo ? x0 + RESIZE_CPU_CHUNK : Wo, n = (x1 - x0) * ch;
		memset(acc, 0, sizeof acc[0] * (size_t)(y1 - y0));
		for (int r = r0; r < r1; r++) {
			bool used = false;
			for (int y = y0; y < y1 && !used; y++)
				used = r >= ys[y] && r < ys[y] + yc[y];
			if (!used) // between the taps of rows far apart (a large shrink)
				continue;
			resize_cpu_h(t, j->in->data + (size_t)r * W * ch, x0, x1, h);
			for (int y = y0; y < y1; y++) {
				int k = r - ys[y];
				if (k < 0 || k >= yc[y])
					continue;
				int32_t wy = yw[(size_t)y * t->y.taps + k], *a = acc[y - y0];
				for (int i = 0; i < n; i++)
					a[i] += wy * h[i];
			}
		}
		for (int y = y0; y < y1; y++) {
			uint8_t *d = j->out->data + ((size_t)y * Wo + x0) * ch;
			for (int x = x0; x < x1; x++, d += ch) {
				for (int c = 0; c < ch; c++)
					d[c] = (uint8_t)resize_clamp(acc[y - y0][(x - x0) * ch + c], rd.r2,
								     rd.s2, 255);
				int a = d[ch - 1];
				if (pm && a != 0 && a != 255)
					for (int c = 0; c < ch - 1; c++)
						d[c] = (uint8_t)(255 * d[c] / a > 255 ? 255 : 255 * d[c] / a);
			}
		}
	}
}

// Bands of at most RESIZE_CPU_BAND rows, at least four a thread where the image allows.
static void resize_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)params;
	struct resize_job j = { plan->priv, in, out, 1 };
	if (!out) // passthrough: the same size
		return;
	j.band = out->h / (4 * par_threads());
	j.band = j.band < 1 ? 1 : j.band > RESIZE_CPU_BAND ? RESIZE_CPU_BAND : j.band;
	par_run(par_threads(), (out->h + j.band - 1) / j.band, resize_band, &j);
}

// The multiply-adds of both passes and 8 a sample more, about what a sample costs besides its
// taps; on every core. Pass 1 weighs the input rows the bands of output rows take (each row
// once, and the taps of a band's first row again), along the output's width; pass 2 each
// output sample's taps down its column. Nearest: 9 a sample.
static void resize_cost(const void *params, const struct geom *in, const struct stage_plan *plan,
			struct stage_cost *cost)
{
	const struct resize_tables *t = plan->priv;
	double out = (double)geom_bytes(&plan->out), units = out * 9;
	(void)params;
	if (t && t->filter != RESIZE_NEAREST) {
		double bands = (plan->out.h + RESIZE_CPU_BAND - 1) / RESIZE_CPU_BAND;
		double rows = in->h + bands * t->y.taps;
		if (rows > (double)plan->out.h * t->y.taps)
			rows = (double)plan->out.h * t->y.taps;
		units = rows * plan->out.w * in->ch * t->x.taps + out * (t->y.taps + 8);
	}
	*cost = (struct stage_cost){ "resize", plan->passthrough ? 0 : units, true };
}

// The horizontal table as the kernels take it (kernels/resize.cl): nearest's as it is; the
// others' weights tap by tap, w[k * n + i], so that neighbouring work-items (neighbouring
// output columns) read neighbouring words. NULL with err set.
static struct ocl_buf *resize_xbuf(struct ocl *o, const struct resize_tables *t, size_t xw)
{
	const struct resize_axis *a = &t->x;
	size_t n = (size_t)a->n, taps = (size_t)a->taps;
	struct ocl_buf *b;
	int32_t *d;
	if (t->filter == RESIZE_NEAREST)
		return ocl_buf_const(o, a->data, sizeof(int32_t) * xw * n);
	if (!(d = malloc(sizeof(int32_t) * xw * n))) {
		err_set("out of memory");
		return NULL;
	}
	memcpy(d, a->data, sizeof(int32_t) * 2 * n);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < taps; k++)
			d[2 * n + k * n + i] = a->data[2 * n + i * taps + k];
	b = ocl_buf_const(o, d, sizeof(int32_t) * xw * n);
	free(d);
	return b;
}

// n bytes rounded up to an odd number of 4-byte words: rows that far apart in local memory
// start in different banks.
static size_t resize_odd_words(size_t n)
{
	size_t w = (n + 3) / 4;
	return 4 * (w | 1);
}

// The local bytes a row of resize_hb's work-group of lg groups takes at most: the bytes of
// its groups' taps (ordered tables) in the whole 16-byte pieces that hold them (up to 15
// more at each end; resize_row_copy), rounded up to an odd number of words.
static size_t resize_span(const struct resize_blocks *b, size_t lg, int ch)
{
	size_t span = 0;
	for (size_t g0 = 0; g0 < (size_t)b->groups; g0 += lg) {
		size_t g1 = g0 + lg < (size_t)b->groups ? g0 + lg - 1 : (size_t)b->groups - 1;
		size_t n = (size_t)(b->data[g1] + b->data[b->groups + g1] - b->data[g0]) * ch;
		span = n > span ? n : span;
	}
	return resize_odd_words(span + 30);
}

// Whether the blocked kernels suit this resize: a GPU's kernels (a CPU device runs the plain
// ones faster), both sides shrinking, and on each axis a group's inputs at most twice an
// output's taps (each of its sums then adds at most as many zeros as taps: lanczos and
// cubic, not bilinear or area, whose few taps the plain kernels read as cheaply).
static bool resize_blocked_suits(const struct stage_cl *c, const struct resize_tables *t)
{
	return !ocl_cpu_kernels(c->ocl) && t->out.w <= t->in.w && t->out.h <= t->in.h &&
	       t->xb.ordered && t->yb.ordered && t->xb.len <= 2 * t->x.taps &&
	       t->yb.len <= 2 * t->y.taps;
}

// Both passes in groups of RESIZE_B outputs (kernels/resize.cl, resize_hb and resize_vb),
// resize_hb in work-groups of 32 rows x RESIZE_LG groups: 1 where queued, 0 where the
// device cannot take them (smaller work-groups, or more local memory than RESIZE_LOCAL), -1
// with err set.
#define RESIZE_LG 8
#define RESIZE_LOCAL 32768
static int resize_run_blocked(const struct stage_cl *c, const struct resize_tables *t,
			      struct ocl_buf *tmp)
{
	const int ch = c->gin.ch;
	const struct resize_round rd = resize_round_for(t->filter);
	const struct ocl_limits lim = ocl_get_limits(c->ocl);
	struct ocl_buf *xb = NULL, *yb = NULL;
	size_t wg, lh, lg, span, ospan, wl, local;
	char k1[32], k2[32];
	int r = -1;
	snprintf(k1, sizeof k1, "resize_hb_c%d", ch);
	snprintf(k2, sizeof k2, "resize_vb_c%d", ch);
	if (ocl_kernel_wg_max(c->ocl, "resize", ch, k1, &wg) < 0)
		return -1;
	ocl_local_shrink(&lim, wg, 32, RESIZE_LG, &lh, &lg);
	span = resize_span(&t->xb, lg, ch);
	ospan = resize_odd_words(2 * RESIZE_B * lg * (size_t)ch);
	wl = 16 * lg * (size_t)t->xb.len;
	local = (span + ospan) * lh + wl;
	if (lh != 32 || local > RESIZE_LOCAL || local > lim.local_mem_bytes)
		return 0;
	xb = ocl_buf_const(c->ocl, t->xb.data, sizeof(int32_t) * t->xb.words);
	yb = ocl_buf_const(c->ocl, t->yb.data, sizeof(int32_t) * t->yb.words);
	if (!xb || !yb)
		goto fail;
	if (ocl_run(c->ocl, "resize", ch, k1, lh * (((size_t)t->xb.groups + lg - 1) / lg),
		    lg * (((size_t)c->gin.h + lh - 1) / lh), lh, lg,
		    (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(tmp), OCL_INT(c->gin.w),
					OCL_INT(c->gin.h), OCL_INT(c->gout.w),
					OCL_INT(t->xb.groups), OCL_BUF(xb), OCL_INT(rd.s1),
					OCL_INT(rd.r1), OCL_INT(rd.m1), OCL_INT(resize_premul(t)),
					OCL_LOCAL(span * lh), OCL_INT(span),
					OCL_LOCAL(ospan * lh), OCL_INT(ospan), OCL_LOCAL(wl),
					OCL_INT(t->xb.len), OCL_END }) < 0)
		goto fail;
	r = ocl_run(c->ocl, "resize", ch, k2, (size_t)c->gout.w, (size_t)t->yb.groups, 0, 0,
		    (struct ocl_arg[]){ OCL_BUF(tmp), OCL_BUF(c->out), OCL_INT(c->gout.w),
					OCL_INT(c->gout.h), OCL_INT(t->yb.groups), OCL_BUF(yb),
					OCL_INT(rd.s2), OCL_INT(rd.r2), OCL_INT(resize_premul(t)),
					OCL_END }) < 0 ? -1 : 1;
fail:
	ocl_buf_free(xb); // released once the kernels are done with them
	ocl_buf_free(yb);
	return r;
}

// Whether one kernel making each output from both axes' taps (resize_hv) suits: a GPU's
// kernels, and few taps.
static bool resize_fused_suits(const struct stage_cl *c, const struct resize_tables *t)
{
	return !ocl_cpu_kernels(c->ocl) && resize_taps_few(t);
}

static int resize_run_cl(const void *params, const struct stage_cl *c)
{
	(void)params;
	if (!c->out) // passthrough: the same size, and no tables
		return 0;
	const struct resize_tables *t = c->plan->priv;
	const int ch = c->gin.ch;
	struct ocl_buf *xb = NULL, *yb = NULL, *tmp = NULL;
	size_t xw = t->filter == RESIZE_NEAREST ? 1 : 2 + (size_t)t->x.taps;
	size_t yw = t->filter == RESIZE_NEAREST ? 1 : 2 + (size_t)t->y.taps;
	struct resize_round rd = resize_round_for(t->filter);
	const bool fused = resize_fused_suits(c, t);
	char k1[32], k2[32];
	int r = -1;
	if (t->filter != RESIZE_NEAREST && !fused) {
		tmp = ocl_buf_new(c->ocl, (size_t)c->gout.w * (size_t)c->gin.h * (size_t)ch * 2);
		if (!tmp)
			return -1;
		if (resize_blocked_suits(c, t) && (r = resize_run_blocked(c, t, tmp)) != 0) {
			ocl_buf_free(tmp);
			return r < 0 ? -1 : 0;
		}
		r = -1;
	}
	xb = resize_xbuf(c->ocl, t, xw);
	yb = ocl_buf_const(c->ocl, t->y.data, sizeof(int32_t) * yw * (size_t)t->y.n);
	if (!xb || !yb)
		goto fail;
	if (t->filter == RESIZE_NEAREST) {
		snprintf(k1, sizeof k1, "resize_nearest_c%d", ch);
		r = ocl_run(c->ocl, "resize", ch, k1, (size_t)c->gout.w, (size_t)c->gout.h, 0, 0,
			    (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(c->gin.w),
						OCL_INT(c->gout.w), OCL_INT(c->gout.h), OCL_BUF(xb),
						OCL_BUF(yb), OCL_END });
		goto fail;
	}
	if (fused) {
		snprintf(k1, sizeof k1, "resize_hv_c%d", ch);
		r = ocl_run(c->ocl, "resize", ch, k1, (size_t)c->gout.w, (size_t)c->gout.h, 0, 0,
			    (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(c->gin.w),
						OCL_INT(c->gout.w), OCL_INT(c->gout.h), OCL_BUF(xb),
						OCL_BUF(yb), OCL_INT(t->y.taps), OCL_INT(rd.s1),
						OCL_INT(rd.r1), OCL_INT(rd.m1), OCL_INT(rd.s2),
						OCL_INT(rd.r2), OCL_INT(resize_premul(t)), OCL_END });
		goto fail;
	}
	snprintf(k1, sizeof k1, "resize_h_c%d", ch);
	snprintf(k2, sizeof k2, "resize_v_c%d", ch);
	if (ocl_run(c->ocl, "resize", ch, k1, (size_t)c->gout.w, (size_t)c->gin.h, 0, 0,
		    (struct ocl_arg[]){ OCL_BUF(c->in), OCL_BUF(tmp), OCL_INT(c->gin.w),
					OCL_INT(c->gin.h), OCL_INT(c->gout.w), OCL_BUF(xb),
					OCL_INT(rd.s1), OCL_INT(rd.r1), OCL_INT(rd.m1),
					OCL_INT(resize_premul(t)), OCL_END }) < 0)
		goto fail;
	r = ocl_run(c->ocl, "resize", ch, k2, (size_t)c->gout.w, (size_t)c->gout.h, 0, 0,
		    (struct ocl_arg[]){ OCL_BUF(tmp), OCL_BUF(c->out), OCL_INT(c->gout.w),
					OCL_INT(c->gout.h), OCL_BUF(yb), OCL_INT(t->y.taps),
					OCL_INT(rd.s2), OCL_INT(rd.r2), OCL_INT(resize_premul(t)),
					OCL_END });
fail:
	ocl_buf_free(xb); // released once the kernels are done with them
	ocl_buf_free(yb);
	ocl_buf_free(tmp);
	return r;
}

const struct stage_ops stage_resize = {
	.name = "resize",
	.usage = "resize:SIZE[:fit][:FILTER]",
	.summary = "scale to WxH, W, xH or P% (fit: inside WxH, aspect kept); FILTER nearest, "
		   "bilinear, area, cubic or lanczos",
	.help =
		"Scales the image to a new size, separably (along the rows, then the columns);\n"
		"the same size passes it through. Weights are integers computed once on the host.\n"
		"\n"
		"SIZE:\n"
		"  WxH       exactly W x H\n"
		"  W or Wx   W wide, the height keeping the aspect ratio\n"
		"  xH        H high, the width keeping the aspect ratio\n"
		"  P%        both sides times P / 100 (P > 0, decimals allowed)\n"
		"  Sides are 1 to 65535; a derived side is round(H' W / W') for a W' x H' input\n"
		"  (halves up; P%: round(W' P / 100)), at least 1.\n"
		"\n"
		"Options (any order):\n"
		"  fit       with WxH: the largest size inside W x H that keeps the aspect ratio,\n"
		"            as vipsthumbnail\n"
		"  FILTER    one of (default: lanczos where neither side grows, else cubic)\n"
		"    nearest   OpenCV's INTER_NEAREST_EXACT, byte for byte\n"
		"    bilinear  OpenCV's INTER_LINEAR_EXACT, byte for byte\n"
		"    area      OpenCV's INTER_AREA, within 1: box averages when shrinking\n"
		"    cubic     Pillow's BICUBIC, byte for byte, alpha premultiplied as Pillow\n"
		"    lanczos   Pillow's LANCZOS, byte for byte, alpha premultiplied as Pillow\n"
		"\n"
		"Formula: each output sample is the sum of the filter's integer weights times the\n"
		"input samples along a row, then down a column, each pass rounded as the library\n"
		"named does; climg(1) gives each filter's weights and rounding.\n"
		"\n"
		"Example:\n"
		"  climg in.png resize:50%:area -o half.png\n",
	.params_size = sizeof(struct resize_params),
	.parse = resize_parse,
	.plan = resize_plan,
	.run_cpu = resize_run_cpu,
	.program = "resize",
	.run_cl = resize_run_cl,
	.cost = resize_cost,
	.free_plan = resize_free_plan,
};
