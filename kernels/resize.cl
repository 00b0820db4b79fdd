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

// Colour v premultiplied by alpha a, as Pillow: (t + (t >> 8)) >> 8, t = v a + 128.
inline int resize_pm(int v, int a)
{
	int t = v * a + 128;
	return ((t >> 8) + t) >> 8;
}

// Stores the ch channels of one output pixel at d from their sums: each clamp((sum + r) >>
// s, 0, 255), colour then divided by the pixel's alpha where premul, as Pillow.
inline void resize_store(__global uchar *d, const int *sum, int ch, int r, int s, int premul)
{
	int v[4];
	for (int c = 0; c < ch; c++)
		v[c] = resize_clamp(sum[c], r, s, 255);
	int a = v[ch - 1];
	if (premul && a != 0 && a != 255)
		for (int c = 0; c < ch - 1; c++)
			v[c] = min(255 * v[c] / a, 255);
	for (int c = 0; c < ch; c++)
		d[c] = (uchar)v[c];
}

// The ch sums h along a row from p (ch-channel pixels), count taps, the weights step words
// apart from w, colour premultiplied by alpha first where premul (pass 1 of the two).
inline void resize_row_sums(int *h, __global const uchar *p, __global const int *w, int step,
			    int count, int ch, int premul)
{
	for (int c = 0; c < ch; c++)
		h[c] = 0;
	for (int i = 0; i < count; i++, p += ch)
		for (int c = 0; c < ch; c++) {
			int v = premul && c < ch - 1 ? resize_pm(p[c], p[ch - 1]) : p[c];
			h[c] += w[(size_t)i * step] * v;
		}
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
	int sum[CH];                                                                    \
	resize_row_sums(sum, in + ((size_t)y * W + xt[x]) * CH, xt + 2 * Wo + x, Wo,     \
			xt[Wo + x], CH, premul);                                        \
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
	resize_store(out + ((size_t)y * Wo + x) * CH, sum, CH, r2, s2, premul);         \
}

// resize_hv_cN, both passes in one where the taps are few: out(x, y) from the taps down
// column x of pass 1's sums along the rows, each clamped as pass 1 stores it, so that the
// bytes are the two passes'. xt and yt as resize_h_cN and resize_v_cN take them. Global
// (Wo, Ho).
#define RESIZE_HV(CH)                                                                    \
__kernel void resize_hv_c##CH(__global const uchar *in, __global uchar *out, int W, int Wo, \
			      int Ho, __global const int *xt, __global const int *yt,      \
			      int taps, int s1, int r1, int m1, int s2, int r2, int premul) \
{                                                                                       \
	int x = get_global_id(0), y = get_global_id(1);                                 \
	if (x >= Wo || y >= Ho)                                                         \
		return;                                                                 \
	int start = yt[y], count = yt[Ho + y];                                          \
	__global const int *w = yt + 2 * Ho + (size_t)y * taps;                         \
	__global const uchar *p = in + ((size_t)start * W + xt[x]) * CH;                \
	int sum[CH], h[CH];                                                             \
	for (int c = 0; c < CH; c++)                                                    \
		sum[c] = 0;                                                             \
	for (int i = 0; i < count; i++, p += (size_t)W * CH) {                          \
		resize_row_sums(h, p, xt + 2 * Wo + x, Wo, xt[Wo + x], CH, premul);      \
		for (int c = 0; c < CH; c++)                                            \
			sum[c] += w[i] * resize_clamp(h[c], r1, s1, m1);                \
	}                                                                               \
	resize_store(out + ((size_t)y * Wo + x) * CH, sum, CH, r2, s2, premul);         \
}

// The blocked kernels take an axis's blocked table (src/stages/resize.h, struct
// resize_blocks): group g's start, its len, then from word RESIZE_BW the weights, four
// outputs' to a word group, k by k. Each work-item makes the four outputs of one group, so
// that every input sample it reads serves four sums.
#define RESIZE_BW(groups) ((2 * (groups) + 3) & ~3)

