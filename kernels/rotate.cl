// SPDX-License-Identifier: MIT
// rotate: clockwise quarter turns as index remaps; the mapping is specified in
// src/stages/rotate.c. One work-item per output pixel; W, H, ch describe the input.

#define COPY_PIXEL(sx, sy)                                                       \
	do {                                                                     \
		__global const uchar *s = in + ((size_t)(sy) * W + (sx)) * ch;    \
		__global uchar *d = out + ((size_t)y * ow + x) * ch;              \
		for (int c = 0; c < ch; c++)                                     \
			d[c] = s[c];                                             \
	} while (0)

__kernel void rotate_90(__global const uchar *in, __global uchar *out, int W, int H, int ch)
{
	int x = get_global_id(0), y = get_global_id(1), ow = H;
	if (x >= H || y >= W)
		return;
	COPY_PIXEL(y, H - 1 - x);
}

__kernel void rotate_180(__global const uchar *in, __global uchar *out, int W, int H, int ch)
{
	int x = get_global_id(0), y = get_global_id(1), ow = W;
	if (x >= W || y >= H)
		return;
	COPY_PIXEL(W - 1 - x, H - 1 - y);
}

__kernel void rotate_270(__global const uchar *in, __global uchar *out, int W, int H, int ch)
{
	int x = get_global_id(0), y = get_global_id(1), ow = H;
	if (x >= H || y >= W)
		return;
	COPY_PIXEL(W - 1 - y, x);
}
