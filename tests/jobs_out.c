// SPDX-License-Identifier: MIT
// The output side of a batch, for tests/jobs.c: the outfile SHA-256 against FIPS 180-2
// vectors, the --report writer (odd bytes, many threads), the outfile registry's size and
// its cleanup under signals while threads write, and the progress line. It leaves
// SCRATCHDIR/report.jsonl and the files it names for tests/t-jobs.sh, which parses the
// lines and checks them against sha256sum.
#define _XOPEN_SOURCE 700 // setrlimit, pread
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/err.h"
#include "../src/io/io.h"
#include "../src/progress.h"
#include "../src/report.h"

#include "check.h"

static const char *scratch;

static char *path_of(const char *rel)
{
	static char buf[8][4096];
	static int next;
	char *p = buf[next++ % 8];

	snprintf(p, 4096, "%s/%s", scratch, rel);
	return p;
}

// ---- outfile sums and the report -----------------------------------------------------

static void hex(const uint8_t *sum, char *out)
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", sum[i]);
}

// Writes path through an outfile in the given chunks, summing; fills *o. 0 or -1.
static int write_summed(const char *path, const char *data, const size_t *chunks,
                        struct report_output *o)
{
	struct outfile *f = outfile_open(path);
	struct outfile_sum sum;
	size_t at = 0;

	if (!f)
		return -1;
	outfile_sum_on(f);
	for (int i = 0; chunks[i]; i++) {
		if (outfile_write(f, data + at, chunks[i]) != 0) {
			outfile_abort(f);
			return -1;
		}
		at += chunks[i];
	}
	if (outfile_commit_sum(f, &sum) != 0)
		return -1;
	o->path = path;
	o->bytes = sum.bytes;
	memcpy(o->sha256, sum.sha256, 32);
	return 0;
}

static const char odd_name[] = "odd\"\\\n\t\x01\xff\xc3\xa9\xf0\x9f\x98\x80\xed\xa0\x80\xc0\xaf"
                               "\xf4\x90\x80\x80.png\xe2\x82";

struct writer {
	struct report *r;
	int id;
};

static void *write_many(void *arg)
{
	struct writer *w = arg;
	struct report_entry e = {.status = "ok", .input = "x.png", .device = "cpu"};
	long rc = 0;

	for (int i = 0; i < 200; i++) {
		e.index = w->id * 1000 + i;
		rc |= report_write(w->r, &e);
	}
	return (void *)rc;
}

