// SPDX-License-Identifier: MIT
// resize: specified in src/stages/resize.c, weights from src/stages/resize_tables.c. An
// axis's table is int words: start[n], count[n], then the weights, n * taps of them: sample
// by sample for the vertical axis, tap by tap for the horizontal (resize_h_cN; nearest:
// start[n] only). Sums are 32-bit: at most 255 * 2^22 * 1.3 (the largest sum of |weights|
// of Pillow's lanczos) < 2^31, and 65280 * 256 for bilinear.
#include "channels.clh"

// clamp((sum + r) >> s, 0, m); a negative sum gives 0
inline int resize_clamp(int sum, int r, int s, int m)
{
	int v = sum + r;
	return v < 0 ? 0 : min(v >> s, m);
}

// resize_nearest_cN: out(x, y) = in(xt[x], yt[y]). Global (Wo, Ho).
#define RESIZE_NEAREST(CH)                                                               \
__kernel void resize_nearest_c##CH(__global const uchar *in, __global uchar *out, int W,  \
				   int Wo, int Ho, __global const int *xt,                \
				   __global const int *yt)                                \
{                                                                                       \
	int x = get_global_id(0), y = get_global_id(1);                                 \
	if (x >= Wo || y >= Ho)                                                         \
		return;                                                                 \
	__global const uchar *s = in + ((size_t)yt[y] * W + xt[x]) * CH;                \
	__global uchar *d = out + ((size_t)y * Wo + x) * CH;                            \
	for (int c = 0; c < CH; c++)                                                    \
		d[c] = s[c];                                                            \
}

// resize_h_cN, pass 1: tmp(x, y) (Wo x H, 16-bit) from the taps of input row y, colour
// premultiplied by alpha first where premul; xt's weights are stored tap by tap
// (w[k * Wo + x], src/stages/resize.c), so that neighbouring items read neighbouring words.
// Global (Wo, H).
#define RESIZE_H(CH)                                                                     \
__kernel void resize_h_c##CH(__global const uchar *in, __global ushort *tmp, int W, int H, \
			     int Wo, __global const int *xt, int s1, int r1,              \
			     int m1, int premul)                                          \
{                                                                                       \
	int x = get_global_id(0), y = get_global_id(1);                                 \
	if (x >= Wo || y >= H)                                                          \
		return;                                                                 \
	int start = xt[x], count = xt[Wo + x];                                          \
	__global const int *w = xt + 2 * Wo + x;                                        \
	__global const uchar *p = in + ((size_t)y * W + start) * CH;                    \
	int sum[CH];                                                                    \
	for (int c = 0; c < CH; c++)                                                    \
		sum[c] = 0;                                                             \
	for (int i = 0; i < count; i++, p += CH) {                                      \
		for (int c = 0; c < CH; c++) {                                          \
			int v = p[c];                                                   \
			if (premul && c < CH - 1) {                                     \
				int m = v * p[CH - 1] + 128;                            \
				v = ((m >> 8) + m) >> 8;                                \
			}                                                               \
			sum[c] += w[(size_t)i * Wo] * v;                                \
		}                                                                       \
	}                                                                               \
	__global ushort *d = tmp + ((size_t)y * Wo + x) * CH;                           \
	for (int c = 0; c < CH; c++)                                                    \
		d[c] = (ushort)resize_clamp(sum[c], r1, s1, m1);                        \
}

// resize_v_cN, pass 2: out(x, y) from the taps down column x of tmp, colour divided by the
// result's alpha afterwards where premul. Global (Wo, Ho).
#define RESIZE_V(CH)                                                                     \
__kernel void resize_v_c##CH(__global const ushort *tmp, __global uchar *out, int Wo,     \
			     int Ho, __global const int *yt, int taps, int s2, int r2,    \
			     int premul)                                                  \
{                                                                                       \
	int x = get_global_id(0), y = get_global_id(1);                                 \
	if (x >= Wo || y >= Ho)                                                         \
		return;                                                                 \
	int start = yt[y], count = yt[Ho + y];                                          \
	__global const int *w = yt + 2 * Ho + (size_t)y * taps;                         \
	__global const ushort *p = tmp + ((size_t)start * Wo + x) * CH;                 \
	int sum[CH];                                                                    \
	for (int c = 0; c < CH; c++)                                                    \
		sum[c] = 0;                                                             \
	for (int i = 0; i < count; i++, p += (size_t)Wo * CH)                           \
		for (int c = 0; c < CH; c++)                                            \
			sum[c] += w[i] * p[c];                                          \
	int v[CH];                                                                      \
	for (int c = 0; c < CH; c++)                                                    \
		v[c] = resize_clamp(sum[c], r2, s2, 255);                               \
	int a = v[CH - 1];                                                              \
	if (premul && a != 0 && a != 255)                                               \
		for (int c = 0; c < CH - 1; c++)                                        \
			v[c] = min(255 * v[c] / a, 255);                                \
	__global uchar *d = out + ((size_t)y * Wo + x) * CH;                            \
	for (int c = 0; c < CH; c++)                                                    \
		d[c] = (uchar)v[c];                                                     \
}

#define RESIZE_KERNELS(CH) RESIZE_NEAREST(CH) RESIZE_H(CH) RESIZE_V(CH)
IF_C1(RESIZE_KERNELS(1))
IF_C2(RESIZE_KERNELS(2))
IF_C3(RESIZE_KERNELS(3))
IF_C4(RESIZE_KERNELS(4))
