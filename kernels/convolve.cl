// SPDX-License-Identifier: MIT
// convolve: correlation with integer weights. The arithmetic is the FIXED-POINT CONTRACT
// written in src/stages/convolve.c (integer weights k, divisor D, bias numerator B):
//     acc = sum k[dy][dx] * in(x + dx, y + dy, c)
//     t   = acc + B + floor(D / 2)       (off = B + floor(D / 2) is passed in)
//     out = 0 if t < 0, else min(floor(t / D), 255)
// with the border rules and accumulator widths written there: int32 for a kernel that is
// not separable and for the first pass of a separable one, int64 for its second pass. The
// host checked the bounds, so nothing here overflows; integer sums are exact, so these
// kernels give the CPU path's bytes whatever order they add in.
//
// Images are interleaved 8-bit samples, CH channels, rows packed. One work-item computes
// one sample (not one pixel), so that neighbouring work-items touch neighbouring bytes and
// every global read and write is coalesced. Each kernel exists for CH = 1, 2, 3, 4
// (suffix _c1.._c4): the body is an inline function of a constant CH, so divisions by CH
// are cheap. With 2 or 4 channels the last is alpha: copied, not filtered.
//
//   convolve_sep_tile_cN  separable, one work-group per TW x TH output tile: the tile and
//                         its halo loaded into local memory once, a horizontal pass into
//                         local int32 rows, a vertical pass to the output
//   convolve_2d_tile_cN   not separable, the same tile, then the 2-D sum per sample
//   convolve_sep_h_cN     separable without local memory: horizontal pass of a strip of
//                         rows into an int32 scratch buffer ...
//   convolve_sep_v_cN     ... and the vertical pass from it to the output
//   convolve_2d_cN        not separable without local memory, straight from global memory

#define BORDER_REPLICATE 0
#define BORDER_REFLECT 1
#define BORDER_WRAP 2
#define BORDER_ZERO 3

#define HAS_ALPHA(CH) ((CH) == 2 || (CH) == 4)

// The source index of index i on a line of n pixels, or -1 where the zero border reads 0
// (border_map in src/stages/convolve.c).
static inline int border_map(int i, int n, int border)
{
	if (i >= 0 && i < n)
		return i;
	if (border == BORDER_REPLICATE)
		return i < 0 ? 0 : n - 1;
	if (border == BORDER_REFLECT) {
		if (n == 1)
			return 0;
		int period = 2 * (n - 1);
		i %= period;
		if (i < 0)
			i += period;
		return i < n ? i : period - i;
	}
	if (border == BORDER_WRAP) {
		i %= n;
		return i < 0 ? i + n : i;
	}
	return -1;
}

// The contract's last step. At or above 256 D the result saturates to 255; below it the
// quotient floor(t / D) is computed as (t * M) >> S, which the host chose so that it is
// exact for every 0 <= t < 256 D: D = 2^S with M = 1; or, for D < 2^16, S = 40 and
// M = floor(2^40 / D) + 1: then t * M / 2^40 = t / D + t * e / 2^40 with 0 < e < 1, and
// t * e / 2^40 < 256 D / 2^40 < 1 / D (as 256 D^2 < 2^40) never reaches the next integer.
// M = 0 (other D) divides.
static inline uchar finish(long acc, long off, long D, long M, int S)
{
	long t = acc + off;
	if (t < 0)
		return 0;
	if (t >= (D << 8))
		return 255;
	if (M)
		return (uchar)((t * M) >> S);
	return (uchar)(t / D);
}

// Loads the input rows ty - r .. ty + TH + r - 1, pixels tx - r .. tx + TW + r - 1, all CH
// channels, into tile (rows of (TW + 2r) * CH bytes), border-mapped: each byte of the
// tile and its halo is read from global memory once per work-group.
static inline void tile_load(const int CH, __global const uchar *in, int W, int H, int r,
			     int border, int tx, int ty, int TW, int TH, __local uchar *tile)
{
	const int RW = (TW + 2 * r) * CH, RH = TH + 2 * r, n = W * CH, s0 = (tx - r) * CH;
	for (int row = get_local_id(1); row < RH; row += get_local_size(1)) {
		__local uchar *t = tile + row * RW;
		const int sy = border_map(ty - r + row, H, border);
		if (sy < 0) {
			for (int s = get_local_id(0); s < RW; s += get_local_size(0))
				t[s] = 0;
			continue;
		}
		__global const uchar *src = in + (size_t)sy * n;
		for (int s = get_local_id(0); s < RW; s += get_local_size(0)) {
			const int g = s0 + s;
			if (g >= 0 && g < n) {
				t[s] = src[g];
			} else { // outside: split into pixel and channel, map the pixel
				const int px = g >= 0 ? g / CH : -((CH - 1 - g) / CH);
				const int mx = border_map(px, W, border);
				t[s] = mx < 0 ? 0 : src[mx * CH + (g - px * CH)];
			}
		}
	}
}

