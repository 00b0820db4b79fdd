// SPDX-License-Identifier: MIT
// convolve: correlate the image with a kernel, each colour channel on its own, alpha kept.
// Correlation: the kernel is not flipped, as OpenCV filter2D, libvips conv and ImageMagick
// -convolve: out(x, y) = sum k[dy][dx] * in(x + dx, y + dy), k[0][0] the top-left weight.
//
//   convolve:KERNEL[:OPTION...]   one argv token, ':' between arguments, any order
//   KERNEL  box[:size=N]               N x N ones, N odd (default 3)
//           gauss[:sigma=S][:radius=R] exp(-(dx^2 + dy^2) / (2 S^2)), S = 1, R = ceil(3 S)
//           sharpen edge sobel-x sobel-y emboss (3x3) identity (1x1): see named[] below
//           kernel=W,W,...             N*N numbers row by row, N odd, integers or decimals
//           kernel=@FILE               the same, separated by white space, one row a line
//   OPTION  norm=sum|none|D  divide by the sum of the weights (the default when it is not
//                            0, else none), by nothing, or by D
//           bias=B           added after dividing
//           border=replicate|reflect|wrap|zero   (default replicate)
//
// Output size: the input's. Border rule, for a column (row) index i outside 0..n-1:
// replicate clamps it (aaa|abcd|ddd); reflect mirrors without repeating the edge
// (dcb|abcd|cba, OpenCV's BORDER_REFLECT_101); wrap takes i mod n (bcd|abcd|abc); zero reads
// 0. Rows and columns are mapped independently and as often as needed, so a kernel wider
// than the image is fine.
//
// FIXED-POINT CONTRACT (kernels/convolve.cl and climg(1) cite this; the CPU path below is
// its reference). The kernel becomes integers: weights k[dy][dx] (dy, dx = -r..r), a divisor
// D >= 1 and a bias numerator B. For each output sample of a colour channel c:
//     acc = sum over dy, dx of k[dy][dx] * in(x + dx, y + dy, c)      (an exact integer)
//     t   = acc + B + floor(D / 2)
//     out = 0 if t < 0, else min(floor(t / D), 255)
// that is acc / D + B / D rounded half up (ties upwards), then saturated to 0..255: one
// rounding step. A negative t always gives 0, so only t >= 0 is ever divided and C's
// truncating division is floor division there.
// The integers come from the weights w, the norm and the bias in one of two ways:
//   exact   integers and decimals (as written: 0.1 is 1/10) are converted exactly: every
//           number multiplied by the powers of ten and the norm it needs, then all divided
//           by their common gcd. The result is exactly sum(w * in) / norm + bias, rounded
//           half up. Used whenever these integers keep within the bounds below.
//   scaled  D = 2^S: k = w / norm * 2^S rounded by largest remainder (every value rounded
//           down, then 1 added to those with the largest fractions, ties to the lower
//           index) so that the k sum to exactly round(sum(w / norm) * 2^S): for a
//           normalised kernel exactly 2^S = D, so a constant image stays constant;
//           B = round(bias * 2^S). S is the largest of 24..0 whose integers keep within
//           the bounds. Used for kernels whose exact integers would not fit.
//   gauss   scaled, one dimension at a time: u(i) = exp(-i^2 / (2 sigma^2)), i = -R..R,
//           computed once on the host in double precision; kx = ky = u / sum(u) * 2^20
//           rounded by largest remainder kept symmetric (pairs +i, -i get the same
//           weight; an odd unit goes to the centre; ties to the smaller |i|), summing to
//           2^20; D = 2^40. (With norm=none or norm=D, ky carries the factor
//           sum(u)^2 / norm and sums to round(that * 2^20); 20 drops if the bounds ask.)
// Bounds, checked when the stage is parsed so that no accumulator can overflow:
//   not separable   255 * sum|k| <= 2^31 - 1                        (int32 accumulator)
//   separable       k[dy][dx] = ky[dy] * kx[dx]: 255 * sum|kx| <= 2^31 - 1 and
//                   255 * sum|ky| <= 2^31 - 1 (int32 first pass); 255 * sum|kx| * sum|ky|
//                   + |B| + D <= 2^62 (int64 second pass); D <= 2^54.
// Separable kernels - box, gauss, and every kernel whose integers are exactly of rank one
// (found by factoring them, e.g. sobel-x = (1 2 1)^T x (-1 0 1)) - run as two 1-D passes.
// The intermediate is the exact integer partial sum (int32, never rounded), so the two
// passes give, bit for bit, the one-pass result above: the two-pass form adds no rounding.
// The CPU filters columns first, the device rows first; exact integer sums do not care.
//
// Limits: radius at most 1000 (N <= 2001); a kernel that is not separable at most 2^40
// multiply-adds per image (width * height * colour channels * N * N); a kernel file at most
// 16 MiB; |bias| <= 1000000.
//
// Test-only hooks (not user options): CLIMG_CONVOLVE_PATH=cpu makes run_cl take
// convolve_sep_cpu (CPU devices' kernel for separable kernels of radius up to 32) where it
// applies, on CPU devices with the CPU kernels only (other programs lack it); elsewhere it
// acts as =tile. CLIMG_CONVOLVE_PATH=global makes run_cl take the
// paths that use no local memory other than the 3 x 3 word path, =tile the local-memory
// paths (strips, tiles) where they fit (any non-empty value keeps the 3 x 3 word path out);
// CLIMG_CONVOLVE_STRIP=N caps the rows of one strip of the two-pass path and of the strip
// kernel, so tests reach several strips on small images.
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "../ocl.h"
#include "../parse.h"
#include "convolve.h"
#include "stage.h"

#define MAX_RADIUS 1000
#define MAX_N (2 * MAX_RADIUS + 1)
#define MAX_WORK ((uint64_t)1 << 40) // multiply-adds of a kernel that is not separable
#define MAX_FILE_BYTES (16 << 20)
#define MAX_BIAS 1000000.0
#define GAUSS_BITS 20  // gauss: each 1-D kernel sums to 2^20
#define SCALED_BITS 24 // scaled 2-D kernels: S starts here
#define INT32_BOUND 2147483647LL
#define INT64_BOUND ((int64_t)1 << 62)
// kernels/convolve.cl's tile of convolve_sep_cpu_cN (CPU devices): samples, rows, and the
// largest radius its private arrays hold; keep in step with SEP_CPU_TW, _TH, _MAX_R there
#define SEP_CPU_TW 64
#define SEP_CPU_TH 128
#define SEP_CPU_MAX_R 32
// convolve_3x3's samples and rows a work-item, and convolve_3x3_packed's; keep in step with
// D3_SAMPLES, D3_ROWS, D3P_SAMPLES and D3P_ROWS there
#define D3_SAMPLES 8
#define D3_ROWS(ch) ((ch) == 1 ? 2 : 4)
#define D3P_SAMPLES(ch) ((ch) == 1 ? 8 : 16)
#define D3P_ROWS 4

enum border { BORDER_REPLICATE, BORDER_REFLECT, BORDER_WRAP, BORDER_ZERO };

static const char *const border_names[] = {"replicate", "reflect", "wrap", "zero"};

// The named kernels of fixed size (box and gauss are built from their options).
static const struct named {
	const char *name;
	int n;
	int w[9];
} named[] = {
    {"sharpen", 3, {0, -1, 0, -1, 5, -1, 0, -1, 0}},
    {"edge", 3, {0, -1, 0, -1, 4, -1, 0, -1, 0}}, // the Laplacian, centre positive
    {"sobel-x", 3, {-1, 0, 1, -2, 0, 2, -1, 0, 1}},
    {"sobel-y", 3, {-1, -2, -1, 0, 0, 0, 1, 2, 1}},
    {"emboss", 3, {-2, -1, 0, -1, 1, 1, 0, 1, 2}},
    {"identity", 1, {1}},
};
#define NNAMED (sizeof named / sizeof named[0])

struct convolve_params {
	int n, r;      // kernel side and radius, n = 2r + 1
	int border;    // enum border
	int separable; // k[dy][dx] = ky[dy] * kx[dx]
	int64_t D, B;  // divisor (>= 1) and bias numerator of the contract
	int64_t off;   // B + floor(D / 2)
	int shift;     // log2(D) when D is a power of two, else -1
	int64_t dev_m; // the device divides by D as (t * dev_m) >> dev_s (kernels/convolve.cl's
	int dev_s;     // finish() says why that is exact), or by t / D where dev_m is 0
	uint32_t m32;  // ... and in 32 bits (finish32) as ((t * m32) >> 32) >> s32, or t >> s32
	int s32;       // where m32 is 0; s32 is -1 where D allows neither (see finish_setup)
	uint32_t pz;   // convolve_3x3_packed's: the halves' start Z, and the division as
	uint32_t pm;   // (u * pm) >> ps; ps is -1 where that kernel does not take p (see
	int ps;        // packed_setup)
	uint32_t pn;   // convolve_3x3_packed_norm's division mul_hi(u, pn); 0 where that
	               // kernel does not take p (packed_setup)
	int32_t *w;    // separable: kx[n] then ky[n]; else k[n * n], row by row (dy, then dx)
	char what[48]; // "3x3 sharpen", for messages
};

// ---- the arithmetic shared by both paths -------------------------------------------------

// The source index of index i on a line of n pixels, or -1 where the zero border reads 0.
static int border_map(int i, int n, int border)
{
	if (i >= 0 && i < n)
		return i;
	switch (border) {
	case BORDER_REPLICATE: return i < 0 ? 0 : n - 1;
	case BORDER_REFLECT:
		if (n == 1)
			return 0;
		{
			int period = 2 * (n - 1);
			i %= period;
			if (i < 0)
				i += period;
			return i < n ? i : period - i;
		}
	case BORDER_WRAP: i %= n; return i < 0 ? i + n : i;
	default: return -1;
	}
}

