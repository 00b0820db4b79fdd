// SPDX-License-Identifier: MIT
// The program binary cache. Compiling OpenCL C costs tens to hundreds of milliseconds a
// program even when the driver keeps its own cache, so ocl_build keeps each program's device
// binary (what CL_PROGRAM_BINARIES gives) in a file and later runs build from that:
//   DIR/NAME-HHHHHHHHHHHHHHHH.clbin
// DIR is the cache directory (src/cachedir.h: $CLIMG_CACHE_DIR, else $XDG_CACHE_HOME/climg,
// else $HOME/.cache/climg; missing directories are created with mode 0700). NAME is the program (kernels/NAME.cl) and H, in hex, the 64-bit
// FNV-1a hash (offset basis 0xcbf29ce484222325, prime 0x100000001b3, over bytes) of the
// device's identity followed by the program's build options: one file per (device, kernel
// family, program, channel count), so a changed kernel source replaces its old entry instead
// of piling up beside it, and a process that runs the other family (tests/kernels,
// tools/bench --kernels) or other channel counts does not overwrite the usual one.
//
// The key of an entry is the text
//   "climg program cache 1\nplatform: P\nplatform version: PV\ndevice: D\n"
//   "device version: DV\ndriver version: V\n"                   (the identity, hashed for H)
//   "options: BUILD_OPTIONS\nprogram: NAME\n\n" followed by the full kernel source.
// A file is a 40-byte header in the machine's byte order, the key, then the binary:
//   8 bytes  "CLIMGPB1" (magic and format version)
//   u64      key bytes;  u64 binary bytes (the file is exactly 40 + both long)
//   u64      FNV-1a 64 of the key;  u64 FNV-1a 64 of the binary
// An entry is used only when all of that checks out, its key equals ours byte for byte (so
// neither a hash collision nor a stale entry - other source, options or driver - can load
// a wrong program) and the driver builds the binary. Anything else - a missing, short,
// corrupt or stale file, a binary the driver refuses - builds from source, silently, and
// rewrites the entry. Entries are written to a temporary file in DIR and renamed over the
// old one, so concurrent processes each read a whole entry or none, and two building the
// same program at once both succeed (the last rename wins; both wrote the same program).
// There is no fsync: an entry torn by a crash fails its checks and is rebuilt.
//
// The cache never fails a run: a directory that cannot be created or written is ignored.
// It is also ignored when DIR is not owned by the user or is writable by group or others
// (whoever can write it could make climg run their device code; cachedir_get), and while any test-only
// CLIMG_FAULT_* switch is set, so that the fault-injection call counts and forced build
// failures are the same on every run. The driver calls made for the cache are not counted
// by CALL() for the same reason.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cachedir.h"
#include "ocl_impl.h"

static const char cache_magic[8] = "CLIMGPB1";

struct cache_header {
	char magic[8];
	uint64_t key_bytes, bin_bytes;
	uint64_t key_hash, bin_hash;
};
_Static_assert(sizeof(struct cache_header) == 40, "the header is 40 bytes, no padding");

// An entry's largest size; anything bigger is not one of ours.
#define CACHE_MAX_BYTES ((uint64_t)256 << 20)

// The key and file of one program's entry.
struct ocl_cache_key {
	char *text; // the key (see above), not NUL-terminated in files
	size_t len;
	char *path; // DIR/NAME-H.clbin
};

static uint64_t fnv1a64(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3u;
	}
	return h;
}

#define FNV1A64_BASIS 0xcbf29ce484222325u

// A newly allocated string "A" "B" "C" (b, c may be NULL), or NULL.
static char *str_join(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0, lc = c ? strlen(c) : 0;
	char *s = malloc(la + lb + lc + 1);

	if (!s)
		return NULL;
	memcpy(s, a, la);
	memcpy(s + la, b ? b : "", lb);
	memcpy(s + la + lb, c ? c : "", lc + 1);
	return s;
}

