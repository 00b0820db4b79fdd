// SPDX-License-Identifier: MIT
// The device of a run, shared by every image of a batch: opened once on a thread of its own
// (while the first images decode), its programs built once, its pinned host memory reused
// from image to image, and dropped once when an automatically chosen device fails, the rest
// of the batch then running on the CPU path. One image uses the device at a time
// (dev_lock): the queue is in order anyway, and the other images decode and encode
// meanwhile.
#ifndef CLIMG_RUN_DEV_H
#define CLIMG_RUN_DEV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct ocl;

struct run_dev_opts {
	const char *spec; // --device or CLIMG_DEVICE; NULL = automatic
	bool cpu;         // --cpu: no device at all
	bool verify;      // --verify: a device is required
	bool profile;     // --time: the queue profiles
	bool no_cache;    // --no-cache
	int pool;         // free pinned blocks kept for later images: the images in flight
	const char *then; // NULL for a run's only device; for one of a set (run_devs.h), what
	                  // the run does without it, for the warning: its failures then drop
	                  // it (unless --verify), even though spec names it
};

struct run_dev;

// Starts opening the device (on a thread of its own; where no thread can be started, now).
// NULL with err set only when out of memory.
struct run_dev *dev_start(const struct run_dev_opts *o);

// Waits until the device is open. Returns it, or NULL when the run goes on on the CPU path
// (--cpu, no device, an automatic device that failed to open or was dropped, each reported
// once with one warning). *failed (may be NULL) is set, with err set, when the run must
// stop: a named device that is missing or fails, or no device for --verify. The device
// may be used only between dev_lock and dev_unlock.
struct ocl *dev_get(struct run_dev *d, bool *failed);

// Whether the device was named (--device, CLIMG_DEVICE) rather than chosen automatically:
// then its failures are errors, not a fallback.
bool dev_named(const struct run_dev *d);

// How long opening took, and when it ended (now_ms clock); 0 where no device was opened.
void dev_open_times(const struct run_dev *d, double *open_ms, double *end_ms);

void dev_lock(struct run_dev *d);
void dev_unlock(struct run_dev *d);

// An automatically chosen device failed on an image: from now on the run uses the CPU path.
// Warns once (with msg), however many images report it. Call with the lock held.
void dev_drop(struct run_dev *d, const char *msg);

// Pinned host memory of at least bytes from the device's pool (kept from earlier images),
// else newly allocated; NULL with err set. Call with the lock held.
void *dev_pinned_get(struct run_dev *d, size_t bytes);

// Frees memory the run got from the device: a dev_pinned_get block goes back to the pool
// (at most a few are kept), anything else through ocl_host_free. NULL-safe; takes the lock
// itself.
void dev_free(struct run_dev *d, void *ptr);

// Waits for the opening thread, frees the pool and closes the device. NULL-safe.
void dev_close(struct run_dev *d);

#endif
