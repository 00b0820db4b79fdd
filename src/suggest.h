// SPDX-License-Identifier: MIT
// "Did you mean ...?": the word of a list nearest to one that matched none of them (a stage,
// an option, a stage's keyword), offered only when it is near enough to be a slip of the
// keyboard rather than another word.
#ifndef CLIMG_SUGGEST_H
#define CLIMG_SUGGEST_H

// Words longer than this are never near anything (a 100 KB argument costs no time).
#define SUGGEST_MAX_LEN 64

// The edit distance of a and b: the fewest insertions, deletions, substitutions and swaps of
// two neighbouring characters (optimal string alignment) that turn one into the other,
// letters compared without regard to case. A word longer than SUGGEST_MAX_LEN is a
// distance of SUGGEST_MAX_LEN + 1 from everything.
int suggest_distance(const char *a, const char *b);

// A search for the candidate nearest to word: suggest_init, then suggest_try for each
// candidate, then suggest_best. Of equally near candidates, the one sharing the longest
// start with the word wins, then the first tried. A candidate is near
// enough when its distance d is at most 1 for a word of up to 4 characters, 2 up to 8,
// else 3, and d is less than the length of each of the two.
struct suggest {
	const char *word;
	const char *best; // the nearest so far, or NULL
	int dist;         // its distance
};

void suggest_init(struct suggest *s, const char *word);
void suggest_try(struct suggest *s, const char *candidate);

// The nearest candidate near enough, or NULL. Points to what was passed to suggest_try.
const char *suggest_best(const struct suggest *s);

// The same in one call over a NULL-terminated list.
const char *suggest(const char *word, const char *const *list);

// Adds "; did you mean NEAR?" to the recorded error message (err.h) when near is not
// NULL, and returns -1: `return suggest_err(suggest(word, names));` after err_set.
int suggest_err(const char *near);

#endif
