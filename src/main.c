// SPDX-License-Identifier: MIT
// climg: argv to options and a chain of stages; runs it; picks the exit status.
//   0 success, 1 run-time failure, 2 usage error, 3 --verify found a difference.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "io/io.h"
#include "ocl.h"
#include "parse.h"
#include "pipeline.h"

enum { EXIT_RUN = 1, EXIT_USAGE = 2, EXIT_VERIFY = 3 };

struct options {
	const char *input, *output, *device, *format;
	bool cpu, verify, list_devices, list_stages, help, version;
	struct write_opts write;
	struct io_limits limits;
	int nstages;
	char **stages; // the positional arguments after the input
};

static const char usage_text[] =
	"usage: climg [OPTIONS] INPUT STAGE... [-o OUTPUT]\n"
	"\n"
	"Runs an image through a chain of stages on an OpenCL device (or the CPU).\n"
	"INPUT is a PNG, JPEG, BMP, PGM or PPM file, recognised by content; '-' reads stdin.\n"
	"Each STAGE is one argument, NAME or NAME:ARG[:ARG...].\n"
	"\n"
	"Options (anywhere on the line):\n"
	"  -o, --output FILE      write the result to FILE ('-' = stdout); format by extension:\n"
	"                         .png .jpg .jpeg .bmp .tga .pgm (1 channel) .ppm (3 channels);\n"
	"                         without -o no image is written\n"
	"      --format FMT       output format, overriding the extension (png jpeg bmp tga\n"
	"                         pgm ppm); stdout and special files default to png\n"
	"  -d, --device SPEC      OpenCL device: gpu, cpu, a number from --list-devices, or part\n"
	"                         of the device name (default: $CLIMG_DEVICE, else the first\n"
	"                         GPU, else the first device)\n"
	"      --cpu              use the plain-C reference path, no OpenCL\n"
	"      --verify           run OpenCL and the CPU path, compare after every stage\n"
	"      --quality N        JPEG quality 1-100 (default 90)\n"
	"      --png-level N      PNG compression level 0-9 (default 6)\n"
	"      --max-pixels N     refuse inputs of more than N pixels (default 268435456)\n"
	"      --max-input-bytes N  refuse inputs larger than N bytes (default 1073741824)\n"
	"  -q, --quiet            no warnings\n"
	"      --list-devices     list OpenCL devices and exit\n"
	"      --list-stages      list stages and exit\n"
	"  -h, --help             this help\n"
	"      --version          print the version\n"
	"\n"
	"Stages:\n"
	"  grey[:bt601|bt709|avg]  colour to luma, alpha kept; grey input passes through\n"
	"                         bt601 (default): Y = (9798 R + 19235 G + 3735 B + 16384) >> 15\n"
	"                         bt709:           Y = (6967 R + 23435 G + 2366 B + 16384) >> 15\n"
	"                         avg:             Y = (R + G + B + 1) / 3\n"
	"  rotate:DEGREES         turn clockwise by a multiple of 90 (negative = anticlockwise)\n"
	"  transpose              mirror about the main diagonal: out(x, y) = in(y, x)\n"
	"\n"
	"Limits (each refused with a message that names it):\n"
	"  image size             65535 pixels a side and --max-pixels in area, for the input\n"
	"                         (checked from its header) and every stage's output (planned\n"
	"                         before anything is allocated)\n"
	"  input size             --max-input-bytes, for files, stdin, FIFOs and devices alike\n"
	"  chain                  at most 10000 stages\n"
	"  progressive JPEG       at most 100 scans\n"
	"Truncated or corrupt images are refused; bytes after the end of an image are ignored.\n"
	"\n"
	"Exit status: 0 success, 1 run-time failure, 2 usage error, 3 --verify found a difference.\n"
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
		else if (VALUE("-o", "--output"))
			o->output = v;
		else if (VALUE("-d", "--device"))
			o->device = v;
		else if (VALUE(NULL, "--format"))
			o->format = v;
		else if (VALUE(NULL, "--quality")) {
			if (!missing && !parse_long(v, 1, 100, &n))
				return usage_error("--quality must be a whole number from 1 to 100, not '%s'", v);
			o->write.jpeg_quality = (int)n;
		} else if (VALUE(NULL, "--png-level")) {
			if (!missing && !parse_long(v, 0, 9, &n))
				return usage_error("--png-level must be a whole number from 0 to 9, not '%s'", v);
			o->write.png_level = (int)n;
		} else if (VALUE(NULL, "--max-pixels")) {
			if (!missing && !parse_long(v, 1, (long)IMG_MAX_SIDE * IMG_MAX_SIDE, &n))
				return usage_error("--max-pixels must be a whole number from 1 to 4294836225, not '%s'", v);
			o->limits.max_pixels = (uint64_t)n;
		} else if (VALUE(NULL, "--max-input-bytes")) {
			if (!missing && !parse_long(v, 1, 1L << 40, &n))
				return usage_error("--max-input-bytes must be a whole number from 1 to 1099511627776, not '%s'", v);
			o->limits.max_input_bytes = (uint64_t)n;
		} else if (FLAG(NULL, "--cpu"))
			o->cpu = true;
		else if (FLAG(NULL, "--verify"))
			o->verify = true;
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
	if (npos == 0)
		return usage_error("%s", "no input given");
	if (o->cpu && o->verify)
		return usage_error("%s", "--verify compares OpenCL with the CPU path; it cannot be used with --cpu");
	if (o->cpu && o->device)
		return usage_error("%s", "--cpu and --device exclude each other");
	o->input = positional[0];
	o->stages = positional + 1;
	o->nstages = npos - 1;
	return 0;
}

