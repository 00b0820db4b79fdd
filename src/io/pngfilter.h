// SPDX-License-Identifier: MIT
// PNG row filters (PNG specification, section 9): the five filter types and the
// per-row choice. Internal to src/io.
//
// For byte i of a row with bpp bytes per pixel, x is the byte, a the byte bpp to the left
// (0 before the row start), b the byte above (0 on the first row), c the byte above a:
//   0 None  x          1 Sub  x - a          2 Up  x - b
//   3 Average  x - floor((a + b) / 2)
//   4 Paeth  x - P, P = a if |b - c| <= |a - c| and |b - c| <= |a + b - 2c|,
//                   else b if |a - c| <= |a + b - 2c|, else c
// all modulo 256. A residual's magnitude is its value read as a signed byte, made
// positive (0..128). The vector versions compute exactly what the _ref versions compute.
#ifndef CLIMG_IO_PNGFILTER_H
#define CLIMG_IO_PNGFILTER_H

#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>

enum { PNGF_NONE, PNGF_SUB, PNGF_UP, PNGF_AVG, PNGF_PAETH, PNGF_TYPES };

// Paeth's predictor P of x from a, b and c (above).
static inline int pngf_paeth(int a, int b, int c)
{
	int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// Writes the filter type t to out[0] and the residuals of the row cur (n bytes; prev is
// the row above, all zeros for the first row) to out[1 .. n].
void pngf_row(int t, const uint8_t *cur, const uint8_t *prev, uint8_t *out, size_t n, size_t bpp);
void pngf_row_ref(int t, const uint8_t *cur, const uint8_t *prev, uint8_t *out, size_t n,
                  size_t bpp);

// score[t] = the sum of the magnitudes of the residuals of filter type t.
void pngf_scores(const uint8_t *cur, const uint8_t *prev, size_t n, size_t bpp,
                 uint64_t score[PNGF_TYPES]);
void pngf_scores_ref(const uint8_t *cur, const uint8_t *prev, size_t n, size_t bpp,
                     uint64_t score[PNGF_TYPES]);

// The adaptive choice (libpng's rule): the type with the smallest score, the lowest
// type on a tie; the row is written to out as pngf_row() does. Returns the type.
int pngf_adaptive(const uint8_t *cur, const uint8_t *prev, uint8_t *out, size_t n, size_t bpp);

#endif
