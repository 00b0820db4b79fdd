// SPDX-License-Identifier: MIT
// grey: colour to luma; the formulas are in src/stages/grey.c (the specification).
// wr == 0 selects the average: (R + G + B + 1) / 3; otherwise (wr R + wg G + wb B + 16384) >> 15.
// The image is treated as a flat array of npx pixels (rows are unpadded). Each work-item
// converts 16 pixels with whole 16-byte loads and stores; the last one does what is left.

uchar grey_luma(uint r, uint g, uint b, int wr, int wg, int wb)
{
	return (uchar)(wr ? (wr * r + wg * g + wb * b + 16384u) >> 15 : (r + g + b + 1u) / 3u);
}

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
