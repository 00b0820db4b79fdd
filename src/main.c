// SPDX-License-Identifier: MIT
// climg: argv to options and a chain of stages; runs it; picks the exit status.
//   0 success, 1 run-time failure, 2 usage error, 3 --verify found a difference.
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "err.h"
#include "jobs.h"
#include "par.h"
#include "parse.h"
#include "pipeline.h"
#include "run.h"
#include "version.h"

struct options {
	struct run_opts run;
	bool list_devices, list_stages, help, version;
	const char *files_from; // --files-from LIST, or NULL
	bool null;              // -0: the list is NUL-separated
	int shard_k, shard_n;   // --shard K/N; 0 = none
	bool progress_forced;   // --progress
	int npos;
	char **pos; // the positional arguments: the inputs, then the stages
	int ninputs, nstages;
	char **stages; // pos + ninputs
};

static const char usage_text[] =
	"usage: climg [OPTIONS] INPUT... STAGE... [-o OUTPUT]\n"
	"       climg [OPTIONS] --files-from LIST STAGE... -o TEMPLATE\n"
	"       climg compare A B [COMPARE OPTIONS]    (A, B two images or two directories)\n"
	"\n"
	"Runs images through a chain of stages on an OpenCL device or the CPU path, each\n"
	"job (and each stage) where it is estimated to finish first; the bytes are the same.\n"
	"Each INPUT is a PNG, JPEG, BMP, PGM or PPM file, recognised by content ('-' reads\n"
	"stdin), or a directory: the image files under it, recursively, in sorted order.\n"
	"The inputs are the words before the first that names a stage (write a file named\n"
	"like a stage ./grey). Each STAGE is one argument, NAME or NAME:ARG[:ARG...].\n"
	"Several inputs make a batch: one process, the device opened once, images in\n"
	"parallel on every core; -o is then a template (see Batches below).\n"
	"\n"
