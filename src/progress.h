// SPDX-License-Identifier: MIT
// The batch's progress line on stderr, redrawn in place:
//   climg: 37/124 done, 2 failed, 12.3 images/s, 0:03 elapsed, ETA 0:07
// Every function is NULL-safe and thread-safe; a progress that is off draws nothing.
#ifndef CLIMG_PROGRESS_H
#define CLIMG_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

struct progress;

// A progress line for total inputs. on: whether to draw at all (the caller decides: stderr
// is a terminal and not -q, or --progress). NULL when out of memory (then nothing is drawn).
struct progress *progress_new(long total, bool on);

// Records done inputs (failed ones included) of which failed failed, and redraws at most
// about 10 times a second (always when done reaches total).
void progress_update(struct progress *p, long done, long failed);

// Prints msg and a newline on stderr above the line (erased, then redrawn), so messages
// from other threads do not run into it. With p NULL or off, prints msg alone.
void progress_message(struct progress *p, const char *msg);

// Erases the line and frees p.
void progress_end(struct progress *p);

// The line for done of total inputs, failed of them failed, elapsed_s seconds in, into buf
// (size bytes, at least 160): "\rclimg: D/T done, F failed, R images/s, M:SS elapsed, ETA
// M:SS\033[K" (H:MM:SS from an hour; rate and ETA as "-" before the first input is done).
// Returns the length.
size_t progress_format(char *buf, size_t size, long done, long total, long failed,
                       double elapsed_s);

#endif