static void test_report(void)
{
	static const size_t abc_chunks[] = {1, 2, 0}, empty_chunks[] = {0},
	                    big_chunks[] = {10, 70000, 65536, 1, 64453, 0};
	struct report_output outs[3];
	struct report *r;
	char h[65], *big = malloc(200000), *lit;
	const char *lit_want = "\"odd\\\"\\\\\\n\\t\\u0001\\u00ff\xc3\xa9\xf0\x9f\x98\x80\\u00ed"
	                       "\\u00a0\\u0080\\u00c0\\u00af\\u00f4\\u0090\\u0080\\u0080.png"
	                       "\\u00e2\\u0082\"";
	pthread_t tid[8];
	struct writer w[8];
	long rc = 0;

	for (int i = 0; i < 200000; i++)
		big[i] = (char)(i * 7 + i / 256);
	mkdir(path_of("out"), 0777);
	CHECK("sha256: 'abc' in pieces",
	      write_summed(path_of("out/abc.txt"), "abc", abc_chunks, &outs[0]) == 0);
	hex(outs[0].sha256, h);
	CHECK("sha256: 'abc' (FIPS 180-2 vector)",
	      outs[0].bytes == 3 &&
	          strcmp(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") ==
	              0);
	CHECK("sha256: empty", write_summed(path_of("out/empty"), "", empty_chunks, &outs[1]) == 0);
	hex(outs[1].sha256, h);
	CHECK("sha256: empty (FIPS vector)",
	      outs[1].bytes == 0 &&
	          strcmp(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") ==
	              0);
	CHECK("sha256: 200,000 bytes in uneven pieces",
	      write_summed(path_of("out/big.bin"), big, big_chunks, &outs[2]) == 0 &&
	          outs[2].bytes == 200000);
	free(big);

	lit = report_json_string(odd_name);
	CHECK("json: odd bytes escaped", lit && strcmp(lit, lit_want) == 0);
	if (lit && strcmp(lit, lit_want) != 0)
		printf("  got %s\n", lit);
	free(lit);

	r = report_open(path_of("report.jsonl"));
	CHECK("report: opens", r != NULL);
	if (!r)
		return;
	struct report_entry ok = {.index = 1,
	                          .input = "in/a.png",
	                          .status = "ok",
	                          .w = 6,
	                          .h = 5,
	                          .ch = 3,
	                          .outputs = outs,
	                          .noutputs = 3,
	                          .device = "cpu",
	                          .decode_ms = 1.25,
	                          .stages_ms = 2.5,
	                          .encode_ms = 3.0004,
	                          .total_ms = 7.125};
	struct report_entry failed = {.index = 2,
	                              .input = odd_name,
	                              .status = "failed",
	                              .error = "odd: not a PNG, JPEG, BMP, PGM or PPM file",
	                              .decode_ms = 0.5,
	                              .total_ms = 0.75};
	struct report_entry skipped = {
	    .index = 3, .input = "in/c.png", .status = "skipped", .outputs = outs, .noutputs = 1};
	CHECK("report: writes", report_write(r, &ok) == 0 && report_write(r, &failed) == 0 &&
	                            report_write(r, &skipped) == 0);
	CHECK("report: closes", report_close(r) == 0);
	CHECK("report: NULL closes", report_close(NULL) == 0);
	CHECK("report: cannot open", !report_open(path_of("no/such/dir/r.jsonl")) &&
	                                 strstr(err_msg(), "r.jsonl: cannot open"));

	// 8 threads, 200 lines each: every line whole
	r = report_open(path_of("many.jsonl"));
	for (int i = 0; i < 8 && r; i++) {
		w[i] = (struct writer){r, i + 1};
		pthread_create(&tid[i], NULL, write_many, &w[i]);
	}
	for (int i = 0; i < 8 && r; i++) {
		void *v;

		pthread_join(tid[i], &v);
		rc |= (long)v;
	}
	CHECK("report: 8 threads", r && rc == 0 && report_close(r) == 0);
	FILE *f = fopen(path_of("many.jsonl"), "r");
	char line[1024];
	int lines = 0, whole = 0;
	while (f && fgets(line, sizeof(line), f)) {
		lines++;
		whole += strncmp(line, "{\"index\":", 9) == 0 &&
		         strstr(line, ",\"input\":\"x.png\",\"status\":\"ok\",\"error\":null,") &&
		         strcmp(line + strlen(line) - 3, "}}\n") == 0;
	}
	if (f)
		fclose(f);
	CHECK("report: 1600 whole lines", lines == 1600 && whole == 1600);
}

// ---- the temporary-file registry -----------------------------------------------------

// Whether dir holds a temporary file (".NAME.climg-XXXXXX").
static bool has_temporary(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	while (d && (e = readdir(d)))
		found = found || strstr(e->d_name, ".climg-") != NULL;
	if (d)
		closedir(d);
	return found;
}

static void test_registry(void)
{
	static struct outfile *f[1025];
	struct rlimit rl;
	char name[64];
	int opened = 0;

	mkdir(path_of("reg"), 0777);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1100 && rl.rlim_max >= 1100) {
		rl.rlim_cur = 1100;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 1100) {
		printf("skipping the registry-size check: fewer than 1100 file descriptors\n");
		return;
	}
	for (int i = 0; i < 1025; i++) {
		snprintf(name, sizeof(name), "reg/f%d.png", i);
		f[i] = outfile_open(path_of(name));
		opened += f[i] != NULL;
	}
	CHECK("registry: 1024 at once, not 1025",
	      opened == 1024 && !f[1024] &&
	          strstr(err_msg(), "too many output files open at once (at most 1024)"));
	for (int i = 0; i < 1025; i++)
		outfile_abort(f[i]);
	CHECK("registry: aborted files removed", !has_temporary(path_of("reg")));
}

// A child's thread: opens, writes and commits or aborts outputs until the process ends.
static void *churn(void *arg)
{
	char name[4096];

	for (long i = 0;; i++) {
		snprintf(name, sizeof(name), "%s/sig/t%ld-%ld.png", scratch, (long)arg, i % 50);
		struct outfile *f = outfile_open(name);

		if (!f)
			continue;
		outfile_write(f, name, strlen(name));
		if (i % 3)
			outfile_commit(f);
		else
			outfile_abort(f);
	}
	return NULL;
}

static void test_signals(void)
{
	bool clean = true, killed = true;

	mkdir(path_of("sig"), 0777);
	for (int round = 0; round < 20; round++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			pthread_t t;

			// ended anyway after 20 s, so that a failure cannot hang the suite
			alarm(20);
			for (long i = 0; i < 4; i++)
				pthread_create(&t, NULL, churn, (void *)i);
			struct timespec ts = {0, 20000000L + 5000000L * round};

			nanosleep(&ts, NULL);
			kill(getpid(), round % 2 ? SIGINT : SIGTERM);
			pause();
			_exit(0);
		}
		waitpid(pid, &status, 0);
		killed = killed && WIFSIGNALED(status) &&
			 WTERMSIG(status) == (round % 2 ? SIGINT : SIGTERM);
		clean = clean && !has_temporary(path_of("sig"));
	}
	CHECK("signals: the process ends by the signal", killed);
	CHECK("signals: 4 threads writing, no temporary file left in 20 runs", clean);
}

