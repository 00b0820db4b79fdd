// SPDX-License-Identifier: MIT
// Error recording: a failing function calls err_set() and returns -1 (or NULL);
// only main() prints the message and picks the exit status. Messages and warnings are
// always one line of at most 1023 bytes: control characters are escaped (\n, \xHH) and a
// longer message keeps its beginning and end around "...".
#ifndef CLIMG_ERR_H
#define CLIMG_ERR_H

// Records the message (printf-style, lowercase, no full stop, no "climg: " prefix)
// and returns -1, so a failure reads `return err_set("...");`.
int err_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Prepends "PREFIX: " to the recorded message (e.g. a file name) and returns -1.
int err_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// The last message this thread recorded, or "" when none (each thread has its own).
const char *err_msg(void);

// Forgets this thread's message: a caller that has reported its failures itself.
void err_clear(void);

// Prints "climg: warning: MESSAGE" to stderr unless err_quiet is set.
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Held while descriptor 2 is diverted (src/ocl/program.c, a build's compiler output) and
// by every write to stderr that may happen meanwhile on another thread (warn, err_print,
// the progress line and its messages), so that none lands in the diverted text.
void err_stderr_lock(void);
void err_stderr_unlock(void);
// Takes the lock where it is free now (1, else 0), for what may be skipped rather than
// wait on a build.
int err_stderr_trylock(void);

// Writes text to stderr as it is, under err_stderr_lock.
void err_print(const char *text);

extern int err_quiet;

#endif
