// SPDX-License-Identifier: MIT
// convolve's CPU path: the FIXED-POINT CONTRACT of src/stages/convolve.c computed directly, the
// reference that every device kernel matches byte for byte. A kernel that is not separable
// sums its n * n taps; a separable one filters columns first into exact int32 sums, then rows.
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "convolve_impl.h"

// The source index of index i on a line of n pixels, or -1 where the zero border reads 0.
static int border_map(int i, int n, int border)
{
	if (i >= 0 && i < n)
		return i;
	switch (border) {
	case BORDER_REPLICATE: return i < 0 ? 0 : n - 1;
	case BORDER_REFLECT:
		if (n == 1)
			return 0;
		{
			int period = 2 * (n - 1);
			i %= period;
			if (i < 0)
				i += period;
			return i < n ? i : period - i;
		}
	case BORDER_WRAP: i %= n; return i < 0 ? i + n : i;
	default: return -1;
	}
}

// The contract's last step: acc to an output sample.
static inline uint8_t finish(int64_t acc, const struct convolve_params *p)
{
	int64_t t = acc + p->off, q;
	if (t < 0)
		return 0;
	q = p->shift >= 0 ? t >> p->shift : t / p->D;
	return q > 255 ? 255 : (uint8_t)q;
}

static void cpu_2d(const struct convolve_params *p, const struct img *in, struct img *out)
{
	const int W = in->w, H = in->h, ch = in->ch, r = p->r, n = p->n, cc = colour_channels(ch);
	const size_t stride = (size_t)W * ch;
	for (int y = 0; y < H; y++) {
		for (int x = 0; x < W; x++) {
			const size_t o = (size_t)y * stride + (size_t)x * ch;
			const bool inside = x >= r && x < W - r && y >= r && y < H - r;
			for (int c = 0; c < cc; c++) {
				const int32_t *k = p->w;
				int64_t acc = 0;
				for (int dy = -r; dy <= r; dy++, k += n) {
					int sy = inside ? y + dy : border_map(y + dy, H, p->border);
					if (sy < 0)
						continue;
					const uint8_t *row = in->data + (size_t)sy * stride + c;
					if (inside) {
						const uint8_t *s = row + (size_t)(x - r) * ch;
						for (int j = 0; j < n; j++)
							acc += (int64_t)k[j] * s[(size_t)j * ch];
						continue;
					}
					for (int j = 0; j < n; j++) {
						int sx = border_map(x + j - r, W, p->border);
						if (sx >= 0)
							acc += (int64_t)k[j] * row[(size_t)sx * ch];
					}
				}
				out->data[o + c] = finish(acc, p);
			}
			if (cc < ch)
				out->data[o + cc] = in->data[o + cc];
		}
	}
}

// Column sums of a chunk of columns live on the stack: run_cpu cannot fail, so it allocates
// nothing. CHUNK samples hold more than 2 * MAX_RADIUS pixels of 4 channels.
#define CHUNK 16384
_Static_assert(CHUNK / 4 > 2 * MAX_RADIUS, "a chunk must be wider than the kernel");

// The column sums (vertical pass) of the virtual column vx outside the image into d[ch].
static void sep_edge_column(const struct convolve_params *p, const uint8_t *const *rows, int W,
                            int ch, int vx, int32_t *d)
{
	const int32_t *ky = p->w + p->n;
	const int mx = border_map(vx, W, p->border);
	for (int c = 0; c < ch; c++)
		d[c] = 0;
	if (mx < 0)
		return;
	for (int i = 0; i < p->n; i++)
		if (rows[i])
			for (int c = 0; c < ch; c++)
				d[c] += ky[i] * rows[i][(size_t)mx * ch + c];
}

// Separable: for each output row, the vertical pass into v (int32, exact) for the columns
// [xa - r, xb + r) of a chunk, then the horizontal pass from v (int64) to the output.
static void cpu_sep(const struct convolve_params *p, const struct img *in, struct img *out)
{
	const int W = in->w, H = in->h, ch = in->ch, r = p->r, n = p->n, cc = colour_channels(ch);
	const int32_t *kx = p->w, *ky = p->w + n;
	const size_t stride = (size_t)W * ch;
	const int span = CHUNK / ch - 2 * r; // output pixels per chunk, >= 1
	const uint8_t *rows[MAX_N];
	int32_t v[CHUNK];

	for (int y = 0; y < H; y++) {
		for (int i = 0; i < n; i++) {
			int sy = border_map(y + i - r, H, p->border);
			rows[i] = sy < 0 ? NULL : in->data + (size_t)sy * stride;
		}
		for (int xa = 0; xa < W; xa += span) {
			const int xb = xa + span < W ? xa + span : W, va = xa - r, vb = xb + r;
			const int ia = va > 0 ? va : 0, ib = vb < W ? vb : W; // columns inside
			int32_t *vi = v + (size_t)(ia - va) * ch;
			const size_t cnt = (size_t)(ib - ia) * ch;
			memset(vi, 0, cnt * sizeof *vi);
			for (int i = 0; i < n; i++) {
				if (!rows[i] || !ky[i])
					continue;
				const uint8_t *s = rows[i] + (size_t)ia * ch;
				const int32_t k = ky[i];
				for (size_t j = 0; j < cnt; j++)
					vi[j] += k * s[j];
			}
			// virtual columns outside the image: [va, 0) and [W, vb)
			for (int vx = va; vx < vb && vx < 0; vx++)
				sep_edge_column(p, rows, W, ch, vx, v + (size_t)(vx - va) * ch);
			for (int vx = W > va ? W : va; vx < vb; vx++)
				sep_edge_column(p, rows, W, ch, vx, v + (size_t)(vx - va) * ch);
			for (int x = xa; x < xb; x++) {
				const size_t o = (size_t)y * stride + (size_t)x * ch;
				const int32_t *s = v + (size_t)(x - xa) * ch;
				for (int c = 0; c < cc; c++) {
					int64_t acc = 0;
					for (int j = 0; j < n; j++)
						acc += (int64_t)kx[j] * s[(size_t)j * ch + c];
					out->data[o + c] = finish(acc, p);
				}
				if (cc < ch)
					out->data[o + cc] = in->data[o + cc];
			}
		}
	}
}

void convolve_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out)
{
	(void)plan;
	const struct convolve_params *p = params;
	if (p->separable)
		cpu_sep(p, in, out);
	else
		cpu_2d(p, in, out);
}
