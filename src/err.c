// SPDX-License-Identifier: MIT
// Messages are one line whatever they quote: control characters (a newline or an escape
// sequence in a file name or a stage argument) are written as \n, \t, \r or \xHH. A
// message longer than the buffer (a 100 KB argument quoted back) keeps its beginning and
// its end, which say what failed and why, with "..." for the middle.
#include "err.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int err_quiet;

#define MSG_BYTES 1024
#define KEEP_BYTES ((MSG_BYTES - 4) / 2) // from each end of a message that is too long

// One message per thread: the thread that decodes the input while the main thread opens
// the device (src/main.c) records its own, and hands it over when it is joined.
static _Thread_local char err_buf[MSG_BYTES];

// The escaped form of byte c into esc (at least 5 bytes); returns its length.
static size_t escape_byte(unsigned char c, char *esc)
{
	if (c >= 0x20 && c != 0x7f) {
		esc[0] = (char)c;
		return 1;
	}
	if (c == '\n' || c == '\t' || c == '\r') {
		esc[0] = '\\';
		esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		return 2;
	}
	snprintf(esc, 5, "\\x%02x", c);
	return 4;
}

// Writes the escaped src into dst (MSG_BYTES): whole when it fits, else its first and last
// KEEP_BYTES around "..." (never splitting an escape).
static void escape_into(char *dst, const char *src)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t len = strlen(src), total = 0, o = 0, i, start;
	char esc[5];

	for (i = 0; i < len; i++)
		total += escape_byte(s[i], esc);
	if (total < MSG_BYTES) {
		for (i = 0; i < len; i++)
			o += escape_byte(s[i], dst + o);
		dst[o] = '\0';
		return;
	}
	for (i = 0; i < len && o + escape_byte(s[i], esc) <= KEEP_BYTES; i++)
		o += escape_byte(s[i], dst + o);
	memcpy(dst + o, "...", 3);
	o += 3;
	// the tail: walk back from the end while it fits
	size_t tail = 0;
	for (start = len; start > i && tail + escape_byte(s[start - 1], esc) <= KEEP_BYTES; start--)
		tail += escape_byte(s[start - 1], esc);
	for (; start < len; start++)
		o += escape_byte(s[start], dst + o);
	dst[o] = '\0';
}

// Formats fmt into dst (MSG_BYTES), escaped and shortened.
static void format_escaped(char *dst, const char *fmt, va_list ap)
{
	char small[MSG_BYTES], *raw = small;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(small, sizeof small, fmt, ap);
	if (n >= (int)sizeof small && (raw = malloc((size_t)n + 1)) != NULL)
		vsnprintf(raw, (size_t)n + 1, fmt, again);
	else if (!raw)
		raw = small; // out of memory: the first MSG_BYTES - 1 bytes will do
	va_end(again);
	if (n < 0)
		small[0] = '\0';
	escape_into(dst, raw);
	if (raw != small)
		free(raw);
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
	escape_into(err_buf, joined);
	return -1;
}

void err_clear(void)
{
	err_buf[0] = '\0';
}

const char *err_msg(void)
{
	return err_buf;
}

static pthread_mutex_t stderr_mu = PTHREAD_MUTEX_INITIALIZER;

void err_stderr_lock(void)
{
	pthread_mutex_lock(&stderr_mu);
}

int err_stderr_trylock(void)
{
	return pthread_mutex_trylock(&stderr_mu) == 0;
}

void err_stderr_unlock(void)
{
	pthread_mutex_unlock(&stderr_mu);
}

void err_print(const char *text)
{
	err_stderr_lock();
	fputs(text, stderr);
	err_stderr_unlock();
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
	err_stderr_lock();
	fprintf(stderr, "climg: warning: %s\n", msg);
	err_stderr_unlock();
}
