// SPDX-License-Identifier: MIT
// The inputs of a batch: command-line words, lists, directory walks, shards (contracts in
// jobs.h; output names are in jobs_names.c).
#include "jobs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

// ---- small helpers -------------------------------------------------------------------

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (!d) {
		err_set("out of memory");
		return NULL;
	}
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static char *dup_s(const char *s)
{
	return dup_n(s, strlen(s));
}

// a + "/" + b, without doubling a '/' that a ends with; b alone when a is "". NULL with err.
static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int slash = la > 0 && a[la - 1] != '/';
	char *s = malloc(la + slash + lb + 1);

	if (!s) {
		err_set("out of memory");
		return NULL;
	}
	memcpy(s, a, la);
	if (slash)
		s[la] = '/';
	memcpy(s + la + slash, b, lb + 1);
	return s;
}

bool jobs_is_image_name(const char *name)
{
	static const char *const exts[] = {"png", "jpg", "jpeg", "jpe", "bmp",
	                                   "pgm", "ppm", "pnm",  NULL};
	const char *dot = strrchr(name, '.');

	if (!dot || dot == name)
		return false;
	for (int i = 0; exts[i]; i++)
		if (strcasecmp(dot + 1, exts[i]) == 0)
			return true;
	return false;
}

// Appends an input: path as given, dir, and name/ext split from base (a file name).
static int push(struct job_list *l, const char *path, const char *dir, size_t dirlen,
                const char *base)
{
	struct job_input *j;
	const char *p = base, *dot;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct job_input *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return err_set("out of memory");
		l->v = v;
		l->cap = cap;
	}
	j = &l->v[l->n];
	memset(j, 0, sizeof(*j));
	// Leading dots belong to the name; the extension follows the last dot after them.
	while (*p == '.')
		p++;
	dot = strrchr(p, '.');
	if (strcmp(path, "-") == 0) {
		j->name = dup_s("stdin");
		j->ext = dup_s("");
	} else if (dot) {
		j->name = dup_n(base, (size_t)(dot - base));
		j->ext = dup_s(dot + 1);
	} else {
		j->name = dup_s(base);
		j->ext = dup_s("");
	}
	j->path = dup_s(path);
	j->dir = dup_n(dir, dirlen);
	if (!j->name || !j->ext || !j->path || !j->dir) {
		free(j->name);
		free(j->ext);
		free(j->path);
		free(j->dir);
		return err_set("out of memory");
	}
	j->index = (long)l->n + 1;
	l->n++;
	return 0;
}

// ---- directories ---------------------------------------------------------------------

struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *a, char *s)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		char **v = realloc(a->v, cap * sizeof(*v));

		if (!v) {
			free(s);
			return err_set("out of memory");
		}
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = s;
	return 0;
}

