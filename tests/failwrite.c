// SPDX-License-Identifier: MIT
// failwrite.so: an LD_PRELOAD shim for tests/t-hostile.sh that makes writes to regular
// files fail the way a full disk does, without a full disk.
//   FAILWRITE_AFTER=N    once N bytes have gone to regular files, write(2) writes what is
//                        left of the N and then fails with ENOSPC
//   FAILWRITE_SIGNAL=S   instead of failing, raise signal S at that point (an interrupt
//                        in the middle of a long write)
// Other descriptors (pipes, terminals, devices) are left alone.
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static long long env_ll(const char *name, long long dflt)
{
	const char *s = getenv(name);
	return s && *s ? atoll(s) : dflt;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	static ssize_t (*real_write)(int, const void *, size_t);
	static long long written;
	long long after = env_ll("FAILWRITE_AFTER", -1);
	struct stat st;

	if (!real_write)
		real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (after < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return real_write(fd, buf, len);
	if (written + (long long)len > after) {
		int sig = (int)env_ll("FAILWRITE_SIGNAL", 0);
		size_t room = written < after ? (size_t)(after - written) : 0;

		if (sig > 0) {
			raise(sig);
			return real_write(fd, buf, len); // the signal was ignored or handled
		}
		if (room == 0) {
			errno = ENOSPC;
			return -1;
		}
		len = room;
	}
	ssize_t n = real_write(fd, buf, len);
	if (n > 0)
		written += n;
	return n;
}
