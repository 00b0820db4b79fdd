// SPDX-License-Identifier: MIT
// The device of a run, shared by every image of a batch: opened once on a thread of its own
// (while the first images decode), which then builds the programs the images ask for, each
// once; its pinned host memory reused from image to image; and dropped once when an
// automatically chosen device fails, the rest of the batch then running on the CPU path.
// One image uses the device at a time (dev_lock): the queue is in order anyway, and the
// other images decode, encode or run on the CPU path meanwhile.
#ifndef CLIMG_RUN_DEV_H
#define CLIMG_RUN_DEV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct ocl;
struct ocl_program_id;
struct cost_model;

struct run_dev_opts {
	const char *spec; // --device or CLIMG_DEVICE; NULL = automatic
	bool cpu;         // --cpu: no device at all
	bool verify;      // --verify: a device is required
	bool profile;     // --time: the queue profiles
	bool no_cache;    // --no-cache
	bool lazy;        // the automatic choice: the device opens only once dev_open asks, and
	                  // a run that ends while it still opens or builds does not wait for it
	int pool;         // pinned blocks at most (dev_pinned_get)
	const char *then; // NULL for a run's only device; for one of a set (run_devs.h), what
	                  // the run does without it, for the warning: its failures then drop
	                  // it (unless --verify), even though spec names it
};

struct run_dev;

// Makes the device and, unless o->lazy, starts opening it (on a thread of its own; where
// no thread can be started, now). NULL with err set only when out of memory.
struct run_dev *dev_start(const struct run_dev_opts *o);

// A lazy device starts opening now, unless it did already.
void dev_open(struct run_dev *d);

// Waits until the device is open. Returns it, or NULL when the run goes on on the CPU path
// (--cpu, no device, an automatic device that failed to open or was dropped, each reported
// once with one warning, or one never asked to open). *failed (may be NULL) is set, with err set, when the run must
// stop: a named device that is missing or fails, or no device for --verify. The device
// may be used only between dev_lock and dev_unlock.
struct ocl *dev_get(struct run_dev *d, bool *failed);

// Asks for programs: the device's thread builds each that is not built yet, in order, once
// the device is open (from the binary cache where it holds them). A build that fails ends
// the device as a failure in dev_get does (dropped with a warning, or for a named device
// an error whose build log dev_build_log holds).
void dev_request(struct run_dev *d, const struct ocl_program_id *p, int n);

// Waits until the device is open and programs p are built (dev_request first): the device,
// or NULL as dev_get.
struct ocl *dev_ready(struct run_dev *d, const struct ocl_program_id *p, int n, bool *failed);

// What the device is doing now, for the automatic choice: whether it was asked to open,
// has opened, and is usable (not failed, dropped or missing); ms since it started opening;
// for each of programs p whether it is still to be built (unbuilt, n entries); and the
// device time the images that took it and have not left it expect (dev_queue).
struct dev_status {
	bool started, opened, usable;
	bool failed; // not usable, and the run must stop (dev_get reports why)
	double opening_ms;
	double queue_ms;
};
void dev_status(struct run_dev *d, const struct ocl_program_id *p, int n, bool *unbuilt,
		struct dev_status *st);

// An image takes the device for about ms (> 0), or gives it back (< 0, the same ms).
void dev_queue(struct run_dev *d, double ms);

// The build time of programs p (as built for the run, wherever built) and how many came
// from the binary cache, for --time.
void dev_build_times(struct run_dev *d, const struct ocl_program_id *p, int n, double *ms,
		     int *cached);

// The build log of the failed build that ended a named device, or NULL.
const char *dev_build_log(struct run_dev *d);

// Folds what the device measured so far (its opening, each program's build; each once)
// into m, where the device is the one the automatic choice opens (ocl_is_default), however
// it was named: m becomes this device's model. Returns whether it did (what runs on the
// device may then teach m).
bool dev_learn(struct run_dev *d, struct cost_model *m);

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

// Pinned host memory of at least bytes from the device's pool of at most o.pool blocks:
// a free block that fits, else a new one (replacing a free one too small when the pool is
// full), as large as the largest block. When every block is busy: with wait,
// waits for one (the caller must hold none, or it may wait for itself); without, NULL
// (err untouched). NULL with err set where the memory cannot be had. Call with the lock
// held.
void *dev_pinned_get(struct run_dev *d, size_t bytes, bool wait);

// Whether ptr is one of the pool's blocks. Takes the lock itself.
bool dev_pinned_is(struct run_dev *d, const void *ptr);

// Frees memory the run got from the device: a dev_pinned_get block goes back to the pool
// (and a waiting dev_pinned_get takes it), anything else through ocl_host_free. NULL-safe;
// takes the lock itself.
void dev_free(struct run_dev *d, void *ptr);

// Ends the device's thread, frees the pool and closes the device. NULL-safe. A lazy device
// that still opens or builds is left to its thread instead (the process is to end without
// waiting for it: run_left_behind).
void dev_close(struct run_dev *d);

// Whether dev_close left a device's thread running: the process must then end with _exit,
// as exit would run the driver's destructors under that thread.
bool dev_left_behind(void);

#endif
