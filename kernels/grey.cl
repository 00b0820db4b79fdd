// SPDX-License-Identifier: MIT
// grey: colour to luma; the formulas are in src/stages/grey.c (the specification).
// wr == 0 selects the average: (R + G + B + 1) / 3; otherwise (wr R + wg G + wb B + 16384) >> 15.
// in has ch = 3 or 4 channels; out has ch - 2 (alpha copied).

__kernel void grey(__global const uchar *in, __global uchar *out, int w, int h, int ch,
		   int wr, int wg, int wb)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= w || y >= h)
		return;
	size_t i = (size_t)y * w + x;
	__global const uchar *s = in + i * ch;
	uint r = s[0], g = s[1], b = s[2];
	uint v = wr ? (wr * r + wg * g + wb * b + 16384u) >> 15 : (r + g + b + 1u) / 3u;
	if (ch == 4) {
		out[i * 2] = (uchar)v;
		out[i * 2 + 1] = s[3];
	} else {
		out[i] = (uchar)v;
	}
}