// The four sums of a group for channel c: s[j * CH + c] += wt.j * v.
#define RESIZE_ADD4(s, CH, c, wt, v)                                                     \
	do {                                                                            \
		s[c] += (wt).x * (v);                                                    \
		s[CH + (c)] += (wt).y * (v);                                             \
		s[2 * CH + (c)] += (wt).z * (v);                                         \
		s[3 * CH + (c)] += (wt).w * (v);                                         \
	} while (0)

// Copies bytes [from, from + n) of in (total bytes long) to local memory at d, from the
// 16-byte piece that holds the first: d[(from & 15) + i] = in[from + i]. Whole pieces are
// moved at once, so that the loads do not wait on each other; a piece that reaches past
// the input byte by byte. Items i of m share the work.
inline void resize_row_copy(__local uchar *d, __global const uchar *in, size_t from, int n,
			    size_t total, int i, int m)
{
	size_t a = from & ~(size_t)15;
	int pieces = (int)((from + n - a + 15) >> 4);
	for (int k = i; k < pieces; k += m) {
		size_t e = a + 16 * (size_t)k;
		if (e + 16 <= total) {
			uint4 v = *(__global const uint4 *)(in + e);
			__local uint *t = (__local uint *)(d + 16 * k); // 4-byte aligned only
			t[0] = v.x;
			t[1] = v.y;
			t[2] = v.z;
			t[3] = v.w;
		} else {
			for (int b = 0; b < 16 && e + b < total; b++)
				d[16 * k + b] = in[e + b];
		}
	}
}

// Copies n bytes from local s (4-byte aligned) to d, 16 bytes a store where d is 16-byte
// aligned. Items i of m share the work.
inline void resize_row_out(__global uchar *d, __local const uchar *s, int n, int i, int m)
{
	int k = i;
	if (((size_t)d & 15) == 0) {
		__local const uint *w = (__local const uint *)s;
		for (; k < n / 16; k += m)
			((__global uint4 *)d)[k] = (uint4)(w[4 * k], w[4 * k + 1], w[4 * k + 2],
							  w[4 * k + 3]);
		k = n / 16 * 16 + i;
	}
	for (; k < n; k += m)
		d[k] = s[k];
}