// The contract's last step: acc to an output sample.
static inline uint8_t finish(int64_t acc, const struct convolve_params *p)
{
	int64_t t = acc + p->off, q;
	if (t < 0)
		return 0;
	q = p->shift >= 0 ? t >> p->shift : t / p->D;
	return q > 255 ? 255 : (uint8_t)q;
}

// Colour channels: all of grey and RGB, all but the last (alpha) of grey+alpha and RGBA.
static int colour_channels(int ch)
{
	return ch == 2 || ch == 4 ? ch - 1 : ch;
}

// ---- exact decimals ------------------------------------------------------------------------

// A number m * 10^e, exactly as written.
struct dec {
	int64_t m;
	int e;
};

// Reads s (already accepted by parse_double) exactly. false when it has more than 18
// significant digits or an exponent beyond +-999: the caller then works in double.
static bool dec_parse(const char *s, struct dec *d)
{
	int64_t m = 0;
	int e = 0, digits = 0, neg = 0;
	long x;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	for (int frac = 0;; s++) {
		if (*s == '.' && !frac) {
			frac = 1;
			continue;
		}
		if (*s < '0' || *s > '9')
			break;
		if (digits == 18) { // a 19th significant digit: fine only if it and the rest are 0
			if (*s != '0')
				return false;
			if (!frac)
				e++;
			continue;
		}
		m = m * 10 + (*s - '0');
		if (m)
			digits++;
		if (frac)
			e--;
	}
	if (*s == 'e' || *s == 'E') {
		char *end;
		x = strtol(s + 1, &end, 10);
		if (x > 999 || x < -999)
			return false;
		e += (int)x;
	}
	while (m && m % 10 == 0) {
		m /= 10;
		e++;
	}
	d->m = neg ? -m : m;
	d->e = m ? e : 0;
	return true;
}

