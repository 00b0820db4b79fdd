// SPDX-License-Identifier: MIT
// convolve's integers: the weights k, the divisor D and the bias numerator B of the
// FIXED-POINT CONTRACT (src/stages/convolve.c), exact or scaled as it says, a separable
// kernel's two 1-D factors, the bounds that keep every accumulator from overflowing, and the
// divisions by D that the device kernels make instead of dividing.
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../err.h"
#include "convolve_impl.h"

#define GAUSS_BITS 20  // gauss: each 1-D kernel sums to 2^20
#define SCALED_BITS 24 // scaled 2-D kernels: S starts here

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

int64_t convolve_abs_sum(const int32_t *w, int n)
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
		return 255 * convolve_abs_sum(p->w, n * n) <= INT32_BOUND;
	sx = convolve_abs_sum(p->w, n);
	sy = convolve_abs_sum(p->w + n, n);
	if (255 * sx > INT32_BOUND || 255 * sy > INT32_BOUND)
		return false;
	if (!mul_ok(255 * sx, sy, &prod))
		return false;
	total = prod + llabs(p->B) + p->D; // each term below 2^62: no overflow
	return total <= INT64_BOUND;
}

void convolve_weights_3x3(const struct convolve_params *p, int32_t k[9])
{
	for (int dy = 0; dy < 3; dy++)
		for (int dx = 0; dx < 3; dx++)
			k[3 * dy + dx] = p->separable ? p->w[3 + dy] * p->w[dx] : p->w[3 * dy + dx];
}

// convolve_3x3_packed's integers (kernels/convolve_3x3_packed.clh), for a 3 x 3 kernel whose
// sums fit the 16-bit halves of a word, 255 sum|k| <= 65535: Z = 255 times the sum of the negative
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
	int64_t pos = 0, neg = 0, umax, top, sum;
	p->pz = p->pm = p->pn = 0;
	p->ps = -1;
	if (p->n != 3)
		return;
	// sum|k| first (a separable kernel's sum|kx| sum|ky|; bounds_ok holds, so no overflow):
	// the weights' 2-D products need not fit int32 until it is known to be small
	sum = p->separable ? convolve_abs_sum(p->w, 3) * convolve_abs_sum(p->w + 3, 3)
	                   : convolve_abs_sum(p->w, 9);
	if (255 * sum > 65535)
		return;
	convolve_weights_3x3(p, k);
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

void convolve_finish_setup(struct convolve_params *p)
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
	// finish32's (kernels/convolve_3x3.clh says why these are exact): a shift for D = 2^k (t is
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
int convolve_build_list(struct spec *s, struct convolve_params *p)
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
int convolve_build_box(struct spec *s, struct convolve_params *p)
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
int convolve_build_gauss(struct spec *s, struct convolve_params *p)
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
