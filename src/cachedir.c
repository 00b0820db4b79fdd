// SPDX-License-Identifier: MIT
// The cache directory: see cachedir.h.
#include "cachedir.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// A newly allocated string "A" "B" (b may be NULL), or NULL.
static char *str_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0;
	char *s = malloc(la + lb + 1);

	if (!s)
		return NULL;
	memcpy(s, a, la);
	memcpy(s + la, b ? b : "", lb + 1);
	return s;
}

// Creates dir and its missing parents with mode 0700. 0 or -1 (errno set).
static int mkdir_parents(const char *dir)
{
	char *p = str_join(dir, NULL);
	int rc = 0;

	if (!p)
		return -1;
	for (char *s = p + 1; *s && rc == 0; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			rc = -1;
		*s = '/';
	}
	if (rc == 0 && mkdir(p, 0700) < 0 && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

// The directory, made where create and missing; NULL where there is none to use.
static char *cachedir(bool create)
{
	const char *env = getenv("CLIMG_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char *dir = NULL;
	struct stat st;

	if (env && *env)
		dir = str_join(env, NULL);
	else if (xdg && xdg[0] == '/')
		dir = str_join(xdg, "/climg");
	else if (home && *home)
		dir = str_join(home, "/.cache/climg");
	if (!dir || (create && mkdir_parents(dir) < 0) || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		free(dir);
		return NULL;
	}
	return dir;
}

static atomic_bool never_create;

char *cachedir_get(void)
{
	return cachedir(!atomic_load(&never_create));
}

void cachedir_no_create(void)
{
	atomic_store(&never_create, true);
}

char *cachedir_find(void)
{
	return cachedir(false);
}
