// SPDX-License-Identifier: MIT
// metatool: makes and reads back the metadata of PNG and JPEG files for the tests, on its own
// (no code of src/io): segments and chunks are walked here, iCCP inflated with zlib.
//
//   metatool make-icc SPACE BYTES OUT   an ICC profile of BYTES bytes (at least 132) for
//                                       colour space SPACE (RGB or GRAY): a v2 display
//                                       profile's header, no tags, a byte pattern after it
//   metatool add-icc PROFILE IN OUT     IN with the profile: PNG iCCP after IHDR; JPEG APP2
//                                       "ICC_PROFILE" segments of at most 65519 bytes of it
//                                       after SOI and APP0
//   metatool add-exif SPEC IN OUT       IN with an Exif block: PNG eXIf after IHDR; JPEG
//                                       APP1 "Exif\0\0" after SOI and APP0
//   metatool get-icc FILE OUT           the profile of FILE (APP2 segments joined in their
//                                       order); exit 1 when it has none
//   metatool get-exif FILE OUT          the Exif block of FILE (its TIFF structure); exit 1
//                                       when it has none
//   metatool orient FILE                prints the Orientation tag's value, 0 without one
//
// SPEC, comma-separated: o=N (an Orientation entry of value N; none without), be (big-endian,
// else little), type=T (the entry's type, 3 SHORT by default), ifd=N (IFD0's offset, 8 by
// default), count=N (IFD0's entry count, the true one by default), len=N (cut the block to N
// bytes), pad=N (N zero bytes after the block's data). IFD0 holds Make ("metatool", its value at an offset), the Orientation entry, then
// XResolution (a RATIONAL at an offset); next IFD 0.
//
// Exit status: 0 success, 1 none found (get-icc, get-exif), 2 error.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct buf {
	unsigned char *p;
	size_t n;
};

static _Noreturn void die(const char *msg)
{
	fprintf(stderr, "metatool: %s\n", msg);
	exit(2);
}

static void put(struct buf *b, const void *d, size_t n)
{
	unsigned char *p = realloc(b->p, b->n + n + 1);
	if (!p)
		die("out of memory");
	b->p = p;
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void put_be(struct buf *b, unsigned long v, int bytes)
{
	unsigned char d[4];
	for (int i = 0; i < bytes; i++)
		d[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
	put(b, d, (size_t)bytes);
}

static struct buf slurp(const char *path)
{
	struct buf b = { NULL, 0 };
	unsigned char chunk[65536];
	size_t n;
	FILE *f = fopen(path, "rb");
	if (!f)
		die("cannot open the input");
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		put(&b, chunk, n);
	if (ferror(f))
		die("cannot read the input");
	fclose(f);
	return b;
}

static void spit(const char *path, const struct buf *b)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b->p, 1, b->n, f) != b->n || fclose(f) != 0)
		die("cannot write the output");
}