static void list_stages(void)
{
	for (int i = 0; stage_list[i]; i++)
		printf("%-24s %s\n", stage_list[i]->usage, stage_list[i]->summary);
}

// Opens the device to run on. Returns NULL without error (quietly, or with one warning)
// when the CPU path should run instead: there is no device, or the automatically chosen
// one cannot be opened. Sets *failed on a real error: a device the user named (--device,
// CLIMG_DEVICE) that is missing or fails, or no device for --verify.
static struct ocl *open_device(const struct options *o, bool *failed)
{
	const char *spec = o->device ? o->device : getenv("CLIMG_DEVICE");
	int none = 0;
	struct ocl *dev;
	*failed = false;
	if (o->cpu)
		return NULL;
	if (spec && !*spec)
		spec = NULL;
	dev = ocl_open(spec, &none);
	if (dev)
		return dev;
	if (!spec && !o->verify) {
		if (none)
			warn("no OpenCL device found; using the CPU path");
		else
			warn("%s; using the CPU path", err_msg());
		return NULL;
	}
	*failed = true;
	return NULL;
}

// Whether path is standard output or an existing special file (/dev/null, a FIFO): such
// outputs have no extension to go by and are written as PNG unless --format says otherwise.
static bool is_stream(const char *path)
{
	struct stat st;
	return !strcmp(path, "-") || (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

static int run(const struct options *o, struct chain *chain)
{
	struct img_reader *rd = NULL;
	struct outfile *out = NULL;
	struct ocl *dev = NULL;
	struct img in = { 0 }, res = { 0 };
	enum img_format fmt = FMT_NONE;
	struct geom g;
	int status = EXIT_RUN, drops_alpha = 0, rc;
	bool dev_failed, device_named, dev_error = false;

	// the output format is known from the arguments alone
	if (o->output) {
		if (o->format) {
			fmt = img_format_from_name(o->format);
			if (!fmt)
				return usage_error("unknown --format '%s' (use png, jpeg, bmp, tga, pgm or ppm)", o->format);
		} else {
			fmt = img_format_from_ext(o->output);
			if (!fmt && is_stream(o->output))
				fmt = FMT_PNG;
			if (!fmt)
				return usage_error("cannot tell the output format of '%s' (use .png, .jpg, .bmp, .tga, .pgm or .ppm, or --format)", o->output);
		}
	} else if (o->format) {
		return usage_error("%s", "--format needs -o");
	}
	// The output first: a missing or read-only directory, or a directory named as the
	// output, is reported before the input is even read.
	if (o->output) {
		out = outfile_open(o->output);
		if (!out)
			goto fail;
	}

	rd = img_reader_open(o->input, &o->limits);
	if (!rd)
		goto fail;
	g = img_reader_geom(rd);
	chain->max_pixels = o->limits.max_pixels;
	if (chain_plan(chain, &g) < 0) {
		status = EXIT_USAGE;
		goto fail;
	}
	if (o->output && img_format_check(fmt, chain->out.ch, &drops_alpha) < 0) {
		err_prefix("%s", o->output);
		status = EXIT_USAGE;
		goto fail;
	}

	device_named = o->device || (getenv("CLIMG_DEVICE") && *getenv("CLIMG_DEVICE"));
	dev = open_device(o, &dev_failed);
	if (dev_failed)
		goto fail;

	in = (struct img){ g.w, g.h, g.ch, malloc(geom_bytes(&g)) };
	if (!in.data) {
		err_set("out of memory for a %dx%d image", g.w, g.h);
		goto fail;
	}
	if (img_reader_decode(rd, in.data) < 0)
		goto fail;
	img_reader_close(rd);
	rd = NULL;

	if (o->verify) {
		rc = pipeline_verify(chain, dev, &in, &res);
		if (rc == 1)
			status = EXIT_VERIFY;
		dev_error = rc < 0;
		if (rc != 0)
			goto fail;
	} else if (dev) {
		if (pipeline_cl(chain, dev, &in, &res) < 0) {
			dev_error = device_named;
			if (device_named)
				goto fail;
			// An automatically chosen device failed: the CPU path gives the same
			// bytes. One warning line, whatever failed (a build log included).
			warn("%s; using the CPU path", err_msg());
			if (pipeline_cpu(chain, &in, &res) < 0)
				goto fail;
		}
	} else if (pipeline_cpu(chain, &in, &res) < 0) {
		goto fail;
	}

	if (out) {
		if (drops_alpha)
			warn("%s output has no alpha channel; alpha dropped", img_format_name(fmt));
		if (img_encode(out, fmt, &res, &o->write) < 0)
			goto fail; // out is aborted below: the temporary file goes
		rc = outfile_commit(out); // frees out, removing the temporary file on failure
		out = NULL;
		if (rc < 0)
			goto fail;
	}
	status = 0;
fail:
	// An OpenCL failure reported as an error: a failed build's log goes with it.
	if (status && dev_error && ocl_build_log(dev))
		fputs(ocl_build_log(dev), stderr);
	outfile_abort(out);
	img_reader_close(rd);
	ocl_close(dev);
	free(in.data);
	free(res.data);
	return status;
}

int main(int argc, char **argv)
{
	struct options o = {
		.write = { .jpeg_quality = 90, .png_level = 6 },
		.limits = { .max_pixels = 268435456, .max_input_bytes = 1073741824 },
	};
	char **positional = calloc((size_t)argc + 1, sizeof *positional);
	struct chain chain = { 0 };
	int status;

	if (!positional) {
		fputs("climg: out of memory\n", stderr);
		return EXIT_RUN;
	}
	signal(SIGPIPE, SIG_IGN); // a closed stdout is a write error, reported like any other
	signal(SIGXFSZ, SIG_IGN); // so is a file size limit (ulimit -f): EFBIG, then cleanup
	status = parse_args(argc, argv, &o, positional);
	if (status)
		; // a usage error, reported below
	else if (o.help)
		fputs(usage_text, stdout);
	else if (o.version)
		puts("climg " CLIMG_VERSION);
	else if (o.list_stages)
		list_stages();
	else if (o.list_devices)
		status = ocl_list_devices(stdout) < 0 ? EXIT_RUN : 0;
	else if (chain_parse(&chain, o.nstages, o.stages) < 0)
		status = EXIT_USAGE;
	else
		status = run(&o, &chain);
	if (status && *err_msg())
		fprintf(stderr, "climg: %s\n", err_msg());
	if (fflush(stdout) != 0 && !status) {
		fprintf(stderr, "climg: cannot write to standard output\n");
		status = EXIT_RUN;
	}
	chain_free(&chain);
	free(positional);
	return status;
}