// resize_hb_cN, pass 1 in groups: tmp(x, y) for the four columns x of group g, row y.
// Global (32 x the blocks of lg groups, lg x the blocks of 32 rows), local (32, lg):
// work-group (i, j) takes groups lg i to lg i + lg - 1 of rows 32 j to 32 j + 31, so that
// work-groups in launch order go along the rows, and the 32 items of a warp take 32 rows of
// one group, so that they share its weights and read local memory without bank conflicts.
// The work-group first copies its rows' input, from its first group's first tap to its last
// group's last (ordered tables), into `rows` (a row every `span` bytes, span / 4 odd;
// resize_row_copy) and its groups' weights into `wl` (L: the table's len); each item then
// sums its group's taps, colour premultiplied by alpha first where premul, and the results
// go back through `outs` (a row every `ospan` bytes, ospan / 4 odd), a row at a time.
#define RESIZE_HB(CH)                                                                    \
__kernel void resize_hb_c##CH(__global const uchar *in, __global ushort *tmp, int W, int H, \
			      int Wo, int G, __global const int *xt, int s1, int r1,       \
			      int m1, int premul, __local uint *rows_, int span,           \
			      __local uint *outs_, int ospan, __local int4 *wl, int L)     \
{                                                                                       \
	__local uchar *rows = (__local uchar *)rows_; /* uint: 4-byte aligned */          \
	__local ushort *outs = (__local ushort *)outs_;                                 \
	int lx = get_local_id(0), ly = get_local_id(1), lh = get_local_size(0);         \
	int lg = get_local_size(1), y0 = get_group_id(1) * lh, y = y0 + lx;             \
	int g0 = get_group_id(0) * lg, g1 = min(g0 + lg, G) - 1, g = g0 + ly;           \
	int x0 = xt[g0] * CH, n = (xt[g1] + xt[G + g1]) * CH - x0;                      \
	__global const int4 *w0 = (__global const int4 *)(xt + RESIZE_BW(G));           \
	int nr = min(lh, H - y0), no = min(4 * lg, Wo - 4 * g0) * CH;                   \
	for (int r = ly; r < nr; r += lg)                                               \
		resize_row_copy(rows + r * span, in, (size_t)(y0 + r) * W * CH + x0, n,  \
				(size_t)W * H * CH, lx, lh);                            \
	for (int i = ly * lh + lx; i < L * lg; i += lh * lg) {                          \
		int k = i / lg, j = i - k * lg;                                         \
		if (g0 + j < G)                                                         \
			wl[i] = w0[(size_t)k * G + g0 + j];                             \
	}                                                                               \
	barrier(CLK_LOCAL_MEM_FENCE);                                                   \
	if (g < G && y < H) {                                                           \
		int len = xt[G + g], sh = ((size_t)y * W * CH + x0) & 15;               \
		__local const uchar *p = rows + lx * span + sh + xt[g] * CH - x0;       \
		int sum[4 * CH];                                                        \
		for (int i = 0; i < 4 * CH; i++)                                        \
			sum[i] = 0;                                                     \
		for (int k = 0; k < len; k++, p += CH) {                                \
			int4 wk = wl[k * lg + ly];                                      \
			for (int c = 0; c < CH; c++) {                                  \
				int v = premul && c < CH - 1 ? resize_pm(p[c], p[CH - 1]) \
							     : p[c];                    \
				RESIZE_ADD4(sum, CH, c, wk, v);                         \
			}                                                               \
		}                                                                       \
		__local ushort *o = outs + lx * (ospan / 2) + 4 * ly * CH;              \
		for (int i = 0; i < 4 * CH; i++)                                        \
			o[i] = (ushort)resize_clamp(sum[i], r1, s1, m1);                \
	}                                                                               \
	barrier(CLK_LOCAL_MEM_FENCE);                                                   \
	for (int r = ly; r < nr; r += lg)                                               \
		resize_row_out((__global uchar *)(tmp + ((size_t)(y0 + r) * Wo + 4 * g0) * CH), \
			       (__local uchar *)outs_ + r * ospan, 2 * no, lx, lh);      \
}

// resize_vb_cN, pass 2 in groups: out(x, y) for the four rows y of group g, column x,
// colour divided by the result's alpha afterwards where premul. Global (Wo, groups).
#define RESIZE_VB(CH)                                                                    \
__kernel void resize_vb_c##CH(__global const ushort *tmp, __global uchar *out, int Wo,    \
			      int Ho, int G, __global const int *yt, int s2, int r2,       \
			      int premul)                                                  \
{                                                                                       \
	int x = get_global_id(0), g = get_global_id(1);                                 \
	if (x >= Wo || g >= G)                                                          \
		return;                                                                 \
	int len = yt[G + g];                                                            \
	__global const ushort *p = tmp + ((size_t)yt[g] * Wo + x) * CH;                 \
	__global const int4 *w = (__global const int4 *)(yt + RESIZE_BW(G)) + g;        \
	int sum[4 * CH];                                                                \
	for (int i = 0; i < 4 * CH; i++)                                                \
		sum[i] = 0;                                                             \
	for (int k = 0; k < len; k++, p += (size_t)Wo * CH) {                           \
		int4 wk = w[(size_t)k * G];                                             \
		for (int c = 0; c < CH; c++)                                            \
			RESIZE_ADD4(sum, CH, c, wk, (int)p[c]);                         \
	}                                                                               \
	for (int j = 0; j < 4 && 4 * g + j < Ho; j++)                                   \
		resize_store(out + ((size_t)(4 * g + j) * Wo + x) * CH, sum + j * CH, CH, \
			     r2, s2, premul);                                           \
}

#define RESIZE_KERNELS(CH)                                                               \
	RESIZE_NEAREST(CH) RESIZE_H(CH) RESIZE_V(CH) RESIZE_HV(CH) RESIZE_HB(CH) RESIZE_VB(CH)
IF_C1(RESIZE_KERNELS(1))
IF_C2(RESIZE_KERNELS(2))
IF_C3(RESIZE_KERNELS(3))
IF_C4(RESIZE_KERNELS(4))
