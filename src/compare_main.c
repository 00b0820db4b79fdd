// SPDX-License-Identifier: MIT
// `climg compare A B [OPTIONS]`: the command's arguments, and two files compared: decoded at
// once (A on a second thread) while the OpenCL device, where one is used, opens on a third
// (src/run_dev.h), then compared on the device or on the CPU path, or on both with --verify.
// Directories: compare_dir.c.
//
// The device is used only where --device (or CLIMG_DEVICE) names one, or --verify asks for
// both: a comparison reads each image once, which the CPU path does in less time than it
// takes to open a device and hand it the images, and with less memory (docs/BENCHMARKS.md,
// "climg compare against odiff and ImageMagick"); the integers, and so every metric, are
// the same.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compare.h"
#include "err.h"
#include "help.h"
#include "run_dev.h"
#include "suggest.h"

// Loads one image on a thread of its own, its message kept for the caller.
struct load_job {
	const char *path;
	const struct io_limits *lim;
	struct img im;
	int rc;
	char msg[1024];
};

static void *load_thread(void *arg)
{
	struct load_job *j = arg;
	j->rc = cmp_load(j->path, j->lim, &j->im);
	if (j->rc < 0)
		snprintf(j->msg, sizeof j->msg, "%s", err_msg());
	return NULL;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return strcmp(path, "-") && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// Two files: decoded at once, A on a second thread, then compared by cmp_run on d.
static int compare_files(const char *pa, const char *pb, const struct cmp_opts *o,
			 const struct io_limits *lim, struct run_dev *d, bool verify)
{
	struct load_job ja = { .path = pa, .lim = lim }, jb = { .path = pb, .lim = lim };
	struct cmp_result r;
	struct img diff = { 0 };
	pthread_t t;
	bool threaded = pthread_create(&t, NULL, load_thread, &ja) == 0;
	int status = CMP_USAGE, rc;

	if (!threaded)
		load_thread(&ja);
	load_thread(&jb);
	if (threaded)
		pthread_join(t, NULL);
	if (ja.rc < 0 || jb.rc < 0) {
		fprintf(stderr, "climg: compare: %s\n", ja.rc < 0 ? ja.msg : jb.msg);
		goto done;
	}
	rc = cmp_run(d, verify, &ja.im, &jb.im, o, &r);
	if (rc != 0) {
		fprintf(stderr, "climg: compare: %s\n", err_msg());
		status = rc > 0 ? CMP_VERIFY : CMP_USAGE;
		goto done;
	}
	if (cmp_print(stdout, &r, o, NULL) < 0) {
		fprintf(stderr, "climg: compare: %s\n", err_msg());
		goto done;
	}
	if (o->diff && r.mismatch) {
		fprintf(stderr, "climg: compare: %s: not written: the images differ in %s\n", o->diff,
			r.mismatch);
	} else if (o->diff && (cmp_diff_image(&ja.im, &jb.im, o, &diff) < 0 ||
			       cmp_write(o->diff, &diff) < 0)) {
		fprintf(stderr, "climg: compare: %s\n", err_msg());
		goto done;
	}
	status = r.same && !r.mismatch ? CMP_SAME : CMP_DIFFER;
done:
	free(ja.im.data);
	free(jb.im.data);
	free(diff.data);
	return status;
}

// The options after `climg compare`: those of the comparison (o), and where it runs.
struct cmd {
	struct cmp_opts o;
	const char *pos[2];
	int npos;
	const char *device; // --device, -d or CLIMG_DEVICE; NULL: automatic
	bool cpu, verify, help;
};

// Parses argv into c. 0, or CMP_USAGE after printing the error.
static int parse(int argc, char **argv, struct cmd *c)
{
	bool only_pos = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '='), *v = NULL;
		char name[32];
		size_t n = eq ? (size_t)(eq - a) : strlen(a);
		if (only_pos || a[0] != '-' || !strcmp(a, "-")) {
			if (c->npos == 2) {
				fprintf(stderr, "climg: compare: more than two images given ('%s')\n", a);
				return CMP_USAGE;
			}
			c->pos[c->npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			c->help = true;
			continue;
		}
		if (!strcmp(a, "--json")) {
			c->o.json = true;
			continue;
		}
		if (!strcmp(a, "--cpu")) {
			c->cpu = true;
			continue;
		}
		if (!strcmp(a, "--verify")) {
			c->verify = true;
			continue;
		}
		if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			err_quiet = 1;
			continue;
		}
		snprintf(name, sizeof name, "%.*s", (int)(n < 31 ? n : 31), a);
		if (strcmp(name, "--tolerance") && strcmp(name, "--allow") && strcmp(name, "--ignore") &&
		    strcmp(name, "--diff") && strcmp(name, "--device") && strcmp(name, "-d")) {
			static const char *const opts[] = { "--tolerance", "--allow", "--ignore",
							    "--diff", "--device", "--cpu", "--verify",
							    "--json", "--quiet", "--help", NULL };
			const char *near = suggest(name, opts);
			fprintf(stderr, "climg: compare: unknown option '%s'%s%s%s\ntry 'climg --help'\n",
				a, near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
			return CMP_USAGE;
		}
		if (eq)
			v = eq + 1;
		else if (i + 1 < argc)
			v = argv[++i];
		else {
			fprintf(stderr, "climg: compare: option '%s' needs a value\n", a);
			return CMP_USAGE;
		}
		if (!strcmp(name, "--diff")) {
			c->o.diff = v;
		} else if (!strcmp(name, "--device") || !strcmp(name, "-d")) {
			c->device = v;
		} else if (cmp_parse_opt(&c->o, name, v) < 0) {
			fprintf(stderr, "climg: compare: %s\n", err_msg());
			return CMP_USAGE;
		}
	}
	if (c->cpu && (c->verify || c->device)) {
		fprintf(stderr, "climg: compare: --cpu and %s exclude each other\n",
			c->verify ? "--verify" : "--device");
		return CMP_USAGE;
	}
	if (!c->device && !c->cpu) {
		const char *env = getenv("CLIMG_DEVICE");
		c->device = env && *env ? env : NULL;
	}
	if (!c->device && !c->verify) // see the top of this file
		c->cpu = true;
	return 0;
}

