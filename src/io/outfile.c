// SPDX-License-Identifier: MIT
// Atomic output files. A regular (or new) file is written as a temporary file in the same
// directory (".NAME.climg-XXXXXX") and renamed over NAME on commit, so a failure or an
// interrupt never leaves a half-written image and the old file survives. "-" (stdout) and
// existing non-regular files (/dev/null, FIFOs, terminals) are written directly.
//
// Temporary files are listed in a registry of TMP_SLOTS paths, shared by every thread;
// SIGINT, SIGTERM and SIGHUP handlers unlink them and re-raise the signal with the default
// action. The handlers are installed once, with the first temporary file, and only over a
// default disposition (a signal the parent set to "ignore", as nohup does, stays ignored).
//
// The SHA-256 of what is written (outfile_sum_on) comes from nettle: a small, well-kept
// library made for exactly such primitives (LGPL, in every Debian release), where
// OpenSSL's libcrypto would be a far larger dependency for one hash.
// realpath() is XSI; -D_POSIX_C_SOURCE alone does not declare it.
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../err.h"
#include "codec.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define OUT_BUF_BYTES ((size_t)1 << 16)

// Largest single write(2); Linux writes at most about 2 GiB per call anyway.
#define WRITE_MAX ((size_t)1 << 30)

struct outfile {
	char *name;     // for messages: the path as given, "stdout" for "-"
	char *target;   // the final path (symlinks resolved); NULL when writing directly
	char *tmp;      // the temporary path; NULL when writing directly
	int fd;         // -1 once closed
	int owns_fd;    // close fd when done (not for stdout)
	int slot;       // registry slot of tmp, -1 if none
	int write_err;  // errno of the first failed write, 0 if none
	size_t used;    // bytes waiting in buf
	uint64_t bytes; // bytes passed to outfile_write so far
	int summing;    // outfile_sum_on was called: sha covers what was written since
	struct sha256_ctx sha;
	uint8_t buf[OUT_BUF_BYTES];
};

// ---- temporary file registry and signal handlers ------------------------------------

// Slot states: TMP_FREE; TMP_FILLING while a thread writes a path into it (the handler
// skips it); TMP_LIVE once the path is complete (the handler unlinks it). Threads claim a
// free slot with a compare-and-swap. _Atomic int is lock-free on every platform we build
// for, which makes it async-signal-safe. 1024 slots cover a batch's images in flight with
// their side outputs; the paths are static, and pages never touched cost no memory.
//
// Creating a file and registering it is not one step. A thread does both with the cleanup
// signals blocked, between tmp_creating++ and tmp_creating--, and only while tmp_stopping
// is 0; the handler sets tmp_stopping, then waits until tmp_creating is 0 (the threads it
// waits for have those signals blocked, so they run on and finish the step), then unlinks
// every live slot. Both sides use sequentially consistent atomics, so either the thread
// sees tmp_stopping and creates nothing, or the handler sees its step and waits for it:
// no temporary file is ever left behind, whichever thread takes the signal.
#define TMP_SLOTS 1024
enum { TMP_FREE = 0, TMP_LIVE = 1, TMP_FILLING = 2 };
static _Atomic int tmp_state[TMP_SLOTS];
static char tmp_paths[TMP_SLOTS][PATH_MAX];
static _Atomic int tmp_creating;
static _Atomic int tmp_stopping;
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void on_signal(int sig)
{
	int saved = errno;
	int i;

	atomic_store(&tmp_stopping, 1);
	while (atomic_load(&tmp_creating) > 0)
		;
	for (i = 0; i < TMP_SLOTS; i++)
		if (atomic_load(&tmp_state[i]) == TMP_LIVE)
			unlink(tmp_paths[i]);
	// The signal is blocked while its handler runs: raise() leaves it pending and it is
	// delivered, with the default action, when the handler returns.
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

static void install_handlers(void)
{
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); i++)
		sigaddset(&sa.sa_mask, cleanup_signals[i]);
	for (i = 0; i < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); i++) {
		if (sigaction(cleanup_signals[i], NULL, &old) != 0)
			continue;
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
			sigaction(cleanup_signals[i], &sa, NULL);
	}
}

// Registers path (called between tmp_creating++ and tmp_creating--); the slot number, or
// -1 with err set when all are taken.
static int tmp_register(const char *path, const char *name)
{
	int i;

	if (strlen(path) >= PATH_MAX)
		return err_set("%s: cannot create temporary file: %s", name,
		               strerror(ENAMETOOLONG));
	for (i = 0; i < TMP_SLOTS; i++) {
		int expected = TMP_FREE;

		if (!atomic_compare_exchange_strong(&tmp_state[i], &expected, TMP_FILLING))
			continue;
		strcpy(tmp_paths[i], path);
		atomic_store(&tmp_state[i], TMP_LIVE);
		return i;
	}
	return err_set("%s: too many output files open at once (at most %d)", name, TMP_SLOTS);
}

