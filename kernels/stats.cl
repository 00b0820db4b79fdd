// SPDX-License-Identifier: MIT
// stats: exact per-channel min, max, sum and sum of squares; the specification is
// src/stages/stats.c. Each channel c has 6 uint words in the side output at side_off + 6c,
// zeroed by the pipeline: 255 - min and max (merged with atomic_max), then the sum and the
// sum of squares as 64-bit numbers, low word first (added with add64). An image has at most
// 65535 x 65535 pixels, so the sum stays below 2^41 and the sum of squares below 2^49.
//
// Both families read the image (n = w * h * CH bytes from offset 0, byte i in channel
// i % CH) in chunks of 48 bytes, a whole number of pixels for any channel count, so byte j
// of a chunk is in channel j % CH, known when compiling; a chunk's sums fit a uint (48 *
// 255^2 < 2^22) and are added to the item's ulong sums once a chunk.
#include "channels.clh"

// Adds v to the 64-bit number at w[0] (low word), w[1] (high word) with 32-bit atomics: the
// low word's addition carries into the high word exactly when it wraps, so any order of
// additions leaves the exact sum.
static void add64(__global uint *w, ulong v)
{
	const uint lo = (uint)v;
	uint hi = (uint)(v >> 32);
	if (lo) {
		const uint old = atomic_add(&w[0], lo);
		hi += old + lo < old ? 1u : 0u;
	}
	if (hi)
		atomic_add(&w[1], hi);
}

// Merges one channel's results into its 6 words.
static void stats_merge(__global uint *w, uint mn, uint mx, ulong s1, ulong s2)
{
	atomic_max(&w[0], 255u - mn);
	atomic_max(&w[1], mx);
	add64(w + 2, s1);
	add64(w + 4, s2);
}

// Adds the 48 bytes of a chunk, byte j being BYTE(j), to the accumulators of CH channels.
// A macro, so that every index is a constant once unrolled.
#define STATS_CHUNK(CH, BYTE, mn, mx, s1, s2)                                             \
	do {                                                                              \
		uint t1_[CH], t2_[CH];                                                    \
		_Pragma("unroll") for (int c_ = 0; c_ < CH; c_++) t1_[c_] = t2_[c_] = 0;  \
		_Pragma("unroll") for (int j_ = 0; j_ < 48; j_++)                         \
		{                                                                         \
			const uint v_ = BYTE(j_);                                         \
			mn[j_ % CH] = min(mn[j_ % CH], v_);                               \
			mx[j_ % CH] = max(mx[j_ % CH], v_);                               \
			t1_[j_ % CH] += v_;                                               \
			t2_[j_ % CH] += v_ * v_;                                          \
		}                                                                         \
		_Pragma("unroll") for (int c_ = 0; c_ < CH; c_++)                         \
		{                                                                         \
			s1[c_] += t1_[c_];                                                \
			s2[c_] += t2_[c_];                                                \
		}                                                                         \
	} while (0)

// One byte of channel c (not known when compiling) added to the accumulators.
#define STATS_BYTE(CH, c, v, mn, mx, s1, s2)                                              \
	_Pragma("unroll") for (int k_ = 0; k_ < CH; k_++) if (k_ == (c))                  \
	{                                                                                 \
		mn[k_] = min(mn[k_], (uint)(v));                                          \
		mx[k_] = max(mx[k_], (uint)(v));                                          \
		s1[k_] += (v);                                                            \
		s2[k_] += (uint)(v) * (uint)(v);                                          \
	}

