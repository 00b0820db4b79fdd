// SPDX-License-Identifier: MIT
// A fast DEFLATE encoder for segments of one stream (see deflate.h for the contract).
//
// Matching: greedy LZ77 with one probe of a hash table of 4-byte prefixes (a match is at
// least 4 bytes long and at most 258), or none at all (Huffman coding only). Blocks cover
// a fixed number of input bytes; each is written as whichever of a dynamic Huffman block,
// a fixed Huffman block or stored blocks is smallest, counted exactly in bits. The codes
// (huffman.c) are limited to 15 bits (7 for the code-length code) and complete, which
// every inflater accepts. Everything is integer arithmetic on the input bytes: the output is
// the same on every machine.
#include <stdlib.h>
#include <string.h>

#include "deflate.h"
#include "huffman.h"

#define HASH_BITS 15
#define MIN_MATCH 4
#define MAX_MATCH 258
#define MIN_BLOCK_IN 16384
#define STORED_MAX 65535

#define NLITLEN 288 // 286 used; 286 and 287 only in the fixed code's lengths
#define NDIST 30
#define NPRE 19

// A run of literals followed by one match (len 0: no match, the block's tail).
struct seq {
	uint32_t lits;
	uint16_t len;
	uint16_t dist;
};

struct huff {
	uint16_t code[NLITLEN]; // bit-reversed, ready to write LSB first
	uint8_t len[NLITLEN];
};

// A block's dynamic Huffman code and its exact size in bits.
struct plan {
	struct huff lit, dst, pre;
	uint32_t rle[NLITLEN + NDIST]; // code-length-code symbols, extra bits above bit 5
	unsigned nlit, ndist, npre, nrle;
	uint64_t extra; // extra bits of lengths and distances (any block type)
	uint64_t bits;  // the whole dynamic block, header included
};

struct dfl {
	uint32_t *table; // 1 << HASH_BITS positions (offsets into the segment's input)
	struct seq *seq;
	size_t seq_cap;
	uint32_t lfreq[NLITLEN], dfreq[NDIST]; // of the block being written
	uint32_t hist[NLITLEN];                // the block's bytes, for literals only
	uint32_t dfreq_none[NDIST];            // all zero
	struct plan plan[2];
	struct huff fixed_lit, fixed_dst;
};

// ---- bit output ----------------------------------------------------------------------

struct bits {
	uint64_t buf; // pending bits, LSB first
	unsigned n;   // how many
	uint8_t *p;
};

static inline void put32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void put64le(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 8);
#else
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
#endif
}

// Appends the n low bits of v (v has no higher bits). Between two flushes at most 56 bits
// may be added.
static inline void bits_add(struct bits *b, uint64_t v, unsigned n)
{
	b->buf |= v << b->n;
	b->n += n;
}

// Moves the whole bytes out (storing 8 bytes: the output has slack for that), leaving at
// most 7 bits pending.
static inline void bits_flush(struct bits *b)
{
	put64le(b->p, b->buf);
	b->p += b->n >> 3;
	b->buf >>= b->n & ~7u;
	b->n &= 7;
}

static inline void bits_put(struct bits *b, uint64_t v, unsigned n)
{
	bits_add(b, v, n);
	bits_flush(b);
}

// Writes the pending bits, padding with zeros to a byte boundary.
static void bits_align(struct bits *b)
{
	bits_flush(b);
	if (b->n)
		*b->p++ = (uint8_t)b->buf;
	b->buf = 0;
	b->n = 0;
}

// ---- symbols -------------------------------------------------------------------------

static inline unsigned ilog2(uint32_t v)
{
	return 31u - (unsigned)__builtin_clz(v);
}

