// SPDX-License-Identifier: MIT
// bench: how fast climg moves pixels on one OpenCL device, against that device's own copy
// bandwidth measured in the same run. `make bench` builds it and runs it from the repository
// root; it prints markdown tables (docs/BENCHMARKS.md keeps the latest ones) on stdout and
// its progress on stderr.
//
//   tools/bench [OPTIONS]
//     -d, --device SPEC  the device, as climg --device (default: $CLIMG_DEVICE, else
//                        climg's automatic choice: the first GPU, else the first device);
//                        the whole commands and so run on it too
//     --size WxH         the images' size (default 7680x4320; smaller for tests)
//     --reps N           timed runs of every measurement, 20 to 100 (default: as many as
//                        fit in about half a second, at least 20)
//     --budget S         skip what would end the benchmark after S seconds (default 240,
//                        0: no limit; see "Budget" below)
//     --verify           also compare every stage's device output with its CPU reference,
//                        byte for byte (the CPU path is single-threaded: slow at 8K)
//     --only LIST        measure only the stage rows whose token is in LIST, comma-separated
//                        (e.g. rotate:90,grey; both images where the row has both); the
//                        copy, the transfers, the whole commands and OpenCV are as usual
//     --kernels KIND     the stages' kernel variants: auto (default: those for the device's
//                        type, as climg picks), cpu or gpu (see ocl_cpu_kernels); the whole
//                        commands run climg, which always picks by type
//     --no-cli           skip the whole commands
//     --no-opencv        skip the OpenCV comparison
//     --climg PATH       the climg binary the whole commands run (default ./climg)
//     --opencv PATH      the OpenCV script (default tools/bench-opencv.py)
//     --python PATH      the Python that runs it (default python3)
//
// What it measures. Device times come from OpenCL profiling events, as climg --time reports
// them; a measurement is the median (and minimum) of its timed runs after a warm-up run (two
// when a run takes under WARMUP2_MS). GB/s is always (bytes read + bytes written) / time,
// 1 GB = 1e9 bytes.
//   copy       clEnqueueCopyBuffer device to device of 256 MiB (for 8K; for small test
//              images 4 times the RGB image, at least 16 MiB; for huge ones the RGB image):
//              large against any cache. Its result is checked once. The reference bandwidth.
//              Its buffers stay for the same-size copies below.
//   transfers  blocking uploads and downloads of the RGB image from pinned memory
//              (ocl_host_alloc, which climg uploads from) and from pageable memory (malloc):
//              device time from the event, and host wall clock around the blocking call.
//   stages     each row of rows[] below: one stage run as the pipeline runs it (side output,
//              then image) on an image already on the device, the sum of the events of the
//              kernels it queues; % of copy = its GB/s over the copy's. Also the host wall
//              clock of a run, from the call to the end of the wait; and a copy that moves
//              as many bytes as the stage (half its bytes read + written, read and written
//              once), since a short copy runs at a smaller share of the large one's rate
//              (launch and ramp-up are a larger part of it): % of same-size copy = the
//              stage's GB/s over that copy's. A token whose stage
//              this build does not have (chain_parse: unknown stage) is skipped, noted.
//   commands   whole climg commands on generated JPEG and PNG files with --time=json,
//              CHAIN_RUNS runs each: the median of every phase, and the wall clock from fork
//              to exit (process start-up included); on the benchmark's RGB image and on a
//              1920 x 1080 one, on the device and with --cpu (chains[] below).
//   opencv     when python3 can import cv2 and numpy: tools/bench-opencv.py times OpenCV's
//              OpenCL path (cv2.UMat) on the same RGB image, and a table sets climg beside it,
//              host wall clock against host wall clock (OpenCV has no profiling events).
//              Unless OPENCV_OPENCL_DEVICE is set, it is set to ":GPU:" or ":CPU:" as the
//              device's type, so that OpenCV runs on the same kind of device (it takes the
//              first of that kind, as climg does by default).
// Budget: every reported median has at least 20 runs, so a measurement whose runs would not
// fit in what is left of --budget is skipped with a note instead (on a slow device such as
// PoCL on two cores). Measured first: the copy and the transfers (never skipped), then the
// byte-moving stages, the whole commands, the computing stages, OpenCV.
// The images are deterministic: smooth gradients plus xorshift32 noise, the same every run.
// Exit status: 0 success (the report printed), 1 failure, 2 usage error.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/clock.h"
#include "../src/err.h"
#include "../src/io/io.h"
#include "../src/ocl.h"
#include "../src/parse.h"
#include "../src/pipeline.h"

#define COPY_BYTES ((size_t)256 << 20)    // the copy, unless the image is small (bench_copy)
#define COPY_BYTES_MIN ((size_t)16 << 20) // the copy for a small image: 4 times it, at least
#define WARMUP2_MS 100.0 // a second warm-up run for measurements faster than this
#define REPS_MIN 20
#define REPS_MAX 100
#define REPS_BUDGET_MS 500.0 // wall time per measurement when --reps is not given
#define CHAIN_RUNS 3

// The stage rows: one chain token each, on the RGB or the grey image. kind says which
// kernel target applies (docs/BENCHMARKS.md): BYTES for stages that only move bytes (>= 80%
// of the copy bandwidth on a GPU, >= 50% on a CPU device), COMPUTE for those that compute
// (>= 50% on a GPU), NONE for rows without a target.
enum kind { NONE, BYTES, COMPUTE };
static const struct row {
	const char *token;
	int grey; // 1: the grey image, 0: RGB
	enum kind kind;
	int region; // 1: crop; the token gets the centred three quarters of each side, and the
		    // stage reads only the pixels it writes, not its whole input
} rows[] = {
	{ "grey", 0, BYTES, 0 },
	{ "rotate:90", 0, BYTES, 0 },
	{ "rotate:180", 0, BYTES, 0 },
	{ "rotate:270", 0, BYTES, 0 },
	{ "transpose", 0, BYTES, 0 },
	{ "histogram", 0, BYTES, 0 },
	{ "rotate:30:bilinear", 0, COMPUTE, 0 },
	{ "convolve:box", 0, COMPUTE, 0 },
	{ "convolve:gauss:sigma=2", 0, COMPUTE, 0 },
	{ "convolve:gauss:sigma=8", 0, COMPUTE, 0 },
	{ "convolve:sobel-x", 0, NONE, 0 },
	{ "flip", 0, BYTES, 0 },
	{ "crop", 0, BYTES, 1 },
	{ "flop", 0, BYTES, 0 },
	{ "transverse", 0, BYTES, 0 },
	{ "invert", 0, BYTES, 0 },
	{ "threshold:128", 0, BYTES, 0 },
	{ "equalize", 0, COMPUTE, 0 },
	{ "resize:50%:lanczos", 0, COMPUTE, 0 },
	{ "resize:50%:bilinear", 0, COMPUTE, 0 },
	{ "rotate:90", 1, BYTES, 0 },
	{ "rotate:180", 1, BYTES, 0 },
	{ "rotate:270", 1, BYTES, 0 },
	{ "transpose", 1, BYTES, 0 },
	{ "histogram", 1, BYTES, 0 },
	{ "rotate:30:bilinear", 1, COMPUTE, 0 },
	{ "convolve:box", 1, COMPUTE, 0 },
	{ "convolve:gauss:sigma=2", 1, COMPUTE, 0 },
	{ "convolve:gauss:sigma=8", 1, COMPUTE, 0 },
	{ "convolve:sobel-x", 1, NONE, 0 },
};
#define NROWS (sizeof rows / sizeof rows[0])