static void tmp_unregister(int slot)
{
	if (slot >= 0)
		atomic_store(&tmp_state[slot], TMP_FREE);
}

// ---- helpers -------------------------------------------------------------------------

static mode_t umask_value;

// Reads the process umask into umask_value without changing it where the system allows
// (Linux 4.7+ reports it in /proc/self/status); otherwise sets and restores it at once.
static void read_umask(void)
{
	FILE *fp;
	char line[128];

	fp = fopen("/proc/self/status", "r");
	if (fp) {
		while (fgets(line, sizeof(line), fp)) {
			char *end;
			unsigned long v;

			if (strncmp(line, "Umask:", 6) != 0)
				continue;
			errno = 0;
			v = strtoul(line + 6, &end, 8);
			if (errno == 0 && end != line + 6 && v <= 0777) {
				fclose(fp);
				umask_value = (mode_t)v;
				return;
			}
			break;
		}
		fclose(fp);
	}
	umask_value = umask(022);
	umask(umask_value);
}

// The process umask, read once (threads open outputs concurrently).
static mode_t current_umask(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, read_umask);
	return umask_value;
}

// "dir/.base.climg-XXXXXX" for target "dir/base". NULL with err set.
static char *tmp_template(const char *target, const char *name)
{
	const char *slash = strrchr(target, '/');
	size_t dirlen = slash ? (size_t)(slash - target) + 1 : 0;
	const char *base = target + dirlen;
	size_t baselen = strlen(base);
	char *t;

	// Leave room in NAME_MAX (255 on Linux) for ".", ".climg-XXXXXX".
	if (baselen > 200)
		baselen = 200;
	t = malloc(dirlen + baselen + 32);
	if (!t) {
		err_set("%s: out of memory", name);
		return NULL;
	}
	memcpy(t, target, dirlen);
	t[dirlen] = '.';
	memcpy(t + dirlen + 1, base, baselen);
	strcpy(t + dirlen + 1 + baselen, ".climg-XXXXXX");
	return t;
}

// Records why the temporary file beside target (for the output named path) could not be
// made, e the errno of mkstemp: a missing directory is named as such.
static void create_error(const char *path, const char *target, int e)
{
	const char *slash = strrchr(target, '/');
	int dirlen = !slash ? 1 : slash == target ? 1 : (int)(slash - target);
	const char *dir = slash ? target : ".";
	if (e == ENOENT)
		err_set("%s: directory '%.*s' does not exist", path, dirlen, dir);
	else if (e == ENOTDIR)
		err_set("%s: '%.*s' is not a directory (a part of that path is a file)", path,
		        dirlen, dir);
	else
		err_set("%s: cannot create temporary file: %s", path, strerror(e));
}

static void outfile_free(struct outfile *f)
{
	if (!f)
		return;
	if (f->owns_fd && f->fd >= 0)
		close(f->fd);
	if (f->tmp) {
		unlink(f->tmp);
		tmp_unregister(f->slot);
	}
	free(f->tmp);
	free(f->target);
	free(f->name);
	free(f);
}

// ---- the interface -------------------------------------------------------------------

const char *outfile_name(const struct outfile *f)
{
	return f->name;
}

struct outfile *outfile_open(const char *path)
{
	struct outfile *f = NULL;
	sigset_t block, saved_mask;
	struct stat st;
	mode_t mode;

	if (!path || !*path) {
		err_set("the output name is empty");
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		err_set("%s: out of memory", path);
		return NULL;
	}
	f->fd = -1;
	f->slot = -1;
	f->name = strdup(strcmp(path, "-") == 0 ? "stdout" : path);
	if (!f->name) {
		err_set("%s: out of memory", path);
		goto fail;
	}

