// SPDX-License-Identifier: MIT
// climg compare: two images pixel by pixel, their metrics, the diff picture; the options
// that compare and --expect share (the command itself: compare_main.c). Integer counts, maxima and sums computed exactly in strips of rows on every
// core, merged in row order (so the thread count changes nothing); the floating metrics from
// them:
//   n = compared pixels * channels, S1 = sum |a - b|, S2 = sum (a - b)^2 over all channels
//   MAE = S1 / n, RMSE = sqrt(S2 / n), PSNR = 10 log10(255^2 n / S2) dB (inf when S2 = 0)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "err.h"
#include "par.h"
#include "report.h"

// ---- options ------------------------------------------------------------------------------

// A whole decimal number 0 .. max.
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

// "P%" with P from 0 to 100 and at most 4 decimals, into parts per million.
static int parse_pct(const char *s, uint64_t *ppm)
{
	uint64_t whole = 0, frac = 0, scale = 10000;
	const char *p = s;
	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9' && whole <= 100)
		whole = whole * 10 + (uint64_t)(*p++ - '0');
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9') {
			if (scale == 1)
				return -1;
			scale /= 10;
			frac += (uint64_t)(*p++ - '0') * scale;
		}
	}
	if (strcmp(p, "%") || whole > 100 || (whole == 100 && frac))
		return -1;
	*ppm = whole * 10000 + frac;
	return 0;
}

int cmp_parse_opt(struct cmp_opts *o, const char *name, const char *value)
{
	uint64_t v[4];
	if (!strcmp(name, "--tolerance")) {
		if (parse_u64(value, 255, &v[0]) < 0)
			return err_set("--tolerance must be a whole number from 0 to 255, not '%s'", value);
		o->tolerance = (int)v[0];
		return 1;
	}
	if (!strcmp(name, "--allow")) {
		o->allow_pct = strchr(value, '%') != NULL;
		if (o->allow_pct ? parse_pct(value, &o->allow_ppm) < 0
				 : parse_u64(value, UINT64_MAX, &o->allow_count) < 0)
			return err_set("--allow must be a pixel count N or a percentage P%% (0 to 100, "
				       "4 decimals at most), not '%s'", value);
		return 1;
	}
	if (!strcmp(name, "--ignore")) {
		char buf[96], *tok, *save = NULL;
		int k = 0;
		if (strlen(value) >= sizeof buf)
			return err_set("--ignore must be X,Y,W,H, not '%s'", value);
		strcpy(buf, value);
		for (tok = strtok_r(buf, ",", &save); tok && k < 4; tok = strtok_r(NULL, ",", &save))
			if (parse_u64(tok, IMG_MAX_SIDE, &v[k++]) < 0)
				k = 5;
		if (k != 4 || tok || value[strlen(value) - 1] == ',' || !v[2] || !v[3])
			return err_set("--ignore must be X,Y,W,H (whole numbers up to 65535, W and H "
				       "at least 1), not '%s'", value);
		if (o->nignore == CMP_MAX_IGNORE)
			return err_set("--ignore given more than %d times", CMP_MAX_IGNORE);
		o->ignore[o->nignore++] = (struct cmp_rect){ (int)v[0], (int)v[1], (int)v[2], (int)v[3] };
		return 1;
	}
	return 0;
}

// ---- the comparison -----------------------------------------------------------------------

struct cmp_part {
	uint64_t compared, differing;
	int max[4], max_x[4], max_y[4];
	uint64_t sum_abs[4], sum_sq[4];
};

struct cmp_job {
	const struct img *a, *b;
	const struct cmp_opts *o;
	int rows; // rows per task
	struct cmp_part *parts;
};

static bool rect_has(const struct cmp_rect *r, int x, int y)
{
	return x >= r->x && x - r->x < r->w && y >= r->y && y - r->y < r->h;
}

static bool ignored(const struct cmp_opts *o, int x, int y)
{
	for (int i = 0; i < o->nignore; i++)
		if (rect_has(&o->ignore[i], x, y))
			return true;
	return false;
}

static bool row_ignored_somewhere(const struct cmp_opts *o, int y)
{
	for (int i = 0; i < o->nignore; i++)
		if (y >= o->ignore[i].y && y - o->ignore[i].y < o->ignore[i].h)
			return true;
	return false;
}

