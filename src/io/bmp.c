// SPDX-License-Identifier: MIT
// BMP input through stb_image (built in third_party/stb_image_bmp.c for BMP only). stb
// decodes 1/4/8-bit palette, 16/24/32-bit and bitfield BMPs, not RLE; the result is RGB,
// or RGBA when the file has an alpha mask (an alpha channel that is all 0 becomes 255).
// stb reads a short file as if it were padded with zeros, so the pixel data's length is
// checked here first.
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#include <stb_image.h>

#include "../err.h"
#include "codec.h"

static uint32_t le16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// The bytes an uncompressed BMP of this header needs: the pixel data offset plus padded
// rows (the last row's padding may be missing). 0 when the header is too short to tell or
// puts the pixels inside itself.
static uint64_t bmp_needed_bytes(const uint8_t *p, size_t n, uint64_t w, uint64_t h)
{
	uint64_t offset, bpp, stride;
	uint32_t hsz;

	if (n < 30)
		return 0;
	offset = le32(p + 10);
	hsz = le32(p + 14);
	if (offset < 14 + (uint64_t)hsz) // io_bmp_open reports this
		return 0;
	bpp = hsz == 12 ? le16(p + 24) : le16(p + 28);
	if (bpp == 0 || bpp > 32)
		return 0;
	stride = (w * bpp + 31) / 32 * 4;
	return offset + stride * (h - 1) + (w * bpp + 7) / 8;
}

static int bmp_decode(struct img_reader *r, uint8_t *dst)
{
	stbi_uc *px;
	int w, h, n;

	px = stbi_load_from_memory(r->data, (int)r->size, &w, &h, &n, 0);
	if (!px)
		return err_set("%s: bmp: %s", r->name, stbi_failure_reason());
	if (w != r->g.w || h != r->g.h || n != r->g.ch) {
		stbi_image_free(px);
		return err_set("%s: bmp: decoded %dx%d with %d channels, header said %dx%d with %d",
		               r->name, w, h, n, r->g.w, r->g.h, r->g.ch);
	}
	memcpy(dst, px, geom_bytes(&r->g));
	stbi_image_free(px);
	return 0;
}

int io_bmp_open(struct img_reader *r)
{
	long long w, h;
	int x, y, n;
	uint64_t need;

	r->decode = bmp_decode;
	if (r->size > INT_MAX)
		return err_set("%s: bmp: files over 2 GiB are not supported", r->name);
	// stb takes any depth of 16 or more as 32-bit and a negative compression code as
	// none, and then reads past the end as zeros: refuse what the format does not have,
	// so that the length check below always applies. (Found by tests/fuzz/fuzz-decode.c:
	// 122 bytes claiming 50431x23 at 64800 bits per pixel decoded to a blank image.)
	if (r->size >= 30) {
		uint32_t hsz = le32(r->data + 14),
		         bpp = hsz == 12 ? le16(r->data + 24) : le16(r->data + 28);
		uint32_t compress = hsz != 12 && r->size >= 34 ? le32(r->data + 30) : 0;

		if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
			return err_set("%s: bmp: unsupported bit depth %u", r->name, bpp);
		if (le32(r->data + 10) < 14 + (uint64_t)hsz)
			return err_set("%s: bmp: the pixel data offset %u points into the header",
			               r->name, le32(r->data + 10));
		if (compress != 0 && compress != 1 && compress != 2 && compress != 3 &&
		    compress != 4 && compress != 5)
			return err_set("%s: bmp: unknown compression %u", r->name, compress);
	}
	if (!stbi_info_from_memory(r->data, (int)r->size, &x, &y, &n)) {
		// stb's info reports only "not of any known type"; name the common cases.
		uint32_t compress =
		    r->size >= 34 && le32(r->data + 14) >= 40 ? le32(r->data + 30) : 0;

		if (compress == 1 || compress == 2)
			return err_set("%s: bmp: RLE-compressed BMP is not supported", r->name);
		if (compress == 4 || compress == 5)
			return err_set("%s: bmp: BMP with embedded JPEG or PNG is not supported",
			               r->name);
		return err_set("%s: bmp: %s", r->name, stbi_failure_reason());
	}
	// A top-down BMP stores a negative height, which stb's info passes on; a width
	// over INT_MAX comes back negative too.
	w = (long long)(unsigned)x;
	h = y < 0 ? -(long long)y : y;
	if (io_check_geom(r, w, h, n) != 0)
		return -1;
	need = bmp_needed_bytes(r->data, r->size, (uint64_t)w, (uint64_t)h);
	// (A header too short to tell, found by fuzz-decode: 29 bytes stb took for 33x40.)
	if (need == 0)
		return err_set("%s: bmp: the header is truncated (%zu bytes)", r->name, r->size);
	if (need > r->size)
		return err_set("%s: bmp: the file is truncated (%zu bytes, the pixels need %llu)",
		               r->name, r->size, (unsigned long long)need);
	return 0;
}
