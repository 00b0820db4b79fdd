// SPDX-License-Identifier: MIT
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_quiet;

static char err_buf[1024];

int err_set(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err_buf, sizeof err_buf, fmt, ap);
	va_end(ap);
	return -1;
}

int err_prefix(const char *fmt, ...)
{
	char prefix[512], joined[sizeof prefix + sizeof err_buf + 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	snprintf(joined, sizeof joined, "%s: %s", prefix, err_buf);
	memcpy(err_buf, joined, sizeof err_buf - 1); // truncates a very long message
	err_buf[sizeof err_buf - 1] = '\0';
	return -1;
}

const char *err_msg(void)
{
	return err_buf;
}

void warn(const char *fmt, ...)
{
	va_list ap;
	if (err_quiet)
		return;
	fputs("climg: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
