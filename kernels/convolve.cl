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
// Images are interleaved 8-bit samples, CH channels, rows packed. Work-items compute
// samples (not pixels), so that neighbouring work-items touch neighbouring bytes and every
// global read and write is coalesced: one sample each in the paths without local memory,
// several consecutive samples and whole-word loads and stores in the others. Each
// kernel exists for CH = 1, 2, 3, 4 (suffix _c1.._c4): the body is an inline function of a
// constant CH, so divisions by CH are cheap and channel patterns known when compiling.
// With 2 or 4 channels the last is alpha: copied, not filtered.
//
//   convolve_sep_strip_cN separable, one work-group per strip of TWS samples x SH rows:
//                         the input rows pass through local memory in chunks, each summed
//                         horizontally once into a ring of int32 rows in local memory,
//                         from which the vertical pass writes the output (sep_strip)
//   convolve_2d_tile_cN   not separable, one work-group per TW x TH pixel tile: the tile
//                         and its halo loaded into local memory once, then the 2-D sum
//   convolve_sep_h_cN     separable without local memory: horizontal pass of a strip of
//                         rows into an int32 scratch buffer ...
//   convolve_sep_v_cN     ... and the vertical pass from it to the output
//   convolve_2d_cN        not separable without local memory, straight from global memory
//   convolve_sep_cpu_cN   separable, radius <= 32, for CPU devices: one work-item a tile
//                         of 64 samples x 64 rows, private rows, no local memory
//   convolve_3x3_cN       any 3 x 3 kernel on rows that start on a word: 8 samples of 2
//                         (1 channel) or 4 rows a work-item from whole words, straight
//                         from global memory, in vector registers, with the 32-bit
//                         finish (finish32) where the host found it exact
//   convolve_3x3_packed_cN  the same for small weights (255 sum|k| <= 65535) on GPUs: two
//                         sums a 32-bit word, 8 (1 channel) or 16 samples of 4 rows
//   convolve_3x3_packed_norm_cN  the same for weights >= 0 whose sums never go past 255
//                         once divided: no clamps, one mul_hi to divide
//   convolve_3x3_packed_sep_cN, convolve_3x3_packed_norm_sep_cN  the same two for a
//                         separable 3 x 3 kernel (box, sobel, rank 1): each input row's
//                         horizontal pass once, then the vertical weights
//   convolve_3x3*_unaligned_cN  each of those five for rows that do not start on a word
//                         (1 to 3 channels): the words shifted into place (d3_load,
//                         d3_store_rows)
#include "channels.clh"
#include "words.clh"

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
// exact for every 0 <= t < 256 D: D = 2^S with M = 1 (a shift); or, for D < 2^16, S = 40 and
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
	if (M == 1) // D = 2^S: a shift, without the 64-bit multiply
		return (uchar)(t >> S);
	if (M)
		return (uchar)((t * M) >> S);
	return (uchar)(t / D);
}

