// SPDX-License-Identifier: MIT
// C checks of the batch modules: the input list (directory walks, --files-from lists,
// shards), output templates and their collisions, output directories; then those of
// tests/jobs_out.c (the report, outfile sums and registry, progress). Usage: jobs
// SCRATCHDIR. One "PASS name" or "FAIL name: ..." line per check (tests/check.h).
#define _XOPEN_SOURCE 700 // symlink, mkfifo
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../src/err.h"
#include "../src/jobs.h"

#include "check.h"

// tests/jobs_out.c: its checks in SCRATCHDIR; returns how many failed.
int jobs_out_checks(const char *dir);

static const char *scratch;

static char *path_of(const char *rel)
{
	static char buf[8][4096];
	static int next;
	char *p = buf[next++ % 8];

	snprintf(p, 4096, "%s/%s", scratch, rel);
	return p;
}

static void touch(const char *rel)
{
	FILE *f = fopen(path_of(rel), "w");

	if (!f || fputs("x", f) == EOF || fclose(f) != 0) {
		perror(rel);
		exit(2);
	}
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

// Whether input j is (path, dir, name, ext, index).
static bool is_input(const struct job_input *j, const char *path, const char *dir, const char *name,
                     const char *ext, long index)
{
	bool same = strcmp(j->path, path) == 0 && strcmp(j->dir, dir) == 0 &&
	            strcmp(j->name, name) == 0 && strcmp(j->ext, ext) == 0 && j->index == index;

	if (!same)
		printf("  got path '%s' dir '%s' name '%s' ext '%s' index %ld\n", j->path, j->dir,
		       j->name, j->ext, j->index);
	return same;
}

// ---- directory walks -----------------------------------------------------------------

static void test_walk(void)
{
	static const char *const dirs[] = {"tree",     "tree/a",        "tree/a.b", "tree/.hid",
	                                   "tree/sub", "tree/sub/deep", NULL};
	static const char *const files[] = {"tree/b.png",
	                                    "tree/a.JPG",
	                                    "tree/a.b/x.jpg",
	                                    "tree/a/x.jpg",
	                                    "tree/a/y.txt",
	                                    "tree/.hidden.png",
	                                    "tree/.hid/z.png",
	                                    "tree/c.jpe",
	                                    "tree/d.pnm",
	                                    "tree/e.tga",
	                                    "tree/noext",
	                                    "tree/sub/deep/q.PPM",
	                                    NULL};
	// byte-wise order of the relative paths: "a.JPG" < "a.b/x.jpg" < "a/x.jpg"
	static const char *const want[][3] = {
	    {"a.JPG", "", "a"},       {"a.b/x.jpg", "a.b", "x"},
	    {"a/x.jpg", "a", "x"},    {"b.png", "", "b"},
	    {"c.jpe", "", "c"},       {"d.pnm", "", "d"},
	    {"link.png", "", "link"}, {"sub/deep/q.PPM", "sub/deep", "q"}};
	struct job_list l = {0};
	char *args[3];
	bool all = true;

	for (int i = 0; dirs[i]; i++)
		mkdir(path_of(dirs[i]), 0777);
	for (int i = 0; files[i]; i++)
		touch(files[i]);
	if (symlink("b.png", path_of("tree/link.png")) != 0 ||
	    symlink("a", path_of("tree/dirlink")) != 0 ||
	    symlink("nowhere.png", path_of("tree/broken.png")) != 0 ||
	    mkfifo(path_of("tree/fifo.png"), 0666) != 0) {
		perror("tree");
		exit(2);
	}

	args[0] = path_of("tree");
	CHECK("walk: a directory", jobs_add_args(&l, 1, args) == 0);
	CHECK("walk: 8 images (hidden, non-image, dir link, broken link, fifo skipped)", l.n == 8);
	for (size_t i = 0; i < l.n && i < 8; i++) {
		char path[4096];
		const char *ext = strrchr(want[i][0], '.') + 1;

		snprintf(path, sizeof(path), "%s/%s", path_of("tree"), want[i][0]);
		all = all && is_input(&l.v[i], path, want[i][1], want[i][2], ext, (long)i + 1);
	}
	CHECK("walk: sorted by relative path, with %d, %n, %e and %i", all);
	jobs_free(&l);

	// a trailing '/' gives no "//"; inputs before and after continue the index
	args[0] = "first.png";
	args[1] = path_of("tree/sub/");
	args[2] = "last.png";
	CHECK("walk: files around a directory", jobs_add_args(&l, 3, args) == 0 && l.n == 3);
	if (l.n == 3) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/sub/deep/q.PPM", path_of("tree"));
		CHECK("walk: trailing slash", is_input(&l.v[1], path, "deep", "q", "PPM", 2));
		CHECK("walk: index after a directory",
		      is_input(&l.v[2], "last.png", "", "last", "png", 3));
	}
	jobs_free(&l);

	if (geteuid() != 0) {
		chmod(path_of("tree/sub"), 0);
		args[0] = path_of("tree");
		CHECK("walk: an unreadable directory is an error naming it",
		      jobs_add_args(&l, 1, args) < 0 && strstr(err_msg(), "tree/sub: cannot open"));
		chmod(path_of("tree/sub"), 0755);
		jobs_free(&l);
	} else {
		printf("skipping the unreadable-directory check: running as root\n");
	}

	CHECK("image names", jobs_is_image_name("a.jpeg") && jobs_is_image_name("a.Png") &&
	                         jobs_is_image_name("x.y.pgm") && !jobs_is_image_name("png") &&
	                         !jobs_is_image_name(".png") && !jobs_is_image_name("a.tga") &&
	                         !jobs_is_image_name("a.png.txt"));
}