// Length 3..258 to its symbol 257..285, extra bit count and extra value.
static inline unsigned len_sym(unsigned len, unsigned *nextra, unsigned *extra)
{
	unsigned l = len - 3, nb;

	if (l < 8) {
		*nextra = 0;
		*extra = 0;
		return 257 + l;
	}
	if (l == 255) {
		*nextra = 0;
		*extra = 0;
		return 285;
	}
	nb = ilog2(l);
	*nextra = nb - 2;
	*extra = l & ((1u << (nb - 2)) - 1);
	return 257 + 4 * (nb - 1) + ((l >> (nb - 2)) & 3);
}

// Distance 1..32768 to its symbol 0..29, extra bit count and extra value.
static inline unsigned dist_sym(unsigned dist, unsigned *nextra, unsigned *extra)
{
	unsigned d = dist - 1, nb;

	if (d < 4) {
		*nextra = 0;
		*extra = 0;
		return d;
	}
	nb = ilog2(d);
	*nextra = nb - 1;
	*extra = d & ((1u << (nb - 1)) - 1);
	return 2 * nb + ((d >> (nb - 1)) & 1);
}

// ---- state ---------------------------------------------------------------------------

struct dfl *dfl_new(void)
{
	struct dfl *d = calloc(1, sizeof(*d));
	unsigned i;

	if (!d)
		return NULL;
	d->table = malloc(sizeof(*d->table) << HASH_BITS);
	if (!d->table) {
		free(d);
		return NULL;
	}
	// RFC 1951 3.2.6: the fixed code.
	for (i = 0; i < NLITLEN; i++)
		d->fixed_lit.len[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
	huff_codes(d->fixed_lit.len, d->fixed_lit.code, NLITLEN);
	for (i = 0; i < NDIST; i++)
		d->fixed_dst.len[i] = 5;
	huff_codes(d->fixed_dst.len, d->fixed_dst.code, NDIST);
	return d;
}

void dfl_free(struct dfl *d)
{
	if (!d)
		return;
	free(d->table);
	free(d->seq);
	free(d);
}

size_t dfl_bound(size_t len)
{
	// A block is never larger than its stored form, estimated at 42 bits per piece of at
	// most 65535 bytes; then the sync flush and slack for 32-bit stores.
	return len + 6 * (len / MIN_BLOCK_IN + len / STORED_MAX + 3) + 16;
}

// ---- blocks --------------------------------------------------------------------------

static const uint8_t pre_order[NPRE] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                        11, 4,  12, 3, 13, 2, 14, 1, 15};

// The code-length sequence of a dynamic block as code-length-code symbols (low 5 bits)
// with their extra bits (above), and how many.
static unsigned rle_lengths(const uint8_t *l, unsigned n, uint32_t *out)
{
	unsigned i = 0, k = 0;

	while (i < n) {
		unsigned v = l[i], run = 1;

		while (i + run < n && l[i + run] == v)
			run++;
		i += run;
		if (v == 0) {
			while (run >= 11) {
				unsigned r = run < 138 ? run : 138;

				out[k++] = 18 | (r - 11) << 5;
				run -= r;
			}
			if (run >= 3) {
				out[k++] = 17 | (run - 3) << 5;
				run = 0;
			}
		} else {
			out[k++] = v;
			run--;
			while (run >= 3) {
				unsigned r = run < 6 ? run : 6;

				out[k++] = 16 | (r - 3) << 5;
				run -= r;
			}
		}
		while (run-- > 0)
			out[k++] = v;
	}
	return k;
}

static const uint8_t pre_extra[NPRE] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7};

// Bits of the symbols coded with lengths len (extra bits not included).
static uint64_t cost(const uint32_t *freq, const uint8_t *len, unsigned n)
{
	uint64_t c = 0;

	for (unsigned i = 0; i < n; i++)
		c += (uint64_t)freq[i] * len[i];
	return c;
}

