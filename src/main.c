// SPDX-License-Identifier: MIT
// climg: argv to options and a chain of stages; runs it; picks the exit status.
//   0 success, 1 run-time failure, 2 usage error, 3 --verify found a difference.
#define _DEFAULT_SOURCE // madvise
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "io/io.h"
#include "ocl.h"
#include "par.h"
#include "parse.h"
#include "pipeline.h"

enum { EXIT_RUN = 1, EXIT_USAGE = 2, EXIT_VERIFY = 3 };

struct options {
	const char *input, *output, *device, *format;
	bool cpu, verify, list_devices, list_stages, help, version, time, time_json, no_cache;
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
	"                         (and the histogram counts at the end)\n"
	"      --quality N        JPEG quality 1-100 (default 90)\n"
	"      --png-level N      PNG compression 0 (none) to 9 (smallest, slow), default 6\n"
	"      --max-pixels N     refuse inputs and stage outputs of more than N pixels\n"
	"                         (default 268435456)\n"
	"      --max-input-bytes N  refuse inputs larger than N bytes (default 1073741824)\n"
	"      --time[=json]      print the time of each phase (open, which runs alongside\n"
	"                         decode; decode and its strips, copy-in, build, upload,\n"
	"                         every stage, download and where it went, encode, total)\n"
	"                         to stderr, as text or JSON\n"
	"      --no-cache         compile the kernels from source: neither read nor write the\n"
	"                         program binary cache ($CLIMG_CACHE_DIR, else\n"
	"                         $XDG_CACHE_HOME/climg, else ~/.cache/climg)\n"
	"  -q, --quiet            no warnings\n"
	"      --list-devices     list OpenCL devices and exit\n"
	"      --list-stages      list stages and exit\n"
	"  -h, --help             this help\n"
	"      --version          print the version\n"
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
		} else if (!strcmp(a, "--time") || !strcmp(a, "--time=text")) {
			o->time = true;
		} else if (!strcmp(a, "--time=json")) {
			o->time = o->time_json = true;
		} else if (FLAG(NULL, "--cpu"))
			o->cpu = true;
		else if (FLAG(NULL, "--verify"))
			o->verify = true;
		else if (FLAG(NULL, "--no-cache"))
			o->no_cache = true;
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

