// SPDX-License-Identifier: MIT
// transpose: out(x, y) = in(y, x), specified in src/stages/transpose.c. One work-item per
// output pixel; W, H, ch describe the input (the output is H x W).

__kernel void transpose(__global const uchar *in, __global uchar *out, int W, int H, int ch)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= H || y >= W)
		return;
	__global const uchar *s = in + ((size_t)x * W + y) * ch;
	__global uchar *d = out + ((size_t)y * H + x) * ch;
	for (int c = 0; c < ch; c++)
		d[c] = s[c];
}
