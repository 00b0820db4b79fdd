// SPDX-License-Identifier: MIT
// convolve's kernels given as numbers: kernel=W,W,... and kernel=@FILE (src/stages/convolve.c
// states the syntax), each number kept both as a double and, while every one is, exactly as
// written (struct dec: 0.1 is 1/10), for the contract's exact integers (convolve_weights.c).
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "../parse.h"
#include "convolve_impl.h"

#define MAX_FILE_BYTES (16 << 20)

bool convolve_dec_parse(const char *s, struct dec *d)
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
		if (s->d && !convolve_dec_parse(str[i], &s->d[i])) {
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

int convolve_custom_inline(struct spec *s, char *list)
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

int convolve_custom_file(struct spec *s, const char *path)
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
