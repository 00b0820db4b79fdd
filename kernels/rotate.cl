// SPDX-License-Identifier: MIT
// rotate: clockwise quarter turns as index remaps (rotate_90, rotate_270 and their word-wide
// _cN forms; rotate_180_*), and any other angle through "the mapping" (rotate_nearest_cN,
// rotate_bilinear_cN, and their _skew_cN forms for outputs whose rows are not whole words; per
// pixel, rotate_nearest_cpu and rotate_bilinear_cpu*): both
// specified in src/stages/rotate.c, whose CPU code this matches byte for byte. W, H, ch
// describe the input. rotate_90 / rotate_270 take any size (the output is H x W); the
// remaps' _cN kernels need the sides to be multiples of 4 and an image of N channels (the
// _unaligned_cN ones take any size).
// The _cpu kernels (any size) are for CPU devices (see kernels/cpu.clh).
#include "channels.clh"
#include "words.clh"
#include "cpu.clh"
#include "remap.clh"

REMAP_KERNELS(rotate_90, 1)
REMAP_KERNELS(rotate_270, 2)

#ifndef CLIMG_CPU_KERNELS // the GPU family (src/ocl/program.c)
// 180 degrees reverses the pixel order of the whole (row-major, unpadded) image:
// out pixel i = in pixel W*H-1-i.

// The CH words of a group of 4 pixels (CH channels each) reversed: ow gets pixels 3, 2, 1, 0
// of iw.
static inline void rotate_180_reverse4(const int CH, const uint *iw, uint *ow)
{
	uchar ib[16], ob[16];
#pragma unroll
	for (int m = 0; m < CH; m++)
		vstore4(as_uchar4(iw[m]), m, ib);
#pragma unroll
	for (int p = 0; p < 4; p++)
#pragma unroll
		for (int c = 0; c < CH; c++)
			ob[p * CH + c] = ib[(3 - p) * CH + c];
#pragma unroll
	for (int m = 0; m < CH; m++)
		ow[m] = as_uint(vload4(m, ob));
}

// W a multiple of 4, 2 to 4 channels (one channel takes the 16-byte kernels below): a row
// of 4 pixels is CH whole words; each item reverses 4 such groups of one row, L groups apart
// (L the local size). Global (ceil(W/4 / (4 L)) * L, H).
#define ROTATE_180_WORDS(NAME, CH)                                                       \
__kernel void NAME(__global const uint *in, __global uint *out, int W, int H)           \
{                                                                                       \
	int y = get_global_id(1), G = W / 4, L = get_local_size(0);                     \
	int g0 = get_group_id(0) * L * 4 + get_local_id(0);                             \
	_Pragma("unroll") for (int n = 0; n < 4; n++) {                                  \
		int g = g0 + n * L;                                                     \
		if (g >= G)                                                             \
			break;                                                          \
		__global const uint *s = in + ((size_t)(H - 1 - y) * G + (G - 1 - g)) * CH; \
		uint iw[CH], ow[CH];                                                    \
		_Pragma("unroll") for (int m = 0; m < CH; m++)                           \
			iw[m] = s[m];                                                   \
		rotate_180_reverse4(CH, iw, ow);                                        \
		__global uint *d = out + ((size_t)y * G + g) * CH;                      \
		_Pragma("unroll") for (int m = 0; m < CH; m++)                           \
			d[m] = ow[m];                                                   \
	}                                                                               \
}

#if CLIMG_HAS_CH(1)
// One channel and W a multiple of 16: each item reverses one group of 16 pixels with one
// 16-byte load and store. Global (W / 16, H), rounded up to the local size.
__kernel void rotate_180_c1_16(__global const uint4 *in, __global uint4 *out, int W, int H)
{
	int g = get_global_id(0), y = get_global_id(1), G = W / 16;
	if (g >= G || y >= H)
		return;
	uchar16 s = as_uchar16(in[(size_t)(H - 1 - y) * G + (G - 1 - g)]);
	out[(size_t)y * G + g] = as_uint4(s.sfedcba9876543210);
}

// One channel, W not a multiple of 16: the image as one row of n = W H bytes, reversed 16 at
// a time. Output vector k (bytes 16k .. 16k + 15) is input bytes n - 16 - 16k .. n - 1 - 16k
// reversed, which start n % 16 bytes into an aligned vector for every k: they come from that
// vector and the next, shifted into place (for k = 0 the next may reach past the image's
// end: byte by byte there). Each item reverses 4 vectors, L apart (L the local size); item
// 0 also copies the last n % 16 bytes. Global (ceil(n/16 / (4 L)) * L, 1). Faster than
// ROTATE_180_UNALIGNED's groups of 4 bytes (docs/BENCHMARKS.md, "Kernel shapes").
__kernel void rotate_180_unaligned_c1_16(__global const uint4 *in, __global uint4 *out, int W,
					 int H)
{
	const ulong n = (ulong)W * H, K = n / 16;
	const uint o = (uint)(n & 15), mw = o >> 2, sh = 8 * (o & 3);
	const uint4 lo = (uint4)(mw, mw + 1, mw + 2, mw + 3), hi = lo + 1;
	const int L = get_local_size(0);
	const ulong g0 = get_group_id(0) * (ulong)L * 4 + get_local_id(0);
	__global const uchar *in8 = (__global const uchar *)in;
#pragma unroll
	for (int q = 0; q < 4; q++) {
		const ulong k = g0 + (ulong)q * L;
		if (k >= K)
			break;
		const ulong s = n - 16 - 16 * k; // the input bytes' first
		uint4 v;
		if (o && k == 0) {
			v = as_uint4(vload16(0, in8 + s));
		} else {
			const uint4 a = in[s >> 4], b = o ? in[(s >> 4) + 1] : a;
			const uint4 x = shuffle2(a, b, lo), y = shuffle2(a, b, hi);
			v = sh ? x >> sh | y << (32 - sh) : x;
		}
		out[k] = as_uint4(as_uchar16(v).sfedcba9876543210);
	}
	if (g0 == 0) {
		__global uchar *out8 = (__global uchar *)out;
		for (ulong b = 16 * K; b < n; b++)
			out8[b] = in8[n - 1 - b];
	}
}
#endif
IF_C2(ROTATE_180_WORDS(rotate_180_c2, 2))
IF_C3(ROTATE_180_WORDS(rotate_180_c3, 3))
IF_C4(ROTATE_180_WORDS(rotate_180_c4, 4))

