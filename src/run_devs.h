// SPDX-License-Identifier: MIT
// The devices of a run (one struct run_dev each) and which of them takes each image.
// Without --devices the set holds one device, named by --device or chosen automatically,
// and every image goes to it (or, once it is dropped, to the CPU path), as before sets.
// With --devices (or CLIMG_DEVICES) the set holds every device listed, each opened on its
// own thread with its own queue, programs and pinned pool. An image goes to the device
// with the fewest images taken and not yet through their stages (the first listed on a
// tie), so a faster device takes more images and a slower one fewer; a device that fails
// is dropped with one warning and the image redone on another, on the CPU path once none
// is left. With "all" the CPU path is a worker too: see devs_enter. Every device gives
// the same bytes, so where an image goes changes only when it is done.
#ifndef CLIMG_RUN_DEVS_H
#define CLIMG_RUN_DEVS_H

#include <stdbool.h>
#include <stddef.h>

#include "run_dev.h"

struct run_devs;

// Opens the devices (each on a thread of its own): list is --devices ("all", or numbers
// from --list-devices and parts of device names, comma-separated), else NULL for the one
// device of o. NULL with err set: *usage set for a list that is malformed, names a device
// twice or names one that is not there (found before any work), else out of memory.
struct run_devs *devs_start(const struct run_dev_opts *o, const char *list, bool *usage);

// Whether the set came from --devices: then reports name each device with its number.
bool devs_multi(const struct run_devs *s);

// The set's devices, and into buf (n bytes) a label for device slot i: "N: NAME" with its
// number N from --list-devices where it has opened, else "N: not opened". Slot -1 is the
// CPU path: "cpu".
int devs_count(const struct run_devs *s);
void devs_label(struct run_devs *s, int slot, char *buf, size_t n);

// A device for an image, without waiting for it to open (the image decodes meanwhile; its
// dev_ready waits): the one with the fewest images taken, skipping any dropped (a failure
// that stops the run is left for the image to report). *slot gets its slot. An image whose
// device then turns out unusable takes another (devs_give, devs_take). NULL (slot -1) once
// every device of a --devices set is dropped: the CPU path, said once with a warning.
// Without --devices, always the set's one device (dev_get says whether it is usable). Give
// it back with devs_give once the image's stages are done.
struct run_dev *devs_take(struct run_devs *s, int *slot);
void devs_give(struct run_devs *s, int slot);

// Drops device slot after it failed on an image (msg says how), one warning however many
// images report it. Call with its lock held.
void devs_drop(struct run_devs *s, int slot, const char *msg);

// Before an image's stages on device slot: true to run them there (counted as waiting for
// the device until devs_leave), false to run them on the CPU path instead. With "all", the
// CPU path takes the image when others are ahead of it on the device and the wait behind
// them is expected to be longer than the CPU path's time for it: each estimate is the mean
// time per pixel measured so far on that device and on the CPU path (the first image the
// CPU path would take is its trial run, one at a time). Deterministic in bytes either way.
bool devs_enter(struct run_devs *s, int slot, double pixels);
// After the stages: ms the device (or with slot -1 the CPU path, entered or not) spent on
// them, 0 when they failed.
void devs_leave(struct run_devs *s, int slot, double ms, double pixels);

// Waits for every opening thread, frees the pools, closes the devices. NULL-safe.
void devs_close(struct run_devs *s);

#endif