static unsigned long be(const unsigned char *p, int bytes)
{
	unsigned long v = 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

static int is_png(const struct buf *b)
{
	return b->n >= 33 && !memcmp(b->p, "\x89PNG\r\n\x1a\n", 8) && !memcmp(b->p + 12, "IHDR", 4);
}

static int is_jpeg(const struct buf *b)
{
	return b->n >= 4 && b->p[0] == 0xFF && b->p[1] == 0xD8;
}

// Where to insert: after PNG's IHDR, or after JPEG's SOI and an APP0 segment right after it.
static size_t insert_at(const struct buf *b)
{
	if (is_png(b))
		return 33;
	if (!is_jpeg(b))
		die("the input is neither PNG nor JPEG");
	if (b->n >= 6 && b->p[2] == 0xFF && b->p[3] == 0xE0)
		return 4 + be(b->p + 4, 2);
	return 2;
}

static void put_chunk(struct buf *b, const char *type, const unsigned char *d, size_t n)
{
	uLong crc = crc32(0, (const Bytef *)type, 4);
	if (n)
		crc = crc32(crc, d, (uInt)n);
	put_be(b, n, 4);
	put(b, type, 4);
	if (n)
		put(b, d, n);
	put_be(b, crc, 4);
}

// IN with what add wrote into it at insert_at, to OUT.
static void splice_out(const struct buf *in, const struct buf *add, const char *out)
{
	size_t at = insert_at(in);
	struct buf o = { NULL, 0 };
	put(&o, in->p, at);
	put(&o, add->p, add->n);
	put(&o, in->p + at, in->n - at);
	spit(out, &o);
	free(o.p);
}

static int cmd_make_icc(char **av)
{
	long n = atol(av[1]);
	struct buf p = { NULL, 0 };
	unsigned char h[132] = { 0 };
	if (n < 132 || (strcmp(av[0], "RGB") && strcmp(av[0], "GRAY")))
		die("make-icc SPACE BYTES OUT: SPACE RGB or GRAY, BYTES at least 132");
	for (int i = 0; i < 4; i++)
		h[i] = (unsigned char)((unsigned long)n >> (24 - 8 * i));
	memcpy(h + 4, "none", 4);
	h[8] = 2, h[9] = 0x10; // version 2.1
	memcpy(h + 12, "mntr", 4);
	memcpy(h + 16, strcmp(av[0], "RGB") ? "GRAY" : "RGB ", 4);
	memcpy(h + 20, "XYZ ", 4);
	memcpy(h + 36, "acsp", 4);
	// the D50 illuminant, s15Fixed16: 0.9642, 1.0, 0.8249
	memcpy(h + 68, "\x00\x00\xf6\xd6\x00\x01\x00\x00\x00\x00\xd3\x2d", 12);
	put(&p, h, sizeof h); // tag count 0
	for (long i = 132; i < n; i++) {
		unsigned char c = (unsigned char)(i * 7 + i / 251);
		put(&p, &c, 1);
	}
	spit(av[2], &p);
	free(p.p);
	return 0;
}

static int cmd_add_icc(char **av)
{
	struct buf prof = slurp(av[0]), in = slurp(av[1]), add = { NULL, 0 };
	if (is_png(&in)) {
		uLongf zn = compressBound((uLong)prof.n);
		unsigned char *z = malloc(zn + 6);
		if (!z)
			die("out of memory");
		memcpy(z, "test\0\0", 6); // name, NUL, method 0
		if (compress2(z + 6, &zn, prof.p, (uLong)prof.n, 9) != Z_OK)
			die("cannot compress");
		put_chunk(&add, "iCCP", z, zn + 6);
		free(z);
	} else {
		size_t count = (prof.n + 65518) / 65519;
		for (size_t i = 0; i < count; i++) {
			size_t off = i * 65519, len = prof.n - off < 65519 ? prof.n - off : 65519;
			unsigned char head[2] = { (unsigned char)(i + 1), (unsigned char)count };
			put_be(&add, 0xFFE2, 2);
			put_be(&add, 2 + 12 + 2 + len, 2);
			put(&add, "ICC_PROFILE", 12);
			put(&add, head, 2);
			put(&add, prof.p + off, len);
		}
	}
	splice_out(&in, &add, av[2]);
	free(prof.p);
	free(in.p);
	free(add.p);
	return 0;
}

// Appends v as `bytes` bytes in the block's byte order.
static void put_ord(struct buf *b, unsigned long v, int bytes, int big)
{
	unsigned char d[4];
	for (int i = 0; i < bytes; i++)
		d[i] = (unsigned char)(v >> (8 * (big ? bytes - 1 - i : i)));
	put(b, d, (size_t)bytes);
}

// The Exif TIFF block SPEC asks for (see the top of the file).
static struct buf exif_block(const char *spec)
{
	long o = -1, type = 3, ifd = 8, count = -1, len = -1, pad = 0;
	int big = 0, n;
	struct buf t = { NULL, 0 };
	char *s = strdup(spec), *tok, *save = NULL;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "be"))
			big = 1;
		else if (sscanf(tok, "o=%ld", &o) != 1 && sscanf(tok, "type=%ld", &type) != 1 &&
			 sscanf(tok, "ifd=%ld", &ifd) != 1 && sscanf(tok, "count=%ld", &count) != 1 &&
			 sscanf(tok, "len=%ld", &len) != 1 && sscanf(tok, "pad=%ld", &pad) != 1)
			die("unknown exif option");
	}
	free(s);
	n = o >= 0 ? 3 : 2;
	put(&t, big ? "MM" : "II", 2);
	put_ord(&t, 42, 2, big);
	put_ord(&t, (unsigned long)ifd, 4, big);
	// IFD0 at 8: its entries, next IFD 0, then Make's 9 bytes and XResolution's 8
	size_t data = 8 + 2 + 12 * (size_t)n + 4;
	put_ord(&t, (unsigned long)(count >= 0 ? count : n), 2, big);
	put_ord(&t, 0x010F, 2, big), put_ord(&t, 2, 2, big), put_ord(&t, 9, 4, big);
	put_ord(&t, data, 4, big);
	if (o >= 0) {
		put_ord(&t, 0x0112, 2, big), put_ord(&t, (unsigned long)type, 2, big);
		put_ord(&t, 1, 4, big), put_ord(&t, (unsigned long)o, 2, big), put_ord(&t, 0, 2, big);
	}
	put_ord(&t, 0x011A, 2, big), put_ord(&t, 5, 2, big), put_ord(&t, 1, 4, big);
	put_ord(&t, data + 9 + 1, 4, big);
	put_ord(&t, 0, 4, big);
	put(&t, "metatool", 9);
	put(&t, "", 1); // pad to an even offset
	put_ord(&t, 72, 4, big), put_ord(&t, 1, 4, big);
	for (long i = 0; i < pad; i++)
		put(&t, "", 1);
	if (len >= 0 && (size_t)len < t.n)
		t.n = (size_t)len;
	return t;
}

