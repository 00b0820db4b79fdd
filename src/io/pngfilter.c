// SPDX-License-Identifier: MIT
// PNG row filters: plain C (the _ref functions, the specification) and, where the
// compiler targets SSE2 (every x86-64), the same arithmetic 16 bytes at a time. Paeth's
// comparisons run in 16-bit lanes, where |a + b - 2c| <= 510 cannot overflow.
#include <stdlib.h>
#include <string.h>

#include "pngfilter.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define PNGF_SSE2 1
#endif


static inline unsigned mag(unsigned r)
{
	r &= 255;
	return r < 128 ? r : 256 - r;
}

// Residual of type t for byte x with neighbours a, b, c.
static inline uint8_t residual(int t, int x, int a, int b, int c)
{
	switch (t) {
	case PNGF_NONE: return (uint8_t)x;
	case PNGF_SUB: return (uint8_t)(x - a);
	case PNGF_UP: return (uint8_t)(x - b);
	case PNGF_AVG: return (uint8_t)(x - ((a + b) >> 1));
	default: return (uint8_t)(x - pngf_paeth(a, b, c));
	}
}

// Bytes [from, n) in plain C; a and c are 0 for i < bpp.
static void row_c(int t, const uint8_t *cur, const uint8_t *prev, uint8_t *out, size_t from,
                  size_t n, size_t bpp)
{
	for (size_t i = from; i < n; i++) {
		int a = i >= bpp ? cur[i - bpp] : 0, c = i >= bpp ? prev[i - bpp] : 0;

		out[i] = residual(t, cur[i], a, prev[i], c);
	}
}

static void scores_c(const uint8_t *cur, const uint8_t *prev, size_t from, size_t n, size_t bpp,
                     uint64_t s[PNGF_TYPES])
{
	for (size_t i = from; i < n; i++) {
		int x = cur[i], b = prev[i];
		int a = i >= bpp ? cur[i - bpp] : 0, c = i >= bpp ? prev[i - bpp] : 0;

		for (int t = 0; t < PNGF_TYPES; t++)
			s[t] += mag(residual(t, x, a, b, c));
	}
}

void pngf_row_ref(int t, const uint8_t *cur, const uint8_t *prev, uint8_t *out, size_t n,
                  size_t bpp)
{
	out[0] = (uint8_t)t;
	row_c(t, cur, prev, out + 1, 0, n, bpp);
}

void pngf_scores_ref(const uint8_t *cur, const uint8_t *prev, size_t n, size_t bpp,
                     uint64_t score[PNGF_TYPES])
{
	memset(score, 0, sizeof(uint64_t) * PNGF_TYPES);
	scores_c(cur, prev, 0, n, bpp, score);
}

#ifdef PNGF_SSE2
static inline __m128i load(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

static inline __m128i abs16(__m128i x)
{
	return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x));
}

// m ? y : x, lane by lane (m all ones or all zeros).
static inline __m128i pick(__m128i m, __m128i x, __m128i y)
{
	return _mm_or_si128(_mm_andnot_si128(m, x), _mm_and_si128(m, y));
}

static inline __m128i paeth16(__m128i a, __m128i b, __m128i c)
{
	__m128i bc = _mm_sub_epi16(b, c), ac = _mm_sub_epi16(a, c);
	__m128i pa = abs16(bc), pb = abs16(ac), pc = abs16(_mm_add_epi16(bc, ac));
	__m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
	__m128i not_b = _mm_cmpgt_epi16(pb, pc);

	return pick(not_a, a, pick(not_b, b, c));
}

static inline __m128i paeth8(__m128i a, __m128i b, __m128i c)
{
	__m128i z = _mm_setzero_si128();
	__m128i lo =
	    paeth16(_mm_unpacklo_epi8(a, z), _mm_unpacklo_epi8(b, z), _mm_unpacklo_epi8(c, z));
	__m128i hi =
	    paeth16(_mm_unpackhi_epi8(a, z), _mm_unpackhi_epi8(b, z), _mm_unpackhi_epi8(c, z));

	return _mm_packus_epi16(lo, hi);
}

