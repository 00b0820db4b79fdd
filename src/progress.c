// SPDX-License-Identifier: MIT
// The progress line (contracts in progress.h). The line is cosmetic: a failed write to
// stderr is ignored rather than failing the batch. Every write holds err_stderr_lock, as
// a program's build holds it while descriptor 2 is diverted (src/ocl/program.c): a line
// written meanwhile would land in the build's temporary file.
#include "progress.h"

#include "err.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_NS 100000000LL // at most 10 redraws a second

struct progress {
	long total;
	bool on;
	bool drawn; // the line is on the screen
	long done, failed;
	long long start_ns, last_ns;
	pthread_mutex_t lock;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// "M:SS", or "H:MM:SS" from an hour, into buf (at least 24 bytes).
static void format_time(char *buf, size_t size, double s)
{
	long t = s < 0 ? 0 : s > 1e9 ? 1000000000L : (long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

size_t progress_format(char *buf, size_t size, long done, long total, long failed, double elapsed_s)
{
	char rate[32] = "-", elapsed[24], eta[24] = "-";
	int n;

	format_time(elapsed, sizeof(elapsed), elapsed_s);
	if (done > 0 && elapsed_s > 0) {
		double r = done / elapsed_s;

		snprintf(rate, sizeof(rate), "%.1f", r);
		format_time(eta, sizeof(eta), (total - done) / r);
	}
	n = snprintf(buf, size,
	             "\rclimg: %ld/%ld done, %ld failed, %s images/s, %s elapsed, ETA %s\033[K",
	             done, total, failed, rate, elapsed, eta);
	if (n < 0)
		n = 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

// Writes s to stderr, ignoring failures (see the file's comment); err_stderr_lock held.
static void put(const char *s, size_t len)
{
	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, s, len);

		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

// Draws the line (under the lock).
static void draw(struct progress *p, long long now)
{
	char line[256];
	size_t len = progress_format(line, sizeof(line), p->done, p->total, p->failed,
	                             (double)(now - p->start_ns) / 1e9);

	put(line, len);
	p->drawn = true;
	p->last_ns = now;
}

struct progress *progress_new(long total, bool on)
{
	struct progress *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (pthread_mutex_init(&p->lock, NULL) != 0) {
		free(p);
		return NULL;
	}
	p->total = total;
	p->on = on;
	p->start_ns = now_ns();
	return p;
}

void progress_update(struct progress *p, long done, long failed)
{
	long long now;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->done = done;
	p->failed = failed;
	now = now_ns();
	// a redraw waits for no build (the next one comes soon); messages do
	if (p->on && (!p->drawn || now - p->last_ns >= REDRAW_NS || done == p->total) &&
	    err_stderr_trylock()) {
		draw(p, now);
		err_stderr_unlock();
	}
	pthread_mutex_unlock(&p->lock);
}

void progress_message(struct progress *p, const char *msg)
{
	if (!p || !p->on) {
		err_stderr_lock();
		put(msg, strlen(msg));
		put("\n", 1);
		err_stderr_unlock();
		return;
	}
	pthread_mutex_lock(&p->lock);
	err_stderr_lock();
	if (p->drawn)
		put("\r\033[K", 4);
	put(msg, strlen(msg));
	put("\n", 1);
	if (p->drawn)
		draw(p, now_ns());
	err_stderr_unlock();
	pthread_mutex_unlock(&p->lock);
}

void progress_end(struct progress *p)
{
	if (!p)
		return;
	if (p->on && p->drawn) {
		err_stderr_lock();
		put("\r\033[K", 4);
		err_stderr_unlock();
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}
