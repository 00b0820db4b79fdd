// SPDX-License-Identifier: MIT
// rotate: clockwise quarter turns as index remaps (rotate_90, rotate_180, rotate_270 and
// their word-wide _cN forms), and any other angle through "the mapping" (rotate_nearest,
// rotate_bilinear): both specified in src/stages/rotate.c, whose CPU code this matches byte
// for byte. W, H, ch describe the input. rotate_90 / rotate_270 take any size (the output is
// H x W); the _cN kernels need the sides to be multiples of 4 and an image of N channels.
// The _cpu_cN kernels (any size, N channels) are for CPU devices (see kernels/cpu.clh).
#include "cpu.clh"
#include "remap.clh"

REMAP_BYTES(rotate_90, 1)
REMAP_BYTES(rotate_270, 2)
REMAP_WORDS(rotate_90_c1, 1, 1, REMAP_TX(1), REMAP_TY(1), REMAP_RY_FAST(1))
REMAP_WORDS(rotate_90_c2, 2, 1, REMAP_TX(2), REMAP_TY(2), REMAP_RY_FAST(2))
REMAP_WORDS(rotate_90_c3, 3, 1, REMAP_TX(3), REMAP_TY(3), REMAP_RY_FAST(3))
REMAP_WORDS(rotate_90_c4, 4, 1, REMAP_TX(4), REMAP_TY(4), REMAP_RY_FAST(4))
REMAP_WORDS(rotate_270_c1, 1, 2, REMAP_TX(1), REMAP_TY(1), REMAP_RY_FAST(1))
REMAP_WORDS(rotate_270_c2, 2, 2, REMAP_TX(2), REMAP_TY(2), REMAP_RY_FAST(2))
REMAP_WORDS(rotate_270_c3, 3, 2, REMAP_TX(3), REMAP_TY(3), REMAP_RY_FAST(3))
REMAP_WORDS(rotate_270_c4, 4, 2, REMAP_TX(4), REMAP_TY(4), REMAP_RY_FAST(4))
REMAP_CPU(rotate_90_cpu_c1, 1, 1)
REMAP_CPU(rotate_90_cpu_c2, 2, 1)
REMAP_CPU(rotate_90_cpu_c3, 3, 1)
REMAP_CPU(rotate_90_cpu_c4, 4, 1)
REMAP_CPU(rotate_270_cpu_c1, 1, 2)
REMAP_CPU(rotate_270_cpu_c2, 2, 2)
REMAP_CPU(rotate_270_cpu_c3, 3, 2)
REMAP_CPU(rotate_270_cpu_c4, 4, 2)

// 180 degrees reverses the pixel order of the whole (row-major, unpadded) image:
// out pixel i = in pixel W*H-1-i. Any size: one work-item per pixel, global (W, H).
__kernel void rotate_180(__global const uchar *in, __global uchar *out, int W, int H, int ch)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= W || y >= H)
		return;
	size_t n = (size_t)W * H, p = (size_t)y * W + x;
	__global const uchar *s = in + (n - 1 - p) * ch;
	__global uchar *d = out + p * ch;
	for (int c = 0; c < ch; c++)
		d[c] = s[c];
}

// W a multiple of 4: a row of 4 pixels is CH whole words; each item reverses 4 such groups
// of one row, L groups apart (L the local size). Global (ceil(W/4 / (4 L)) * L, H).
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
		uchar ib[4 * CH], ob[4 * CH];                                           \
		_Pragma("unroll") for (int m = 0; m < CH; m++)                           \
			vstore4(as_uchar4(s[m]), m, ib);                                \
		_Pragma("unroll") for (int p = 0; p < 4; p++)                            \
			_Pragma("unroll") for (int c = 0; c < CH; c++)                   \
				ob[p * CH + c] = ib[(3 - p) * CH + c];                  \
		__global uint *d = out + ((size_t)y * G + g) * CH;                      \
		_Pragma("unroll") for (int m = 0; m < CH; m++)                           \
			d[m] = as_uint(vload4(m, ob));                                  \
	}                                                                               \
}
ROTATE_180_WORDS(rotate_180_c1, 1)

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
ROTATE_180_WORDS(rotate_180_c2, 2)
ROTATE_180_WORDS(rotate_180_c3, 3)
ROTATE_180_WORDS(rotate_180_c4, 4)

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
ROTATE_180_CPU(rotate_180_cpu_c1, 1, 16)
ROTATE_180_CPU(rotate_180_cpu_c2, 2, 8)
ROTATE_180_CPU(rotate_180_cpu_c3, 3, 16)
ROTATE_180_CPU(rotate_180_cpu_c4, 4, 4)