static int cmd_add_exif(char **av)
{
	struct buf t = exif_block(av[0]), in = slurp(av[1]), add = { NULL, 0 };
	if (is_png(&in)) {
		put_chunk(&add, "eXIf", t.p, t.n);
	} else {
		put_be(&add, 0xFFE1, 2);
		put_be(&add, 2 + 6 + t.n, 2);
		put(&add, "Exif\0", 6);
		put(&add, t.p, t.n);
	}
	splice_out(&in, &add, av[2]);
	free(t.p);
	free(in.p);
	free(add.p);
	return 0;
}

// The JPEG's segments before SOS: calls f on each (marker, data, length).
static void jpeg_segments(const struct buf *b, void (*f)(int, const unsigned char *, size_t, void *),
			  void *ctx)
{
	size_t pos = 2;
	while (pos + 4 <= b->n && b->p[pos] == 0xFF) {
		int m = b->p[pos + 1];
		size_t len = be(b->p + pos + 2, 2);
		if (m == 0xDA || len < 2 || pos + 2 + len > b->n)
			return;
		f(m, b->p + pos + 4, len - 2, ctx);
		pos += 2 + len;
	}
}

// The PNG's chunks: calls f on each (type, data, length).
static void png_chunks(const struct buf *b, void (*f)(const char *, const unsigned char *, size_t, void *),
		       void *ctx)
{
	size_t pos = 8;
	while (pos + 12 <= b->n) {
		size_t len = be(b->p + pos, 4);
		char type[5] = { 0 };
		if (len > b->n - pos - 12)
			return;
		memcpy(type, b->p + pos + 4, 4);
		f(type, b->p + pos + 8, len, ctx);
		pos += 12 + len;
	}
}

struct found {
	struct buf icc, exif;
	unsigned char *part[256]; // JPEG ICC segments by sequence number
	size_t part_n[256];
	int parts;
};

static void on_segment(int m, const unsigned char *d, size_t n, void *ctx)
{
	struct found *f = ctx;
	if (m == 0xE1 && n >= 6 && !memcmp(d, "Exif\0", 6) && !f->exif.p)
		put(&f->exif, d + 6, n - 6);
	if (m == 0xE2 && n >= 14 && !memcmp(d, "ICC_PROFILE", 12) && d[12] >= 1) {
		f->part[d[12]] = (unsigned char *)d + 14;
		f->part_n[d[12]] = n - 14;
		f->parts = d[13];
	}
}