static void test_named_files(void)
{
	char *args[] = {"in.tar.jpg",
	                "photos/in.jpg",
	                "/x.png",
	                ".x",
	                "..x",
	                ".x.jpg",
	                "a//b.jpg",
	                "noext",
	                "a.",
	                "-",
	                "does/not/exist.PNG"};
	struct job_list l = {0};

	CHECK("named files", jobs_add_args(&l, 11, args) == 0 && l.n == 11);
	if (l.n != 11)
		return;
	CHECK("name: in.tar.jpg", is_input(&l.v[0], "in.tar.jpg", "", "in.tar", "jpg", 1));
	CHECK("name: photos/in.jpg", is_input(&l.v[1], "photos/in.jpg", "photos", "in", "jpg", 2));
	CHECK("name: /x.png", is_input(&l.v[2], "/x.png", "/", "x", "png", 3));
	CHECK("name: .x", is_input(&l.v[3], ".x", "", ".x", "", 4));
	CHECK("name: ..x", is_input(&l.v[4], "..x", "", "..x", "", 5));
	CHECK("name: .x.jpg", is_input(&l.v[5], ".x.jpg", "", ".x", "jpg", 6));
	CHECK("name: a//b.jpg", is_input(&l.v[6], "a//b.jpg", "a", "b", "jpg", 7));
	CHECK("name: noext", is_input(&l.v[7], "noext", "", "noext", "", 8));
	CHECK("name: a.", is_input(&l.v[8], "a.", "", "a", "", 9));
	CHECK("name: - is stdin", is_input(&l.v[9], "-", "", "stdin", "", 10));
	CHECK("name: a missing file is kept",
	      is_input(&l.v[10], "does/not/exist.PNG", "does/not", "exist", "PNG", 11));
	args[0] = "-";
	CHECK("stdin twice is an error",
	      jobs_add_args(&l, 1, args) < 0 && strstr(err_msg(), "more than once"));
	jobs_free(&l);
}

// ---- --files-from --------------------------------------------------------------------

