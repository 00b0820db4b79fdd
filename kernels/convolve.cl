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
// With 2 or 4 channels the last is alpha: copied, not filtered. src/stages/convolve_cl.c
// picks the kernel for an image. The families are in files of their own, included below
// after the helpers they share: convolve_local.clh (sep_strip, 2d_tile), convolve_global.clh
// (sep_h, sep_v, 2d), convolve_3x3.clh and convolve_3x3_packed.clh (the 3 x 3 kernels, whose
// items d3 and d3_edge below dispatch), convolve_cpu.clh (sep_cpu).
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
//                         of 64 samples x 128 rows, private rows, no local memory
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
// (border_map in src/stages/convolve_cpu.c).
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
// 32-bit read for 4 channels (p is then word-aligned; measured faster for gauss), else byte
// by byte.
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

#include "convolve_local.clh"
#include "convolve_global.clh"
#include "convolve_3x3.clh"
#include "convolve_3x3_packed.clh"

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
		// the edge items: 8 samples of 2 rows at a time (loops not unrolled: unrolled,
		// the packed kernel was slower)
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
// (src/stages/convolve_cl.c, d3_interior).
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

#include "convolve_cpu.clh"

// The kernels, one per channel count. convolve_3x3_packed_cN, convolve_3x3_packed_norm_cN
// and their _sep forms only in the GPU family's programs (CLIMG_CPU_KERNELS undefined): the
// CPU family keeps convolve_3x3 (src/stages/convolve_cl.c, run_3x3). The _sep forms take the
// 9 weights (for the edge items) and kx, ky (for the interior items), whose products they
// are. All take the interior's rectangle gA, gB, yA, yB. Each of these 3 x 3 kernels also as
// _unaligned (UA: rows that need not start on a word) for 1 to 3 channels.
// convolve_3x3_edge_cN: the edge items, where the 3 x 3 kernel leaves them (D3_OWN_EDGES).
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
