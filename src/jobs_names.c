// SPDX-License-Identifier: MIT
// The output names of a batch: -o templates, their collisions, output directories
// (contracts in jobs.h).
#include "jobs.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static char *dup_s(const char *s)
{
	char *d = strdup(s);

	if (!d)
		err_set("out of memory");
	return d;
}

// ---- templates -----------------------------------------------------------------------

bool jobs_template_varies(const char *tmpl)
{
	for (const char *p = tmpl; *p; p++) {
		if (*p != '%')
			continue;
		if (p[1] && strchr("nedi", p[1]))
			return true;
		if (p[1] == '%')
			p++;
	}
	return false;
}

int jobs_template_check_for(const char *what, const char *tmpl)
{
	for (const char *p = tmpl; *p; p++) {
		if (*p != '%')
			continue;
		p++;
		if (*p == '\0')
			return err_set(
			    "%s: '%s' ends in a lone '%%' (write %%%% for a percent sign)", what,
			    tmpl);
		if (!strchr("nedi%", *p)) {
			// the placeholder as written: '%' and one UTF-8 character
			size_t len = 1;

			while (len < 4 && ((unsigned char)p[len] & 0xc0) == 0x80)
				len++;
			return err_set(
			    "%s: unknown placeholder '%%%.*s' in '%s' (use %%n, %%e, %%d, "
			    "%%i or %%%%)",
			    what, (int)len, p, tmpl);
		}
	}
	return 0;
}

int jobs_template_check(const char *tmpl)
{
	return jobs_template_check_for("-o", tmpl);
}

char *jobs_expand(const char *tmpl, const struct job_input *j)
{
	char index[24], *out = NULL;
	size_t n = 0;

	snprintf(index, sizeof(index), "%ld", j->index);
	// Two passes: measure, then write.
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		for (const char *p = tmpl; *p; p++) {
			const char *piece = p;
			size_t len = 1;

			if (*p == '%' && p[1]) {
				p++;
				switch (*p) {
				case 'n': piece = j->name; break;
				case 'e': piece = j->ext; break;
				case 'd': piece = j->dir; break;
				case 'i': piece = index; break;
				default: piece = p; break; // "%%" (the template is checked)
				}
				len = piece == p ? 1 : strlen(piece);
				if (*p == 'd' && len == 0 && p[1] == '/')
					p++; // 'out/%d/%n' at the top: 'out/%n'
			}
			if (pass == 1)
				memcpy(out + n, piece, len);
			n += len;
		}
		if (pass == 0) {
			if (n >= PATH_MAX) {
				err_set("'%s' expanded for '%s' is %zu bytes long (at most %d)",
				        tmpl, j->path, n, PATH_MAX - 1);
				return NULL;
			}
			out = malloc(n + 1);
			if (!out) {
				err_set("out of memory");
				return NULL;
			}
		}
	}
	out[n] = '\0';
	return out;
}

// ---- collisions ----------------------------------------------------------------------

struct expansion {
	char *norm; // normalised
	char *raw;  // as expanded
	size_t input;
	int tmpl;
};

// The lexical normal form of path, in place: repeated '/' merged, "." components and a
// trailing '/' dropped ("" becomes "."); ".." kept (it may cross a symlink).
static void normalise(char *path)
{
	bool abs = path[0] == '/';
	char *src = path, *dst = path;

	if (abs)
		*dst++ = '/';
	while (*src) {
		char *end;
		size_t len;

		while (*src == '/')
			src++;
		end = strchr(src, '/');
		len = end ? (size_t)(end - src) : strlen(src);
		if (len == 0 || (len == 1 && src[0] == '.')) {
			src += len;
			continue;
		}
		if (dst > path + (abs ? 1 : 0))
			*dst++ = '/';
		memmove(dst, src, len);
		dst += len;
		src += len;
	}
	if (dst == path)
		*dst++ = '.';
	*dst = '\0';
}

static int cmp_expansions(const void *a, const void *b)
{
	const struct expansion *x = a, *y = b;
	int c = strcmp(x->norm, y->norm);

	if (c != 0)
		return c;
	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return x->tmpl - y->tmpl;
}

int jobs_check_collisions(const struct job_list *l, const char *const *tmpls, int ntmpls)
{
	struct expansion *v;
	size_t m = 0, i;
	int rc = -1;

	if (l->n == 0 || ntmpls <= 0)
		return 0;
	if (l->n > SIZE_MAX / sizeof(*v) / (size_t)ntmpls)
		return err_set("out of memory");
	v = calloc(l->n * (size_t)ntmpls, sizeof(*v));
	if (!v)
		return err_set("out of memory");
	for (int t = 0; t < ntmpls; t++) {
		if (!tmpls[t] || strcmp(tmpls[t], "-") == 0)
			continue;
		for (i = 0; i < l->n; i++) {
			struct expansion *x = &v[m];

			x->raw = jobs_expand(tmpls[t], &l->v[i]);
			x->norm = x->raw ? dup_s(x->raw) : NULL;
			if (!x->norm) {
				free(x->raw);
				goto done;
			}
			normalise(x->norm);
			x->input = i;
			x->tmpl = t;
			m++;
		}
	}
	qsort(v, m, sizeof(*v), cmp_expansions);
	for (i = 1; i < m; i++) {
		const struct expansion *a = &v[i - 1], *b = &v[i];
		const char *what = a->tmpl == 0 && b->tmpl == 0 ? "-o" : "outputs";

		if (strcmp(a->norm, b->norm) != 0)
			continue;
		if (a->input == b->input)
			err_set("%s: '%s' would write '%s' twice", what, l->v[a->input].path,
			        a->raw);
		else
			err_set("%s: '%s' and '%s' would both write '%s' (add %%d or %%e to the "
			        "template)",
			        what, l->v[a->input].path, l->v[b->input].path, a->raw);
		goto done;
	}
	rc = 0;
done:
	for (i = 0; i < m; i++) {
		free(v[i].raw);
		free(v[i].norm);
	}
	free(v);
	return rc;
}

// ---- output directories --------------------------------------------------------------

int jobs_make_dirs(const char *path)
{
	struct stat st;
	char *dir, *slash;
	int rc = -1;

	if (strcmp(path, "-") == 0 || !strchr(path, '/'))
		return 0;
	dir = dup_s(path);
	if (!dir)
		return -1;
	slash = strrchr(dir, '/');
	while (slash > dir && slash[-1] == '/')
		slash--;
	*slash = '\0';
	if (!*dir || (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))) {
		rc = 0; // "/x", or the directory is there already
		goto done;
	}
	// Each prefix that ends before a '/', then the whole: mkdir -p.
	for (char *p = dir + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
			err_set("%s: cannot create directory: %s", dir, strerror(errno));
			goto done;
		}
		*p = c;
		if (c == '\0')
			break;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		err_set("%s: cannot create directory: %s", dir, strerror(ENOTDIR));
		goto done;
	}
	rc = 0;
done:
	free(dir);
	return rc;
}
