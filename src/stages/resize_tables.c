// SPDX-License-Identifier: MIT
// resize's weight tables, computed once on the host (double precision, then integers), so
// that every device applies the same integers:
//
//   nearest   OpenCV INTER_NEAREST_EXACT: s = ((in << 16) + out / 2) / out,
//             start(i) = min((s i + s / 2 - in % 2) >> 16, in - 1), in 64-bit integers
//   bilinear  OpenCV INTER_LINEAR_EXACT: f = (1 / (out / in)) (i + 0.5) - 0.5 in doubles,
//             j = floor(f); for 0 <= j < in - 1 the taps j, j + 1 with weights 256 - c, c,
//             c = rint(256 (f - j)); before the first pixel the first, past the last the
//             last, with weight 256
//   area      OpenCV INTER_AREA (shrinking on both sides): output pixel i covers input
//             [i s, i s + s), s = in / out; each input pixel weighs its overlap / the cell's
//             width (ignoring slivers under 1e-3), times 2^22 rounded, the largest weight
//             then adjusted so that they sum to 2^22
//   area, growing on a side (both axes): as OpenCV's INTER_AREA then, j = floor(i (1 / (out /
//             in))), f = float((i + 1) - (j + 1) (out / in)), f = 0 where f <= 0, else its
//             fraction; taps j, j + 1 weighing 256 - c, c, c = rint(256 f) (OpenCV: 2048,
//             so within 1); j >= in - 1 takes the last pixel alone
//   cubic,    Pillow's BICUBIC (a = -0.5, support 2) and LANCZOS (support 3): Pillow's
//   lanczos   precompute_coeffs and normalize_coeffs_8bpc, with 22 fractional bits
#include "resize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"

#define RESIZE_P 22 // the fractional bits of the area, cubic and lanczos weights

static double resize_cubic(double x)
{
	const double a = -0.5;
	if (x < 0.0)
		x = -x;
	if (x < 1.0)
		return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
	if (x < 2.0)
		return (((x - 5) * x + 8) * x - 4) * a;
	return 0.0;
}

static double resize_sinc(double x)
{
	if (x == 0.0)
		return 1.0;
	x = x * 3.14159265358979323846; // M_PI, as Pillow
	return sin(x) / x;
}

static double resize_lanczos(double x)
{
	if (-3.0 <= x && x < 3.0)
		return resize_sinc(x) * resize_sinc(x / 3);
	return 0.0;
}

static int axis_alloc(struct resize_axis *a, int out, int taps)
{
	size_t words = (size_t)out * (2 + (size_t)taps);
	a->n = out;
	a->taps = taps;
	a->data = calloc(words ? words : 1, sizeof *a->data);
	return a->data ? 0 : err_set("resize: out of memory for the weights");
}

// Pillow's precompute_coeffs and normalize_coeffs_8bpc (the box is the whole input).
static int axis_pillow(struct resize_axis *a, int in, int out, double support0,
		       double (*filter)(double))
{
	double scale = (double)in / out, fscale = scale < 1.0 ? 1.0 : scale;
	double support = support0 * fscale, *k;
	int taps = (int)ceil(support) * 2 + 1;
	if (axis_alloc(a, out, taps) < 0)
		return -1;
	if (!(k = malloc(sizeof *k * (size_t)taps))) {
		resize_axis_free(a);
		return err_set("resize: out of memory for the weights");
	}
	int32_t *start = a->data, *count = start + out, *w = count + out;
	for (int i = 0; i < out; i++) {
		double center = (i + 0.5) * scale, ww = 0.0, ss = 1.0 / fscale;
		int xmin = (int)(center - support + 0.5), xmax;
		if (xmin < 0)
			xmin = 0;
		xmax = (int)(center + support + 0.5);
		if (xmax > in)
			xmax = in;
		xmax -= xmin;
		for (int x = 0; x < xmax; x++) {
			k[x] = filter((x + xmin - center + 0.5) * ss);
			ww += k[x];
		}
		for (int x = 0; x < xmax; x++) {
			double v = ww != 0.0 ? k[x] / ww : k[x];
			w[(size_t)i * taps + x] = v < 0 ? (int32_t)(-0.5 + v * (1 << RESIZE_P))
						: (int32_t)(0.5 + v * (1 << RESIZE_P));
		}
		start[i] = xmin;
		count[i] = xmax;
	}
	free(k);
	return 0;
}

static int axis_bilinear(struct resize_axis *a, int in, int out)
{
	double scale = 1.0 / ((double)out / in);
	if (axis_alloc(a, out, 2) < 0)
		return -1;
	int32_t *start = a->data, *count = start + out, *w = count + out;
	for (int i = 0; i < out; i++) {
		double f = scale * ((double)i + 0.5) - 0.5;
		int j = (int)floor(f);
		count[i] = 1;
		w[2 * i] = 256;
		if (j >= 0 && in > 1 && j < in - 1) {
			int c = (int)rint((f - j) * 256);
			start[i] = j;
			count[i] = 2;
			w[2 * i] = 256 - c;
			w[2 * i + 1] = c;
		} else {
			start[i] = j >= 0 && in > 1 ? in - 1 : 0;
		}
	}
	return 0;
}

