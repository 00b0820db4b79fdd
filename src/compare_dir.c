// SPDX-License-Identifier: MIT
// climg compare DIR_A DIR_B: the image files under both directories (src/jobs.h's walk)
// paired by their path relative to each, decoded on every core (one pair a core) and compared
// on the device (opened once, one pair at a time) or the CPU path (cmp_run), reported in the
// order of those paths.
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "err.h"
#include "jobs.h"
#include "par.h"
#include "report.h"

enum { ONLY_A, ONLY_B, PAIR };

struct pair {
	char *rel;           // the relative path
	const char *pa, *pb; // the files (NULL for the side where it is missing)
	int kind;            // ONLY_A, ONLY_B or PAIR
	int rc;              // PAIR: -1 when one could not be read or the device failed, 1 for
	                     // a --verify difference (msg says why)
	char msg[1024];
	struct cmp_result r;
};

struct dir_job {
	struct pair *v;
	const struct cmp_opts *o;
	const struct io_limits *lim;
	struct run_dev *d;
	bool verify;
};

// "dir/name.ext" of a walked input: its directory relative to the argument, then the last
// component of its path.
static char *rel_path(const struct job_input *in)
{
	const char *base = strrchr(in->path, '/');
	size_t nd = strlen(in->dir), nb;
	char *s;
	base = base ? base + 1 : in->path;
	nb = strlen(base);
	s = malloc(nd + nb + 2);
	if (!s)
		return NULL;
	if (nd)
		memcpy(s, in->dir, nd), s[nd++] = '/';
	memcpy(s + nd, base, nb + 1);
	return s;
}

static void pair_task(void *ctx, int task, int worker)
{
	struct dir_job *j = ctx;
	struct pair *p = &j->v[task];
	struct img a = { 0 }, b = { 0 };
	(void)worker;
	if (p->kind != PAIR)
		return;
	par_set_share(1); // the pairs share the cores: each compares on one
	p->rc = cmp_load(p->pa, j->lim, &a);
	if (p->rc == 0 && (p->rc = cmp_load(p->pb, j->lim, &b)) < 0)
		free(a.data), a.data = NULL;
	if (p->rc == 0)
		p->rc = cmp_run(j->d, j->verify, &a, &b, j->o, &p->r);
	if (p->rc != 0)
		snprintf(p->msg, sizeof p->msg, "%s", err_msg());
	free(a.data);
	free(b.data);
	err_clear();
}

// Pairs the two sorted lists by relative path. -1 with err set.
static int pair_up(const struct job_list *la, const struct job_list *lb, struct pair **out,
		   size_t *n)
{
	struct pair *v = calloc(la->n + lb->n + 1, sizeof *v);
	size_t i = 0, k = 0, m = 0;
	if (!v)
		return err_set("out of memory");
	while (i < la->n || k < lb->n) {
		char *ra = i < la->n ? rel_path(&la->v[i]) : NULL;
		char *rb = k < lb->n ? rel_path(&lb->v[k]) : NULL;
		int c;
		if ((i < la->n && !ra) || (k < lb->n && !rb)) {
			free(ra), free(rb);
			*out = v, *n = m;
			return err_set("out of memory");
		}
		c = !ra ? 1 : !rb ? -1 : strcmp(ra, rb);
		if (c < 0) {
			v[m++] = (struct pair){ .rel = ra, .pa = la->v[i++].path, .kind = ONLY_A };
			free(rb);
		} else if (c > 0) {
			v[m++] = (struct pair){ .rel = rb, .pb = lb->v[k++].path, .kind = ONLY_B };
			free(ra);
		} else {
			v[m++] = (struct pair){ .rel = ra, .pa = la->v[i++].path,
						.pb = lb->v[k++].path, .kind = PAIR };
			free(rb);
		}
	}
	*out = v, *n = m;
	return 0;
}

// One line for p, when one is due (text: not for a pair that is the same).
static int pair_print(const struct pair *p, const struct cmp_opts *o)
{
	static const char *const what[] = { "only_in_a", "only_in_b" };
	char *js = NULL, *je = NULL;
	int rc = 0;
	if (p->kind == PAIR && p->rc == 0) {
		if (o->json || !p->r.same || p->r.mismatch)
			return cmp_print(stdout, &p->r, o, p->rel);
		return 0;
	}
	if (p->kind == PAIR)
		fprintf(stderr, "climg: compare: %s\n", p->msg);
	if (!o->json) {
		printf("%s path=%s\n", p->kind == PAIR ? "error" : what[p->kind], p->rel);
		return 0;
	}
	if (!(js = report_json_string(p->rel)) || (p->kind == PAIR && !(je = report_json_string(p->msg))))
		rc = -1;
	else if (p->kind == PAIR)
		printf("{\"path\":%s,\"result\":\"error\",\"error\":%s}\n", js, je);
	else
		printf("{\"path\":%s,\"result\":\"%s\"}\n", js, what[p->kind]);
	free(js);
	free(je);
	return rc;
}

int compare_dirs(const char *dir_a, const char *dir_b, const struct cmp_opts *o,
		 const struct io_limits *lim, struct run_dev *d, bool verify)
{
	struct job_list la = { 0 }, lb = { 0 };
	char *args[2] = { (char *)dir_a, (char *)dir_b };
	struct pair *v = NULL;
	size_t n = 0;
	unsigned long long cnt[5] = { 0 }; // same, differ, only in a, only in b, errors
	bool verify_failed = false;
	int status = CMP_USAGE;

	if (jobs_add_args(&la, 1, args) < 0 || jobs_add_args(&lb, 1, args + 1) < 0 ||
	    pair_up(&la, &lb, &v, &n) < 0) {
		fprintf(stderr, "climg: compare: %s\n", err_msg());
		goto done;
	}
	if (n > 0) {
		struct dir_job j = { v, o, lim, d, verify };
		par_run(par_threads(), n > 1 << 30 ? 1 << 30 : (int)n, pair_task, &j);
		par_set_share(0);
	}
	for (size_t i = 0; i < n; i++) {
		const struct pair *p = &v[i];
		if (p->kind != PAIR)
			cnt[2 + p->kind]++;
		else
			cnt[p->rc != 0 ? 4 : p->r.same && !p->r.mismatch ? 0 : 1]++;
		verify_failed = verify_failed || (p->kind == PAIR && p->rc > 0);
		if (pair_print(p, o) < 0) {
			fprintf(stderr, "climg: compare: %s\n", err_msg());
			goto done;
		}
	}
	if (o->json)
		printf("{\"result\":\"summary\",\"pairs\":%llu,\"same\":%llu,\"differ\":%llu,"
		       "\"only_in_a\":%llu,\"only_in_b\":%llu,\"errors\":%llu}\n",
		       cnt[0] + cnt[1] + cnt[4], cnt[0], cnt[1], cnt[2], cnt[3], cnt[4]);
	else
		printf("summary pairs=%llu same=%llu differ=%llu only_in_a=%llu only_in_b=%llu "
		       "errors=%llu\n", cnt[0] + cnt[1] + cnt[4], cnt[0], cnt[1], cnt[2], cnt[3], cnt[4]);
	if (verify_failed)
		status = CMP_VERIFY;
	else if (cnt[4])
		status = CMP_USAGE;
	else
		status = cnt[1] + cnt[2] + cnt[3] ? CMP_DIFFER : CMP_SAME;
done:
	for (size_t i = 0; i < n; i++)
		free(v[i].rel);
	free(v);
	jobs_free(&la);
	jobs_free(&lb);
	return status;
}