static bool mul_ok(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

static bool pow10_ok(int e, int64_t *out)
{
	int64_t v = 1;
	if (e < 0 || e > 18)
		return false;
	for (int i = 0; i < e; i++)
		v *= 10;
	*out = v;
	return true;
}

static int64_t gcd64(int64_t a, int64_t b)
{
	a = a < 0 ? -a : a;
	b = b < 0 ? -b : b;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

// ---- building the integers -----------------------------------------------------------------

enum norm_kind { NORM_DEFAULT, NORM_SUM, NORM_NONE, NORM_VALUE };

// The kernel as the user gave it, before fixed point.
struct spec {
	const char *kernel; // the name or "kernel=..." argument, for messages
	enum { K_NONE, K_BOX, K_GAUSS, K_NAMED, K_CUSTOM } kind;
	const struct named *named;
	int n;         // side
	double *v;     // custom: n * n weights as doubles
	struct dec *d; // custom: the same exactly, or NULL when one is not exact
	const char *size_s, *sigma_s, *radius_s, *norm_s, *bias_s, *border_s, *kernel_s;
	long size, radius;
	double sigma, norm_v, bias;
	struct dec norm_d, bias_d;
	bool norm_exact, bias_exact;
	enum norm_kind norm;
};

// sum |w[i]| over n weights.
static int64_t abs_sum(const int32_t *w, int n)
{
	int64_t s = 0;
	for (int i = 0; i < n; i++)
		s += llabs(w[i]);
	return s;
}

// Whether the bounds of the contract hold for p's integers.
static bool bounds_ok(const struct convolve_params *p)
{
	int64_t sx, sy, prod, total;
	const int n = p->n;
	if (p->D < 1 || p->D > ((int64_t)1 << 54) || p->B > INT64_BOUND || p->B < -INT64_BOUND)
		return false;
	if (!p->separable)
		return 255 * abs_sum(p->w, n * n) <= INT32_BOUND;
	sx = abs_sum(p->w, n);
	sy = abs_sum(p->w + n, n);
	if (255 * sx > INT32_BOUND || 255 * sy > INT32_BOUND)
		return false;
	if (!mul_ok(255 * sx, sy, &prod))
		return false;
	total = prod + llabs(p->B) + p->D; // each term below 2^62: no overflow
	return total <= INT64_BOUND;
}

// The 9 weights of a 3 x 3 kernel, row by row (dy, then dx).
static void weights_3x3(const struct convolve_params *p, int32_t k[9])
{
	for (int dy = 0; dy < 3; dy++)
		for (int dx = 0; dx < 3; dx++)
			k[3 * dy + dx] = p->separable ? p->w[3 + dy] * p->w[dx] : p->w[3 * dy + dx];
}

// convolve_3x3_packed's integers (kernels/convolve.cl), for a 3 x 3 kernel whose sums fit
// the 16-bit halves of a word, 255 sum|k| <= 65535: Z = 255 times the sum of the negative
// weights' |k|, and the division q = (u * pm) >> ps for the u = max(acc + off, 0) the kernel
// can make, 0 <= u <= umax = 255 (the sum of the positive weights) + off. pm and ps keep
// u * pm below 2^32 up to umax, and give floor(u / D) for every u up to top = min(umax,
// 256 D): checked at u = j D - 1 and j D for j = 0 .. top / D + 1, which covers every u up
// to top, as q grows with u (a q right at both ends of a step is right inside it). Above
// 256 D, q is then at least 256, and the kernel saturates it to 255. The largest ps that
// works is taken. ps is -1 where the weights are too large or no pm and ps exist (a large
// bias); convolve_3x3 then takes p.
//
// convolve_3x3_packed_norm takes p where its sums need no clamp: no negative weight, off >= 0
// and umax below 256 D (a normalised kernel - box, a blur - with no positive bias), and
// umax <= 65535, as its halves start at off. It divides as mul_hi(u, pn) = (u pn) >> 32,
// pn = floor(2^32 / D) + 1, checked as above for every u up to umax; pn is 0 where it does
// not take p.
static bool div_exact(int64_t D, uint64_t m, int s, int64_t top)
{
	for (int64_t j = 0; j <= top / D + 1; j++)
		for (int64_t u = j * D - 1; u <= j * D; u++)
			if (u >= 0 && (int64_t)(((uint64_t)u * m) >> s) != u / D)
				return false;
	return true;
}

static void packed_setup(struct convolve_params *p)
{
	int32_t k[9];
	int64_t pos = 0, neg = 0, umax, top;
	p->pz = p->pm = p->pn = 0;
	p->ps = -1;
	if (p->n != 3)
		return;
	// sum|k| first (a separable kernel's sum|kx| sum|ky|; bounds_ok holds, so no overflow):
	// the weights' 2-D products need not fit int32 until it is known to be small
	if (255 * (p->separable ? abs_sum(p->w, 3) * abs_sum(p->w + 3, 3) : abs_sum(p->w, 9)) >
	    65535)
		return;
	weights_3x3(p, k);
	for (int i = 0; i < 9; i++)
		if (k[i] > 0)
			pos += k[i];
		else
			neg -= k[i];
	umax = 255 * pos + p->off > 0 ? 255 * pos + p->off : 0;
	top = umax < 256 * p->D ? umax : 256 * p->D;
	for (int s = 31; s >= 0 && p->ps < 0; s--) {
		const uint64_t m = ((uint64_t)1 << s) / (uint64_t)p->D + 1;
		if (m <= UINT32_MAX && (uint64_t)umax * m <= UINT32_MAX &&
		    div_exact(p->D, m, s, top)) {
			p->pz = (uint32_t)(255 * neg);
			p->pm = (uint32_t)m;
			p->ps = s;
		}
	}
	if (p->ps >= 0 && neg == 0 && p->off >= 0 && umax < 256 * p->D && umax <= 65535 &&
	    p->D > 1) {
		const uint64_t pn = ((uint64_t)1 << 32) / (uint64_t)p->D + 1; // D > 1: < 2^32
		if (div_exact(p->D, pn, 32, umax))
			p->pn = (uint32_t)pn;
	}
}

// Sets D-derived fields once D and B are final.
static void finish_setup(struct convolve_params *p)
{
	p->off = p->B + p->D / 2;
	p->shift = -1;
	if ((p->D & (p->D - 1)) == 0)
		for (p->shift = 0; ((int64_t)1 << p->shift) != p->D; p->shift++)
			;
	p->dev_m = 0;
	p->dev_s = 0;
	if (p->shift >= 0) {
		p->dev_m = 1;
		p->dev_s = p->shift;
	} else if (p->D < (1 << 16)) {
		p->dev_m = ((int64_t)1 << 40) / p->D + 1;
		p->dev_s = 40;
	}
	// finish32's (kernels/convolve.cl says why these are exact): a shift for D = 2^k (t is
	// below 2^31, so s32 = 31 gives the 0 that a larger D would); else for D < 2^23 the
	// reciprocal M = floor(2^(32+s) / D) + 1, s = floor(log2 D), which is below 2^32
	p->m32 = 0;
	p->s32 = -1;
	if (p->shift >= 0) {
		p->s32 = p->shift < 31 ? p->shift : 31;
	} else if (p->D < (1 << 23)) {
		for (p->s32 = 0; ((int64_t)2 << p->s32) <= p->D; p->s32++)
			;
		p->m32 = (uint32_t)((((uint64_t)1 << (32 + p->s32)) / (uint64_t)p->D) + 1);
	}
	packed_setup(p);
}

// Stores k (n * n int64 values known to fit int32 after bounds_ok) into p, as two 1-D
// factors when k is exactly of rank one: ky ⊗ kx with kx primitive (gcd 1, first non-zero
// positive) and ky integer. Returns -1 on out of memory.
static int store_weights(struct convolve_params *p, const int64_t *k)
{
	const int n = p->n;
	int r0 = -1, j0 = -1;
	int64_t g = 0, *kx = NULL, *ky = NULL;
	bool rank1 = true;

	free(p->w);
	p->w = NULL;
	for (int i = 0; i < n * n && r0 < 0; i++)
		if (k[i])
			r0 = i / n;
	if (r0 >= 0) {
		kx = malloc(sizeof *kx * (size_t)n);
		ky = malloc(sizeof *ky * (size_t)n);
		if (!kx || !ky) {
			free(kx);
			free(ky);
			return err_set("out of memory");
		}
		for (int j = 0; j < n; j++)
			g = gcd64(g, k[r0 * n + j]);
		for (int j = 0; j < n; j++) {
			kx[j] = k[r0 * n + j] / g;
			if (j0 < 0 && kx[j])
				j0 = j;
		}
		if (kx[j0] < 0)
			for (int j = 0; j < n; j++)
				kx[j] = -kx[j];
		for (int i = 0; i < n && rank1; i++) {
			if (k[i * n + j0] % kx[j0]) {
				rank1 = false;
				break;
			}
			ky[i] = k[i * n + j0] / kx[j0];
			for (int j = 0; j < n && rank1; j++)
				rank1 = k[i * n + j] == ky[i] * kx[j];
		}
	}
	p->separable = r0 >= 0 && rank1;
	p->w = malloc(sizeof *p->w * (size_t)(p->separable ? 2 * n : n * n));
	if (!p->w) {
		free(kx);
		free(ky);
		return err_set("out of memory");
	}
	if (p->separable)
		for (int j = 0; j < n; j++) {
			p->w[j] = (int32_t)kx[j];
			p->w[n + j] = (int32_t)ky[j];
		}
	else
		for (int i = 0; i < n * n; i++)
			p->w[i] = (int32_t)k[i];
	free(kx);
	free(ky);
	return 0;
}

// Whether every value of k fits in int32 (so store_weights may narrow it).
static bool fits_int32(const int64_t *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (k[i] > INT32_MAX || k[i] < -INT32_MAX)
			return false;
	return true;
}

// The exact integers for weights W / 10^E (integers, n * n of them), s's norm and bias:
// fills k, p->D, p->B. false when some number does not fit in int64 (or is 0 where it must
// not be); the caller then scales.
static bool exact_ints(const struct spec *s, const int64_t *W, int E, struct convolve_params *p,
                       int64_t *k)
{
	const size_t nn = (size_t)s->n * s->n;
	int64_t sum = 0, g = 0, nN = 1, nb, pF, pG, pE, mult, D, B, t;
	int F = 0, G;
	for (size_t i = 0; i < nn; i++) {
		if (__builtin_add_overflow(sum, W[i], &sum))
			return false;
		g = gcd64(g, W[i]);
	}
	switch (s->norm) {
	case NORM_SUM:
		nN = sum;
		F = E;
		break;
	case NORM_NONE: break;
	case NORM_VALUE:
		if (!s->norm_exact)
			return false;
		if (s->norm_d.e >= 0) {
			if (!pow10_ok(s->norm_d.e, &t) || !mul_ok(s->norm_d.m, t, &nN))
				return false;
		} else {
			nN = s->norm_d.m;
			F = -s->norm_d.e;
		}
		break;
	default: return false;
	}
	if (!s->bias_exact || nN == 0)
		return false;
	G = s->bias_d.e < 0 ? -s->bias_d.e : 0;
	nb = s->bias_d.m;
	if (s->bias_d.e > 0 && (!pow10_ok(s->bias_d.e, &t) || !mul_ok(nb, t, &nb)))
		return false;
	if (g == 0) // all weights 0
		g = 1;
	// value = sum (W/10^E) (10^F/nN) in + nb/10^G; times 10^E nN 10^G:
	//   k = W 10^F 10^G, D = 10^E nN 10^G, B = nb 10^E nN
	if (!pow10_ok(F, &pF) || !pow10_ok(G, &pG) || !pow10_ok(E, &pE))
		return false;
	if (!mul_ok(g, pF, &mult) || !mul_ok(mult, pG, &mult) || !mul_ok(pE, nN, &D) ||
	    !mul_ok(D, pG, &D) || !mul_ok(nb, pE, &B) || !mul_ok(B, nN, &B))
		return false;
	if (D < 0) {
		mult = -mult;
		D = -D;
		B = -B;
	}
	t = gcd64(gcd64(mult, D), B);
	mult /= t;
	D /= t;
	B /= t;
	for (size_t i = 0; i < nn; i++)
		if (!mul_ok(W[i] / g, mult, &k[i]))
			return false;
	p->D = D;
	p->B = B;
	return fits_int32(k, nn);
}

struct rem {
	double frac;
	size_t i;
};

static int rem_cmp(const void *a, const void *b)
{
	const struct rem *x = a, *y = b;
	if (x->frac != y->frac)
		return x->frac < y->frac ? 1 : -1;
	return x->i < y->i ? -1 : x->i > y->i;
}

// Largest-remainder rounding of v[0..n) to integers k summing to total (see the contract).
// false when a value is too large for int64 or out of memory (err set for the latter).
static bool lr_round(const double *v, size_t n, int64_t total, int64_t *k, bool *oom)
{
	struct rem *rm = malloc(sizeof *rm * (n ? n : 1));
	int64_t s = 0, deficit;
	if (!rm) {
		*oom = true;
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		double f = floor(v[i]);
		if (!(fabs(f) < 9007199254740992.0)) { // 2^53; also false for NaN
			free(rm);
			return false;
		}
		k[i] = (int64_t)f;
		s += k[i];
		rm[i] = (struct rem){v[i] - f, i};
	}
	deficit = total - s;
	if (deficit < 0 || (uint64_t)deficit > n) { // not for sums computed in double; be safe
		free(rm);
		return false;
	}
	qsort(rm, n, sizeof *rm, rem_cmp);
	for (int64_t t = 0; t < deficit; t++)
		k[rm[t].i]++;
	free(rm);
	return true;
}

// Symmetric largest-remainder rounding of v[0..n) (n odd, v symmetric) to k summing to
// total: pairs (c - i, c + i) always get the same value; an odd unit goes to the centre;
// ties go to the pair nearer the centre.
static bool lr_round_sym(const double *v, int n, int64_t total, int64_t *k)
{
	const int c = n / 2;
	int64_t s = 0, deficit;
	struct rem rm[MAX_RADIUS + 1];
	for (int i = 0; i < n; i++) {
		double f = floor(v[i]);
		if (!(fabs(f) < 9007199254740992.0))
			return false;
		k[i] = (int64_t)f;
		s += k[i];
	}
	deficit = total - s;
	if (deficit < 0 || deficit > n)
		return false;
	if (deficit % 2) {
		k[c]++;
		deficit--;
	}
	for (int i = 1; i <= c; i++)
		rm[i - 1] = (struct rem){v[c + i] - (double)k[c + i], (size_t)i};
	qsort(rm, (size_t)c, sizeof *rm, rem_cmp);
	for (int64_t t = 0; t < deficit / 2; t++) {
		k[c + rm[t].i]++;
		k[c - rm[t].i]++;
	}
	return true;
}

// The scaled integers for a 2-D kernel (see the contract). -1 with err set.
static int build_scaled(const struct spec *s, struct convolve_params *p, int64_t *k)
{
	const size_t nn = (size_t)s->n * s->n;
	double sum = 0, N, fsum = 0, *v = malloc(sizeof *v * nn);
	bool oom = false;
	if (!v)
		return err_set("out of memory");
	for (size_t i = 0; i < nn; i++)
		sum += s->v[i];
	N = s->norm == NORM_SUM ? sum : s->norm == NORM_VALUE ? s->norm_v : 1.0;
	for (size_t i = 0; i < nn; i++)
		fsum += s->v[i] / N;
	for (int S = SCALED_BITS; S >= 0; S--) {
		double scale = ldexp(1.0, S),
		       total = s->norm == NORM_SUM ? scale : floor(fsum * scale + 0.5),
		       b = floor(s->bias * scale + 0.5);
		for (size_t i = 0; i < nn; i++)
			v[i] = s->v[i] / N * scale;
		if (!(fabs(total) < 4e18) || !lr_round(v, nn, (int64_t)total, k, &oom)) {
			if (oom)
				break;
			continue;
		}
		if (!fits_int32(k, nn))
			continue;
		p->D = (int64_t)1 << S;
		p->B = (int64_t)b;
		if (store_weights(p, k) < 0) {
			free(v);
			return -1;
		}
		if (bounds_ok(p)) {
			free(v);
			return 0;
		}
	}
	free(v);
	if (oom)
		return err_set("out of memory");
	return err_set("convolve: the weights are too large for the fixed-point accumulators "
	               "(255 * the sum of |weight / norm| must stay below 2^31)");
}

// Resolves the default norm now that the weights (and so their sum) are known.
static int norm_resolve(struct spec *s, bool sum_is_zero)
{
	if (s->norm == NORM_DEFAULT)
		s->norm = sum_is_zero ? NORM_NONE : NORM_SUM;
	else if (s->norm == NORM_SUM && sum_is_zero)
		return err_set("convolve: norm=sum: the weights of %s sum to 0 (use norm=none or "
		               "norm=D)",
		               s->kind == K_CUSTOM ? "the kernel" : s->kernel);
	return 0;
}

// A kernel given as a list of n * n weights (named or custom): exact if it fits, else
// scaled. The default norm is decided on the exact sum when there is one (0.1 + 0.2 - 0.3
// is 0), else on the sum in double.
static int build_list(struct spec *s, struct convolve_params *p)
{
	const size_t nn = (size_t)s->n * s->n;
	int64_t *W = malloc(sizeof *W * nn), *k = malloc(sizeof *k * nn), sum = 0;
	double dsum = 0;
	int E = 0, rc = -1;
	bool exact = s->d != NULL;
	p->n = s->n;
	p->r = s->n / 2;
	if (!W || !k) {
		err_set("out of memory");
		goto done;
	}
	if (exact) {
		for (size_t i = 0; i < nn; i++)
			if (s->d[i].m && -s->d[i].e > E)
				E = -s->d[i].e;
		for (size_t i = 0; i < nn && exact; i++) {
			int64_t t;
			exact = pow10_ok(s->d[i].m ? s->d[i].e + E : 0, &t) &&
			        mul_ok(s->d[i].m, t, &W[i]) &&
			        !__builtin_add_overflow(sum, W[i], &sum);
		}
	}
	for (size_t i = 0; i < nn; i++)
		dsum += s->v[i];
	if (norm_resolve(s, exact ? sum == 0 : dsum == 0) < 0)
		goto done;
	if (exact && exact_ints(s, W, E, p, k)) {
		if (store_weights(p, k) < 0)
			goto done;
		if (bounds_ok(p)) {
			rc = 0;
			goto done;
		}
	}
	rc = build_scaled(s, p, k);
done:
	free(W);
	free(k);
	return rc;
}

// A separable kernel u^T x u from a symmetric 1-D profile u (summing to 1), scaled: see
// the contract (gauss). usum2 is the 2-D sum of the kernel before normalising, for
// norm=none and norm=D.
static int build_sep_scaled(const struct spec *s, struct convolve_params *p, const double *u,
                            double usum2)
{
	const int n = s->n;
	const double m = s->norm == NORM_SUM     ? 1.0
	                 : s->norm == NORM_VALUE ? usum2 / s->norm_v
	                                         : usum2; // the kernel's sum after the norm
	double *vx = malloc(sizeof *vx * 2 * (size_t)n), *vy = vx + n;
	int64_t *kx = malloc(sizeof *kx * 2 * (size_t)n), *ky = kx + n;
	int rc = -1;
	p->n = n;
	p->r = n / 2;
	free(p->w);
	p->w = malloc(sizeof *p->w * 2 * (size_t)n);
	if (!vx || !kx || !p->w) {
		err_set("out of memory");
		goto done;
	}
	p->separable = 1;
	for (int S = GAUSS_BITS; S >= 1 && rc < 0; S--) {
		double scale = ldexp(1.0, S), ty = floor(m * scale + 0.5), b;
		for (int i = 0; i < n; i++) {
			vx[i] = u[i] * scale;
			vy[i] = u[i] * m * scale;
		}
		if (!(fabs(ty) < 4e18) || !lr_round_sym(vx, n, (int64_t)scale, kx) ||
		    !lr_round_sym(vy, n, (int64_t)ty, ky) || !fits_int32(kx, 2 * (size_t)n))
			continue;
		for (int i = 0; i < 2 * n; i++)
			p->w[i] = (int32_t)kx[i];
		p->D = (int64_t)1 << (2 * S);
		b = floor(s->bias * (double)p->D + 0.5);
		p->B = (int64_t)b;
		if (fabs(b) < 4e18 && bounds_ok(p))
			rc = 0;
	}
	if (rc < 0)
		err_set("convolve: %s: the norm or bias is too large for the fixed-point "
		        "accumulators",
		        s->kernel);
done:
	free(vx);
	free(kx);
	return rc;
}

// box: separable ones; exact (k = ones x ones, with the norm folded into ky) unless the
// norm or bias needs numbers beyond int64, then scaled like gauss.
static int build_box(struct spec *s, struct convolve_params *p)
{
	const int n = s->n;
	const int64_t nn = (int64_t)n * n;
	struct spec one = *s;
	int64_t W = 1, k;
	double *u;
	int rc;

	p->n = n;
	p->r = n / 2;
	if (norm_resolve(s, false) < 0)
		return -1;
	// exact_ints on the single weight 1, with norm=sum meaning a norm of n^2
	one.n = 1;
	one.norm = s->norm;
	if (s->norm == NORM_SUM) {
		one.norm = NORM_VALUE;
		one.norm_exact = true;
		one.norm_d = (struct dec){nn, 0};
	}
	p->w = malloc(sizeof *p->w * 2 * (size_t)n);
	if (!p->w)
		return err_set("out of memory");
	p->separable = 1;
	if (exact_ints(&one, &W, 0, p, &k)) {
		for (int i = 0; i < n; i++) {
			p->w[i] = 1;
			p->w[n + i] = (int32_t)k;
		}
		if (bounds_ok(p))
			return 0;
	}
	u = malloc(sizeof *u * (size_t)n);
	if (!u)
		return err_set("out of memory");
	for (int i = 0; i < n; i++)
		u[i] = 1.0 / n;
	rc = build_sep_scaled(s, p, u, (double)nn);
	free(u);
	return rc;
}

// gauss: u(i) = exp(-i^2 / (2 sigma^2)) normalised, scaled (see the contract).
static int build_gauss(struct spec *s, struct convolve_params *p)
{
	const int n = s->n, r = n / 2;
	double *u = malloc(sizeof *u * (size_t)n), usum = 0;
	int rc;
	if (!u)
		return err_set("out of memory");
	if (norm_resolve(s, false) < 0) {
		free(u);
		return -1;
	}
	for (int i = -r; i <= r; i++) {
		// the centre is exp(0) = 1 even where 2 sigma^2 underflows to 0 (sigma=1e-200)
		u[i + r] = i ? exp(-(double)i * i / (2.0 * s->sigma * s->sigma)) : 1.0;
		usum += u[i + r];
	}
	for (int i = 0; i < n; i++)
		u[i] /= usum;
	rc = build_sep_scaled(s, p, u, usum * usum);
	free(u);
	return rc;
}

// ---- parsing -------------------------------------------------------------------------------

// Converts n number strings into s->v (and s->d while every one is exact). where names the
// source for messages ("kernel=" or the file name). -1 with err set.
static int numbers_take(struct spec *s, char **str, size_t n, const char *where)
{
	s->v = malloc(sizeof *s->v * n);
	s->d = malloc(sizeof *s->d * n);
	if (!s->v || !s->d)
		return err_set("out of memory");
	for (size_t i = 0; i < n; i++) {
		if (!parse_double(str[i], &s->v[i]))
			return err_set("convolve: %s: weight %zu must be a number, not '%s'", where,
			               i + 1, str[i]);
		if (s->d && !dec_parse(str[i], &s->d[i])) {
			free(s->d);
			s->d = NULL;
		}
	}
	return 0;
}

// The side of a square kernel of count numbers, or an error naming where.
static int kernel_side(size_t count, const char *where, int *side)
{
	size_t n = (size_t)sqrt((double)count);
	while (n * n < count)
		n++;
	while (n * n > count)
		n--;
	if (count == 0)
		return err_set("convolve: %s: the kernel is empty", where);
	if (n * n != count)
		return err_set("convolve: %s: %zu numbers do not make a square kernel (N x N "
		               "numbers, N odd: 1, 9, 25, 49, ...)",
		               where, count);
	if (n % 2 == 0)
		return err_set("convolve: %s: the kernel is %zux%zu; its side must be odd (3x3, "
		               "5x5, ...) so that it has a centre",
		               where, n, n);
	if (n > MAX_N)
		return err_set("convolve: %s: the kernel is %zux%zu; the largest is %dx%d", where,
		               n, n, MAX_N, MAX_N);
	*side = (int)n;
	return 0;
}

// kernel=W,W,... (list is modified: split at the commas).
static int custom_inline(struct spec *s, char *list)
{
	size_t count = 1, i = 0;
	char **str = NULL;
	int rc = -1;
	if (!*list)
		return err_set("convolve: kernel= needs N*N numbers, N odd, e.g. "
		               "kernel=1,2,1,2,4,2,1,2,1");
	for (char *c = list; *c; c++)
		count += *c == ',';
	str = malloc(sizeof *str * count);
	if (!str)
		return err_set("out of memory");
	for (char *tok = list;; i++) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = '\0';
		str[i] = tok;
		if (!comma)
			break;
		tok = comma + 1;
	}
	if (kernel_side(count, "kernel=", &s->n) == 0)
		rc = numbers_take(s, str, count, "kernel=");
	free(str);
	return rc;
}

// kernel=@FILE: numbers separated by white space, one row of the kernel a line; blank
// lines and lines starting with '#' are skipped.
static int custom_file(struct spec *s, const char *path)
{
	FILE *f = NULL;
	char *text = NULL, **str = NULL, *line, *next;
	size_t len = 0, count = 0, cap = 0;
	int rc = -1, row = 0, width = -1, lineno = 0;

	if (!*path)
		return err_set("convolve: kernel=@ needs a file name, e.g. kernel=@edge.txt");
	f = fopen(path, "rb");
	if (!f) {
		err_set("convolve: cannot read kernel file '%s': %s", path, strerror(errno));
		goto done;
	}
	text = malloc(MAX_FILE_BYTES + 1);
	if (!text) {
		err_set("out of memory");
		goto done;
	}
	len = fread(text, 1, MAX_FILE_BYTES + 1, f);
	if (ferror(f)) {
		err_set("convolve: cannot read kernel file '%s': %s", path, strerror(errno));
		goto done;
	}
	if (len > MAX_FILE_BYTES) {
		err_set("convolve: kernel file '%s' is larger than %d MiB", path,
		        MAX_FILE_BYTES >> 20);
		goto done;
	}
	text[len] = '\0';
	if (memchr(text, '\0', len)) {
		err_set("convolve: kernel file '%s' is not text", path);
		goto done;
	}
	for (line = text; line; line = next) {
		int in_row = 0;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line += strspn(line, " \t\r\f\v");
		if (!*line || *line == '#')
			continue;
		char *save = NULL;
		for (char *tok = strtok_r(line, " \t\r\f\v", &save); tok;
		     tok = strtok_r(NULL, " \t\r\f\v", &save)) {
			if (count == cap) {
				char **grown =
				    realloc(str, sizeof *str * (cap = cap ? 2 * cap : 64));
				if (!grown) {
					err_set("out of memory");
					goto done;
				}
				str = grown;
			}
			str[count++] = tok;
			in_row++;
		}
		if (width < 0)
			width = in_row;
		else if (in_row != width) {
			err_set(
			    "convolve: %s: line %d has %d numbers, the first row %d (one row of "
			    "the kernel a line)",
			    path, lineno, in_row, width);
			goto done;
		}
		row++;
	}
	if (count == 0) {
		err_set("convolve: kernel file '%s' holds no numbers", path);
		goto done;
	}
	if (row != width) {
		err_set("convolve: %s: %d rows of %d numbers; a kernel is N rows of N numbers, N "
		        "odd",
		        path, row, width);
		goto done;
	}
	if (kernel_side(count, path, &s->n) < 0)
		goto done;
	rc = numbers_take(s, str, count, path);
done:
	if (f)
		fclose(f); // read only: nothing to lose
	free(text);
	free(str);
	return rc;
}

// Records opt=value, refusing a second one.
static int opt_set(const char **slot, const char *name, const char *value)
{
	if (*slot)
		return err_set("convolve: %s= given twice", name);
	*slot = value;
	return 0;
}

static int args_read(struct spec *s, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		char *a = argv[i], *eq = strchr(a, '=');
		const char **slot = NULL;
		if (!eq) {
			if (s->kernel)
				return err_set("convolve: two kernels given, '%s' and '%s'",
				               s->kernel, a);
			s->kernel = a;
			if (!strcmp(a, "box"))
				s->kind = K_BOX;
			else if (!strcmp(a, "gauss"))
				s->kind = K_GAUSS;
			for (size_t j = 0; j < NNAMED && !s->kind; j++)
				if (!strcmp(a, named[j].name)) {
					s->kind = K_NAMED;
					s->named = &named[j];
				}
			if (!s->kind)
				return err_set(
				    "convolve: unknown kernel '%s' (use box, gauss, sharpen, "
				    "edge, sobel-x, sobel-y, emboss, identity, kernel=W,W,... or "
				    "kernel=@FILE)",
				    a);
			continue;
		}
		*eq = '\0';
		if (!strcmp(a, "kernel")) {
			if (s->kernel)
				return err_set("convolve: two kernels given, '%s' and 'kernel=%s'",
				               s->kernel, eq + 1);
			s->kernel = "kernel=...";
			s->kind = K_CUSTOM;
			slot = &s->kernel_s;
		} else if (!strcmp(a, "size"))
			slot = &s->size_s;
		else if (!strcmp(a, "sigma"))
			slot = &s->sigma_s;
		else if (!strcmp(a, "radius"))
			slot = &s->radius_s;
		else if (!strcmp(a, "norm"))
			slot = &s->norm_s;
		else if (!strcmp(a, "bias"))
			slot = &s->bias_s;
		else if (!strcmp(a, "border"))
			slot = &s->border_s;
		else
			return err_set("convolve: unknown option '%s=' (use norm=, bias=, border=; "
			               "size= for box; sigma=, radius= for gauss)",
			               a);
		if (opt_set(slot, a, eq + 1) < 0)
			return -1;
	}
	if (!s->kernel)
		return err_set("convolve: needs a kernel, e.g. convolve:gauss, convolve:sobel-x or "
		               "convolve:kernel=1,2,1,2,4,2,1,2,1");
	return 0;
}