	if (strcmp(path, "-") == 0) {
		// Anything already buffered by stdio goes first.
		if (fflush(stdout) != 0) {
			err_set("stdout: cannot write: %s", strerror(errno));
			goto fail;
		}
		f->fd = STDOUT_FILENO;
		return f;
	}

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			err_set("%s: is a directory", path);
			goto fail;
		}
		if (!S_ISREG(st.st_mode)) {
			// /dev/null, a FIFO, a terminal: write straight into it (opening a
			// FIFO waits for a reader, as a shell redirection would).
			do
				f->fd = open(path, O_WRONLY | O_CLOEXEC);
			while (f->fd < 0 && errno == EINTR);
			if (f->fd < 0) {
				err_set("%s: cannot open: %s", path, strerror(errno));
				goto fail;
			}
			f->owns_fd = 1;
			return f;
		}
		// Replacing a file keeps its permission bits (a private image stays private);
		// through a symlink the link's target is replaced, as "> path" would write it.
		mode = st.st_mode & 0777;
		f->target = realpath(path, NULL);
		if (!f->target) {
			err_set("%s: cannot resolve the path: %s", path, strerror(errno));
			goto fail;
		}
	} else if (errno == ENOENT) {
		mode = 0666 & ~current_umask();
		f->target = strdup(path);
		if (!f->target) {
			err_set("%s: out of memory", path);
			goto fail;
		}
	} else {
		err_set("%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}

	f->tmp = tmp_template(f->target, path);
	if (!f->tmp)
		goto fail;
	pthread_once(&handlers_once, install_handlers);
	// A signal between creating the file and registering it would leave the file
	// behind: see the registry's comment.
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); i++)
		sigaddset(&block, cleanup_signals[i]);
	pthread_sigmask(SIG_BLOCK, &block, &saved_mask);
	atomic_fetch_add(&tmp_creating, 1);
	if (atomic_load(&tmp_stopping)) {
		// a signal is being handled: the process is about to end
		err_set("%s: cannot create temporary file: interrupted", path);
		f->fd = -1;
	} else {
		f->fd = mkstemp(f->tmp);
		if (f->fd < 0)
			create_error(path, f->target, errno);
		else
			f->slot = tmp_register(f->tmp, path);
		if (f->fd >= 0 && f->slot < 0) {
			unlink(f->tmp);
			close(f->fd);
			f->fd = -1;
		}
	}
	atomic_fetch_sub(&tmp_creating, 1);
	pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
	if (f->fd < 0) {
		free(f->tmp);
		f->tmp = NULL; // nothing to unlink
		goto fail;
	}
	f->owns_fd = 1;
	if (fchmod(f->fd, mode) != 0) {
		err_set("%s: cannot set the temporary file's permissions: %s", path,
		        strerror(errno));
		goto fail;
	}
	return f;
fail:
	outfile_free(f);
	return NULL;
}

// Writes len bytes straight to the descriptor; -1 with err set.
static int write_fd(struct outfile *f, const uint8_t *p, size_t len)
{
	if (f->write_err)
		return err_set("%s: cannot write: %s", f->name, strerror(f->write_err));
	while (len > 0) {
		ssize_t n = write(f->fd, p, len < WRITE_MAX ? len : WRITE_MAX);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			f->write_err = errno;
			return err_set("%s: cannot write: %s", f->name, strerror(errno));
		}
		if (n == 0) { // not expected from write(2) on a file; do not spin
			f->write_err = EIO;
			return err_set("%s: cannot write: %s", f->name, strerror(EIO));
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int flush_buf(struct outfile *f)
{
	size_t n = f->used;

	f->used = 0;
	return write_fd(f, f->buf, n);
}

int outfile_write(struct outfile *f, const void *data, size_t len)
{
	const uint8_t *p = data;

	f->bytes += len;
	if (f->summing)
		sha256_update(&f->sha, len, p);

	if (f->write_err)
		return write_fd(f, NULL, 0);
	if (len <= OUT_BUF_BYTES - f->used) {
		memcpy(f->buf + f->used, p, len);
		f->used += len;
		return 0;
	}
	if (flush_buf(f) != 0)
		return -1;
	if (len >= OUT_BUF_BYTES)
		return write_fd(f, p, len);
	memcpy(f->buf, p, len);
	f->used = len;
	return 0;
}

void outfile_sum_on(struct outfile *f)
{
	sha256_init(&f->sha);
	f->summing = 1;
}

int outfile_commit_sum(struct outfile *f, struct outfile_sum *sum)
{
	if (sum) {
		memset(sum, 0, sizeof(*sum));
		sum->bytes = f->bytes;
		if (f->summing)
			sha256_digest(&f->sha, SHA256_DIGEST_SIZE, sum->sha256);
	}
	return outfile_commit(f);
}

int outfile_commit(struct outfile *f)
{
	int fd;

	if (flush_buf(f) != 0)
		goto fail;
	if (f->owns_fd) {
		fd = f->fd;
		f->fd = -1;
		if (close(fd) != 0) {
			err_set("%s: cannot write: %s", f->name, strerror(errno));
			goto fail;
		}
	}
	if (f->tmp) {
		if (rename(f->tmp, f->target) != 0) {
			err_set("%s: cannot rename the temporary file into place: %s", f->name,
			        strerror(errno));
			goto fail;
		}
		tmp_unregister(f->slot);
		free(f->tmp);
		f->tmp = NULL;
	}
	outfile_free(f);
	return 0;
fail:
	outfile_free(f);
	return -1;
}

void outfile_abort(struct outfile *f)
{
	outfile_free(f);
}