// One byte of an input row at sample index g (any integer): inside the row it is read
// directly; outside, g is split into pixel and channel and the pixel border-mapped.
static inline uchar row_byte(const int CH, __global const uchar *src, int g, int W, int border)
{
	if (g >= 0 && g < W * CH)
		return src[g];
	const int px = g >= 0 ? g / CH : -((CH - 1 - g) / CH);
	const int mx = border_map(px, W, border);
	return mx < 0 ? 0 : src[mx * CH + (g - px * CH)];
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
		for (int s = get_local_id(0); s < RW; s += get_local_size(0))
			t[s] = row_byte(CH, src, s0 + s, W, border);
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

// Finishes 4 consecutive samples g .. g + 3 of the output row o (those at or past ns, the
// row's end, are not written); alpha samples are copied from src, the input row, at the
// same places. One 32-bit store where the row allows.
static inline void put4(const int CH, __global uchar *o, int g, int ns, bool aligned,
			__global const uchar *src, long a0, long a1, long a2, long a3, long off,
			long D, long M, int S)
{
	uchar4 q = (uchar4)(finish(a0, off, D, M, S), finish(a1, off, D, M, S),
			    finish(a2, off, D, M, S), finish(a3, off, D, M, S));
	if (HAS_ALPHA(CH)) {
		if ((g + 0) % CH == CH - 1) q.s0 = src[g];
		if ((g + 1) % CH == CH - 1 && g + 1 < ns) q.s1 = src[g + 1];
		if ((g + 2) % CH == CH - 1 && g + 2 < ns) q.s2 = src[g + 2];
		if ((g + 3) % CH == CH - 1 && g + 3 < ns) q.s3 = src[g + 3];
	}
	if (aligned && g + 4 <= ns) {
		*(__global uint *)(o + g) = as_uint(q);
	} else {
		o[g] = q.s0;
		if (g + 1 < ns) o[g + 1] = q.s1;
		if (g + 2 < ns) o[g + 2] = q.s2;
		if (g + 3 < ns) o[g + 3] = q.s3;
	}
}

// 4 bytes of an input row from sample index g on, each through row_byte (for the vectors
// that leave the row).
static inline uint edge4(const int CH, __global const uchar *src, int g, int W, int border)
{
	return as_uint((uchar4)(row_byte(CH, src, g, W, border),
				row_byte(CH, src, g + 1, W, border),
				row_byte(CH, src, g + 2, W, border),
				row_byte(CH, src, g + 3, W, border)));
}

// The CH bytes at p, a tap's new samples in the horizontal pass, into d[0 .. CH - 1]: one
// 32-bit read for 4 channels (p is then word-aligned; 3% and 10% less time for gauss sigma
// 2 and 8 on 4 channels on the H100), else byte by byte.
static inline void new_bytes(const int CH, __local const uchar *p, int *d)
{
	if (CH == 4) {
		const uint v = *(__local const uint *)p;
		d[0] = v & 255;
		d[1] = (v >> 8) & 255;
		d[2] = (v >> 16) & 255;
		d[3] = v >> 24;
	} else {
		for (int q = 0; q < CH; q++)
			d[q] = p[q];
	}
}

// acc[i] += w * lane i of v, for the 4 lanes: 32 x 32 -> 64-bit products, exact.
static inline void mad4(long *acc, int w, int4 v)
{
	acc[0] += (long)w * v.x;
	acc[1] += (long)w * v.y;
	acc[2] += (long)w * v.z;
	acc[3] += (long)w * v.w;
}

// The separable kernel, fused, streaming down a strip: one work-group per strip of TWS
// output samples (bytes, not pixels: TWS is a multiple of 8 and strips start at multiples
// of TWS in each row) by SH rows. The strip's input rows y0 - r .. y0 + SH + r - 1 pass
// through in chunks of CR rows:
//   1. the chunk is loaded into local memory (tile) as 16-byte vectors: TWS samples plus
//      RC = r * CH samples of halo on each side, the row's start padded down to 16 bytes;
//      vectors that leave the row are border-mapped byte by byte;
//   2. the horizontal pass turns each loaded row into an int32 row (the exact first-pass
//      sums, 8 consecutive samples a work-item) in mid, a ring of NR = CR + 2r rows
//      (input row i of the strip goes to ring row i % NR);
//   3. the vertical pass finishes every output row whose n input rows are now in the ring
//      (4 samples of 2 rows a work-item: each int4 read of mid serves both rows), sums in
//      int64, then the contract's finish; one 32-bit store where the row allows.
// Each input row is loaded and summed horizontally once per strip; only the 2r rows that
// start the strip are extra. The int32 intermediate never goes through global memory.
// With sym (the host found kx and ky symmetric, and 2 * 255 * sum|kx| <= 2^31 - 1 so that
// the sum of two first-pass values fits int32) both passes add the two samples that share
// a weight before multiplying: r + 1 multiplies a sample instead of n. With 2 or 4
// channels alpha samples are summed too (the bounds hold for them as well) but their
// output is copied from the input.
// Host: local memory tile = CR rows of RB = 16 L4 + 4 bytes, mid = (CR + 2r) * TWS ints, lw =
// 2n ints, where L4 = (pad + TWS + 2 RC + CH + 15) / 16, pad = -RC mod 16. A tile row holds
// L4 vectors and one word more, an odd number of words, so that rows next to each other
// start in banks of different parity. In strips of 128 samples a warp's horizontal pass
// reads two rows, 16 items a row 8 bytes apart: 32 banks, where rows of 16 L4 bytes put two
// reads on each of 16. 8K gauss on an H100: 5% (sigma 2) and 9% (sigma 8) less time on RGB,
// 1-3% on grey (docs/BENCHMARKS.md, thirty-first session).
static inline void sep_strip(const int CH, __global const uchar *in, __global uchar *out, int W,
			     int H, __global const int *w, int r, int border, long off, long D,
			     long M, int S, int TWS, int SH, int CR, int sym,
			     __local uint *tile, __local int4 *mid, __local int *lw)
{
	const int n = 2 * r + 1, RC = r * CH, pad = (-RC) & 15, ns = W * CH, NR = CR + 2 * r;
	const int L4 = (pad + TWS + 2 * RC + CH + 15) >> 4, RB = 16 * L4 + 4, T4 = TWS >> 2;
	const int S0 = get_group_id(0) * TWS, y0 = get_group_id(1) * SH, G0 = S0 - RC - pad;
	const int lx = get_local_id(0), ly = get_local_id(1);
	const int LX = get_local_size(0), LY = get_local_size(1);
	const int lid = ly * LX + lx, lsize = LX * LY;
	const bool aligned = (ns & 3) == 0, aligned16 = (ns & 15) == 0; // every row starts so
	const int rows = min(SH, H - y0), nin = rows + 2 * r;
	__local const uchar *tb = (__local const uchar *)tile;

	weights_load(w, 2 * n, lw);
	for (int c0 = 0; c0 < nin; c0 += CR) {
		const int cr = min(CR, nin - c0);
		// 1. input rows c0 .. c0 + cr - 1 of the strip (virtual rows y0 - r + c0 ..)
		for (int q = lid; q < cr * L4; q += lsize) {
			const int row = q / L4, u = q - row * L4;
			const int sy = border_map(y0 - r + c0 + row, H, border), g = G0 + 16 * u;
			__global const uchar *src = in + (size_t)max(sy, 0) * ns;
			uint4 v;
			if (sy < 0)
				v = (uint4)(0);
			else if (g >= 0 && g + 16 <= ns)
				v = aligned16 ? *(__global const uint4 *)(src + g)
					      : as_uint4(vload16(0, src + g));
			else
				v = (uint4)(edge4(CH, src, g, W, border),
					    edge4(CH, src, g + 4, W, border),
					    edge4(CH, src, g + 8, W, border),
					    edge4(CH, src, g + 12, W, border));
			vstore4(v, 0, tile + row * (RB >> 2) + 4 * u);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		// 2. horizontal: ring row (c0 + i) % NR, sample j = sum_k kx[k] * tile byte (pad +
		// j + k CH) of row i. b[] holds the 8 samples of tap k (from the left), e[] those
		// of tap n - 1 - k (from the right); the next tap moves them by CH.
		for (int i = ly; i < cr; i += LY) {
			__local int4 *m = mid + ((c0 + i) % NR) * T4;
			for (int j0 = 8 * lx; j0 < TWS; j0 += 8 * LX) {
				__local const uchar *t = tb + i * RB + pad + j0;
				int a[8], b[8];
#pragma unroll
				for (int q = 0; q < 8; q++)
					b[q] = t[q];
				if (sym) {
					__local const uchar *u = t + 2 * RC, *c = t + RC;
					const int wc = lw[r];
					int e[8];
#pragma unroll
					for (int q = 0; q < 8; q++) {
						a[q] = wc * c[q];
						e[q] = u[q];
					}
					for (int k = 0; k < r; k++) {
						const int wk = lw[k];
#pragma unroll
						for (int q = 0; q < 8; q++)
							a[q] += wk * (b[q] + e[q]);
						t += CH;
						u -= CH;
#pragma unroll
						for (int q = 0; q < 8 - CH; q++)
							b[q] = b[q + CH];
						new_bytes(CH, t + 8 - CH, b + 8 - CH);
#pragma unroll
						for (int q = 7; q >= CH; q--)
							e[q] = e[q - CH];
						new_bytes(CH, u, e);
					}
				} else {
#pragma unroll
					for (int q = 0; q < 8; q++)
						a[q] = 0;
					for (int k = 0; k < n; k++) {
						const int wk = lw[k];
#pragma unroll
						for (int q = 0; q < 8; q++)
							a[q] += wk * b[q];
						t += CH;
#pragma unroll
						for (int q = 0; q < 8 - CH; q++)
							b[q] = b[q + CH];
						new_bytes(CH, t + 8 - CH, b + 8 - CH);
					}
				}
				m[j0 >> 2] = (int4)(a[0], a[1], a[2], a[3]);
				m[(j0 >> 2) + 1] = (int4)(a[4], a[5], a[6], a[7]);
			}
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		// 3. vertical: output rows o0 .. o1 - 1 of the strip, those whose last input row
		// (o + 2r) came in this chunk. Rows o and o + 1 together; o + 1 is stored only
		// below o1 (its ring rows are read either way: harmless). mid is read as whole
		// int4s, never through vload4: NVIDIA's compiler split those into four 32-bit
		// accesses 16 bytes apart, four-way bank conflicts.
		const int o0 = max(c0 - 2 * r, 0), o1 = c0 + cr - 2 * r;
		for (int o = o0 + 2 * ly; o < o1; o += 2 * LY) {
			for (int j0 = 4 * lx; j0 < TWS; j0 += 4 * LX) {
				const int g = S0 + j0;
				if (g >= ns)
					break;
				__local const int4 *m = mid + (j0 >> 2);
				long a[4] = { 0, 0, 0, 0 }, c[4] = { 0, 0, 0, 0 }; // rows o, o + 1
				// sl: the ring row of input row o, then of the taps that follow
				int sl = o % NR;
				if (sym) {
					// row o adds ring rows o + k and o + n - 1 - k,
					// row o + 1 rows o + 1 + k and o + n - k; L and
					// R1 are the outer ones of tap k
					int sr = (o + n) % NR;
					int4 L = m[sl * T4], R1 = m[sr * T4];
					for (int k = 0; k < r; k++) {
						const int wk = lw[n + k];
						if (++sl == NR)
							sl = 0;
						if (--sr < 0)
							sr = NR - 1;
						const int4 L1 = m[sl * T4], R = m[sr * T4];
						mad4(a, wk, L + R);
						mad4(c, wk, L1 + R1);
						L = L1;
						R1 = R;
					}
					// L is ring row o + r, R1 row o + r + 1
					mad4(a, lw[n + r], L);
					mad4(c, lw[n + r], R1);
				} else {
					// ring row o + i: weight ky[i] for row o,
					// ky[i - 1] for row o + 1
					mad4(a, lw[n], m[sl * T4]);
					for (int i = 1; i <= n; i++) {
						if (++sl == NR)
							sl = 0;
						const int4 v = m[sl * T4];
						mad4(c, lw[n + i - 1], v);
						if (i < n)
							mad4(a, lw[n + i], v);
					}
				}
				const size_t y = (size_t)(y0 + o) * ns;
				put4(CH, out + y, g, ns, aligned, in + y, a[0], a[1], a[2], a[3],
				     off, D, M, S);
				if (o + 1 < o1)
					put4(CH, out + y + ns, g, ns, aligned, in + y + ns, c[0],
					     c[1], c[2], c[3], off, D, M, S);
			}
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

// The contract's last step in 32-bit arithmetic on 8 sums, for sums with |acc| + |off| <
// 2^31 (the host checked it): u = max(t, 0) and q = floor(u / D) as ((u * M) >> 32) >> s
// (u * M in 64 bits: one 32 x 32 -> 64 multiply, fast on CPU devices too, where mul_hi
// measured slow), saturated to 255. The host chose M and s so that q is exact for 0 <= u <
// 256 D and at least 256 above it: D = 2^s with M = 0 (a plain shift, s <= 31); or D < 2^23
// not a power of two, s = floor(log2 D) and M = floor(2^(32+s) / D) + 1 < 2^32: then M D =
// 2^(32+s) + e with 0 < e <= D, and u M / 2^(32+s) = u / D + u e / (D 2^(32+s)) where u e <
// 256 D^2 <= 2^(32+s) (as D < 2^(s+1) and s <= 22), so the error term stays below 1 / D and
// never reaches the next integer; and since M / 2^(32+s) > 1 / D, q is never below
// floor(u / D).
static inline uchar8 finish32(int8 acc, int off, uint M, int s)
{
	const uint8 u = convert_uint8(max(acc + off, 0));
	const uint8 q = M ? convert_uint8((convert_ulong8(u) * M) >> 32) >> s : u >> s;
	return convert_uchar8(min(q, (uint8)255));
}

// 3 x 3 kernels, separable or not, on rows that start on a word (W * CH a multiple of 4; the
// _unaligned kernels take the others, through d3_load and d3_store_rows):
// each work-item computes the D3_SAMPLES (8) consecutive samples g .. g + 7 of the
// D3_ROWS(CH) (2 or 4) rows from y0 as the 2-D sum acc = sum k[dy][dx] in(x + dx, y + dy)
// in int32 (exact: the host checked 255 sum|k| and built k = ky kx for a separable kernel;
// the 9 weights come as arguments k0..k8, row by row, so that no buffer is made for them).
// From each of the D3_ROWS(CH) + 2 input rows it needs it reads 4 whole words, bytes g - 4
// .. g + 11 (L1/L2 serve the overlap between neighbours), as one int16 vector; the three
// taps of a row are shuffles of it (d3_tap), and the sums are int8 vectors (on an H100 and
// an H200 this took 13-45% less time than 8 samples of one row through private byte
// arrays: docs/BENCHMARKS.md, seventh session). No local memory, no barrier (but in the
// _unaligned kernels' stores, d3_store_rows). The interior items, in the rectangle of
// samples gA .. gB - 1 and rows yA .. yB - 1 that the host gives (src/stages/convolve.c,
// d3_interior: every input row and word they read lies inside the image), read the rows
// directly. The items on the image's edges run the same sums on border-mapped input
// (d3_item2 with EDGE, d3_words), 8 samples of 2 rows at a time. The last item of a row may
// have fewer samples, the last of a column fewer rows. In the aligned kernels the edge items
// are the other items of the same kernel: a warp that holds one runs both forms, and a cheap
// edge form matters (with edge items computed sample by sample through border_map, box 3x3
// on 8K grey took 0.060 ms on an H100 against 0.043: docs/BENCHMARKS.md, ninth session).
// The _unaligned kernels, and the CPU family's, leave them to a kernel of their own,
// convolve_3x3_edge_cN (d3_edge; D3_OWN_EDGES). Built once a channel count instead of into
// each _unaligned kernel, it kept the convolve program's first build on an H100 at 16 s
// instead of 24 s, and its load from the binary cache at 22 ms instead of 46 ms; on PoCL
// (2 cores) box and sobel-x 3x3 on 8K images took up to a third less time with it
// (docs/BENCHMARKS.md, twenty-sixth session). On the H100 the aligned kernels keep theirs,
// as a second kernel took 0.005 ms more for 8K grey.
// D3_ROWS(CH): the rows an item computes. With 2 to 4 channels 4 rows (6 input rows for 4
// output rows, against 4 for 2) took 5-17% less time than 2 for box and sobel-x 3x3 on 8K
// images on an H200, 2-17% on an H100 and 6-10% on PoCL (RGB, 2 cores), but 1-4% more
// with 1 channel (H200), which keeps 2; with the edge items also of 4 rows it was slower
// than 2. On PoCL the items' private arrays must be of the size of the rows they hold (one
// body, D3_ITEM, for 2 and 4 rows), and d3 must be always_inline (presumably PoCL did not
// inline it otherwise, and so did not know CH): either slip took 1.5 to 2 times as long
// (docs/BENCHMARKS.md, fourteenth session). src/stages/convolve.c launches with the
// same rows.
// Global (ceil(W * CH / D3_SAMPLES), ceil(H / D3_ROWS(CH))).
#define D3_SAMPLES 8
#define D3_ROWS(CH) ((CH) == 1 ? 2 : 4)

// Bytes i .. i + 7 of b: the samples one tap of a 3 x 3 kernel reads for 8 outputs.
static inline int8 d3_tap(int16 b, const int i)
{
	return shuffle(b, (uint8)(i) + (uint8)(0, 1, 2, 3, 4, 5, 6, 7));
}

// The CH samples of pixel mx of the input row src, as the left (LEFT) or right end of a word:
// a word of d3_words that leaves the row holds samples of only one pixel that a tap reads.
// 0 where mx is -1, the zero border. (edge4 would give the same taps, with a border_map for
// every byte: box 3x3 on 8K grey took 0.052 ms on an H100 that way, 0.043 this way.)
static inline uint d3_pixel(const int CH, __global const uchar *src, int mx, const bool LEFT)
{
	uint v = 0;
	if (mx >= 0)
		for (int c = 0; c < CH; c++)
			v |= (uint)src[mx * CH + c] << (8 * (c + (LEFT ? 4 - CH : 0)));
	return v;
}

// Samples g - 4 .. g + 11 of input row sy (-1: the zero border's row of zeros), a row of ns
// samples, as the taps of samples g .. g + 7 read them: whole words inside the row; where a
// word leaves it, the taps read only pixel -1 (mapped to pixel mxl) on the left, or pixel W
// (mxr) on the right, so that word is that pixel's samples (d3_pixel), the rest unread. For
// rows that start on a word; d3_words_any takes any.
static inline int16 d3_words(const int CH, __global const uchar *in, int W, int sy, int g,
			     int mxl, int mxr)
{
	const int ns = W * CH;
	if (sy < 0)
		return 0;
	__global const uchar *src = in + (size_t)sy * ns;
	__global const uint *p = (__global const uint *)(src + g);
	uint4 v;
	v.s0 = g >= 4 ? p[-1] : d3_pixel(CH, src, mxl, true);
	v.s1 = p[0]; // g < ns, both multiples of 4
	v.s2 = g + 8 <= ns ? p[1] : d3_pixel(CH, src, mxr, false); // else g + 4 = ns
	v.s3 = g + 12 <= ns ? p[2] : g + 8 == ns ? d3_pixel(CH, src, mxr, false) : 0;
	return convert_int16(as_uchar16(v));
}

// The unaligned kernels (UA: W * CH any size, so rows need not start on a word; CH < 4, as 4
// channels make whole words of every row) load and store rows through these two.
// d3_load: the NW words of the image from byte b on, b of any alignment. CPU devices load
// words at any address. On others each word is made of the two aligned words that hold it,
// shifted into place; the aligned word after the last is read only where b is not aligned,
// and then holds bytes that are used. The caller keeps b + 4 NW + 3 inside the image, so
// that no aligned word reaches past its end.
static inline void d3_load(__global const uchar *in, size_t b, uint *v, const int NW)
{
#ifdef CLIMG_CPU_KERNELS
#pragma unroll
	for (int i = 0; i < NW; i++)
		v[i] = as_uint(vload4(0, in + b + 4 * i));
#else
	__global const uint *p = (__global const uint *)in + (b >> 2);
	const int sh = 8 * (int)(b & 3);
	uint lo = p[0];
#pragma unroll
	for (int i = 0; i < NW; i++) {
		const uint hi = sh || i + 1 < NW ? p[i + 1] : 0;
		v[i] = word_at(lo, hi, sh);
		lo = hi;
	}
#endif
}

// d3_words on rows of any alignment (for convolve_3x3_edge_cN). A word inside the
// row through d3_load where the two aligned words that hold it lie inside the image, else
// byte by byte; the word left of the row (g = 0) is pixel -1's samples (mapped to pixel mxl,
// d3_pixel); a word that reaches past the row's end holds the row's last samples, then pixel
// W's (mxr), the rest unread.
static inline int16 d3_words_any(const int CH, __global const uchar *in, int W, int H, int sy,
				 int g, int mxl, int mxr)
{
	const int ns = W * CH;
	if (sy < 0)
		return 0;
	const size_t rb = (size_t)sy * ns, nbytes = (size_t)ns * H;
	__global const uchar *src = in + rb;
	uint v[4];
#pragma unroll
	for (int k = 0; k < 4; k++) {
		const int t = g - 4 + 4 * k; // the word's first sample
		if (t < 0) {
			v[k] = d3_pixel(CH, src, mxl, true);
		} else if (t + 4 <= ns && rb + t + 8 <= nbytes) {
			d3_load(in, rb + t, v + k, 1);
		} else {
			uint x = 0;
			for (int i = 0; i < 4; i++) {
				const int u = t + i - ns; // past the row's end from 0 on
				const uint b = u < 0		  ? src[t + i]
					       : u < CH && mxr >= 0 ? src[mxr * CH + u]
								    : 0;
				x |= b << (8 * i);
			}
			v[k] = x;
		}
	}
	return convert_int16(as_uchar16((uint4)(v[0], v[1], v[2], v[3])));
}

// The unaligned kernels' interior items give each 8 output samples, words xy for output
// bytes ob .. ob + 7, to d3_put: CPU devices store them there at once (they store words at
// any address); on others they go to qo (at i and i + 1) for d3_store_rows.
static inline void d3_put(__global uchar *out, size_t ob, uint *qo, int i, uint2 xy)
{
#ifdef CLIMG_CPU_KERNELS
	vstore8(as_uchar8(xy), 0, out + ob);
#else
	qo[i] = xy.x;
	qo[i + 1] = xy.y;
#endif
}

// Other than CPU devices, the unaligned kernels' interior items give their NR output rows as
// words, NW a row, in q; d3_store_rows stores them at output bytes (y0 + j) ns + g on, j < NR,
// of any alignment. The aligned words inside an item's row are stored as words, each made of
// the two words of q that hold it. The aligned word an item's row shares with the next
// item's (the one past its last whole word) is stored whole by the item where the next item
// is an interior item of the same work-group: the items first leave their rows' first words
// in heads (in local memory, D3_HEADS words: at most D3_LOCAL items, the work-group size
// src/stages/convolve.c keeps to, D3_LOCAL_W x D3_LOCAL_H, of at most D3P_ROWS rows). The
// shared words at the work-group's ends and next to edge items are stored byte by byte.
// Every item of the work-group calls this (it has a barrier); inner: whether this one is an
// interior item, whose q holds its rows; the interior items' samples gA .. gB - 1 (d3).
// Without it, with every shared word stored byte by byte, box 3x3 on a 7681 x 4321 image
// took 0.196 (RGB) and 0.080 ms (grey) on an H100 and not 0.124 and 0.060 ms
// (docs/BENCHMARKS.md, twenty-sixth session).
#define D3_LOCAL 128
#define D3_HEADS (D3_LOCAL * D3P_ROWS)
static inline void d3_store_rows(__global uchar *out, int ns, int g, int y0, const int NR,
				 const int NW, const uint *q, bool inner, int gA, int gB,
				 __local uint *heads)
{
#ifndef CLIMG_CPU_KERNELS // (d3_put stored them)
	const int NS = 4 * NW, lx = get_local_id(0), LX = get_local_size(0);
	const int l = get_local_id(1) * LX + lx;
	if (inner)
#pragma unroll
		for (int j = 0; j < NR; j++)
			heads[l * NR + j] = q[j * NW];
	barrier(CLK_LOCAL_MEM_FENCE);
	if (!inner)
		return;
	// whether the items left and right are interior items of this work-group (they are in
	// the same rows, so inside those)
	const bool left = lx > 0 && g - NS >= gA, right = lx + 1 < LX && g + NS < gB;
#pragma unroll
	for (int j = 0; j < NR; j++) {
		const size_t o = (size_t)(y0 + j) * ns + g;
		const int sh = (int)(o & 3);
		if (!sh) {
			__global uint *p = (__global uint *)(out + o);
#pragma unroll
			for (int i = 0; i < NW; i++)
				p[i] = q[j * NW + i];
			continue;
		}
		__global uint *p = (__global uint *)(out + (o - sh)) + 1; // the first whole word
		const int hs = 8 * (4 - sh);
#pragma unroll
		for (int i = 0; i + 1 < NW; i++)
			p[i] = word_at(q[j * NW + i], q[j * NW + i + 1], hs);
		const uint last = q[j * NW + NW - 1];
		if (right) {
			p[NW - 1] = word_at(last, heads[(l + 1) * NR + j], hs);
		} else {
			for (int b = 4 - sh; b < 4; b++)
				out[o + NS - 4 + b] = (uchar)(last >> (8 * b));
		}
		if (!left)
			for (int b = 0; b < 4 - sh; b++)
				out[o + b] = (uchar)(q[j * NW] >> (8 * b));
	}
#endif
}

// d3_item2 and d3_item4: the NR (2 or 4) output rows from y0 of samples g .. g + 7. The
// interior items read whole words straight from the input rows, or with UA (rows of any
// alignment) through d3_load, and then give their rows' words to d3_put (qo: NR rows of 2
// words). EDGE (the edge items): the input rows border-mapped, through d3_words, or with UA
// (convolve_3x3_edge_cN's, any alignment) d3_words_any; the rows past the image's end and
// the samples past a row's end are not stored; with UA the rest as words where they are whole
// aligned words, else byte by byte. (Where the aligned kernels' edge items took d3_words_any
// and its stores too, box 3x3 on 8K images took 14% (RGB) and 21% (grey) more time on an
// H100: they need 80-86 registers, not 56-71, twenty-sixth session.) One body for
// both (D3_ITEM): their private arrays are of a constant size, that of the rows they hold
// (see D3_ROWS for why).
#define D3_ITEM(NR)                                                                              \
	static inline void d3_item##NR(const int CH, __global const uchar *in,                   \
				       __global uchar *out, int W, int H, const int *w,          \
				       int border, int off, uint M, int s, int g, int y0,        \
				       const bool EDGE, const bool UA, uint *qo)                 \
	{                                                                                        \
		const int ns = W * CH;                                                           \
		/* the pixels that the taps read left of the row and right of it */              \
		const int mxl = EDGE ? border_map(-1, W, border) : 0;                            \
		const int mxr = EDGE ? border_map(W, W, border) : 0;                             \
		int8 acc[NR], centre[NR]; /* centre: the output rows' own samples (alpha) */     \
		_Pragma("unroll") for (int j = 0; j < NR; j++) acc[j] = 0;                       \
		_Pragma("unroll") for (int r = 0; r < NR + 2; r++) { /* input row y0 - 1 + r */  \
			const int sy = y0 - 1 + r;                                               \
			int16 b;                                                                 \
			if (EDGE && UA) {                                                        \
				b = d3_words_any(CH, in, W, H, border_map(sy, H, border), g,     \
						 mxl, mxr);                                      \
			} else if (EDGE) {                                                       \
				b = d3_words(CH, in, W, border_map(sy, H, border), g, mxl, mxr); \
			} else if (UA) {                                                         \
				uint v[4];                                                       \
				d3_load(in, (size_t)sy * ns + g - 4, v, 4);                      \
				b = convert_int16(as_uchar16((uint4)(v[0], v[1], v[2], v[3])));  \
			} else {                                                                 \
				__global const uint *p = (__global const uint *)(                \
					in + (size_t)sy * ns + g);                               \
				b = convert_int16(as_uchar16((uint4)(p[-1], p[0], p[1], p[2]))); \
			}                                                                        \
			const int8 L = d3_tap(b, 4 - CH), C = d3_tap(b, 4), R = d3_tap(b, 4 + CH); \
			/* dy: this input row's kernel row for output row y0 + j */              \
			_Pragma("unroll") for (int j = 0; j < NR; j++) {                         \
				const int dy = r - j;                                            \
				if (dy >= 0 && dy < 3)                                           \
					acc[j] += w[3 * dy] * L + w[3 * dy + 1] * C +            \
						  w[3 * dy + 2] * R;                             \
				if (dy == 1)                                                     \
					centre[j] = C;                                           \
			}                                                                        \
		}                                                                                \
		/* with 2 or 4 channels, the lanes that hold alpha (g is a multiple of 8, so    \
		   of CH) */                                                                     \
		const char8 alpha = convert_char8((int8)(0, 1, 2, 3, 4, 5, 6, 7) % CH == CH - 1); \
		_Pragma("unroll") for (int j = 0; j < NR; j++) {                                 \
			if (EDGE && y0 + j >= H)                                                 \
				break;                                                           \
			uchar8 q = finish32(acc[j], off, M, s);                                  \
			if (HAS_ALPHA(CH))                                                       \
				q = select(q, convert_uchar8(centre[j]), alpha);                 \
			const size_t ob = (size_t)(y0 + j) * ns + g;                             \
			if (EDGE && UA && (ob & 3 || g + 8 > ns)) {                              \
				const uchar qb[8] = { q.s0, q.s1, q.s2, q.s3,                    \
						      q.s4, q.s5, q.s6, q.s7 };                  \
				for (int i = 0; i < 8 && g + i < ns; i++)                        \
					out[ob + i] = qb[i];                                     \
			} else if (UA && !EDGE) {                                                \
				d3_put(out, ob, qo, 2 * j, as_uint2(q));                         \
			} else {                                                                 \
				__global uint *o = (__global uint *)(out + ob);                  \
				o[0] = as_uint2(q).x;                                            \
				if (!EDGE || UA || g + 4 < ns)                                   \
					o[1] = as_uint2(q).y;                                    \
			}                                                                        \
		}                                                                                \
	}
D3_ITEM(2)
D3_ITEM(4)

// ---- convolve_3x3_packed: small weights, two sums a word ---------------------------------
// Where 255 sum|k| <= 65535 (the host checked it: box, sobel, sharpen, most integer kernels),
// the interior items sum two samples in each 32-bit word, one in each 16-bit half (SWAR):
// one multiply-add then weighs two samples. Each half starts at Z = 255 times the sum of
// the negative weights' |k|, so that it holds acc + Z, which lies in 0 .. 255 sum|k| <=
// 65535: the word's exact value is then (acc_lo + Z) + (acc_hi + Z) 2^16, whatever the
// carries and borrows between the halves on the way (the sum is taken modulo 2^32, and its
// exact value is below 2^32). The division is in 32 bits too (finish_packed). On 8K images
// on an H200 this took 8-26% less time than convolve_3x3 for box and sobel-x 3x3 with 1 to
// 4 channels (docs/BENCHMARKS.md, fifteenth session). Only the GPU kernels take it.
//
// Samples g .. g + NS - 1 of D3P_ROWS rows an item (NS = D3P_SAMPLES(CH)), from the NS / 4 +
// 2 words of each input row that hold bytes g - 4 .. g + NS + 3. The sums of samples g + i
// and g + i + 2 share a word, i = 0, 1, 4, 5, 8, 9, ...: word a holds samples g + b(a) and
// g + b(a) + 2, b(a) = 4 (a / 2) + a % 2, so that words 2h and 2h + 1 make output word h.
// The edge items are convolve_3x3's (d3_item2), 8 samples and 2 rows at a time.
// Global (ceil(W * CH / D3P_SAMPLES(CH)), ceil(H / D3P_ROWS)).
//
// convolve_3x3_packed_norm (NORM) is for the weights the host found "normalised" (packed_setup):
// none negative (Z = 0), off >= 0, and u = acc + off at most 65535 and below 256 D, so that
// q = floor(u / D) needs neither clamp. Its halves start at off instead of 0, and the division
// is mul_hi(u, pm) = (u * pm) >> 32, exact for those u (the host checked it). On 8K images on
// an H200 box 3x3 took 4-6% less time than with convolve_3x3_packed (docs/BENCHMARKS.md,
// seventeenth session).
//
// convolve_3x3_packed_sep and convolve_3x3_packed_norm_sep (SEP) are the same two for a
// kernel the host found separable, k[3 dy + dx] = ky[dy] kx[dx]: each input row's words are
// weighed by kx once (3 multiply-adds a word) and the row's sums then added to each output
// row's with one multiply by ky[dy], instead of 3 multiply-adds a word for each output row
// the input row reaches. The words hold the same sums modulo 2^32 (the arithmetic is the same
// linear combination), so the bytes are the same. On 8K images on an H200, box and sobel-x
// 3x3 took 4-6% less time than the unseparated forms on RGB and 1-7% on grey; on an H100,
// where RGB is bound by memory, between 4% less and 1% more (docs/BENCHMARKS.md,
// twenty-second session).
#define D3P_SAMPLES(CH) ((CH) == 1 ? 8 : 16)
#define D3P_ROWS 4

// The word of an input row that starts at byte g + t (-4 <= t <= NS), from its words v:
// v[0] starts at byte g - 4.
static inline uint d3p_word(const uint *v, const int t)
{
	const int i = (t + 4) / 4, sh = (t + 4) % 4;
	if (sh == 0)
		return v[i];
	return (uint)(as_ulong((uint2)(v[i], v[i + 1])) >> (8 * sh));
}

// Samples g + t and g + t + 2 of an input row as the two halves of a word.
static inline uint d3p_pair(const uint *v, const int t)
{
	if (t % 2 == 0)
		return d3p_word(v, t) & 0x00FF00FFu;
	return (d3p_word(v, t - 1) >> 8) & 0x00FF00FFu;
}

// The 8 consecutive samples that words w[0 .. 3] hold (w[0]: samples 0 and 2, w[1]: 1 and 3,
// w[2]: 4 and 6, w[3]: 5 and 7), in order.
static inline int8 d3p_unpack(const uint *w)
{
	return convert_int8((uint8)(w[0] & 0xFFFFu, w[1] & 0xFFFFu, w[0] >> 16, w[1] >> 16,
				    w[2] & 0xFFFFu, w[3] & 0xFFFFu, w[2] >> 16, w[3] >> 16));
}

// The contract's last step on 8 sums t = acc + off, in 32 bits: u = max(t, 0) and q =
// min((u * pm) >> ps, 255). The host chose pm and ps (packed_setup, which says how it
// checked them) so that u * pm stays below 2^32 for every u this kernel can make and
// (u * pm) >> ps = floor(u / D) for u <= 256 D, so q is floor(u / D) below 256 D and 255
// above it.
static inline uchar8 finish_packed(int8 t, uint pm, int ps)
{
	const uint8 u = convert_uint8(max(t, 0));
	return convert_uchar8(min((u * pm) >> ps, (uint8)255));
}

// d3p_item8 and d3p_item16, d3p_item8_norm and d3p_item16_norm (NORM), and the same four
// with _sep (SEP: k is kx[3] then ky[3], not the 9 weights): the interior item of NS samples
// (one body, D3P_ITEM: private arrays of a constant size, as for D3_ITEM). With UA the input
// rows come through d3_load, and the output rows' words go to d3_put (qo: D3P_ROWS rows of
// NS / 4).
#define D3P_ITEM(NS, NORM, SEP, SUFFIX)                                                          \
	static inline void d3p_item##NS##SUFFIX(const int CH, __global const uchar *in,          \
					__global uchar *out, int W, const int *k, uint Z,        \
					int off, uint pm, int ps, int g, int y0, const bool UA,  \
					uint *qo)                                                \
	{                                                                                        \
		const int ns = W * CH;                                                           \
		uint acc[D3P_ROWS][NS / 2];                                                      \
		int8 centre[D3P_ROWS][NS / 8]; /* the output rows' own samples (alpha) */        \
		_Pragma("unroll") for (int j = 0; j < D3P_ROWS; j++)                             \
			_Pragma("unroll") for (int a = 0; a < NS / 2; a++)                       \
				acc[j][a] = (NORM ? (uint)off : Z) * 0x00010001u;                \
		_Pragma("unroll") for (int r = 0; r < D3P_ROWS + 2; r++) { /* row y0 - 1 + r */  \
			const size_t rb = (size_t)(y0 - 1 + r) * ns; /* the row's first byte */  \
			__global const uint *p = (__global const uint *)(in + rb + g);           \
			uint v[NS / 4 + 2];                                                      \
			if (UA)                                                                  \
				d3_load(in, rb + g - 4, v, NS / 4 + 2);                          \
			else                                                                     \
				_Pragma("unroll") for (int i = 0; i < NS / 4 + 2; i++)           \
					v[i] = p[i - 1];                                         \
			/* x[t][a]: the samples tap t (left, centre, right) reads for word a */  \
			uint x[3][NS / 2];                                                       \
			_Pragma("unroll") for (int t = 0; t < 3; t++)                            \
				_Pragma("unroll") for (int a = 0; a < NS / 2; a++)               \
					x[t][a] = d3p_pair(v, 4 * (a / 2) + a % 2 + (t - 1) * CH); \
			uint hs[NS / 2]; /* SEP: the row's horizontal pass */                    \
			_Pragma("unroll") for (int a = 0; a < NS / 2; a++)                       \
				hs[a] = SEP ? (uint)k[0] * x[0][a] + (uint)k[1] * x[1][a] +      \
						      (uint)k[2] * x[2][a]                       \
					    : 0;                                                 \
			_Pragma("unroll") for (int j = 0; j < D3P_ROWS; j++) {                   \
				const int dy = r - j;                                            \
				if (dy >= 0 && dy < 3)                                           \
					_Pragma("unroll") for (int a = 0; a < NS / 2; a++)       \
						acc[j][a] += SEP ? (uint)k[3 + dy] * hs[a]      \
								 : (uint)k[3 * dy] * x[0][a] +  \
								   (uint)k[3 * dy + 1] * x[1][a] + \
								   (uint)k[3 * dy + 2] * x[2][a]; \
				if (HAS_ALPHA(CH) && dy == 1)                                    \
					_Pragma("unroll") for (int h = 0; h < NS / 8; h++)       \
						centre[j][h] = d3p_unpack(x[1] + 4 * h);         \
			}                                                                        \
		}                                                                                \
		const char8 alpha = convert_char8((int8)(0, 1, 2, 3, 4, 5, 6, 7) % CH == CH - 1); \
		_Pragma("unroll") for (int j = 0; j < D3P_ROWS; j++) {                           \
			__global uint *o = (__global uint *)(out + (size_t)(y0 + j) * ns + g);   \
			_Pragma("unroll") for (int h = 0; h < NS / 8; h++) {                     \
				const int8 u = d3p_unpack(acc[j] + 4 * h);                       \
				uchar8 q = NORM ? convert_uchar8(mul_hi(convert_uint8(u), pm))   \
						: finish_packed(u + (off - (int)Z), pm, ps);     \
				if (HAS_ALPHA(CH))                                               \
					q = select(q, convert_uchar8(centre[j][h]), alpha);      \
				if (UA) {                                                        \
					d3_put(out, (size_t)(y0 + j) * ns + g + 8 * h, qo,       \
					       j * NS / 4 + 2 * h, as_uint2(q));                 \
				} else {                                                         \
					o[2 * h] = as_uint2(q).x;                                \
					o[2 * h + 1] = as_uint2(q).y;                            \
				}                                                                \
			}                                                                        \
		}                                                                                \
	}

D3P_ITEM(8, false, false, )
D3P_ITEM(16, false, false, )
D3P_ITEM(8, true, false, _norm)
D3P_ITEM(16, true, false, _norm)
D3P_ITEM(8, false, true, _sep)
D3P_ITEM(16, false, true, _sep)
D3P_ITEM(8, true, true, _norm_sep)
D3P_ITEM(16, true, true, _norm_sep)

// One item of convolve_3x3 (PACKED false: D3_SAMPLES samples of D3_ROWS(CH) rows; off, M
// and s for finish32) or convolve_3x3_packed (PACKED: D3P_SAMPLES(CH) samples of D3P_ROWS
// rows; its interior items also take Z, pm and ps) or convolve_3x3_packed_norm (PACKED and
// NORM: the interior items take pm, not Z or ps), each of the packed two with SEP (the
// interior items take kxy, kx[3] then ky[3], instead of w; the edge items take w). The
// interior items are those whose samples g and rows y0 lie in gA .. gB - 1 and yA .. yB - 1
// (the host keeps them NS and NR apart from the image's sides, with NR + 2 input rows and
// the words of samples g - 4 .. g + NS + 3 inside the image, and, with UA, one more word on
// the right for d3_load). UA: the _unaligned forms, whose interior items store through
// d3_store_rows (heads: its local memory). Where D3_OWN_EDGES(UA) is false the edge items
// are left to convolve_3x3_edge_cN.
#ifdef CLIMG_CPU_KERNELS
#define D3_OWN_EDGES(UA) false
#else
#define D3_OWN_EDGES(UA) (!(UA))
#endif
static inline __attribute__((always_inline)) void
d3(const int CH, __global const uchar *in, __global uchar *out, int W, int H, const int *w,
   int border, int off, uint M, int s, const bool PACKED, const bool NORM, uint Z, uint pm,
   int ps, const bool SEP, const int *kxy, int gA, int gB, int yA, int yB, const bool UA,
   __local uint *heads)
{
	const int NS = PACKED ? D3P_SAMPLES(CH) : D3_SAMPLES;
	const int NR = PACKED ? D3P_ROWS : D3_ROWS(CH);
	const int ns = W * CH, g = NS * get_global_id(0), y0 = NR * get_global_id(1);
	const bool inner = g >= gA && g < gB && y0 >= yA && y0 < yB;
	uint q[D3P_ROWS * D3P_SAMPLES(3) / 4]; // UA: the rows' words, NS / 4 a row
	if (inner) {
		if (PACKED && NORM && SEP && NS == 16)
			d3p_item16_norm_sep(CH, in, out, W, kxy, Z, off, pm, ps, g, y0, UA, q);
		else if (PACKED && NORM && SEP)
			d3p_item8_norm_sep(CH, in, out, W, kxy, Z, off, pm, ps, g, y0, UA, q);
		else if (PACKED && SEP && NS == 16)
			d3p_item16_sep(CH, in, out, W, kxy, Z, off, pm, ps, g, y0, UA, q);
		else if (PACKED && SEP)
			d3p_item8_sep(CH, in, out, W, kxy, Z, off, pm, ps, g, y0, UA, q);
		else if (PACKED && NORM && NS == 16)
			d3p_item16_norm(CH, in, out, W, w, Z, off, pm, ps, g, y0, UA, q);
		else if (PACKED && NORM)
			d3p_item8_norm(CH, in, out, W, w, Z, off, pm, ps, g, y0, UA, q);
		else if (PACKED && NS == 16)
			d3p_item16(CH, in, out, W, w, Z, off, pm, ps, g, y0, UA, q);
		else if (PACKED)
			d3p_item8(CH, in, out, W, w, Z, off, pm, ps, g, y0, UA, q);
		else if (NR == 4)
			d3_item4(CH, in, out, W, H, w, border, off, M, s, g, y0, false, UA, q);
		else
			d3_item2(CH, in, out, W, H, w, border, off, M, s, g, y0, false, UA, q);
	} else if (D3_OWN_EDGES(UA) && g < ns && y0 < H) {
		// the edge items: 8 samples of 2 rows at a time (with these loops unrolled the
		// packed kernel took up to 17% more time on an H200: docs/BENCHMARKS.md, fifteenth
		// session)
		for (int gs = g; gs < g + NS && gs < ns; gs += D3_SAMPLES)
			for (int ys = y0; ys < y0 + NR && ys < H; ys += 2)
				d3_item2(CH, in, out, W, H, w, border, off, M, s, gs, ys, true, false, q);
	}
	if (UA) // every item of the work-group: a barrier
		d3_store_rows(out, ns, g, y0, NR, NS / 4, q, inner, gA, gB, heads);
}

// convolve_3x3_edge_cN: what the _unaligned 3 x 3 kernels and the CPU family's leave out of
// the image, the frame around the interior items' samples gA .. gB - 1 and rows yA .. yB - 1
// (multiples of 8 and 2, as the kernels' NS and NR are; gA = gB = yA = yB = 0 where there is
// no interior): in units of 8 samples and 2 rows (d3_item2 with EDGE and UA), the rows above
// yA (yA / 2 rows of units, UX = ceil(W * CH / 8) units each), those from yB on
// (ceil((H - yB) / 2) rows of units), and the units left of gA and from gB on in the rows
// between. Each work-item computes one unit; the rows and samples past the image's end are
// not stored. Global: the number of units, rounded up to the local size
// (src/stages/convolve.c, d3_interior).
static inline __attribute__((always_inline)) void
d3_edge(const int CH, __global const uchar *in, __global uchar *out, int W, int H, const int *w,
	int border, int off, uint M, int s, int gA, int gB, int yA, int yB)
{
	const ulong UX = ((ulong)W * CH + 7) / 8, ntop = yA / 2 * UX;
	const ulong nbottom = (H - yB + 1) / 2 * UX, nleft = gA / 8, nside = nleft + UX - gB / 8;
	const ulong k = get_global_id(0);
	ulong ux, y;
	if (k < ntop) {
		y = 2 * (k / UX), ux = k % UX;
	} else if (k < ntop + nbottom) {
		y = yB + 2 * ((k - ntop) / UX), ux = (k - ntop) % UX;
	} else {
		const ulong i = k - ntop - nbottom, c = i % nside;
		if (i >= (yB - yA) / 2 * nside)
			return;
		y = yA + 2 * (i / nside), ux = c < nleft ? c : gB / 8 + c - nleft;
	}
	uint q[4]; // (not used: the edge items store their rows)
	d3_item2(CH, in, out, W, H, w, border, off, M, s, 8 * (int)ux, (int)y, true, true, q);
}

// ---- CPU devices ------------------------------------------------------------------------
// convolve_sep_cpu_cN: separable kernels of radius at most SEP_CPU_MAX_R on CPU devices
// (src/stages/convolve.c picks it with the CPU family). Built only for the CPU family on CPU
// devices (CLIMG_CPU_KERNELS and CLIMG_CPU_DEVICE, src/ocl.c): NVIDIA's compiler took 14 s for
// this program with it. One work-item (local size 1, so no barrier) computes a tile of
// SEP_CPU_TW samples x SEP_CPU_TH rows: each of the tile's th + 2r input rows is gathered,
// border-mapped, into the private row src (the tile's samples and r * CH on each side), its
// horizontal pass goes into the private int32 rows mid, and the vertical pass (int64) finishes
// the tile's samples row by row. Both passes sum a run of consecutive samples (16 as an int16,
// 8 as a long8) over all the taps before storing it, so the sums stay in vector registers (on
// PoCL 12-25% less time than loops over the tile's row for each tap, which loaded and stored
// the sums at every tap). With sym (as for sep_strip: the host found kx and ky symmetric and
// two first-pass values add within int32) both passes add the two samples that share a weight
// before multiplying. Global (ceil(W * CH / SEP_CPU_TW), ceil(H / SEP_CPU_TH)). Tiles of 128
// rows rather than 64 sum fewer halo rows twice: on PoCL, 8K RGB gauss sigma 8 took 10% less
// time, sigma 2 the same (docs/BENCHMARKS.md, tenth session; a ring of n rows instead, as the
// GPUs' strip kernel has, was slower there).
#if defined(CLIMG_CPU_KERNELS) && defined(CLIMG_CPU_DEVICE)
#define SEP_CPU_TW 64
#define SEP_CPU_TH 128
#define SEP_CPU_MAX_R 32
static inline void sep_cpu(const int CH, __global const uchar *in, __global uchar *out, int W,
			   int H, __global const int *w, int r, int border, long off, long D,
			   long M, int S, int sym)
{
	const int n = 2 * r + 1, RC = r * CH, ns = W * CH;
	const int s0 = get_global_id(0) * SEP_CPU_TW, y0 = get_global_id(1) * SEP_CPU_TH;
	if (s0 >= ns || y0 >= H)
		return;
	const int tw = min(SEP_CPU_TW, ns - s0), th = min(SEP_CPU_TH, H - y0);
	int mid[(SEP_CPU_TH + 2 * SEP_CPU_MAX_R) * SEP_CPU_TW];
	uchar src[SEP_CPU_TW + 2 * SEP_CPU_MAX_R * 4];
	long acc[SEP_CPU_TW];
	__global const int *kx = w, *ky = w + n;
	const int kn = sym ? r : n; // the taps multiplied one by one
	for (int i = 0; i < th + 2 * r; i++) {
		const int sy = border_map(y0 - r + i, H, border);
		__global const uchar *row = in + (size_t)max(sy, 0) * ns;
		if (sy < 0) {
			for (int j = 0; j < tw + 2 * RC; j++)
				src[j] = 0;
		} else if (s0 >= RC && s0 + tw + RC <= ns) {
			for (int j = 0; j < tw + 2 * RC; j++)
				src[j] = row[s0 - RC + j];
		} else {
			for (int j = 0; j < tw + 2 * RC; j++)
				src[j] = row_byte(CH, row, s0 - RC + j, W, border);
		}
		for (int j = 0; j < SEP_CPU_TW; j += 16) {
			int16 a = sym ? kx[r] * convert_int16(vload16(0, src + RC + j)) : 0;
			if (sym)
				for (int k = 0; k < kn; k++)
					a += kx[k] * (convert_int16(vload16(0, src + k * CH + j)) +
						      convert_int16(vload16(0, src + (n - 1 - k) * CH + j)));
			else
				for (int k = 0; k < kn; k++)
					a += kx[k] * convert_int16(vload16(0, src + k * CH + j));
			vstore16(a, 0, mid + i * SEP_CPU_TW + j);
		}
	}
	for (int i = 0; i < th; i++) {
		for (int j = 0; j < SEP_CPU_TW; j += 8) {
			const int *m = mid + i * SEP_CPU_TW + j;
			long8 a = sym ? (long)ky[r] * convert_long8(vload8(0, m + r * SEP_CPU_TW)) : 0;
			if (sym)
				for (int k = 0; k < kn; k++)
					a += (long)ky[k] *
					     convert_long8(vload8(0, m + k * SEP_CPU_TW) +
							   vload8(0, m + (n - 1 - k) * SEP_CPU_TW));
			else
				for (int k = 0; k < kn; k++)
					a += (long)ky[k] * convert_long8(vload8(0, m + k * SEP_CPU_TW));
			vstore8(a, 0, acc + j);
		}
		const size_t o = (size_t)(y0 + i) * ns + s0;
		for (int j = 0; j < tw; j++)
			out[o + j] = HAS_ALPHA(CH) && (s0 + j) % CH == CH - 1 ? in[o + j]
									       : finish(acc[j], off, D, M, S);
	}
}

#define CONVOLVE_CPU_KERNEL(CH)                                                                 \
	__kernel void convolve_sep_cpu_c##CH(__global const uchar *in, __global uchar *out,     \
					     int W, int H, __global const int *w, int r,        \
					     int border, long off, long D, long M, int S,       \
					     int sym)                                           \
	{                                                                                       \
		sep_cpu(CH, in, out, W, H, w, r, border, off, D, M, S, sym);                    \
	}
IF_C1(CONVOLVE_CPU_KERNEL(1))
IF_C2(CONVOLVE_CPU_KERNEL(2))
IF_C3(CONVOLVE_CPU_KERNEL(3))
IF_C4(CONVOLVE_CPU_KERNEL(4))
#endif

// The kernels, one per channel count. convolve_3x3_packed_cN, convolve_3x3_packed_norm_cN
// and their _sep forms only in the GPU family's programs (src/ocl.c): the CPU family keeps
// convolve_3x3 (src/stages/convolve.c, run_3x3). The _sep forms take the 9 weights (for the
// edge items) and kx, ky (for the interior items), whose products they are. All take the
// interior's rectangle gA, gB, yA, yB. Each of these 3 x 3 kernels also as _unaligned (UA:
// rows that need not start on a word) for 1 to 3 channels. convolve_3x3_edge_cN: the edge
// items, where the 3 x 3 kernel leaves them (D3_OWN_EDGES).
#define D3_ARGS                                                                                 \
	__global const uchar *in, __global uchar *out, int W, int H, int k0, int k1, int k2,     \
	    int k3, int k4, int k5, int k6, int k7, int k8, int border, int off, uint M, int s
#define D3_RECT int gA, int gB, int yA, int yB
#define D3_W9 const int w[9] = { k0, k1, k2, k3, k4, k5, k6, k7, k8 }
#define D3_KXY const int kxy[6] = { kx0, kx1, kx2, ky0, ky1, ky2 }
#ifndef CLIMG_CPU_KERNELS
#define CONVOLVE_3X3_PACKED(CH, UA, SUF)                                                        \
	__kernel void convolve_3x3_packed##SUF##_c##CH(D3_ARGS, uint Z, uint pm, int ps,        \
						       D3_RECT)                                 \
	{                                                                                       \
		D3_W9;                                                                          \
		__local uint heads[UA ? D3_HEADS : 1];                                          \
		d3(CH, in, out, W, H, w, border, off, M, s, true, false, Z, pm, ps, false, w,   \
		   gA, gB, yA, yB, UA, heads);                                                  \
	}                                                                                       \
	__kernel void convolve_3x3_packed_norm##SUF##_c##CH(D3_ARGS, uint pm, D3_RECT)          \
	{                                                                                       \
		D3_W9;                                                                          \
		__local uint heads[UA ? D3_HEADS : 1];                                          \
		d3(CH, in, out, W, H, w, border, off, M, s, true, true, 0, pm, 0, false, w, gA, \
		   gB, yA, yB, UA, heads);                                                      \
	}                                                                                       \
	__kernel void convolve_3x3_packed_sep##SUF##_c##CH(D3_ARGS, uint Z, uint pm, int ps,    \
							   int kx0, int kx1, int kx2, int ky0,  \
							   int ky1, int ky2, D3_RECT)           \
	{                                                                                       \
		D3_W9;                                                                          \
		D3_KXY;                                                                         \
		__local uint heads[UA ? D3_HEADS : 1];                                          \
		d3(CH, in, out, W, H, w, border, off, M, s, true, false, Z, pm, ps, true, kxy,  \
		   gA, gB, yA, yB, UA, heads);                                                  \
	}                                                                                       \
	__kernel void convolve_3x3_packed_norm_sep##SUF##_c##CH(D3_ARGS, uint pm, int kx0,      \
								int kx1, int kx2, int ky0,      \
								int ky1, int ky2, D3_RECT)      \
	{                                                                                       \
		D3_W9;                                                                          \
		D3_KXY;                                                                         \
		__local uint heads[UA ? D3_HEADS : 1];                                          \
		d3(CH, in, out, W, H, w, border, off, M, s, true, true, 0, pm, 0, true, kxy,    \
		   gA, gB, yA, yB, UA, heads);                                                  \
	}