static void names_free(struct names *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

// Adds to out the image files under root/rel (rel "" at the top), as paths relative to
// root. -1 with err set.
static int walk(const char *root, const char *rel, struct names *out)
{
	char *dirpath = *rel ? join(root, rel) : dup_s(root);
	DIR *d = NULL;
	struct dirent *e;
	int rc = -1;

	if (!dirpath)
		return -1;
	d = opendir(dirpath);
	if (!d) {
		err_set("%s: cannot open directory: %s", dirpath, strerror(errno));
		goto done;
	}
	for (;;) {
		struct stat st;
		char *full, *sub;

		errno = 0;
		e = readdir(d);
		if (!e) {
			if (errno != 0) {
				err_set("%s: cannot read directory: %s", dirpath, strerror(errno));
				goto done;
			}
			break;
		}
		if (e->d_name[0] == '.') // hidden, and "." and ".."
			continue;
		full = join(dirpath, e->d_name);
		if (!full)
			goto done;
		if (lstat(full, &st) != 0) {
			if (errno == ENOENT) { // removed while we read
				free(full);
				continue;
			}
			err_set("%s: cannot read: %s", full, strerror(errno));
			free(full);
			goto done;
		}
		// A symlink counts for what it points to, but a directory only when it is one
		// itself: following links to directories could loop.
		if (S_ISLNK(st.st_mode) && (stat(full, &st) != 0 || S_ISDIR(st.st_mode))) {
			free(full);
			continue;
		}
		free(full);
		if (S_ISDIR(st.st_mode)) {
			sub = *rel ? join(rel, e->d_name) : dup_s(e->d_name);
			if (!sub || walk(root, sub, out) != 0) {
				free(sub);
				goto done;
			}
			free(sub);
		} else if (S_ISREG(st.st_mode) && jobs_is_image_name(e->d_name)) {
			sub = *rel ? join(rel, e->d_name) : dup_s(e->d_name);
			if (!sub || names_add(out, sub) != 0)
				goto done;
		}
	}
	rc = 0;
done:
	if (d)
		closedir(d);
	free(dirpath);
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

// Appends the image files under directory root, in byte-wise order of relative path.
static int add_dir(struct job_list *l, const char *root)
{
	struct names found = {0};
	int rc = -1;

	if (walk(root, "", &found) != 0)
		goto done;
	if (found.n > 1) // qsort takes no NULL array, which an empty directory leaves
		qsort(found.v, found.n, sizeof(*found.v), cmp_names);
	for (size_t i = 0; i < found.n; i++) {
		const char *rel = found.v[i], *slash = strrchr(rel, '/');
		char *path = join(root, rel);

		if (!path)
			goto done;
		if (push(l, path, rel, slash ? (size_t)(slash - rel) : 0,
		         slash ? slash + 1 : rel) != 0) {
			free(path);
			goto done;
		}
		free(path);
	}
	rc = 0;
done:
	names_free(&found);
	return rc;
}

// ---- building the list ---------------------------------------------------------------

// Appends one command-line word or listed path.
static int add_one(struct job_list *l, const char *arg)
{
	struct stat st;
	const char *slash;
	size_t dirlen;

	if (!*arg)
		return err_set("an input name is empty");
	if (strcmp(arg, "-") == 0) {
		for (size_t i = 0; i < l->n; i++)
			if (strcmp(l->v[i].path, "-") == 0)
				return err_set("'-' (standard input) is named more than once");
		return push(l, "-", "", 0, "-");
	}
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
		return add_dir(l, arg);
	// A file: its directory as written, without trailing slashes ("/" stays "/").
	slash = strrchr(arg, '/');
	dirlen = slash ? (size_t)(slash - arg) : 0;
	while (dirlen > 1 && arg[dirlen - 1] == '/')
		dirlen--;
	if (slash && dirlen == 0)
		dirlen = 1; // "/x.png": the root
	return push(l, arg, arg, dirlen, slash ? slash + 1 : arg);
}

int jobs_add_args(struct job_list *l, int n, char *const *args)
{
	for (int i = 0; i < n; i++)
		if (add_one(l, args[i]) != 0)
			return -1;
	return 0;
}

// Reads all of fd into a malloc'd buffer (*len bytes, plus a terminating NUL).
static char *read_all(int fd, const char *name, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);

	if (!buf) {
		err_set("%s: out of memory", name);
		return NULL;
	}
	for (;;) {
		ssize_t got;

		if (cap - n < 2) {
			char *b = realloc(buf, cap * 2);

			if (!b) {
				free(buf);
				err_set("%s: out of memory", name);
				return NULL;
			}
			buf = b;
			cap *= 2;
		}
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			err_set("%s: cannot read: %s", name, strerror(errno));
			free(buf);
			return NULL;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

int jobs_add_list(struct job_list *l, const char *list_path, bool nul)
{
	bool from_stdin = strcmp(list_path, "-") == 0;
	const char *name = from_stdin ? "stdin" : list_path;
	char sep = nul ? '\0' : '\n';
	char *buf;
	size_t len, start, line = 1;
	int fd, rc = -1;

	if (from_stdin) {
		fd = STDIN_FILENO;
	} else {
		do
			fd = open(list_path, O_RDONLY | O_CLOEXEC);
		while (fd < 0 && errno == EINTR);
		if (fd < 0)
			return err_set("%s: cannot open: %s", name, strerror(errno));
	}
	buf = read_all(fd, name, &len);
	if (!from_stdin)
		close(fd); // read-only: nothing to lose
	if (!buf)
		return -1;
	for (start = 0; start < len; line++) {
		char *end = memchr(buf + start, sep, len - start);
		size_t stop = end ? (size_t)(end - buf) : len;

		if (!nul && memchr(buf + start, '\0', stop - start)) {
			err_set("%s: line %zu holds a NUL byte (for NUL-separated lists use -0)",
			        name, line);
			goto done;
		}
		buf[stop] = '\0';
		if (stop > start) {
			if (from_stdin && strcmp(buf + start, "-") == 0) {
				err_set("stdin: lists '-', but the list itself is read from stdin");
				goto done;
			}
			if (add_one(l, buf + start) != 0)
				goto done;
		}
		start = stop + 1;
	}
	rc = 0;
done:
	free(buf);
	return rc;
}

// ---- shards --------------------------------------------------------------------------

void jobs_shard(struct job_list *l, int k, int n)
{
	size_t kept = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct job_input *j = &l->v[i];

		if ((j->index - 1) % n == k - 1) {
			l->v[kept++] = *j;
		} else {
			free(j->path);
			free(j->dir);
			free(j->name);
			free(j->ext);
		}
	}
	l->n = kept;
}

// Reads a decimal number of 1 to INT_MAX at *s, moving *s past it; -1 when there is none.
static long read_count(const char **s)
{
	long v = 0;

	if (**s < '0' || **s > '9')
		return -1;
	for (; **s >= '0' && **s <= '9'; (*s)++) {
		v = v * 10 + (**s - '0');
		if (v > INT_MAX)
			return -1;
	}
	return v;
}

int jobs_parse_shard(const char *s, int *k, int *n)
{
	const char *p = s;
	long kv, nv = -1;

	kv = read_count(&p);
	if (kv >= 0 && *p == '/') {
		p++;
		nv = read_count(&p);
	}
	if (kv < 1 || nv < kv || *p != '\0')
		return err_set("--shard must be K/N with 1 <= K <= N, not '%s'", s);
	*k = (int)kv;
	*n = (int)nv;
	return 0;
}

void jobs_free(struct job_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].dir);
		free(l->v[i].name);
		free(l->v[i].ext);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
	l->cap = 0;
}