static int options_read(struct spec *s, struct convolve_params *p)
{
	if (s->size_s && s->kind != K_BOX)
		return err_set("convolve: size= applies to box only");
	if ((s->sigma_s || s->radius_s) && s->kind != K_GAUSS)
		return err_set("convolve: %s= applies to gauss only",
		               s->sigma_s ? "sigma" : "radius");
	if (s->size_s && (!parse_long(s->size_s, 1, MAX_N, &s->size) || s->size % 2 == 0))
		return err_set("convolve: size must be an odd whole number from 1 to %d, not '%s'",
		               MAX_N, s->size_s);
	s->sigma = 1.0;
	if (s->sigma_s &&
	    (!parse_double(s->sigma_s, &s->sigma) || !(s->sigma > 0) || s->sigma > MAX_RADIUS))
		return err_set("convolve: sigma must be a number above 0 and at most %d, not '%s'",
		               MAX_RADIUS, s->sigma_s);
	if (s->radius_s && !parse_long(s->radius_s, 0, MAX_RADIUS, &s->radius))
		return err_set("convolve: radius must be a whole number from 0 to %d, not '%s'",
		               MAX_RADIUS, s->radius_s);
	if (s->kind == K_GAUSS && !s->radius_s) {
		double r = ceil(3.0 * s->sigma);
		if (r > MAX_RADIUS)
			return err_set(
			    "convolve: sigma=%s needs a radius of ceil(3 * sigma) = %.0f; "
			    "the largest is %d (give a smaller radius= or sigma=)",
			    s->sigma_s, r, MAX_RADIUS);
		s->radius = (long)r;
	}

	s->norm = NORM_DEFAULT;
	if (s->norm_s) {
		if (!strcmp(s->norm_s, "sum"))
			s->norm = NORM_SUM;
		else if (!strcmp(s->norm_s, "none"))
			s->norm = NORM_NONE;
		else if (parse_double(s->norm_s, &s->norm_v) && s->norm_v != 0) {
			s->norm = NORM_VALUE;
			s->norm_exact = dec_parse(s->norm_s, &s->norm_d);
		} else
			return err_set("convolve: norm must be sum, none or a number other than 0, "
			               "not '%s'",
			               s->norm_s);
	}
	s->bias_exact = true;
	s->bias_d = (struct dec){0, 0};
	if (s->bias_s) {
		if (!parse_double(s->bias_s, &s->bias) || fabs(s->bias) > MAX_BIAS)
			return err_set(
			    "convolve: bias must be a number from %.0f to %.0f, not '%s'",
			    -MAX_BIAS, MAX_BIAS, s->bias_s);
		s->bias_exact = dec_parse(s->bias_s, &s->bias_d);
	}
	p->border = BORDER_REPLICATE;
	if (s->border_s) {
		int b;
		for (b = 0; b < 4 && strcmp(s->border_s, border_names[b]); b++)
			;
		if (b == 4)
			return err_set("convolve: border must be replicate, reflect, wrap or zero, "
			               "not '%s'",
			               s->border_s);
		p->border = b;
	}
	return 0;
}

