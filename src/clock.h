// SPDX-License-Identifier: MIT
// now_ms: a monotonic clock in milliseconds, for the timings --time and the benchmark print.
// Only differences between two readings mean anything.
#ifndef CLIMG_CLOCK_H
#define CLIMG_CLOCK_H

#include <time.h>

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#endif