int compare_main(int argc, char **argv)
{
	struct cmd c = { 0 };
	struct io_limits lim = { .max_pixels = 268435456, .max_input_bytes = 1073741824 };
	struct run_dev *d;
	int status = parse(argc, argv, &c);

	if (status)
		return status;
	if (c.help) {
		help_compare(stdout);
		return CMP_SAME;
	}
	if (c.npos != 2) {
		fputs("climg: compare: two images (or two directories) needed: climg compare A B "
		      "[--tolerance N] [--allow N|P%] [--ignore X,Y,W,H]... [--diff FILE] [--json] "
		      "[--cpu|--device SPEC] [--verify]\n",
		      stderr);
		return CMP_USAGE;
	}
	if (is_dir(c.pos[0]) != is_dir(c.pos[1])) {
		fprintf(stderr, "climg: compare: '%s' is a directory and '%s' is not\n",
			is_dir(c.pos[0]) ? c.pos[0] : c.pos[1], is_dir(c.pos[0]) ? c.pos[1] : c.pos[0]);
		return CMP_USAGE;
	}
	if (c.o.diff && img_format_from_ext(c.o.diff) == FMT_NONE) {
		fprintf(stderr, "climg: compare: %s: unknown output extension (use .png .jpg .jpeg "
				".bmp .tga .ppm)\n", c.o.diff);
		return CMP_USAGE;
	}
	if (is_dir(c.pos[0]) && c.o.diff) {
		fputs("climg: compare: --diff names one file: it compares two images, not "
		      "directories\n", stderr);
		return CMP_USAGE;
	}
	// The device opens on a thread of its own while the images decode.
	d = dev_start(&(struct run_dev_opts){ .spec = c.device, .cpu = c.cpu, .verify = c.verify });
	if (!d) {
		fprintf(stderr, "climg: compare: %s\n", err_msg());
		return CMP_USAGE;
	}
	if (is_dir(c.pos[0]))
		status = compare_dirs(c.pos[0], c.pos[1], &c.o, &lim, d, c.verify);
	else
		status = compare_files(c.pos[0], c.pos[1], &c.o, &lim, d, c.verify);
	dev_close(d);
	return status;
}