// Codes are at most 15 bits, a length with its extra bits 20 and a distance 28: three
// literals, or one match, fit between two flushes.
static void write_symbols(struct bits *b, const struct seq *s, size_t nseq, const uint8_t *lit,
                          const struct huff *hl, const struct huff *hd)
{
	for (size_t i = 0; i < nseq; i++) {
		uint32_t k = s[i].lits;

		for (; k >= 3; k -= 3, lit += 3) {
			bits_add(b, hl->code[lit[0]], hl->len[lit[0]]);
			bits_add(b, hl->code[lit[1]], hl->len[lit[1]]);
			bits_add(b, hl->code[lit[2]], hl->len[lit[2]]);
			bits_flush(b);
		}
		for (; k > 0; k--, lit++)
			bits_add(b, hl->code[*lit], hl->len[*lit]);
		bits_flush(b);
		if (s[i].len) {
			unsigned ne, ev, sym = len_sym(s[i].len, &ne, &ev);

			bits_add(b, hl->code[sym] | (uint64_t)ev << hl->len[sym],
			         hl->len[sym] + ne);
			sym = dist_sym(s[i].dist, &ne, &ev);
			bits_add(b, hd->code[sym] | (uint64_t)ev << hd->len[sym],
			         hd->len[sym] + ne);
			bits_flush(b);
			lit += s[i].len;
		}
	}
	bits_put(b, hl->code[256], hl->len[256]);
}

// Plans a dynamic block for the frequencies (lfreq[256], the end of block, is set here).
static void plan_dynamic(struct plan *pl, uint32_t *lfreq, const uint32_t *dfreq)
{
	uint32_t pfreq[NPRE] = {0};
	uint8_t lens[NLITLEN + NDIST];
	unsigned i;

	lfreq[256] = 1;
	huff_lengths(lfreq, 286, 15, pl->lit.len);
	huff_lengths(dfreq, NDIST, 15, pl->dst.len);
	for (pl->nlit = 286; pl->nlit > 257 && !pl->lit.len[pl->nlit - 1]; pl->nlit--)
		;
	for (pl->ndist = NDIST; pl->ndist > 1 && !pl->dst.len[pl->ndist - 1]; pl->ndist--)
		;
	memcpy(lens, pl->lit.len, pl->nlit);
	memcpy(lens + pl->nlit, pl->dst.len, pl->ndist);
	pl->nrle = rle_lengths(lens, pl->nlit + pl->ndist, pl->rle);
	for (i = 0; i < pl->nrle; i++)
		pfreq[pl->rle[i] & 31]++;
	huff_lengths(pfreq, NPRE, 7, pl->pre.len);
	for (pl->npre = NPRE; pl->npre > 4 && !pl->pre.len[pre_order[pl->npre - 1]]; pl->npre--)
		;
	// Length symbols 265..284 carry (sym - 261) / 4 extra bits, distance symbols
	// 4..29 carry sym / 2 - 1.
	pl->extra = 0;
	for (i = 265; i < 285; i++)
		pl->extra += (uint64_t)lfreq[i] * ((i - 261) / 4);
	for (i = 4; i < NDIST; i++)
		pl->extra += (uint64_t)dfreq[i] * (i / 2 - 1);
	pl->bits = 3 + 14 + 3 * (uint64_t)pl->npre + pl->extra + cost(lfreq, pl->lit.len, 286) +
	           cost(dfreq, pl->dst.len, NDIST);
	for (i = 0; i < NPRE; i++)
		pl->bits += (uint64_t)pfreq[i] * (pl->pre.len[i] + pre_extra[i]);
}

static void write_stored(struct bits *b, const uint8_t *in, size_t n, int final)
{
	size_t off = 0;

	while (off < n) {
		size_t k = n - off < STORED_MAX ? n - off : STORED_MAX;

		bits_put(b, final && off + k == n, 3);
		bits_align(b);
		put32le(b->p, (uint32_t)k | (uint32_t)(~k & 0xffff) << 16);
		memcpy(b->p + 4, in + off, k);
		b->p += 4 + k;
		off += k;
	}
}

// Bits of in[0 .. n) as stored blocks: each piece has 3 header bits, at most 7 bits of
// padding and 4 bytes of lengths.
static uint64_t stored_bits(size_t n)
{
	return (uint64_t)n * 8 + ((n + STORED_MAX - 1) / STORED_MAX) * (3 + 7 + 32);
}