// ---- the progress line ---------------------------------------------------------------

static void test_progress(void)
{
	char buf[256], got[1024];
	struct progress *p;
	int saved, fd;
	ssize_t n;

	progress_format(buf, sizeof(buf), 37, 124, 2, 3.0);
	CHECK("progress: the line",
	      strcmp(buf, "\rclimg: 37/124 done, 2 failed, 12.3 images/s, 0:03 elapsed, ETA "
	                  "0:07\033[K") == 0);
	progress_format(buf, sizeof(buf), 0, 5, 0, 0.2);
	CHECK("progress: nothing done yet",
	      strcmp(buf, "\rclimg: 0/5 done, 0 failed, - images/s, 0:00 elapsed, ETA -\033[K") ==
	          0);
	progress_format(buf, sizeof(buf), 1000, 4000, 0, 3725);
	CHECK("progress: hours",
	      strstr(buf, "0.3 images/s, 1:02:05 elapsed, ETA 3:06:15\033[K") != NULL);

	// drawn on stderr: the first and the last update, erased at the end; off: nothing
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	for (int on = 0; on < 2; on++) {
		fd = open(path_of("progress.txt"), O_RDWR | O_CREAT | O_TRUNC, 0666);
		dup2(fd, STDERR_FILENO);
		p = progress_new(3, on);
		progress_update(p, 1, 0);
		progress_message(p, "climg: b.png: cannot open");
		progress_update(p, 3, 1);
		progress_end(p);
		n = pread(fd, got, sizeof(got) - 1, 0);
		got[n > 0 ? n : 0] = '\0';
		close(fd);
		dup2(saved, STDERR_FILENO);
		if (!on) {
			CHECK("progress: off prints only messages",
			      strcmp(got, "climg: b.png: cannot open\n") == 0);
			continue;
		}
		CHECK("progress: first update drawn",
		      strncmp(got, "\rclimg: 1/3 done, 0 failed, ", 28) == 0);
		CHECK("progress: message above the line",
		      strstr(got, "\033[K\r\033[Kclimg: b.png: cannot open\n\rclimg: 1/3 done") !=
		          NULL);
		CHECK("progress: last update drawn, then erased",
		      strstr(got, "\rclimg: 3/3 done, 1 failed, ") &&
		          strcmp(got + strlen(got) - 7, "\033[K\r\033[K") == 0);
	}
	close(saved);
	progress_update(NULL, 1, 1);
	progress_end(NULL);
}

int jobs_out_checks(const char *dir);

int jobs_out_checks(const char *dir)
{
	scratch = dir;
	test_report();
	test_registry();
	test_signals();
	test_progress();
	return failures;
}