"Options (anywhere on the line):\n"
	"  -o, --output FILE      write the result to FILE ('-' = stdout); format by extension:\n"
	"                         .png .jpg .jpeg .bmp .tga .pgm (1 channel) .ppm (3 channels);\n"
	"                         without -o no image is written. In a batch a template:\n"
	"                         %n name, %e extension, %d directory, %i number, %% a %\n"
	"      --format FMT       output format, overriding the extension (png jpeg bmp tga\n"
	"                         pgm ppm); stdout and special files default to png\n"
	"  -d, --device SPEC      run on this OpenCL device: gpu, cpu, a number from\n"
	"                         --list-devices, or part of the device name (default:\n"
	"                         $CLIMG_DEVICE, else the automatic choice: the first GPU, else\n"
	"                         the first device, for the stages where it pays, the plain-C\n"
	"                         path for the rest)\n"
	"      --cpu              use the plain-C reference path only, no OpenCL\n"
	"      --verify           run OpenCL and the CPU path, compare after every stage\n"
	"                         (and the histogram counts at the end)\n"
	"      --quality N        JPEG quality 1-100 (default 90)\n"
	"      --png-level N      PNG compression 0 (none) to 9 (smallest, slow), default 6\n"
	"      --max-pixels N     refuse inputs and stage outputs of more than N pixels\n"
	"                         (default 268435456)\n"
	"      --max-input-bytes N  refuse inputs larger than N bytes (default 1073741824)\n"
	"      --time[=json]      print the time of each phase (open, which runs alongside\n"
	"                         decode; decode and its strips, copy-in, build, upload,\n"
	"                         every stage and where it ran, download and where it went,\n"
	"                         encode, total) and why the stages ran where they did, to\n"
	"                         stderr, as text or JSON\n"
	"      --no-cache         compile the kernels from source: neither read nor write the\n"
	"                         program binary cache ($CLIMG_CACHE_DIR, else\n"
	"                         $XDG_CACHE_HOME/climg, else ~/.cache/climg)\n"
	"      --expect GOLDEN    compare the result with the image GOLDEN (in a batch a\n"
	"                         template, as -o) instead of writing it (with -o: as well);\n"
	"                         the metrics on stderr as climg compare prints them, exit 1\n"
	"                         when it differs; --tolerance, --allow, --ignore as there\n"
	"  -q, --quiet            no warnings, no progress line\n"
	"\n"
	"Batches:\n"
	"  -j, --jobs N           images in flight at most (default: one per core)\n"
	"      --files-from LIST  read the inputs from LIST, one path a line ('-' = stdin)\n"
	"  -0, --null             the paths in LIST end with NUL bytes (find -print0)\n"
	"      --skip-existing    skip an input whose every output exists\n"
	"      --shard K/N        take only the K-th of N shares of the input list\n"
	"      --fail-fast        start no more images after the first failure\n"
	"      --report FILE      one JSON line per input ('-' = stdout): status, sizes,\n"
	"                         outputs with their SHA-256, device, times\n"
	"      --progress         draw the progress line even when stderr is no terminal\n"
	"      --devices LIST     spread the batch over devices: all (every device, and the\n"
	"                         CPU path when the devices are the wait), or numbers from\n"
	"                         --list-devices, or parts of names, comma-separated (also\n"
	"                         $CLIMG_DEVICES); excludes --device and --cpu\n"
	"      --list-devices     list OpenCL devices (the default one marked) and exit\n"
	"      --list-stages      list stages and exit\n"
	"  -h, --help             this help\n"
	"      --version          print the version\n"
	"\n"
	"Comparing (climg compare A B; see climg(1), COMPARE):\n"
	"      --tolerance N      a pixel differs when a channel differs by more than N\n"
	"                         (0-255, default 0)\n"
	"      --allow N|P%       the images are the same when at most N pixels (or P% of\n"
	"                         those compared) differ (default 0)\n"
	"      --ignore X,Y,W,H   leave the W x H pixels at (X, Y) out (repeatable)\n"
	"      --diff FILE        write a picture of the differences: A in light grey, each\n"
	"                         differing pixel red, darker for smaller differences\n"
	"      --json             the metrics as one JSON object (a line per pair)\n"
	"                         Prints one line: same|differ, size, channels, compared,\n"
	"                         differing (count, percent), the largest difference per\n"
	"                         channel and where, mae, rmse, psnr. Directories: the\n"
	"                         images with the same relative path, those on one side only,\n"
	"                         and a summary. Exit status 0 same, 1 differ (sizes and\n"
	"                         channel counts too), 2 usage or an unreadable file\n"
	"\n"
	"Stages:\n"
	"  convolve:KERNEL[:OPTION...]  correlate (the kernel is not flipped, as OpenCV\n"
	"                         filter2D); colour channels each on their own, alpha kept;\n"
	"                         exact fixed point, rounded half up, saturated to 0..255\n"
	"                         KERNEL (weights row by row, top row first):\n"
	"                           box[:size=N]     N x N ones, N odd (default 3)\n"
	"                           gauss[:sigma=S][:radius=R]  exp(-(x^2 + y^2) / (2 S^2)),\n"
	"                                            S = 1, R = ceil(3 S) by default\n"
	"                           sharpen          0 -1 0 / -1 5 -1 / 0 -1 0\n"
	"                           edge             0 -1 0 / -1 4 -1 / 0 -1 0 (Laplacian)\n"
	"                           sobel-x          -1 0 1 / -2 0 2 / -1 0 1\n"
	"                           sobel-y          -1 -2 -1 / 0 0 0 / 1 2 1\n"
	"                           emboss           -2 -1 0 / -1 1 1 / 0 1 2\n"
	"                           identity         1 (1 x 1)\n"
	"                           kernel=W,W,...   N*N numbers, N odd (decimals allowed)\n"
	"                           kernel=@FILE     the same, one row a line\n"
	"                         OPTION: norm=sum|none|D (default: sum, or none when the\n"
	"                         weights sum to 0), bias=B (added after dividing),\n"
	"                         border=replicate|reflect|wrap|zero (default replicate)\n"
	"  grey[:bt601|bt709|avg]  colour to luma, alpha kept; grey input passes through\n"
	"                         bt601 (default): Y = (9798 R + 19235 G + 3735 B + 16384) >> 15\n"
	"                         bt709:           Y = (6967 R + 23435 G + 2366 B + 16384) >> 15\n"
	"                         avg:             Y = (R + G + B + 1) / 3\n"
	"  rotate:DEGREES[:OPTION...]  turn clockwise by any angle (negative = anticlockwise);\n"
	"                         multiples of 90 are an exact remap. OPTIONs, any order:\n"
	"                         bilinear (default) or nearest; expand (default: the canvas\n"
	"                         holds the whole image) or crop (keep W x H); bg=V, bg=#RRGGBB\n"
	"                         or bg=#RRGGBBAA for uncovered pixels (default black,\n"
	"                         transparent with alpha)\n"
	"  transpose              mirror about the main diagonal: out(x, y) = in(y, x)\n"
	"  resize:SIZE[:fit][:FILTER]  scale; SIZE: WxH, W or Wx (aspect kept), xH, P%;\n"
	"                         fit: the largest size inside WxH, aspect kept. FILTER:\n"
	"                         nearest, bilinear (OpenCV's _EXACT ones), area (OpenCV's),\n"
	"                         cubic, lanczos (Pillow's); default lanczos, cubic to enlarge\n"
	"  transverse             mirror about the anti-diagonal: out(x, y) = in(W-1-y, H-1-x)\n"
	"  flip                   mirror top to bottom: out(x, y) = in(x, H-1-y)\n"
	"  flop                   mirror left to right: out(x, y) = in(W-1-x, y)\n"
	"  invert                 negative: v' = 255 - v per colour channel, alpha kept\n"
	"  threshold:T            per colour channel v' = 255 if v > T else 0 (T 0-255), alpha\n"
	"                         kept (cv2.threshold THRESH_BINARY)\n"
	"  equalize               histogram equalisation per colour channel, as cv2.equalizeHist\n"
	"                         (each channel on its own), alpha kept\n"
	"  crop:WxH[+X+Y]         the W x H rectangle at (X, Y): out(x, y) = in(X + x, Y + y);\n"
	"                         without +X+Y centred, X = floor((W' - W) / 2), likewise Y\n"
	"  histogram[:DEST][:plot=FILE][:scale=linear|log]\n"
	"                         count the pixels of each value 0..255 in each channel; the\n"
	"                         image passes through unchanged. CSV to DEST, a file or - for\n"
	"                         stdout (the default unless plot= is given): a header line\n"
	"                         value,grey | value,grey,alpha | value,red,green,blue |\n"
	"                         value,red,green,blue,alpha, then 256 rows v,count,... for\n"
	"                         v = 0..255. plot=FILE draws it too (536x300 RGB, format by\n"
	"                         extension); scale=log gives the plot a log count axis\n"
	"\n"
	"Limits (each refused with a message that names it):\n"
	"  image size             65535 pixels a side and --max-pixels in area, for the input\n"
	"                         (checked from its header) and every stage's output (planned\n"
	"                         before anything is allocated)\n"
	"  input size             --max-input-bytes, for files, stdin, FIFOs and devices alike\n"
	"  memory                 the chain's images (the input and two of its largest size)\n"
	"                         must fit the machine's memory and ulimit -v, checked before\n"
	"                         decoding\n"
	"  chain                  at most 10000 stages\n"
	"  progressive JPEG       at most 100 scans\n"
	"  convolve               radius at most 1000; a kernel that is not separable at most\n"
	"                         2^40 multiply-adds per image\n"
	"Truncated or corrupt images are refused; bytes after the end of an image are ignored.\n"
	"\n"
	"Exit status: 0 success, 1 run-time failure (in a batch: one or more inputs failed),\n"
	"2 usage error, 3 --verify found a difference.\n"
	"See climg(1) for details.\n";