static int convolve_parse(void *params, int argc, char **argv)
{
	struct convolve_params *p = params;
	struct spec s = {0};
	int rc = -1;

	if (args_read(&s, argc, argv) < 0 || options_read(&s, p) < 0)
		goto done;
	switch (s.kind) {
	case K_BOX:
		s.n = s.size_s ? (int)s.size : 3;
		if (build_box(&s, p) < 0)
			goto done;
		snprintf(p->what, sizeof p->what, "%dx%d box", s.n, s.n);
		break;
	case K_GAUSS:
		s.n = 2 * (int)s.radius + 1;
		if (build_gauss(&s, p) < 0)
			goto done;
		snprintf(p->what, sizeof p->what, "%dx%d gauss", s.n, s.n);
		break;
	case K_NAMED:
		s.n = s.named->n;
		s.v = malloc(sizeof *s.v * 9);
		s.d = malloc(sizeof *s.d * 9);
		if (!s.v || !s.d) {
			err_set("out of memory");
			goto done;
		}
		for (int i = 0; i < s.n * s.n; i++) {
			s.v[i] = s.named->w[i];
			s.d[i] = (struct dec){s.named->w[i], 0};
		}
		if (build_list(&s, p) < 0)
			goto done;
		snprintf(p->what, sizeof p->what, "%dx%d %s", s.n, s.n, s.kernel);
		break;
	case K_CUSTOM:
		if (s.kernel_s[0] == '@' ? custom_file(&s, s.kernel_s + 1) < 0
		                         : custom_inline(&s, (char *)s.kernel_s) < 0)
			goto done;
		if (build_list(&s, p) < 0)
			goto done;
		snprintf(p->what, sizeof p->what, "%dx%d custom", s.n, s.n);
		break;
	default: err_set("convolve: needs a kernel"); goto done;
	}
	finish_setup(p);
	rc = 0;
done:
	free(s.v);
	free(s.d);
	return rc;
}

static void convolve_free(void *params)
{
	struct convolve_params *p = params;
	free(p->w);
	p->w = NULL;
}

void convolve_ints(const void *params, struct convolve_ints *out)
{
	const struct convolve_params *p = params;
	*out =
	    (struct convolve_ints){p->n,     p->separable != 0, p->D,   p->B,  p->w,  p->dev_m,
	                           p->dev_s, p->m32,            p->s32, p->pz, p->pm, p->ps,
	                           p->pn};
}

static int convolve_plan(const void *params, const struct geom *in, struct stage_plan *plan)
{
	const struct convolve_params *p = params;
	plan->out = *in;
	if (!p->separable) {
		double work = (double)in->w * in->h * colour_channels(in->ch) * p->n * p->n;
		if (work > (double)MAX_WORK)
			return err_set(
			    "a %s kernel (not separable) on a %dx%d image with %d "
			    "colour channels is %.2g multiply-adds, over the limit of 2^40 "
			    "(%.2g); use a smaller or separable kernel",
			    p->what, in->w, in->h, colour_channels(in->ch), work, (double)MAX_WORK);
	}
	return 0;
}

// ---- the CPU path (the reference) ------------------------------------------------------------