// h[0 .. 255] = how often each byte value occurs in p[0 .. n), the rest of h[] zero.
// Four tables break the dependency between increments of the same counter.
static void histogram(const uint8_t *p, size_t n, uint32_t h[NLITLEN])
{
	uint32_t t[4][256];
	size_t i = 0;

	memset(t, 0, sizeof(t));
	for (; i + 4 <= n; i += 4) {
		t[0][p[i]]++;
		t[1][p[i + 1]]++;
		t[2][p[i + 2]]++;
		t[3][p[i + 3]]++;
	}
	for (; i < n; i++)
		t[0][p[i]]++;
	memset(h, 0, sizeof(uint32_t) * NLITLEN);
	for (i = 0; i < 256; i++)
		h[i] = t[0][i] + t[1][i] + t[2][i] + t[3][i];
}

// Writes in[0 .. n), parsed into seq[0 .. nseq) with the frequencies lfreq and dfreq, as
// the smallest of a dynamic block, a fixed block or stored blocks. With literals set,
// coding every byte as a literal is considered too (for data where matches do not pay).
// final: set BFINAL.
static void write_block(struct dfl *d, struct bits *b, const uint8_t *in, size_t n, struct seq *seq,
                        size_t nseq, int literals, int final)
{
	struct plan *pl = &d->plan[0];
	uint64_t fix, stored = stored_bits(n);
	unsigned i;

	plan_dynamic(pl, d->lfreq, d->dfreq);
	fix = 3 + pl->extra + cost(d->lfreq, d->fixed_lit.len, 286) +
	      cost(d->dfreq, d->fixed_dst.len, NDIST);
	if (literals && nseq > 1) {
		struct plan *alt = &d->plan[1];

		histogram(in, n, d->hist);
		plan_dynamic(alt, d->hist, d->dfreq_none);
		if (alt->bits < pl->bits && alt->bits < fix) {
			pl = alt;
			seq[0].lits = (uint32_t)n;
			seq[0].len = 0;
			nseq = 1;
			fix = UINT64_MAX;
		}
	}
	if (stored < pl->bits && stored < fix) {
		write_stored(b, in, n, final);
	} else if (fix <= pl->bits) {
		bits_put(b, (unsigned) final | 1u << 1, 3);
		write_symbols(b, seq, nseq, in, &d->fixed_lit, &d->fixed_dst);
	} else {
		huff_codes(pl->lit.len, pl->lit.code, 286);
		huff_codes(pl->dst.len, pl->dst.code, NDIST);
		huff_codes(pl->pre.len, pl->pre.code, NPRE);
		bits_put(b, (unsigned) final | 2u << 1, 3);
		bits_put(b, (pl->nlit - 257) | (pl->ndist - 1) << 5 | (pl->npre - 4) << 10, 14);
		for (i = 0; i < pl->npre; i++)
			bits_put(b, pl->pre.len[pre_order[i]], 3);
		for (i = 0; i < pl->nrle; i++) {
			unsigned s = pl->rle[i] & 31;

			bits_put(b, pl->pre.code[s] | (uint64_t)(pl->rle[i] >> 5) << pl->pre.len[s],
			         pl->pre.len[s] + pre_extra[s]);
		}
		write_symbols(b, seq, nseq, in, &pl->lit, &pl->dst);
	}
}

// ---- matching ------------------------------------------------------------------------

static inline uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t hash4(uint32_t v)
{
	return (v * 0x9e3779b1u) >> (32 - HASH_BITS);
}

// Length of the common prefix of a and b, at most max (b + max is readable).
static inline unsigned match_len(const uint8_t *a, const uint8_t *b, unsigned max)
{
	unsigned l = MIN_MATCH;

	while (l + 8 <= max) {
		uint64_t x = load64(a + l) ^ load64(b + l);

		if (x) {
			// load64 is host order; little-endian hosts count from the low byte.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return l + ((unsigned)__builtin_ctzll(x) >> 3);
#else
			break;
#endif
		}
		l += 8;
	}
	while (l < max && a[l] == b[l])
		l++;
	return l;
}

