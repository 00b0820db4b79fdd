// SPDX-License-Identifier: MIT
// Length-limited Huffman codes for the DEFLATE encoder (huffman.h): code lengths by the
// Moffat-Katajainen in-place algorithm, limited by moving codes down the tree until the
// Kraft sum is exact, and the canonical codes of RFC 1951, 3.2.2. Integer arithmetic on
// the counts only, so the same lengths on every machine.
#include <stdlib.h>
#include <string.h>

#include "huffman.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void huff_lengths(const uint32_t *freq, unsigned n, unsigned maxlen, uint8_t *len)
{
	uint32_t key[HUFF_MAX_SYMBOLS], a[HUFF_MAX_SYMBOLS];
	unsigned count[33] = {0};
	unsigned m = 0, i, k, l;

	memset(len, 0, n);
	// Sort the used symbols by (frequency, symbol): frequencies stay below 2^22.
	for (i = 0; i < n; i++)
		if (freq[i])
			key[m++] = (freq[i] < (1u << 22) ? freq[i] : (1u << 22) - 1) << 9 | i;
	for (i = 0; m < 2; i++) // too few symbols: add unused ones with frequency 0
		if (!freq[i])
			key[m++] = i;
	qsort(key, m, sizeof(key[0]), cmp_u32);
	for (i = 0; i < m; i++)
		a[i] = key[i] >> 9;

	// Moffat and Katajainen, "In-place calculation of minimum-redundancy codes" (1995):
	// a[] ascending becomes the code lengths, longest first.
	{
		unsigned root = 0, leaf = 2, next, avbl, used, depth;
		int j;

		a[0] += a[1];
		for (next = 1; next < m - 1; next++) {
			if (leaf >= m || a[root] < a[leaf]) {
				a[next] = a[root];
				a[root++] = next;
			} else {
				a[next] = a[leaf++];
			}
			if (leaf >= m || (root < next && a[root] < a[leaf])) {
				a[next] += a[root];
				a[root++] = next;
			} else {
				a[next] += a[leaf++];
			}
		}
		a[m - 2] = 0;
		for (j = (int)m - 3; j >= 0; j--)
			a[j] = a[a[j]] + 1;
		avbl = 1;
		used = depth = 0;
		j = (int)m - 2;
		next = m - 1;
		while (avbl > 0) {
			while (j >= 0 && a[j] == depth) {
				used++;
				j--;
			}
			while (avbl > used) {
				a[next--] = depth;
				avbl--;
			}
			avbl = 2 * used;
			depth++;
			used = 0;
		}
	}

	// Limit to maxlen: lump longer codes into maxlen, then, while the Kraft sum is too
	// large, turn a leaf at some shorter depth into a node with two leaves one deeper and
	// drop a leaf at maxlen (the code count stays, the sum falls by one unit).
	for (i = 0; i < m; i++)
		count[a[i] < 32 ? a[i] : 32]++;
	{
		uint32_t total = 0;

		for (l = maxlen + 1; l <= 32; l++) {
			count[maxlen] += count[l];
			count[l] = 0;
		}
		for (l = 1; l <= maxlen; l++)
			total += count[l] << (maxlen - l);
		while (total > (1u << maxlen)) {
			count[maxlen]--;
			for (l = maxlen - 1; l > 0; l--)
				if (count[l]) {
					count[l]--;
					count[l + 1] += 2;
					break;
				}
			total--;
		}
	}
	// The rarest symbols (first in key[]) get the longest codes.
	k = 0;
	for (l = maxlen; l > 0; l--)
		for (i = 0; i < count[l]; i++, k++)
			len[key[k] & 511] = (uint8_t)l;
}

void huff_codes(const uint8_t *len, uint16_t *code, unsigned n)
{
	unsigned count[16] = {0}, next[16];
	unsigned i, l, c0 = 0;

	for (i = 0; i < n; i++)
		count[len[i]]++;
	count[0] = 0;
	for (l = 1; l < 16; l++) {
		c0 = (c0 + count[l - 1]) << 1;
		next[l] = c0;
	}
	for (i = 0; i < n; i++) {
		unsigned c, r = 0;

		l = len[i];
		if (!l) {
			code[i] = 0;
			continue;
		}
		c = next[l]++;
		for (unsigned k = 0; k < l; k++)
			r |= ((c >> k) & 1u) << (l - 1 - k);
		code[i] = (uint16_t)r;
	}
}