// Records a usage error (printed by main) and returns its exit status.
static int usage_error(const char *fmt, const char *arg)
{
	err_set(fmt, arg);
	return EXIT_USAGE;
}

// Matches argv[*i] against a long option "--name" (with "=VALUE" or the next argument as
// its value when value is non-NULL) or a short one "-c" ("-cVALUE" allowed).
static bool opt_match(char **argv, int argc, int *i, const char *shrt, const char *lng,
		      const char **value, int *missing)
{
	const char *a = argv[*i];
	size_t n = strlen(lng);
	*missing = 0;
	if (!strncmp(a, lng, n) && (a[n] == '\0' || (value && a[n] == '='))) {
		if (!value)
			return true;
		if (a[n] == '=') {
			*value = a + n + 1;
			return true;
		}
	} else if (shrt && !strncmp(a, shrt, 2) && (a[2] == '\0' || value)) {
		if (!value)
			return true;
		if (a[2] != '\0') {
			*value = a + 2;
			return true;
		}
	} else {
		return false;
	}
	if (*i + 1 >= argc) {
		*missing = 1;
		return true;
	}
	*value = argv[++*i];
	return true;
}

static void list_stages(void)
{
	for (int i = 0; stage_list[i]; i++)
		printf("%-24s %s\n", stage_list[i]->usage, stage_list[i]->summary);
}