// Whole commands: the input (in.jpg or in.png, both the RGB image; hd.jpg, a 1920 x 1080 RGB
// image, whatever --size says), the stages, the output, and whether climg runs with --cpu
// (the CPU path, as where no device is found: its whole command is what the device's is
// weighed against, and on a small image start-up is most of it).
static const struct cli_chain {
	const char *input;
	const char *stages[4];
	const char *output;
	bool cpu;
} chains[] = {
	{ "in.jpg", { "grey" }, "out.jpg", false },
	{ "in.jpg", { "rotate:90" }, "out.jpg", false },
	{ "in.png", { "grey", "rotate:90", "transpose" }, "out.jpg", false },
	{ "in.jpg", { "rotate:30" }, "out.jpg", false },
	{ "in.jpg", { "convolve:gauss:sigma=2" }, "out.jpg", false },
	{ "in.jpg", { "rotate:90" }, "out.jpg", true },
	{ "hd.jpg", { "rotate:90" }, "out.jpg", false },
	{ "hd.jpg", { "rotate:90" }, "out.jpg", true },
};
#define HD_W 1920
#define HD_H 1080
#define NCHAINS (sizeof chains / sizeof chains[0])

enum { PH_OPEN, PH_WAIT, PH_DECODE, PH_COPY_IN, PH_BUILD, PH_UPLOAD, PH_STAGES, PH_OUT_ALLOC,
       PH_DOWNLOAD, PH_ENCODE, PH_TOTAL, PH_WALL, PH_N };

// tools/bench-opencv.py's operations, what climg's side of each is (a row of rows[] by token
// and image, or the pinned upload / download when token is NULL), and the label.
static const struct {
	const char *cv, *label, *token;
	int grey;
} cv_ops[] = {
	{ "cvtColor", "grey: cvtColor RGB2GRAY", "grey", 0 },
	{ "rotate90", "rotate 90: cv2.rotate", "rotate:90", 0 },
	{ "transpose", "transpose: cv2.transpose", "transpose", 0 },
	{ "warpAffine30", "rotate 30 bilinear: warpAffine", "rotate:30:bilinear", 0 },
	{ "filter2D3x3", "box 3x3: filter2D", "convolve:box", 0 },
	{ "GaussianBlur2", "gauss sigma 2: GaussianBlur", "convolve:gauss:sigma=2", 0 },
	{ "calcHist", "histogram of the grey image: calcHist", "histogram", 1 },
	{ "upload", "upload: UMat from numpy / pinned upload", NULL, 0 },
	{ "download", "download: UMat.get() / pinned download", NULL, 1 },
};
#define NCV (sizeof cv_ops / sizeof cv_ops[0])

struct options {
	const char *device, *climg, *opencv, *python;
	const char *only; // --only: comma-separated row tokens, NULL for every row
	int kernels;      // --kernels: 0 auto, 1 cpu, 2 gpu
	int w, h, reps; // reps 0: adaptive
	double budget_s; // 0: no limit
	bool verify, no_cli, no_opencv;
};

// One measurement: the median and minimum of n runs, in ms.
struct sample {
	double median_ms, min_ms;
	int n;
};

// What a stage row measured; done is false for a row skipped (see notes).
struct row_result {
	bool done, over_budget;
	struct geom out;
	double bytes; // read + written per run
	struct sample dev, wall;
	bool same_done;     // same measured: a copy of same_bytes (skipped past the budget)
	size_t same_bytes;  // bytes / 2, read once and written once
	struct sample same;
};

struct chain_result {
	bool done;
	char cmd[256];
	double median_ms[PH_N];
};

struct bench {
	const struct options *opt;
	double t0; // the benchmark's start, for --budget and the wall time
	struct ocl *ocl;
	struct ocl_about about;
	struct img rgb, grey;           // host images (plain memory)
	struct ocl_buf *d_rgb, *d_grey; // the same on the device
	size_t copy_bytes;
	struct ocl_buf *copy_src, *copy_dst; // the copy's buffers, for the same-size copies
	struct sample copy, xfer_dev[4], xfer_wall[4];
	struct row_result row[NROWS];
	struct chain_result chain[NCHAINS];
	bool cv_done;
	char cv_version[128], cv_device[256];
	double cv_ms[NCV], cv_runs;
	char notes[4096]; // skipped measurements, one "- ..." line each
	size_t notes_len;
};

static double gbps(double bytes, double ms)
{
	return ms > 0 ? bytes / (ms * 1e6) : 0;
}

// Adds a line to the notes printed under the tables (once: the same token skipped on both
// images is one note) and to the progress on stderr.
static void note(struct bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct bench *b, const char *fmt, ...)
{
	char line[512], item[520];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	snprintf(item, sizeof item, "- %s\n", line);
	if (strstr(b->notes, item))
		return;
	fprintf(stderr, "bench: note: %s\n", line);
	snprintf(b->notes + b->notes_len, sizeof b->notes - b->notes_len, "%s", item);
	b->notes_len += strlen(b->notes + b->notes_len);
}

