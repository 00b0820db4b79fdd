// SPDX-License-Identifier: MIT
// histogram: exact per-channel counts; the specification is src/stages/histogram.c:
//   hist[c * 256 + v] = the number of pixels whose channel c has value v
// added into hist, which the pipeline zeroed. Counts are uint: an image has fewer than 2^32
// pixels (65535 x 65535 at most), so no bin can wrap.
//
// One kernel per channel count (histogram_1 .. histogram_4), so that the channel of each
// byte is known at compile time. Over a 1-D range of any size (a multiple of the work-group
// size the host picks), every work-item reads whole 16-byte vectors in a grid-stride loop:
// item g reads vectors g, g + G, g + 2G, ... (G = the global size), HIST_BATCH at a time,
// so neighbouring items read neighbouring vectors (coalesced). The image is n = w * h * ch
// bytes from offset 0 of a device buffer, whose base is aligned for any vector type; the
// last n % 16 bytes are read one at a time. Byte i belongs to channel i % ch.
//
// Each work-group counts into one sub-histogram in __local memory, one atomic_inc per
// byte, and at the end adds its non-zero bins to hist with one global atomic_add each: to
// copy g % copies of the counts for group g (the host adds the copies up). This measured
// faster than spreading a group over several sub-histograms or merging runs of equal bytes
// first, on noisy and on uniform images alike. Channel c's 256 bins start at c * HIST_STRIDE
// = c * 264 words, 8c past c * 256: local memory has 32 banks of one word, so the bins of one
// value v in the 1 to 4 channels lie in different banks, and channels whose values are close
// (greyish pictures stored as RGB) do not collide there (docs/BENCHMARKS.md, "Kernel shapes").
#include "channels.clh"

#ifndef CLIMG_CPU_KERNELS // the GPU family (src/ocl/program.c)
#define HIST_STRIDE 264u // keep in step with HIST_GPU_STRIDE in src/stages/histogram.c
// Vectors an item loads at a time, so that their loads are in flight together; 8 measured
// slower than 4 (docs/BENCHMARKS.md, "Kernel shapes").
#define HIST_BATCH 4u
// Inlined into each kernel so that ch is a constant there: the loop over the 16 bytes
// unrolls with each byte's channel known (PoCL warns otherwise).
static inline __attribute__((always_inline)) void
hist_count(__global const uchar *in, ulong n, const uint ch, __global uint *hist,
	   __local uint *sub)
{
	const uint nwords = ch * HIST_STRIDE, lid = get_local_id(0), lsize = get_local_size(0);
	// 32-bit vector indices suffice: an image has at most 65535 * 65535 * 4 bytes, so
	// n16 < 2^30 (and 64-bit arithmetic is slow on GPUs)
	const uint gid = get_global_id(0), gsize = get_global_size(0), n16 = (uint)(n / 16u);
	__global const uint4 *in16 = (__global const uint4 *)in;
	// The channel of vector k's first byte, (16k) % ch: 0 for 1, 2 and 4 channels, k % 3
	// for 3 (16 % 3 == 1), kept up to date as k advances by gsize.
	uint base = ch == 3u ? gid % 3u : 0u;
	const uint step = ch == 3u ? gsize % 3u : 0u;

	for (uint i = lid; i < nwords; i += lsize)
		sub[i] = 0;
	barrier(CLK_LOCAL_MEM_FENCE);

	for (uint k = gid; k < n16; k += HIST_BATCH * gsize) {
		// HIST_BATCH vectors (k, k + gsize, ...) loaded before any is counted, so that
		// their loads are in flight together (k + q gsize < 2^31: gsize is small)
		uint4 v[HIST_BATCH];
#pragma unroll
		for (uint q = 0; q < HIST_BATCH; q++)
			v[q] = k + q * gsize < n16 ? in16[k + q * gsize] : (uint4)(0);
#pragma unroll
		for (uint q = 0; q < HIST_BATCH; q++) {
			if (k + q * gsize >= n16)
				break;
			// the 16 bytes taken out of the 4 words by shifts, which measured faster
			// than through a private byte array
			const uint wv[4] = { v[q].x, v[q].y, v[q].z, v[q].w };
			// byte j's channel is (base + j) % ch: j % ch for 1, 2 and 4 channels
			// (base is 0), known when compiling; for 3, (base + j % 3) % 3, so the
			// three channels' bins are found once a vector, not by a division a byte
			__local uint *bins[3];
#pragma unroll
			for (uint m = 0; m < 3u; m++) {
				const uint c = base + m;
				bins[m] = sub + (c >= 3u ? c - 3u : c) * HIST_STRIDE;
			}
#pragma unroll
			for (uint j = 0; j < 16u; j++) {
				const uint byte = (wv[j >> 2] >> (8 * (j & 3))) & 255u;
				if (ch == 3u)
					atomic_inc(&bins[j % 3u][byte]);
				else
					atomic_inc(&sub[j % ch * HIST_STRIDE + byte]);
			}
			if (ch == 3u) {
				base += step;
				if (base >= 3u)
					base -= 3u;
			}
		}
	}
	for (ulong i = (ulong)n16 * 16u + gid; i < n; i += gsize)
		atomic_inc(&sub[(uint)(i % ch) * HIST_STRIDE + in[i]]);
	barrier(CLK_LOCAL_MEM_FENCE);

	for (uint bin = lid; bin < ch * 256u; bin += lsize) {
		const uint count = sub[(bin >> 8) * HIST_STRIDE + (bin & 255u)];
		if (count)
			atomic_add(&hist[bin], count);
	}
}