// Any size, 2 to 4 channels: the image as one row of n = W H pixels, reversed. Output group
// k (pixels 4k .. 4k + 3: CH whole words) comes from input pixels n - 4 - 4k .. n - 1 - 4k,
// whose bytes start at (n - 4 - 4k) CH, misaligned by (n CH) % 4 bytes for every k: its CH
// words come from the CH + 1 aligned words that hold them, shifted into place (for k = 0 the
// last of those may reach past the image's end: byte by byte there). Each item reverses 4
// groups, L apart (L the local size); item 0 also copies the last n % 4 output pixels, byte
// by byte.
// Global (ceil(n/4 / (4 L)) * L, 1). A third of the time of one work-item a pixel
// (docs/BENCHMARKS.md, "Kernel shapes").
#define ROTATE_180_UNALIGNED(NAME, CH)                                                   \
__kernel void NAME(__global const uint *in, __global uint *out, int W, int H)           \
{                                                                                       \
	const ulong n = (ulong)W * H, K = n / 4, nbytes = n * CH;                        \
	const int L = get_local_size(0), sh = 8 * (int)(nbytes & 3);                     \
	const ulong g0 = get_group_id(0) * (ulong)L * 4 + get_local_id(0);              \
	__global const uchar *in8 = (__global const uchar *)in;                          \
	_Pragma("unroll") for (int q = 0; q < 4; q++) {                                  \
		const ulong k = g0 + (ulong)q * L;                                      \
		if (k >= K)                                                             \
			break;                                                          \
		const ulong s = (n - 4 - 4 * k) * CH; /* the input group's first byte */ \
		uint iw[CH], ow[CH];                                                    \
		if (sh && k == 0) {                                                     \
			for (int m = 0; m < CH; m++)                                    \
				iw[m] = as_uint(vload4(m, in8 + s));                    \
		} else {                                                                \
			__global const uint *w = in + (s >> 2);                         \
			_Pragma("unroll") for (int m = 0; m < CH; m++)                   \
				iw[m] = word_at(w[m], w[m + 1], sh);                    \
		}                                                                       \
		rotate_180_reverse4(CH, iw, ow);                                        \
		_Pragma("unroll") for (int m = 0; m < CH; m++)                           \
			out[k * CH + m] = ow[m];                                        \
	}                                                                               \
	if (g0 == 0) {                                                                  \
		__global uchar *out8 = (__global uchar *)out;                            \
		for (ulong b = 4 * K * CH; b < nbytes; b++) /* pixel b / CH, from n-1-b/CH */ \
			out8[b] = in8[(n - 1 - b / CH) * CH + b % CH];                   \
	}                                                                               \
}
IF_C2(ROTATE_180_UNALIGNED(rotate_180_unaligned_c2, 2))
IF_C3(ROTATE_180_UNALIGNED(rotate_180_unaligned_c3, 3))
IF_C4(ROTATE_180_UNALIGNED(rotate_180_unaligned_c4, 4))
#else // the CPU family
// For CPU devices, any size: work-item g writes output pixels [g P, g P + P) of the n = W*H
// (P = ROTATE_180_CPU_PX), in groups of 16 bytes (16, 8 or 4 pixels; 3 channels: 16 pixels,
// 48 bytes) whose pixels it reads as one group from the mirrored place and reverses in
// registers; the pixels after the last whole group one at a time. Global ceil(n / P).
#define ROTATE_180_CPU_PX 16384
#define ROTATE_180_CPU(NAME, CH, GROUP_PX)                                               \
__kernel void NAME(__global const uchar *in, __global uchar *out, int W, int H)           \
{                                                                                       \
	size_t n = (size_t)W * H, i = get_global_id(0) * (size_t)ROTATE_180_CPU_PX;     \
	size_t i1 = min(i + ROTATE_180_CPU_PX, n);                                      \
	for (; i + GROUP_PX <= i1; i += GROUP_PX)                                       \
		ROTATE_180_REVERSE##CH(in + (n - i - GROUP_PX) * CH, out + i * CH);     \
	for (; i < i1; i++)                                                             \
		for (int c = 0; c < CH; c++)                                            \
			out[i * CH + c] = in[(n - 1 - i) * CH + c];                     \
}
// One group: the pixels at s, reversed, to d.
#define ROTATE_180_REVERSE1(s, d) CPU_ST16(CPU_LD16(s).sfedcba9876543210, (d))
#define ROTATE_180_REVERSE2(s, d) CPU_ST16(as_uchar16(as_ushort8(CPU_LD16(s)).s76543210), (d))
#define ROTATE_180_REVERSE4(s, d) CPU_ST16(as_uchar16(as_uint4(CPU_LD16(s)).s3210), (d))
#define ROTATE_180_REVERSE3(s, d) rotate_180_reverse3((s), (d))
// 3 channels: out byte j of the 48 is in byte 3 (15 - j / 3) + j % 3 (a, b, c: in bytes
// 0-15, 16-31, 32-47).
void rotate_180_reverse3(__global const uchar *s, __global uchar *d)
{
	uchar16 a = CPU_LD16(s), b = CPU_LD16(s + 16), c = CPU_LD16(s + 32);
	CPU_ST16((uchar16)(c.sd, c.se, c.sf, c.sa, c.sb, c.sc, c.s7, c.s8, c.s9, c.s4, c.s5,
			   c.s6, c.s1, c.s2, c.s3, b.se),
		 d);
	CPU_ST16((uchar16)(b.sf, c.s0, b.sb, b.sc, b.sd, b.s8, b.s9, b.sa, b.s5, b.s6, b.s7,
			   b.s2, b.s3, b.s4, a.sf, b.s0),
		 d + 16);
	CPU_ST16((uchar16)(b.s1, a.sc, a.sd, a.se, a.s9, a.sa, a.sb, a.s6, a.s7, a.s8, a.s3,
			   a.s4, a.s5, a.s0, a.s1, a.s2),
		 d + 32);
}
IF_C1(ROTATE_180_CPU(rotate_180_cpu_c1, 1, 16))
IF_C2(ROTATE_180_CPU(rotate_180_cpu_c2, 2, 8))
IF_C3(ROTATE_180_CPU(rotate_180_cpu_c3, 3, 16))
IF_C4(ROTATE_180_CPU(rotate_180_cpu_c4, 4, 4))
#endif