static void on_chunk(const char *type, const unsigned char *d, size_t n, void *ctx)
{
	struct found *f = ctx;
	if (!strcmp(type, "eXIf") && !f->exif.p)
		put(&f->exif, d, n);
	if (!strcmp(type, "iCCP") && !f->icc.p) {
		const unsigned char *z = memchr(d, 0, n);
		z_stream s = { 0 };
		unsigned char out[65536];
		if (!z || (size_t)(z - d) + 2 > n || inflateInit(&s) != Z_OK)
			die("a bad iCCP chunk");
		s.next_in = (Bytef *)z + 2;
		s.avail_in = (uInt)(n - (size_t)(z - d) - 2);
		int rc;
		do {
			s.next_out = out;
			s.avail_out = sizeof out;
			rc = inflate(&s, Z_NO_FLUSH);
			if (rc != Z_OK && rc != Z_STREAM_END)
				die("iCCP does not inflate");
			put(&f->icc, out, sizeof out - s.avail_out);
		} while (rc != Z_STREAM_END);
		inflateEnd(&s);
	}
}

static struct found find(const char *path)
{
	struct buf b = slurp(path);
	struct found f;
	memset(&f, 0, sizeof f);
	if (is_png(&b)) {
		png_chunks(&b, on_chunk, &f);
	} else if (is_jpeg(&b)) {
		jpeg_segments(&b, on_segment, &f);
		for (int i = 1; i <= f.parts; i++) {
			if (!f.part[i])
				die("an ICC segment is missing");
			put(&f.icc, f.part[i], f.part_n[i]);
		}
	} else {
		die("the input is neither PNG nor JPEG");
	}
	free(b.p);
	return f;
}

// The Orientation tag's value in TIFF block t, 0 without one, -1 when t is unreadable.
static long orientation(const struct buf *t)
{
	int big;
	if (t->n < 8 || (memcmp(t->p, "MM", 2) && memcmp(t->p, "II", 2)))
		return -1;
	big = t->p[0] == 'M';
#define RD(p, k) (big ? be(p, k) : (k) == 2 ? (unsigned long)((p)[1] << 8 | (p)[0]) \
		  : (unsigned long)(p)[3] << 24 | (unsigned long)(p)[2] << 16 | (unsigned long)(p)[1] << 8 | (p)[0])
	unsigned long ifd = RD(t->p + 4, 4);
	if (ifd + 2 > t->n)
		return -1;
	unsigned long n = RD(t->p + ifd, 2);
	for (unsigned long i = 0; i < n && ifd + 2 + 12 * (i + 1) <= t->n; i++) {
		const unsigned char *e = t->p + ifd + 2 + 12 * i;
		if (RD(e, 2) == 0x0112)
			return (long)RD(e + 8, 2);
	}
	return 0;
#undef RD
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "make-icc"))
		return cmd_make_icc(argv + 2);
	if (argc == 5 && !strcmp(argv[1], "add-icc"))
		return cmd_add_icc(argv + 2);
	if (argc == 5 && !strcmp(argv[1], "add-exif"))
		return cmd_add_exif(argv + 2);
	if (argc == 4 && (!strcmp(argv[1], "get-icc") || !strcmp(argv[1], "get-exif"))) {
		struct found f = find(argv[2]);
		struct buf *b = argv[1][4] == 'i' ? &f.icc : &f.exif;
		int rc = b->p ? 0 : 1;
		if (b->p)
			spit(argv[3], b);
		free(f.icc.p);
		free(f.exif.p);
		return rc;
	}
	if (argc == 3 && !strcmp(argv[1], "orient")) {
		struct found f = find(argv[2]);
		printf("%ld\n", f.exif.p ? orientation(&f.exif) : 0);
		free(f.icc.p);
		free(f.exif.p);
		return 0;
	}
	fprintf(stderr, "usage: metatool make-icc SPACE BYTES OUT | add-icc PROFILE IN OUT |\n"
			"                add-exif SPEC IN OUT | get-icc FILE OUT | get-exif FILE OUT |\n"
			"                orient FILE\n");
	return 2;
}