#ifndef CLIMG_CPU_KERNELS // the GPU family (src/ocl/program.c)
// stats_1 .. stats_4: over a 1-D range of work-groups of a power of two items (the host
// picks how many), item g reads chunks g, g + G, g + 2G, ... (G = the global size) as three
// uint4 loads each, so that neighbouring items read neighbouring memory; the last n % 48
// bytes are read one at a time. Then the group reduces its items' results in __local
// memory, one channel after the other, halving the active items each step (lmm: min and
// max, lsum: the two sums, two entries an item), and item 0 merges the group's result into
// the side output: 6 atomics a channel and group.
// Byte j of the chunk in words[0..11] (OpenCL devices are little-endian: byte j is at bits
// 8 (j % 4) of word j / 4).
#define STATS_WORD_BYTE(j) ((words[(j) >> 2] >> (8 * ((j) & 3))) & 255u)
#define STATS_KERNEL(CH)                                                                  \
	__kernel void stats_##CH(__global const uchar *in, int w, int h, __global uint *side, \
				 uint side_off, __local uint *lmm, __local ulong *lsum)    \
	{                                                                                 \
		const ulong n = (ulong)w * (ulong)h * CH;                                 \
		const uint n48 = (uint)(n / 48u), gid = get_global_id(0);                 \
		const uint gsize = get_global_size(0), lid = get_local_id(0);             \
		const uint lsize = get_local_size(0);                                     \
		__global const uint4 *in16 = (__global const uint4 *)in;                  \
		uint mn[CH], mx[CH];                                                      \
		ulong s1[CH], s2[CH];                                                     \
		_Pragma("unroll") for (int c = 0; c < CH; c++) {                          \
			mn[c] = 255u;                                                     \
			mx[c] = 0u;                                                       \
			s1[c] = s2[c] = 0;                                                \
		}                                                                         \
		for (uint k = gid; k < n48; k += gsize) {                                 \
			const uint4 a = in16[3 * k], b = in16[3 * k + 1], d = in16[3 * k + 2]; \
			const uint words[12] = { a.x, a.y, a.z, a.w, b.x, b.y,                \
						 b.z, b.w, d.x, d.y, d.z, d.w };           \
			STATS_CHUNK(CH, STATS_WORD_BYTE, mn, mx, s1, s2);                 \
		}                                                                         \
		for (ulong i = (ulong)n48 * 48u + gid; i < n; i += gsize) {               \
			const uint v = in[i];                                             \
			STATS_BYTE(CH, (int)(i % CH), v, mn, mx, s1, s2)                  \
		}                                                                         \
		_Pragma("unroll") for (int c = 0; c < CH; c++) {                          \
			barrier(CLK_LOCAL_MEM_FENCE); /* the last channel's merge read */ \
			lmm[2 * lid] = mn[c];                                             \
			lmm[2 * lid + 1] = mx[c];                                         \
			lsum[2 * lid] = s1[c];                                            \
			lsum[2 * lid + 1] = s2[c];                                        \
			barrier(CLK_LOCAL_MEM_FENCE);                                     \
			for (uint s = lsize / 2; s > 0; s /= 2) {                         \
				if (lid < s) {                                            \
					const uint o = 2 * (lid + s);                     \
					lmm[2 * lid] = min(lmm[2 * lid], lmm[o]);         \
					lmm[2 * lid + 1] = max(lmm[2 * lid + 1], lmm[o + 1]); \
					lsum[2 * lid] += lsum[o];                         \
					lsum[2 * lid + 1] += lsum[o + 1];                 \
				}                                                         \
				barrier(CLK_LOCAL_MEM_FENCE);                             \
			}                                                                 \
			if (lid == 0)                                                     \
				stats_merge(side + side_off + 6 * c, lmm[0], lmm[1], lsum[0], \
					    lsum[1]);                                     \
		}                                                                         \
	}

IF_C1(STATS_KERNEL(1))
IF_C2(STATS_KERNEL(2))
IF_C3(STATS_KERNEL(3))
IF_C4(STATS_KERNEL(4))

#else // ---- the CPU family: CPU devices ----------------------------------------------------
// stats_cpu_1 .. stats_cpu_4: work-item g (a work-group is one work-item) reads bytes
// [g S, g S + S) of the image (S = slice, a multiple of 48 that the host picks, so a slice
// starts a chunk), whole chunks and then the bytes of a partial last one, and merges its
// results into the side output. Global ceil(w * h * CH / S).
#define STATS_PTR_BYTE(j) ((uint)p[j])
#define STATS_CPU_KERNEL(CH)                                                              \
	__kernel void stats_cpu_##CH(__global const uchar *in, int w, int h,                 \
				     __global uint *side, uint side_off, uint slice)      \
	{                                                                                 \
		const ulong n = (ulong)w * (ulong)h * CH;                                 \
		ulong b = get_global_id(0) * (ulong)slice, b1 = min(b + slice, n);        \
		uint mn[CH], mx[CH];                                                      \
		ulong s1[CH], s2[CH];                                                     \
		_Pragma("unroll") for (int c = 0; c < CH; c++) {                          \
			mn[c] = 255u;                                                     \
			mx[c] = 0u;                                                       \
			s1[c] = s2[c] = 0;                                                \
		}                                                                         \
		for (; b + 48 <= b1; b += 48) {                                           \
			__global const uchar *p = in + b;                                 \
			STATS_CHUNK(CH, STATS_PTR_BYTE, mn, mx, s1, s2);                  \
		}                                                                         \
		for (; b < b1; b++) {                                                     \
			const uint v = in[b];                                             \
			STATS_BYTE(CH, (int)(b % CH), v, mn, mx, s1, s2)                  \
		}                                                                         \
		_Pragma("unroll") for (int c = 0; c < CH; c++)                            \
			stats_merge(side + side_off + 6 * c, mn[c], mx[c], s1[c], s2[c]); \
	}

IF_C1(STATS_CPU_KERNEL(1))
IF_C2(STATS_CPU_KERNEL(2))
IF_C3(STATS_CPU_KERNEL(3))
IF_C4(STATS_CPU_KERNEL(4))
#endif
