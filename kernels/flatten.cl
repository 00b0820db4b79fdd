// SPDX-License-Identifier: MIT
// flatten: specified in src/stages/flatten.c. Each colour channel c of a pixel with alpha a,
// b the background's value for that channel (b0 for grey+alpha):
//   out = (c a + b (255 - a) + 127) / 255
// Work-item g composes pixels [g chunk, min(g chunk + chunk, npx)); chunk is 1 or a multiple
// of 16. src/stages/flatten.c passes 1 on a GPU (neighbouring items, neighbouring pixels)
// and a large piece on a CPU device, which takes its piece 16 pixels at a time with whole
// 16-byte loads and stores (each block starts on a multiple of 16 pixels, the buffers'
// bases aligned), then the pixels after the last 16 one at a time. Launch with global
// ceil(npx / chunk).
#include "channels.clh"

uchar flatten_mix(uint c, uint a, uint b)
{
	return (uchar)((c * a + b * (255u - a) + 127u) / 255u);
}

// flatten_mix on 16 pixels at once.
uchar16 flatten_mix16(uint16 c, uint16 a, uint b)
{
	return convert_uchar16((c * a + b * (255u - a) + 127u) / 255u);
}

#if CLIMG_HAS_CH(2)
// grey+alpha to grey
__kernel void flatten_c2(__global const uchar *in, __global uchar *out, long npx, uint chunk,
			 uint b0, uint b1, uint b2)
{
	long p = (long)get_global_id(0) * chunk, p1 = min(p + (long)chunk, npx);
	for (; p + 16 <= p1; p += 16) {
		__global const uint4 *s = (__global const uint4 *)(in + p * 2);
		ushort16 px = as_ushort16((uint8)(s[0], s[1]));
		uint16 v = convert_uint16(px & (ushort)255), a = convert_uint16(px >> (ushort)8);
		*(__global uint4 *)(out + p) = as_uint4(flatten_mix16(v, a, b0));
	}
	for (; p < p1; p++) {
		uchar2 s = vload2(p, in);
		out[p] = flatten_mix(s.x, s.y, b0);
	}
}
#endif

#if CLIMG_HAS_CH(4)
// RGBA to RGB
__kernel void flatten_c4(__global const uchar *in, __global uchar *out, long npx, uint chunk,
			 uint b0, uint b1, uint b2)
{
	long p = (long)get_global_id(0) * chunk, p1 = min(p + (long)chunk, npx);
	for (; p + 16 <= p1; p += 16) {
		__global const uint4 *s = (__global const uint4 *)(in + p * 4);
		uint16 px = (uint16)(s[0], s[1], s[2], s[3]), a = px >> 24;
		uchar r[16], g[16], b[16], t[48];
		vstore16(flatten_mix16(px & 255u, a, b0), 0, r);
		vstore16(flatten_mix16((px >> 8) & 255u, a, b1), 0, g);
		vstore16(flatten_mix16((px >> 16) & 255u, a, b2), 0, b);
#pragma unroll
		for (int k = 0; k < 16; k++) {
			t[3 * k] = r[k];
			t[3 * k + 1] = g[k];
			t[3 * k + 2] = b[k];
		}
		__global uint4 *d = (__global uint4 *)(out + p * 3); // 48-byte aligned
		d[0] = as_uint4(vload16(0, t));
		d[1] = as_uint4(vload16(1, t));
		d[2] = as_uint4(vload16(2, t));
	}
	for (; p < p1; p++) {
		uchar4 s = vload4(p, in);
		vstore3((uchar3)(flatten_mix(s.x, s.w, b0), flatten_mix(s.y, s.w, b1),
				 flatten_mix(s.z, s.w, b2)),
			p, out);
	}
}
#endif
