// SPDX-License-Identifier: MIT
// A fast DEFLATE (RFC 1951) encoder for independent segments of one stream, so that the
// segments of an image can be compressed on all cores and joined (the pigz technique).
// Internal to src/io.
//
// A segment is compressed with the preceding bytes of the stream (up to 32 KiB) as history,
// so matches may reach back across the join. A segment that is not the last ends with an
// empty stored block (a "sync flush": the bits 000, padding to a byte, 00 00 ff ff), so
// the next segment's blocks follow it on a byte boundary; the last segment's last block
// has BFINAL set. The bytes depend only on the input and the parameters, never on which
// thread ran it or when.
#ifndef CLIMG_IO_DEFLATE_H
#define CLIMG_IO_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

// The history a segment may refer to: DEFLATE's window.
#define DFL_WINDOW 32768

struct dfl_params {
	int match;       // 0: Huffman coding only; 1: greedy LZ77 with one hash probe
	int insert_all;  // 1: every position inside a match enters the hash table
	int store;       // 1: no compression at all, stored blocks only
	size_t block_in; // input bytes per block (each block has its own Huffman codes)
};

// Per-thread encoder state (hash table, symbol buffer). NULL when out of memory.
struct dfl *dfl_new(void);

// NULL-safe.
void dfl_free(struct dfl *d);

// The largest output dfl_segment() can produce for len input bytes.
size_t dfl_bound(size_t len);

// Compresses in[hist .. hist + len) (1 <= len, hist + len < 2^31), with in[0 .. hist)
// the bytes just before it in the stream (hist <= DFL_WINDOW), into out, which holds
// dfl_bound(len) bytes. last: this segment ends the stream. Returns the number of bytes
// written, or 0 when out of memory.
size_t dfl_segment(struct dfl *d, const struct dfl_params *p, const uint8_t *in, size_t hist,
                   size_t len, int last, uint8_t *out);

#endif
