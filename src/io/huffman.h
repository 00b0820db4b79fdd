// SPDX-License-Identifier: MIT
// Huffman codes for DEFLATE (RFC 1951): lengths limited to a maximum, canonical codes.
#ifndef CLIMG_IO_HUFFMAN_H
#define CLIMG_IO_HUFFMAN_H

#include <stdint.h>

#define HUFF_MAX_SYMBOLS 288

// Code lengths, at most maxlen (<= 15), for freq[0..n), n <= HUFF_MAX_SYMBOLS: 0 for unused
// symbols; at least two symbols get a length, so the code is complete (which every
// inflater accepts). Equal frequencies are ordered by symbol, so the lengths depend on
// freq alone.
void huff_lengths(const uint32_t *freq, unsigned n, unsigned maxlen, uint8_t *len);

// The canonical code of each symbol of len[0..n) (0 where its length is 0), bit-reversed
// for LSB-first output.
void huff_codes(const uint8_t *len, uint16_t *code, unsigned n);

#endif