// floor((a + b) / 2): _mm_avg_epu8 rounds up.
static inline __m128i avg_floor(__m128i a, __m128i b)
{
	return _mm_sub_epi8(_mm_avg_epu8(a, b),
	                    _mm_and_si128(_mm_xor_si128(a, b), _mm_set1_epi8(1)));
}

static inline __m128i residual16(int t, __m128i x, __m128i a, __m128i b, __m128i c)
{
	switch (t) {
	case PNGF_NONE: return x;
	case PNGF_SUB: return _mm_sub_epi8(x, a);
	case PNGF_UP: return _mm_sub_epi8(x, b);
	case PNGF_AVG: return _mm_sub_epi8(x, avg_floor(a, b));
	default: return _mm_sub_epi8(x, paeth8(a, b, c));
	}
}

// Sum of magnitudes of 16 residuals, added to acc (two 64-bit lanes).
static inline __m128i add_mag(__m128i acc, __m128i r)
{
	__m128i z = _mm_setzero_si128();

	return _mm_add_epi64(acc, _mm_sad_epu8(_mm_min_epu8(r, _mm_sub_epi8(z, r)), z));
}

static uint64_t lanes(__m128i v)
{
	uint64_t u[2];

	_mm_storeu_si128((__m128i *)(void *)u, v);
	return u[0] + u[1];
}
#endif

void pngf_row(int t, const uint8_t *cur, const uint8_t *prev, uint8_t *out, size_t n, size_t bpp)
{
	size_t i = bpp < n ? bpp : n;

	out[0] = (uint8_t)t;
	out++;
	row_c(t, cur, prev, out, 0, i, bpp);
#ifdef PNGF_SSE2
	for (; i + 16 <= n; i += 16) {
		__m128i r = residual16(t, load(cur + i), load(cur + i - bpp), load(prev + i),
		                       load(prev + i - bpp));

		_mm_storeu_si128((__m128i *)(void *)(out + i), r);
	}
#endif
	row_c(t, cur, prev, out, i, n, bpp);
}

void pngf_scores(const uint8_t *cur, const uint8_t *prev, size_t n, size_t bpp,
                 uint64_t score[PNGF_TYPES])
{
	size_t i = bpp < n ? bpp : n;

	memset(score, 0, sizeof(uint64_t) * PNGF_TYPES);
	scores_c(cur, prev, 0, i, bpp, score);
#ifdef PNGF_SSE2
	{
		__m128i s0 = _mm_setzero_si128(), s1 = s0, s2 = s0, s3 = s0, s4 = s0;

		for (; i + 16 <= n; i += 16) {
			__m128i x = load(cur + i), a = load(cur + i - bpp);
			__m128i b = load(prev + i), c = load(prev + i - bpp);

			s0 = add_mag(s0, x);
			s1 = add_mag(s1, _mm_sub_epi8(x, a));
			s2 = add_mag(s2, _mm_sub_epi8(x, b));
			s3 = add_mag(s3, _mm_sub_epi8(x, avg_floor(a, b)));
			s4 = add_mag(s4, _mm_sub_epi8(x, paeth8(a, b, c)));
		}
		score[0] += lanes(s0);
		score[1] += lanes(s1);
		score[2] += lanes(s2);
		score[3] += lanes(s3);
		score[4] += lanes(s4);
	}
#endif
	scores_c(cur, prev, i, n, bpp, score);
}

int pngf_adaptive(const uint8_t *cur, const uint8_t *prev, uint8_t *out, size_t n, size_t bpp)
{
	uint64_t s[PNGF_TYPES];
	int t, best = 0;

	pngf_scores(cur, prev, n, bpp, s);
	for (t = 1; t < PNGF_TYPES; t++)
		if (s[t] < s[best])
			best = t;
	pngf_row(best, cur, prev, out, n, bpp);
	return best;
}