// ---- decoding while the device opens --------------------------------------------------------
// Opening an OpenCL device takes 20 ms (PoCL) to over 200 ms (NVIDIA's driver), decoding an
// 8K image 50 ms (a JPEG in strips) to 1 s, and neither needs the other. So a second
// thread decodes the input into plain memory while this one opens the device and, on a
// device with memory of its own, allocates the pinned memory the input will be uploaded
// from (and the output downloaded into); the decoded image is then copied there
// (copy_in), a few ms, and uploads at full speed. A zero-copy device (PoCL) reads the
// decoded image in place: no pinned memory, no copy. With --cpu there is no device to open,
// but the input decodes on the second thread all the same, so that this one can make the
// memory the decoder and the stages write present meanwhile (populate_while_decoding).
// Every OpenCL call stays on this thread (drivers keep state of their own per thread).
// The decoder prints nothing; err_set() keeps a message per thread, so the thread hands
// its message over in msg.
struct decode_job {
	struct img_reader *rd;
	void *dst;
	pthread_t thread;
	bool started;
	int rc;           // img_reader_decode's
	double ms, end;   // its time, and now_ms() when it ended
	char msg[1024];   // err_msg() of a failure
	atomic_bool done; // set when it has ended
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void *decode_thread(void *arg)
{
	struct decode_job *j = arg;
	double t0 = now_ms();

	j->rc = img_reader_decode(j->rd, j->dst);
	if (j->rc < 0)
		snprintf(j->msg, sizeof j->msg, "%s", err_msg());
	j->end = now_ms();
	j->ms = j->end - t0;
	atomic_store(&j->done, true);
	return NULL;
}

// Decodes rd into dst: on a second thread, or where none can be started, here and now.
static void decode_start(struct decode_job *j, struct img_reader *rd, void *dst)
{
	*j = (struct decode_job){ .rd = rd, .dst = dst };
	j->started = pthread_create(&j->thread, NULL, decode_thread, j) == 0;
	if (!j->started)
		decode_thread(j);
}

// ---- memory made present while the input decodes ------------------------------------------
// The first write to each page of fresh memory is a page fault, and on a small virtual
// machine those cost more than the stages: on the 2-core VM (docs/BENCHMARKS.md,
// twenty-ninth session) writing 99.5 MB of fresh memory took 265 ms, writing it again 5 ms,
// so `rotate:90` of an 8K image on PoCL took 170 ms, not 10, writing its output into fresh
// memory, and the decoder spent its time faulting in its own. Linux's MADV_POPULATE_WRITE
// (5.14 and later) makes a range present, without writing to it, in a fraction of that time
// (15 ms there, and the first write then 51 ms). So while the input decodes on the other
// thread and this one, the device open (or found missing, or --cpu), has nothing else to
// do, it makes the decoder's memory present ahead of it (the decoder's bytes are not
// touched), then, for the CPU path or a zero-copy device, the memory the stages will write.
// It stops as soon as the decoder has ended: from then on the run waits for nothing, and
// the stages fault in what is left on all their threads. Only a hint: where the kernel does
// not have it, nothing is made present.
#define POPULATE_CHUNK ((size_t)8 << 20)

// Makes p .. p + bytes present, a chunk at a time, until the decoder j has ended. False
// where the kernel cannot.
static bool populate_while_decoding(const struct decode_job *j, void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p, end = a + bytes;

	if (!p || page <= 0)
		return true;
	a = (a + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
	end = end / (uintptr_t)page * (uintptr_t)page;
	for (; a < end && !atomic_load(&j->done); a += POPULATE_CHUNK)
		if (madvise((void *)a, end - a < POPULATE_CHUNK ? end - a : POPULATE_CHUNK,
			    MADV_POPULATE_WRITE) != 0)
			return false;
	return true;
#else
	(void)j, (void)p, (void)bytes;
	return false;
#endif
}

// Waits for the decoder, if it runs.
static void decode_join(struct decode_job *j)
{
	if (j->started)
		pthread_join(j->thread, NULL);
	j->started = false;
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

// Memory for the decoded input: aligned to a page and whole pages, as a zero-copy device
// wants to read host memory in place (ocl_wrap_alloc's alignment, which is a page on PoCL;
// pipeline_cl uploads it where a device wants more). Huge pages, and touching every page
// before decoding, were measured too: neither was faster on every image, and huge pages at
// times waited 200 ms for the kernel to find them (docs/BENCHMARKS.md, eleventh session).
// Making its pages present while it decodes is another matter: populate_while_decoding.
static void *image_alloc(size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t align = page > 0 ? (size_t)page : 4096;
	void *p = NULL;

	if (bytes > SIZE_MAX - align)
		return NULL;
	bytes = bytes ? (bytes + align - 1) / align * align : align;
	return posix_memalign(&p, align, bytes) ? NULL : p;
}

// The decoded image into pinned memory, in pieces on every core.
struct copy_in {
	uint8_t *dst;
	const uint8_t *src;
	size_t bytes, piece;
};

static void copy_in_piece(void *ctx, int task, int worker)
{
	const struct copy_in *c = ctx;
	size_t at = (size_t)task * c->piece;
	(void)worker;
	memcpy(c->dst + at, c->src + at, c->bytes - at < c->piece ? c->bytes - at : c->piece);
}

static void copy_in(void *dst, const void *src, size_t bytes)
{
	struct copy_in c = { dst, src, bytes, (size_t)4 << 20 };
	while (bytes / c.piece >= INT_MAX)
		c.piece *= 2;
	par_run(par_threads(), (int)((bytes + c.piece - 1) / c.piece), copy_in_piece, &c);
}

// ---- --time -----------------------------------------------------------------------------

struct timing {
	double t0; // process work start, for the total
	double open_ms;      // opening the device and allocating pinned memory, alongside decode
	double open_wait_ms; // of that, the time waited for it after decoding
	bool opened;         // a device was looked for (not --cpu): open_ms is reported
	double decode_ms, encode_ms;
	int decode_strips;   // strips the input decoded in at once (img_reader_strips)
	double copy_in_ms;   // copying the decoded image into pinned memory
	size_t copy_in_bytes; // 0: no copy (no device, zero-copy, or no pinned memory)
	struct run_times run;
	double *stage_ms;
	int programs, programs_cached; // built for the run; of those, from the binary cache
	bool on_cpu; // no device phases to report
};

// Effective GB/s of moving bytes in ms (0 when ms is 0).
static double gbps(double bytes, double ms)
{
	return ms > 0 ? bytes / (ms * 1e6) : 0;
}

// The rest of a transfer's --time line: its rate, or for zero-copy what happened instead.
static const char *transfer_str(char buf[96], double bytes, double ms, bool in_place,
				const char *how)
{
	if (in_place && bytes == 0)
		snprintf(buf, 96, " zero-copy: %s", how);
	else if (in_place)
		snprintf(buf, 96, "%9.2f GB/s  zero-copy image; side outputs copied", gbps(bytes, ms));
	else
		snprintf(buf, 96, "%9.2f GB/s", gbps(bytes, ms));
	return buf;
}

// Where a download that copied went: "" for zero-copy (transfer_str says it all).
static const char *download_dest(char buf[96], const struct run_times *t)
{
	if (t->download_in_place)
		buf[0] = '\0';
	else if (t->download_into_input)
		snprintf(buf, 96, "  into the input's pinned memory");
	else
		snprintf(buf, 96, "  into memory allocated in %.3f ms", t->out_alloc_ms);
	return buf;
}

// One line per phase on stderr, or one JSON object. Stage rates count the bytes the stage
// reads plus those it writes.
static void time_report(const struct timing *tm, const struct chain *c, bool json)
{
	// What the transfers copied: the images, unless zero-copy left them in place (then
	// only the side outputs were downloaded).
	double up_bytes = tm->run.upload_in_place ? 0 : (double)geom_bytes(&c->in);
	double down_bytes = (tm->run.download_in_place ? 0 : (double)geom_bytes(&c->out)) +
			    (double)c->side_cl_bytes;
	double total = now_ms() - tm->t0;
	char rate[96], dest[96];
	const char *sep = "";
	if (json) {
		fprintf(stderr, "{\"device\": %s", tm->on_cpu ? "false" : "true");
		if (tm->opened)
			fprintf(stderr, ", \"open_ms\": %.3f, \"open_wait_ms\": %.3f", tm->open_ms,
				tm->open_wait_ms);
		fprintf(stderr, ", \"decode_ms\": %.3f, \"decode_strips\": %d", tm->decode_ms,
			tm->decode_strips);
		if (tm->opened)
			fprintf(stderr, ", \"copy_in_ms\": %.3f, \"copy_in_gbps\": %.2f",
				tm->copy_in_ms, gbps((double)tm->copy_in_bytes, tm->copy_in_ms));
		if (!tm->on_cpu)
			fprintf(stderr, ", \"build_ms\": %.3f, \"programs\": %d, \"programs_cached\": %d"
				", \"upload_ms\": %.3f, \"upload_gbps\": %.2f, \"upload_zero_copy\": %s",
				tm->run.build_ms, tm->programs, tm->programs_cached,
				tm->run.upload_ms, gbps(up_bytes, tm->run.upload_ms),
				tm->run.upload_in_place ? "true" : "false");
		fputs(", \"stages\": [", stderr);
	} else {
		if (tm->opened)
			fprintf(stderr, "climg: time: %-22s %10.3f ms  alongside decode, then waited "
				"%.3f ms\n", "open", tm->open_ms, tm->open_wait_ms);
		if (tm->decode_strips > 1)
			fprintf(stderr, "climg: time: %-22s %10.3f ms  in %d strips at once\n",
				"decode", tm->decode_ms, tm->decode_strips);
		else
			fprintf(stderr, "climg: time: %-22s %10.3f ms\n", "decode", tm->decode_ms);
		if (tm->copy_in_bytes)
			fprintf(stderr, "climg: time: %-22s %10.3f ms %9.2f GB/s  into pinned memory\n",
				"copy-in", tm->copy_in_ms,
				gbps((double)tm->copy_in_bytes, tm->copy_in_ms));
		if (!tm->on_cpu) {
			fprintf(stderr, "climg: time: %-22s %10.3f ms  %d of %d programs from the cache\n",
				"build", tm->run.build_ms, tm->programs_cached, tm->programs);
			fprintf(stderr, "climg: time: %-22s %10.3f ms %s\n", "upload", tm->run.upload_ms,
				transfer_str(rate, up_bytes, tm->run.upload_ms, tm->run.upload_in_place,
					     "the device reads the input in place"));
		}
	}
	for (int i = 0; i < c->n; i++) {
		const struct chain_stage *s = &c->st[i];
		double bytes = (double)geom_bytes(&s->in);
		if (!s->plan.passthrough)
			bytes += (double)geom_bytes(&s->plan.out);
		if (json) {
			fprintf(stderr, "%s{\"stage\": \"", sep);
			for (const char *p = s->token; *p; p++) // a token may hold any byte
				fprintf(stderr, (*p == '"' || *p == '\\') ? "\\%c" :
						(unsigned char)*p < 32 ? "\\u%04x" : "%c", *p);
			fprintf(stderr, "\", \"ms\": %.4f, \"gbps\": %.2f}", tm->stage_ms[i],
				gbps(bytes, tm->stage_ms[i]));
			sep = ", ";
		} else {
			fprintf(stderr, "climg: time: %2d %-19.19s %10.4f ms %9.2f GB/s\n", i + 1,
				s->token, tm->stage_ms[i], gbps(bytes, tm->stage_ms[i]));
		}
	}
	if (json) {
		fputs("]", stderr);
		if (!tm->on_cpu && tm->run.verified)
			fputs(", \"download_ms\": null, \"download_gbps\": null"
			      ", \"download_zero_copy\": false, \"download_into_input\": false"
			      ", \"out_alloc_ms\": null, \"verified\": true", stderr);
		else if (!tm->on_cpu)
			fprintf(stderr, ", \"download_ms\": %.3f, \"download_gbps\": %.2f"
				", \"download_zero_copy\": %s, \"download_into_input\": %s"
				", \"out_alloc_ms\": %.3f",
				tm->run.download_ms, gbps(down_bytes, tm->run.download_ms),
				tm->run.download_in_place ? "true" : "false",
				tm->run.download_into_input ? "true" : "false", tm->run.out_alloc_ms);
		fprintf(stderr, ", \"encode_ms\": %.3f, \"total_ms\": %.3f}\n", tm->encode_ms, total);
	} else {
		if (!tm->on_cpu && tm->run.verified)
			fprintf(stderr, "climg: time: %-22s %10s    not timed: --verify writes the "
				"CPU path's output\n", "download", "-");
		else if (!tm->on_cpu)
			fprintf(stderr, "climg: time: %-22s %10.3f ms %s%s\n", "download",
				tm->run.download_ms,
				transfer_str(rate, down_bytes, tm->run.download_ms,
					     tm->run.download_in_place,
					     "the last stage wrote the output in place"),
				download_dest(dest, &tm->run));
		fprintf(stderr, "climg: time: %-22s %10.3f ms\n", "encode", tm->encode_ms);
		fprintf(stderr, "climg: time: %-22s %10.3f ms\n", "total", total);
	}
}

// Whether path is standard output or an existing special file (/dev/null, a FIFO): such
// outputs have no extension to go by and are written as PNG unless --format says otherwise.
static bool is_stream(const char *path)
{
	struct stat st;
	return !strcmp(path, "-") || (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

// A file a stage writes from its side output (a histogram's CSV or plot).
struct side_out {
	const struct chain_stage *st;
	int index;             // the file's number in the stage's list, for render
	struct stage_file file;
	enum img_format fmt;   // for images
	struct outfile *f;     // opened before decoding, committed after the whole run
};

// Whether two output names are the same destination: the same name, or existing files that
// are one (a hard link, "./h.csv" and "h.csv").
static bool same_dest(const char *a, const char *b)
{
	struct stat sa, sb;
	if (!strcmp(a, b))
		return true;
	return strcmp(a, "-") && strcmp(b, "-") && stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && S_ISREG(sa.st_mode);
}

// Lists the stages' files into *outs (*n of them; free() *outs) and checks them against each
// other and against -o, from the arguments alone. Returns 0, or an exit status with err set.
static int side_outs_plan(const struct options *o, const struct chain *chain,
			  struct side_out **outs, int *n)
{
	struct side_out *s = calloc((size_t)chain->n * STAGE_FILES_MAX + 1, sizeof *s);
	*outs = s;
	*n = 0;
	if (!s) {
		err_set("out of memory");
		return EXIT_RUN;
	}
	for (int i = 0; i < chain->n; i++) {
		const struct chain_stage *st = &chain->st[i];
		struct stage_file files[STAGE_FILES_MAX];
		int k = st->ops->files ? st->ops->files(st->params, files) : 0;
		for (int j = 0; j < k; j++)
			s[(*n)++] = (struct side_out){ .st = st, .index = j, .file = files[j] };
	}
	for (int i = 0; i < *n; i++) {
		const char *path = s[i].file.path, *token = s[i].st->token;
		enum img_format ext = img_format_from_ext(path);
		if (o->output && same_dest(path, o->output)) {
			err_set(strcmp(path, "-") ? "%s: writes to '%s', the image output too"
						  : "%s: writes to standard output, and so does -o -",
				token, path);
			return EXIT_USAGE;
		}
		for (int j = 0; j < i; j++) {
			if (!same_dest(path, s[j].file.path))
				continue;
			int a = (int)(s[j].st - chain->st) + 1, b = (int)(s[i].st - chain->st) + 1;
			if (!strcmp(path, "-"))
				err_set("stage %d (%s) and stage %d (%s) both write to standard "
					"output",
					a, s[j].st->token, b, token);
			else
				err_set("stage %d (%s) and stage %d (%s) both write to '%s'", a,
					s[j].st->token, b, token, path);
			return EXIT_USAGE;
		}
		if (!s[i].file.image) {
			if (ext) {
				err_set("%s: '%s' would hold text, not an image; for a picture use "
					"plot=%s",
					token, path, path);
				return EXIT_USAGE;
			}
			continue;
		}
		s[i].fmt = ext ? ext : is_stream(path) ? FMT_PNG : FMT_NONE;
		if (!s[i].fmt) {
			err_set("%s: cannot tell the image format of '%s' (use .png, .jpg, .bmp, "
				".tga or .ppm)",
				token, path);
			return EXIT_USAGE;
		}
		if (img_format_check(s[i].fmt, 3, NULL) < 0) {
			err_prefix("%s: %s", token, path);
			return EXIT_USAGE;
		}
	}
	return 0;
}

// Writes every stage file from the side outputs of the finished run (not committed yet).
static int side_outs_write(const struct side_out *s, int n, const struct write_opts *opts)
{
	for (int i = 0; i < n; i++) {
		const struct chain_stage *st = s[i].st;
		struct stage_render r;
		int rc;
		if (st->ops->render(st->params, &st->in, st->side, s[i].index, &r) < 0)
			return err_prefix("%s", st->token);
		if (s[i].file.image)
			rc = img_encode(s[i].f, s[i].fmt, &r.im, opts);
		else
			rc = outfile_write(s[i].f, r.text, r.len);
		free(r.im.data);
		free(r.text);
		if (rc < 0)
			return -1;
	}
	return 0;
}

// "1.5 GiB" for messages.
static void bytes_str(char buf[32], uint64_t bytes)
{
	if (bytes >= (uint64_t)1 << 30)
		snprintf(buf, 32, "%.1f GiB", (double)bytes / (double)((uint64_t)1 << 30));
	else
		snprintf(buf, 32, "%.1f MiB", (double)bytes / (double)((uint64_t)1 << 20));
}

// Refuses a chain whose planned images cannot fit: more than the machine's memory, or than
// the address-space limit (ulimit -v). Better now than killed half-way, when the kernel's
// out-of-memory killer would leave the temporary output file behind. The plan counts the
// images only (the input and two of the largest size, one more for --verify); decoders and
// drivers need a little more, so this refuses the impossible, not the tight.
static int memory_check(const struct chain *c, bool verify)
{
	uint64_t need = (uint64_t)c->host_bytes + (verify ? c->max_bytes : 0), have = 0;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	const char *what = NULL;
	char need_s[32], have_s[32];
	struct rlimit rl;

	if (pages > 0 && page > 0) {
		have = (uint64_t)pages * (uint64_t)page;
		what = "this machine's memory";
	}
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (!have || (uint64_t)rl.rlim_cur < have)) {
		have = rl.rlim_cur;
		what = "the address-space limit (ulimit -v)";
	}
	if (!have || need <= have)
		return 0;
	bytes_str(need_s, need);
	bytes_str(have_s, have);
	return err_set("the chain's images need %s of memory, more than %s, %s", need_s, what,
		       have_s);
}

static int run(const struct options *o, struct chain *chain)
{
	struct img_reader *rd = NULL;
	struct outfile *out = NULL;
	struct ocl *dev = NULL;
	struct img in = { 0 }, res = { 0 };
	enum img_format fmt = FMT_NONE;
	struct side_out *sides = NULL;
	struct geom g;
	int status = EXIT_RUN, drops_alpha = 0, rc, nsides = 0;
	bool dev_failed, device_named, dev_error = false;
	struct timing tm = { .t0 = now_ms() };
	struct run_times *times = NULL;
	struct decode_job dec = { 0 };
	struct pipeline_mem mem = { 0 };
	void *pinned = NULL, *decoded = NULL;
	size_t pinned_bytes = 0, reuse_bytes = 0;
	double open_end;

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
	// so are the stages' own files (a histogram's CSV and plot)
	status = side_outs_plan(o, chain, &sides, &nsides);
	if (status)
		goto fail;
	status = EXIT_RUN;
	// The outputs next: a missing or read-only directory, or a directory named as an
	// output, is reported before the input is even read.
	if (o->output) {
		out = outfile_open(o->output);
		if (!out)
			goto fail;
	}
	for (int i = 0; i < nsides; i++) {
		sides[i].f = outfile_open(sides[i].file.path);
		if (!sides[i].f)
			goto fail;
	}

	rd = img_reader_open(o->input, &o->limits);
	if (!rd)
		goto fail;
	g = img_reader_geom(rd);
	chain->max_pixels = o->limits.max_pixels; // stages that grow the image obey it too
	if (chain_plan(chain, &g) < 0) {
		status = EXIT_USAGE;
		goto fail;
	}
	if (o->output && img_format_check(fmt, chain->out.ch, &drops_alpha) < 0) {
		err_prefix("%s", o->output);
		status = EXIT_USAGE;
		goto fail;
	}
	if (memory_check(chain, o->verify) < 0)
		goto fail;

	device_named = o->device || (getenv("CLIMG_DEVICE") && *getenv("CLIMG_DEVICE"));
	tm.opened = !o->cpu;
	if (o->time) {
		tm.stage_ms = calloc((size_t)chain->n + 1, sizeof *tm.stage_ms);
		if (!tm.stage_ms)
			goto fail;
		tm.run.stage_ms = tm.stage_ms;
		times = &tm.run;
	}
	in = (struct img){ g.w, g.h, g.ch, image_alloc(geom_bytes(&g)) };
	if (!in.data) {
		err_set("out of memory for a %dx%d image", g.w, g.h);
		goto fail;
	}
	decode_start(&dec, rd, in.data);
	tm.open_ms = now_ms();
	dev = open_device(o, &dev_failed);
	if (dev && o->time && ocl_profile(dev) < 0)
		dev_failed = true;
	if (dev && !dev_failed && !pipeline_zero_copy(dev)) {
		// One block for the input and, once that is uploaded, the output (pipeline_cl's
		// reuse_bytes), as large as the larger of the two: allocated here, alongside the
		// decode, rather than a second block after the stages, which took 17-105 ms for
		// an 8K image on an H100. --verify downloads no output. NULL: uploaded from plain
		// memory, and the output gets pinned memory of its own.
		size_t out_bytes = o->verify ? 0 : geom_bytes(&chain->out);
		pinned_bytes = geom_bytes(&g) > out_bytes ? geom_bytes(&g) : out_bytes;
		pinned = ocl_host_alloc(dev, pinned_bytes);
	}
	open_end = now_ms();
	tm.open_ms = open_end - tm.open_ms;
	// While the input still decodes: its memory made present ahead of the decoder, then,
	// for the CPU path or a zero-copy device, the memory the stages will write
	// (populate_while_decoding). Not having that memory yet is no error: the run then
	// makes its own, or says why it cannot.
	if (!dev_failed && dec.started && populate_while_decoding(&dec, in.data, geom_bytes(&g)) &&
	    (!dev || pipeline_zero_copy(dev)) && !o->verify) {
		if (pipeline_mem_alloc(chain, dev, &mem) == 0 &&
		    populate_while_decoding(&dec, mem.out, mem.bytes))
			populate_while_decoding(&dec, mem.tmp, mem.bytes);
	}
	decode_join(&dec);
	tm.decode_ms = dec.ms;
	tm.decode_strips = img_reader_strips(rd);
	tm.open_wait_ms = open_end > dec.end ? open_end - dec.end : 0;
	if (dev_failed) // a device error before a decode error, as when it was opened first
		goto fail;
	if (dec.rc < 0) {
		err_set("%s", dec.msg);
		goto fail;
	}
	img_reader_close(rd);
	rd = NULL;
	if (dev && o->no_cache)
		ocl_set_cache(dev, false);
	if (pinned) {
		tm.copy_in_ms = now_ms();
		copy_in(pinned, in.data, geom_bytes(&g));
		tm.copy_in_ms = now_ms() - tm.copy_in_ms;
		tm.copy_in_bytes = geom_bytes(&g);
		// The output may be downloaded over the input: the CPU path taking over from an
		// automatically chosen device that fails then needs the decoded image as it was,
		// so that stays until the device is done; elsewhere it goes now.
		if (!o->verify && !device_named)
			decoded = in.data;
		else
			free(in.data);
		in.data = pinned;
		pinned = NULL;
		reuse_bytes = o->verify ? 0 : pinned_bytes;
	}

	if (o->verify) {
		rc = pipeline_verify(chain, dev, &in, &res, times);
		if (rc == 1)
			status = EXIT_VERIFY;
		dev_error = rc < 0;
		if (rc != 0)
			goto fail;
	} else if (dev) {
		if (pipeline_cl(chain, dev, &in, reuse_bytes, &mem, &res, times) < 0) {
			dev_error = device_named;
			if (device_named)
				goto fail;
			// An automatically chosen device failed: the CPU path gives the same
			// bytes. One warning line, whatever failed (a build log included).
			warn("%s; using the CPU path", err_msg());
			tm.on_cpu = true;
			if (decoded) {
				ocl_host_free(dev, in.data);
				in.data = decoded;
				decoded = NULL;
			}
			if (pipeline_cpu(chain, &in, &mem, &res, times) < 0)
				goto fail;
		}
		free(decoded);
		decoded = NULL;
	} else if (pipeline_cpu(chain, &in, &mem, &res, times) < 0) {
		goto fail;
	}

	// Everything is written before anything is committed, so a failure to encode or write
	// leaves no file; only a failing commit (a rename) can leave earlier ones in place.
	tm.encode_ms = now_ms();
	if (out) {
		if (drops_alpha)
			warn("%s output has no alpha channel; alpha dropped", img_format_name(fmt));
		if (img_encode(out, fmt, &res, &o->write) < 0)
			goto fail; // out is aborted below: the temporary file goes
	}
	if (side_outs_write(sides, nsides, &o->write) < 0)
		goto fail;
	if (out) {
		rc = outfile_commit(out); // frees out, removing the temporary file on failure
		out = NULL;
		if (rc < 0)
			goto fail;
	}
	for (int i = 0; i < nsides; i++) {
		rc = outfile_commit(sides[i].f);
		sides[i].f = NULL;
		if (rc < 0)
			goto fail;
	}
	tm.encode_ms = now_ms() - tm.encode_ms;
	if (o->time) {
		tm.on_cpu = tm.on_cpu || !dev;
		ocl_build_count(dev, &tm.programs, &tm.programs_cached);
		time_report(&tm, chain, o->time_json);
	}
	status = 0;
fail:
	// An OpenCL failure reported as an error: a failed build's log goes with it.
	if (status && dev_error && ocl_build_log(dev))
		fputs(ocl_build_log(dev), stderr);
	for (int i = 0; i < nsides; i++)
		outfile_abort(sides[i].f);
	free(sides);
	outfile_abort(out);
	decode_join(&dec); // a failure while the input was decoding: it must finish first
	img_reader_close(rd);
	free(decoded);
	ocl_host_free(dev, in.data);
	ocl_host_free(dev, pinned);
	ocl_host_free(dev, res.data);
	pipeline_mem_free(&mem);
	ocl_close(dev);
	free(tm.stage_ms);
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