static void test_lists(void)
{
	static const char nl_list[] = "a b.png\n\nq'\"uote.png\r\n%s\nlast.jpg";
	static const char nul_list[] = "new\nline.png\0sp ace.jpg\0\0%s";
	char buf[8192], *tree = path_of("tree/a");
	struct job_list l = {0};
	int len, saved;

	len = snprintf(buf, sizeof(buf), nl_list, tree);
	write_file(path_of("list.txt"), buf, (size_t)len);
	CHECK("list: lines", jobs_add_list(&l, path_of("list.txt"), false) == 0 && l.n == 4);
	if (l.n == 4) {
		char want[4096];

		snprintf(want, sizeof(want), "%s/x.jpg", tree);
		CHECK("list: spaces", is_input(&l.v[0], "a b.png", "", "a b", "png", 1));
		CHECK("list: quotes, and '\\r' kept",
		      is_input(&l.v[1], "q'\"uote.png\r", "", "q'\"uote", "png\r", 2));
		CHECK("list: a listed directory is walked",
		      is_input(&l.v[2], want, "", "x", "jpg", 3));
		CHECK("list: no newline at the end",
		      is_input(&l.v[3], "last.jpg", "", "last", "jpg", 4));
	}
	jobs_free(&l);

	memcpy(buf, nul_list, sizeof(nul_list) - 3);
	len = (int)sizeof(nul_list) - 3;
	len += snprintf(buf + len, sizeof(buf) - (size_t)len, "%s", tree);
	write_file(path_of("list.nul"), buf, (size_t)len);
	CHECK("list: NUL-separated", jobs_add_list(&l, path_of("list.nul"), true) == 0 && l.n == 3);
	if (l.n == 3) {
		CHECK("list: a newline in a name",
		      is_input(&l.v[0], "new\nline.png", "", "new\nline", "png", 1));
		CHECK("list: NUL, spaces", is_input(&l.v[1], "sp ace.jpg", "", "sp ace", "jpg", 2));
	}
	jobs_free(&l);
	CHECK("list: a NUL in a line list is an error",
	      jobs_add_list(&l, path_of("list.nul"), false) < 0 &&
	          strstr(err_msg(), "line 2 holds a NUL byte"));
	jobs_free(&l);
	CHECK("list: a missing list is an error naming it",
	      jobs_add_list(&l, path_of("nolist"), false) < 0 &&
	          strstr(err_msg(), "nolist: cannot open"));
	jobs_free(&l);

	// "-" reads the list from stdin; there, a listed "-" is refused
	write_file(path_of("list.stdin"), "one.png\n-\n", 10);
	saved = dup(STDIN_FILENO);
	int fd = open(path_of("list.stdin"), O_RDONLY);
	dup2(fd, STDIN_FILENO);
	close(fd);
	CHECK("list: from stdin, '-' refused",
	      jobs_add_list(&l, "-", false) < 0 &&
	          strstr(err_msg(), "list itself is read from stdin"));
	dup2(saved, STDIN_FILENO);
	close(saved);
	jobs_free(&l);
}

// ---- shards --------------------------------------------------------------------------

static void make_list(struct job_list *l, int n)
{
	char name[32], *arg = name;

	for (int i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "f%d.png", i);
		if (jobs_add_args(l, 1, &arg) != 0)
			exit(2);
	}
}

static void test_shards(void)
{
	static const char *const bad[] = {
	    "0/3",  "4/3",  "1/0",           "a/b",  "1/", "/3", " 1/3", "1/3 ",
	    "+1/3", "-1/3", "1/99999999999", "1//3", "",   "3",  NULL};
	int k, n;

	for (int total = 0; total <= 11; total++) {
		for (n = 1; n <= 4; n++) {
			int seen[12] = {0};
			bool ok = true;
			size_t min = (size_t)-1, max = 0;

			for (k = 1; k <= n; k++) {
				struct job_list l = {0};

				make_list(&l, total);
				jobs_shard(&l, k, n);
				for (size_t i = 0; i < l.n; i++) {
					char name[32];

					snprintf(name, sizeof(name), "f%ld.png", l.v[i].index);
					ok = ok && strcmp(l.v[i].path, name) == 0 &&
					     (i == 0 || l.v[i].index > l.v[i - 1].index);
					seen[l.v[i].index]++;
				}
				min = l.n < min ? l.n : min;
				max = l.n > max ? l.n : max;
				jobs_free(&l);
			}
			for (int i = 1; i <= total; i++)
				ok = ok && seen[i] == 1;
			char name[80];
			snprintf(name, sizeof(name),
			         "shard: %d inputs in %d shards: disjoint, cover, "
			         "balance",
			         total, n);
			CHECK(name, ok && max - min <= 1);
		}
	}
	CHECK("shard: parses 2/3", jobs_parse_shard("2/3", &k, &n) == 0 && k == 2 && n == 3);
	CHECK("shard: parses 1/1", jobs_parse_shard("1/1", &k, &n) == 0 && k == 1 && n == 1);
	for (int i = 0; bad[i]; i++) {
		char name[80], want[120];

		snprintf(name, sizeof(name), "shard: rejects '%s'", bad[i]);
		snprintf(want, sizeof(want), "--shard must be K/N with 1 <= K <= N, not '%s'",
		         bad[i]);
		CHECK(name, jobs_parse_shard(bad[i], &k, &n) < 0 && strcmp(err_msg(), want) == 0);
	}
}