// in: the image (w x h, CH channels); hist: the side output buffer, this stage's copies of
// the counts (copies of CH * 256 uints, at least 1) starting hist_off words in; sub: CH *
// HIST_STRIDE uints of __local memory.
#define HISTOGRAM_KERNEL(CH)                                                             \
	__kernel void histogram_##CH(__global const uchar *in, int w, int h,               \
				     __global uint *hist, uint hist_off, uint copies,      \
				     __local uint *sub)                                    \
	{                                                                                \
		__global uint *copy = hist + hist_off + get_group_id(0) % copies * CH * 256u; \
		hist_count(in, (ulong)w * (ulong)h * CH, CH, copy, sub);                   \
	}

IF_C1(HISTOGRAM_KERNEL(1))
IF_C2(HISTOGRAM_KERNEL(2))
IF_C3(HISTOGRAM_KERNEL(3))
IF_C4(HISTOGRAM_KERNEL(4))

#else // ---- the CPU family: CPU devices ----------------------------------------------------
// histogram_cpu_1 .. histogram_cpu_4: work-item g counts bytes [g S, g S + S) of the image
// (S = slice, a multiple of 48 that the host picks; a work-group is one work-item) into
// private sub-histograms with plain increments, 48 bytes (a whole number of pixels for any
// channel count) at a time, then adds its non-zero bins to hist with one global atomic_add
// each. Consecutive pixels take turns over HIST_CPU_COPIES(CH) copies of the CH histograms,
// so that a run of equal values (a uniform area) is not one long chain of increments of one
// word. Byte i belongs to channel i % CH; a slice starts at a multiple of 48, so byte j of a
// 48-byte step is in channel j % CH. Global ceil(w * h * CH / S).
#define HIST_CPU_COPIES(CH) ((CH) == 1 ? 4 : (CH) == 4 ? 1 : 2)
#define HISTOGRAM_CPU_KERNEL(CH)                                                         \
	__kernel void histogram_cpu_##CH(__global const uchar *in, int w, int h,           \
					 __global uint *hist, uint hist_off, uint slice)   \
	{                                                                                \
		const int C = HIST_CPU_COPIES(CH), NB = CH * 256;                        \
		uint sub[HIST_CPU_COPIES(CH) * CH * 256];                                \
		ulong n = (ulong)w * (ulong)h * CH, b = get_global_id(0) * (ulong)slice;   \
		ulong b1 = min(b + slice, n);                                            \
		for (int i = 0; i < C * NB; i++)                                         \
			sub[i] = 0;                                                      \
		for (; b + 48 <= b1; b += 48) {                                          \
			__global const uchar *p = in + b;                                \
			_Pragma("unroll") for (int j = 0; j < 48; j++)                   \
				sub[((j / CH) % C * CH + j % CH) * 256 + p[j]]++;        \
		}                                                                        \
		for (; b < b1; b++)                                                      \
			sub[(b % CH) * 256 + in[b]]++;                                   \
		for (int bin = 0; bin < NB; bin++) {                                     \
			uint sum = 0;                                                    \
			for (int c = 0; c < C; c++)                                      \
				sum += sub[c * NB + bin];                                \
			if (sum)                                                         \
				atomic_add(&hist[hist_off + bin], sum);                  \
		}                                                                        \
	}

IF_C1(HISTOGRAM_CPU_KERNEL(1))
IF_C2(HISTOGRAM_CPU_KERNEL(2))
IF_C3(HISTOGRAM_CPU_KERNEL(3))
IF_C4(HISTOGRAM_CPU_KERNEL(4))
#endif