// ---- any angle: the mapping of src/stages/rotate.c ------------------------------------------
// ow x oh is the output; C, S = round(2^30 cos A), round(2^30 sin A); bg holds the background
// pixel, channel c in bits 8c..8c+7.
//
// For GPUs: a work-group of (ROTATE_TILE, RY) items makes a ROTATE_TILE-square tile of the
// output, N = ROTATE_TILE / RY pixels an item (RY = ROTATE_RY(ch): 2 rows of items for one
// channel, 4 for more). Item (lx, ly) makes, for j < N,
//   the tile's pixel (column lx, row b), or (column b, row lx) with trans, where
//   b = (ly + RY j + sh) mod ROTATE_TILE,  sh = (lx T) >> 16,
//   T = 2^16 S / C, or 2^16 C / S with trans (the host sets trans when |S| > |C|),
// so that the items of a row of the group work on pixels whose source positions lie along one
// input row, and each load touches few cache lines. T only orders the work: any T gives
// the same pixels. An item steps its source position along b in 32-bit arithmetic
// (rotate_line), exactly. The pixels go through local memory, in rows padded by one word,
// and leave as whole words (rotate_store_tile). Every pixel's taps are loaded before any is
// used (a tap outside the input reads the input's first pixel and is replaced by the
// background), so an item's loads are in flight together; in a tile whose taps all lie
// inside the input (rotate_tile_class), the checks are left out. Tap offsets are 32-bit: the
// host uses these kernels for inputs of less than 2^31 bytes, and the per-pixel kernels
// below for larger ones.
// The padded rows measured faster than rows stored skewed (rotated by their index: no bank
// conflicts on either side, more index arithmetic); unsigned tap offsets are faster than
// signed ones for one channel and slower for three, so ROTATE_TAP picks by the channel count
// (docs/BENCHMARKS.md, "Kernel shapes").

#define BIAS_PX (1 << 17)
#define BIAS ((long)1 << 48)
#define ONE ((long)1 << 30)
#define ROTATE_TILE 32
#define ROTATE_RY(ch) ((ch) == 1 ? 2 : 4)
// The most pixels a tile row is skewed by (rotate_skew): 3 (1 for 2 channels, whose rows
// start on even bytes).
#define ROTATE_SKEW_MAX 3

// The mapping's rounding, in one place. U or V (MAP_UV) becomes a source position in 1/256
// pixel, q = floor((U + R) / 2^23): bilinear, R = 2^22 rounds it to the nearest 1/256 (the
// first tap is rotate_q_px(q), the weights' fraction q & 255); nearest, R = 2^30 makes
// rotate_q_px(q) the nearest pixel. Every kernel below rounds through these.
#define ROTATE_R(bilinear) ((bilinear) ? (long)1 << 22 : ONE)

uint rotate_q(long U, bool bilinear)
{
	return (uint)((U + ROTATE_R(bilinear)) >> 23);
}

int rotate_q_px(uint q)
{
	return (int)(q >> 8) - BIAS_PX;
}

// U and V of the mapping for output pixel (x, y): 2^31 (source position + 2^17), positive.
// The products are 32 x 32 -> 64 bits (one instruction on some GPUs, not a 64-bit multiply).
#define MAP_UV()                                                                         \
	int dx = 2 * x + 1 - ow, dy = 2 * y + 1 - oh; /* |dx|, |dy| < 2^18 */              \
	long U = ((long)(W - 1) << 30) + (long)dx * C + (long)dy * S + BIAS;             \
	long V = ((long)(H - 1) << 30) - (long)dx * S + (long)dy * C + BIAS

// The rest of this section, to the tile kernels, is the GPU family's (src/ocl/program.c).
#ifndef CLIMG_CPU_KERNELS

// Byte offsets in the input (W x H x ch, less than 2^31 bytes) of the source pixel (sx, sy) and
// of the three to its right and below, with ok[k] set where the pixel is inside the input
// (offset 0 where it is not). inside: the caller knows all four are (the checks fold away).
void rotate_taps(int sx, int sy, int W, int H, int ch, bool inside, uint off[4], bool ok[4])
{
	bool x0 = inside || (uint)sx < (uint)W, x1 = inside || (uint)(sx + 1) < (uint)W;
	bool y0 = inside || (uint)sy < (uint)H, y1 = inside || (uint)(sy + 1) < (uint)H;
	uint rowb = (uint)(W * ch), o = (uint)sy * rowb + (uint)(sx * ch); // wraps only when unused
	ok[0] = x0 && y0;
	ok[1] = x1 && y0;
	ok[2] = x0 && y1;
	ok[3] = x1 && y1;
	off[0] = ok[0] ? o : 0;
	off[1] = ok[1] ? o + ch : 0;
	off[2] = ok[2] ? o + rowb : 0;
	off[3] = ok[3] ? o + rowb + ch : 0;
}

// Sample c of the tap at offset o (from rotate_taps): the same byte either way, at an
// unsigned offset for one channel and a signed one for more (see the top of this section).
#define ROTATE_TAP(in, o, c, ch) ((ch) == 1 ? (in)[(o) + (c)] : (in)[as_int(o) + (c)])

// The output pixel at source position (u, v) (rotate_q of U and V), packed as bg is, for
// each way of sampling; inside as for rotate_taps.
uint rotate_nearest_px(__global const uchar *in, int W, int H, int ch, uint bg, uint u, uint v,
		       bool inside)
{
	uint off[4];
	bool ok[4];
	// only the first tap is used
	rotate_taps(rotate_q_px(u), rotate_q_px(v), W, H, ch, inside, off, ok);
	// 2 and 4 channels: the pixel in one aligned load (the input starts a buffer), faster
	// than byte by byte; for bilinear it made no difference, and 3 channels read as two
	// words were slower
	if (ch == 4)
		return ok[0] ? ((__global const uint *)in)[off[0] >> 2] : bg;
	if (ch == 2)
		return ok[0] ? ((__global const ushort *)in)[off[0] >> 1] : bg;
	uint r = 0;
	for (int c = 0; c < ch; c++) {
		uint p = ROTATE_TAP(in, off[0], c, ch);
		r |= (ok[0] ? p : (bg >> (8 * c)) & 255) << (8 * c);
	}
	return r;
}