// ---- templates -----------------------------------------------------------------------

// Whether tmpl expands for j to want.
static bool expands(const char *tmpl, const struct job_input *j, const char *want)
{
	char *got = jobs_expand(tmpl, j);
	bool same = got && strcmp(got, want) == 0;

	if (!same)
		printf("  '%s' gave '%s', want '%s'\n", tmpl, got ? got : err_msg(), want);
	free(got);
	return same;
}

static void test_templates(void)
{
	struct job_input j = {"photos/a/in.tar.JPG", "a/b", "in.tar", "JPG", 7};
	struct job_input top = {"photos/in.png", "", "in", "png", 12};
	struct job_input root = {"/x.png", "/", "x", "png", 1};
	char name[4000], tmpl[300];

	CHECK("varies: none", !jobs_template_varies("out.png") && !jobs_template_varies("a%%n"));
	CHECK("varies: %n", jobs_template_varies("%n.png") && jobs_template_varies("%%%i"));
	CHECK("template: good", jobs_template_check("o/%d/%n.%e-%i%%.png") == 0);
	CHECK("template: unknown",
	      jobs_template_check("out/%x.png") < 0 &&
	          strcmp(err_msg(), "-o: unknown placeholder '%x' in 'out/%x.png' (use %n, %e, "
	                            "%d, %i or %%)") == 0);
	CHECK("template: unknown, UTF-8", jobs_template_check("%\xc3\xa9") < 0 &&
	                                      strstr(err_msg(), "placeholder '%\xc3\xa9' in"));
	CHECK("template: lone %", jobs_template_check("out/x%") < 0 &&
	                              strstr(err_msg(), "-o: 'out/x%' ends in a lone '%'"));
	CHECK("template: %%%", jobs_template_check("%%%") < 0);
	CHECK("template: named", jobs_template_check_for("histogram", "%q") < 0 &&
	                             strncmp(err_msg(), "histogram: unknown", 18) == 0);
	CHECK("expand: every placeholder",
	      expands("out/%d/%n.%e-%i%%.png", &j, "out/a/b/in.tar.JPG-7%.png"));
	CHECK("expand: %% before a letter", expands("%%d%%n", &j, "%d%n"));
	CHECK("expand: empty %d drops its '/'", expands("out/%d/%n.png", &top, "out/in.png"));
	CHECK("expand: empty %d", expands("%d%n-%i", &top, "in-12"));
	CHECK("expand: %d/ at the start", expands("%d/%n", &top, "in"));
	CHECK("expand: %d of the root", expands("out/%d/%n", &root, "out///x"));
	CHECK("expand: no placeholder", expands("plain.png", &j, "plain.png"));
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	j.name = name;
	snprintf(tmpl, sizeof(tmpl), "%s", "%n/%n");
	char *long_path = jobs_expand(tmpl, &j);
	CHECK("expand: longer than PATH_MAX", !long_path && strstr(err_msg(), "at most 4095"));
	free(long_path);
}

// ---- collisions ----------------------------------------------------------------------

