// SPDX-License-Identifier: MIT
// Strict, locale-independent number parsing for stage arguments and options. The whole
// string must be the number: no leading or trailing space, no hex, no "nan"/"inf".
#ifndef CLIMG_PARSE_H
#define CLIMG_PARSE_H

#include <stdbool.h>

// Decimal integer in [min, max]. Returns false when s is not such a number.
bool parse_long(const char *s, long min, long max, long *out);

// Decimal number: [+-]digits[.digits][(e|E)[+-]digits], or [+-].digits..., finite.
bool parse_double(const char *s, double *out);

// n bytes from 2n hex digits (either case), as in a colour's RRGGBB. Returns false when the
// first 2n characters are not all hex digits; what follows them is not looked at.
bool parse_hex_bytes(const char *s, int n, unsigned char *out);

#endif