// Whether work expected to take ms more still ends within --budget.
static bool budget_fits(const struct bench *b, double ms)
{
	return b->opt->budget_s <= 0 || now_ms() - b->t0 + ms <= b->opt->budget_s * 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

// Sorts ms[0..n-1] and sets s from them.
static void sample_set(struct sample *s, double *ms, int n)
{
	qsort(ms, (size_t)n, sizeof *ms, cmp_double);
	s->n = n;
	s->min_ms = ms[0];
	s->median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

// Measures one operation: queue(arg) enqueues it (it may block); its device time is the sum
// of the profiling events of what it queued. wall (if not NULL) gets the host wall clock of
// the same runs. Returns 0; 1 when may_skip and its runs would not fit in --budget (nothing
// measured; *would_ms says how long they would take, 0 when the budget was already spent
// before a warm-up run); -1 with err set.
static int measure(struct bench *b, int (*queue)(void *), void *arg, bool may_skip,
		   struct sample *dev, struct sample *wall, double *would_ms)
{
	double ms[REPS_MAX], wms[REPS_MAX], t0, warm_ms = 0, est;
	int n;

	if (may_skip && !budget_fits(b, 0)) { // spent: not even a warm-up run
		*would_ms = 0;
		return 1;
	}
	for (int i = 0; i < 2 && (i == 0 || warm_ms < WARMUP2_MS); i++) {
		t0 = now_ms();
		if (queue(arg) < 0 || ocl_timer_take(b->ocl, &ms[0]) < 0)
			return -1;
		warm_ms = now_ms() - t0;
	}
	est = warm_ms > 0 ? REPS_BUDGET_MS / warm_ms : REPS_MAX;
	n = b->opt->reps ? b->opt->reps
	    : est < REPS_MIN ? REPS_MIN
	    : est > REPS_MAX ? REPS_MAX
			     : (int)est;
	if (may_skip && !budget_fits(b, n * warm_ms)) {
		*would_ms = n * warm_ms;
		return 1;
	}
	for (int i = 0; i < n; i++) {
		t0 = now_ms();
		if (queue(arg) < 0 || ocl_timer_take(b->ocl, &ms[i]) < 0)
			return -1;
		wms[i] = now_ms() - t0;
	}
	sample_set(dev, ms, n);
	if (wall)
		sample_set(wall, wms, n);
	return 0;
}

// ---- images -----------------------------------------------------------------------------

// Smooth gradients (channel 0 along x, 1 along y, 2 along the diagonal) plus xorshift32
// noise in -8..7, clamped: like a photograph to the codecs, many values to a histogram.
static int image_make(struct img *im, int w, int h, int ch, uint32_t seed)
{
	size_t i = 0;
	uint32_t s = seed ? seed : 1;
	int dx = w > 1 ? w - 1 : 1, dy = h > 1 ? h - 1 : 1, dd = w + h > 2 ? w + h - 2 : 1;
	*im = (struct img){ w, h, ch, malloc((size_t)w * (size_t)h * (size_t)ch) };
	if (!im->data)
		return err_set("out of memory for a %dx%d image", w, h);
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			int base[3] = { x * 255 / dx, y * 255 / dy, (x + y) * 255 / dd };
			for (int c = 0; c < ch; c++) {
				int v;
				s ^= s << 13;
				s ^= s >> 17;
				s ^= s << 5;
				v = base[c % 3] + (int)(s >> 28) - 8;
				im->data[i++] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
		}
	}
	return 0;
}

// Writes im to path in fmt with climg's encoders (JPEG quality 90, PNG level 6).
static int image_write(const struct img *im, const char *path, enum img_format fmt)
{
	struct write_opts wo = { .jpeg_quality = 90, .png_level = 6 };
	struct outfile *f = outfile_open(path);
	if (!f)
		return -1;
	if (img_encode(f, fmt, im, &wo) < 0) {
		outfile_abort(f);
		return -1;
	}
	return outfile_commit(f);
}

// ---- copy bandwidth and host transfers --------------------------------------------------

struct copy_arg {
	struct ocl *ocl;
	struct ocl_buf *dst, *src;
	size_t bytes;
};

static int copy_queue(void *p)
{
	struct copy_arg *a = p;
	return ocl_copy(a->ocl, a->dst, a->src, a->bytes);
}

struct xfer_arg {
	struct ocl *ocl;
	struct ocl_buf *buf;
	void *host;
	size_t bytes;
	bool down;
};

static int xfer_queue(void *p)
{
	struct xfer_arg *a = p;
	return a->down ? ocl_download(a->ocl, a->buf, a->host, a->bytes)
		       : ocl_upload(a->ocl, a->buf, a->host, a->bytes);
}

// The copy bandwidth, the reference for every percentage; checked: the copy of a
// pseudo-random pattern must read back unchanged.
static int bench_copy(struct bench *b)
{
	size_t image = img_bytes(&b->rgb), bytes = image < COPY_BYTES / 4 ? 4 * image : COPY_BYTES;
	struct copy_arg a = { b->ocl, NULL, NULL, 0 };
	uint8_t *pattern = NULL, *back = NULL;
	uint32_t x = 2463534242u;
	double untimed, unused;
	int rc = -1;

	if (bytes < COPY_BYTES_MIN)
		bytes = COPY_BYTES_MIN;
	if (bytes < image)
		bytes = image;
	fprintf(stderr, "bench: device copy of %zu bytes\n", bytes);
	b->copy_bytes = a.bytes = bytes;
	a.src = b->copy_src = ocl_buf_new(b->ocl, bytes);
	a.dst = b->copy_dst = a.src ? ocl_buf_new(b->ocl, bytes) : NULL;
	if (!a.dst)
		goto done;
	pattern = malloc(bytes);
	back = malloc(bytes);
	if (!pattern || !back) {
		err_set("out of memory for the check of the copy (%zu bytes)", bytes);
		goto done;
	}
	for (size_t i = 0; i < bytes; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		pattern[i] = (uint8_t)(x >> 24);
	}
	if (ocl_upload(b->ocl, a.src, pattern, bytes) < 0 ||
	    ocl_timer_take(b->ocl, &untimed) < 0 ||
	    measure(b, copy_queue, &a, false, &b->copy, NULL, &unused) < 0 ||
	    ocl_download(b->ocl, a.dst, back, bytes) < 0 || ocl_timer_take(b->ocl, &untimed) < 0)
		goto done;
	if (memcmp(back, pattern, bytes)) {
		err_set("the device copy of %zu bytes did not read back unchanged", bytes);
		goto done;
	}
	rc = 0;
done: // the buffers stay (b->copy_src, b->copy_dst), freed at the end
	free(pattern);
	free(back);
	return rc;
}

static const char *const xfer_name[4] = { "upload, pinned", "download, pinned",
					  "upload, pageable", "download, pageable" };

// Uploads and downloads of the RGB image from pinned and from pageable host memory.
static int bench_transfers(struct bench *b)
{
	size_t bytes = img_bytes(&b->rgb);
	struct xfer_arg a = { b->ocl, b->d_rgb, NULL, bytes, false };
	void *pinned = NULL, *pageable = NULL;
	double unused;
	int rc = -1;

	fprintf(stderr, "bench: host transfers of %zu bytes\n", bytes);
	if (!(pinned = ocl_host_alloc(b->ocl, bytes)))
		goto done;
	if (!(pageable = malloc(bytes))) {
		err_set("out of memory for a %zu-byte host buffer", bytes);
		goto done;
	}
	memcpy(pinned, b->rgb.data, bytes);
	memcpy(pageable, b->rgb.data, bytes); // touched: no first-use page faults in the timing
	for (int i = 0; i < 4; i++) {
		a.host = i < 2 ? pinned : pageable;
		a.down = i % 2;
		if (measure(b, xfer_queue, &a, false, &b->xfer_dev[i], &b->xfer_wall[i], &unused) <
		    0)
			goto done;
	}
	rc = 0; // the uploads wrote the RGB image itself: d_rgb still holds it

done:
	ocl_host_free(b->ocl, pinned);
	free(pageable);
	return rc;
}

// ---- stages -------------------------------------------------------------------------------

// One stage run as the pipeline runs it (pipeline_stage_cl), its side output's device
// copies zeroed before (untimed: ocl_zero records no event).
struct stage_arg {
	const struct plan_stage *s;
	struct stage_cl sc;
};

static int stage_queue(void *p)
{
	struct stage_arg *a = p;
	const struct plan_stage *s = a->s;
	size_t side_bytes = stage_side_cl_bytes(&s->plan);
	if (side_bytes && ocl_zero(a->sc.ocl, a->sc.side, side_bytes) < 0)
		return -1;
	return pipeline_stage_cl(s, &a->sc);
}

// Compares the device's last result of the stage (on input in) with the CPU reference, as
// --verify does: the image byte for byte, the side output word for word. -1 with err set
// at the first difference.
static int stage_verify(struct bench *b, const struct stage_arg *a, const struct img *in)
{
	const struct plan_stage *s = a->s;
	struct img cpu = { s->plan.out.w, s->plan.out.h, s->plan.out.ch, NULL };
	size_t bytes = geom_bytes(&s->plan.out);
	uint8_t *dev = NULL;
	uint32_t *side = NULL, *copies = NULL;
	double untimed;
	int rc = -1;

	if (!s->plan.passthrough) {
		cpu.data = malloc(bytes);
		dev = malloc(bytes);
		if (!cpu.data || !dev) {
			err_set("out of memory for the check");
			goto done;
		}
		s->ops->run_cpu(s->params, &s->plan, in, &cpu);
		if (ocl_download(b->ocl, a->sc.out, dev, bytes) < 0 ||
		    ocl_timer_take(b->ocl, &untimed) < 0)
			goto done;
		if (pipeline_compare_image(s, 0, &s->plan.out, dev, cpu.data))
			goto done;
	}
	if (s->plan.side_bytes) {
		side = malloc(s->plan.side_bytes);
		copies = malloc(stage_side_cl_bytes(&s->plan));
		if (!side || !copies) {
			err_set("out of memory for the check");
			goto done;
		}
		memset(s->side, 0, s->plan.side_bytes);
		s->ops->side_cpu(s->params, in, s->side);
		if (ocl_download(b->ocl, a->sc.side, copies, stage_side_cl_bytes(&s->plan)) < 0 ||
		    ocl_timer_take(b->ocl, &untimed) < 0)
			goto done;
		stage_side_fold(&s->plan, copies, side);
		if (pipeline_compare_side(s, 0, side))
			goto done;
	}
	rc = 0;
done:
	free(cpu.data);
	free(dev);
	free(side);
	free(copies);
	return rc;
}

// A copy that moves as many bytes as the stage of res: res->bytes / 2 read and written once.
// Skipped (same_done false) where it would not fit in --budget or in the copy's buffers.
static int bench_same_copy(struct bench *b, struct row_result *res)
{
	struct copy_arg a = { b->ocl, b->copy_dst, b->copy_src, (size_t)(res->bytes / 2) };
	double unused;
	int rc;

	res->same_bytes = a.bytes;
	if (a.bytes == 0 || a.bytes > b->copy_bytes)
		return 0;
	rc = measure(b, copy_queue, &a, true, &res->same, NULL, &unused);
	res->same_done = rc == 0;
	return rc < 0 ? -1 : 0;
}

// Measures row r into b->row[r]; a token this build has no stage for, or that would not fit
// in the budget, is noted and skipped.
static int bench_row(struct bench *b, size_t r)
{
	const struct row *row = &rows[r];
	const struct img *im = row->grey ? &b->grey : &b->rgb;
	const char *image = row->grey ? "grey" : "RGB";
	struct ocl_program_id programs[8];
	struct row_result *res = &b->row[r];
	struct geom g = { im->w, im->h, im->ch, 0 };
	char *token = (char *)row->token, region[64];
	struct chain c = { 0 };
	struct plan p = { 0 };
	struct stage_arg a = { 0 };
	struct ocl_buf *out = NULL, *side = NULL;
	double would_ms;
	int n, rc = -1;

	if (row->region) {
		snprintf(region, sizeof region, "%s:%dx%d", row->token, g.w - g.w / 4,
			 g.h - g.h / 4);
		token = region;
	}
	if (chain_parse(&c, 1, &token) < 0) {
		if (strncmp(err_msg(), "unknown stage", 13))
			return err_prefix("%s", row->token);
		note(b, "`%s` skipped: this build has no such stage", row->token);
		return 0;
	}
	if (plan_make(&p, &c, &g, 0) < 0)
		goto done;
	a.s = &p.st[0];
	if (!a.s->ops->run_cl && !a.s->ops->side_cl) {
		note(b, "`%s` skipped: the stage has no OpenCL path", row->token);
		rc = 0;
		goto done;
	}
	fprintf(stderr, "bench: %s on the %s image\n", row->token, image);
	n = plan_programs(&p, programs, 8);
	if (ocl_build(b->ocl, programs, n) < 0)
		goto done;
	if (!a.s->plan.passthrough && !(out = ocl_buf_new(b->ocl, geom_bytes(&a.s->plan.out))))
		goto done;
	if (a.s->plan.side_bytes &&
	    !(side = ocl_buf_new(b->ocl, stage_side_cl_bytes(&a.s->plan))))
		goto done;
	a.sc = (struct stage_cl){ .ocl = b->ocl, .in = row->grey ? b->d_grey : b->d_rgb,
				  .out = out, .gin = g, .gout = a.s->plan.out, .side = side,
				  .plan = &a.s->plan };
	res->out = a.s->plan.out;
	res->bytes = (row->region ? (double)geom_bytes(&a.s->plan.out) : (double)geom_bytes(&g)) +
		     (a.s->plan.passthrough ? 0 : (double)geom_bytes(&a.s->plan.out));
	switch (measure(b, stage_queue, &a, true, &res->dev, &res->wall, &would_ms)) {
	case 0: break;
	case 1:
		res->over_budget = true;
		if (would_ms > 0)
			note(b, "`%s` on the %s image skipped: its %d runs (about %.1f s) would end "
				"past the %g s budget (--budget 0: no limit)",
			     row->token, image, b->opt->reps ? b->opt->reps : REPS_MIN,
			     would_ms / 1e3, b->opt->budget_s);
		else
			note(b, "`%s` on the %s image skipped: the %g s budget was spent (--budget 0: "
				"no limit)",
			     row->token, image, b->opt->budget_s);
		rc = 0;
		goto done;
	default: goto done;
	}
	if (b->opt->verify && stage_verify(b, &a, im) < 0)
		goto done;
	res->done = true;
	if (bench_same_copy(b, res) < 0)
		goto done;
	rc = 0;
done:
	if (rc < 0)
		err_prefix("%s on the %s image", row->token, image);
	ocl_buf_free(out);
	ocl_buf_free(side);
	plan_free(&p);
	chain_free(&c);
	return rc;
}

// ---- whole commands ---------------------------------------------------------------------

// Runs argv (argv[0] looked up in PATH) with stdout to out_path and stderr to err_path (NULL:
// this process's). Returns its exit status (127: it could not be run, 128 + N: killed by
// signal N), -1 with err set when no process could be started; *wall_ms (if not NULL) is
// the wall clock from before fork to after it exited.
static int spawn(char *const argv[], const char *out_path, const char *err_path, double *wall_ms)
{
	double t0;
	pid_t pid;
	int st;

	fflush(stdout);
	fflush(stderr);
	t0 = now_ms();
	pid = fork();
	if (pid < 0)
		return err_set("cannot start %s: %s", argv[0], strerror(errno));
	if (pid == 0) {
		const char *path[2] = { out_path, err_path };
		for (int fd = 1; fd <= 2; fd++) {
			int f;
			if (!path[fd - 1])
				continue;
			f = open(path[fd - 1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (f < 0 || dup2(f, fd) < 0)
				_exit(127);
			close(f);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return err_set("waiting for %s: %s", argv[0], strerror(errno));
	if (wall_ms)
		*wall_ms = now_ms() - t0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// The text of a small file, NUL-terminated, at most size - 1 bytes. -1 with err set.
static int read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;
	if (!f)
		return err_set("cannot read %s: %s", path, strerror(errno));
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

// The number after "KEY": in climg's --time=json object; 0 when absent (the CPU path has
// no build, upload or download).
static double json_num(const char *json, const char *key)
{
	char pat[64];
	const char *p;
	snprintf(pat, sizeof pat, "\"%s\": ", key);
	p = strstr(json, pat);
	return p ? strtod(p + strlen(pat), NULL) : 0;
}

// The sum of the stages' "ms" in climg's --time=json object (the tokens hold no ']').
static double json_stages_ms(const char *json)
{
	const char *p = strstr(json, "\"stages\": ["), *end = p ? strchr(p, ']') : NULL;
	double sum = 0;
	while (p && (p = strstr(p, "\"ms\": ")) && p < end) {
		p += 6;
		sum += strtod(p, NULL);
	}
	return sum;
}

// Runs whole command k CHAIN_RUNS times into b->chain[k], unless a stage is missing from
// this build or the runs would not fit in the budget (noted).
static int bench_chain(struct bench *b, const char *dir, size_t k)
{
	const struct cli_chain *ch = &chains[k];
	struct chain_result *res = &b->chain[k];
	char in[4096], out[4096], err_path[4096], json[8192], *argv[16];
	double ph[PH_N][CHAIN_RUNS];
	struct sample s;
	size_t len;
	int argc = 0, rc;

	argv[argc++] = (char *)b->opt->climg;
	snprintf(in, sizeof in, "%s/%s", dir, ch->input);
	snprintf(out, sizeof out, "%s/%s", dir, ch->output);
	snprintf(err_path, sizeof err_path, "%s/time.json", dir);
	argv[argc++] = in;
	snprintf(res->cmd, sizeof res->cmd, "climg %s", ch->input);
	for (int i = 0; i < 4 && ch->stages[i]; i++) {
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)strcspn(ch->stages[i], ":"), ch->stages[i]);
		if (!stage_find(name)) {
			note(b, "the command with `%s` skipped: this build has no such stage",
			     ch->stages[i]);
			return 0;
		}
		argv[argc++] = (char *)ch->stages[i];
		len = strlen(res->cmd);
		snprintf(res->cmd + len, sizeof res->cmd - len, " %s", ch->stages[i]);
	}
	len = strlen(res->cmd);
	snprintf(res->cmd + len, sizeof res->cmd - len, " -o %s", ch->output);
	argv[argc++] = "-o";
	argv[argc++] = out;
	argv[argc++] = "--time=json";
	if (ch->cpu) {
		argv[argc++] = "--cpu";
		len = strlen(res->cmd);
		snprintf(res->cmd + len, sizeof res->cmd - len, " --cpu");
	}
	argv[argc] = NULL;
	fprintf(stderr, "bench: %s\n", res->cmd);
	for (int run = 0; run < CHAIN_RUNS; run++) {
		if (run == 1 && !budget_fits(b, (CHAIN_RUNS - 1) * ph[PH_WALL][0])) {
			note(b, "`%s` skipped: %d more runs (about %.1f s) would end past the %g s "
				"budget (--budget 0: no limit)",
			     res->cmd, CHAIN_RUNS - 1, (CHAIN_RUNS - 1) * ph[PH_WALL][0] / 1e3,
			     b->opt->budget_s);
			return 0;
		}
		if ((rc = spawn(argv, "/dev/null", err_path, &ph[PH_WALL][run])) < 0 ||
		    read_text(err_path, json, sizeof json) < 0)
			return -1;
		if (rc != 0) {
			json[strcspn(json, "\n")] = '\0';
			return err_set("%s exited with %d%s%s", res->cmd, rc, *json ? ": " : "",
				       json);
		}
		if (!strstr(json, "\"total_ms\": "))
			return err_set("%s printed no --time=json object", res->cmd);
		ph[PH_OPEN][run] = json_num(json, "open_ms");
		ph[PH_WAIT][run] = json_num(json, "open_wait_ms");
		ph[PH_DECODE][run] = json_num(json, "decode_ms");
		ph[PH_COPY_IN][run] = json_num(json, "copy_in_ms");
		ph[PH_BUILD][run] = json_num(json, "build_ms");
		ph[PH_UPLOAD][run] = json_num(json, "upload_ms");
		ph[PH_STAGES][run] = json_stages_ms(json);
		ph[PH_OUT_ALLOC][run] = json_num(json, "out_alloc_ms");
		ph[PH_DOWNLOAD][run] = json_num(json, "download_ms");
		ph[PH_ENCODE][run] = json_num(json, "encode_ms");
		ph[PH_TOTAL][run] = json_num(json, "total_ms");
	}
	for (int p = 0; p < PH_N; p++) {
		sample_set(&s, ph[p], CHAIN_RUNS);
		res->median_ms[p] = s.median_ms;
	}
	res->done = true;
	return 0;
}

static int bench_chains(struct bench *b, const char *dir)
{
	char path[4096];
	double t0 = now_ms();
	struct img hd = { 0 };
	int rc;

	fprintf(stderr, "bench: writing %dx%d in.jpg and in.png, %dx%d hd.jpg\n", b->rgb.w,
		b->rgb.h, HD_W, HD_H);
	snprintf(path, sizeof path, "%s/in.jpg", dir);
	if (image_write(&b->rgb, path, FMT_JPEG) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/in.png", dir);
	if (image_write(&b->rgb, path, FMT_PNG) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/hd.jpg", dir);
	rc = image_make(&hd, HD_W, HD_H, 3, 3) < 0 ? -1 : image_write(&hd, path, FMT_JPEG);
	free(hd.data);
	if (rc < 0)
		return -1;
	fprintf(stderr, "bench: written in %.1f s\n", (now_ms() - t0) / 1e3);
	for (size_t k = 0; k < NCHAINS; k++) {
		if (!budget_fits(b, 0)) {
			note(b, "whole commands from `%s` on skipped: past the %g s budget "
				"(--budget 0: no limit)",
			     chains[k].stages[0], b->opt->budget_s);
			return 0;
		}
		if (bench_chain(b, dir, k) < 0)
			return -1;
	}
	return 0;
}

// ---- OpenCV ---------------------------------------------------------------------------------

// Runs tools/bench-opencv.py on the RGB image when python3 can import cv2 and numpy, with
// what is left of the budget. Its output: "# opencv VERSION", "# device NAME", "# runs N"
// lines, then one "NAME MS" line per operation it timed, "# skipped NAME REASON" for others.
static int bench_opencv(struct bench *b, const char *dir)
{
	char ppm[4096], out[4096], reps[16], budget[32], text[8192], *line, *save = NULL;
	char *python = (char *)b->opt->python;
	char *check[] = { python, "-c", "import cv2, numpy", NULL };
	char *argv[] = { python, (char *)b->opt->opencv, "--reps", reps, "--budget", budget, ppm,
			 NULL };
	int rc;

	if ((rc = spawn(check, "/dev/null", "/dev/null", NULL)) < 0)
		return -1;
	if (rc != 0) {
		note(b, "OpenCV comparison skipped: %s cannot import cv2 and numpy", python);
		return 0;
	}
	if (!budget_fits(b, 0)) {
		note(b, "OpenCV comparison skipped: past the %g s budget (--budget 0: no limit)",
		     b->opt->budget_s);
		return 0;
	}
	snprintf(ppm, sizeof ppm, "%s/rgb.ppm", dir);
	snprintf(out, sizeof out, "%s/opencv.txt", dir);
	snprintf(reps, sizeof reps, "%d", b->opt->reps ? b->opt->reps : REPS_MIN);
	if (image_write(&b->rgb, ppm, FMT_PPM) < 0)
		return -1;
	if (!getenv("OPENCV_OPENCL_DEVICE") &&
	    (strcmp(b->about.type, "GPU") == 0 || strcmp(b->about.type, "CPU") == 0)) {
		char spec[sizeof b->about.type + 2];
		snprintf(spec, sizeof spec, ":%s:", b->about.type);
		if (setenv("OPENCV_OPENCL_DEVICE", spec, 1) != 0)
			return err_set("cannot set OPENCV_OPENCL_DEVICE: %s", strerror(errno));
	}
	// what is left of the budget, after the image is written (0: none)
	snprintf(budget, sizeof budget, "0");
	if (b->opt->budget_s > 0) {
		double left = b->opt->budget_s - (now_ms() - b->t0) / 1e3;
		snprintf(budget, sizeof budget, "%.3f", left > 0.001 ? left : 0.001);
	}
	fprintf(stderr, "bench: OpenCV (%s)\n", b->opt->opencv);
	if ((rc = spawn(argv, out, NULL, NULL)) < 0)
		return -1;
	if (rc != 0) {
		note(b, "OpenCV comparison failed: %s exited with %d (its messages are on stderr)",
		     b->opt->opencv, rc);
		return 0;
	}
	if (read_text(out, text, sizeof text) < 0)
		return -1;
	snprintf(b->cv_version, sizeof b->cv_version, "?");
	snprintf(b->cv_device, sizeof b->cv_device, "?");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# opencv ", 9))
			snprintf(b->cv_version, sizeof b->cv_version, "%s", line + 9);
		else if (!strncmp(line, "# device ", 9))
			snprintf(b->cv_device, sizeof b->cv_device, "%s", line + 9);
		else if (!strncmp(line, "# runs ", 7))
			b->cv_runs = strtod(line + 7, NULL);
		else if (!strncmp(line, "# skipped ", 10)) {
			const char *name = line + 10, *why = name + strcspn(name, " ");
			note(b, "OpenCV `%.*s` skipped: %s", (int)(why - name), name,
			     *why ? why + 1 : "no reason given");
		}
		for (size_t i = 0; i < NCV; i++) {
			size_t n = strlen(cv_ops[i].cv);
			if (!strncmp(line, cv_ops[i].cv, n) && line[n] == ' ')
				b->cv_ms[i] = strtod(line + n + 1, NULL);
		}
	}
	b->cv_done = true;
	return 0;
}

// ---- the report -----------------------------------------------------------------------------

// The short commit of the working tree, with " (+ local changes)" when it differs from it;
// "-" outside git.
static void commit_get(char *buf, size_t size)
{
	FILE *p = popen("git rev-parse --short HEAD 2>/dev/null", "r");
	snprintf(buf, size, "-");
	if (!p)
		return;
	if (!fgets(buf, (int)size, p))
		snprintf(buf, size, "-");
	buf[strcspn(buf, "\n")] = '\0';
	if (pclose(p) != 0 || !*buf) {
		snprintf(buf, size, "-");
		return;
	}
	if (system("git diff --quiet HEAD -- 2>/dev/null") != 0 && strlen(buf) + 20 < size)
		strcat(buf, " (+ local changes)");
}

// Which kernel target a row of this kind has on this device, and whether pct met it.
static const char *target_text(const struct bench *b, enum kind k, double pct, const char **met)
{
	int want = 0;
	if (k == BYTES)
		want = b->about.is_gpu ? 80 : 50;
	else if (k == COMPUTE && b->about.is_gpu)
		want = 50;
	*met = !want ? "-" : pct >= want ? "yes" : "no";
	return !want ? "-" : want == 80 ? ">= 80%" : ">= 50%";
}

// climg's median wall time for cv_ops[i] (timed as OpenCV's is: on the host, from the call
// to the end of the wait); 0 when not measured.
static double climg_wall_ms(const struct bench *b, size_t i)
{
	if (!cv_ops[i].token)
		return b->xfer_wall[cv_ops[i].grey ? 1 : 0].median_ms;
	for (size_t r = 0; r < NROWS; r++)
		if (!strcmp(rows[r].token, cv_ops[i].token) && rows[r].grey == cv_ops[i].grey)
			return b->row[r].done ? b->row[r].wall.median_ms : 0;
	return 0;
}

static void report_head(const struct bench *b)
{
	char date[64] = "?", commit[64], load[64] = "?", runs[96], kbuf[96];
	const char *kernels;
	double l1, l5, l15;
	time_t t = time(NULL);
	struct tm tm;
	FILE *f;

	if (gmtime_r(&t, &tm))
		strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
	commit_get(commit, sizeof commit);
	if ((f = fopen("/proc/loadavg", "r"))) {
		if (fscanf(f, "%lf %lf %lf", &l1, &l5, &l15) == 3)
			snprintf(load, sizeof load, "%.2f %.2f %.2f", l1, l5, l15);
		fclose(f);
	}
	kernels = ocl_cpu_kernels(b->ocl) ? "the variants for CPU devices" : "the variants for GPUs";
	if (b->opt->kernels)
		snprintf(kbuf, sizeof kbuf, "%s (--kernels %s)", kernels,
			 b->opt->kernels == 1 ? "cpu" : "gpu");
	else
		snprintf(kbuf, sizeof kbuf, "%s (by the device's type)", kernels);
	kernels = kbuf;
	if (b->opt->reps)
		snprintf(runs, sizeof runs, "%d runs", b->opt->reps);
	else
		snprintf(runs, sizeof runs, "%d to %d runs (as many as fit in about %.1f s)",
			 REPS_MIN, REPS_MAX, REPS_BUDGET_MS / 1e3);
	printf("# climg benchmark\n\n"
	       "| | |\n|---|---|\n"
	       "| date | %s |\n"
	       "| commit | %s |\n"
	       "| device | %s, %s, %s |\n"
	       "| driver | %s |\n"
	       "| kernels | %s |\n"
	       "| host | %ld CPUs online, load average %s at the end |\n"
	       "| images | %dx%d RGB (%.1f MB) and grey (%.1f MB), generated |\n"
	       "| timing | device time from OpenCL profiling events; median of %s after 1 "
	       "warm-up run (2 under %.0f ms) |\n"
	       "| GB/s | (bytes read + bytes written) / time, 1 GB = 10^9 bytes |\n\n",
	       date, commit, ocl_device_name(b->ocl), b->about.type, b->about.version,
	       b->about.driver, kernels, sysconf(_SC_NPROCESSORS_ONLN), load, b->rgb.w, b->rgb.h,
	       (double)img_bytes(&b->rgb) / 1e6, (double)img_bytes(&b->grey) / 1e6, runs,
	       WARMUP2_MS);
}

static void report_memory(const struct bench *b)
{
	size_t bytes = img_bytes(&b->rgb);
	printf("## Device memory\n\n"
	       "| measurement | MB read + written | runs | median ms | min ms | GB/s |\n"
	       "|---|---:|---:|---:|---:|---:|\n"
	       "| copy (clEnqueueCopyBuffer of %.1f MB), checked | %.1f | %d | %.4f | %.4f | "
	       "%.1f |\n\n",
	       (double)b->copy_bytes / 1e6, 2.0 * (double)b->copy_bytes / 1e6, b->copy.n,
	       b->copy.median_ms, b->copy.min_ms,
	       gbps(2.0 * (double)b->copy_bytes, b->copy.median_ms));
	printf("## Host transfers (the RGB image, %.1f MB)\n\n"
	       "| transfer | runs | median ms | min ms | GB/s (device) | GB/s (wall) | %% of "
	       "pinned |\n"
	       "|---|---:|---:|---:|---:|---:|---:|\n",
	       (double)bytes / 1e6);
	for (int i = 0; i < 4; i++) {
		// against the pinned transfer in the same direction, by device time
		const struct sample *d = &b->xfer_dev[i], *pin = &b->xfer_dev[i % 2];
		printf("| %s | %d | %.4f | %.4f | %.2f | %.2f | %.0f%% |\n", xfer_name[i], d->n,
		       d->median_ms, d->min_ms, gbps((double)bytes, d->median_ms),
		       gbps((double)bytes, b->xfer_wall[i].median_ms),
		       d->median_ms > 0 ? 100.0 * pin->median_ms / d->median_ms : 0);
	}
	printf("\n");
}

static void report_stages(const struct bench *b)
{
	double copy_gbps = gbps(2.0 * (double)b->copy_bytes, b->copy.median_ms);
	printf("## Stages (kernel time on an image already on the device)\n\n"
	       "median and min: device time; wall: median host time of a run, from the call to "
	       "the end of the wait (launch and wait overheads included). GB/s and %% of copy "
	       "from the median device time. %% of same-size copy: against a copy that moves as "
	       "many bytes as the stage (half of them read, half written), measured right after "
	       "it.\n\n%s"
	       "| stage | image | output | MB read + written | runs | median ms | min ms | wall ms | "
	       "GB/s | %% of copy | %% of same-size copy | target | met |\n"
	       "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n",
	       b->opt->verify ? "Every output was checked against the CPU path, byte for byte.\n\n"
			      : "");
	for (size_t r = 0; r < NROWS; r++) {
		const struct row_result *res = &b->row[r];
		double rate = gbps(res->bytes, res->dev.median_ms), pct;
		const char *target, *met;
		if (!res->done && !res->over_budget)
			continue; // not in this build: noted
		pct = copy_gbps > 0 ? 100.0 * rate / copy_gbps : 0;
		target = target_text(b, rows[r].kind, pct, &met);
		printf("| `%s` | %s | %dx%dx%d | %.1f |", rows[r].token, rows[r].grey ? "grey" : "RGB",
		       res->out.w, res->out.h, res->out.ch, res->bytes / 1e6);
		if (res->done) {
			printf(" %d | %.4f | %.4f | %.4f | %.1f | %.0f%% |", res->dev.n,
			       res->dev.median_ms, res->dev.min_ms, res->wall.median_ms, rate, pct);
			double same = gbps(2.0 * (double)res->same_bytes, res->same.median_ms);
			if (res->same_done && same > 0)
				printf(" %.0f%% |", 100.0 * rate / same);
			else
				printf(" - |");
			printf(" %s | %s |\n", target, met);
		} else {
			printf(" - | - | - | - | - | - | - | %s | skipped (budget) |\n", target);
		}
	}
	printf("\n");
}

static void report_chains(const struct bench *b)
{
	bool any = false;
	for (size_t k = 0; k < NCHAINS; k++)
		any = any || b->chain[k].done;
	if (!any)
		return;
	printf("## Whole commands (`%s ... --time=json`, median of %d runs, ms)\n\n"
	       "The RGB image as JPEG quality 90 and PNG level 6; hd.jpg: a %dx%d RGB image "
	       "made the same way, JPEG quality 90. `--cpu`: the CPU path, no device (its "
	       "open, waited, copy-in, build, upload, out alloc and download are 0). "
	       "open: opening the device and "
	       "allocating pinned memory for the input and output, while the input decodes; "
	       "waited: how long the open went on after decoding ended; copy-in: the decoded "
	       "image into the pinned memory; stages: the kernels' device time; out alloc: "
	       "allocating host memory for the output (0 where it went into the input's pinned "
	       "memory, or zero-copy); total: climg's own clock, from its start to the end of "
	       "encode; wall: from fork to exit, with process start-up and clean-up.\n\n"
	       "| command | open | waited | decode | copy-in | build | upload | stages | out alloc "
	       "| download | encode | total | wall |\n"
	       "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
	       b->opt->climg, CHAIN_RUNS, HD_W, HD_H);
	for (size_t k = 0; k < NCHAINS; k++) {
		if (!b->chain[k].done)
			continue;
		printf("| `%s` |", b->chain[k].cmd);
		for (int p = 0; p < PH_N; p++)
			printf(" %.1f |", b->chain[k].median_ms[p]);
		printf("\n");
	}
	printf("\n");
}

static void report_opencv(const struct bench *b)
{
	if (!b->cv_done)
		return;
	printf("## OpenCV %s, OpenCL path (cv2.UMat), on %s\n\n"
	       "The same RGB image (and its grey version for calcHist), already in device memory "
	       "except for the transfers; both timed on the host, from the call to the end of the "
	       "wait (OpenCV: cv2.ocl.finish(), median of %.0f runs; climg: the wall medians "
	       "above). Target: climg at least 3x faster.\n\n"
	       "| operation | OpenCV ms | climg ms | OpenCV / climg | >= 3x |\n"
	       "|---|---:|---:|---:|---|\n",
	       b->cv_version, b->cv_device, b->cv_runs);
	for (size_t i = 0; i < NCV; i++) {
		double c = climg_wall_ms(b, i), cv = b->cv_ms[i], ratio = c > 0 && cv > 0 ? cv / c : 0;
		char cvs[32] = "-", cs[32] = "-", rs[32] = "-";
		if (cv > 0)
			snprintf(cvs, sizeof cvs, "%.4f", cv);
		if (c > 0)
			snprintf(cs, sizeof cs, "%.4f", c);
		if (ratio > 0)
			snprintf(rs, sizeof rs, "%.1fx", ratio);
		printf("| %s | %s | %s | %s | %s |\n", cv_ops[i].label, cvs, cs, rs,
		       ratio <= 0 ? "-" : ratio >= 3 ? "yes" : "no");
	}
	printf("\n");
}

static int report(const struct bench *b)
{
	report_head(b);
	report_memory(b);
	report_stages(b);
	report_chains(b);
	report_opencv(b);
	if (b->notes_len)
		printf("Notes:\n\n%s\n", b->notes);
	printf("Benchmark wall time: %.1f s (budget: ", (now_ms() - b->t0) / 1e3);
	if (b->opt->budget_s > 0)
		printf("%g s).\n", b->opt->budget_s);
	else
		printf("none).\n");
	if (ferror(stdout) || fflush(stdout) != 0)
		return err_set("cannot write the report to standard output");
	return 0;
}

// ---- main -----------------------------------------------------------------------------------

static const char usage_text[] =
	"usage: tools/bench [-d SPEC] [--size WxH] [--reps N] [--budget S] [--verify]\n"
	"                   [--only TOKEN,...] [--kernels auto|cpu|gpu] [--no-cli] [--no-opencv]\n"
	"                   [--climg PATH] [--opencv PATH] [--python PATH]\n"
	"Benchmarks climg's kernels and transfers on one OpenCL device (default: $CLIMG_DEVICE)\n"
	"and prints markdown tables; see the top of tools/bench.c and docs/BENCHMARKS.md.\n";

// Whether token is one of the comma-separated items of list.
static bool list_has(const char *list, const char *token)
{
	size_t n = strlen(token);
	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, token, n))
			return true;
		p += len;
		if (!*p)
			return false;
	}
}

// Whether row r is measured: every row, or those --only names.
static bool row_wanted(const struct options *o, size_t r)
{
	return !o->only || list_has(o->only, rows[r].token);
}

// Checks --only's list: every item must be the token of a row. 0, or 2 after a message
// that lists the rows.
static int only_check(const char *list)
{
	const char *p = list;
	for (;;) {
		size_t n = strcspn(p, ","), r;
		for (r = 0; r < NROWS; r++)
			if (strlen(rows[r].token) == n && !strncmp(rows[r].token, p, n))
				break;
		if (r == NROWS) {
			fprintf(stderr, "bench: --only: '%.*s' is not a stage row; the rows are:", (int)n,
				p);
			for (r = 0; r < NROWS; r++) { // each token once
				bool seen = false;
				for (size_t q = 0; q < r; q++)
					seen = seen || !strcmp(rows[q].token, rows[r].token);
				if (!seen)
					fprintf(stderr, "%s%s", r ? "," : " ", rows[r].token);
			}
			fprintf(stderr, "\n");
			return 2;
		}
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

// Parses argv into o. Returns 0, or the exit status after printing help or a usage error
// (-1 for help: exit 0).
static int parse_args(int argc, char **argv, struct options *o)
{
	long n, w, h;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			return -1;
		} else if (!strcmp(a, "--verify")) {
			o->verify = true;
		} else if (!strcmp(a, "--no-cli")) {
			o->no_cli = true;
		} else if (!strcmp(a, "--no-opencv")) {
			o->no_opencv = true;
		} else if (v && (!strcmp(a, "-d") || !strcmp(a, "--device"))) {
			o->device = argv[++i];
		} else if (v && !strcmp(a, "--only")) {
			if (only_check(v) != 0)
				return 2;
			o->only = argv[++i];
		} else if (v && !strcmp(a, "--kernels")) {
			if (strcmp(v, "auto") && strcmp(v, "cpu") && strcmp(v, "gpu")) {
				fprintf(stderr, "bench: --kernels must be auto, cpu or gpu, not '%s'\n",
					v);
				return 2;
			}
			o->kernels = !strcmp(v, "cpu") ? 1 : !strcmp(v, "gpu") ? 2 : 0;
			i++;
		} else if (v && !strcmp(a, "--climg")) {
			o->climg = argv[++i];
		} else if (v && !strcmp(a, "--opencv")) {
			o->opencv = argv[++i];
		} else if (v && !strcmp(a, "--python")) {
			o->python = argv[++i];
		} else if (v && !strcmp(a, "--reps")) {
			if (!parse_long(v, REPS_MIN, REPS_MAX, &n)) {
				fprintf(stderr, "bench: --reps must be a whole number from %d to %d, "
						"not '%s'\n",
					REPS_MIN, REPS_MAX, v);
				return 2;
			}
			o->reps = (int)n;
			i++;
		} else if (v && !strcmp(a, "--budget")) {
			double d;
			if (!parse_double(v, &d) || d < 0) {
				fprintf(stderr, "bench: --budget must be a number of seconds (0: no "
						"limit), not '%s'\n",
					v);
				return 2;
			}
			o->budget_s = d;
			i++;
		} else if (v && !strcmp(a, "--size")) {
			char wbuf[16];
			size_t wl = strcspn(v, "x");
			snprintf(wbuf, sizeof wbuf, "%.*s", (int)(wl < 15 ? wl : 15), v);
			if (!v[wl] || wl >= 15 || !parse_long(wbuf, 1, 65535, &w) ||
			    !parse_long(v + wl + 1, 1, 65535, &h)) {
				fprintf(stderr, "bench: --size must be WxH, each 1 to 65535, not '%s'\n",
					v);
				return 2;
			}
			o->w = (int)w;
			o->h = (int)h;
			i++;
		} else {
			fprintf(stderr, "bench: unknown option '%s'%s\n%s", a,
				v || a[0] != '-' ? "" : " (or its value is missing)", usage_text);
			return 2;
		}
	}
	return 0;
}

// Removes what the benchmark wrote into dir, and dir.
static void dir_remove(const char *dir)
{
	static const char *const files[] = { "in.jpg", "in.png", "hd.jpg", "out.jpg", "time.json",
					     "rgb.ppm", "opencv.txt" };
	char path[4200];
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int main(int argc, char **argv)
{
	struct options opt = { .climg = "./climg",
			       .opencv = "tools/bench-opencv.py",
			       .python = "python3",
			       .w = 7680,
			       .h = 4320,
			       .budget_s = 240 };
	struct bench b = { .opt = &opt, .t0 = now_ms() };
	const char *tmp = getenv("TMPDIR");
	char dir[4096] = "";
	double untimed;
	int status = 1, rc;

	if ((rc = parse_args(argc, argv, &opt)) != 0)
		return rc < 0 ? 0 : rc;
	// The whole commands (climg reads CLIMG_DEVICE) run on the same device.
	if (opt.device && setenv("CLIMG_DEVICE", opt.device, 1) != 0) {
		err_set("cannot set CLIMG_DEVICE: %s", strerror(errno));
		goto done;
	}
	opt.device = getenv("CLIMG_DEVICE");
	if (!(b.ocl = ocl_open(opt.device && *opt.device ? opt.device : NULL, NULL)) ||
	    ocl_profile(b.ocl) < 0 || ocl_about(b.ocl, &b.about) < 0)
		goto done;
	// Named by its number even where climg would choose it: without a device named, climg
	// chooses the path per job, and these commands are to run on the device.
	if (!opt.device || !*opt.device) {
		char num[32];
		snprintf(num, sizeof num, "%zu", ocl_device_number(b.ocl));
		if (setenv("CLIMG_DEVICE", num, 1) != 0) {
			err_set("cannot set CLIMG_DEVICE: %s", strerror(errno));
			goto done;
		}
	}
	if (opt.kernels)
		ocl_set_cpu_kernels(b.ocl, opt.kernels == 1);
	fprintf(stderr, "bench: %s; %dx%d images; budget %g s (0: none)\n", ocl_device_name(b.ocl),
		opt.w, opt.h, opt.budget_s);
	if (image_make(&b.rgb, opt.w, opt.h, 3, 1) < 0 ||
	    image_make(&b.grey, opt.w, opt.h, 1, 2) < 0)
		goto done;
	if (!(b.d_rgb = ocl_buf_new(b.ocl, img_bytes(&b.rgb))) ||
	    !(b.d_grey = ocl_buf_new(b.ocl, img_bytes(&b.grey))) ||
	    ocl_upload(b.ocl, b.d_rgb, b.rgb.data, img_bytes(&b.rgb)) < 0 ||
	    ocl_upload(b.ocl, b.d_grey, b.grey.data, img_bytes(&b.grey)) < 0 ||
	    ocl_timer_take(b.ocl, &untimed) < 0)
		goto done;
	if (bench_copy(&b) < 0 || bench_transfers(&b) < 0)
		goto done;
	for (size_t r = 0; r < NROWS; r++) // the byte-moving stages first
		if (rows[r].kind == BYTES && row_wanted(&opt, r) && bench_row(&b, r) < 0)
			goto done;
	if (!opt.no_cli || !opt.no_opencv) {
		snprintf(dir, sizeof dir, "%s/climg-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			err_set("cannot make a directory %s: %s", dir, strerror(errno));
			*dir = '\0';
			goto done;
		}
	}
	if (!opt.no_cli && bench_chains(&b, dir) < 0)
		goto done;
	for (size_t r = 0; r < NROWS; r++)
		if (rows[r].kind != BYTES && row_wanted(&opt, r) && bench_row(&b, r) < 0)
			goto done;
	if (!opt.no_opencv && bench_opencv(&b, dir) < 0)
		goto done;
	if (report(&b) < 0)
		goto done;
	status = 0;
done:
	if (status)
		fprintf(stderr, "bench: %s\n", err_msg());
	if (*dir)
		dir_remove(dir);
	ocl_buf_free(b.d_rgb);
	ocl_buf_free(b.d_grey);
	ocl_buf_free(b.copy_src);
	ocl_buf_free(b.copy_dst);
	ocl_close(b.ocl);
	free(b.rgb.data);
	free(b.grey.data);
	return status;
}
