// SPDX-License-Identifier: MIT
// equalize: specified in src/stages/equalize.c. Three steps on the device: the counts of
// every channel (histogram_N or histogram_cpu_N, the histogram stage's kernels, included
// here), the tables (equalize_lut), and the tables applied (lut_cN, kernels/lut.clh).
#include "histogram.cl"
#include "lut.clh"

// 255.f / d rounded to the nearest float, as C's division is: OpenCL allows its division a
// few units in the last place, so the quotient is moved to whichever neighbour leaves the
// smaller remainder (fma computes 255 - q d with one rounding, which keeps the order of
// remainders this far apart). A tie cannot happen: 255 / d halfway between two floats would
// take an odd 25-bit integer dividing 255 * 2^k.
float equalize_scale(float d)
{
	float q = 255.f / d;
	for (int k = 0; k < 8; k++) {
		float up = nextafter(q, INFINITY), dn = nextafter(q, 0.f);
		float r = fabs(fma(-q, d, 255.f)), ru = fabs(fma(-up, d, 255.f));
		float rd = fabs(fma(-dn, d, 255.f));
		if (ru < r)
			q = up;
		else if (rd < r)
			q = dn;
		else
			break;
	}
	return q;
}

// equalize_lut: work-item c (0 .. ch-1) makes channel c's table in lut (ch * 256 bytes) from
// the counts, the sum of `copies` copies of ch * 256 uints in hist, over n pixels: the
// colour channels as equalize_table in src/stages/equalize.c, alpha (the last of 2 and 4)
// the identity. Launch with global ch.
__kernel void equalize_lut(__global const uint *hist, uint copies, int ch, uint n,
			   __global uchar *lut)
{
	int c = get_global_id(0);
	if (c >= ch)
		return;
	__global uchar *t = lut + c * 256;
	if ((ch == 2 || ch == 4) && c == ch - 1) {
		for (int v = 0; v < 256; v++)
			t[v] = (uchar)v;
		return;
	}
	uint h[256];
	for (int v = 0; v < 256; v++) {
		uint s = 0;
		for (uint k = 0; k < copies; k++)
			s += hist[(k * ch + c) * 256 + v];
		h[v] = s;
		t[v] = 0;
	}
	int m = 0;
	while (m < 255 && !h[m])
		m++;
	if (h[m] == n) {
		t[m] = (uchar)m;
		return;
	}
	float s = equalize_scale(convert_float(n - h[m]));
	uint sum = 0;
	for (int v = m + 1; v < 256; v++) {
		sum += h[v];
		float r = rint(convert_float(sum) * s);
		t[v] = (uchar)(r > 255.f ? 255 : r);
	}
}

LUT_KERNELS