// ---- any angle: the mapping of src/stages/rotate.c ------------------------------------------
// ow x oh is the output; C, S = round(2^30 cos A), round(2^30 sin A); bg holds the background
// pixel, channel c in bits 8c..8c+7.

#define BIAS_PX (1 << 17)
#define BIAS ((long)1 << 48)
#define ONE ((long)1 << 30)

// U and V of the mapping for output pixel (x, y): 2^31 (source position + 2^17), positive.
// The products are 32 x 32 -> 64 bits (one instruction on some GPUs, not a 64-bit multiply).
#define MAP_UV()                                                                         \
	int dx = 2 * x + 1 - ow, dy = 2 * y + 1 - oh; /* |dx|, |dy| < 2^18 */              \
	long U = ((long)(W - 1) << 30) + (long)dx * C + (long)dy * S + BIAS;             \
	long V = ((long)(H - 1) << 30) - (long)dx * S + (long)dy * C + BIAS

__kernel void rotate_nearest(__global const uchar *in, __global uchar *out, int W, int H,
			     int ch, int ow, int oh, int C, int S, uint bg)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= ow || y >= oh)
		return;
	MAP_UV();
	int sx = (int)((U + ONE) >> 31) - BIAS_PX, sy = (int)((V + ONE) >> 31) - BIAS_PX;
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

__kernel void rotate_bilinear(__global const uchar *in, __global uchar *out, int W, int H,
			      int ch, int ow, int oh, int C, int S, uint bg)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= ow || y >= oh)
		return;
	MAP_UV();
	uint u = (uint)((U + (1 << 22)) >> 23), v = (uint)((V + (1 << 22)) >> 23);
	int sx = (int)(u >> 8) - BIAS_PX, sy = (int)(v >> 8) - BIAS_PX;
	uint fx = u & 255, fy = v & 255;
	uint w[4] = { (256 - fx) * (256 - fy), fx * (256 - fy), (256 - fx) * fy, fx * fy };
	bool ok[4];
	size_t off[4];
	for (int k = 0; k < 4; k++) {
		int px = sx + (k & 1), py = sy + (k >> 1);
		ok[k] = px >= 0 && px < W && py >= 0 && py < H;
		off[k] = ok[k] ? ((size_t)py * W + px) * ch : 0;
	}
	__global uchar *d = out + ((size_t)y * ow + x) * ch;
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

// rotate_bilinear for images without alpha (1 or 3 channels), with the channel count known
// at compile time: the same arithmetic as rotate_bilinear's path without alpha,
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
	uint u = (uint)((U + (1 << 22)) >> 23), v = (uint)((V + (1 << 22)) >> 23);       \
	int sx = (int)(u >> 8) - BIAS_PX, sy = (int)(v >> 8) - BIAS_PX;                  \
	uint fx = u & 255, fy = v & 255;                                                \
	uint w0 = (256 - fx) * (256 - fy), w1 = fx * (256 - fy), w2 = (256 - fx) * fy,   \
	     w3 = fx * fy;                                                              \
	__global uchar *d = out + ((size_t)y * ow + x) * CH;                            \
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
ROTATE_BILINEAR_OPAQUE(rotate_bilinear_c1, 1)
ROTATE_BILINEAR_OPAQUE(rotate_bilinear_c3, 3)
