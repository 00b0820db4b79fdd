// SPDX-License-Identifier: MIT
// rotate: clockwise quarter turns as index remaps, specified in src/stages/rotate.c.
// W, H describe the input. rotate_90 / rotate_270 take any size (the output is H x W);
// the _cN kernels need W and H to be multiples of 4 and an image of N channels.
#include "remap.clh"

REMAP_BYTES(rotate_90, 1)
REMAP_BYTES(rotate_270, 2)
REMAP_WORDS(rotate_90_c1, 1, 1, REMAP_TP(1), REMAP_RY_FAST(1))
REMAP_WORDS(rotate_90_c2, 2, 1, REMAP_TP(2), REMAP_RY_FAST(2))
REMAP_WORDS(rotate_90_c3, 3, 1, REMAP_TP(3), REMAP_RY_FAST(3))
REMAP_WORDS(rotate_90_c4, 4, 1, REMAP_TP(4), REMAP_RY_FAST(4))
REMAP_WORDS(rotate_270_c1, 1, 2, REMAP_TP(1), REMAP_RY_FAST(1))
REMAP_WORDS(rotate_270_c2, 2, 2, REMAP_TP(2), REMAP_RY_FAST(2))
REMAP_WORDS(rotate_270_c3, 3, 2, REMAP_TP(3), REMAP_RY_FAST(3))
REMAP_WORDS(rotate_270_c4, 4, 2, REMAP_TP(4), REMAP_RY_FAST(4))

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
ROTATE_180_WORDS(rotate_180_c2, 2)
ROTATE_180_WORDS(rotate_180_c3, 3)
ROTATE_180_WORDS(rotate_180_c4, 4)