// Bilinear weights and taps at u, v.
#define ROTATE_BILINEAR_TAPS()                                                           \
	uint fx = u & 255, fy = v & 255;                                                \
	uint w[4] = { (256 - fx) * (256 - fy), fx * (256 - fy), (256 - fx) * fy, fx * fy }; \
	uint off[4];                                                                    \
	bool ok[4];                                                                     \
	rotate_taps(rotate_q_px(u), rotate_q_px(v), W, H, ch, inside, off, ok)

// Without alpha (1 and 3 channels): every channel (sum w p + 2^15) >> 16. Three channels
// inside: each row's two taps (6 bytes from a byte offset o) come from the 3 aligned words
// that hold them, shifted into place (the words may reach past the taps, into the input's
// next row: rotate_tile_class leaves one), in less time than 12 byte loads. One channel
// inside: the taps from one pointer and the row below it, two 64-bit address additions
// instead of four (docs/BENCHMARKS.md, "Kernel shapes").
uint rotate_bilinear_px(__global const uchar *in, int W, int H, int ch, uint bg, uint u, uint v,
			bool inside)
{
	ROTATE_BILINEAR_TAPS();
	if (ch == 3 && inside) {
		__global const uint *in32 = (__global const uint *)in; // the input starts a buffer
		ulong t[2]; // bytes o .. o + 7 of the taps' rows: tap 0 or 2 in 0-2, 1 or 3 in 3-5
		for (int h = 0; h < 2; h++) {
			uint o = off[2 * h], i = o >> 2, s = 8 * (o & 3);
			uint w0 = in32[i], w1 = in32[i + 1], w2 = in32[i + 2];
			uint a = (uint)(((ulong)w1 << 32 | w0) >> s);
			uint b = (uint)(((ulong)w2 << 32 | w1) >> s);
			t[h] = (ulong)b << 32 | a;
		}
		uint r = 0;
		for (int c = 0; c < 3; c++) {
			uint n = 32768 + w[0] * (uint)((t[0] >> (8 * c)) & 255) +
				 w[1] * (uint)((t[0] >> (24 + 8 * c)) & 255) +
				 w[2] * (uint)((t[1] >> (8 * c)) & 255) +
				 w[3] * (uint)((t[1] >> (24 + 8 * c)) & 255);
			r |= (n >> 16) << (8 * c);
		}
		return r;
	}
	if (ch == 1 && inside) {
		__global const uchar *t0 = in + off[0], *t1 = t0 + W;
		return (32768 + w[0] * t0[0] + w[1] * t0[1] + w[2] * t1[0] + w[3] * t1[1]) >> 16;
	}
	uint r = 0;
	for (int c = 0; c < ch; c++) {
		uint b = (bg >> (8 * c)) & 255, n = 32768;
		for (int k = 0; k < 4; k++) {
			uint p = ROTATE_TAP(in, off[k], c, ch);
			n += w[k] * (ok[k] ? p : b);
		}
		r |= (n >> 16) << (8 * c);
	}
	return r;
}

// With alpha (2 and 4 channels, alpha last): colour weighted by alpha.
uint rotate_bilinear_alpha_px(__global const uchar *in, int W, int H, int ch, uint bg, uint u,
			      uint v, bool inside)
{
	ROTATE_BILINEAR_TAPS();
	uint D = 0, wa[4], ba = (bg >> (8 * (ch - 1))) & 255;
	for (int k = 0; k < 4; k++) {
		uint a = ROTATE_TAP(in, off[k], ch - 1, ch);
		wa[k] = w[k] * (ok[k] ? a : ba);
		D += wa[k];
	}
	uint r = ((D + 32768) >> 16) << (8 * (ch - 1));
	for (int c = 0; c < ch - 1; c++) {
		uint b = (bg >> (8 * c)) & 255, n = 0, m = 32768;
		for (int k = 0; k < 4; k++) {
			uint p = ROTATE_TAP(in, off[k], c, ch);
			p = ok[k] ? p : b;
			n += wa[k] * p;
			m += w[k] * p;
		}
		r |= (D ? (n + D / 2) / D : m >> 16) << (8 * c);
	}
	return r;
}

// Where the taps of a tile of cols columns (ROTATE_TILE, or more with skewed rows:
// ROTATE_MAP) and ROTATE_TILE rows lie (bilinear: the source pixel and the next column and
// row), from U and V (MAP_UV) at its corner pixel (x0, y0); at the other corners they are U
// and V plus 2 (cols - 1) or 2 (ROTATE_TILE - 1) times C or S, with the signs of MAP_UV.
// ROTATE_OUTSIDE: every tap of every pixel past one side of the input, so every pixel is the
// background pixel; ROTATE_INSIDE: every tap inside; else ROTATE_EDGE. The source position
// is an affine function of x and y rounded down, so over the tile it is largest and smallest
// at the corners. OUTSIDE takes the whole tile past one side, which is where the background
// of a rotated canvas lies (its corners); a tile that is all background across two sides is
// EDGE. Every tap outside gives the background exactly, alpha or not (see the pixel
// functions). The corners are the whole tile's, past the output's edge too: the items make
// those pixels as well (and do not store them), and INSIDE reads their taps unchecked.
// INSIDE also leaves a row of the input below the last taps, which rotate_bilinear_px's
// whole-word reads may reach into.
enum { ROTATE_OUTSIDE, ROTATE_INSIDE, ROTATE_EDGE };
int rotate_tile_class(long U, long V, int W, int H, int C, int S, bool bilinear, int cols)
{
	long ec = 2 * (long)(ROTATE_TILE - 1) * C, es = 2 * (long)(ROTATE_TILE - 1) * S; // rows
	long fc = 2 * (long)(cols - 1) * C, fs = 2 * (long)(cols - 1) * S;              // columns
	long u[4] = { U, U + fc, U + es, U + fc + es }, v[4] = { V, V - fs, V + ec, V + ec - fs };
	int2 lo = (int2)(INT_MAX), hi = (int2)(INT_MIN);
	for (int k = 0; k < 4; k++) {
		int2 p = (int2)(rotate_q_px(rotate_q(u[k], bilinear)),
				rotate_q_px(rotate_q(v[k], bilinear)));
		lo = min(lo, p);
		hi = max(hi, p);
	}
	hi += (int)bilinear;
	if (hi.x < 0 || lo.x >= W || hi.y < 0 || lo.y >= H)
		return ROTATE_OUTSIDE;
	if (lo.x >= 0 && lo.y >= 0 && hi.x < W && hi.y < H - 1)
		return ROTATE_INSIDE;
	return ROTATE_EDGE;
}