// Whether word names a stage: its name before the first ':' is one.
static bool names_stage(const char *w)
{
	const char *colon = strchr(w, ':');
	size_t len = colon ? (size_t)(colon - w) : strlen(w);
	for (int i = 0; stage_list[i]; i++)
		if (strlen(stage_list[i]->name) == len && !strncmp(stage_list[i]->name, w, len))
			return true;
	return false;
}

// Whether word, which names no existing file, reads as a mistyped stage rather than a
// missing input: a name of lowercase letters, digits and '-' before any ':', and no '/'
// (so `climg in.png blur` says "unknown stage 'blur'", and `climg a.png b.png` with b.png
// missing says b.png cannot be opened).
static bool looks_like_stage(const char *w)
{
	struct stat st;
	if (!strcmp(w, "-") || strchr(w, '/') || stat(w, &st) == 0)
		return false;
	for (const char *p = w; *p && *p != ':'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return false;
	return true;
}

// The inputs: the positional words before the first that names a stage (its name before
// the first ':'), or after the first input, that reads as a mistyped one; a file named like
// a stage is written ./grey.
static int split_inputs(struct options *o)
{
	int k = 0;
	while (k < o->npos && !names_stage(o->pos[k]) && !(k > 0 && looks_like_stage(o->pos[k])))
		k++;
	o->ninputs = k;
	o->stages = o->pos + k;
	o->nstages = o->npos - k;
	if (k == 0)
		return usage_error("no input given: the input comes first (climg INPUT STAGE... -o "
				   "OUTPUT); a file named like a stage is written ./%s", o->pos[0]);
	return 0;
}

// The job list: the inputs named on the command line or listed in --files-from, directories
// walked, then this process's shard. 0 or an exit status with err set.
static int make_jobs(const struct options *o, struct job_list *l)
{
	int rc = o->files_from ? jobs_add_list(l, o->files_from, o->null)
			       : jobs_add_args(l, o->ninputs, o->pos);
	if (rc < 0)
		return EXIT_RUN;
	if (l->n == 0 && !o->shard_n) {
		err_set("no input images%s", o->files_from ? " in the list" : " under the directories given");
		return EXIT_RUN;
	}
	if (o->shard_n)
		jobs_shard(l, o->shard_k, o->shard_n);
	return 0;
}

// CLIMG_DEVICE and CLIMG_DEVICES, where no option names a device (--cpu ignores them):
// they exclude each other as the options do. 0 or EXIT_USAGE with err set.
static int env_devices(struct run_opts *r)
{
	const char *one = getenv("CLIMG_DEVICE"), *set = getenv("CLIMG_DEVICES");

	if (r->device || r->devices)
		return 0;
	one = one && *one ? one : NULL;
	set = set && *set ? set : NULL;
	if (one && set && !r->cpu)
		return usage_error("%s", "CLIMG_DEVICE and CLIMG_DEVICES exclude each other");
	r->device = one;
	r->devices = set;
	return 0;
}

// Parses argv into o. Returns 0, or an exit status after printing the usage error.
static int parse_args(int argc, char **argv, struct options *o, char **positional)
{
	int npos = 0, missing;
	bool only_positional = false;
	long n;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		if (only_positional || a[0] != '-' || !strcmp(a, "-")) {
			positional[npos++] = argv[i];
			continue;
		}
#define VALUE(s, l) (opt_match(argv, argc, &i, s, l, &v, &missing))
#define FLAG(s, l) (opt_match(argv, argc, &i, s, l, NULL, &missing))
		if (!strcmp(a, "--"))
			only_positional = true;
		else if (VALUE("-o", "--output")) {
			if (!missing && o->run.output)
				return usage_error("-o given twice ('%s'); a batch names its outputs with "
						   "one template such as -o 'out/%%n.png'", v);
			o->run.output = v;
		} else if (VALUE("-j", "--jobs")) {
			if (!missing && !parse_long(v, 1, PAR_MAX_THREADS, &n))
				return usage_error("--jobs must be a whole number from 1 to 256, not '%s'", v);
			o->run.jobs = (int)n;
		} else if (VALUE(NULL, "--files-from"))
			o->files_from = v;
		else if (FLAG("-0", "--null"))
			o->null = true;
		else if (VALUE(NULL, "--shard")) {
			if (!missing && jobs_parse_shard(v, &o->shard_k, &o->shard_n) < 0)
				return EXIT_USAGE;
		} else if (VALUE(NULL, "--expect")) {
			if (!missing && jobs_template_check_for("--expect", v) < 0)
				return EXIT_USAGE;
			o->run.expect = v;
		} else if (VALUE(NULL, "--tolerance") || VALUE(NULL, "--allow") ||
			   VALUE(NULL, "--ignore")) {
			char name[16];
			snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
			if (!missing && cmp_parse_opt(&o->run.cmp, name, v) < 0)
				return EXIT_USAGE;
		} else if (VALUE(NULL, "--report"))
			o->run.report = v;
		else if (FLAG(NULL, "--fail-fast"))
			o->run.fail_fast = true;
		else if (FLAG(NULL, "--skip-existing"))
			o->run.skip_existing = true;
		else if (FLAG(NULL, "--progress"))
			o->progress_forced = true;
		else if (VALUE("-d", "--device"))
			o->run.device = v;
		else if (VALUE(NULL, "--devices"))
			o->run.devices = v;
		else if (VALUE(NULL, "--format"))
			o->run.format = v;
		else if (VALUE(NULL, "--quality")) {
			if (!missing && !parse_long(v, 1, 100, &n))
				return usage_error("--quality must be a whole number from 1 to 100, not '%s'", v);
			o->run.write.jpeg_quality = (int)n;
		} else if (VALUE(NULL, "--png-level")) {
			if (!missing && !parse_long(v, 0, 9, &n))
				return usage_error("--png-level must be a whole number from 0 to 9, not '%s'", v);
			o->run.write.png_level = (int)n;
		} else if (VALUE(NULL, "--max-pixels")) {
			if (!missing && !parse_long(v, 1, (long)IMG_MAX_SIDE * IMG_MAX_SIDE, &n))
				return usage_error("--max-pixels must be a whole number from 1 to 4294836225, not '%s'", v);
			o->run.limits.max_pixels = (uint64_t)n;
		} else if (VALUE(NULL, "--max-input-bytes")) {
			if (!missing && !parse_long(v, 1, 1L << 40, &n))
				return usage_error("--max-input-bytes must be a whole number from 1 to 1099511627776, not '%s'", v);
			o->run.limits.max_input_bytes = (uint64_t)n;
		} else if (!strcmp(a, "--time") || !strcmp(a, "--time=text")) {
			o->run.time = true;
		} else if (!strcmp(a, "--time=json")) {
			o->run.time = o->run.time_json = true;
		} else if (FLAG(NULL, "--cpu"))
			o->run.cpu = true;
		else if (FLAG(NULL, "--verify"))
			o->run.verify = true;
		else if (FLAG(NULL, "--no-cache"))
			o->run.no_cache = true;
		else if (FLAG("-q", "--quiet"))
			err_quiet = 1;
		else if (FLAG(NULL, "--list-devices"))
			o->list_devices = true;
		else if (FLAG(NULL, "--list-stages"))
			o->list_stages = true;
		else if (FLAG("-h", "--help"))
			o->help = true;
		else if (FLAG(NULL, "--version"))
			o->version = true;
		else
			return usage_error("unknown option '%s'", a);
		if (missing)
			return usage_error("option '%s' needs a value", a);
#undef VALUE
#undef FLAG
	}
	if (o->help || o->version || o->list_devices || o->list_stages)
		return 0;
	if (npos == 0 && !o->files_from)
		return usage_error("%s", "no input given");
	if (o->run.cpu && o->run.verify)
		return usage_error("%s", "--verify compares OpenCL with the CPU path; it cannot be used with --cpu");
	if (o->run.cpu && o->run.device)
		return usage_error("%s", "--cpu and --device exclude each other");
	if (o->run.cpu && o->run.devices)
		return usage_error("%s", "--cpu and --devices exclude each other");
	if (o->run.device && o->run.devices)
		return usage_error("%s", "--device and --devices exclude each other");
	if (o->null && !o->files_from)
		return usage_error("%s", "-0 (--null) goes with --files-from");
	o->pos = positional;
	o->npos = npos;
	if (o->files_from) { // every positional word is a stage
		o->stages = positional;
		o->nstages = npos;
		return 0;
	}
	return split_inputs(o);
}