static void test_collisions(void)
{
	char *args[] = {"a/x.jpg", "b/x.png"};
	const char *o_n[] = {"out/%n.png"}, *o_d[] = {"out/%d/%n.png"}, *o_e[] = {"out/%n.%e"};
	const char *dot[] = {"out/%n.png", "./out//%n.png"}, *dash[] = {"-", NULL, "-"};
	struct job_list l = {0};
	double t;

	jobs_add_args(&l, 2, args);
	CHECK("collide: found",
	      jobs_check_collisions(&l, o_n, 1) < 0 &&
	          strcmp(err_msg(), "-o: 'a/x.jpg' and 'b/x.png' would both write "
	                            "'out/x.png' (add %d or %e to the template)") == 0);
	CHECK("collide: %d separates", jobs_check_collisions(&l, o_d, 1) == 0);
	CHECK("collide: %e separates", jobs_check_collisions(&l, o_e, 1) == 0);
	CHECK("collide: '-' and NULL ignored", jobs_check_collisions(&l, dash, 3) == 0);
	jobs_shard(&l, 1, 2);
	CHECK("collide: one input, normalised paths",
	      jobs_check_collisions(&l, dot, 2) < 0 &&
	          strcmp(err_msg(), "outputs: 'a/x.jpg' would write 'out/x.png' twice") == 0);
	jobs_free(&l);

	// 100,000 inputs: 100 names in each of 1000 directories
	for (int i = 0; i < 100000; i++) {
		char name[32], *arg = name;

		snprintf(name, sizeof(name), "d%03d/f%02d.jpg", i % 1000, i / 1000);
		if (jobs_add_args(&l, 1, &arg) != 0)
			exit(2);
	}
	t = now_s();
	CHECK("collide: 100,000 with %d: none", jobs_check_collisions(&l, o_d, 1) == 0);
	printf("  100,000 inputs checked in %.3f s\n", now_s() - t);
	CHECK("collide: 100,000 fast", now_s() - t < 10);
	t = now_s();
	CHECK("collide: 100,000 without %d: found",
	      jobs_check_collisions(&l, o_n, 1) < 0 &&
	          strstr(err_msg(),
	                 "'d000/f00.jpg' and 'd001/f00.jpg' would both write 'out/f00.png'"));
	CHECK("collide: 100,000 fast, found", now_s() - t < 10);
	jobs_free(&l);
}

// ---- output directories --------------------------------------------------------------

static void *make_deep(void *path)
{
	return (void *)(long)jobs_make_dirs(path);
}

static void test_make_dirs(void)
{
	struct stat st;
	pthread_t tid[8];
	long rc = 0;

	mkdir(path_of("md"), 0777);
	CHECK("make_dirs: nested", jobs_make_dirs(path_of("md/a//b/c/x.png")) == 0 &&
	                               stat(path_of("md/a/b/c"), &st) == 0 && S_ISDIR(st.st_mode));
	CHECK("make_dirs: again", jobs_make_dirs(path_of("md/a/b/c/y.png")) == 0);
	CHECK("make_dirs: none needed", jobs_make_dirs("x.png") == 0 && jobs_make_dirs("-") == 0 &&
	                                    jobs_make_dirs("/x.png") == 0);
	touch("md/file");
	CHECK("make_dirs: a file in the way",
	      jobs_make_dirs(path_of("md/file/d/x.png")) < 0 &&
	          strstr(err_msg(), "md/file/d: cannot create directory: Not a directory"));
	CHECK("make_dirs: a file as the directory",
	      jobs_make_dirs(path_of("md/file/x.png")) < 0 && strstr(err_msg(), "md/file: cannot"));
	char *deep = path_of("md/t/u/v/w/x.png");
	for (int i = 0; i < 8; i++)
		pthread_create(&tid[i], NULL, make_deep, deep);
	for (int i = 0; i < 8; i++) {
		void *r;

		pthread_join(tid[i], &r);
		rc |= (long)r;
	}
	CHECK("make_dirs: 8 threads at once", rc == 0 && stat(path_of("md/t/u/v/w"), &st) == 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: jobs SCRATCHDIR\n");
		return 2;
	}
	// A test run in the background of a script starts with SIGINT and SIGTERM possibly
	// ignored, and outfile keeps an ignored signal ignored: the signal checks need the
	// default back before the first output installs outfile's handlers.
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	scratch = argv[1];
	test_walk();
	test_named_files();
	test_lists();
	test_shards();
	test_templates();
	test_collisions();
	test_make_dirs();
	return failures || jobs_out_checks(scratch) ? 1 : 0;
}