// rotate_q along a line of the tile, in 32-bit arithmetic: q(b) = floor(G(b) / 2^23) for
// G(b) = G0 + ea lx + eb b (G0 = U + R at the tile's corner, ea and eb the steps of U across
// and along the item's line), as a + qb b + ((r + rb b) >> 23), where G0 + ea lx = a 2^23 + r
// and eb = qb 2^23 + rb with 0 <= r, rb < 2^23: exact, and r + rb b < 2^28 for b < 32.
typedef struct {
	int a, r, qb, rb;
} rotate_line;

rotate_line rotate_line_at(long G0, long ea, long eb, int lx)
{
	long G = G0 + ea * lx;
	rotate_line l = { (int)(G >> 23), (int)(G & 0x7fffff), (int)(eb >> 23),
			  (int)(eb & 0x7fffff) };
	return l;
}

uint rotate_line_q(rotate_line l, int b)
{
	return (uint)(l.a + l.qb * b + ((l.r + l.rb * b) >> 23));
}

// Skewed rows (the _skew_cN kernels, which the host runs where the output's rows are not
// whole words: ow ch not a multiple of 4). Row y of every tile starts d = rotate_skew(y, ow,
// ch) pixels right of the tile's first column x0 (a multiple of 4): at the first pixel whose
// first byte starts a word. So every row of a tile leaves as whole words, each word stored
// whole by one work-group, but for the row's last word where the canvas row ends. The tile
// at a row's start also makes the row's first d pixels (head) and stores their bytes one by
// one, as the word they share with the row above. d depends on y mod 4 only.
int rotate_skew(int y, int ow, int ch)
{
	uint m = ((uint)y * (uint)ow * (uint)ch) & 3; // the row's first byte, mod 4
	return ch == 2 ? (int)(m >> 1) : (int)((0u - m * (uint)ch) & 3);
}

// Word w of tile row r (bytes 4w .. 4w + 3 of the row's pixels, the first byte lowest), and
// the same word of a row of background pixels.
uint rotate_tile_word(__local uint (*tile)[ROTATE_TILE + 1], int r, int w, int ch)
{
	const int p = 4 * w / 3, k = 4 * w - 3 * p; // 3 channels: bytes k.. of pixel p, then p + 1
	if (ch == 1)
		return tile[r][4 * w] | tile[r][4 * w + 1] << 8 | tile[r][4 * w + 2] << 16 |
		       tile[r][4 * w + 3] << 24;
	if (ch == 2)
		return tile[r][2 * w] | tile[r][2 * w + 1] << 16;
	if (ch == 3)
		return tile[r][p] >> (8 * k) | tile[r][p + 1] << (8 * (3 - k));
	return tile[r][w];
}

uint rotate_bg_word(uint bg, int w, int ch)
{
	const int k = 4 * w - 3 * (4 * w / 3);
	return ch == 1 ? bg * 0x01010101u :
	       ch == 2 ? bg | bg << 16 :
	       ch == 3 ? bg >> (8 * k) | bg << (8 * (3 - k)) : bg;
}

// The tile's pixels (or, outside, the background pixel) to the output as whole aligned words,
// RY rows of items; skew as above (else every row starts on a word: the host runs the
// kernels without skew only where ow ch is a multiple of 4). A tile that ends at least
// ROTATE_SKEW_MAX pixels (with skew; else 0) left of the output's right edge, so that every
// row holds ROTATE_TILE pixels whatever its skew, takes the first loop; the others go word
// by word, and store a row's last word byte by byte where the row ends inside it. The pixels
// (and bg) have their bits past 8 ch clear.
// Whole words take less time than one item storing a pixel's bytes one by one. Each item
// keeps one word column, so the loop has no division and steps its address by a constant:
// a loop that divided out each word's row and column was a third of the kernel's
// instructions (docs/BENCHMARKS.md, "Kernel shapes").
void rotate_store_tile(__global uchar *out, __local uint (*tile)[ROTATE_TILE + 1],
		       __local uint (*head)[ROTATE_SKEW_MAX], bool skew, bool outside, uint bg,
		       int x0, int y0, int ow, int oh, int ch, int ry)
{
	const int i0 = get_local_id(1) * ROTATE_TILE + get_local_id(0);
	const int rows = min(ROTATE_TILE, oh - y0), nw = ROTATE_TILE * ch / 4; // words of a row
	if (skew && x0 == 0 && i0 < rows) { // row i0's first pixels, left of its skew
		const size_t s = (size_t)(y0 + i0) * ow * ch;
		// min: a canvas may be narrower than the skew (ow 1 or 2), and the bytes past
		// the row are the next row's (or past the last row, the buffer's end)
		const int nb = min(rotate_skew(y0 + i0, ow, ch), ow) * ch;
		for (int j = 0; j < nb; j++)
			out[s + j] = (uchar)((outside ? bg : head[i0][j / ch]) >> (8 * (j % ch)));
	}
	if (x0 + ROTATE_TILE + (skew ? ROTATE_SKEW_MAX : 0) <= ow) {
		// Each item stores one word column w of the tile, in rows r0, r0 + rp, ...: rp rows
		// of nw words at a time, as many as the items hold (any rp stores every row once),
		// for 3 channels made even so that the items that store fill whole warps: 8, 8, 4, 4
		// for 1 to 4 channels (for 3, 96 of the 128 items). rp is a multiple of 4, so the
		// item's rows have one skew.
		const int rp = (ROTATE_TILE * ry / nw) & ~(int)(ch == 3);
		if (i0 >= rp * nw)
			return;
		const int w = i0 % nw, r0 = i0 / nw, d = skew ? rotate_skew(y0 + r0, ow, ch) : 0;
		const size_t step = (size_t)ow * ch * rp / 4; // words from one of the item's rows to the next
		__global uint *p = (__global uint *)(out + ((size_t)(y0 + r0) * ow + x0 + d) * ch) + w;
		if (outside) {
			const uint word = rotate_bg_word(bg, w, ch);
			for (int r = r0; r < rows; r += rp, p += step)
				*p = word;
		} else {
			for (int r = r0; r < rows; r += rp, p += step)
				*p = rotate_tile_word(tile, r, w, ch);
		}
		return;
	}
	// Word by word. Kept as loops: unrolled (as the compiler did by itself), they slowed
	// canvases of whole-word rows, whose tiles all but never come here: the pixel code's
	// registers came out differently.
#pragma unroll 1
	for (int i = i0; i < ROTATE_TILE * nw; i += ROTATE_TILE * ry) {
		const int r = i / nw, w = i - r * nw, t = 4 * w; // the word's first byte in the row
		if (r >= rows)
			break;
		const int d = skew ? rotate_skew(y0 + r, ow, ch) : 0;
		const int n = min(ROTATE_TILE, ow - x0 - d) * ch; // the row's bytes in the tile
		if (t >= n)
			continue;
		const uint word = outside ? rotate_bg_word(bg, w, ch) : rotate_tile_word(tile, r, w, ch);
		__global uchar *p = out + ((size_t)(y0 + r) * ow + x0 + d) * ch + t;
		if (t + 4 <= n)
			*(__global uint *)p = word;
		else
#pragma unroll 1
			for (int j = 0; j < n - t; j++)
				p[j] = (uchar)(word >> (8 * j));
	}
}