int main(int argc, char **argv)
{
	struct options o = {
		.run = { .write = { .jpeg_quality = 90, .png_level = 6 },
			 .limits = { .max_pixels = 268435456, .max_input_bytes = 1073741824 } },
	};
	char **positional = calloc((size_t)argc + 1, sizeof *positional);
	struct chain chain = { 0 };
	struct job_list jobs = { 0 };
	int status;

	if (!positional) {
		fputs("climg: out of memory\n", stderr);
		return EXIT_RUN;
	}
	if (getenv("CLIMG_PREPARE")) { // climg's own background process (run.h)
		free(positional);
		return run_prepare(getenv("CLIMG_PREPARE"));
	}
	signal(SIGPIPE, SIG_IGN); // a closed stdout is a write error, reported like any other
	signal(SIGXFSZ, SIG_IGN); // so is a file size limit (ulimit -f): EFBIG, then cleanup
	if (argc > 1 && !strcmp(argv[1], "compare")) { // a command of its own (compare.c)
		free(positional);
		status = compare_main(argc - 1, argv + 1);
		if (fflush(stdout) != 0) {
			fprintf(stderr, "climg: cannot write to standard output\n");
			status = EXIT_USAGE;
		}
		return status;
	}
	status = parse_args(argc, argv, &o, positional);
	if (!status)
		status = env_devices(&o.run);
	if (status)
		; // a usage error, reported below
	else if (o.help)
		fputs(usage_text, stdout);
	else if (o.version)
		status = version_print(stdout) < 0 ? EXIT_RUN : 0;
	else if (o.list_stages)
		list_stages();
	else if (o.list_devices)
		status = run_list_devices(stdout) < 0 ? EXIT_RUN : 0;
	else if (chain_parse(&chain, o.nstages, o.stages) < 0)
		status = EXIT_USAGE;
	else if (!(status = make_jobs(&o, &jobs))) {
		o.run.progress = o.progress_forced || (!err_quiet && isatty(STDERR_FILENO));
		status = run_batch(&o.run, &chain, jobs.v, jobs.n);
	}
	if (status && *err_msg())
		fprintf(stderr, "climg: %s\n", err_msg());
	if (fflush(stdout) != 0 && !status) {
		fprintf(stderr, "climg: cannot write to standard output\n");
		status = EXIT_RUN;
	}
	if (run_left_behind()) { // a device's thread still runs: end under it (see run.h)
		fflush(stderr);
		_exit(status);
	}
	jobs_free(&jobs);
	chain_free(&chain);
	free(positional);
	return status;
}
