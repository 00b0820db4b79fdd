// SPDX-License-Identifier: MIT
// The histogram drawn as a picture (histogram:plot=FILE), with integer arithmetic only so
// the same counts give the same bytes on every machine.
//
// A 536 x 300 RGB image, white. The plot area is 512 x 256 pixels with its top-left corner
// at (12, 20): value v owns columns 12 + 2v and 13 + 2v. The colour channels are drawn, and
// alpha only when asked for (with_alpha): an opaque image's alpha is one bin holding every
// pixel, which would set the scale and flatten the colour curves. Each channel is drawn in
// its colour (grey dark grey, red, green, blue, alpha light grey): a light tint under its
// curve (tints multiply, so overlaps darken) and a one-pixel curve on top, alpha first.
// The channels drawn share one vertical scale whose top is their largest count M of any bin:
//   linear:  height(n) = (256 n + M / 2) / M
//   log:     height(n) = (256 L(1 + n) + L(1 + M) / 2) / L(1 + M),
//            L(x) = floor(65536 log2 x), computed exactly with integers (histogram_log2_q16)
// and any non-zero count is at least one pixel high. The axes are dark grey, with tick
// marks at values 0, 64, 128, 192 and 255 (the ends longer) and at the top and bottom of
// the vertical axis; with scale=log also at 1, 10, 100, ... Text is in a built-in 3 x 5
// font drawn twice the size (glyphs 6 x 10 pixels, 2 apart), dark grey. Under the value
// axis (rows 284-293): "0" at its left end, "255" ending at its right end, "VALUE" centred
// on column 268. Above the plot (rows 4-13): from column 12 the count axis's label, "COUNT"
// ("LOG COUNT" with scale=log), then 8 pixels on the top count M; ending at column 523 the
// legend: for each channel drawn, in channel order, a 10 x 10 square in its colour, 4
// pixels, its name ("GREY", "RED", "GREEN", "BLUE", "ALPHA"), and 12 pixels before the next.
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "histogram.h"

#define W HISTOGRAM_PLOT_W
#define H HISTOGRAM_PLOT_H
#define X0 12  // the plot area's left column
#define Y0 20  // its top row
#define AW 512 // its width: two columns per value
#define AH 256 // its height: the largest count's bar

struct rgb {
	uint8_t r, g, b;
};

static const struct rgb ink = { 64, 64, 64 };
static const struct rgb curve_grey = { 64, 64, 64 }, curve_alpha = { 176, 176, 176 };
static const struct rgb curve_rgb[3] = { { 220, 32, 32 }, { 32, 160, 32 }, { 32, 64, 224 } };

// The colour of channel c of a ch-channel image.
static struct rgb colour(int ch, int c)
{
	if ((ch == 2 || ch == 4) && c == ch - 1)
		return curve_alpha;
	return ch <= 2 ? curve_grey : curve_rgb[c];
}

// 3 x 5 glyphs, one row per entry, bit 2 the left column: the digits, then the capitals
// in `letters`.
static const uint8_t digits[10][5] = {
	{ 7, 5, 5, 5, 7 }, { 2, 6, 2, 2, 7 }, { 7, 1, 7, 4, 7 }, { 7, 1, 7, 1, 7 },
	{ 5, 5, 7, 1, 1 }, { 7, 4, 7, 1, 7 }, { 7, 4, 7, 5, 7 }, { 7, 1, 1, 1, 1 },
	{ 7, 5, 7, 5, 7 }, { 7, 5, 7, 1, 7 },
};
static const char letters[] = "ABCDEGHLNOPRTUVY";
static const uint8_t letter_rows[sizeof letters - 1][5] = {
	{ 2, 5, 7, 5, 5 }, { 6, 5, 6, 5, 6 }, { 3, 4, 4, 4, 3 }, { 6, 5, 5, 5, 6 },
	{ 7, 4, 6, 4, 7 }, { 3, 4, 5, 5, 3 }, { 5, 5, 7, 5, 5 }, { 4, 4, 4, 4, 7 },
	{ 6, 5, 5, 5, 5 }, { 2, 5, 5, 5, 2 }, { 6, 5, 6, 4, 4 }, { 6, 5, 6, 5, 5 },
	{ 7, 2, 2, 2, 2 }, { 5, 5, 5, 5, 7 }, { 5, 5, 5, 5, 2 }, { 5, 5, 2, 2, 2 },
};
#define DIGIT_SCALE 2
#define DIGIT_W (3 * DIGIT_SCALE)
#define DIGIT_H (5 * DIGIT_SCALE)
#define DIGIT_GAP DIGIT_SCALE
#define TEXT_TOP (Y0 - 6 - DIGIT_H) // the row of the text above the plot
#define TEXT_BOTTOM (Y0 + AH + 8)   // the row of the text under it
#define LEGEND_GAP 12               // between legend entries