static void cmp_task(void *ctx, int task, int worker)
{
	const struct cmp_job *j = ctx;
	const struct img *a = j->a;
	struct cmp_part *p = &j->parts[task];
	int ch = a->ch, tol = j->o->tolerance;
	int y0 = task * j->rows, y1 = y0 + j->rows < a->h ? y0 + j->rows : a->h;
	(void)worker;

	memset(p, 0, sizeof *p);
	for (int c = 0; c < 4; c++)
		p->max_x[c] = p->max_y[c] = -1;
	for (int y = y0; y < y1; y++) {
		const uint8_t *pa = a->data + (size_t)y * (size_t)a->w * (size_t)ch;
		const uint8_t *pb = j->b->data + (size_t)y * (size_t)a->w * (size_t)ch;
		bool some = row_ignored_somewhere(j->o, y);
		uint64_t sa[4] = { 0 }, sq[4] = { 0 };
		// An equal row adds its pixels to the count and nothing to the sums or maxima.
		if (!some && memcmp(pa, pb, (size_t)a->w * (size_t)ch) == 0) {
			p->compared += (uint64_t)a->w;
			continue;
		}
		for (int x = 0; x < a->w; x++, pa += ch, pb += ch) {
			int dmax = 0;
			if (some && ignored(j->o, x, y))
				continue;
			p->compared++;
			for (int c = 0; c < ch; c++) {
				int d = pa[c] > pb[c] ? pa[c] - pb[c] : pb[c] - pa[c];
				sa[c] += (uint64_t)d;
				sq[c] += (uint64_t)(d * d);
				if (d > p->max[c]) {
					p->max[c] = d;
					p->max_x[c] = x;
					p->max_y[c] = y;
				}
				if (d > dmax)
					dmax = d;
			}
			if (dmax > tol)
				p->differing++;
		}
		for (int c = 0; c < ch; c++) {
			p->sum_abs[c] += sa[c];
			p->sum_sq[c] += sq[c];
		}
	}
}

void cmp_finish(struct cmp_result *r, const struct cmp_opts *o)
{
	uint64_t s1 = 0, s2 = 0;
	double n = (double)r->compared * (double)r->a.ch;
	for (int c = 0; c < r->a.ch; c++) {
		s1 += r->sum_abs[c];
		s2 += r->sum_sq[c];
	}
	r->mae = n > 0 ? (double)s1 / n : 0;
	r->rmse = n > 0 ? sqrt((double)s2 / n) : 0;
	r->psnr = s2 ? 10.0 * log10(255.0 * 255.0 * n / (double)s2) : INFINITY;
	r->allowed = o->allow_pct ? o->allow_ppm * r->compared / 1000000 : o->allow_count;
	r->same = r->differing <= r->allowed;
}

bool cmp_result_start(struct cmp_result *r, const struct img *a, const struct img *b)
{
	memset(r, 0, sizeof *r);
	r->a = (struct geom){ a->w, a->h, a->ch, 0 };
	r->b = (struct geom){ b->w, b->h, b->ch, 0 };
	for (int c = 0; c < 4; c++)
		r->max_x[c] = r->max_y[c] = -1;
	if (a->w == b->w && a->h == b->h && a->ch == b->ch)
		return false;
	r->mismatch = a->ch != b->ch && a->w == b->w && a->h == b->h ? "channels" : "size";
	return true;
}

void cmp_images(const struct img *a, const struct img *b, const struct cmp_opts *o,
		struct cmp_result *r)
{
	struct cmp_job j = { a, b, o, 0, NULL };
	struct cmp_part one;
	int ntasks;

	if (cmp_result_start(r, a, b))
		return;
	// About 64 strips: enough to balance the cores, few enough to merge for nothing.
	j.rows = (a->h + 63) / 64;
	ntasks = (a->h + j.rows - 1) / j.rows;
	j.parts = malloc((size_t)ntasks * sizeof *j.parts);
	if (!j.parts) { // no memory for the strips: one strip, here
		j.parts = &one;
		j.rows = a->h;
		ntasks = 1;
	}
	par_run(ntasks > 1 ? par_threads() : 1, ntasks, cmp_task, &j);
	for (int t = 0; t < ntasks; t++) {
		const struct cmp_part *p = &j.parts[t];
		r->compared += p->compared;
		r->differing += p->differing;
		for (int c = 0; c < a->ch; c++) {
			r->sum_abs[c] += p->sum_abs[c];
			r->sum_sq[c] += p->sum_sq[c];
			if (p->max[c] > r->max[c]) {
				r->max[c] = p->max[c];
				r->max_x[c] = p->max_x[c];
				r->max_y[c] = p->max_y[c];
			}
		}
	}
	if (j.parts != &one)
		free(j.parts);
	cmp_finish(r, o);
}