static void cpu_2d(const struct convolve_params *p, const struct img *in, struct img *out)
{
	const int W = in->w, H = in->h, ch = in->ch, r = p->r, n = p->n, cc = colour_channels(ch);
	const size_t stride = (size_t)W * ch;
	for (int y = 0; y < H; y++) {
		for (int x = 0; x < W; x++) {
			const size_t o = (size_t)y * stride + (size_t)x * ch;
			const bool inside = x >= r && x < W - r && y >= r && y < H - r;
			for (int c = 0; c < cc; c++) {
				const int32_t *k = p->w;
				int64_t acc = 0;
				for (int dy = -r; dy <= r; dy++, k += n) {
					int sy = inside ? y + dy : border_map(y + dy, H, p->border);
					if (sy < 0)
						continue;
					const uint8_t *row = in->data + (size_t)sy * stride + c;
					if (inside) {
						const uint8_t *s = row + (size_t)(x - r) * ch;
						for (int j = 0; j < n; j++)
							acc += (int64_t)k[j] * s[(size_t)j * ch];
						continue;
					}
					for (int j = 0; j < n; j++) {
						int sx = border_map(x + j - r, W, p->border);
						if (sx >= 0)
							acc += (int64_t)k[j] * row[(size_t)sx * ch];
					}
				}
				out->data[o + c] = finish(acc, p);
			}
			if (cc < ch)
				out->data[o + cc] = in->data[o + cc];
		}
	}
}

// Column sums of a chunk of columns live on the stack: run_cpu cannot fail, so it allocates
// nothing. CHUNK samples hold more than 2 * MAX_RADIUS pixels of 4 channels.
#define CHUNK 16384
_Static_assert(CHUNK / 4 > 2 * MAX_RADIUS, "a chunk must be wider than the kernel");

// The column sums (vertical pass) of the virtual column vx outside the image into d[ch].
static void sep_edge_column(const struct convolve_params *p, const uint8_t *const *rows, int W,
                            int ch, int vx, int32_t *d)
{
	const int32_t *ky = p->w + p->n;
	const int mx = border_map(vx, W, p->border);
	for (int c = 0; c < ch; c++)
		d[c] = 0;
	if (mx < 0)
		return;
	for (int i = 0; i < p->n; i++)
		if (rows[i])
			for (int c = 0; c < ch; c++)
				d[c] += ky[i] * rows[i][(size_t)mx * ch + c];
}

// Separable: for each output row, the vertical pass into v (int32, exact) for the columns
// [xa - r, xb + r) of a chunk, then the horizontal pass from v (int64) to the output.
static void cpu_sep(const struct convolve_params *p, const struct img *in, struct img *out)
{
	const int W = in->w, H = in->h, ch = in->ch, r = p->r, n = p->n, cc = colour_channels(ch);
	const int32_t *kx = p->w, *ky = p->w + n;
	const size_t stride = (size_t)W * ch;
	const int span = CHUNK / ch - 2 * r; // output pixels per chunk, >= 1
	const uint8_t *rows[MAX_N];
	int32_t v[CHUNK];

	for (int y = 0; y < H; y++) {
		for (int i = 0; i < n; i++) {
			int sy = border_map(y + i - r, H, p->border);
			rows[i] = sy < 0 ? NULL : in->data + (size_t)sy * stride;
		}
		for (int xa = 0; xa < W; xa += span) {
			const int xb = xa + span < W ? xa + span : W, va = xa - r, vb = xb + r;
			const int ia = va > 0 ? va : 0, ib = vb < W ? vb : W; // columns inside
			int32_t *vi = v + (size_t)(ia - va) * ch;
			const size_t cnt = (size_t)(ib - ia) * ch;
			memset(vi, 0, cnt * sizeof *vi);
			for (int i = 0; i < n; i++) {
				if (!rows[i] || !ky[i])
					continue;
				const uint8_t *s = rows[i] + (size_t)ia * ch;
				const int32_t k = ky[i];
				for (size_t j = 0; j < cnt; j++)
					vi[j] += k * s[j];
			}
			// virtual columns outside the image: [va, 0) and [W, vb)
			for (int vx = va; vx < vb && vx < 0; vx++)
				sep_edge_column(p, rows, W, ch, vx, v + (size_t)(vx - va) * ch);
			for (int vx = W > va ? W : va; vx < vb; vx++)
				sep_edge_column(p, rows, W, ch, vx, v + (size_t)(vx - va) * ch);
			for (int x = xa; x < xb; x++) {
				const size_t o = (size_t)y * stride + (size_t)x * ch;
				const int32_t *s = v + (size_t)(x - xa) * ch;
				for (int c = 0; c < cc; c++) {
					int64_t acc = 0;
					for (int j = 0; j < n; j++)
						acc += (int64_t)kx[j] * s[(size_t)j * ch + c];
					out->data[o + c] = finish(acc, p);
				}
				if (cc < ch)
					out->data[o + cc] = in->data[o + cc];
			}
		}
	}
}

static void convolve_run_cpu(const void *params, const struct img *in, struct img *out)
{
	const struct convolve_params *p = params;
	if (p->separable)
		cpu_sep(p, in, out);
	else
		cpu_2d(p, in, out);
}

// ---- the OpenCL path -------------------------------------------------------------------------

// __local bytes a tile may use: at most 47 KiB (occupancy; and NVIDIA reports exactly
// 48 KiB), and 1 KiB less than the device has, for drivers that keep some for themselves.
#define LOCAL_BUDGET (47 << 10)
#define LOCAL_RESERVE 1024
#define SCRATCH_CAP ((uint64_t)512 << 20)
// The work-group the kernels that take any shape ask for: 64 x 4 (rows of consecutive
// samples: coalesced); convolve_3x3 16 x 8, which on an H100, an H200 and PoCL ran box and
// sobel-x 3x3 on 8K images 2-8% (GPUs) and up to 20% (PoCL) faster than its earlier 16 x 16
// (ocl_run's own pick; docs/BENCHMARKS.md, tenth session).
#define LOCAL_W 64
#define LOCAL_H 4
#define D3_LOCAL_W 16
#define D3_LOCAL_H 8
#define D3_EDGE_LOCAL 64 // convolve_3x3_edge_cN's work-group: 64 units

// __local bytes of a tile of the 2-D kernel, TW x TH output pixels: the input tile with its
// halo, then the weights.
static size_t tile_bytes_2d(const struct convolve_params *p, int tw, int th, int ch)
{
	size_t rh = (size_t)th + 2 * p->r, rw = (size_t)tw + 2 * p->r;
	return rh * rw * ch + 4 * (size_t)p->n * p->n;
}

// The __local bytes a work-group may use: LOCAL_BUDGET, or LOCAL_RESERVE less than the device
// has.
static uint64_t local_budget(const struct ocl_limits *lim)
{
	const uint64_t avail =
	    lim->local_mem_bytes > LOCAL_RESERVE ? lim->local_mem_bytes - LOCAL_RESERVE : 0;
	return avail < LOCAL_BUDGET ? avail : LOCAL_BUDGET;
}

// The rows of one strip of CLIMG_CONVOLVE_STRIP (a test hook), or 0 where it is unset.
static long strip_hook(void)
{
	const char *env = getenv("CLIMG_CONVOLVE_STRIP");
	long v = 0;
	return env && parse_long(env, 1, INT_MAX, &v) ? v : 0;
}

// The shape of a run of the separable strip kernel (kernels/convolve.cl, sep_strip).
struct strip {
	int tws, sh, cr;     // samples and rows a strip, rows a chunk (the ring: cr + 2r rows)
	size_t lx, ly;       // the work-group: tws / 8 items a row, ly rows of items
	size_t tile, mid;    // __local bytes: the chunk's input rows, the ring
};

// Picks the strip kernel's shape, or returns false (use the two-pass path) where no shape
// fits the local memory and the work-group limits. Preferred in order: strips of 128
// samples, then 64, 32 (wider strips load less halo a sample); chunks of 2 rows an
// item-row of the work-group, then of 1 (a chunk is a barrier's worth of work). Strips are
// 128 rows, or 8r where more: the 2r rows that start a strip are summed horizontally twice
// (for it and the strip above), at most a quarter more.
static bool strip_pick(const struct convolve_params *p, const struct ocl_limits *lim,
                       size_t wg_max, int ch, struct strip *st)
{
	static const int tws_list[] = {128, 64, 32};
	const uint64_t budget = local_budget(lim);
	const size_t rc = (size_t)p->r * ch, pad = (16 - rc % 16) % 16;
	const long hook = strip_hook();
	for (size_t i = 0; i < sizeof tws_list / sizeof tws_list[0]; i++) {
		const int tws = tws_list[i];
		size_t lx = (size_t)tws / 8, ly = 256 / lx < 32 ? 256 / lx : 32;
		if (lx > wg_max || lx > lim->item_max[0])
			continue;
		while (ly > 1 && (lx * ly > wg_max || ly > lim->item_max[1]))
			ly /= 2;
		const size_t l4 = (pad + tws + 2 * rc + ch + 15) / 16; // vectors a tile row
		for (int per = 2; per >= 1; per--) {
			const size_t cr = per * ly, nr = cr + 2 * (size_t)p->r;
			// a tile row is l4 vectors and a word (sep_strip says why)
			const size_t tile = cr * (16 * l4 + 4), mid = 4 * nr * tws;
			if (tile + mid + 8 * (size_t)p->n > budget)
				continue;
			st->tws = tws;
			st->cr = (int)cr;
			st->sh = 8 * p->r > 128 ? 8 * p->r : 128;
			if (hook)
				st->sh = (int)hook;
			st->lx = lx;
			st->ly = ly;
			st->tile = tile;
			st->mid = mid;
			return true;
		}
	}
	return false;
}

