// SPDX-License-Identifier: MIT
// Messages are one line whatever they quote: control characters (a newline or an escape
// sequence in a file name or a stage argument) are written as \n, \t, \r or \xHH, and a
// message longer than the buffer (a 100 KB argument quoted back) ends in "...".
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_quiet;

#define MSG_BYTES 1024

static char err_buf[MSG_BYTES];

// Copies src into dst (MSG_BYTES) with control characters escaped; "..." marks a cut,
// which truncated (the formatter's own cut) also asks for.
static void escape_into(char *dst, const char *src, int truncated)
{
	size_t o = 0;
	const size_t room = MSG_BYTES - 4; // "...\0"
	for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
		char esc[5];
		size_t n;
		if (*p >= 0x20 && *p != 0x7f) {
			esc[0] = (char)*p;
			n = 1;
		} else if (*p == '\n' || *p == '\t' || *p == '\r') {
			esc[0] = '\\';
			esc[1] = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
			n = 2;
		} else {
			snprintf(esc, sizeof esc, "\\x%02x", *p);
			n = 4;
		}
		if (o + n > room) {
			truncated = 1;
			break;
		}
		memcpy(dst + o, esc, n);
		o += n;
	}
	if (truncated) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
}

// Formats into dst (MSG_BYTES), escaped.
static void format_escaped(char *dst, const char *fmt, va_list ap)
{
	char raw[MSG_BYTES];
	int n = vsnprintf(raw, sizeof raw, fmt, ap);
	if (n < 0)
		raw[0] = '\0';
	escape_into(dst, raw, n >= (int)sizeof raw);
}

int err_set(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	format_escaped(err_buf, fmt, ap);
	va_end(ap);
	return -1;
}

int err_prefix(const char *fmt, ...)
{
	char prefix[MSG_BYTES], joined[2 * MSG_BYTES + 2];
	va_list ap;
	va_start(ap, fmt);
	format_escaped(prefix, fmt, ap);
	va_end(ap);
	snprintf(joined, sizeof joined, "%s: %s", prefix, err_buf);
	escape_into(err_buf, joined, 0);
	return -1;
}

const char *err_msg(void)
{
	return err_buf;
}

void warn(const char *fmt, ...)
{
	char msg[MSG_BYTES];
	va_list ap;
	if (err_quiet)
		return;
	va_start(ap, fmt);
	format_escaped(msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "climg: warning: %s\n", msg);
}