// The tile kernel around PIXEL, for images of CH channels. A tile that is all background
// skips the mapping and the local memory and stores the background pixel: on an 8K
// rotation by 30 degrees about half of the canvas. rotate_tile_class gives the same answer
// for every item of the group. SKEW (the _skew_cN kernels): the rows are skewed as
// rotate_skew says, and the class covers the ROTATE_SKEW_MAX columns right of the tile that
// the rows reach into. That takes less time than making the pixels of the next tile that a
// row's last word reaches into in a pass of their own (docs/BENCHMARKS.md, "Kernel
// shapes"). The other kernels leave the skew out (rows of whole words need none).
// WRAP (rotate_bilinear_wrap_c1, which the host runs for grey bilinear on such canvases
// where trans is true, in place of the _skew_c1 kernel): an item's line is one tile row,
// and that row's skew (0-3 pixels) would move all its places, the rows of a warp each by
// another amount, so that a warp's one-byte taps touch more sectors of the input. Instead
// place b makes the unskewed column x0 + b, or x0 + b + 32 where b is left of the row's
// skew d (the pixel the skewed row holds at its end), at tile index (b - d) mod 32; the
// warp's taps stay in step (docs/BENCHMARKS.md, "Kernel shapes"). A kernel of its own, so
// that the other angles run the _skew_c1 kernel's code unchanged: the wrap's test in every
// pixel of that kernel slowed them. Grey nearest and RGB, wrapped, were not faster.
#define ROTATE_MAP(NAME, PIXEL, CH, BILINEAR, SKEW, WRAP)                                \
__kernel __attribute__((reqd_work_group_size(ROTATE_TILE, ROTATE_RY(CH), 1)))           \
void NAME(__global const uchar *in, __global uchar *out, int W, int H, int ow, int oh,   \
	  int C, int S, uint bg, int T, int trans)                                       \
{                                                                                       \
	/* trans orders the work, not the bytes; the host runs WRAP with trans only, and \
	   this leaves the other order out of its code */                                \
	trans = WRAP || trans;                                                          \
	const int RY = ROTATE_RY(CH), N = ROTATE_TILE / ROTATE_RY(CH);                   \
	__local uint tile[ROTATE_TILE][ROTATE_TILE + 1]; /* rows padded by one word */  \
	__local uint head[ROTATE_TILE][ROTATE_SKEW_MAX];                                \
	int lx = get_local_id(0), ly = get_local_id(1);                                  \
	int x0 = get_group_id(0) * ROTATE_TILE, y0 = get_group_id(1) * ROTATE_TILE;     \
	int x = x0, y = y0;                                                             \
	MAP_UV(); /* at the tile's corner */                                            \
	int where = rotate_tile_class(U, V, W, H, C, S, BILINEAR,                       \
				      ROTATE_TILE + (SKEW ? ROTATE_SKEW_MAX : 0));        \
	bg &= CH == 4 ? 0xffffffffu : (1u << (8 * CH)) - 1;                             \
	if (where != ROTATE_OUTSIDE) {                                                  \
		int sh = (lx * T) >> 16;                                                \
		long c2 = 2 * (long)C, s2 = 2 * (long)S, R = ROTATE_R(BILINEAR);        \
		long eu = trans ? s2 : c2, fu = trans ? c2 : s2;                        \
		long ev = trans ? c2 : -s2, fv = trans ? -s2 : c2;                      \
		/* column c, row o of the tile is line c, place o (line o, place c     \
		   with trans) */                                                       \
		if (SKEW && x0 == 0)                                                    \
			for (int e = ly * ROTATE_TILE + lx; e < ROTATE_SKEW_MAX * ROTATE_TILE; \
			     e += ROTATE_TILE * RY) {                                     \
				/* the first pixels of row o (rotate_skew) */           \
				int o = e / ROTATE_SKEW_MAX, c = e % ROTATE_SKEW_MAX;     \
				if (c >= rotate_skew(y0 + o, ow, CH))                    \
					continue;                                       \
				int l = trans ? o : c, b = trans ? c : o;               \
				rotate_line ku = rotate_line_at(U + R, eu, fu, l);      \
				rotate_line kv = rotate_line_at(V + R, ev, fv, l);      \
				uint u = rotate_line_q(ku, b), v = rotate_line_q(kv, b); \
				head[o][c] = where == ROTATE_INSIDE ?                   \
					     PIXEL(in, W, H, CH, bg, u, v, true) :        \
					     PIXEL(in, W, H, CH, bg, u, v, false);        \
			}                                                               \
		/* With SKEW the item's pixels lie d columns right (d of the row's y   \
		   mod 4, and y0 is a multiple of 4): with trans its line is row lx,   \
		   d = rotate_skew(lx) moves its places; else its line is column lx    \
		   and its places rows b, whose b mod 4 (so d) is one value for even j \
		   and one for odd (one for all j where RY is 4). WRAP wraps the      \
		   places by the same d, dw, instead (above). */                       \
		long gu = U + R, gv = V + R;                                            \
		int d0 = 0, d1 = 0, dw = 0;                                             \
		if (WRAP) {                                                             \
			dw = rotate_skew(lx, ow, CH);                                   \
		} else if (SKEW && trans) {                                             \
			int d = rotate_skew(lx, ow, CH);                                \
			gu += fu * d;                                                   \
			gv += fv * d;                                                   \
		} else if (SKEW) {                                                      \
			d0 = rotate_skew(ly + sh, ow, CH);                              \
			d1 = rotate_skew(ly + RY + sh, ow, CH);                         \
		}                                                                       \
		rotate_line lu0 = rotate_line_at(gu, eu, fu, lx + d0);                  \
		rotate_line lv0 = rotate_line_at(gv, ev, fv, lx + d0);                  \
		rotate_line lu1 = rotate_line_at(gu, eu, fu, lx + d1);                  \
		rotate_line lv1 = rotate_line_at(gv, ev, fv, lx + d1);                  \
		uint px[ROTATE_TILE / ROTATE_RY(CH)];                                    \
		if (where == ROTATE_INSIDE)                                             \
			_Pragma("unroll") for (int j = 0; j < N; j++) {                  \
				int b = (ly + RY * j + sh) & (ROTATE_TILE - 1);         \
				if (WRAP)                                               \
					b += b < dw ? ROTATE_TILE : 0;                  \
				px[j] = PIXEL(in, W, H, CH, bg,                         \
					      rotate_line_q(j & 1 ? lu1 : lu0, b),      \
					      rotate_line_q(j & 1 ? lv1 : lv0, b), true); \
			}                                                               \
		else                                                                    \
			_Pragma("unroll") for (int j = 0; j < N; j++) {                  \
				int b = (ly + RY * j + sh) & (ROTATE_TILE - 1);         \
				if (WRAP)                                               \
					b += b < dw ? ROTATE_TILE : 0;                  \
				px[j] = PIXEL(in, W, H, CH, bg,                         \
					      rotate_line_q(j & 1 ? lu1 : lu0, b),      \
					      rotate_line_q(j & 1 ? lv1 : lv0, b), false); \
			}                                                               \
		_Pragma("unroll") for (int j = 0; j < N; j++) {                          \
			int b = (ly + RY * j + sh) & (ROTATE_TILE - 1);                 \
			if (trans)                                                      \
				tile[lx][(b - dw) & (ROTATE_TILE - 1)] = px[j];         \
			else                                                            \
				tile[b][lx] = px[j];                                    \
		}                                                                       \
		barrier(CLK_LOCAL_MEM_FENCE); /* where is the same for the group */     \
	}                                                                               \
	rotate_store_tile(out, tile, head, SKEW, where == ROTATE_OUTSIDE, bg, x0, y0, ow, oh,  \
			  CH, RY);                                                       \
}
IF_C1(ROTATE_MAP(rotate_nearest_c1, rotate_nearest_px, 1, false, false, false))
IF_C2(ROTATE_MAP(rotate_nearest_c2, rotate_nearest_px, 2, false, false, false))
IF_C3(ROTATE_MAP(rotate_nearest_c3, rotate_nearest_px, 3, false, false, false))
IF_C4(ROTATE_MAP(rotate_nearest_c4, rotate_nearest_px, 4, false, false, false))
IF_C1(ROTATE_MAP(rotate_bilinear_c1, rotate_bilinear_px, 1, true, false, false))
IF_C2(ROTATE_MAP(rotate_bilinear_c2, rotate_bilinear_alpha_px, 2, true, false, false))
IF_C3(ROTATE_MAP(rotate_bilinear_c3, rotate_bilinear_px, 3, true, false, false))
IF_C4(ROTATE_MAP(rotate_bilinear_c4, rotate_bilinear_alpha_px, 4, true, false, false))
// 4 channels make rows of whole words: no _skew_c4
IF_C1(ROTATE_MAP(rotate_nearest_skew_c1, rotate_nearest_px, 1, false, true, false))
IF_C2(ROTATE_MAP(rotate_nearest_skew_c2, rotate_nearest_px, 2, false, true, false))
IF_C3(ROTATE_MAP(rotate_nearest_skew_c3, rotate_nearest_px, 3, false, true, false))
IF_C1(ROTATE_MAP(rotate_bilinear_skew_c1, rotate_bilinear_px, 1, true, true, false))
IF_C2(ROTATE_MAP(rotate_bilinear_skew_c2, rotate_bilinear_alpha_px, 2, true, true, false))
IF_C3(ROTATE_MAP(rotate_bilinear_skew_c3, rotate_bilinear_px, 3, true, true, false))
IF_C1(ROTATE_MAP(rotate_bilinear_wrap_c1, rotate_bilinear_px, 1, true, true, true))
#endif // !CLIMG_CPU_KERNELS

