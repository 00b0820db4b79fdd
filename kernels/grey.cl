// SPDX-License-Identifier: MIT
// grey: colour to luma; the formulas are in src/stages/grey.c (the specification).
// wr == 0 selects the average: (R + G + B + 1) / 3; otherwise (wr R + wg G + wb B + 16384) >> 15.
// The image is treated as a flat array of npx pixels (rows are unpadded). In grey_c3 and
// grey_c4 each work-item converts 16 pixels with whole 16-byte loads and stores, the last
// one what is left; grey_cpu_c3 and grey_cpu_c4 (below) are for CPU devices.
#include "channels.clh"

uchar grey_luma(uint r, uint g, uint b, int wr, int wg, int wb)
{
	return (uchar)(wr ? (wr * r + wg * g + wb * b + 16384u) >> 15 : (r + g + b + 1u) / 3u);
}

#ifndef CLIMG_CPU_KERNELS // the GPU family (src/ocl/program.c)
#if CLIMG_HAS_CH(3)
// RGB (3 channels) to grey. Global size: ceil(npx / 16).
__kernel void grey_c3(__global const uchar *in, __global uchar *out, uint npx, int wr, int wg,
		      int wb)
{
	size_t p0 = get_global_id(0) * 16;
	if (p0 + 16 <= npx) {
		__global const uint4 *s = (__global const uint4 *)(in + p0 * 3); // 48-byte aligned
		uchar t[48], o[16];
		vstore16(as_uchar16(s[0]), 0, t);
		vstore16(as_uchar16(s[1]), 1, t);
		vstore16(as_uchar16(s[2]), 2, t);
#pragma unroll
		for (int k = 0; k < 16; k++)
			o[k] = grey_luma(t[3 * k], t[3 * k + 1], t[3 * k + 2], wr, wg, wb);
		*(__global uint4 *)(out + p0) = as_uint4(vload16(0, o));
	} else {
		for (size_t p = p0; p < npx; p++)
			out[p] = grey_luma(in[3 * p], in[3 * p + 1], in[3 * p + 2], wr, wg, wb);
	}
}
#endif

#if CLIMG_HAS_CH(4)
// RGBA (4 channels) to grey+alpha. Global size: ceil(npx / 16).
__kernel void grey_c4(__global const uchar *in, __global uchar *out, uint npx, int wr, int wg,
		      int wb)
{
	size_t p0 = get_global_id(0) * 16;
	if (p0 + 16 <= npx) {
		__global const uint4 *s = (__global const uint4 *)(in + p0 * 4); // 64-byte aligned
		uchar t[64], o[32];
#pragma unroll
		for (int k = 0; k < 4; k++)
			vstore16(as_uchar16(s[k]), k, t);
#pragma unroll
		for (int k = 0; k < 16; k++) {
			o[2 * k] = grey_luma(t[4 * k], t[4 * k + 1], t[4 * k + 2], wr, wg, wb);
			o[2 * k + 1] = t[4 * k + 3];
		}
		__global uint4 *d = (__global uint4 *)(out + p0 * 2); // 32-byte aligned
		d[0] = as_uint4(vload16(0, o));
		d[1] = as_uint4(vload16(1, o));
	} else {
		for (size_t p = p0; p < npx; p++) {
			out[2 * p] = grey_luma(in[4 * p], in[4 * p + 1], in[4 * p + 2], wr, wg, wb);
			out[2 * p + 1] = in[4 * p + 3];
		}
	}
}
#endif
#else // the CPU family

// For CPU devices: work-item g converts pixels [g P, g P + P) (P = GREY_CPU_PX), 16 at a
// time with whole aligned 16-byte loads and stores (the pixel offsets are multiples of 16,
// the buffers' bases aligned), the pixels after the last 16 one at a time. The weighted sum
// and the average are computed on 16 lanes at once, with grey_luma's arithmetic.
// Global ceil(npx / P).
#define GREY_CPU_PX 16384

// grey_luma on 16 pixels at once.
uint16 grey_luma16(uint16 r, uint16 g, uint16 b, int wr, int wg, int wb)
{
	return wr ? ((uint)wr * r + (uint)wg * g + (uint)wb * b + 16384u) >> 15
		  : (r + g + b + 1u) / 3u;
}

#if CLIMG_HAS_CH(3)
// RGB to grey.
__kernel void grey_cpu_c3(__global const uchar *in, __global uchar *out, uint npx, int wr,
			  int wg, int wb)
{
	size_t p = get_global_id(0) * (size_t)GREY_CPU_PX;
	size_t p1 = min(p + GREY_CPU_PX, (size_t)npx);
	for (; p + 16 <= p1; p += 16) {
		__global const uint4 *s = (__global const uint4 *)(in + p * 3);
		uchar16 a = as_uchar16(s[0]), b = as_uchar16(s[1]), c = as_uchar16(s[2]);
		// pixel k's channel q is byte 3 k + q of a, b, c
		uint16 r = convert_uint16((uchar16)(a.s0, a.s3, a.s6, a.s9, a.sc, a.sf, b.s2,
						    b.s5, b.s8, b.sb, b.se, c.s1, c.s4, c.s7,
						    c.sa, c.sd));
		uint16 g = convert_uint16((uchar16)(a.s1, a.s4, a.s7, a.sa, a.sd, b.s0, b.s3,
						    b.s6, b.s9, b.sc, b.sf, c.s2, c.s5, c.s8,
						    c.sb, c.se));
		uint16 bl = convert_uint16((uchar16)(a.s2, a.s5, a.s8, a.sb, a.se, b.s1, b.s4,
						     b.s7, b.sa, b.sd, c.s0, c.s3, c.s6, c.s9,
						     c.sc, c.sf));
		uint16 y = grey_luma16(r, g, bl, wr, wg, wb);
		*(__global uint4 *)(out + p) = as_uint4(convert_uchar16(y));
	}
	for (; p < p1; p++)
		out[p] = grey_luma(in[3 * p], in[3 * p + 1], in[3 * p + 2], wr, wg, wb);
}
#endif

#if CLIMG_HAS_CH(4)
// RGBA to grey+alpha.
__kernel void grey_cpu_c4(__global const uchar *in, __global uchar *out, uint npx, int wr,
			  int wg, int wb)
{
	size_t p = get_global_id(0) * (size_t)GREY_CPU_PX;
	size_t p1 = min(p + GREY_CPU_PX, (size_t)npx);
	for (; p + 16 <= p1; p += 16) {
		__global const uint4 *s = (__global const uint4 *)(in + p * 4);
		uint16 px = (uint16)(s[0], s[1], s[2], s[3]);
		uint16 r = px & 255u, g = (px >> 8) & 255u, bl = (px >> 16) & 255u;
		uint16 y = grey_luma16(r, g, bl, wr, wg, wb);
		ushort16 o = convert_ushort16(y | (px >> 24) << 8); // grey, then alpha
		__global uint4 *d = (__global uint4 *)(out + p * 2);
		d[0] = as_uint4(o.lo);
		d[1] = as_uint4(o.hi);
	}
	for (; p < p1; p++) {
		out[2 * p] = grey_luma(in[4 * p], in[4 * p + 1], in[4 * p + 2], wr, wg, wb);
		out[2 * p + 1] = in[4 * p + 3];
	}
}
#endif
#endif
