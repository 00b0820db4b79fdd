// SPDX-License-Identifier: MIT
// Host memory for images, kept for the next image of a batch (hostmem.h).
#define _DEFAULT_SOURCE // malloc_usable_size
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "hostmem.h"

// Smaller blocks are not worth a slot; more are not kept (a batch holds two or three blocks
// an image in flight, and at most one image in flight per core).
#define KEEP_FROM ((size_t)64 << 10)
#define KEEP_SLOTS 128

struct kept {
	void *p;
	size_t bytes; // usable bytes, whole pages
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct kept kept[KEEP_SLOTS];
static int nkept;
static size_t kept_bytes, limit;

static size_t page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);
	return page > 0 ? (size_t)page : 4096;
}

static void drop(int i)
{
	kept_bytes -= kept[i].bytes;
	kept[i] = kept[--nkept];
}

// Frees the smallest kept blocks until `more` bytes fit under the limit. Under mu; the
// blocks to free go into out (at most KEEP_SLOTS), freed once mu is let go.
static int make_room(size_t more, void **out)
{
	int n = 0;
	while (nkept > 0 && (kept_bytes + more > limit || nkept == KEEP_SLOTS)) {
		int s = 0;
		for (int i = 1; i < nkept; i++)
			if (kept[i].bytes < kept[s].bytes)
				s = i;
		out[n++] = kept[s].p;
		drop(s);
	}
	return n;
}

void *hostmem_get(size_t bytes, bool *fresh)
{
	size_t page = page_size();
	void *p = NULL;
	int best = -1;

	if (bytes > SIZE_MAX - page)
		return NULL;
	bytes = bytes ? (bytes + page - 1) / page * page : page;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nkept; i++) // the smallest that fits
		if (kept[i].bytes >= bytes && (best < 0 || kept[i].bytes < kept[best].bytes))
			best = i;
	if (best >= 0) {
		p = kept[best].p;
		drop(best);
	}
	pthread_mutex_unlock(&mu);
	if (fresh)
		*fresh = !p;
	if (!p && posix_memalign(&p, page, bytes))
		p = NULL;
	return p;
}

void hostmem_put(void *p)
{
	void *out[KEEP_SLOTS + 1];
	size_t bytes = 0, page = page_size();
	int n = 0;

	if (!p)
		return;
#ifdef __GLIBC__
	bytes = malloc_usable_size(p) / page * page;
#endif
	pthread_mutex_lock(&mu);
	if (bytes >= KEEP_FROM && bytes <= limit && (uintptr_t)p % page == 0) {
		n = make_room(bytes, out);
		kept[nkept++] = (struct kept){ p, bytes };
		kept_bytes += bytes;
	} else {
		out[n++] = p;
	}
	pthread_mutex_unlock(&mu);
	while (n > 0)
		free(out[--n]);
}

void hostmem_keep(size_t bytes)
{
	void *out[KEEP_SLOTS];
	int n;

	pthread_mutex_lock(&mu);
	limit = bytes;
	n = make_room(0, out);
	pthread_mutex_unlock(&mu);
	while (n > 0)
		free(out[--n]);
}