// For CPU devices (kernels/cpu.clh), and for inputs of 2^31 bytes or more: one output pixel a
// work-item, taps read only where they are inside the input: on a CPU device the tile
// kernels above, or the tile kernels' pixel code (which loads every tap), take longer. A
// bilinear pixel whose taps all lie outside stores the background before any weight
// (exactly what the weights give), which saves a third of the time of a rotation by 30
// degrees (docs/BENCHMARKS.md, "Kernel shapes").
__kernel void rotate_nearest_cpu(__global const uchar *in, __global uchar *out, int W,
				 int H, int ch, int ow, int oh, int C, int S, uint bg)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= ow || y >= oh)
		return;
	MAP_UV();
	int sx = rotate_q_px(rotate_q(U, false)), sy = rotate_q_px(rotate_q(V, false));
	__global uchar *d = out + ((size_t)y * ow + x) * ch;
	if (sx >= 0 && sx < W && sy >= 0 && sy < H) {
		__global const uchar *s = in + ((size_t)sy * W + sx) * ch;
		for (int c = 0; c < ch; c++)
			d[c] = s[c];
	} else {
		for (int c = 0; c < ch; c++)
			d[c] = (uchar)(bg >> (8 * c));
	}
}

// Sample c of the pixel at byte offset off, or of the background when !inside.
uint rotate_sample(__global const uchar *in, bool inside, size_t off, int c, uint bg)
{
	return inside ? in[off + c] : (bg >> (8 * c)) & 255;
}