// The cache directory, created if missing, and the device identity, looked up at the first
// build. Leaves o->cache_dir NULL when there is no usable directory (the cache is off).
static void cache_prepare(struct ocl *o)
{
	static const char id_format[] = "climg program cache 1\nplatform: %s\n"
	                                "platform version: %s\ndevice: %s\ndevice version: %s\n"
	                                "driver version: %s\n";
	char *dir = NULL, *val[5] = {NULL}, *id = NULL;
	int len;

	o->cache_ready = true;
	if (ocl_fault_set())
		return;
	if (!(dir = cachedir_get()))
		goto done;
	// A failing query records err; the cache is then off and the run goes on (only a
	// later failure's message is ever printed).
	if (!(val[0] = ocl_info_str(o->platform, NULL, CL_PLATFORM_NAME)) ||
	    !(val[1] = ocl_info_str(o->platform, NULL, CL_PLATFORM_VERSION)) ||
	    !(val[2] = ocl_info_str(NULL, o->device, CL_DEVICE_NAME)) ||
	    !(val[3] = ocl_info_str(NULL, o->device, CL_DEVICE_VERSION)) ||
	    !(val[4] = ocl_info_str(NULL, o->device, CL_DRIVER_VERSION)))
		goto done;
	len = snprintf(NULL, 0, id_format, val[0], val[1], val[2], val[3], val[4]);
	if (len < 0 || !(id = malloc((size_t)len + 1)))
		goto done;
	snprintf(id, (size_t)len + 1, id_format, val[0], val[1], val[2], val[3], val[4]);
	o->cache_id = id;
	o->cache_dir = dir;
	id = dir = NULL;
done:
	for (int i = 0; i < 5; i++)
		free(val[i]);
	free(id);
	free(dir);
}

void ocl_cache_key_free(struct ocl_cache_key *k)
{
	if (!k)
		return;
	free(k->text);
	free(k->path);
	free(k);
}

// The key and file of program `name` with source `source` and build options `opts`, or NULL
// when the cache is off (or memory is short: the program is then simply built from source).
struct ocl_cache_key *ocl_cache_key_new(struct ocl *o, const char *name, const char *opts,
					const char *source)
{
	struct ocl_cache_key *k;
	char hex[17];
	int len;

	if (!o->cache_on)
		return NULL;
	if (!o->cache_ready)
		cache_prepare(o);
	if (!o->cache_dir || !(k = calloc(1, sizeof *k)))
		return NULL;
	snprintf(hex, sizeof hex, "%016llx",
	         (unsigned long long)fnv1a64(fnv1a64(FNV1A64_BASIS, o->cache_id,
	                                             strlen(o->cache_id)),
	                                     opts, strlen(opts)));
	// (ocl_cache_ident and ocl_cache_file_of compute the same name in two steps)
	len = snprintf(NULL, 0, "%soptions: %s\nprogram: %s\n\n%s", o->cache_id, opts, name,
	               source);
	if (len < 0 || !(k->text = malloc((size_t)len + 1)) ||
	    !(k->path = malloc(strlen(o->cache_dir) + strlen(name) + 32))) {
		ocl_cache_key_free(k);
		return NULL;
	}
	snprintf(k->text, (size_t)len + 1, "%soptions: %s\nprogram: %s\n\n%s", o->cache_id, opts,
	         name, source);
	k->len = (size_t)len;
	sprintf(k->path, "%s/%s-%s.clbin", o->cache_dir, name, hex);
	return k;
}

// Reads the whole regular file path (at most CACHE_MAX_BYTES) into *data (caller frees).
// 0 or -1.
static int file_read(const char *path, unsigned char **data, size_t *n)
{
	unsigned char *buf = NULL;
	struct stat st;
	size_t got = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*data = NULL;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > CACHE_MAX_BYTES || !(buf = malloc((size_t)st.st_size)))
		goto fail;
	while (got < (size_t)st.st_size) {
		r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			goto fail;
		got += (size_t)r;
	}
	close(fd);
	*data = buf;
	*n = got;
	return 0;
fail:
	free(buf);
	close(fd);
	return -1;
}

