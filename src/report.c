// SPDX-License-Identifier: MIT
// --report's JSON Lines writer (contracts in report.h).
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

struct report {
	char *name; // for messages: the path, "stdout" for "-"
	int fd;
	bool owns_fd;
	int write_err; // errno of the first failed write, 0 if none
	pthread_mutex_t lock;
};

// ---- a growing string ----------------------------------------------------------------

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->cap - b->len <= n) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (cap - b->len <= n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void sb_fmt(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_fmt(struct sbuf *b, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n >= 0)
		sb_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

// ---- JSON values ---------------------------------------------------------------------

// The length of the valid UTF-8 sequence at s (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF), or 0 when the byte at s does not start one.
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf; // the range of the second byte
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0; // overlong
	else if (c == 0xed)
		hi = 0x9f; // surrogates
	else if (c == 0xf0)
		lo = 0x90; // overlong
	else if (c == 0xf4)
		hi = 0x8f; // above U+10FFFF
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void sb_json_string(struct sbuf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	sb_add(b, "\"", 1);
	while (*s) {
		size_t n = utf8_len(s);

		if (*s == '"' || *s == '\\') {
			sb_add(b, "\\", 1);
			sb_add(b, (const char *)s, 1);
		} else if (*s == '\n') {
			sb_str(b, "\\n");
		} else if (*s == '\t') {
			sb_str(b, "\\t");
		} else if (*s == '\r') {
			sb_str(b, "\\r");
		} else if (*s < 0x20 || n == 0) {
			sb_fmt(b, "\\u%04x", *s); // a control character, or a byte not in UTF-8
		} else {
			sb_add(b, (const char *)s, n);
			s += n;
			continue;
		}
		s++;
	}
	sb_add(b, "\"", 1);
}

static void sb_json_string_or_null(struct sbuf *b, const char *s)
{
	if (s)
		sb_json_string(b, s);
	else
		sb_str(b, "null");
}

static void sb_count_or_null(struct sbuf *b, int v)
{
	if (v > 0)
		sb_fmt(b, "%d", v);
	else
		sb_str(b, "null");
}

static void sb_ms(struct sbuf *b, double ms)
{
	if (isfinite(ms))
		sb_fmt(b, "%.3f", ms);
	else
		sb_str(b, "null");
}

char *report_json_string(const char *s)
{
	struct sbuf b = {0};

	sb_json_string(&b, s);
	if (b.oom) {
		free(b.p);
		err_set("out of memory");
		return NULL;
	}
	return b.p;
}

// ---- the file ------------------------------------------------------------------------

struct report *report_open(const char *path)
{
	struct report *r = calloc(1, sizeof(*r));
	bool to_stdout = strcmp(path, "-") == 0;

	if (!r) {
		err_set("--report: out of memory");
		return NULL;
	}
	r->fd = -1;
	r->name = strdup(to_stdout ? "stdout" : path);
	if (!r->name) {
		err_set("--report: out of memory");
		goto fail;
	}
	if (to_stdout) {
		r->fd = STDOUT_FILENO;
	} else {
		do
			r->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		while (r->fd < 0 && errno == EINTR);
		if (r->fd < 0) {
			err_set("%s: cannot open: %s", path, strerror(errno));
			goto fail;
		}
		r->owns_fd = true;
	}
	if (pthread_mutex_init(&r->lock, NULL) != 0) {
		err_set("--report: cannot create a mutex");
		goto fail;
	}
	return r;
fail:
	if (r->owns_fd)
		close(r->fd);
	free(r->name);
	free(r);
	return NULL;
}

// Writes all of p (under the lock); -1 with err set.
static int write_all(struct report *r, const char *p, size_t len)
{
	if (r->write_err)
		return err_set("%s: cannot write: %s", r->name, strerror(r->write_err));
	// stdio may hold earlier text for stdout; it goes first
	if (!r->owns_fd && fflush(stdout) != 0) {
		r->write_err = errno ? errno : EIO;
		return err_set("%s: cannot write: %s", r->name, strerror(r->write_err));
	}
	while (len > 0) {
		ssize_t n = write(r->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r->write_err = n < 0 ? errno : EIO;
			return err_set("%s: cannot write: %s", r->name, strerror(r->write_err));
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int report_write(struct report *r, const struct report_entry *e)
{
	struct sbuf b = {0};
	int rc;

	sb_fmt(&b, "{\"index\":%ld,\"input\":", e->index);
	sb_json_string(&b, e->input);
	sb_str(&b, ",\"status\":");
	sb_json_string(&b, e->status);
	sb_str(&b, ",\"error\":");
	sb_json_string_or_null(&b, e->error);
	sb_str(&b, ",\"width\":");
	sb_count_or_null(&b, e->w);
	sb_str(&b, ",\"height\":");
	sb_count_or_null(&b, e->h);
	sb_str(&b, ",\"channels\":");
	sb_count_or_null(&b, e->ch);
	sb_str(&b, ",\"outputs\":[");
	for (int i = 0; i < e->noutputs; i++) {
		const struct report_output *o = &e->outputs[i];

		sb_str(&b, i ? ",{\"path\":" : "{\"path\":");
		sb_json_string(&b, o->path);
		sb_fmt(&b, ",\"bytes\":%llu,\"sha256\":\"", (unsigned long long)o->bytes);
		for (int k = 0; k < 32; k++)
			sb_fmt(&b, "%02x", o->sha256[k]);
		sb_str(&b, "\"}");
	}
	sb_str(&b, "],\"device\":");
	sb_json_string_or_null(&b, e->device);
	sb_str(&b, ",\"ms\":{\"decode\":");
	sb_ms(&b, e->decode_ms);
	sb_str(&b, ",\"stages\":");
	sb_ms(&b, e->stages_ms);
	sb_str(&b, ",\"encode\":");
	sb_ms(&b, e->encode_ms);
	sb_str(&b, ",\"total\":");
	sb_ms(&b, e->total_ms);
	sb_str(&b, "}}\n");
	if (b.oom) {
		free(b.p);
		return err_set("%s: out of memory", r->name);
	}
	pthread_mutex_lock(&r->lock);
	rc = write_all(r, b.p, b.len);
	pthread_mutex_unlock(&r->lock);
	free(b.p);
	return rc;
}

int report_close(struct report *r)
{
	int rc = 0;

	if (!r)
		return 0;
	if (r->write_err)
		rc = err_set("%s: cannot write: %s", r->name, strerror(r->write_err));
	if (r->owns_fd && close(r->fd) != 0 && rc == 0)
		rc = err_set("%s: cannot write: %s", r->name, strerror(errno));
	pthread_mutex_destroy(&r->lock);
	free(r->name);
	free(r);
	return rc;
}