static void put(struct img *im, int x, int y, struct rgb c)
{
	if (x < 0 || y < 0 || x >= im->w || y >= im->h)
		return;
	uint8_t *p = im->data + ((size_t)y * im->w + x) * 3;
	p[0] = c.r;
	p[1] = c.g;
	p[2] = c.b;
}

// Multiplies pixel (x, y) by tint / 255, channel by channel.
static void tint(struct img *im, int x, int y, struct rgb t)
{
	uint8_t *p = im->data + ((size_t)y * im->w + x) * 3;
	p[0] = (uint8_t)(p[0] * t.r / 255);
	p[1] = (uint8_t)(p[1] * t.g / 255);
	p[2] = (uint8_t)(p[2] * t.b / 255);
}

static void rect(struct img *im, int x, int y, int w, int h, struct rgb c)
{
	for (int j = y; j < y + h; j++)
		for (int i = x; i < x + w; i++)
			put(im, i, j, c);
}

// The glyph of c (a digit, a letter of `letters` in either case; anything else blank).
static const uint8_t *glyph(char c)
{
	static const uint8_t blank[5];
	const char *l;
	if (c >= '0' && c <= '9')
		return digits[c - '0'];
	if (c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	l = c ? strchr(letters, c) : NULL;
	return l ? letter_rows[l - letters] : blank;
}

// The width of text s in pixels.
static int text_width(const char *s)
{
	int n = (int)strlen(s);
	return n ? n * DIGIT_W + (n - 1) * DIGIT_GAP : 0;
}

// Draws s with its top-left corner at (x, y); returns the column after its last glyph.
static int text(struct img *im, int x, int y, const char *s)
{
	for (; *s; s++) {
		const uint8_t *d = glyph(*s);
		for (int row = 0; row < 5; row++)
			for (int col = 0; col < 3; col++)
				if (d[row] >> (2 - col) & 1)
					rect(im, x + col * DIGIT_SCALE, y + row * DIGIT_SCALE,
					     DIGIT_SCALE, DIGIT_SCALE, ink);
		x += DIGIT_W + DIGIT_GAP;
	}
	return x - DIGIT_GAP;
}

// The decimal digits of n into buf (at least 21 bytes).
static const char *decimal(uint64_t n, char *buf)
{
	char t[24];
	int k = 0, i = 0;
	do {
		t[k++] = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	while (k)
		buf[i++] = t[--k];
	buf[i] = '\0';
	return buf;
}

// By integer squaring, one bit of the fraction per step, in 2.62 fixed point with 128-bit
// products (a GCC and Clang extension), so truncation never reaches the 16 bits kept for
// any count: exact and the same everywhere.
uint64_t histogram_log2_q16(uint64_t x)
{
	__extension__ typedef unsigned __int128 u128;
	int ip = 63;
	uint64_t m, r;
	while (!(x >> ip))
		ip--;
	// m = x / 2^ip in Q2.62, in [2^62, 2^63): exact for x < 2^63
	m = ip <= 62 ? x << (62 - ip) : x >> (ip - 62);
	r = (uint64_t)ip << 16;
	for (int bit = 15; bit >= 0; bit--) {
		m = (uint64_t)((u128)m * m >> 62); // m^2, in [2^62, 2^64)
		if (m >> 63) {
			m >>= 1;
			r |= (uint64_t)1 << bit;
		}
	}
	return r;
}

// The bar height of count n, top count top (>= 1), in 0..AH.
static int height(uint64_t n, uint64_t top, bool log_scale)
{
	uint64_t h;
	if (!n)
		return 0;
	if (log_scale) {
		uint64_t lt = histogram_log2_q16(1 + top);
		h = (AH * histogram_log2_q16(1 + n) + lt / 2) / lt;
	} else {
		h = (AH * n + top / 2) / top;
	}
	return h ? (int)h : 1;
}

// The legend, ending at the plot area's right edge: for each channel drawn, in channel
// order, a square in its colour and its name.
static void legend(struct img *im, int ch, bool with_alpha)
{
	int idx[4], n = 0, x = X0 + AW;
	bool has_alpha = ch == 2 || ch == 4;
	for (int c = 0; c < ch; c++)
		if (with_alpha || !has_alpha || c < ch - 1)
			idx[n++] = c;
	for (int k = 0; k < n; k++)
		x -= DIGIT_H + 4 + text_width(histogram_channel_name(ch, idx[k])) + (k ? LEGEND_GAP : 0);
	for (int k = 0; k < n; k++) {
		rect(im, x, TEXT_TOP, DIGIT_H, DIGIT_H, colour(ch, idx[k]));
		x = text(im, x + DIGIT_H + 4, TEXT_TOP, histogram_channel_name(ch, idx[k])) + LEGEND_GAP;
	}
}

int histogram_plot(const uint32_t *counts, int ch, bool log_scale, bool with_alpha,
		   struct img *out)
{
	struct img im = { W, H, 3, malloc((size_t)W * H * 3) };
	uint64_t top = 1;
	int order[4], n = 0, has_alpha = ch == 2 || ch == 4;
	char digits_buf[24];
	*out = (struct img){ 0 };
	if (!im.data)
		return err_set("out of memory");
	memset(im.data, 255, (size_t)W * H * 3);

	// alpha first, so the colour curves lie on top of it
	if (has_alpha && with_alpha)
		order[n++] = ch - 1;
	for (int c = 0; c < ch - has_alpha; c++)
		order[n++] = c;
	for (int k = 0; k < n; k++)
		for (int v = 0; v < 256; v++)
			if (counts[order[k] * 256 + v] > top)
				top = counts[order[k] * 256 + v];
	for (int k = 0; k < n; k++) {
		int c = order[k];
		struct rgb col = colour(ch, c);
		struct rgb t = { (uint8_t)(255 - (255 - col.r) / 4),
				 (uint8_t)(255 - (255 - col.g) / 4),
				 (uint8_t)(255 - (255 - col.b) / 4) };
		for (int v = 0; v < 256; v++)
			for (int y = Y0 + AH - height(counts[c * 256 + v], top, log_scale);
			     y < Y0 + AH; y++) {
				tint(&im, X0 + 2 * v, y, t);
				tint(&im, X0 + 2 * v + 1, y, t);
			}
	}
	for (int k = 0; k < n; k++) {
		int c = order[k], prev = 0;
		struct rgb col = colour(ch, c);
		for (int v = 0; v < 256; v++) {
			// the curve's row for v: the bar's top, the bottom row for an empty bin
			int h = height(counts[c * 256 + v], top, log_scale);
			int y = Y0 + AH - (h ? h : 1);
			int from = v ? prev : y;
			for (int j = from < y ? from : y; j <= (from < y ? y : from); j++)
				put(&im, X0 + 2 * v, j, col);
			put(&im, X0 + 2 * v + 1, y, col);
			prev = y;
		}
	}

	// axes: the value axis under the plot area, the count axis left of it
	rect(&im, X0 - 1, Y0 + AH, AW + 1, 1, ink);
	rect(&im, X0 - 1, Y0, 1, AH + 1, ink);
	for (int v = 0; v < 256; v += 64)
		rect(&im, X0 + 2 * v, Y0 + AH + 1, 2, v ? 3 : 6, ink);
	rect(&im, X0 + 2 * 255, Y0 + AH + 1, 2, 6, ink);
	rect(&im, X0 - 6, Y0, 5, 1, ink);          // the top count
	rect(&im, X0 - 6, Y0 + AH - 1, 5, 1, ink); // zero
	if (log_scale)
		for (uint64_t p = 1; p < top; p *= 10)
			rect(&im, X0 - 4, Y0 + AH - height(p, top, true), 3, 1, ink);

	// labels and the legend
	text(&im, X0, TEXT_BOTTOM, "0");
	text(&im, X0 + AW - text_width("255"), TEXT_BOTTOM, "255");
	text(&im, X0 + AW / 2 - text_width("VALUE") / 2, TEXT_BOTTOM, "VALUE");
	text(&im, text(&im, X0, TEXT_TOP, log_scale ? "LOG COUNT" : "COUNT") + 8, TEXT_TOP,
	     decimal(top, digits_buf));
	legend(&im, ch, with_alpha);
	*out = im;
	return 0;
}
