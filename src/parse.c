// SPDX-License-Identifier: MIT
#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

// Whether s is exactly [+-]digits or, when frac, [+-](digits[.digits]|.digits)[e[+-]digits].
// Checked by hand so strtod never sees hex, "nan", "inf" or white space.
static bool well_formed(const char *s, bool frac)
{
	int digits = 0;
	if (*s == '+' || *s == '-')
		s++;
	for (; is_digit(*s); s++)
		digits++;
	if (frac && *s == '.') {
		for (s++; is_digit(*s); s++)
			digits++;
	}
	if (digits == 0)
		return false;
	if (frac && (*s == 'e' || *s == 'E')) {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!is_digit(*s))
			return false;
		while (is_digit(*s))
			s++;
	}
	return *s == '\0';
}

bool parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;
	if (!well_formed(s, false))
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool parse_double(const char *s, double *out)
{
	char *end;
	double v;
	if (!well_formed(s, true))
		return false;
	errno = 0;
	v = strtod(s, &end); // climg never calls setlocale: the decimal point is '.'
	if (*end || !isfinite(v) || (errno == ERANGE && fabs(v) > 1.0))
		return false;
	*out = v;
	return true;
}

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

bool parse_hex_bytes(const char *s, int n, unsigned char *out)
{
	for (int i = 0; i < n; i++) {
		int hi = hex_digit(s[2 * i]), lo = hi < 0 ? -1 : hex_digit(s[2 * i + 1]);
		if (lo < 0)
			return false;
		out[i] = (unsigned char)(hi * 16 + lo);
	}
	return true;
}
