// SPDX-License-Identifier: MIT
// compare: the integers of `climg compare` for two images a and b of w x h pixels and CH
// channels; the specification is cmp_images in src/compare.c. A pixel (x, y), index
// p = y w + x, is compared unless it lies in one of the nrect rectangles (x, y, w, h: four
// ints each) of rects; then d_c = |a_c - b_c| for each channel c, and it differs when the
// largest d_c is above tol.
//
// Each work-group writes one record of CMP_REC(CH) uints to part (group g at g CMP_REC(CH)),
// which the host adds up (src/compare_cl.c):
//   [0] pixels compared  [1] pixels that differ
//   then for each channel c, at 2 + 6c:
//   [0] the largest d_c  [1] the least index p where it is reached (0xffffffff while it is 0)
//   [2] the sum of d_c, low word  [3] its high word  [4] the sum of d_c^2, low  [5] high
// Counts fit a uint (w h < 2^32), the sums not always: a record's sums are 64-bit.
#include "channels.clh"

#define CMP_REC(CH) (2 + 6 * (CH))
#define CMP_NONE 0xffffffffu

// Whether pixel (x, y) lies in one of the rectangles.
static bool cmp_ignored(__global const int *rects, uint nrect, int x, int y)
{
	for (uint i = 0; i < nrect; i++) {
		__global const int *r = rects + 4 * i;
		if (x >= r[0] && x - r[0] < r[2] && y >= r[1] && y - r[1] < r[3])
			return true;
	}
	return false;
}

// One compared pixel at byte offset off, index p, added to an item's accumulators. A macro,
// so that every channel index is a constant.
#define CMP_PIXEL(CH, off, p)                                                              \
	do {                                                                               \
		uint dmax_ = 0;                                                            \
		cnt++;                                                                     \
		_Pragma("unroll") for (int c_ = 0; c_ < CH; c_++)                          \
		{                                                                          \
			const uint d_ = abs_diff(a[(off) + c_], b[(off) + c_]);            \
			s1[c_] += d_;                                                      \
			s2[c_] += d_ * d_;                                                 \
			if (d_ > mx[c_]) {                                                 \
				mx[c_] = d_;                                               \
				ix[c_] = (p);                                              \
			}                                                                  \
			dmax_ = max(dmax_, d_);                                            \
		}                                                                          \
		dif += dmax_ > tol ? 1u : 0u;                                              \
	} while (0)

// The accumulators of one item, every channel's largest difference at none yet.
#define CMP_ITEM(CH)                                                                       \
	uint cnt = 0, dif = 0, mx[CH], ix[CH];                                             \
	ulong s1[CH], s2[CH];                                                              \
	_Pragma("unroll") for (int c = 0; c < CH; c++)                                     \
	{                                                                                  \
		mx[c] = 0;                                                                 \
		ix[c] = CMP_NONE;                                                          \
		s1[c] = s2[c] = 0;                                                         \
	}

// An item's record written to rec.
#define CMP_WRITE(CH, rec)                                                                 \
	do {                                                                               \
		rec[0] = cnt;                                                              \
		rec[1] = dif;                                                              \
		_Pragma("unroll") for (int c_ = 0; c_ < CH; c_++)                          \
		{                                                                          \
			__global uint *r_ = rec + 2 + 6 * c_;                              \
			r_[0] = mx[c_];                                                    \
			r_[1] = ix[c_];                                                    \
			r_[2] = (uint)s1[c_];                                              \
			r_[3] = (uint)(s1[c_] >> 32);                                      \
			r_[4] = (uint)s2[c_];                                              \
			r_[5] = (uint)(s2[c_] >> 32);                                      \
		}                                                                          \
	} while (0)