__kernel void rotate_bilinear_cpu(__global const uchar *in, __global uchar *out, int W,
				  int H, int ch, int ow, int oh, int C, int S, uint bg)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= ow || y >= oh)
		return;
	MAP_UV();
	uint u = rotate_q(U, true), v = rotate_q(V, true);
	int sx = rotate_q_px(u), sy = rotate_q_px(v);
	uint fx = u & 255, fy = v & 255;
	uint w[4] = { (256 - fx) * (256 - fy), fx * (256 - fy), (256 - fx) * fy, fx * fy };
	bool ok[4];
	size_t off[4];
	__global uchar *d = out + ((size_t)y * ow + x) * ch;
	if (sx < -1 || sy < -1 || sx >= W || sy >= H) { // every tap outside: the background
		for (int c = 0; c < ch; c++)
			d[c] = (uchar)(bg >> (8 * c));
		return;
	}
	for (int k = 0; k < 4; k++) {
		int px = sx + (k & 1), py = sy + (k >> 1);
		ok[k] = px >= 0 && px < W && py >= 0 && py < H;
		off[k] = ok[k] ? ((size_t)py * W + px) * ch : 0;
	}
	bool alpha = ch == 2 || ch == 4;
	uint D = 0, wa[4] = { 0, 0, 0, 0 };
	if (alpha) {
		for (int k = 0; k < 4; k++) {
			wa[k] = w[k] * rotate_sample(in, ok[k], off[k], ch - 1, bg);
			D += wa[k];
		}
		d[ch - 1] = (uchar)((D + 32768) >> 16);
	}
	for (int c = 0; c < ch - alpha; c++) {
		uint n = 0;
		if (D) {
			for (int k = 0; k < 4; k++)
				n += wa[k] * rotate_sample(in, ok[k], off[k], c, bg);
			d[c] = (uchar)((n + D / 2) / D);
		} else {
			for (int k = 0; k < 4; k++)
				n += w[k] * rotate_sample(in, ok[k], off[k], c, bg);
			d[c] = (uchar)((n + 32768) >> 16);
		}
	}
}

// rotate_bilinear_cpu for images without alpha (1 or 3 channels), with the channel count known
// at compile time: the same arithmetic as rotate_bilinear_cpu's path without alpha,
// (w0 p00 + w1 p10 + w2 p01 + w3 p11 + 32768) >> 16, reading the four taps directly when
// they all lie inside the input.
#define ROTATE_BILINEAR_OPAQUE(NAME, CH)                                                 \
__kernel void NAME(__global const uchar *in, __global uchar *out, int W, int H, int ch,  \
		   int ow, int oh, int C, int S, uint bg)                                \
{                                                                                       \
	int x = get_global_id(0), y = get_global_id(1);                                 \
	if (x >= ow || y >= oh)                                                         \
		return;                                                                 \
	MAP_UV();                                                                       \
	uint u = rotate_q(U, true), v = rotate_q(V, true);                              \
	int sx = rotate_q_px(u), sy = rotate_q_px(v);                                   \
	uint fx = u & 255, fy = v & 255;                                                \
	uint w0 = (256 - fx) * (256 - fy), w1 = fx * (256 - fy), w2 = (256 - fx) * fy,   \
	     w3 = fx * fy;                                                              \
	__global uchar *d = out + ((size_t)y * ow + x) * CH;                            \
	if (sx < -1 || sy < -1 || sx >= W || sy >= H) { /* every tap outside */         \
		_Pragma("unroll") for (int c = 0; c < CH; c++)                           \
			d[c] = (uchar)(bg >> (8 * c));                                   \
		return;                                                                 \
	}                                                                               \
	if (sx >= 0 && sy >= 0 && sx + 1 < W && sy + 1 < H) {                           \
		__global const uchar *p = in + ((size_t)sy * W + sx) * CH;              \
		__global const uchar *q = p + (size_t)W * CH;                           \
		_Pragma("unroll") for (int c = 0; c < CH; c++)                           \
			d[c] = (uchar)((w0 * p[c] + w1 * p[CH + c] + w2 * q[c] +        \
					w3 * q[CH + c] + 32768) >> 16);                 \
		return;                                                                 \
	}                                                                               \
	bool ok[4];                                                                     \
	size_t off[4];                                                                  \
	for (int k = 0; k < 4; k++) {                                                   \
		int px = sx + (k & 1), py = sy + (k >> 1);                              \
		ok[k] = px >= 0 && px < W && py >= 0 && py < H;                         \
		off[k] = ok[k] ? ((size_t)py * W + px) * CH : 0;                        \
	}                                                                               \
	_Pragma("unroll") for (int c = 0; c < CH; c++)                                   \
		d[c] = (uchar)((w0 * rotate_sample(in, ok[0], off[0], c, bg) +             \
				w1 * rotate_sample(in, ok[1], off[1], c, bg) +             \
				w2 * rotate_sample(in, ok[2], off[2], c, bg) +             \
				w3 * rotate_sample(in, ok[3], off[3], c, bg) + 32768) >> 16); \
}
IF_C1(ROTATE_BILINEAR_OPAQUE(rotate_bilinear_cpu_c1, 1))
IF_C3(ROTATE_BILINEAR_OPAQUE(rotate_bilinear_cpu_c3, 3))