// Parses in[start .. end) into d->seq, counting symbol frequencies. Matches refer back
// as far as in[0] (at most DFL_WINDOW) and stop at end.
static size_t parse(struct dfl *d, const struct dfl_params *p, const uint8_t *in, size_t start,
                    size_t end)
{
	struct seq *s = d->seq;
	uint32_t *t = d->table;
	size_t pos = start, lit0 = start, n = 0;

	memset(d->lfreq, 0, sizeof(d->lfreq));
	memset(d->dfreq, 0, sizeof(d->dfreq));
	if (p->match) {
		while (pos + MIN_MATCH <= end) {
			uint32_t v = load32(in + pos), h = hash4(v);
			size_t cand = t[h];
			unsigned len, ne, ev;

			t[h] = (uint32_t)pos;
			if (pos - cand - 1 >= DFL_WINDOW || load32(in + cand) != v) {
				pos++;
				continue;
			}
			len = match_len(in + cand, in + pos,
			                end - pos < MAX_MATCH ? (unsigned)(end - pos) : MAX_MATCH);
			for (size_t i = lit0; i < pos; i++)
				d->lfreq[in[i]]++;
			s[n].lits = (uint32_t)(pos - lit0);
			s[n].len = (uint16_t)len;
			s[n].dist = (uint16_t)(pos - cand);
			d->lfreq[len_sym(len, &ne, &ev)]++;
			d->dfreq[dist_sym((unsigned)(pos - cand), &ne, &ev)]++;
			n++;
			{
				// Index every position inside the match, or only its last one
				// (so that a run continues at distance 1, not len).
				size_t stop = pos + len, q = p->insert_all ? pos + 1 : stop - 1;

				if (stop + MIN_MATCH > end)
					stop = end - MIN_MATCH + 1;
				for (; q < stop; q++)
					t[hash4(load32(in + q))] = (uint32_t)q;
			}
			pos += len;
			lit0 = pos;
		}
	}
	for (size_t i = lit0; i < end; i++)
		d->lfreq[in[i]]++;
	s[n].lits = (uint32_t)(end - lit0);
	s[n].len = 0;
	s[n].dist = 0;
	return n + 1;
}

size_t dfl_segment(struct dfl *d, const struct dfl_params *p, const uint8_t *in, size_t hist,
                   size_t len, int last, uint8_t *out)
{
	struct bits b = {0, 0, out};
	size_t block = p->block_in < MIN_BLOCK_IN ? MIN_BLOCK_IN : p->block_in;
	size_t need = block / MIN_MATCH + 2, pos, end = hist + len;

	if (d->seq_cap < need) {
		struct seq *s = realloc(d->seq, need * sizeof(*s));

		if (!s)
			return 0;
		d->seq = s;
		d->seq_cap = need;
	}
	if (p->match) {
		// Positions are offsets into in[]; stale entries fail the distance or the
		// content check, so zeros are a valid empty table.
		memset(d->table, 0, sizeof(*d->table) << HASH_BITS);
		for (size_t q = 0; q + MIN_MATCH <= hist; q++)
			d->table[hash4(load32(in + q))] = (uint32_t)q;
	}
	if (p->store)
		write_stored(&b, in + hist, len, last);
	for (pos = hist; pos < end && !p->store; pos += block) {
		size_t stop = end - pos < block ? end : pos + block;
		size_t nseq = parse(d, p, in, pos, stop);

		write_block(d, &b, in + pos, stop - pos, d->seq, nseq, p->match,
		            last && stop == end);
	}
	if (!last) {
		bits_put(&b, 0, 3); // an empty stored block ends the segment on a byte
		bits_align(&b);
		put32le(b.p, 0xffff0000u);
		b.p += 4;
	} else {
		bits_align(&b);
	}
	return (size_t)(b.p - out);
}