// Copies nw weights into local memory (every work-item reads every weight).
static inline void weights_load(__global const int *w, int nw, __local int *lw)
{
	const int lid = get_local_id(1) * get_local_size(0) + get_local_id(0);
	const int lsize = get_local_size(0) * get_local_size(1);
	for (int i = lid; i < nw; i += lsize)
		lw[i] = w[i];
}

static inline void sep_tile(const int CH, __global const uchar *in, __global uchar *out, int W,
			    int H, __global const int *w, int r, int border, long off, long D,
			    long M, int S, int TW, int TH, __local uchar *tile, __local int *mid,
			    __local int *lw)
{
	const int n = 2 * r + 1, RW = (TW + 2 * r) * CH, RH = TH + 2 * r, MW = TW * CH;
	const int tx = get_group_id(0) * TW, ty = get_group_id(1) * TH;
	const int lx = get_local_id(0), ly = get_local_id(1);
	const int LX = get_local_size(0), LY = get_local_size(1);

	weights_load(w, 2 * n, lw);
	tile_load(CH, in, W, H, r, border, tx, ty, TW, TH, tile);
	barrier(CLK_LOCAL_MEM_FENCE);
	// horizontal pass: mid[row][s] = sum_j kx[j] * tile[row][s + j * CH]   (int32, exact)
	for (int row = ly; row < RH; row += LY) {
		for (int s = lx; s < MW; s += LX) {
			if (HAS_ALPHA(CH) && s % CH == CH - 1)
				continue;
			__local const uchar *t = tile + row * RW + s;
			int acc = 0;
			for (int j = 0; j < n; j++)
				acc += lw[j] * t[j * CH];
			mid[row * MW + s] = acc;
		}
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	// vertical pass: sum_i ky[i] * mid[row + i][s]   (int64), then the contract's finish
	const int rows = min(TH, H - ty), ms = min(TW, W - tx) * CH;
	for (int row = ly; row < rows; row += LY) {
		__global uchar *o = out + ((size_t)(ty + row) * W + tx) * CH;
		for (int s = lx; s < ms; s += LX) {
			if (HAS_ALPHA(CH) && s % CH == CH - 1) {
				o[s] = tile[(row + r) * RW + r * CH + s];
				continue;
			}
			__local const int *m = mid + row * MW + s;
			long acc = 0;
			for (int i = 0; i < n; i++)
				acc += (long)lw[n + i] * m[i * MW];
			o[s] = finish(acc, off, D, M, S);
		}
	}
}

static inline void d2_tile(const int CH, __global const uchar *in, __global uchar *out, int W,
			   int H, __global const int *w, int r, int border, long off, long D,
			   long M, int S, int TW, int TH, __local uchar *tile, __local int *lw)
{
	const int n = 2 * r + 1, RW = (TW + 2 * r) * CH;
	const int tx = get_group_id(0) * TW, ty = get_group_id(1) * TH;
	const int lx = get_local_id(0), ly = get_local_id(1);
	const int LX = get_local_size(0), LY = get_local_size(1);

	weights_load(w, n * n, lw);
	tile_load(CH, in, W, H, r, border, tx, ty, TW, TH, tile);
	barrier(CLK_LOCAL_MEM_FENCE);
	const int rows = min(TH, H - ty), ms = min(TW, W - tx) * CH;
	for (int row = ly; row < rows; row += LY) {
		__global uchar *o = out + ((size_t)(ty + row) * W + tx) * CH;
		for (int s = lx; s < ms; s += LX) {
			if (HAS_ALPHA(CH) && s % CH == CH - 1) {
				o[s] = tile[(row + r) * RW + r * CH + s];
				continue;
			}
			int acc = 0;
			for (int dy = 0; dy < n; dy++) {
				__local const uchar *t = tile + (row + dy) * RW + s;
				__local const int *k = lw + dy * n;
				for (int dx = 0; dx < n; dx++)
					acc += k[dx] * t[dx * CH];
			}
			o[s] = finish(acc, off, D, M, S);
		}
	}
}

// Horizontal pass of virtual rows v0 .. v0 + nrows - 1 (they may lie outside the image:
// mapped, or zero) into mid, one int32 row of W * CH samples per virtual row. Alpha
// samples are not written (the vertical pass copies alpha from the input).
static inline void sep_h(const int CH, __global const uchar *in, __global int *mid, int W, int H,
			 __global const int *w, int r, int border, int v0, int nrows)
{
	const int s = get_global_id(0), v = get_global_id(1), n = 2 * r + 1;
	if (s >= W * CH || v >= nrows)
		return;
	const int x = s / CH, c = s % CH;
	if (HAS_ALPHA(CH) && c == CH - 1)
		return;
	__global int *dst = mid + (size_t)v * W * CH + s;
	const int sy = border_map(v0 + v, H, border);
	if (sy < 0) {
		*dst = 0;
		return;
	}
	__global const uchar *row = in + (size_t)sy * W * CH;
	int acc = 0;
	if (x >= r && x + r < W) {
		__global const uchar *p = row + s - r * CH;
		for (int j = 0; j < n; j++)
			acc += w[j] * p[j * CH];
	} else {
		for (int j = 0; j < n; j++) {
			const int sx = border_map(x + j - r, W, border);
			if (sx >= 0)
				acc += w[j] * row[sx * CH + c];
		}
	}
	*dst = acc;
}

// Vertical pass for output rows y0 .. y0 + rows - 1 from mid, whose row i is virtual row
// y0 - r + i.
static inline void sep_v(const int CH, __global const uchar *in, __global const int *mid,
			 __global uchar *out, int W, int H, __global const int *w, int r, int y0,
			 int rows, long off, long D, long M, int S)
{
	const int s = get_global_id(0), y = get_global_id(1), n = 2 * r + 1;
	if (s >= W * CH || y >= rows)
		return;
	const size_t o = (size_t)(y0 + y) * W * CH + s;
	if (HAS_ALPHA(CH) && s % CH == CH - 1) {
		out[o] = in[o];
		return;
	}
	__global const int *m = mid + (size_t)y * W * CH + s;
	__global const int *ky = w + n;
	long acc = 0;
	for (int i = 0; i < n; i++)
		acc += (long)ky[i] * m[(size_t)i * W * CH];
	out[o] = finish(acc, off, D, M, S);
}

static inline void d2(const int CH, __global const uchar *in, __global uchar *out, int W, int H,
		      __global const int *w, int r, int border, long off, long D, long M, int S)
{
	const int s = get_global_id(0), y = get_global_id(1), n = 2 * r + 1;
	if (s >= W * CH || y >= H)
		return;
	const int x = s / CH, c = s % CH;
	const size_t o = (size_t)y * W * CH + s;
	if (HAS_ALPHA(CH) && c == CH - 1) {
		out[o] = in[o];
		return;
	}
	int acc = 0;
	if (x >= r && x + r < W && y >= r && y + r < H) {
		__global const uchar *p = in + o - (size_t)r * W * CH - r * CH;
		for (int dy = 0; dy < n; dy++, p += (size_t)W * CH)
			for (int dx = 0; dx < n; dx++)
				acc += w[dy * n + dx] * p[dx * CH];
	} else {
		for (int dy = 0; dy < n; dy++) {
			const int sy = border_map(y + dy - r, H, border);
			if (sy < 0)
				continue;
			__global const uchar *row = in + (size_t)sy * W * CH;
			for (int dx = 0; dx < n; dx++) {
				const int sx = border_map(x + dx - r, W, border);
				if (sx >= 0)
					acc += w[dy * n + dx] * row[sx * CH + c];
			}
		}
	}
	out[o] = finish(acc, off, D, M, S);
}

// The kernels, one per channel count. convolve_2d_tile ignores mid: its signature matches
// convolve_sep_tile's so that the host passes both the same arguments.
#define CONVOLVE_KERNELS(CH)                                                                    \
	__kernel void convolve_sep_tile_c##CH(                                                  \
	    __global const uchar *in, __global uchar *out, int W, int H, __global const int *w, \
	    int r, int border, long off, long D, long M, int S, int TW, int TH,                 \
	    __local uchar *tile, __local int *mid, __local int *lw)                             \
	{                                                                                       \
		sep_tile(CH, in, out, W, H, w, r, border, off, D, M, S, TW, TH, tile, mid, lw); \
	}                                                                                       \
	__kernel void convolve_2d_tile_c##CH(                                                   \
	    __global const uchar *in, __global uchar *out, int W, int H, __global const int *w, \
	    int r, int border, long off, long D, long M, int S, int TW, int TH,                 \
	    __local uchar *tile, __local int *mid, __local int *lw)                             \
	{                                                                                       \
		d2_tile(CH, in, out, W, H, w, r, border, off, D, M, S, TW, TH, tile, lw);       \
	}                                                                                       \
	__kernel void convolve_sep_h_c##CH(__global const uchar *in, __global int *mid, int W,  \
					   int H, __global const int *w, int r, int border,     \
					   int v0, int nrows)                                   \
	{                                                                                       \
		sep_h(CH, in, mid, W, H, w, r, border, v0, nrows);                              \
	}                                                                                       \
	__kernel void convolve_sep_v_c##CH(__global const uchar *in, __global const int *mid,   \
					   __global uchar *out, int W, int H,                   \
					   __global const int *w, int r, int y0, int rows,      \
					   long off, long D, long M, int S)                     \
	{                                                                                       \
		sep_v(CH, in, mid, out, W, H, w, r, y0, rows, off, D, M, S);                    \
	}                                                                                       \
	__kernel void convolve_2d_c##CH(__global const uchar *in, __global uchar *out, int W,   \
					int H, __global const int *w, int r, int border,        \
					long off, long D, long M, int S)                        \
	{                                                                                       \
		d2(CH, in, out, W, H, w, r, border, off, D, M, S);                              \
	}

CONVOLVE_KERNELS(1)
CONVOLVE_KERNELS(2)
CONVOLVE_KERNELS(3)
CONVOLVE_KERNELS(4)