// The program built (with options opts) from the cached binary of k, or NULL (no entry, a bad
// or stale one, or the driver refused it): the caller then builds from source. Never sets err.
cl_program ocl_cache_load(struct ocl *o, const struct ocl_cache_key *k, const char *opts)
{
	unsigned char *file = NULL;
	const unsigned char *bin;
	struct cache_header h;
	size_t n = 0, bin_bytes;
	cl_program prog = NULL;
	cl_int e = CL_SUCCESS, status = CL_SUCCESS;

	if (!k || file_read(k->path, &file, &n) < 0 || n < sizeof h)
		goto fail;
	memcpy(&h, file, sizeof h);
	// The lengths first, so the comparisons below stay inside the file.
	if (memcmp(h.magic, cache_magic, sizeof h.magic) || h.key_bytes != k->len ||
	    n - sizeof h < k->len || h.bin_bytes == 0 || h.bin_bytes != n - sizeof h - k->len ||
	    h.key_hash != fnv1a64(FNV1A64_BASIS, k->text, k->len) ||
	    memcmp(file + sizeof h, k->text, k->len))
		goto fail;
	bin = file + sizeof h + k->len;
	bin_bytes = (size_t)h.bin_bytes;
	if (h.bin_hash != fnv1a64(FNV1A64_BASIS, bin, bin_bytes))
		goto fail;
	prog = clCreateProgramWithBinary(o->ctx, 1, &o->device, &bin_bytes, &bin, &status, &e);
	if (!prog || e != CL_SUCCESS || status != CL_SUCCESS ||
	    clBuildProgram(prog, 1, &o->device, opts, NULL, NULL) != CL_SUCCESS)
		goto fail;
	free(file);
	return prog;
fail:
	RELEASE(clReleaseProgram, prog);
	free(file);
	return NULL;
}

// Writes all n bytes of data to fd. 0 or -1.
static int write_all(int fd, const void *data, size_t n)
{
	const unsigned char *p = data;
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

// Held while an entry is written; once ended is set no entry is written any more
// (ocl_cache_end), so that the process can end while a build runs on.
static pthread_mutex_t store_mu = PTHREAD_MUTEX_INITIALIZER;
static bool store_ended;

void ocl_cache_end(void)
{
	pthread_mutex_lock(&store_mu);
	store_ended = true;
	pthread_mutex_unlock(&store_mu);
}

// Writes prog's binary as the entry of k, through a temporary file renamed into place.
// Best effort: any failure leaves the cache as it was and is not reported.
void ocl_cache_store(const struct ocl_cache_key *k, cl_program prog)
{
	struct cache_header h = {.key_bytes = k ? k->len : 0};
	unsigned char *bin = NULL;
	size_t bin_bytes = 0;
	char *tmp = NULL;
	bool tmp_made = false;
	int fd = -1;

	pthread_mutex_lock(&store_mu);
	if (!k || store_ended ||
	    clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bin_bytes, &bin_bytes, NULL) !=
	        CL_SUCCESS ||
	    bin_bytes == 0 || bin_bytes > CACHE_MAX_BYTES - sizeof h - k->len ||
	    !(bin = malloc(bin_bytes)) ||
	    clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS)
		goto done;
	memcpy(h.magic, cache_magic, sizeof h.magic);
	h.bin_bytes = bin_bytes;
	h.key_hash = fnv1a64(FNV1A64_BASIS, k->text, k->len);
	h.bin_hash = fnv1a64(FNV1A64_BASIS, bin, bin_bytes);
	if (!(tmp = str_join(k->path, ".tmp.XXXXXX", NULL)) || (fd = mkstemp(tmp)) < 0)
		goto done;
	tmp_made = true;
	if (write_all(fd, &h, sizeof h) < 0 || write_all(fd, k->text, k->len) < 0 ||
	    write_all(fd, bin, bin_bytes) < 0)
		goto done;
	if (close(fd) < 0) {
		fd = -1;
		goto done;
	}
	fd = -1;
	if (rename(tmp, k->path) == 0)
		tmp_made = false;
done:
	if (fd >= 0)
		close(fd);
	if (tmp_made)
		unlink(tmp);
	pthread_mutex_unlock(&store_mu);
	free(tmp);
	free(bin);
}

void ocl_set_cache(struct ocl *o, bool on)
{
	o->cache_on = on;
}

uint64_t ocl_cache_ident(struct ocl *o)
{
	uint64_t h;
	if (!o->cache_on)
		return 0;
	if (!o->cache_ready)
		cache_prepare(o);
	if (!o->cache_dir)
		return 0;
	h = fnv1a64(fnv1a64(FNV1A64_BASIS, o->cache_id, strlen(o->cache_id)), o->build_opts,
		    strlen(o->build_opts));
	return h ? h : 1;
}

char *ocl_cache_file_of(uint64_t ident, const char *name, int ch)
{
	const char *opt = ocl_program_ch_option(ch);
	char *dir, *path;

	if (!ident || !*opt || !(dir = cachedir_find()))
		return NULL;
	path = malloc(strlen(dir) + strlen(name) + 32);
	if (path)
		sprintf(path, "%s/%s-%016llx.clbin", dir, name,
			(unsigned long long)fnv1a64(ident, opt, strlen(opt)));
	free(dir);
	return path;
}