// Whether the separable kernels (sep_strip, sep_cpu) may add the two samples that share a
// weight before multiplying: kx and ky symmetric, and the sum of two first-pass values
// (each at most 255 sum|kx|) within int32.
static bool sep_sym(const struct convolve_params *p)
{
	const int n = p->n;
	for (int i = 0; i < n / 2; i++)
		if (p->w[i] != p->w[n - 1 - i] || p->w[n + i] != p->w[2 * n - 1 - i])
			return false;
	return 2 * 255 * abs_sum(p->w, n) <= INT32_BOUND;
}

// A separable kernel through convolve_sep_strip_cN in the shape st.
static int run_strip(const struct convolve_params *p, const struct stage_cl *c,
                     struct ocl_buf *wbuf, const char *kernel, const struct strip *st)
{
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch;
	const size_t gx = up_div((size_t)W * ch, (size_t)st->tws) * st->lx;
	const size_t gy = up_div((size_t)H, (size_t)st->sh) * st->ly;
	return ocl_run(c->ocl, "convolve", ch, kernel, gx, gy, st->lx, st->ly,
	               (struct ocl_arg[]){
	                   OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(W), OCL_INT(H), OCL_BUF(wbuf),
	                   OCL_INT(p->r), OCL_INT(p->border), OCL_LONG(p->off), OCL_LONG(p->D),
	                   OCL_LONG(p->dev_m), OCL_INT(p->dev_s), OCL_INT(st->tws),
	                   OCL_INT(st->sh), OCL_INT(st->cr), OCL_INT(sep_sym(p)),
	                   OCL_LOCAL(st->tile), OCL_LOCAL(st->mid),
	                   OCL_LOCAL(8 * (size_t)p->n), OCL_END});
}

// Picks the 2-D kernel's output tile, TW x TH pixels, the first that fits the local
// memory, or returns false (use the global path).
static bool tile_pick(const struct convolve_params *p, const struct ocl_limits *lim, int ch,
                      int *tw, int *th)
{
	static const int d2[][2] = {{64, 16}, {32, 16}, {32, 8}, {16, 8}, {16, 4}, {8, 4}};
	const uint64_t budget = local_budget(lim);
	for (size_t i = 0; i < sizeof d2 / sizeof d2[0]; i++)
		if (tile_bytes_2d(p, d2[i][0], d2[i][1], ch) <= budget) {
			*tw = d2[i][0];
			*th = d2[i][1];
			return true;
		}
	return false;
}

// A kernel that is not separable through convolve_2d_tile_cN, tw x th pixels a tile.
static int run_tile(const struct convolve_params *p, const struct stage_cl *c, struct ocl_buf *wbuf,
                    const char *kernel, int tw, int th, const struct ocl_limits *lim, size_t wg_max)
{
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch, r = p->r, n = p->n;
	const size_t rh = (size_t)th + 2 * r, rw = (size_t)tw + 2 * r;
	size_t lx, ly;
	ocl_local_shrink(lim, wg_max, LOCAL_W, LOCAL_H, &lx, &ly);
	return ocl_run(c->ocl, "convolve", ch, kernel, up_div((size_t)W, (size_t)tw) * lx,
	               up_div((size_t)H, (size_t)th) * ly, lx, ly,
	               (struct ocl_arg[]){
	                   OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(W), OCL_INT(H), OCL_BUF(wbuf),
	                   OCL_INT(r), OCL_INT(p->border), OCL_LONG(p->off), OCL_LONG(p->D),
	                   OCL_LONG(p->dev_m), OCL_INT(p->dev_s), OCL_INT(tw), OCL_INT(th),
	                   OCL_LOCAL(rh * rw * ch), OCL_LOCAL(4 * (size_t)n * n), OCL_END});
}

// The separable kernel without local memory: a horizontal pass into an int32 scratch buffer
// and a vertical pass from it, strip by strip of rows so that the scratch stays bounded.
static int run_two_pass(const struct convolve_params *p, const struct stage_cl *c,
                        struct ocl_buf *wbuf, const struct ocl_limits *lim)
{
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch, r = p->r;
	const uint64_t row_bytes = (uint64_t)W * ch * 4;
	uint64_t cap = lim->max_alloc_bytes < SCRATCH_CAP ? lim->max_alloc_bytes : SCRATCH_CAP;
	const long strip = strip_hook();
	struct ocl_buf *scratch = NULL;
	size_t wh, wv;
	char kh[32], kv[32];
	long rows_max = (long)(cap / row_bytes) - 2 * r;
	size_t lx, ly;
	int rc = -1;

	if (strip && strip < rows_max)
		rows_max = strip;
	if (rows_max < 1)
		return err_set("a %s kernel on an image %d pixels wide needs %llu bytes of scratch "
		               "memory; the device allows %llu",
		               p->what, W, (unsigned long long)((2 * r + 1) * row_bytes),
		               (unsigned long long)cap);
	if (rows_max > H)
		rows_max = H;
	snprintf(kh, sizeof kh, "convolve_sep_h_c%d", ch);
	snprintf(kv, sizeof kv, "convolve_sep_v_c%d", ch);
	if (ocl_kernel_wg_max(c->ocl, "convolve", ch, kh, &wh) < 0 ||
	    ocl_kernel_wg_max(c->ocl, "convolve", ch, kv, &wv) < 0)
		return -1;
	ocl_local_shrink(lim, wh < wv ? wh : wv, LOCAL_W, LOCAL_H, &lx, &ly);
	scratch = ocl_buf_new(c->ocl, (size_t)((rows_max + 2 * r) * row_bytes));
	if (!scratch)
		return -1;
	for (int y0 = 0; y0 < H; y0 += (int)rows_max) {
		int rows = H - y0 < rows_max ? H - y0 : (int)rows_max;
		if (ocl_run(c->ocl, "convolve", ch, kh, (size_t)W * ch, (size_t)rows + 2 * r, lx,
		            ly,
		            (struct ocl_arg[]){OCL_BUF(c->in), OCL_BUF(scratch), OCL_INT(W),
		                               OCL_INT(H), OCL_BUF(wbuf), OCL_INT(r),
		                               OCL_INT(p->border), OCL_INT(y0 - r),
		                               OCL_INT(rows + 2 * r), OCL_END}) < 0 ||
		    ocl_run(c->ocl, "convolve", ch, kv, (size_t)W * ch, (size_t)rows, lx, ly,
		            (struct ocl_arg[]){OCL_BUF(c->in), OCL_BUF(scratch), OCL_BUF(c->out),
		                               OCL_INT(W), OCL_INT(H), OCL_BUF(wbuf), OCL_INT(r),
		                               OCL_INT(y0), OCL_INT(rows), OCL_LONG(p->off),
		                               OCL_LONG(p->D), OCL_LONG(p->dev_m),
		                               OCL_INT(p->dev_s), OCL_END}) < 0)
			goto done;
	}
	rc = 0;
done:
	ocl_buf_free(scratch); // released by OpenCL once the queued kernels are done with it
	return rc;
}

// Whether convolve_3x3_cN (or its _unaligned form) takes the image: a 3 x 3 kernel, no
// CLIMG_CONVOLVE_PATH test hook, and the kernel's 32-bit arithmetic exact: the 2-D sum
// with the offset, 255 sum|k| + |off| <= 2^31 - 1 (for a separable kernel k = ky kx, so
// sum|k| = sum|ky| sum|kx|), and a D that finish32 divides by (s32 >= 0).
static bool words_3x3(const struct convolve_params *p)
{
	const char *force = getenv("CLIMG_CONVOLVE_PATH");
	int64_t sum;
	if (p->n != 3 || (force && *force) || p->s32 < 0)
		return false;
	// no overflow: bounds_ok holds, so 255 sum|kx| and 255 sum|ky| are below 2^31, and
	// |off| <= |B| + D / 2 is below 2^62
	sum = p->separable ? abs_sum(p->w, 3) * abs_sum(p->w + 3, 3) : abs_sum(p->w, 9);
	return 255 * sum <= INT32_BOUND - llabs(p->off);
}

// The interior of a 3 x 3 kernel's items (NS samples of NR rows each, at samples g = NS i
// and rows y0 = NR j): the samples gA .. gB - 1 and rows yA .. yB - 1 of the items whose
// input rows (y0 - 1 .. y0 + NR) and words (samples g - 4 .. g + NS + 3, and with unaligned
// rows one word more, which d3_load may read) lie inside the image; all four 0 where there
// is none. The kernels' edge items compute the rest, or, for the _unaligned kernels and the
// CPU family's, convolve_3x3_edge_cN, in units of 8 samples and 2 rows: the number of those
// units, for its range, in *units.
struct d3_rect {
	int ga, gb, ya, yb;
};

static struct d3_rect d3_interior(int64_t ns, int h, int nsamples, int nrows, bool unaligned,
                                  size_t *units)
{
	const int64_t right = nsamples + (unaligned ? 8 : 4); // g + right <= ns
	struct d3_rect r = {0, 0, 0, 0};
	const int64_t ux = (ns + 7) / 8;
	if (ns >= nsamples + right && h > 2 * nrows) {
		// g >= 4: from the second item on; y0 >= 1 and y0 + nrows < h
		r.ga = nsamples;
		r.gb = (int)(((ns - right) / nsamples + 1) * nsamples);
		r.ya = nrows;
		r.yb = (int)(((h - nrows - 1) / nrows + 1) * nrows);
	}
	*units = (size_t)((r.ya / 2 + (h - r.yb + 1) / 2) * ux +
	                  (r.yb - r.ya) / 2 * (r.ga / 8 + ux - r.gb / 8));
	return r;
}