#else
#define CONVOLVE_3X3_PACKED(CH, UA, SUF)
#endif
#define CONVOLVE_3X3(CH, UA, SUF)                                                               \
	__kernel void convolve_3x3##SUF##_c##CH(D3_ARGS, D3_RECT)                               \
	{                                                                                       \
		D3_W9;                                                                          \
		__local uint heads[UA ? D3_HEADS : 1];                                          \
		d3(CH, in, out, W, H, w, border, off, M, s, false, false, 0, 0, 0, false, w,    \
		   gA, gB, yA, yB, UA, heads);                                                  \
	}                                                                                       \
	CONVOLVE_3X3_PACKED(CH, UA, SUF)
#define CONVOLVE_KERNELS(CH)                                                                    \
	__kernel void convolve_sep_strip_c##CH(                                                 \
	    __global const uchar *in, __global uchar *out, int W, int H, __global const int *w, \
	    int r, int border, long off, long D, long M, int S, int TWS, int SH, int CR,        \
	    int sym, __local uint *tile, __local int4 *mid, __local int *lw)                    \
	{                                                                                       \
		sep_strip(CH, in, out, W, H, w, r, border, off, D, M, S, TWS, SH, CR, sym,      \
			  tile, mid, lw);                                                       \
	}                                                                                       \
	__kernel void convolve_2d_tile_c##CH(                                                   \
	    __global const uchar *in, __global uchar *out, int W, int H, __global const int *w, \
	    int r, int border, long off, long D, long M, int S, int TW, int TH,                 \
	    __local uchar *tile, __local int *lw)                                               \
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
	CONVOLVE_3X3(CH, false, )                                                               \
	__kernel void convolve_3x3_edge_c##CH(D3_ARGS, D3_RECT)                                 \
	{                                                                                       \
		D3_W9;                                                                          \
		d3_edge(CH, in, out, W, H, w, border, off, M, s, gA, gB, yA, yB);               \
	}                                                                                       \
	__kernel void convolve_2d_c##CH(__global const uchar *in, __global uchar *out, int W,   \
					int H, __global const int *w, int r, int border,        \
					long off, long D, long M, int S)                        \
	{                                                                                       \
		d2(CH, in, out, W, H, w, r, border, off, D, M, S);                              \
	}

IF_C1(CONVOLVE_KERNELS(1))
IF_C2(CONVOLVE_KERNELS(2))
IF_C3(CONVOLVE_KERNELS(3))
IF_C4(CONVOLVE_KERNELS(4))
IF_C1(CONVOLVE_3X3(1, true, _unaligned))
IF_C2(CONVOLVE_3X3(2, true, _unaligned))
IF_C3(CONVOLVE_3X3(3, true, _unaligned))
