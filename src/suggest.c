// SPDX-License-Identifier: MIT
#include "suggest.h"

#include <stdio.h>
#include <string.h>

#include "err.h"

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static int min2(int a, int b)
{
	return a < b ? a : b;
}

int suggest_distance(const char *a, const char *b)
{
	// d[i][j]: the distance of a's first i characters and b's first j
	int d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return SUGGEST_MAX_LEN + 1;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			int cost = lower(a[i - 1]) != lower(b[j - 1]);
			int v = min2(min2(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]))
				v = min2(v, d[i - 2][j - 2] + 1);
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

void suggest_init(struct suggest *s, const char *word)
{
	*s = (struct suggest){ .word = word, .best = NULL, .dist = 0 };
}

// The largest distance a slip of a word of len characters is allowed.
static int allowed(size_t len)
{
	return len <= 4 ? 1 : len <= 8 ? 2 : 3;
}

// How many characters a and b share at their start, without regard to case.
static size_t common_prefix(const char *a, const char *b)
{
	size_t n = 0;
	while (a[n] && lower(a[n]) == lower(b[n]))
		n++;
	return n;
}

void suggest_try(struct suggest *s, const char *candidate)
{
	size_t lw = strlen(s->word), lc = strlen(candidate);
	int d = suggest_distance(s->word, candidate);
	if (d > allowed(lw) || (size_t)d >= lw || (size_t)d >= lc)
		return;
	// of equally near ones, the one that starts like the word (bt710: bt709, not bt601)
	if (!s->best || d < s->dist ||
	    (d == s->dist &&
	     common_prefix(s->word, candidate) > common_prefix(s->word, s->best))) {
		s->best = candidate;
		s->dist = d;
	}
}

const char *suggest_best(const struct suggest *s)
{
	return s->best;
}

const char *suggest(const char *word, const char *const *list)
{
	struct suggest s;
	suggest_init(&s, word);
	for (int i = 0; list[i]; i++)
		suggest_try(&s, list[i]);
	return suggest_best(&s);
}

int suggest_err(const char *near)
{
	char msg[1024];
	if (!near)
		return -1;
	snprintf(msg, sizeof msg, "%s", err_msg());
	return err_set("%s; did you mean %s?", msg, near);
}