// Any 3 x 3 kernel through convolve_3x3_cN (kernels/convolve.cl): D3_SAMPLES samples of
// D3_ROWS(ch) rows a work-item; with the GPU kernels (ocl_cpu_kernels false), where its
// integers exist (packed_setup), through convolve_3x3_packed_cN, or convolve_3x3_packed_norm_cN
// where pn is set: D3P_SAMPLES(ch) samples of D3P_ROWS rows; those two as their _sep forms
// where the kernel is separable, which also take kx and ky. Each as its _unaligned form
// where rows do not start on a word (W * ch not a multiple of 4). Those and the CPU family
// leave the edge items to convolve_3x3_edge_cN (D3_OWN_EDGES in kernels/convolve.cl says
// why). (On PoCL, 2 cores, the packed kernel took up to 1.7 times as long for box and
// sobel-x 3x3 on 8K RGB: docs/BENCHMARKS.md, fifteenth session.)
static int run_3x3(const struct convolve_params *p, const struct stage_cl *c,
                   const struct ocl_limits *lim)
{
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch;
	const bool packed = p->ps >= 0 && !ocl_cpu_kernels(c->ocl), norm = packed && p->pn;
	const bool sep = packed && p->separable, unaligned = ((int64_t)W * ch) % 4 != 0;
	const bool own_edges = !unaligned && !ocl_cpu_kernels(c->ocl); // D3_OWN_EDGES
	const int nsamples = packed ? D3P_SAMPLES(ch) : D3_SAMPLES;
	const int nrows = packed ? D3P_ROWS : D3_ROWS(ch);
	size_t units;
	const struct d3_rect r = d3_interior((int64_t)W * ch, H, nsamples, nrows, unaligned, &units);
	int32_t k[9];
	char kernel[48];
	size_t wg, lx, ly;
	int n = 0;
	// the weights go as arguments: no buffer to create and free for each run. At most: the
	// buffers and size (4), the 9 weights, border, off, m32, s32 (4), the packed kernel's 3,
	// kx and ky (6), the interior (4), the end
	struct ocl_arg args[4 + 9 + 4 + 3 + 6 + 4 + 1];
	weights_3x3(p, k);
	snprintf(kernel, sizeof kernel, "convolve_3x3%s%s%s_c%d",
	         norm ? "_packed_norm" : packed ? "_packed" : "", sep ? "_sep" : "",
	         unaligned ? "_unaligned" : "", ch);
	if (ocl_kernel_wg_max(c->ocl, "convolve", ch, kernel, &wg) < 0)
		return -1;
	// at most D3_LOCAL_W x D3_LOCAL_H items: the _unaligned kernels' local memory (D3_LOCAL)
	ocl_local_shrink(lim, wg, D3_LOCAL_W, D3_LOCAL_H, &lx, &ly);
	args[n++] = OCL_BUF(c->in);
	args[n++] = OCL_BUF(c->out);
	args[n++] = OCL_INT(W);
	args[n++] = OCL_INT(H);
	for (int i = 0; i < 9; i++)
		args[n++] = OCL_INT(k[i]);
	args[n++] = OCL_INT(p->border);
	args[n++] = OCL_INT(p->off);
	args[n++] = OCL_UINT(p->m32);
	args[n++] = OCL_INT(p->s32);
	if (norm) { // and the packed kernels' own: norm's one, the other's three
		args[n++] = OCL_UINT(p->pn);
	} else if (packed) {
		args[n++] = OCL_UINT(p->pz);
		args[n++] = OCL_UINT(p->pm);
		args[n++] = OCL_INT(p->ps);
	}
	for (int i = 0; sep && i < 6; i++) // kx, then ky
		args[n++] = OCL_INT(p->w[i]);
	args[n++] = OCL_INT(r.ga);
	args[n++] = OCL_INT(r.gb);
	args[n++] = OCL_INT(r.ya);
	args[n++] = OCL_INT(r.yb);
	args[n] = OCL_END;
	// (without own edge items and without an interior, nothing for this kernel to do)
	if ((own_edges || r.gb > r.ga) &&
	    ocl_run(c->ocl, "convolve", ch, kernel, up_div((size_t)W * ch, nsamples),
	            up_div((size_t)H, nrows), lx, ly, args) < 0)
		return -1;
	if (own_edges)
		return 0;
	// the edge items: the same buffers, size, 9 weights, border, off, m32 and s32, then the
	// interior
	n = 4 + 9 + 4;
	args[n++] = OCL_INT(r.ga);
	args[n++] = OCL_INT(r.gb);
	args[n++] = OCL_INT(r.ya);
	args[n++] = OCL_INT(r.yb);
	args[n] = OCL_END;
	snprintf(kernel, sizeof kernel, "convolve_3x3_edge_c%d", ch);
	if (ocl_kernel_wg_max(c->ocl, "convolve", ch, kernel, &wg) < 0)
		return -1;
	ocl_local_shrink(lim, wg, D3_EDGE_LOCAL, 1, &lx, &ly);
	return ocl_run(c->ocl, "convolve", ch, kernel, units, 1, lx, ly, args);
}

// Whether convolve_sep_cpu_cN takes the image: a separable kernel of radius at most
// SEP_CPU_MAX_R with the stages' CPU kernels (ocl_cpu_kernels) on a CPU device, the only
// programs that have it (src/ocl.c); the test hook CLIMG_CONVOLVE_PATH keeps it out unless
// it is "cpu".
static bool sep_cpu(const struct convolve_params *p, const struct stage_cl *c)
{
	const char *force = getenv("CLIMG_CONVOLVE_PATH");
	if (!p->separable || p->r > SEP_CPU_MAX_R || !ocl_cpu_device(c->ocl) ||
	    !ocl_cpu_kernels(c->ocl))
		return false;
	return !force || !*force || !strcmp(force, "cpu");
}

// A separable kernel through convolve_sep_cpu_cN (kernels/convolve.cl): one work-item, in a
// work-group of its own, per tile of SEP_CPU_TW samples x SEP_CPU_TH rows.
static int run_sep_cpu(const struct convolve_params *p, const struct stage_cl *c,
                       struct ocl_buf *wbuf)
{
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch;
	char kernel[32];
	snprintf(kernel, sizeof kernel, "convolve_sep_cpu_c%d", ch);
	return ocl_run(c->ocl, "convolve", ch, kernel, up_div((size_t)W * ch, SEP_CPU_TW),
	               up_div((size_t)H, SEP_CPU_TH), 1, 1,
	               (struct ocl_arg[]){OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(W), OCL_INT(H),
	                                  OCL_BUF(wbuf), OCL_INT(p->r), OCL_INT(p->border),
	                                  OCL_LONG(p->off), OCL_LONG(p->D), OCL_LONG(p->dev_m),
	                                  OCL_INT(p->dev_s), OCL_INT(sep_sym(p)), OCL_END});
}

static int convolve_run_cl(const void *params, const struct stage_cl *c)
{
	const struct convolve_params *p = params;
	const int W = c->gin.w, H = c->gin.h, ch = c->gin.ch;
	const size_t nw = p->separable ? 2 * (size_t)p->n : (size_t)p->n * p->n;
	struct ocl_buf *wbuf = NULL;
	const struct ocl_limits lim = ocl_get_limits(c->ocl);
	const char *force = getenv("CLIMG_CONVOLVE_PATH");
	const bool local_off = force && !strcmp(force, "global"); // the test hook
	struct strip st;
	size_t wg;
	char kernel[32];
	int tw, th, rc = -1;

	if (words_3x3(p))
		return run_3x3(p, c, &lim);
	wbuf = ocl_buf_const(c->ocl, p->w, nw * sizeof *p->w);
	if (!wbuf)
		return -1;
	if (sep_cpu(p, c)) {
		rc = run_sep_cpu(p, c, wbuf);
		goto done;
	}
	// the strip or tile kernel's work-group limit, which strip_pick and tile_pick need (the
	// CPU kernel above does not: it runs work-groups of one)
	snprintf(kernel, sizeof kernel, "convolve_%s_c%d", p->separable ? "sep_strip" : "2d_tile",
	         ch);
	if (ocl_kernel_wg_max(c->ocl, "convolve", ch, kernel, &wg) < 0)
		goto done;
	if (p->separable && !local_off && strip_pick(p, &lim, wg, ch, &st)) {
		rc = run_strip(p, c, wbuf, kernel, &st);
	} else if (!p->separable && !local_off && tile_pick(p, &lim, ch, &tw, &th)) {
		rc = run_tile(p, c, wbuf, kernel, tw, th, &lim, wg);
	} else if (p->separable) {
		rc = run_two_pass(p, c, wbuf, &lim);
	} else {
		size_t lx, ly;
		snprintf(kernel, sizeof kernel, "convolve_2d_c%d", ch);
		if (ocl_kernel_wg_max(c->ocl, "convolve", ch, kernel, &wg) < 0)
			goto done;
		ocl_local_shrink(&lim, wg, LOCAL_W, LOCAL_H, &lx, &ly);
		rc = ocl_run(c->ocl, "convolve", ch, kernel, (size_t)W * ch, (size_t)H, lx, ly,
		             (struct ocl_arg[]){
		                 OCL_BUF(c->in), OCL_BUF(c->out), OCL_INT(W), OCL_INT(H),
		                 OCL_BUF(wbuf), OCL_INT(p->r), OCL_INT(p->border), OCL_LONG(p->off),
		                 OCL_LONG(p->D), OCL_LONG(p->dev_m), OCL_INT(p->dev_s), OCL_END});
	}
done:
	ocl_buf_free(wbuf); // released by OpenCL once the queued kernels are done with it
	return rc;
}

const struct stage_ops stage_convolve = {
    .name = "convolve",
    .usage = "convolve:KERNEL[:OPTION...]",
    .summary = "correlate with a named or custom kernel (exact fixed point), alpha kept",
    .params_size = sizeof(struct convolve_params),
    .parse = convolve_parse,
    .plan = convolve_plan,
    .run_cpu = convolve_run_cpu,
    .program = "convolve",
    .run_cl = convolve_run_cl,
    .free_params = convolve_free,
};