// ---- output -------------------------------------------------------------------------------

// "%.6g", or "inf".
static void num(char buf[32], double v)
{
	if (isinf(v))
		snprintf(buf, 32, "inf");
	else
		snprintf(buf, 32, "%.6g", v);
}

static int cmp_print_json(FILE *f, const struct cmp_result *r, const struct cmp_opts *o,
			  const char *label)
{
	char *js = NULL;
	char mae[32], rmse[32], psnr[32], pct[32];
	if (label && !(js = report_json_string(label)))
		return -1;
	fprintf(f, "{%s%s%s\"result\":\"%s\",\"width\":%d,\"height\":%d,\"channels\":%d",
		js ? "\"path\":" : "", js ? js : "", js ? "," : "", r->same ? "same" : "differ",
		r->a.w, r->a.h, r->a.ch);
	free(js);
	if (r->mismatch) {
		fprintf(f, ",\"mismatch\":\"%s\",\"other_width\":%d,\"other_height\":%d,"
			   "\"other_channels\":%d}\n", r->mismatch, r->b.w, r->b.h, r->b.ch);
		return 0;
	}
	num(mae, r->mae);
	num(rmse, r->rmse);
	num(psnr, r->psnr);
	num(pct, r->compared ? 100.0 * (double)r->differing / (double)r->compared : 0);
	fprintf(f, ",\"mismatch\":null,\"tolerance\":%d,\"compared\":%llu,\"differing\":%llu,"
		   "\"differing_percent\":%s,\"allowed\":%llu,\"max\":[", o->tolerance,
		(unsigned long long)r->compared, (unsigned long long)r->differing, pct,
		(unsigned long long)r->allowed);
	for (int c = 0; c < r->a.ch; c++)
		fprintf(f, "%s%d", c ? "," : "", r->max[c]);
	fputs("],\"max_at\":[", f);
	for (int c = 0; c < r->a.ch; c++) {
		if (r->max_x[c] < 0)
			fprintf(f, "%snull", c ? "," : "");
		else
			fprintf(f, "%s[%d,%d]", c ? "," : "", r->max_x[c], r->max_y[c]);
	}
	fputs("],\"sum_abs\":[", f);
	for (int c = 0; c < r->a.ch; c++)
		fprintf(f, "%s%llu", c ? "," : "", (unsigned long long)r->sum_abs[c]);
	fputs("],\"sum_sq\":[", f);
	for (int c = 0; c < r->a.ch; c++)
		fprintf(f, "%s%llu", c ? "," : "", (unsigned long long)r->sum_sq[c]);
	fprintf(f, "],\"mae\":%s,\"rmse\":%s,\"psnr\":%s}\n", mae, rmse,
		isinf(r->psnr) ? "null" : psnr);
	return 0;
}

