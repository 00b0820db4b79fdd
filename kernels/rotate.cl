// SPDX-License-Identifier: MIT
// rotate: clockwise quarter turns as index remaps (rotate_90, rotate_180, rotate_270), and
// any other angle through "the mapping" (rotate_nearest, rotate_bilinear): both specified in
// src/stages/rotate.c, whose CPU code this matches byte for byte. One work-item per output
// pixel; W, H, ch describe the input.

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

// ---- any angle: the mapping of src/stages/rotate.c ------------------------------------------
// ow x oh is the output; C, S = round(2^30 cos A), round(2^30 sin A); bg holds the background
// pixel, channel c in bits 8c..8c+7.

#define BIAS_PX (1 << 17)
#define BIAS ((long)1 << 48)
#define ONE ((long)1 << 30)

// U and V of the mapping for output pixel (x, y): 2^31 (source position + 2^17), positive.
#define MAP_UV()                                                                         \
	long dx = 2 * x + 1 - ow, dy = 2 * y + 1 - oh;                                   \
	long U = ((long)(W - 1) << 30) + dx * C + dy * S + BIAS;                         \
	long V = ((long)(H - 1) << 30) - dx * S + dy * C + BIAS

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
