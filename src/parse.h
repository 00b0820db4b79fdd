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

#endif