int cmp_print(FILE *f, const struct cmp_result *r, const struct cmp_opts *o, const char *label)
{
	char mae[32], rmse[32], psnr[32], pct[32];
	if (o->json) {
		if (cmp_print_json(f, r, o, label) < 0)
			return -1;
	} else if (r->mismatch) {
		fprintf(f, "differ size=%dx%d channels=%d mismatch=%s other_size=%dx%d "
			   "other_channels=%d", r->a.w, r->a.h, r->a.ch, r->mismatch, r->b.w,
			r->b.h, r->b.ch);
	} else {
		num(mae, r->mae);
		num(rmse, r->rmse);
		num(psnr, r->psnr);
		num(pct, r->compared ? 100.0 * (double)r->differing / (double)r->compared : 0);
		fprintf(f, "%s size=%dx%d channels=%d compared=%llu differing=%llu "
			   "differing_percent=%s allowed=%llu max=", r->same ? "same" : "differ",
			r->a.w, r->a.h, r->a.ch, (unsigned long long)r->compared,
			(unsigned long long)r->differing, pct, (unsigned long long)r->allowed);
		for (int c = 0; c < r->a.ch; c++)
			fprintf(f, "%s%d", c ? "," : "", r->max[c]);
		fputs(" max_at=", f);
		for (int c = 0; c < r->a.ch; c++) {
			if (r->max_x[c] < 0)
				fprintf(f, "%s-", c ? "," : "");
			else
				fprintf(f, "%s%d:%d", c ? "," : "", r->max_x[c], r->max_y[c]);
		}
		fprintf(f, " mae=%s rmse=%s psnr=%s", mae, rmse, psnr);
	}
	if (!o->json)
		fprintf(f, "%s%s\n", label ? " path=" : "", label ? label : "");
	if (ferror(f))
		return err_set("cannot write the comparison");
	return 0;
}

int cmp_diff_image(const struct img *a, const struct img *b, const struct cmp_opts *o,
		   struct img *out)
{
	int ch = a->ch;
	*out = (struct img){ a->w, a->h, 3, malloc((size_t)a->w * (size_t)a->h * 3) };
	if (!out->data)
		return err_set("out of memory for the diff image");
	for (int y = 0; y < a->h; y++) {
		bool some = row_ignored_somewhere(o, y);
		for (int x = 0; x < a->w; x++) {
			size_t i = (size_t)y * (size_t)a->w + (size_t)x;
			const uint8_t *pa = a->data + i * (size_t)ch, *pb = b->data + i * (size_t)ch;
			uint8_t *q = out->data + i * 3;
			int lum, g, d = 0;
			if (ch >= 3) // the grey stage's bt601
				lum = (9798 * pa[0] + 19235 * pa[1] + 3735 * pa[2] + 16384) >> 15;
			else
				lum = pa[0];
			g = 191 + lum / 4;
			if (some && ignored(o, x, y)) {
				q[0] = q[1] = (uint8_t)(g - 64);
				q[2] = (uint8_t)g;
				continue;
			}
			for (int c = 0; c < ch; c++) {
				int e = pa[c] > pb[c] ? pa[c] - pb[c] : pb[c] - pa[c];
				d = e > d ? e : d;
			}
			if (d > o->tolerance) {
				q[0] = (uint8_t)(128 + 127 * d / 255);
				q[1] = q[2] = 0;
			} else {
				q[0] = q[1] = q[2] = (uint8_t)g;
			}
		}
	}
	return 0;
}

// ---- files --------------------------------------------------------------------------------

// bytes (at least 1) of memory starting a page, as a zero-copy device wants to read an
// image in place (ocl_wrap_alloc's alignment, a page on PoCL); free() frees it. NULL when
// out of memory.
static void *page_alloc(size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = NULL;
	return posix_memalign(&p, page > 0 ? (size_t)page : 4096, bytes ? bytes : 1) ? NULL : p;
}

int cmp_load(const char *path, const struct io_limits *lim, struct img *im)
{
	struct img_reader *rd = img_reader_open(path, lim);
	struct geom g;
	int rc;
	*im = (struct img){ 0 };
	if (!rd)
		return -1;
	g = img_reader_geom(rd);
	*im = (struct img){ g.w, g.h, g.ch, page_alloc(geom_bytes(&g) + img_reader_slack(rd)) };
	if (!im->data) {
		img_reader_close(rd);
		return err_set("%s: out of memory for a %dx%d image", path, g.w, g.h);
	}
	rc = img_reader_decode(rd, im->data);
	img_reader_close(rd);
	if (rc < 0) {
		free(im->data);
		im->data = NULL;
	}
	return rc;
}

int cmp_write(const char *path, const struct img *im)
{
	enum img_format fmt = img_format_from_ext(path);
	struct outfile *f;
	if (fmt == FMT_NONE)
		return err_set("%s: unknown output extension (use .png .jpg .jpeg .bmp .tga .ppm)", path);
	if (!(f = outfile_open(path)))
		return -1;
	if (img_encode(f, fmt, im, NULL) < 0) {
		outfile_abort(f);
		return -1;
	}
	return outfile_commit(f);
}