#ifndef CLIMG_CPU_KERNELS // the GPU family (src/ocl/program.c)
// compare_1 .. compare_4: over a 1-D range of work-groups of a power of two items, item g
// takes pixels g, g + G, g + 2G, ... (G = the global size), so neighbouring items read
// neighbouring pixels and each item meets its pixels in increasing order. Then the group
// reduces its items' accumulators in __local memory, halving the active items each step:
// the counts first, then one channel after the other (lu: two uints an item, the counts or
// the largest difference and its index, the larger difference winning and the lesser index
// on a tie; ll: the two sums); item 0 writes the group's record.
#define COMPARE_KERNEL(CH)                                                                 \
	__kernel void compare_##CH(__global const uchar *a, __global const uchar *b, int w,  \
				   int h, uint tol, __global const int *rects, uint nrect, \
				   __global uint *part, __local uint *lu, __local ulong *ll) \
	{                                                                                  \
		const ulong npx = (ulong)w * (ulong)h, gsize = get_global_size(0);          \
		const uint lid = get_local_id(0), lsize = get_local_size(0);               \
		CMP_ITEM(CH)                                                               \
		for (ulong p = get_global_id(0); p < npx; p += gsize) {                    \
			if (nrect && cmp_ignored(rects, nrect, (int)(p % (uint)w),         \
						 (int)(p / (uint)w)))                      \
				continue;                                                  \
			CMP_PIXEL(CH, p * CH, (uint)p);                                    \
		}                                                                          \
		__global uint *rec = part + get_group_id(0) * CMP_REC(CH);                 \
		_Pragma("unroll") for (int k = -1; k < CH; k++) {                          \
			barrier(CLK_LOCAL_MEM_FENCE); /* the last step's reads by item 0 */ \
			lu[2 * lid] = k < 0 ? cnt : mx[max(k, 0)];                         \
			lu[2 * lid + 1] = k < 0 ? dif : ix[max(k, 0)];                     \
			ll[2 * lid] = k < 0 ? 0 : s1[max(k, 0)];                           \
			ll[2 * lid + 1] = k < 0 ? 0 : s2[max(k, 0)];                       \
			barrier(CLK_LOCAL_MEM_FENCE);                                      \
			for (uint s = lsize / 2; s > 0; s /= 2) {                          \
				if (lid < s) {                                             \
					const uint o = 2 * (lid + s), m = 2 * lid;         \
					if (k < 0) {                                       \
						lu[m] += lu[o];                            \
						lu[m + 1] += lu[o + 1];                    \
					} else if (lu[o] > lu[m] ||                        \
						   (lu[o] == lu[m] && lu[o + 1] < lu[m + 1])) { \
						lu[m] = lu[o];                             \
						lu[m + 1] = lu[o + 1];                     \
					}                                                  \
					ll[m] += ll[o];                                    \
					ll[m + 1] += ll[o + 1];                            \
				}                                                          \
				barrier(CLK_LOCAL_MEM_FENCE);                              \
			}                                                                  \
			if (lid == 0 && k < 0) {                                           \
				rec[0] = lu[0];                                            \
				rec[1] = lu[1];                                            \
			} else if (lid == 0) {                                             \
				__global uint *r = rec + 2 + 6 * k;                        \
				r[0] = lu[0];                                              \
				r[1] = lu[1];                                              \
				r[2] = (uint)ll[0];                                        \
				r[3] = (uint)(ll[0] >> 32);                                \
				r[4] = (uint)ll[1];                                        \
				r[5] = (uint)(ll[1] >> 32);                                \
			}                                                                  \
		}                                                                          \
	}

IF_C1(COMPARE_KERNEL(1))
IF_C2(COMPARE_KERNEL(2))
IF_C3(COMPARE_KERNEL(3))
IF_C4(COMPARE_KERNEL(4))

#else // ---- the CPU family: CPU devices ----------------------------------------------------
// compare_cpu_1 .. compare_cpu_4: work-item g (a work-group is one work-item) compares the
// pixels [g S, g S + S) (S = slice, which the host picks), row by row, and writes record g.
// Global ceil(w h / S).
#define COMPARE_CPU_KERNEL(CH)                                                             \
	__kernel void compare_cpu_##CH(__global const uchar *a, __global const uchar *b,     \
				       int w, int h, uint tol, __global const int *rects,  \
				       uint nrect, __global uint *part, uint slice)        \
	{                                                                                  \
		const ulong npx = (ulong)w * (ulong)h, p0 = get_global_id(0) * (ulong)slice; \
		const ulong p1 = min(p0 + slice, npx);                                     \
		int x = (int)(p0 % (uint)w), y = (int)(p0 / (uint)w);                      \
		CMP_ITEM(CH)                                                               \
		for (ulong p = p0; p < p1; p++) {                                          \
			if (!nrect || !cmp_ignored(rects, nrect, x, y))                    \
				CMP_PIXEL(CH, p * CH, (uint)p);                            \
			if (++x == w) {                                                    \
				x = 0;                                                     \
				y++;                                                       \
			}                                                                  \
		}                                                                          \
		__global uint *rec = part + get_global_id(0) * CMP_REC(CH);                \
		CMP_WRITE(CH, rec);                                                        \
	}

IF_C1(COMPARE_CPU_KERNEL(1))
IF_C2(COMPARE_CPU_KERNEL(2))
IF_C3(COMPARE_CPU_KERNEL(3))
IF_C4(COMPARE_CPU_KERNEL(4))
#endif
