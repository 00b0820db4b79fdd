// SPDX-License-Identifier: MIT
// dropalpha: specified in src/stages/dropalpha.c: out(x, y) = the colour channels of in(x, y).
// Work-item g copies pixels [g chunk, min(g chunk + chunk, npx)); chunk is 1 or a multiple of
// 16. src/stages/dropalpha.c passes 1 on a GPU (neighbouring items, neighbouring pixels) and
// a large piece on a CPU device, which takes its piece 16 pixels at a time with whole
// 16-byte loads and stores (each block starts on a multiple of 16 pixels, the buffers'
// bases aligned), then the pixels after the last 16 one at a time. Launch with global
// ceil(npx / chunk).
#include "channels.clh"

#if CLIMG_HAS_CH(2)
// grey+alpha to grey
__kernel void dropalpha_c2(__global const uchar *in, __global uchar *out, long npx, uint chunk)
{
	long p = (long)get_global_id(0) * chunk, p1 = min(p + (long)chunk, npx);
	for (; p + 16 <= p1; p += 16) {
		__global const uint4 *s = (__global const uint4 *)(in + p * 2);
		uchar16 a = as_uchar16(s[0]), b = as_uchar16(s[1]);
		*(__global uint4 *)(out + p) = as_uint4((uchar16)(a.even, b.even));
	}
	for (; p < p1; p++)
		out[p] = in[2 * p];
}
#endif

#if CLIMG_HAS_CH(4)
// RGBA to RGB
__kernel void dropalpha_c4(__global const uchar *in, __global uchar *out, long npx, uint chunk)
{
	long p = (long)get_global_id(0) * chunk, p1 = min(p + (long)chunk, npx);
	for (; p + 16 <= p1; p += 16) {
		__global const uint4 *s = (__global const uint4 *)(in + p * 4);
		uchar16 a = as_uchar16(s[0]), b = as_uchar16(s[1]), c = as_uchar16(s[2]),
			e = as_uchar16(s[3]);
		__global uint4 *d = (__global uint4 *)(out + p * 3); // 48-byte aligned
		// pixel k's colour goes to bytes 3 k .. 3 k + 2 of the 48
		d[0] = as_uint4((uchar16)(a.s012, a.s456, a.s89a, a.scde, b.s012, b.s4));
		d[1] = as_uint4((uchar16)(b.s56, b.s89a, b.scde, c.s012, c.s456, c.s89));
		d[2] = as_uint4((uchar16)(c.sa, c.scde, e.s012, e.s456, e.s89a, e.scde));
	}
	for (; p < p1; p++)
		vstore3(vload4(p, in).xyz, p, out);
}
#endif