static int axis_area(struct resize_axis *a, int in, int out)
{
	double scale = (double)in / out;
	int taps = (int)ceil(scale) + 1;
	if (axis_alloc(a, out, taps) < 0)
		return -1;
	int32_t *start = a->data, *count = start + out, *w = count + out;
	for (int i = 0; i < out; i++) {
		double f1 = i * scale, f2 = f1 + scale, cell = scale < in - f1 ? scale : in - f1;
		int s1 = (int)ceil(f1), s2 = (int)floor(f2), n = 0, big = 0;
		int32_t *wi = w + (size_t)i * taps, sum = 0;
		if (s2 > in)
			s2 = in;
		start[i] = s1;
		if (s1 - f1 > 1e-3) {
			start[i] = s1 - 1;
			wi[n++] = (int32_t)lrint((s1 - f1) / cell * (1 << RESIZE_P));
		}
		for (int s = s1; s < s2; s++)
			wi[n++] = (int32_t)lrint(1.0 / cell * (1 << RESIZE_P));
		if (f2 - s2 > 1e-3 && s2 < in) {
			double part = f2 - s2 < 1.0 ? f2 - s2 : 1.0;
			wi[n++] = (int32_t)lrint((part < cell ? part : cell) / cell * (1 << RESIZE_P));
		}
		for (int k = 0; k < n; k++) {
			sum += wi[k];
			if (wi[k] > wi[big])
				big = k;
		}
		wi[big] += (1 << RESIZE_P) - sum;
		count[i] = n;
	}
	return 0;
}

static int axis_area_up(struct resize_axis *a, int in, int out)
{
	double inv = (double)out / in, scale = 1.0 / inv;
	if (axis_alloc(a, out, 2) < 0)
		return -1;
	int32_t *start = a->data, *count = start + out, *w = count + out;
	for (int i = 0; i < out; i++) {
		int j = (int)floor(i * scale);
		float f = (float)((i + 1) - (j + 1) * inv);
		f = f <= 0 ? 0.f : f - floorf(f);
		count[i] = 1;
		w[2 * i] = 256;
		start[i] = j < in - 1 ? j : in - 1;
		if (j < in - 1) {
			int c = (int)rintf(f * 256);
			count[i] = 2;
			w[2 * i] = 256 - c;
			w[2 * i + 1] = c;
		}
	}
	return 0;
}

static int axis_nearest(struct resize_axis *a, int in, int out)
{
	int64_t s = (((int64_t)in << 16) + out / 2) / out, s0 = s / 2 - in % 2;
	a->n = out;
	a->taps = 0;
	if (!(a->data = malloc(sizeof *a->data * (size_t)out)))
		return err_set("resize: out of memory for the weights");
	for (int i = 0; i < out; i++) {
		int64_t x = (s * i + s0) >> 16;
		a->data[i] = (int32_t)(x < in - 1 ? x : in - 1);
	}
	return 0;
}

int resize_axis_make(struct resize_axis *a, enum resize_filter f, int in, int out)
{
	memset(a, 0, sizeof *a);
	switch (f) {
	case RESIZE_NEAREST: return axis_nearest(a, in, out);
	case RESIZE_BILINEAR: return axis_bilinear(a, in, out);
	case RESIZE_AREA: return axis_area(a, in, out);
	case RESIZE_AREA_UP: return axis_area_up(a, in, out);
	case RESIZE_CUBIC: return axis_pillow(a, in, out, 2.0, resize_cubic);
	default: return axis_pillow(a, in, out, 3.0, resize_lanczos);
	}
}

void resize_axis_free(struct resize_axis *a)
{
	free(a->data);
	a->data = NULL;
}

int resize_blocks_make(struct resize_blocks *b, const struct resize_axis *a)
{
	const int32_t *start = a->data, *count = start + a->n, *w = count + a->n;
	int groups = (a->n + RESIZE_B - 1) / RESIZE_B, len = 0, prev_s = 0, prev_e = 0;
	memset(b, 0, sizeof *b);
	if (!(b->data = calloc(RESIZE_BW(groups), sizeof *b->data)))
		return err_set("resize: out of memory for the weights");
	b->groups = groups;
	b->ordered = true;
	for (int g = 0; g < groups; g++) {
		int s = INT32_MAX, e = 0;
		for (int i = g * RESIZE_B; i < a->n && i < (g + 1) * RESIZE_B; i++) {
			s = start[i] < s ? start[i] : s;
			e = start[i] + count[i] > e ? start[i] + count[i] : e;
		}
		b->data[g] = s;
		b->data[groups + g] = e - s;
		len = e - s > len ? e - s : len;
		if (g && (s < prev_s || e < prev_e))
			b->ordered = false;
		prev_s = s;
		prev_e = e;
	}
	size_t head = RESIZE_BW(groups), words = head + (size_t)len * groups * RESIZE_B;
	int32_t *d = realloc(b->data, words * sizeof *d);
	if (!d) {
		resize_blocks_free(b);
		return err_set("resize: out of memory for the weights");
	}
	b->data = d;
	b->len = len;
	b->words = words;
	memset(d + head, 0, (words - head) * sizeof *d);
	for (int i = 0; i < a->n; i++) {
		int g = i / RESIZE_B, off = start[i] - d[g];
		for (int k = 0; k < count[i]; k++)
			d[head + ((size_t)(off + k) * groups + g) * RESIZE_B + i % RESIZE_B] =
				w[(size_t)i * a->taps + k];
	}
	return 0;
}

void resize_blocks_free(struct resize_blocks *b)
{
	free(b->data);
	b->data = NULL;
}

struct resize_round resize_round_for(enum resize_filter f)
{
	if (f == RESIZE_BILINEAR || f == RESIZE_AREA_UP) // 16 bits between the passes, as OpenCV
		return (struct resize_round){ 0, 16, 0, 1 << 15, 65535 };
	return (struct resize_round){ RESIZE_P, RESIZE_P, 1 << (RESIZE_P - 1), 1 << (RESIZE_P - 1),
				      255 };
}
